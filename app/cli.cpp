#include "app/cli.h"

#include <string_view>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "app/commands.h"
#include "client/kb_command.h"
#include "client/model_command.h"
#include "client/pull_command.h"
#include "client/mcp_command.h"
#include "common/config.h"

namespace warden::app {

namespace {

constexpr const char* k_version = "warden 0.1.0";
/// The one option that may be given more than once.
constexpr std::string_view k_repeatable = "upstream";

void add_config_options(CLI::App& cmd, std::map<std::string, std::string>& raw) {
  for (const auto& spec : config_table()) {
    std::string help = spec.help;
    help += " [env ";
    help += spec.env;
    const std::string def = default_text(spec);
    if (!def.empty()) help += ", default " + def + (*spec.unit ? std::string(" ") + spec.unit : "");
    help += "]";
    const char* type_name = "TEXT";
    switch (spec.type) {
      case option_type::integer: type_name = "INT"; break;
      case option_type::path: type_name = "PATH"; break;
      case option_type::url: type_name = "URL"; break;
      case option_type::level: type_name = "LEVEL"; break;
      case option_type::list: type_name = "LIST"; break;
      case option_type::permission: type_name = "MODE"; break;
      case option_type::flag:
        cmd.add_flag(spec.flag)->description(help);  // (a non-const string would be taken as the result)
        continue;
      case option_type::string: break;
    }
    CLI::Option* opt = cmd.add_option(spec.flag, raw[spec.key], help)->type_name(type_name);
    // --upstream may be given several times (the engines of a pool): joined by '\n' here,
    // split again by build_config().
    if (std::string_view(spec.key) == k_repeatable) opt->multi_option_policy(CLI::MultiOptionPolicy::Join);
  }
}

/// Applies a repeated --upstream: the first value as the option, the later ones (each checked as
/// the option is) to cfg.more_upstreams. False (printed) on a bad value.
bool apply_repeated(const option_spec& spec, const std::string& joined, config& cfg) {
  std::size_t at = 0;
  for (bool first = true; at <= joined.size(); first = false) {
    const std::size_t nl = std::min(joined.find('\n', at), joined.size());
    const std::string one = joined.substr(at, nl - at);
    at = nl + 1;
    config scratch;
    if (auto r = apply_option(first ? cfg : scratch, spec, one); !r) {
      std::fprintf(stderr, "warden: %s\n", r.error().message.c_str());
      return false;
    }
    if (!first) cfg.more_upstreams.push_back(scratch.upstream_url);
  }
  return true;
}

// Flag, then environment variable; returns 2 (and prints) on a bad value.
int build_config(CLI::App& cmd, std::map<std::string, std::string>& raw, config& cfg) {
  for (const auto& spec : config_table()) {
    std::string value;
    bool given = false;
    if (cmd.get_option(spec.flag)->count() > 0) {
      value = spec.type == option_type::flag ? "true" : raw[spec.key];
      given = true;
    } else if (const char* env = std::getenv(spec.env); env != nullptr) {
      value = env;
      given = true;
    }
    if (!given) continue;
    if (std::string_view(spec.key) == k_repeatable && value.find('\n') != std::string::npos) {
      if (!apply_repeated(spec, value, cfg)) return 2;
      continue;
    }
    if (auto r = apply_option(cfg, spec, value); !r) {
      std::fprintf(stderr, "warden: %s\n", r.error().message.c_str());
      return 2;
    }
  }
  const char* home = std::getenv("HOME");
  if (auto r = finalize(cfg, home ? home : ""); !r) {
    std::fprintf(stderr, "warden: %s\n", r.error().message.c_str());
    return 2;
  }
  return 0;
}

constexpr std::string_view k_secret_flags[] = {"--api-key", "--upstream-api-key", "--metrics-key"};
constexpr std::string_view k_secret_shown = "****";

/// argv[i]'s secret value (the argument after `--api-key`, or what follows `--api-key=`), or
/// null when argv[i] is not one.
const char* secret_value(char** argv, int i) {
  const std::string_view prev = i > 1 ? argv[i - 1] : "";
  const std::string_view a = argv[i];
  for (auto flag : k_secret_flags) {
    if (prev == flag) return argv[i];
    if (a.size() > flag.size() && a.substr(0, flag.size()) == flag && a[flag.size()] == '=') {
      return argv[i] + flag.size() + 1;
    }
  }
  return nullptr;
}

/// The arguments joined by spaces, each secret value shown as k_secret_shown; "" when there is
/// no secret (then argv is left as it is).
std::string masked_command_line(int argc, char** argv) {
  std::string out;
  bool secret = false;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) out += ' ';
    const char* value = i > 0 ? secret_value(argv, i) : nullptr;
    if (!value) {
      out += argv[i];
      continue;
    }
    secret = true;
    out.append(argv[i], static_cast<std::size_t>(value - argv[i]));
    out += k_secret_shown;
  }
  return secret ? out : "";
}

