// chat_backend — the upstream conversation as typed model events (DESIGN §3: engine owns it).
//
// The loop (agent/) asks a chat_backend for one model turn with a model::chat_request and reads
// model::stream_event values from the returned chat_turn until it returns nullopt (the turn's
// end). It never sees the upstream's wire format.
//
// openai_chat_backend is the implementation for OpenAI-compatible upstreams (warden's
// llama-server, or any /v1 server): it encodes the request (encode_openai_request), opens the
// stream through chat_service (which applies the llama.cpp tool_choice shim of
// forced_tool_call.h for warden's own llama-server) and decodes each chunk
// (openai_chunk_decoder). Tests fake chat_backend in C++.
//
// Errors: open_turn() fails before the turn starts with chat_service's errors
// (errc::upstream_unavailable, errc::invalid_request for an upstream 4xx, errc::upstream_error,
// errc::cancelled); a stream that breaks later yields one model::error_event, then the end.
// Thread-safety: a backend is shared and thread-safe; a chat_turn belongs to one coroutine.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel_token.h"
#include "common/json_util.h"
#include "common/result.h"
#include "engine/chat_service.h"
#include "model/conversation.h"
#include "model/events.h"

namespace warden::engine {

class chat_turn {
 public:
  virtual ~chat_turn() = default;
  /// The next event; nullopt once the turn has ended (after an error_event too).
  virtual boost::asio::awaitable<std::optional<model::stream_event>> next() = 0;
  /// True when next() would return without waiting (what has arrived is decoded meanwhile), so
  /// a writer can send every ready frame in one write. False when unsure.
  virtual bool poll_ready() { return false; }
  /// Aborts the upstream request; the returned function is thread-safe and outlives the turn.
  virtual std::function<void()> canceller() const = 0;
};

class chat_backend {
 public:
  virtual ~chat_backend() = default;
  /// Starts one streamed turn. `cancel` (optional) aborts it while waiting for the upstream's
  /// head too; `on_silence` (optional) runs every ping interval until the head arrives and may
  /// return false to give up (errc::cancelled).
  virtual boost::asio::awaitable<result<std::unique_ptr<chat_turn>>> open_turn(
      const model::chat_request& req, std::shared_ptr<cancel_token> cancel,
      std::function<boost::asio::awaitable<bool>()> on_silence) = 0;
  /// The public id of the model it serves ("" before the upstream said).
  virtual std::string model_id() const = 0;
  /// The number of prompt tokens `req` (messages and tools) comes to with the upstream's own
  /// chat template and tokenizer, without generating. Errors: errc::upstream_unavailable, and
  /// errc::invalid_request when this backend cannot count (the default).
  virtual boost::asio::awaitable<result<std::int64_t>> count_prompt_tokens(const model::chat_request& req);
  /// The context of one slot in tokens (what a prompt plus its answer must fit). Errors:
  /// errc::upstream_unavailable, and errc::invalid_request when this backend cannot tell (the default).
  virtual boost::asio::awaitable<result<std::int64_t>> context_size();
};

/// A backend that changes the turns of another (stop sequences, healing) and forwards the rest:
/// the model id and prompt token counts are `inner`'s. `inner` must outlive it.
class decorating_backend : public chat_backend {
 public:
  explicit decorating_backend(chat_backend& inner) : inner_(inner) {}
  std::string model_id() const override { return inner_.model_id(); }
  boost::asio::awaitable<result<std::int64_t>> count_prompt_tokens(const model::chat_request& req) override {
    return inner_.count_prompt_tokens(req);
  }
  boost::asio::awaitable<result<std::int64_t>> context_size() override { return inner_.context_size(); }

 protected:
  chat_backend& inner_;
};

/// A turn that reads another turn's events and hands out its own: take() turns each inner event
/// into zero or more in ready_ (holding some back if it likes), at_end() adds what is left when
/// the inner turn ends, and a subclass that cut the inner turn short (inner_ reset) may add
/// events that need the backend once more (after_cut). Events go out in ready_'s order.
/// Thread-safety: one turn, one reader (as chat_turn).
class rewriting_turn : public chat_turn {
 public:
  boost::asio::awaitable<std::optional<model::stream_event>> next() override;
  std::function<void()> canceller() const override { return cancel_; }
  /// Only what is decoded already: text held back may need more input.
  bool poll_ready() override { return !ready_.empty() || !inner_; }

 protected:
  explicit rewriting_turn(std::unique_ptr<chat_turn> inner)
      : inner_(std::move(inner)), cancel_(inner_->canceller()) {}
  virtual void take(model::stream_event ev) = 0;
  virtual void at_end() = 0;
  /// True when take() cut the turn and after_cut() has events to add.
  virtual bool cut_pending() const { return false; }
  virtual boost::asio::awaitable<void> after_cut() { co_return; }

  std::unique_ptr<chat_turn> inner_;  ///< reset once the inner turn ended or was cut
  std::deque<model::stream_event> ready_;
  std::function<void()> cancel_;
};

/// The OpenAI chat-completions body for `req` (without "stream"/"model": chat_service sets
/// them). Pure; the inverse of api/openai's request conversion for everything it carries.
json encode_openai_request(const model::chat_request& req);
/// One model message in OpenAI's wire shape.
json encode_openai_message(const model::message& m);

/// Decodes OpenAI chat.completion.chunk objects into model events (one decoder per turn).
class openai_chunk_decoder {
 public:
  /// The events of one chunk, in order: usage, reasoning, tool-call fragments, text, finish.
  std::vector<model::stream_event> decode(const json& chunk);
  /// `tool_call_finished` for every call still open (at the end of the turn).
  std::vector<model::stream_event> finish();

 private:
  std::map<long long, std::size_t> index_of_;  ///< upstream index → dense index
  std::vector<bool> open_;
  void decode_tool_calls(const json& deltas, std::vector<model::stream_event>& out);
};

class openai_chat_backend : public chat_backend {
 public:
  explicit openai_chat_backend(chat_service& chat) : chat_(chat) {}
  boost::asio::awaitable<result<std::unique_ptr<chat_turn>>> open_turn(
      const model::chat_request& req, std::shared_ptr<cancel_token> cancel,
      std::function<boost::asio::awaitable<bool>()> on_silence) override;
  std::string model_id() const override { return chat_.upstream().model_id(); }
  /// llama-server's POST /apply-template (the conversation rendered with the model's template,
  /// tools included) then POST /tokenize of that text with add_special and parse_special on, as
  /// llama-server tokenizes a chat prompt — so it equals a completion's usage.prompt_tokens
  /// (checked against the real server by tests/e2e/test_anthropic_real.py). An upstream
  /// without these endpoints answers 404, returned as errc::invalid_request.
  boost::asio::awaitable<result<std::int64_t>> count_prompt_tokens(const model::chat_request& req) override;
  /// llama-server's GET /props default_generation_settings.n_ctx (the per-slot context: n_ctx of
  /// the load divided by its slots, capped at the training context); errc::invalid_request from
  /// an upstream without it.
  boost::asio::awaitable<result<std::int64_t>> context_size() override;

 private:
  chat_service& chat_;
};

}  // namespace warden::engine
