// `warden chat`, the conversation: the REPL and its commands (chat_session.cpp), one run of a
// question against the server with its tool cards, approvals and Ctrl-C (chat_run.cpp), and
// the questions put to the person: cards, MCP servers' forms, the inbox (chat_ask.cpp).
//
// A run: POST /v1/chat/completions (stream, enable_tools, permission_mode, session_id, a fresh
// cancel_id, enabled_tools when /tools set them, and the conversation so far: user questions and
// assistant answers). The answer is printed as it streams (reasoning dimmed); tool cards show
// the tool, its arguments and risk; a card awaiting confirmation is put to the person
// ([y]es / [a]lways for this chat / [A]lways / [n]o → allow / allow_session / allow_always /
// deny, POST /api/inference/tool-confirm) while the reader thread keeps the stream open; with
// nobody to ask (stdin not a terminal) it is denied, with a note on stderr. Live tool output is
// shown as it comes, and tool_end with who decided (decided_by/allowed when the server sends
// them). An MCP server's request for input (elicitation_request) is asked field by field, then
// "Send? [y]es / [d]ecline / [c]ancel" (a URL: shown, never opened, "[y] done / …"), and sent
// as accept+content / decline / cancel (chat_ask.cpp; Ctrl-C there cancels the question, not the
// run; piped, it is declined). `--inbox` / `/inbox` put what waits in GET
// /api/inference/approvals to the person with the same prompts. Ctrl-C: POST /api/inference/cancel {cancel_id}, then the run ends when the server
// closes the stream (at most 5 s later the client stops reading); a second Ctrl-C, while that
// is pending, quits.
//
// Output: the answer goes to `out`; cards, tool output, notes to `info` (both stdout in the
// REPL; `info` is stderr when the question came on stdin, so stdout holds only the answer).
// Errors (unreachable server, HTTP error, in-band error) are printed on stderr.
// Thread-safety: a session belongs to one thread (the terminal's); the stream's reader thread
// only queues events.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "client/chat_client.h"
#include "client/chat_elicit.h"
#include "client/chat_events.h"
#include "client/chat_format.h"
#include "client/chat_input.h"

namespace warden::client {

struct chat_io {
  std::FILE* out = stdout;
  std::FILE* info = stdout;
  std::FILE* err = stderr;
  style look;
  line_editor* editor = nullptr;  ///< null: nobody can be asked (cards are denied)
};

enum class run_end { done, cancelled, failed, quit };

struct run_outcome {
  run_end end = run_end::done;
  std::string answer;  ///< the assistant text shown (for the conversation)
};

class chat_session {
 public:
  chat_session(const http_api& api, run_settings settings, chat_io io);

  /// The interactive loop: prompt, commands, questions; returns the exit code (0 after Ctrl-D,
  /// /quit or Ctrl-C at an empty prompt; 130 after a second Ctrl-C during a run).
  int repl();
  /// One question, no prompt (stdin was not a terminal): 0 done, 1 failed, 130 cancelled.
  int one_shot(const std::string& question);
  /// The approvals inbox (`--inbox`, `/inbox`): lists what waits for a person in `session`
  /// ("" = everything the key may see), then, when there is a terminal, puts each to the
  /// person in turn (chat_ask.cpp). 0 done (or nothing waiting), 1 the list could not be read,
  /// 130 Ctrl-C stopped it (the calls not yet answered keep waiting).
  int inbox(const std::string& session);

 private:
  struct run_state;

  // chat_run.cpp
  run_outcome run(const std::string& question);
  void dispatch(const stream_event& e, run_state& rs);
  void on_text(const text_event& e, run_state& rs);
  void on_tool_start(const tool_start_event& e, run_state& rs);
  void on_tool_output(const tool_output_event& e, run_state& rs);
  void on_tool_end(const tool_end_event& e, run_state& rs);
  void on_status(const tool_status_event& e, run_state& rs);
  void on_elicitation(const elicitation_event& e, run_state& rs);
  void ask_card(const tool_start_event& e, run_state& rs);
  void deny_unattended(const tool_start_event& e);
  void decline_unattended(const elicitation_event& e);
  void on_interrupt(int presses, run_state& rs);
  run_end finish(const stream_closed& closed, run_state& rs);
  void open_info_block(run_state& rs);
  void write_out(const std::string& text, run_state& rs);
  void write_info(const std::string& text);

  // chat_ask.cpp: the questions put to the person (cards, MCP servers' forms, the inbox)
  enum class asked { ok, interrupted, eof };
  void show_card(const tool_start_event& e);
  /// The person's answer to a card; nullopt when Ctrl-C ended the question (end of input: deny).
  std::optional<decision> prompt_card();
  void send_decision(const std::string& approval_id, decision d, const std::string& session_id);
  void show_elicitation(const elicitation_event& e);
  /// Puts a request for input to the person and sends the answer (the form again, or the field
  /// the server named, when the server refuses the content); false when Ctrl-C ended it (then
  /// "cancel" was sent). End of input declines.
  bool answer_elicitation(const elicitation_event& e, const std::string& session_id);
  asked ask_field(const elicitation_field& f, json& content);
  asked ask_send(bool url_mode, elicit_decision& d);
  /// Sends the answer; true when done (sent, or nothing more can be done), false when the
  /// server refused the content (its message shown; `field` = the field it named, or "").
  bool send_elicitation(const elicitation_event& e, elicit_decision d, const json& content,
                        const std::string& session_id, std::string& field);
  bool answer_inbox_item(const inbox_item& item);  ///< false: Ctrl-C

  // chat_session.cpp
  bool command(const command_line& c);  ///< false: quit
  void cmd_help();
  void cmd_mode(const std::string& args);
  void cmd_tools(const std::string& args);
  void cmd_rules(const std::string& args);
  void cmd_audit(const std::string& args);
  void cmd_new();
  void cmd_mcp(const std::string& args);
  void note(const std::string& text);   ///< a line on `info`
  void error(const std::string& text);  ///< a line on `err`, red
  void banner();

  const http_api& api_;
  run_settings settings_;
  chat_io io_;
  std::vector<chat_message> history_;
};

/// A fresh session id: "chat-" + 12 random characters of [A-Za-z0-9_-].
std::string new_session_id();

}  // namespace warden::client