/// Hides the values of secret flags once they are parsed: /proc/<pid>/cmdline is readable by
/// every process of the machine (non-dumpable or not), tools in bypass mode included. Neither the
/// value nor its length may show, so the whole argv area (the strings are contiguous there) is
/// rewritten as one string, masked_command_line(), followed by NULs and a last byte that is not a
/// NUL: Linux then shows /proc/<pid>/cmdline as that string up to its first NUL (the rule
/// setproctitle() relies on), the same whatever the secret's length. A secret shorter than 5
/// bytes leaves too little room: the shown line is then cut short at its end.
void hide_secret_arguments(int argc, char** argv) {
  const std::string shown = masked_command_line(argc, argv);
  if (shown.empty()) return;
  bool contiguous = true;
  for (int i = 0; i + 1 < argc; ++i) contiguous = contiguous && argv[i] + std::strlen(argv[i]) + 1 == argv[i + 1];
  char* const begin = argv[0];
  const std::size_t area = static_cast<std::size_t>(argv[argc - 1] + std::strlen(argv[argc - 1]) + 1 - begin);
  if (!contiguous || area < 3) {  // not the kernel's layout: mask each value in place
    for (int i = 1; i < argc; ++i) {
      if (const char* v = secret_value(argv, i)) std::memset(argv[i] + (v - argv[i]), '*', std::strlen(v));
    }
    return;
  }
  const std::size_t n = std::min(shown.size(), area - 2);
  std::memcpy(begin, shown.data(), n);
  std::memset(begin + n, 0, area - n);
  begin[area - 1] = ' ';
}

/// `warden audit` reads only the home folder: --home, else WARDEN_HOME, else the default.
int build_audit_config(const std::string& home_flag, config& cfg) {
  const char* env = std::getenv("WARDEN_HOME");
  const std::string home = !home_flag.empty() ? home_flag : env != nullptr ? env : "";
  for (const auto& spec : config_table()) {
    if (home.empty() || std::string_view(spec.key) != "home") continue;
    if (auto r = apply_option(cfg, spec, home); !r) {
      std::fprintf(stderr, "warden: %s\n", r.error().message.c_str());
      return 2;
    }
  }
  const char* user_home = std::getenv("HOME");
  if (auto r = finalize(cfg, user_home ? user_home : ""); !r) {
    std::fprintf(stderr, "warden: %s\n", r.error().message.c_str());
    return 2;
  }
  return 0;
}

