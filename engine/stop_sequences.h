// stop_sequences — a chat_backend that ends a turn at the first stop sequence in its text,
// so the caller knows which one matched (Anthropic's `stop_sequence`; OpenAI-compatible
// upstreams strip the matched text and do not say which it was).
//
// stop_sequence_backend wraps another backend for one request. Its turns pass every event
// through, except the text: a stop sequence found in the text (also across deltas) ends the
// turn there — the text before it is delivered, the matched text and everything after it is
// not, the upstream request is aborted, and the turn ends with a usage_event (completion_tokens
// = the content events seen, one per token with llama-server; prompt_tokens from the wrapped
// backend's count_prompt_tokens, since the upstream was cut before it reported: 0 when it cannot
// count) and finish_event{stop}. Text that could be the start of a stop sequence is
// held back until it cannot (at most the longest sequence − 1 bytes); any other event, and the
// end of the turn, release it. Reasoning and tool-call arguments are not searched.
// The request's own `sampling.stop` is replaced by the sequences given here (the upstream is not
// told). matched() is the sequence that ended the last turn, "" when none did.
// Thread-safety: one backend per request coroutine; the wrapped backend is shared.
#pragma once

#include <string>
#include <vector>

#include "engine/chat_backend.h"

namespace warden::engine {

/// Where the earliest stop sequence starts in `text` and which one it is (the longest at that
/// position); npos when none occurs. Pure.
std::pair<std::size_t, std::string> find_stop(std::string_view text, const std::vector<std::string>& stops);
/// How many bytes at the end of `text` could begin one of `stops` (and so must be held back). Pure.
std::size_t stop_prefix_tail(std::string_view text, const std::vector<std::string>& stops);

class stop_sequence_backend : public decorating_backend {
 public:
  /// Empty strings in `stops` are ignored.
  stop_sequence_backend(chat_backend& inner, std::vector<std::string> stops);
  boost::asio::awaitable<result<std::unique_ptr<chat_turn>>> open_turn(
      const model::chat_request& req, std::shared_ptr<cancel_token> cancel,
      std::function<boost::asio::awaitable<bool>()> on_silence) override;
  const std::string& matched() const { return *matched_; }

 private:
  std::vector<std::string> stops_;
  std::shared_ptr<std::string> matched_ = std::make_shared<std::string>();
};

}  // namespace warden::engine
