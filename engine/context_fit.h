// context_fit — a chat_backend that makes a conversation fit the model's context under the
// request's `context_overflow` policy (issue 27 §6; the decisions: model/context_fit.h).
//
// context_fitting_backend wraps another backend for one request. open_turn():
//   - sends the request as it is; nothing is measured while the upstream takes it (no cost when it
//     fits). `error` (the default) returns the upstream's answer unchanged: for a prompt that does
//     not fit, llama-server's 400 `exceed_context_size_error`, which chat_service answers as
//     errc::invalid_request `context_length_exceeded` with the counts in its message;
//   - truncate_middle / truncate_oldest, when the upstream refused with context_length_exceeded:
//     reads the per-slot context (context_size(): llama-server's GET /props), counts the prompt
//     with the model's own tokenizer (count_prompt_tokens), and drops whole units until the prompt
//     leaves room to answer: target = n_ctx − reserve, reserve = min(max_tokens or 512, n_ctx/4)
//     tokens. Per-message token estimates are its characters scaled by the measured total; each
//     candidate is counted again, up to k_fit_rounds times; each round sheds at least one unit
//     more than the last, the estimate corrected by what the last round really shed; after those,
//     every unit that may go is dropped.
//     The turn that opens yields model::context_truncated first (what was dropped, tokens before
//     and after, n_ctx), then the upstream's events.
// Errors: a conversation that cannot fit even with every droppable unit gone is errc::invalid_request
// `context_length_exceeded` (param "messages") saying so; an upstream that cannot count or report
// its context (not llama-server) gets the upstream's own refusal back. Others: inner's.
// Thread-safety: one backend per request coroutine; the wrapped backend is shared.
#pragma once

#include "engine/chat_backend.h"
#include "model/context_fit.h"

namespace warden::engine {

/// Candidate prompts counted before giving up.
inline constexpr int k_fit_rounds = 6;

class context_fitting_backend : public decorating_backend {
 public:
  context_fitting_backend(chat_backend& inner, model::overflow_policy policy) : decorating_backend(inner), policy_(policy) {}
  boost::asio::awaitable<result<std::unique_ptr<chat_turn>>> open_turn(
      const model::chat_request& req, std::shared_ptr<cancel_token> cancel,
      std::function<boost::asio::awaitable<bool>()> on_silence) override;

 private:
  model::overflow_policy policy_;
};

/// The tokens to keep free for the answer in a context of `n_ctx` (see above). Pure.
std::int64_t answer_reserve(std::int64_t n_ctx, std::optional<std::int64_t> max_tokens);

/// What `dropped` (ascending indices into `msgs`) reports. Pure.
std::vector<model::dropped_message> describe_dropped(const std::vector<model::message>& msgs,
                                                     const std::vector<std::size_t>& dropped);

}  // namespace warden::engine