CLI::App* add_audit_command(CLI::App& app, audit_options& o, std::string& home) {
  CLI::App* audit = app.add_subcommand("audit", "Show the last tool calls from the audit log (<home>/warden.db)");
  audit->add_option("--home", home, "warden's cache and state folder [env WARDEN_HOME]")->type_name("PATH");
  audit->add_option("--session", o.session, "Only this session's calls");
  audit->add_option("--owner", o.owner, "Only the calls of this API key name (--api-keys-file); \"\" = the single user's");
  audit->add_option("--since", o.since, "Only calls started at or after this time: Unix ms or RFC 3339 (2026-12-01T10:00:00Z)");
  audit->add_option("--limit", o.limit, "How many calls, the last ones [default 50]")->check(CLI::Range(1, 1000000));
  audit->add_flag("--json", o.json, "One JSON object per line, with the keys of GET /api/audit");
  CLI::App* verify = audit->add_subcommand("verify", "Check the audit log's hash chain; name the first broken row (exit 1)");
  verify->add_option("--home", home, "warden's cache and state folder [env WARDEN_HOME]")->type_name("PATH");
  return audit;
}

CLI::App* add_chat_command(CLI::App& app, chat_options& o) {
  CLI::App* chat = app.add_subcommand("chat", "Talk to a running warden in the terminal; tool calls ask for your approval "
                                               "(reads one question from stdin when it is not a terminal)");
  chat->add_option("--url", o.url, "the server [default http://127.0.0.1:8888]")->type_name("URL");
  chat->add_option("--model", o.model, "model id [default: the server's first]");
  chat->add_option("--mode", o.mode, "when tool calls wait for you: ask (every call), auto (high risk only), off "
                                     "(never), full (never, and no sandbox) [default ask]")
      ->type_name("MODE")
      ->check(CLI::IsMember({"ask", "auto", "off", "full"}));
  chat->add_option("--session", o.session, "session id, [A-Za-z0-9_-]{1,64} [default: a new chat-<random>]");
  CLI::Option* key = chat->add_option("--api-key", o.api_key, "the server's API key [env WARDEN_API_KEY]");
  chat->add_option("--api-key-file", o.api_key_file,
                   "file holding the server's API key on one line, instead of --api-key (the key then stays off "
                   "the command line) [env WARDEN_API_KEY_FILE]")
      ->type_name("PATH")
      ->excludes(key);
  chat->add_option("--tools", o.tools, "tools the model may use: all, none (a plain chat) or a list such as "
                   "python,terminal [default all]")->type_name("LIST");
  chat->add_option("--system", o.system, "the system message sent first in every run (\"\" for none) "
                   "[default \"You are a helpful assistant.\"]")->type_name("TEXT");
  chat->add_flag("--mcp", o.mcp, "offer the model the tools of warden's MCP servers too (mcp_enabled: true; "
                 "/mcp on|off in the chat)");
  chat->add_flag("--inbox", o.inbox, "answer what waits for a person (tool calls, MCP servers' questions) in --session, "
                 "or in every session you may see, then exit");
  return chat;
}

/// --url, --api-key and --api-key-file (the two key flags exclusive) of a client command.
void add_server_options(CLI::App* cmd, std::string& url, std::string& api_key, std::string& api_key_file) {
  cmd->add_option("--url", url, "the server [default http://127.0.0.1:8888]")->type_name("URL");
  CLI::Option* key = cmd->add_option("--api-key", api_key, "the server's API key [env WARDEN_API_KEY]");
  cmd->add_option("--api-key-file", api_key_file, "file holding the server's API key [env WARDEN_API_KEY_FILE]")
      ->type_name("PATH")
      ->excludes(key);
}

CLI::App* add_kb_command(CLI::App& app, client::kb_options& o) {
  CLI::App* kb = app.add_subcommand("kb", "Knowledge bases of a running warden: list [KB], create NAME, add KB FILE... "
                                          "[--fetch URL], rm KB [DOC], search KB QUERY");
  kb->add_option("action", o.action, "list, create, add, rm or search")
      ->required()
      ->check(CLI::IsMember({"list", "create", "add", "rm", "search"}));
  kb->add_option("args", o.args, "the action's knowledge base, files, document or query");
  kb->add_option("--fetch", o.fetch_url, "add: a page for the server to fetch (through its web guard)")->type_name("URL");
  add_server_options(kb, o.url, o.api_key, o.api_key_file);
  return kb;
}

