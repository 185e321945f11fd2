#include "engine/stop_sequences.h"

#include <deque>

namespace warden::engine {

namespace asio = boost::asio;

std::pair<std::size_t, std::string> find_stop(std::string_view text, const std::vector<std::string>& stops) {
  std::size_t best = std::string_view::npos;
  std::string which;
  for (const auto& s : stops) {
    if (s.empty()) continue;
    const std::size_t at = text.find(s);
    if (at == std::string_view::npos) continue;
    if (at < best || (at == best && s.size() > which.size())) {
      best = at;
      which = s;
    }
  }
  return {best, which};
}

std::size_t stop_prefix_tail(std::string_view text, const std::vector<std::string>& stops) {
  std::size_t keep = 0;
  for (const auto& s : stops) {
    const std::size_t longest = std::min(s.size() == 0 ? 0 : s.size() - 1, text.size());
    for (std::size_t n = longest; n > keep; --n) {
      if (text.substr(text.size() - n) == std::string_view(s).substr(0, n)) {
        keep = n;
        break;
      }
    }
  }
  return keep;
}

namespace {

class stop_turn : public rewriting_turn {
 public:
  stop_turn(std::unique_ptr<chat_turn> inner, const std::vector<std::string>& stops, std::shared_ptr<std::string> matched,
            chat_backend& backend, model::chat_request req)
      : rewriting_turn(std::move(inner)), stops_(stops), matched_(std::move(matched)), backend_(backend),
        req_(std::move(req)) {}

 private:
  void take(model::stream_event ev) override {
    if (std::holds_alternative<model::text_delta>(ev) || std::holds_alternative<model::reasoning_delta>(ev) ||
        std::holds_alternative<model::tool_call_arguments_delta>(ev)) {
      ++content_events_;
    }
    auto* text = std::get_if<model::text_delta>(&ev);
    if (!text) {
      release();
      ready_.push_back(std::move(ev));
      return;
    }
    held_ += text->text;
    auto [at, which] = find_stop(held_, stops_);
    if (at != std::string::npos) {
      held_.resize(at);
      release();
      *matched_ = which;
      if (cancel_) cancel_();
      inner_.reset();
      cut_ = true;
      return;
    }
    const std::size_t keep = stop_prefix_tail(held_, stops_);
    if (keep < held_.size()) {
      ready_.push_back(model::text_delta{held_.substr(0, held_.size() - keep)});
      held_.erase(0, held_.size() - keep);
    }
  }
  void at_end() override { release(); }
  bool cut_pending() const override { return cut_; }
  /// After a match: the usage (the prompt counted by the backend, since the upstream was cut
  /// before it reported; 0 when the backend cannot count) and the finish.
  asio::awaitable<void> after_cut() override {
    cut_ = false;
    auto prompt = co_await backend_.count_prompt_tokens(req_);
    model::usage u;
    u.prompt_tokens = prompt ? *prompt : 0;
    u.completion_tokens = content_events_;
    u.total_tokens = u.prompt_tokens + u.completion_tokens;
    ready_.push_back(model::usage_event{u});
    ready_.push_back(model::finish_event{model::finish_reason::stop});
  }
  void release() {
    if (held_.empty()) return;
    ready_.push_back(model::text_delta{std::move(held_)});
    held_.clear();
  }

  const std::vector<std::string>& stops_;
  std::shared_ptr<std::string> matched_;
  std::string held_;
  std::int64_t content_events_ = 0;
  bool cut_ = false;
  chat_backend& backend_;
  model::chat_request req_;
};

}  // namespace

stop_sequence_backend::stop_sequence_backend(chat_backend& inner, std::vector<std::string> stops)
    : decorating_backend(inner) {
  for (auto& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

asio::awaitable<result<std::unique_ptr<chat_turn>>> stop_sequence_backend::open_turn(
    const model::chat_request& req, std::shared_ptr<cancel_token> cancel,
    std::function<asio::awaitable<bool>()> on_silence) {
  matched_->clear();
  if (stops_.empty()) co_return co_await inner_.open_turn(req, std::move(cancel), std::move(on_silence));
  model::chat_request own = req;
  own.sampling.stop.reset();
  auto opened = co_await inner_.open_turn(own, std::move(cancel), std::move(on_silence));
  if (!opened) co_return opened.error();
  std::unique_ptr<chat_turn> turn = std::make_unique<stop_turn>(std::move(*opened), stops_, matched_, inner_, std::move(own));
  co_return turn;
}

}  // namespace warden::engine
