// `warden chat`: start-up, the REPL and its commands (chat_session.h; the runs: chat_run.cpp).
#include "client/chat_session.h"
#include "client/chat.h"

#include <unistd.h>

#include <clocale>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <langinfo.h>

#include "common/ids.h"
#include "common/secret_file.h"

namespace warden::client {

namespace {

constexpr int k_audit_rows = 20;

const char* mode_help(permission_mode m) {
  switch (m) {
    case permission_mode::ask: return "every tool call waits for your answer";
    case permission_mode::auto_: return "only calls the risk classifier rates high wait for your answer";
    case permission_mode::off: return "nothing waits; python and terminal stay in the sandbox";
    case permission_mode::full: return "nothing waits, and python and terminal run OUTSIDE the sandbox, as your user";
  }
  return "";
}

std::string trim_copy(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r')) ++b;
  return s.substr(b);
}

/// LC_CTYPE from the environment, or C.UTF-8 when that is not UTF-8 (libedit then reads UTF-8).
void use_utf8_locale() {
  std::setlocale(LC_CTYPE, "");
  const char* codeset = nl_langinfo(CODESET);
  if (codeset == nullptr || std::string_view(codeset) != "UTF-8") std::setlocale(LC_CTYPE, "C.UTF-8");
}

bool color_wanted() {
  const char* no_color = std::getenv("NO_COLOR");
  return ::isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || *no_color == '\0');
}

}  // namespace

std::string new_session_id() { return "chat-" + ids::random_token(12); }

chat_session::chat_session(const http_api& api, run_settings settings, chat_io io)
    : api_(api), settings_(std::move(settings)), io_(io) {}

void chat_session::note(const std::string& text) {
  std::fputs((text + "\n").c_str(), io_.info);
  std::fflush(io_.info);
}

void chat_session::error(const std::string& text) {
  std::fputs((io_.look.red("warden chat: " + text) + "\n").c_str(), io_.err);
  std::fflush(io_.err);
}

void chat_session::banner() {
  note(io_.look.bold("warden chat") + io_.look.dim(" · " + api_.base_url() + " · model " + settings_.model + " · mode " +
                                                  to_string(settings_.mode) + " · session " + settings_.session_id));
  note(io_.look.dim("/help lists the commands; Ctrl-C stops a run; Ctrl-D quits"));
}

int chat_session::one_shot(const std::string& question) {
  switch (run(question).end) {
    case run_end::done: return 0;
    case run_end::failed: return 1;
    case run_end::cancelled:
    case run_end::quit: return 130;
  }
  return 1;
}

int chat_session::repl() {
  banner();
  const std::string prompt = mark_prompt_escapes(io_.look.bold(io_.look.cyan("you›")) + " ");
  for (;;) {
    const auto in = io_.editor->read_line(prompt, true);
    if (in.st == line_editor::status::eof) {
      note("");
      return 0;
    }
    if (in.st == line_editor::status::interrupted) {
      if (!in.had_text) return 0;
      continue;
    }
    const std::string line = trim_copy(in.text);
    if (line.empty()) continue;
    if (const command_line c = parse_command(line); !c.name.empty()) {
      if (!command(c)) return 0;
      continue;
    }
    const run_outcome r = run(line);
    if (r.end == run_end::quit) return 130;
    if (r.end == run_end::done || (r.end == run_end::cancelled && !r.answer.empty())) {
      history_.push_back({"user", line});
      history_.push_back({"assistant", r.answer});
    }
    note("");
  }
}

bool chat_session::command(const command_line& c) {
  if (c.name == "quit" || c.name == "exit" || c.name == "q") return false;
  if (c.name == "help" || c.name == "?") cmd_help();
  else if (c.name == "mode") cmd_mode(c.args);
  else if (c.name == "tools") cmd_tools(c.args);
  else if (c.name == "rules") cmd_rules(c.args);
  else if (c.name == "audit") cmd_audit(c.args);
  else if (c.name == "new") cmd_new();
  else if (c.name == "mcp") cmd_mcp(c.args);
  else if (c.name == "inbox") {
    if (c.args.empty() || c.args == "all") inbox(c.args.empty() ? settings_.session_id : "");
    else error("/inbox takes nothing (this session) or: all");
  }
  else error("unknown command /" + one_line(c.name, 40) + " (/help lists them)");
  return true;
}