/// `warden models|ps|load|unload|rm`: one subcommand each, sharing `o` (client/model_command.h).
std::vector<CLI::App*> add_model_commands(CLI::App& app, client::model_options& o) {
  struct spec {
    const char* name;
    const char* what;
    bool model;
  };
  static const spec specs[] = {
      {"models", "The models a running warden can load (its --models-dir and start-up model)", false},
      {"ps", "The model a running warden has loaded: state, context per slot, slots busy", false},
      {"load", "Load (swap to) a model in a running warden, printing its progress: load MODEL [--ctx N]", true},
      {"unload", "Stop the model of a running warden (requests get 503 until a load)", false},
      {"rm", "Delete a model's file from a running warden's library (not while loaded): rm MODEL", true}};
  std::vector<CLI::App*> out;
  for (const auto& s : specs) {
    CLI::App* cmd = app.add_subcommand(s.name, s.what);
    if (s.model) cmd->add_option("model", o.model, "the model's id (warden models lists them)")->required();
    if (std::string_view(s.name) == "load") {
      cmd->add_option("--ctx", o.ctx, "context tokens [default: the server's --ctx]")->check(CLI::Range(256, 16777216));
      cmd->add_option("--parallel", o.parallel, "slots [default: the server's --parallel]")->check(CLI::Range(1, 64));
    }
    add_server_options(cmd, o.url, o.api_key, o.api_key_file);
    out.push_back(cmd);
  }
  return out;
}

CLI::App* add_pull_command(CLI::App& app, client::pull_options& o) {
  CLI::App* pull = app.add_subcommand("pull", "Download a GGUF into a running warden's model library, with a progress "
                                              "bar: pull URL | owner/repo:file.gguf");
  pull->add_option("source", o.source, "an http(s) URL of a .gguf file, or owner/repo[@revision]:file.gguf on the "
                                       "Hugging Face hub")->required();
  pull->add_option("--name", o.name, "the library file name (NAME.gguf) [default: the source's file name]");
  pull->add_option("--sha256", o.sha256, "the expected SHA-256 (64 hex digits) [default: the hub's, when it gives one]");
  add_server_options(pull, o.url, o.api_key, o.api_key_file);
  return pull;
}

/// `warden mcp add ID -- COMMAND ARGS...`: the words after the first `--` (CLI11 2.1 does not
/// hand them to a subcommand's positionals); argc is cut before the `--`. Other commands: none.
std::vector<std::string> take_mcp_command(int& argc, char** argv) {
  if (argc < 3 || std::string_view(argv[1]) != "mcp") return {};
  for (int i = 2; i < argc; ++i) {
    if (std::string_view(argv[i]) != "--") continue;
    std::vector<std::string> tail(argv + i + 1, argv + argc);
    argc = i;
    return tail;
  }
  return {};
}

