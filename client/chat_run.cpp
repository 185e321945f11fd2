// One run of `warden chat` (chat_session.h): the request, the event loop, cards, Ctrl-C.
#include <set>
#include <variant>

#include "client/chat_session.h"
#include "common/ids.h"

namespace warden::client {

namespace {

constexpr auto k_poll = std::chrono::milliseconds(50);
constexpr auto k_cancel_grace = std::chrono::seconds(5);
constexpr std::size_t k_result_lines = 6;

bool looks_failed(const std::string& result) {
  return result.rfind("Exit code", 0) == 0 || result.rfind("Error", 0) == 0 || result.rfind("Execution ", 0) == 0;
}

}  // namespace

struct chat_session::run_state {
  std::string cancel_id;
  std::string answer;
  bool out_at_line_start = true;  ///< the last byte written to `out` was a newline (or nothing yet)
  bool in_reasoning = false;
  bool break_before_text = false;  ///< tool activity came after the answer's open line
  bool cancel_sent = false;
  bool quit = false;
  std::chrono::steady_clock::time_point cancel_deadline{};
  std::set<std::string> output_seen;  ///< calls whose output was shown live
  std::string output_call;            ///< the call whose output lines are open
  bool output_at_line_start = true;
  std::string last_status;
  std::string error;   ///< an in-band error
  std::string finish;  ///< the finish reason
};

run_outcome chat_session::run(const std::string& question) {
  std::vector<chat_message> messages = history_;
  messages.push_back({"user", question});
  run_state rs;
  rs.cancel_id = "chat-run-" + ids::random_token(16);
  event_stream stream(api_, "/v1/chat/completions", chat_request_body(settings_, messages, rs.cancel_id));
  for (;;) {
    if (rs.cancel_sent && std::chrono::steady_clock::now() > rs.cancel_deadline) stream.abort();
    auto item = stream.next(k_poll);
    // a press is handled before the next event is shown, so nothing prints after the ^C
    if (const int presses = interrupts::take(); presses > 0) on_interrupt(presses, rs);
    if (rs.quit) {
      stream.abort();
      return {run_end::quit, rs.answer};
    }
    if (!item) continue;
    if (auto* closed = std::get_if<stream_closed>(&*item)) return {finish(*closed, rs), rs.answer};
    dispatch(std::get<stream_event>(*item), rs);
  }
}

void chat_session::dispatch(const stream_event& e, run_state& rs) {
  std::visit(
      [&](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, text_event>) on_text(ev, rs);
        else if constexpr (std::is_same_v<T, tool_start_event>) on_tool_start(ev, rs);
        else if constexpr (std::is_same_v<T, tool_output_event>) on_tool_output(ev, rs);
        else if constexpr (std::is_same_v<T, tool_end_event>) on_tool_end(ev, rs);
        else if constexpr (std::is_same_v<T, tool_status_event>) on_status(ev, rs);
        else if constexpr (std::is_same_v<T, elicitation_event>) on_elicitation(ev, rs);
        else if constexpr (std::is_same_v<T, finish_event>) rs.finish = ev.reason;
        else if constexpr (std::is_same_v<T, error_event>) rs.error = ev.message;
        // tool_args (fragments of a provisional card's arguments) and done need nothing shown
      },
      e);
}

void chat_session::write_out(const std::string& text, run_state& rs) {
  if (text.empty()) return;
  std::fwrite(text.data(), 1, text.size(), io_.out);
  std::fflush(io_.out);
  rs.out_at_line_start = text.back() == '\n';
}

void chat_session::write_info(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), io_.info);
  std::fflush(io_.info);
}

/// Before a card or a note: the answer's open line is ended when both go to the same place.
void chat_session::open_info_block(run_state& rs) {
  if (rs.in_reasoning) rs.in_reasoning = false;
  if (io_.info == io_.out && !rs.out_at_line_start) write_out("\n", rs);
  rs.break_before_text = !rs.out_at_line_start;
  rs.output_call.clear();
}

