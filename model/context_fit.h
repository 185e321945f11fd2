// context_fit — which messages of a conversation to drop when it does not fit the model's
// context (issue 27 §6; reference unsloth-studio.md §5.4 `context_overflow`). Pure decisions:
// engine/context_fit.h measures (the model's own tokenizer) and applies them.
//
// Policies (the request field `context_overflow`):
//   error            the default: nothing is dropped; the request is answered 400
//                    `context_length_exceeded` with the token counts.
//   truncate_oldest  drops the oldest droppable units first (a rolling window).
//   truncate_middle  keeps the first droppable unit (the opening request that sets the task) and
//                    the newest, and drops from the one after the first onwards; the first goes
//                    last of all.
// What is never dropped: system messages, and the last user message with everything after it
// (the turn being answered, the tool calls and results of a loop in progress).
// A unit is what is dropped together: one message, or an assistant message with tool calls
// together with every tool message answering one of its calls (a tool-call group is never split:
// an upstream refuses a tool result whose call is gone, and a call without its result).
// Units: weights are tokens (estimates: engine/context_fit.h).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/conversation.h"

namespace warden::model {

enum class overflow_policy { error, truncate_middle, truncate_oldest };

/// "error", "truncate_middle", "truncate_oldest".
const char* to_string(overflow_policy p) noexcept;
/// The three names; nullopt otherwise.
std::optional<overflow_policy> parse_overflow_policy(std::string_view s) noexcept;

/// Messages [first, last] of a conversation dropped (or kept) together. `messages` lists their
/// indices (a tool-call group's tool results need not be adjacent to their call).
struct fit_unit {
  std::vector<std::size_t> messages;
  bool droppable = true;
};

/// The units of `msgs`, in order of their first message; every message is in exactly one.
std::vector<fit_unit> fit_units(const std::vector<message>& msgs);

/// A rough size of message `m` in characters (text, reasoning, call names and arguments, tool
/// results, 1000 per image) — the basis of per-message token estimates.
std::size_t message_chars(const message& m);

/// The indices (ascending) of the messages to drop so that at least `to_shed` tokens go, given
/// each message's estimated tokens (`weights`, one per message of `msgs`), under `policy`
/// (truncate_oldest or truncate_middle; error drops nothing). Drops whole units only. When even
/// every droppable unit is not enough, all of them are returned (the caller checks the result).
std::vector<std::size_t> choose_drops(const std::vector<message>& msgs, const std::vector<std::int64_t>& weights,
                                      overflow_policy policy, std::int64_t to_shed);

/// `msgs` without the messages at `drop` (ascending indices).
std::vector<message> without(const std::vector<message>& msgs, const std::vector<std::size_t>& drop);

}  // namespace warden::model
