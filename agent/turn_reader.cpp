#include "agent/turn_reader.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>


namespace warden::agent {

namespace asio = boost::asio;

asio::awaitable<bool> event_out::send(loop_event ev) {
  if (gone_) co_return false;
  if (auto* t = std::get_if<model::text_delta>(&ev)) {
    if (!t->text.empty()) {
      if (break_pending_) t->text.insert(0, "\n\n");
      break_pending_ = false;
      sent_text_ = true;
      ends_line_ = t->text.back() == '\n';
    }
  } else if (std::holds_alternative<tool_start>(ev) || std::holds_alternative<tool_end>(ev)) {
    break_pending_ = false;  // a tool card stands between the two texts
  }
  const bool ok = co_await sink_.emit(std::move(ev));
  if (!ok) gone_ = true;
  co_return ok;
}

asio::awaitable<bool> event_out::send_ping() {
  const bool ok = co_await send(ping_event());
  co_return ok;
}

asio::awaitable<bool> event_out::send_status(std::string text) {
  const bool ok = co_await send(status_event(std::move(text)));
  co_return ok;
}

bool connection_lost(const error& failure) {
  if (failure.code == errc::upstream_unavailable) return true;
  if (failure.code != errc::upstream_error) return false;
  // engine/chat_service.cpp: a transport failure mid-body, a close before the head, a body
  // that ended without [DONE] (the server went away).
  static constexpr std::string_view k_lost[] = {"the model server connection broke",
                                                "the model server closed the connection",
                                                "the model server ended the stream without [DONE]"};
  const std::string_view m = failure.message;
  return std::any_of(std::begin(k_lost), std::end(k_lost), [m](std::string_view p) { return m.starts_with(p); });
}

std::string unresolved_card_result(const std::optional<error>& failure) {
  if (!failure) return "";
  return connection_lost(*failure) ? k_card_lost_connection : k_card_interrupted;
}

namespace {

constexpr std::string_view k_render_html = "render_html";

/// A structured call being streamed, and whether it opened a provisional card.
struct streamed_call {
  pending_call call;
  bool card = false;
};

struct turn_accumulator {
  explicit turn_accumulator(const provisional_options& p) : prov(p) {}

  const provisional_options& prov;
  std::map<std::size_t, streamed_call> structured;
  turn_read read;
  std::vector<loop_event> out;  ///< what to forward for the event just taken, in order

  /// Fills `out` with the events to forward, if any.
  void take(model::stream_event& ev, bool tools_on) {
    out.clear();
    if (auto* t = std::get_if<model::text_delta>(&ev)) {
      if (t->text.empty()) return;
      read.text += t->text;
      out.push_back(std::move(*t));
    } else if (auto* r = std::get_if<model::reasoning_delta>(&ev)) {
      out.push_back(std::move(*r));
    } else if (auto* s = std::get_if<model::tool_call_started>(&ev)) {
      if (!tools_on) return;
      auto& c = structured[s->index].call;
      if (!s->id.empty()) c.id = s->id;
      c.name += s->name;
      c.from_text = c.from_text || s->healed;
    } else if (auto* a = std::get_if<model::tool_call_arguments_delta>(&ev)) {
      if (tools_on) take_arguments(a->index, a->fragment);
    } else if (auto* u = std::get_if<model::usage_event>(&ev)) {
      read.usage = read.usage.value_or(model::usage{});
      *read.usage += u->usage;
    } else if (auto* f = std::get_if<model::finish_event>(&ev)) {
      read.finish = f->reason;
    } else if (std::holds_alternative<model::ping_event>(ev)) {
      out.push_back(model::ping_event{});
    } else if (auto* c = std::get_if<model::context_truncated>(&ev)) {
      read.truncated = *c;
      out.push_back(std::move(*c));
    }
  }

  void take_arguments(std::size_t index, const std::string& fragment) {
    auto& sc = structured[index];
    sc.call.arguments += fragment;
    if (sc.card) {
      if (!fragment.empty()) out.push_back(args_event(sc.call.name, sc.call.id, fragment));
      return;
    }
    if (!wants_card(index, sc.call)) return;
    sc.card = true;
    tool_start card;
    card.tool = sc.call.name;
    card.call_id = sc.call.id;
    card.provisional = true;
    out.push_back(std::move(card));
    if (!sc.call.arguments.empty()) out.push_back(args_event(sc.call.name, sc.call.id, sc.call.arguments));
    provisional_card rec;
    rec.tool = sc.call.name;
    rec.call_id = sc.call.id;
    read.provisional.push_back(std::move(rec));
  }

  /// The rules of reference §2.9 (see turn_reader.h).
  bool wants_card(std::size_t index, const pending_call& c) const {
    if (prov.selected == nullptr || c.from_text || c.id.empty() || c.name.empty()) return false;
    if (!prov.parallel_tool_calls && structured.begin()->first != index) return false;
    for (const auto& [i, other] : structured) {
      if (i != index && other.call.id == c.id) return false;  // plan_calls would rename one of them
    }
    const auto& sel = *prov.selected;
    const auto it = std::find_if(sel.begin(), sel.end(), [&c](const tools::tool* t) { return t->info().name == c.name; });
    if (it == sel.end()) return false;
    const bool large = c.name == k_render_html || c.arguments.size() >= k_provisional_min_chars;
    return large && !may_need_confirmation(prov.policy, (*it)->info());
  }

  /// The turn's calls once it ended: every structured call; of the calls healed from text, at
  /// most k_max_text_calls_per_turn, exact repeats dropped.
  void collect_calls() {
    std::set<std::string> seen;
    std::size_t healed = 0;
    for (auto& [idx, c] : structured) {
      if (c.call.from_text) {
        if (healed >= k_max_text_calls_per_turn || !seen.insert(c.call.name + "\n" + c.call.arguments).second) continue;
        ++healed;
      }
      read.calls.push_back(std::move(c.call));
    }
  }
};

}  // namespace

asio::awaitable<turn_read> read_turn(engine::chat_turn& turn, bool tools_on, event_out& out,
                                     const provisional_options& prov) {
  turn_accumulator acc(prov);
  while (auto ev = co_await turn.next()) {
    if (auto* e = std::get_if<model::error_event>(&*ev)) {
      acc.read.failure = std::move(e->failure);
      co_return std::move(acc.read);
    }
    acc.take(*ev, tools_on);
    for (auto& fwd : acc.out) {
      if (!co_await out.send(std::move(fwd))) {
        acc.read.client_gone = true;
        co_return std::move(acc.read);
      }
    }
  }
  acc.collect_calls();
  co_return std::move(acc.read);
}

}  // namespace warden::agent