void chat_session::on_text(const text_event& e, run_state& rs) {
  if (rs.cancel_sent) return;  // what was already on its way when the person pressed Ctrl-C
  const std::string text = terminal_text(e.text);
  if (e.reasoning) {
    rs.in_reasoning = true;
    if (io_.info != io_.out) {
      write_info(io_.look.dim(text));
      return;
    }
    write_out(io_.look.dim(text), rs);
    rs.out_at_line_start = !text.empty() && text.back() == '\n';  // the colour codes end the bytes, not the line
    return;
  }
  if (rs.in_reasoning) {
    rs.in_reasoning = false;
    if (io_.info == io_.out && !rs.out_at_line_start) write_out("\n", rs);
  }
  if (rs.break_before_text && !rs.out_at_line_start) write_out("\n", rs);
  rs.break_before_text = false;
  rs.output_call.clear();
  rs.answer += e.text;
  write_out(text, rs);
}

void chat_session::on_status(const tool_status_event& e, run_state& rs) {
  // "Waiting for approval: X" / "Waiting for your input: S" come right before the card or the
  // question that asks; those say it better
  if (e.text.empty() || e.text == rs.last_status || e.text.rfind("Waiting for approval", 0) == 0 ||
      e.text.rfind("Waiting for your input", 0) == 0) {
    return;
  }
  rs.last_status = e.text;
  open_info_block(rs);
  write_info(io_.look.dim("  … " + one_line(e.text, 100)) + "\n");
}

void chat_session::on_tool_start(const tool_start_event& e, run_state& rs) {
  open_info_block(rs);
  if (e.provisional) {
    write_info(io_.look.dim("» " + one_line(e.tool.empty() ? "tool" : e.tool, 40) + " (preparing…)") + "\n");
    return;
  }
  show_card(e);
  rs.last_status.clear();
  if (!e.awaiting) return;
  if (rs.cancel_sent) return;  // the server denies it: the run is being cancelled
  if (io_.editor == nullptr) {
    deny_unattended(e);
    return;
  }
  ask_card(e, rs);
}

void chat_session::ask_card(const tool_start_event& e, run_state& rs) {
  const auto d = prompt_card();
  if (!d) {
    on_interrupt(1, rs);
    return;
  }
  send_decision(e.approval_id, *d, settings_.session_id);
}

void chat_session::deny_unattended(const tool_start_event& e) {
  std::fprintf(io_.err, "warden chat: denied the %s call: stdin is not a terminal, so nobody can approve it "
                        "(--mode off or full runs tools without asking)\n",
               one_line(e.tool, 40).c_str());
  std::fflush(io_.err);
  send_decision(e.approval_id, decision::deny, settings_.session_id);
}

void chat_session::on_elicitation(const elicitation_event& e, run_state& rs) {
  open_info_block(rs);
  show_elicitation(e);  // (last_status stays: the call's "Calling …" line is not shown again after the answer)
  if (rs.cancel_sent || e.approval_id.empty()) return;  // being cancelled; or nothing to answer with
  if (io_.editor == nullptr) {
    decline_unattended(e);
    return;
  }
  // Ctrl-C here cancels the question (sent as "cancel"), not the run: the call goes on with it
  answer_elicitation(e, settings_.session_id);
}

void chat_session::decline_unattended(const elicitation_event& e) {
  std::fprintf(io_.err, "warden chat: declined %s's request for input: stdin is not a terminal, so nobody can "
                        "answer it\n",
               one_line(e.server.empty() ? e.tool : e.server, 40).c_str());
  std::fflush(io_.err);
  std::string field;
  send_elicitation(e, elicit_decision::decline, json::object(), settings_.session_id, field);
}

