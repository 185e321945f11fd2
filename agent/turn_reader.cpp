#include "agent/turn_reader.h"

#include <map>
#include <set>

#include "agent/text_tool_calls.h"

namespace warden::agent {

namespace asio = boost::asio;

asio::awaitable<bool> event_out::send(loop_event ev) {
  if (gone_) co_return false;
  const bool ok = co_await sink_.emit(std::move(ev));
  if (!ok) gone_ = true;
  co_return ok;
}

namespace {

struct turn_accumulator {
  text_call_scanner scanner;
  std::map<std::size_t, pending_call> structured;
  turn_read read;

  /// The event to forward, if any.
  std::optional<loop_event> take(model::stream_event& ev, bool tools_on) {
    if (auto* t = std::get_if<model::text_delta>(&ev)) {
      std::string show = scanner.feed(t->text);
      if (show.empty()) return std::nullopt;
      read.text += show;
      return model::text_delta{std::move(show)};
    }
    if (auto* r = std::get_if<model::reasoning_delta>(&ev)) return std::move(*r);
    if (auto* s = std::get_if<model::tool_call_started>(&ev)) {
      if (!tools_on) return std::nullopt;
      auto& c = structured[s->index];
      if (!s->id.empty()) c.id = s->id;
      c.name += s->name;
    } else if (auto* a = std::get_if<model::tool_call_arguments_delta>(&ev)) {
      if (tools_on) structured[a->index].arguments += a->fragment;
    } else if (auto* u = std::get_if<model::usage_event>(&ev)) {
      read.usage = read.usage.value_or(model::usage{});
      *read.usage += u->usage;
    } else if (auto* f = std::get_if<model::finish_event>(&ev)) {
      read.finish = f->reason;
    } else if (std::holds_alternative<model::ping_event>(ev)) {
      return model::ping_event{};
    }
    return std::nullopt;
  }

  /// The turn's calls once it ended.
  void collect_calls(std::vector<text_call> text_calls, bool tools_on) {
    for (auto& [idx, c] : structured) read.calls.push_back(std::move(c));
    if (!read.calls.empty() || !tools_on) return;
    std::set<std::string> seen;
    for (auto& t : text_calls) {
      if (read.calls.size() >= k_max_text_calls_per_turn) break;
      if (!seen.insert(t.name + "\n" + t.arguments).second) continue;
      read.calls.push_back({"", std::move(t.name), std::move(t.arguments), true});
    }
  }
};

}  // namespace

asio::awaitable<turn_read> read_turn(engine::chat_turn& turn, bool tools_on, event_out& out) {
  turn_accumulator acc;
  while (auto ev = co_await turn.next()) {
    if (auto* e = std::get_if<model::error_event>(&*ev)) {
      acc.read.failure = std::move(e->failure);
      co_return std::move(acc.read);
    }
    if (auto fwd = acc.take(*ev, tools_on)) {
      if (!co_await out.send(std::move(*fwd))) {
        acc.read.client_gone = true;
        co_return std::move(acc.read);
      }
    }
  }
  auto tail = acc.scanner.finish();
  if (!tail.text.empty()) {
    acc.read.text += tail.text;
    if (!co_await out.send(text_event(tail.text))) acc.read.client_gone = true;
  }
  acc.collect_calls(std::move(tail.calls), tools_on);
  co_return std::move(acc.read);
}

}  // namespace warden::agent
