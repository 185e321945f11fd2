#include "agent/call_runner.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <filesystem>

#include "agent/approval_step.h"
#include "agent/elicitation_step.h"
#include "tools/workspace.h"

namespace warden::agent {

namespace asio = boost::asio;

std::string expired_text(std::chrono::milliseconds lifetime) {
  const auto ms = lifetime.count();
  const std::string after = ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
  return "The approval request expired after " + after +
         " without an answer from the user, so the tool call did not run. The user did not refuse it: you may ask "
         "whether to try again.";
}

namespace {

tools::isolation isolation_of(const loop_options& o) {
  return o.policy().bypass ? tools::isolation::bypass : tools::isolation::sandboxed;
}

/// The session's workspace, created on first use (mkdir runs on the blocking pool). A named
/// owner's sessions live under <root>/.owners/<owner> (names are [A-Za-z0-9_-]{1,64}, never
/// ".owners" or ".host"), so two keys using the same session_id never share files.
asio::awaitable<result<std::string>> workspace_of(loop_context& cx) {
  if (!cx.workspace.empty()) co_return cx.workspace;
  auto make = [root = cx.rt.workspaces_root, session = cx.session, mode = isolation_of(cx.opts),
               owner = cx.opts.owner]() -> result<std::string> {
    if (owner.empty()) return tools::ensure_workspace(root, session, mode);
    if (!valid_session_id(owner)) return make_error(errc::internal, "invalid owner name for a workspace");
    const std::string owners = root + "/" + k_owner_workspaces;
    std::error_code ec;
    std::filesystem::create_directories(owners, ec);
    if (ec) return make_error(errc::internal, "cannot create the workspace folder " + owners + ": " + ec.message());
    ::chmod(root.c_str(), 0700);  // as ensure_workspace() keeps its own root: nobody else lists the owners
    ::chmod(owners.c_str(), 0700);
    return tools::ensure_workspace(owners + "/" + owner, session, mode);
  };
  // Not `pool ? co_await … : make()`: GCC 12 mishandles co_await inside a conditional expression.
  result<std::string> ws = make_error(errc::internal, "unset");
  if (cx.rt.pool) {
    ws = co_await cx.rt.pool->run_blocking(make);
  } else {
    ws = make();
  }
  if (ws) cx.workspace = *ws;
  co_return ws;
}

tools::tool_context context_for(const call_plan& p, loop_context& cx) {
  tools::tool_context ctx;
  ctx.workspace = cx.workspace;
  ctx.mode = isolation_of(cx.opts);
  ctx.timeout = cx.opts.tool_call_timeout_s >= k_no_tool_timeout_s
                    ? std::chrono::milliseconds(0)
                    : std::chrono::milliseconds(std::int64_t{cx.opts.tool_call_timeout_s} * 1000);
  ctx.cancel = cx.token;
  ctx.idle_interval = cx.rt.ping_interval;
  if (cx.opts.website_policy) ctx.website = &*cx.opts.website_policy;
  if (cx.opts.rag) ctx.rag = &*cx.opts.rag;
  ctx.owner = cx.opts.owner;
  ctx.any_owner = cx.opts.may_bypass;  // the single user and admin keys (issue 22)
  ctx.kb_searches = cx.kb_searches;
  ctx.on_output = [&cx, tool = p.call.name, id = p.call.id](std::string text) -> asio::awaitable<void> {
    co_await cx.out.send(output_event(tool, id, std::move(text)));
  };
  ctx.on_idle = [&cx]() -> asio::awaitable<void> { co_await cx.out.send(ping_event()); };
  return ctx;
}

/// Runs an allowed call. The result text; `ran` says whether the tool really ran (false too when
/// its program was never started: tools::tool_result::not_run).
asio::awaitable<std::string> execute(call_plan& p, loop_context& cx, bool& ran) {
  auto ws = co_await workspace_of(cx);
  if (!ws) {
    p.record.value.is_error = true;
    co_return "Execution error: " + ws.error().message;
  }
  if (!co_await cx.out.send(status_event(p.tool->status_text(*p.args)))) co_return std::string();
  tools::tool_context ctx = context_for(p, cx);
  ctx.elicit = elicitor(p, cx);  // an MCP server's elicitation/create reaches the person (issue 26)
  const auto t0 = std::chrono::steady_clock::now();
  p.record.started();  // torn down from here on (the client left), the row still says it ran
  auto r = co_await p.tool->run(*p.args, ctx);
  p.record.value.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  if (r.not_run) {  // the program never started (the jail failed, the quota): not run, and why
    p.record.value.reason = "not run: " + *r.not_run;
    p.record.value.is_error = true;
    co_return std::move(r.text);
  }
  p.record.value.exit_status = r.exit_status;
  if (cx.token->cancelled()) {  // killed by a cancel (request, session or shutdown) while it ran
    p.record.value.by = decided_by::cancel;
    p.record.value.reason = "cancelled while running: " + cx.token->reason();
    p.record.value.notes.push_back(k_note_cancelled);
  }
  p.record.value.output_bytes = r.output_bytes;
  p.record.value.is_error = r.is_error;
  ran = true;
  co_return std::move(r.text);
}

/// Why the call does not run (a refusal, a repeat, a decline); nullopt when it may run.
asio::awaitable<std::optional<std::string>> gate(call_plan& p, loop_context& cx, loop_state& state, bool& gone) {
  if (p.decision.verdict != call_verdict::run && p.decision.verdict != call_verdict::ask) {
    if (p.decision.verdict == call_verdict::not_enabled) state.force_final();
    co_return p.decision.reason;
  }
  const auto& info = p.tool->info();
  const auto repeat = state.check_repeat(canonical_call_key(p.call.name, *p.args), info.name, info.traits.once_per_answer);
  if (repeat == loop_state::repeat::once_spent) co_return info.name + " already ran for this answer; it runs once per answer.";
  if (repeat == loop_state::repeat::already_succeeded) co_return std::string(k_already_ran);
  bool allowed = true;
  if (p.ticket || p.preset) {
    auto outcome = co_await await_approval(p, cx);
    if (!outcome) {
      gone = true;
      co_return std::nullopt;
    }
    if (*outcome == approval_outcome::timed_out) co_return expired_text(cx.rt.approvals.timeout());
    allowed = *outcome == approval_outcome::allowed;
  }
  if (cx.token->cancelled()) {
    allowed = false;
    p.record.value.by = decided_by::cancel;
    p.record.value.reason = "declined: " + cx.token->reason();  // the model still sees k_declined
  }
  if (!allowed) co_return std::string(k_declined);
  co_return std::nullopt;
}

/// Writes the call's audit row before it runs; "" when written (or no recorder), else the refusal.
asio::awaitable<std::string> open_record(call_plan& p, loop_context& cx) {
  if (!cx.rt.recorder) co_return std::string();
  call_record rec = p.record.value;
  rec.allowed = true;
  rec.status = run_status::pending;
  rec.reason = "running";
  auto row = co_await cx.rt.recorder->open(std::move(rec));
  if (row) {
    p.record.row = *row;
    co_return std::string();
  }
  spdlog::error("tool call {} ({}) refused: the audit log could not be written: {}", p.call.id, p.call.name,
                row.error().message);
  co_return std::string(k_audit_failed) + " (" + row.error().message +
      "). Tell the user: an operator must make warden's database writable (disk space, permissions, a lock).";
}

void note_run(call_plan& p, loop_context& cx, loop_state& state, bool ran, const std::string& result) {
  p.record.value.allowed = ran;
  p.record.value.status = ran ? run_status::ran : run_status::not_run;
  if (cx.out.gone()) {
    p.record.value.notes.push_back(k_note_client_gone);
    if (!ran && p.record.value.reason.empty()) p.record.value.reason = "the client went away before the call started";
  }
  if (ran) {
    ++cx.res.tools_run;
    state.note_ran(canonical_call_key(p.call.name, *p.args), p.tool->info().name, p.tool->info().traits.once_per_answer,
                   p.record.value.is_error);
  } else if (p.record.value.reason.empty()) {
    p.record.value.reason = result;
  }
}

/// Everything after the gate's answer: the run (or the refusal), the record, the end card.
/// A coroutine of its own so that its locals and temporaries are not part of the frame that
/// waits for a person (a parked stream keeps only settle_call's small frame).
asio::awaitable<std::optional<std::string>> finish_call(call_plan& p, loop_context& cx, loop_state& state,
                                                        std::optional<std::string> refused) {
  std::string result;
  bool ran = false;
  if (refused) {
    result = std::move(*refused);
    if (p.record.value.reason.empty()) p.record.value.reason = result;
    p.record.value.is_error = result != k_declined && p.record.value.by != decided_by::expired;
  } else {
    std::string audit = co_await open_record(p, cx);
    if (!audit.empty()) {
      result = std::move(audit);
      p.record.value.reason = result;
      p.record.value.is_error = true;
    } else {
      if (!p.start_sent) {
        if (!co_await cx.out.send(p.start)) co_return std::nullopt;
        p.start_sent = true;
      }
      result = co_await execute(p, cx, ran);
      note_run(p, cx, state, ran, result);
    }
  }
  if (p.record.value.status == run_status::pending) p.record.value.status = run_status::not_run;  // refused
  p.record.value.finished_unix_ms = unix_ms_now();
  cx.res.calls.push_back(p.record.value);
  if (cx.rt.recorder) co_await cx.rt.recorder->record(p.record.row, p.record.value);
  p.record.written();  // after: if the client left and the await threw, the destructor writes it
  if (cx.out.gone()) co_return std::nullopt;
  // Refused before running: the card still opens so the user sees what was asked.
  if (!p.start_sent) {
    if (!co_await cx.out.send(p.start)) co_return std::nullopt;
    p.start_sent = true;
  }
  loop_event end = end_event(p.call.name, p.call.id, result, p.call.from_text, to_string(p.record.value.by),
                             p.record.value.allowed);
  if (!co_await cx.out.send(std::move(end))) co_return std::nullopt;
  co_return result;
}

}  // namespace

asio::awaitable<std::optional<std::string>> settle_call(call_plan& p, loop_context& cx, loop_state& state) {
  bool gone = false;
  auto refused = co_await gate(p, cx, state, gone);
  if (gone) co_return std::nullopt;
  co_return co_await finish_call(p, cx, state, std::move(refused));
}

}  // namespace warden::agent