void chat_session::on_tool_output(const tool_output_event& e, run_state& rs) {
  if (rs.output_call != e.call_id) {
    open_info_block(rs);
    rs.output_call = e.call_id;
    rs.output_at_line_start = true;
  }
  rs.output_seen.insert(e.call_id);
  std::string text;
  for (char c : terminal_text(e.text)) {
    if (rs.output_at_line_start) text += io_.look.dim("  │ ");
    text += c;
    rs.output_at_line_start = c == '\n';
  }
  write_info(text);
}

void chat_session::on_tool_end(const tool_end_event& e, run_state& rs) {
  const bool shown_live = rs.output_seen.count(e.call_id) > 0;
  if (rs.output_call == e.call_id && !rs.output_at_line_start) write_info("\n");
  open_info_block(rs);
  const bool refused = e.allowed && !*e.allowed;
  const bool failed = !refused && looks_failed(e.result);
  const std::string name = one_line(e.tool.empty() ? "tool" : e.tool, 40);
  std::string line = refused ? io_.look.red("  ✗ " + name + " not run")
                     : failed ? io_.look.yellow("  ! " + name + " finished with an error")
                              : io_.look.green("  ✓ " + name + " finished");
  std::string who = decided_by_text(e);
  // piped: the "user" who said no was this client, on nobody's behalf
  if (io_.editor == nullptr && e.decided_by == "user" && !e.allowed.value_or(true)) who = "denied: nobody could be asked";
  if (!who.empty()) line += io_.look.dim(" · " + who);
  line += "\n";
  if (!shown_live && !e.result.empty()) line += indent(brief_result(e.result, k_result_lines), "  │ ") + "\n";
  write_info(line);
  rs.last_status.clear();
}

void chat_session::on_interrupt(int presses, run_state& rs) {
  if (!rs.cancel_sent) {
    rs.cancel_sent = true;
    rs.cancel_deadline = std::chrono::steady_clock::now() + k_cancel_grace;
    --presses;
    open_info_block(rs);
    const http_reply r = api_.post_json("/api/inference/cancel", json{{"cancel_id", rs.cancel_id}});
    if (r.ok()) {
      auto body = parse_json(r.body);
      const bool counted = body && body->is_object() && (*body)["cancelled"].is_number_integer();
      const long n = counted ? (*body)["cancelled"].get<long>() : 0L;
      if (n == 0) {
        // a plain answer (no tool loop) has no cancel handle on the server: closing the stream
        // is what stops it (warden aborts the upstream request when its client goes)
        write_info(io_.look.yellow("stopping the answer") + io_.look.dim(" (closing the stream)") + "\n");
        rs.cancel_deadline = std::chrono::steady_clock::now();
      } else {
        write_info(io_.look.yellow("cancelling the run") +
                   io_.look.dim(" (server stopped " + std::to_string(n) + (n == 1 ? " run" : " runs") +
                                "; Ctrl-C again quits)") + "\n");
      }
    } else {
      write_info(io_.look.yellow("cancelling the run") + io_.look.dim(" (cancel failed: " + r.error_text() + ")") + "\n");
      rs.cancel_deadline = std::chrono::steady_clock::now();  // stop reading at once
    }
  }
  if (presses > 0) rs.quit = true;
}

run_end chat_session::finish(const stream_closed& closed, run_state& rs) {
  if (!rs.out_at_line_start) write_out("\n", rs);
  const http_reply& r = closed.reply;
  if (rs.cancel_sent) {
    write_info(io_.look.yellow("run cancelled") + "\n");
    return run_end::cancelled;
  }
  if (!r.ok()) {
    error(r.error_text());
    return run_end::failed;
  }
  if (!rs.error.empty()) {
    error("the server reported an error: " + one_line(rs.error, 300));
    return run_end::failed;
  }
  if (!closed.saw_done) {
    error("the answer was cut off: the server closed the stream before its end");
    return run_end::failed;
  }
  if (rs.finish == "length") write_info(io_.look.dim("(the answer stopped at the token limit)") + "\n");
  return run_end::done;
}

}  // namespace warden::client