void chat_session::cmd_help() {
  note("  /mode [ask|auto|off|full]   show or set when tool calls wait for you (now: " + std::string(to_string(settings_.mode)) + ")");
  note("  /tools [python,terminal,edit_file,web_search,render_html|all|none]   show or set the tools the model gets (now: " + describe_tools(settings_.tools) + ")");
  note("  /rules                      the remembered decisions of this session (and the always-rules)");
  note("  /rules revoke <id>          forget one");
  note("  /audit [N]                  the last N tool calls of this session (default 20)");
  note("  /new                        a new conversation in a new session");
  note("  /mcp [on|off]               show or set whether the model gets the MCP servers' tools (now: " +
       std::string(settings_.mcp ? "on" : "off") + ")");
  note("  /inbox [all]                answer what waits for a person in this session (all: in every session)");
  note("  /quit                       leave (or Ctrl-D)");
  note("  Ctrl-C stops a running answer; at an empty prompt it quits.");
}

void chat_session::cmd_mode(const std::string& args) {
  if (!args.empty()) {
    const auto m = parse_mode(args);
    if (!m) {
      error("/mode takes ask, auto, off or full");
      return;
    }
    settings_.mode = *m;
  }
  note("mode " + std::string(to_string(settings_.mode)) + ": " + mode_help(settings_.mode));
  if (settings_.mode == permission_mode::full) {
    note(io_.look.red("warning: mode full means no sandbox and no questions: code the model writes runs on this "
                      "machine with your rights"));
  }
}

void chat_session::cmd_tools(const std::string& args) {
  if (!args.empty()) {
    std::string why;
    tool_selection t = parse_tool_selection(args, why);
    if (!why.empty()) {
      error("/tools: " + why);
      return;
    }
    settings_.tools = std::move(t);
  }
  note("tools: " + describe_tools(settings_.tools));
}

void chat_session::cmd_rules(const std::string& args) {
  if (args.rfind("revoke", 0) == 0) {
    const std::string id = trim_copy(args.substr(6));
    if (id.empty()) {
      error("/rules revoke takes a rule id (/rules lists them)");
      return;
    }
    const http_reply r = api_.del("/api/permissions/rules/" + url_encode(id));
    if (r.status == 404) error("no rule " + one_line(id, 64));
    else if (!r.ok()) error("could not revoke the rule: " + r.error_text());
    else note("revoked " + one_line(id, 64));
    return;
  }
  if (!args.empty()) {
    error("/rules takes nothing or: revoke <id>");
    return;
  }
  const http_reply r = api_.get("/api/permissions/rules?session_id=" + url_encode(settings_.session_id));
  auto body = r.ok() ? parse_json(r.body) : std::nullopt;
  const std::string table = body ? rules_table(*body) : "";
  if (table.empty()) {
    error("could not list the rules: " + (r.ok() ? std::string("unexpected answer") : r.error_text()));
    return;
  }
  std::fputs(table.c_str(), io_.info);
  std::fflush(io_.info);
}

void chat_session::cmd_audit(const std::string& args) {
  int want = k_audit_rows;
  if (!args.empty()) {
    want = std::atoi(args.c_str());
    if (want < 1 || want > 1000) {
      error("/audit takes a number of calls, 1 to 1000");
      return;
    }
  }
  json rows = json::array();
  std::string after;
  for (int page = 0; page < 100; ++page) {  // oldest first: read every page, keep the tail
    const http_reply r = api_.get("/api/audit?limit=1000&session_id=" + url_encode(settings_.session_id) + after);
    auto body = r.ok() ? parse_json(r.body) : std::nullopt;
    if (!body || !body->is_object() || !(*body)["data"].is_array()) {
      error("could not read the audit log: " + (r.ok() ? std::string("unexpected answer") : r.error_text()));
      return;
    }
    for (auto& rec : (*body)["data"]) rows.push_back(std::move(rec));
    if ((*body)["has_more"] != true || !(*body)["last_id"].is_number_integer()) break;
    after = "&after=" + std::to_string((*body)["last_id"].get<std::int64_t>());
  }
  if (rows.size() > static_cast<std::size_t>(want)) rows.erase(rows.begin(), rows.end() - want);
  std::fputs(audit_table(rows).c_str(), io_.info);
  std::fflush(io_.info);
}

