// `warden chat`, what it prints: tool cards, risk, results, who decided, the rules and audit
// tables. Pure functions of their inputs (no I/O), tested in client/chat_format_test.cpp.
//
// Everything that came from the model, a tool or the server passes through terminal_text() or
// one_line() before it reaches the terminal, so a string can never drive the terminal (escape
// sequences, cursor moves, title or clipboard writes): control characters are shown as `\x1b`
// style escapes instead.
// Thread-safety: pure functions and plain values.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "client/chat_events.h"
#include "common/json_util.h"

namespace warden::client {

/// ANSI colours, or none (`color` false: every function returns its text unchanged).
struct style {
  bool color = false;
  std::string dim(std::string_view s) const { return wrap("2", s); }
  std::string bold(std::string_view s) const { return wrap("1", s); }
  std::string red(std::string_view s) const { return wrap("31", s); }
  std::string green(std::string_view s) const { return wrap("32", s); }
  std::string yellow(std::string_view s) const { return wrap("33", s); }
  std::string cyan(std::string_view s) const { return wrap("36", s); }

 private:
  std::string wrap(const char* code, std::string_view s) const {
    if (!color) return std::string(s);
    return std::string("\x1b[") + code + "m" + std::string(s) + "\x1b[0m";
  }
};

/// Multi-line text made safe for the terminal: valid UTF-8 (bad bytes → U+FFFD); newlines and
/// tabs kept; "\r\n" → "\n" and a lone "\r" → "\n"; every other control character (C0, DEL,
/// C1) shown as an escape (`\x1b`, `\u009b`).
std::string terminal_text(std::string_view text);

/// One line: like terminal_text() but newlines and tabs are escapes too (`\n`, `\t`), and at
/// most `max_chars` code points of the text are kept, then "…".
std::string one_line(std::string_view text, std::size_t max_chars);

/// Every line of `text` prefixed with `prefix` (a trailing newline does not start a new line).
std::string indent(std::string_view text, std::string_view prefix);

/// The arguments of a call for the person deciding, over several lines (no trailing newline):
///   python {code}        → the code
///   terminal {command}   → "$ " + the command
///   render_html {code, title?} → "title: T" and "N bytes of HTML"
///   anything else        → one "key: value" line per key (values as compact JSON unless strings)
/// At most `max_lines` lines, then "… N more lines". Made safe by terminal_text(); runs of
/// blank lines are squeezed into one "⋯ N blank lines" line (squeeze_blank_lines), so padding
/// cannot hide the end of a command.
std::string format_arguments(std::string_view tool, const json& arguments, std::size_t max_lines);
std::string squeeze_blank_lines(std::string_view text);

/// "not known to be safe: runs rm (destructive); writes outside the workspace" for level high (the
/// web UI's card badge says the same), "risk: low"; "" when the level is empty.
std::string format_risk(const risk_info& risk);

/// The first `max_lines` lines of a tool result (made safe), then "… N more lines"; "" for an
/// empty result.
std::string brief_result(std::string_view result, std::size_t max_lines);

/// Who let the call run or stopped it, from tool_end's decided_by/allowed: "you allowed it",
/// "you declined it", "allowed by a remembered rule", "ran without asking (auto: low risk)",
/// "ran without asking (policy)", "ran outside the sandbox (full)", "expired: nobody answered",
/// "not run: the client went away", "cancelled", "refused by policy", …; "" when the server did
/// not say (older servers send neither field).
std::string decided_by_text(const tool_end_event& end);

/// `prompt` with every run of ANSI escape sequences (ESC [ … letter) enclosed in \1 markers,
/// the form libedit's EL_PROMPT_ESC needs to leave them out of the prompt's width. libedit
/// draws each marked run together with the character after it, so a run must be followed by a
/// visible character (end prompts with a space).
std::string mark_prompt_escapes(std::string_view prompt);

/// The prompt shown under a card awaiting an answer.
inline constexpr std::string_view k_answer_choices = "[y]es / [a]lways for this chat / [A]lways / [n]o";

/// GET /api/permissions/rules body → one line per rule: "rule_… session python  print(1)  never
/// expires"; "no remembered rules" when the list is empty; nullopt-like "" on a malformed body.
std::string rules_table(const json& body);

/// GET /api/audit records (oldest first) → a header line and one line per record: local time,
/// tool, ran / not run, decided_by (and rule id), risk, exit status, duration, arguments.
/// "no tool calls in this session yet" when empty.
std::string audit_table(const json& records);

}  // namespace warden::client
