// loop_context — what the parts of one tool loop share (tool_loop.h): the server-wide runtime,
// the request's options and session, its cancel token, the event output, the workspace, and
// the result being built.
// Thread-safety: tool_runtime's registries are shared and thread-safe; a loop_context belongs to
// one request coroutine.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/approvals.h"
#include "agent/cancel_registry.h"
#include "agent/gate.h"
#include "agent/loop_guidance.h"
#include "agent/turn_reader.h"
#include "common/blocking_pool.h"
#include "common/cancel_token.h"
#include "common/result.h"
#include "model/conversation.h"
#include "agent/call_record.h"
#include "tools/knowledge.h"
#include "tools/tool.h"

namespace warden::agent {

class rule_book;

/// Where every call record goes (the audit log's table); tests record in memory.
/// A call that runs is written twice: open() before it runs (awaited: when the row cannot be
/// written the call must not run, and the error says why), then record(row, …) with its outcome.
/// Calls that never run are written once, record(0, …).
class call_recorder {
 public:
  virtual ~call_recorder() = default;
  /// Writes the record of a call about to run; the row id, or why it could not be written.
  virtual boost::asio::awaitable<result<std::int64_t>> open(call_record r) = 0;
  /// Completes row `row` (from open()), or appends a new row when `row` is 0. Not awaited for
  /// the disk: a failure is logged.
  virtual boost::asio::awaitable<void> record(std::int64_t row, call_record r) = 0;
  /// The same, blocking, for a call torn down before it settled (no coroutine to await in).
  virtual void record_now(std::int64_t row, const call_record& r) = 0;
};

/// The server-wide parts the loop uses; wired in app/serve.cpp.
struct tool_runtime {
  approval_registry& approvals;
  cancel_registry& cancels;
  tools::registry& tools;
  std::string workspaces_root;                             ///< $WARDEN_HOME/workspaces
  std::chrono::milliseconds ping_interval{15000};
  permission_mode max_permission = permission_mode::full;  ///< --max-permission
  blocking_pool* pool = nullptr;        ///< blocking work (workspace creation); null = inline
  call_recorder* recorder = nullptr;    ///< null = records only in loop_result
  rule_book* rules = nullptr;           ///< remembered approvals (agent/rule_book.h); null = none
  bool heal_tool_calls = true;          ///< the server's default for auto_heal_tool_calls (engine/healing.h)
  guidance_switches guidance{};         ///< the server's defaults for the loop's guidance (loop_guidance.h)
  tools::knowledge_runtime* knowledge = nullptr;  ///< RAG auto-inject's search (tools/knowledge.h); null = none
};

/// A call of a parked turn (loop_options::park_approvals), with the id the plan gave it.
struct parked_call {
  std::string id;
  std::string name;
  std::string arguments;  ///< as the model wrote them
  bool needs_approval = false;  ///< the policy said ask: a person must answer before it runs
  json card_arguments = json::object();  ///< the parsed arguments ({} when invalid)
};
/// A turn stopped before any of its calls ran, waiting for answers.
struct parked_turn {
  std::string text;  ///< the turn's visible text
  std::vector<parked_call> calls;
};
/// What resumes a parked turn: the turn as parked and the outcome of each question (by call id:
/// allowed, denied, or timed_out when the answer came after --approval-timeout). A call that
/// needs approval and has no outcome parks the turn again.
struct resume_turn {
  parked_turn turn;
  std::map<std::string, approval_outcome> decisions;
};

struct loop_result {
  model::finish_reason finish_reason = model::finish_reason::stop;
  std::string final_text;                 ///< the visible text of the last turn
  std::optional<model::usage> usage;      ///< summed over turns; nullopt when the upstream sent none
  std::optional<error> failure;           ///< the upstream failed
  bool client_gone = false;
  int turns = 0;
  int tools_run = 0;
  std::vector<model::message> messages;   ///< what the run added: assistant turns and tool results
  std::vector<call_record> calls;  ///< one per tool call, in order
  std::optional<parked_turn> parked;      ///< set when the loop stopped on a turn that needs answers
  bool cancelled = false;                 ///< ended by a cancel (cancel_id / session_id), not by shutdown
  /// The last turn's prompt was cut to fit the model's context (context_overflow; engine/context_fit.h).
  std::optional<model::context_truncated> truncated;
};

struct loop_context {
  // A constructor, not aggregate initialization: GCC 12 destroys an aggregate-initialized local
  // of a coroutine twice.
  loop_context(const loop_options& o, tool_runtime& r, std::string s, std::shared_ptr<cancel_token> t, event_out& e,
               loop_result& lr)
      : opts(o), rt(r), session(std::move(s)), token(std::move(t)), out(e), res(lr) {}
  const loop_options& opts;
  tool_runtime& rt;
  std::string session;                    ///< "_default" when the request named none
  std::shared_ptr<cancel_token> token;
  event_out& out;
  loop_result& res;
  std::string workspace;                  ///< created on the first run
  const resume_turn* resume = nullptr;    ///< answers for the turn being resumed, if any
  guidance_switches guidance;             ///< the request's, over the server's
  reprompt_tracker reprompts;
  /// Knowledge-base searches of this answer (tools/knowledge.h: at most k_max_kb_searches).
  std::shared_ptr<std::atomic<int>> kb_searches = std::make_shared<std::atomic<int>>(0);
};

}  // namespace warden::agent