CLI::App* add_mcp_command(CLI::App& app, client::mcp_options& o) {
  CLI::App* mcp = app.add_subcommand("mcp", "MCP servers of a running warden: add ID -- COMMAND ARGS... | add ID --url "
                                            "URL, list, rm ID, test ID, import FILE");
  mcp->add_option("action", o.action, "add, list, rm, test or import")
      ->required()
      ->check(CLI::IsMember({"add", "list", "rm", "test", "import"}));
  mcp->add_option("args", o.args, "the action's server id, command and arguments (after --), or file");
  mcp->add_option("--url", o.url, "add: the MCP server's Streamable HTTP endpoint (an http server)")->type_name("URL");
  mcp->add_option("--header", o.headers, "add --url: a header 'Name: value' (secrets as ${env:NAME}); repeatable")
      ->type_name("HEADER")
      ->allow_extra_args(false);
  mcp->add_option("--bearer-token-env", o.bearer_token_env,
                  "add --url: the variable of warden's environment sent as Authorization: Bearer")
      ->type_name("VAR");
  mcp->add_flag("--trusted", o.trusted, "add: honour the server's tool annotations");
  mcp->add_flag("--network", o.network, "add: give a jailed stdio server the network");
  mcp->add_flag("--no-sandbox", o.no_sandbox, "add: run the stdio server outside the jail (needs --max-permission full)");
  mcp->add_option("--ro", o.read_only_paths, "add: a host path bound read-only into the jail; repeatable")
      ->type_name("PATH")
      ->allow_extra_args(false);
  mcp->add_option("--env", o.env, "add: NAME=VALUE for the server (secrets as ${env:NAME}); repeatable")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  mcp->add_flag("--replace", o.replace, "import: replace servers with the same ids");
  mcp->add_option("--server", o.server, "warden's address [default http://127.0.0.1:8888]")->type_name("URL");
  CLI::Option* key = mcp->add_option("--api-key", o.api_key, "the server's API key [env WARDEN_API_KEY]");
  mcp->add_option("--api-key-file", o.api_key_file, "file holding the server's API key [env WARDEN_API_KEY_FILE]")
      ->type_name("PATH")
      ->excludes(key);
  return mcp;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"warden: a local LLM server with OpenAI-compatible APIs"};
  app.set_version_flag("--version", k_version);
  app.require_subcommand(1);
  std::map<std::string, std::string> serve_raw, doctor_raw;
  CLI::App* serve = app.add_subcommand("serve", "Serve a GGUF model (or an existing upstream) over HTTP");
  add_config_options(*serve, serve_raw);
  bool serve_markdown = false;  // hidden: the docs' flag table, printed from the same rows as --help
  serve->add_flag("--help-markdown", serve_markdown, "Print the options as a Markdown table and exit")->group("");
  CLI::App* doctor = app.add_subcommand("doctor", "Check this machine: llama-server, model, ports");
  add_config_options(*doctor, doctor_raw);
  audit_options audit_opts;
  std::string audit_home;
  CLI::App* audit = add_audit_command(app, audit_opts, audit_home);
  chat_options chat_opts;
  CLI::App* chat = add_chat_command(app, chat_opts);
  client::kb_options kb_opts;
  CLI::App* kb = add_kb_command(app, kb_opts);
  client::mcp_options mcp_opts;
  CLI::App* mcp = add_mcp_command(app, mcp_opts);
  client::pull_options pull_opts;
  CLI::App* pull = add_pull_command(app, pull_opts);
  client::model_options model_opts;
  const std::vector<CLI::App*> model_cmds = add_model_commands(app, model_opts);
  const std::vector<std::string> mcp_command = take_mcp_command(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  hide_secret_arguments(argc, argv);
  if (chat->parsed()) return run_chat(chat_opts);
  if (kb->parsed()) return client::run_kb(kb_opts);
  if (pull->parsed()) return client::run_pull(pull_opts);
  for (CLI::App* cmd : model_cmds) {
    if (!cmd->parsed()) continue;
    model_opts.action = cmd->get_name();
    return client::run_model_command(model_opts);
  }
  if (mcp->parsed()) {
    mcp_opts.args.insert(mcp_opts.args.end(), mcp_command.begin(), mcp_command.end());
    return client::run_mcp(mcp_opts);
  }
  config cfg;
  if (audit->parsed()) {
    if (int rc = build_audit_config(audit_home, cfg); rc != 0) return rc;
    if (audit->get_subcommand("verify")->parsed()) return run_audit_verify(cfg);
    return run_audit(cfg, audit_opts);
  }
  if (serve->parsed() && serve_markdown) {
    std::fputs(markdown_table().c_str(), stdout);
    return 0;
  }
  if (serve->parsed()) {
    if (int rc = build_config(*serve, serve_raw, cfg); rc != 0) return rc;
    return run_serve(cfg);
  }
  if (int rc = build_config(*doctor, doctor_raw, cfg); rc != 0) return rc;
  return run_doctor(cfg);
}

}  // namespace warden::app
