#include "model/context_fit.h"

#include <algorithm>
#include <map>

namespace warden::model {

const char* to_string(overflow_policy p) noexcept {
  switch (p) {
    case overflow_policy::error: return "error";
    case overflow_policy::truncate_middle: return "truncate_middle";
    case overflow_policy::truncate_oldest: return "truncate_oldest";
  }
  return "error";
}

std::optional<overflow_policy> parse_overflow_policy(std::string_view s) noexcept {
  for (auto p : {overflow_policy::error, overflow_policy::truncate_middle, overflow_policy::truncate_oldest}) {
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

namespace {

/// Where each unit starts: at a user message (an exchange: the question and everything that
/// answers it), at a system message and right after one (a system message is a unit of its own).
/// A user message right after tool results does not start one: an Anthropic user message with
/// tool_result blocks and text becomes tool messages then a user message, and the client's one
/// message must not be half dropped.
std::vector<bool> unit_starts(const std::vector<message>& msgs) {
  std::vector<bool> start(msgs.size(), false);
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    const bool sys = msgs[i].role == role::system;
    const bool after_results = i > 0 && msgs[i - 1].role == role::tool;
    if (i == 0 || sys || (msgs[i].role == role::user && !after_results) || msgs[i - 1].role == role::system) {
      start[i] = true;
    }
  }
  return start;
}

/// A tool result whose call is in an earlier unit joins the two (and every unit between): no
/// unit boundary may lie between a call and its result. System messages stay apart.
void join_tool_groups(const std::vector<message>& msgs, std::vector<bool>& start) {
  std::map<std::string, std::size_t> call_at;
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    for (const auto& part : msgs[i].content) {
      if (const auto* c = std::get_if<tool_call_part>(&part)) {
        call_at[c->id] = i;
      } else if (const auto* r = std::get_if<tool_result_part>(&part)) {
        auto it = call_at.find(r->tool_call_id);
        if (it == call_at.end()) continue;
        for (std::size_t k = it->second + 1; k <= i; ++k) {
          if (msgs[k].role != role::system && msgs[k - 1].role != role::system) start[k] = false;
        }
      }
    }
  }
}

}  // namespace

std::vector<fit_unit> fit_units(const std::vector<message>& msgs) {
  std::vector<bool> start = unit_starts(msgs);
  join_tool_groups(msgs, start);
  std::size_t last_user = msgs.size();
  for (std::size_t i = msgs.size(); i-- > 0;) {
    if (msgs[i].role == role::user) {
      last_user = i;
      break;
    }
  }
  std::vector<fit_unit> units;
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    if (start[i] || units.empty()) units.push_back(fit_unit{});
    units.back().messages.push_back(i);
  }
  for (auto& u : units) {
    for (std::size_t i : u.messages) {
      // No user message at all: nothing is known to be the question, so nothing is dropped.
      if (msgs[i].role == role::system || i >= last_user) u.droppable = false;
    }
  }
  return units;
}

std::size_t message_chars(const message& m) {
  std::size_t n = m.name.size();
  for (const auto& part : m.content) {
    if (const auto* t = std::get_if<text_part>(&part)) n += t->text.size();
    else if (const auto* r = std::get_if<reasoning_part>(&part)) n += r->text.size();
    else if (const auto* c = std::get_if<tool_call_part>(&part)) n += c->name.size() + c->arguments.size() + c->id.size();
    else if (const auto* res = std::get_if<tool_result_part>(&part)) n += res->content.size() + res->tool_call_id.size();
    else if (std::holds_alternative<image_part>(part)) n += 1000;
    else if (const auto* o = std::get_if<opaque_part>(&part)) n += dump_safe(o->value).size();
  }
  return n;
}

std::vector<std::size_t> choose_drops(const std::vector<message>& msgs, const std::vector<std::int64_t>& weights,
                                      overflow_policy policy, std::int64_t to_shed) {
  std::vector<std::size_t> drop;
  if (policy == overflow_policy::error || to_shed <= 0) return drop;
  std::vector<const fit_unit*> order;
  const std::vector<fit_unit> units = fit_units(msgs);
  for (const auto& u : units) {
    if (u.droppable) order.push_back(&u);
  }
  // truncate_middle: the first droppable unit (the opening request) goes last.
  if (policy == overflow_policy::truncate_middle && order.size() > 1) {
    order.push_back(order.front());
    order.erase(order.begin());
  }
  std::int64_t shed = 0;
  for (const fit_unit* u : order) {
    if (shed >= to_shed) break;
    for (std::size_t i : u->messages) {
      drop.push_back(i);
      shed += i < weights.size() ? weights[i] : 0;
    }
  }
  std::sort(drop.begin(), drop.end());
  return drop;
}

std::vector<message> without(const std::vector<message>& msgs, const std::vector<std::size_t>& drop) {
  std::vector<message> out;
  out.reserve(msgs.size());
  std::size_t d = 0;
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    while (d < drop.size() && drop[d] < i) ++d;
    if (d < drop.size() && drop[d] == i) continue;
    out.push_back(msgs[i]);
  }
  return out;
}

}  // namespace warden::model
