// call_plan — one tool call of a turn on its way through the chokepoint
// (call policy → gate → runner → record; DESIGN.md §3).
//
// plan_calls() gives every call of a turn its plan, before anything runs or anyone is asked:
// a unique id (the model's, or a fresh "call_…" when it gave none or repeated one), the parsed
// arguments, the auto classifier's risk (risk.h), the policy's decision (call_policy.h), the
// tool_start card (with the risk), and the call record to be completed (agent/call_record.h).
// Thread-safety: values owned by the loop.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/approvals.h"
#include "agent/call_policy.h"
#include "agent/loop_context.h"
#include "agent/loop_events.h"
#include "agent/turn_reader.h"
#include "common/cancel_token.h"
#include "agent/call_record.h"
#include "tools/tool.h"

namespace warden::agent {

/// A call's record, written exactly once: by settle_call, or — when the call never settles (the
/// client went away and the coroutine was torn down) — by the destructor, synchronously, with a
/// client_gone note. A call torn down before its tool started is recorded as not run
/// (decided_by::client_gone); one torn down while its tool ran (started() was called) stays
/// ran, its decider kept, because the row must never say a call that ran did not run.
class tracked_record {
 public:
  tracked_record() = default;
  tracked_record(tracked_record&& o) noexcept
      : value(std::move(o.value)), row(o.row), recorder_(o.recorder_), done_(o.done_), started_(o.started_) {
    o.recorder_ = nullptr;
  }
  tracked_record& operator=(tracked_record&&) = delete;
  ~tracked_record();
  /// Where the record goes if the call never settles (null: nowhere).
  void track(call_recorder* r) { recorder_ = r; }
  /// The record was written (or handed to the recorder).
  void written() { done_ = true; }
  /// The tool is being started: from here on the call counts as run.
  void started() { started_ = true; }

  call_record value;
  std::int64_t row = 0;  ///< the audit row written before the call ran (call_recorder::open); 0 = none

 private:
  call_recorder* recorder_ = nullptr;
  bool done_ = false;
  bool started_ = false;
};

struct call_plan {
  pending_call call;
  std::optional<json> args;           ///< a JSON object, or nullopt when invalid
  tools::tool* tool = nullptr;        ///< nullptr when unknown or not enabled
  call_decision decision;
  tool_start start;                   ///< the card
  bool start_sent = false;
  tracked_record record;
  std::int64_t asked_unix_ms = 0;                     ///< when the person was asked
  std::unique_ptr<approval_registry::ticket> ticket;  ///< set when a person must decide
  std::optional<approval_outcome> preset;             ///< a decision given before the turn resumed (resume_turn)
  cancel_token::registration deny_on_cancel;          ///< declared after the ticket: released first
};

/// name + ":" + arguments re-serialized with sorted keys (reference §2.6).
std::string canonical_call_key(const std::string& name, const json& args);

/// The plans of a turn's calls (ids made unique, arguments parsed and classified (agent/risk.h),
/// remembered rules consulted (cx.rt.rules), policy decided with the request's folded gate).
std::vector<call_plan> plan_calls(std::vector<pending_call> calls, const std::vector<tools::tool*>& selected,
                                  const loop_context& cx);

/// The assistant message of a turn: its text and every call (arguments re-serialized, {} when
/// invalid).
model::message assistant_message(const std::string& text, const std::vector<call_plan>& plans);

/// Unix time in milliseconds.
std::int64_t unix_ms_now();

}  // namespace warden::agent