void chat_session::cmd_mcp(const std::string& args) {
  if (args == "on" || args == "off") settings_.mcp = args == "on";
  else if (!args.empty()) {
    error("/mcp takes on or off");
    return;
  }
  note(std::string("MCP servers' tools: ") + (settings_.mcp ? "on" : "off"));
}

void chat_session::cmd_new() {
  settings_.session_id = new_session_id();
  history_.clear();
  note("new conversation · session " + settings_.session_id);
}


namespace {

/// The model to use: --model, else the server's first one. Also proves the server answers
/// (and takes the key) before anything is typed.
std::optional<std::string> pick_model(const http_api& api, const std::string& wanted) {
  const http_reply r = api.get("/v1/models");
  if (!r.ok()) {
    const std::string why = r.transport_error.empty() ? api.base_url() + "/v1/models answered " + r.error_text() : r.error_text();
    std::fprintf(stderr, "warden chat: %s\n", why.c_str());
    if (r.status == 401) std::fprintf(stderr, "warden chat: pass the server's key with --api-key-file, --api-key, WARDEN_API_KEY_FILE or WARDEN_API_KEY\n");
    return std::nullopt;
  }
  if (!wanted.empty()) return wanted;
  auto id = first_model_id(r.body);
  if (!id) std::fprintf(stderr, "warden chat: the server at %s lists no model (GET /v1/models)\n", api.base_url().c_str());
  return id;
}

/// `--inbox`: the inbox of `session` ("" = every one), answered on the terminal when there is one.
int run_inbox(const http_api& api, const run_settings& settings, const std::string& session) {
  chat_io io;
  io.look.color = color_wanted();
  if (::isatty(STDIN_FILENO) != 1) return chat_session(api, settings, io).inbox(session);
  use_utf8_locale();
  line_editor editor("warden", "");
  io.editor = &editor;
  return chat_session(api, settings, io).inbox(session);
}

}  // namespace

int run_chat(const chat_options& o) {
  run_settings settings;
  const auto mode = parse_mode(o.mode);
  if (!mode) {
    std::fprintf(stderr, "warden chat: --mode must be ask, auto, off or full\n");
    return 2;
  }
  settings.mode = *mode;
  settings.system_prompt = o.system;
  if (!o.tools.empty()) {
    std::string why;
    settings.tools = parse_tool_selection(o.tools, why);
    if (!why.empty()) {
      std::fprintf(stderr, "warden chat: --tools: %s\n", why.c_str());
      return 2;
    }
  }
  if (!o.session.empty() && !valid_session_id(o.session)) {
    std::fprintf(stderr, "warden chat: --session must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'\n");
    return 2;
  }
  settings.session_id = o.session.empty() ? new_session_id() : o.session;
  settings.mcp = o.mcp;
  std::string key = o.api_key;
  std::string key_file = o.api_key_file;
  const char* file_flag = "--api-key-file";
  if (const char* env = std::getenv("WARDEN_API_KEY"); key.empty() && key_file.empty() && env != nullptr) key = env;
  if (const char* env = std::getenv("WARDEN_API_KEY_FILE"); key.empty() && key_file.empty() && env != nullptr) {
    key_file = env;
    file_flag = "WARDEN_API_KEY_FILE";
  }
  if (!key_file.empty()) {
    auto read = read_secret_file(key_file, file_flag);
    if (!read) {
      std::fprintf(stderr, "warden chat: %s\n", read.error().message.c_str());
      return 2;
    }
    key = std::move(*read);
  }
  global_init();
  interrupts::install();
  const http_api api(o.url, key);
  if (o.inbox) return run_inbox(api, settings, o.session);
  const auto model = pick_model(api, o.model);
  if (!model) return 1;
  settings.model = *model;
  chat_io io;
  io.look.color = color_wanted();
  if (::isatty(STDIN_FILENO) != 1) {
    std::string question((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    question = trim_copy(std::move(question));
    if (question.empty()) {
      std::fprintf(stderr, "warden chat: no question on stdin\n");
      return 2;
    }
    io.info = stderr;
    return chat_session(api, settings, io).one_shot(question);
  }
  use_utf8_locale();
  line_editor editor("warden", default_history_path());
  io.editor = &editor;
  return chat_session(api, settings, io).repl();
}

}  // namespace warden::client
