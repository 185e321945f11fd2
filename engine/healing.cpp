#include "engine/healing.h"

#include <deque>

#include "common/ids.h"
#include "engine/tool_call_text.h"

namespace warden::engine {

namespace asio = boost::asio;

namespace {

class healing_turn : public rewriting_turn {
 public:
  healing_turn(std::unique_ptr<chat_turn> inner, const std::set<std::string>& declared)
      : rewriting_turn(std::move(inner)), scanner_(declared) {}

 private:
  void take(model::stream_event ev) override {
    if (finished_) {  // after finish_event: held to the end with it
      if (std::holds_alternative<model::error_event>(ev)) return fail(std::move(ev));
      tail_.push_back(std::move(ev));
      return;
    }
    if (auto* t = std::get_if<model::text_delta>(&ev)) {
      std::string show = scanner_.feed(t->text);
      if (!show.empty()) ready_.push_back(model::text_delta{std::move(show)});
      return;
    }
    if (std::holds_alternative<model::finish_event>(ev)) {
      finished_ = true;
      tail_.push_back(std::move(ev));
      return;
    }
    if (std::holds_alternative<model::error_event>(ev)) return fail(std::move(ev));
    if (auto* s = std::get_if<model::tool_call_started>(&ev)) {
      structured_ = true;
      next_index_ = std::max(next_index_, s->index + 1);
    }
    ready_.push_back(std::move(ev));
  }

  /// The turn failed: what was held is text, then the error.
  void fail(model::stream_event err) {
    release_as_text();
    ready_.push_back(std::move(err));
  }

  void release_as_text() {
    std::string raw = scanner_.held_text();
    if (!raw.empty()) ready_.push_back(model::text_delta{std::move(raw)});
  }

  /// A turn cut by max_tokens: a call in it was cut short too, and is not the model's call.
  bool cut_by_length() const {
    for (const auto& ev : tail_) {
      if (const auto* f = std::get_if<model::finish_event>(&ev); f && f->reason == model::finish_reason::length) return true;
    }
    return false;
  }

  void at_end() override {
    if (structured_ || cut_by_length()) {  // not healed: the held text goes out as the model wrote it
      std::string raw = scanner_.held_text();
      if (!raw.empty()) ready_.push_back(model::text_delta{std::move(raw)});
    }
    bool healed = false;
    for (auto& p : scanner_.finish()) {
      if (p.call) {
        emit_call(*p.call);
        healed = true;
      } else {
        ready_.push_back(model::text_delta{std::move(p.text)});
      }
    }
    for (auto& ev : tail_) {
      if (auto* f = std::get_if<model::finish_event>(&ev); f && healed) f->reason = model::finish_reason::tool_calls;
      ready_.push_back(std::move(ev));
    }
    if (!finished_ && healed) ready_.push_back(model::finish_event{model::finish_reason::tool_calls});
  }

  void emit_call(const text_call& c) {
    const std::size_t index = next_index_++;
    model::tool_call_started s;
    s.index = index;
    s.id = ids::new_id(ids::kind::tool_call);
    s.name = c.name;
    s.healed = true;
    ready_.push_back(std::move(s));
    ready_.push_back(model::tool_call_arguments_delta{index, c.arguments});
    ready_.push_back(model::tool_call_finished{index});
  }

  text_call_scanner scanner_;
  std::vector<model::stream_event> tail_;  ///< finish_event and what followed it
  bool finished_ = false;
  bool structured_ = false;
  std::size_t next_index_ = 0;
};

}  // namespace

healing_backend::healing_backend(chat_backend& inner, std::set<std::string> declared)
    : decorating_backend(inner), declared_(std::move(declared)) {}

asio::awaitable<result<std::unique_ptr<chat_turn>>> healing_backend::open_turn(
    const model::chat_request& req, std::shared_ptr<cancel_token> cancel, std::function<asio::awaitable<bool>()> on_silence) {
  auto opened = co_await inner_.open_turn(req, std::move(cancel), std::move(on_silence));
  if (!opened || declared_.empty()) co_return opened;
  co_return std::unique_ptr<chat_turn>(std::make_unique<healing_turn>(std::move(*opened), declared_));
}

std::set<std::string> declared_tool_names(const model::chat_request& req) {
  std::set<std::string> out;
  for (const auto& t : req.tools) out.insert(t.name);
  return out;
}

}  // namespace warden::engine
