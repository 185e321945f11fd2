#include "agent/permission_rules.h"

#include <algorithm>
#include <vector>

#include "risk/launchers.h"
#include "risk/shell_words.h"

namespace warden::agent {

namespace {

using risk::parse_shell;
using risk::shell_command;
using risk::shell_parse;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

error invalid(std::string message, std::string param, std::string code = "invalid_rule") {
  return make_error(errc::invalid_request, std::move(message), std::move(param), std::move(code));
}

bool shared_session(std::string_view session_id) { return session_id.empty() || session_id == k_shared_session; }

/// Whether a program word with a '/' names a file under /usr, /bin, /sbin or /opt, without "."
/// or ".." components (the jail mounts those read-only; /workspace, /tmp and the rest can be
/// written by a call, so a prefix naming a file there would cover whatever it is rewritten to).
bool system_path(std::string_view word) {
  const bool rooted = word.starts_with("/usr/") || word.starts_with("/bin/") || word.starts_with("/sbin/") ||
                      word.starts_with("/opt/");
  if (!rooted) return false;
  for (std::size_t start = 0; start <= word.size();) {
    std::size_t end = word.find('/', start);
    if (end == std::string_view::npos) end = word.size();
    const std::string_view part = word.substr(start, end - start);
    if (part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

const std::string* string_arg(const json& args, const char* name) {
  if (!args.is_object()) return nullptr;
  const auto it = args.find(name);
  return it != args.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

/// The words of a command prefix: one simple command of plain words; nullopt otherwise.
std::optional<std::vector<std::string>> prefix_words(std::string_view prefix) {
  const shell_parse p = parse_shell(prefix);
  if (!p.ok || p.commands.size() != 1) return std::nullopt;
  const shell_command& c = p.commands.front();
  if (c.dynamic || c.nested || c.here_string || c.stdin_from_pipe || !c.redirects.empty() || c.argv.empty()) return std::nullopt;
  return c.argv;
}

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t' && c != '\n') || u == 0x7f;
  });
}

bool command_covered(const std::vector<std::string>& words, std::string_view command) {
  if (has_control(command)) return false;
  const shell_parse p = parse_shell(command);
  if (!p.ok || p.commands.empty()) return false;
  return std::all_of(p.commands.begin(), p.commands.end(), [&](const shell_command& c) {
    const bool writes = std::find(c.redirect_writes.begin(), c.redirect_writes.end(), true) != c.redirect_writes.end();
    return !c.dynamic && !c.nested && !writes && c.argv.size() >= words.size() &&
           std::equal(words.begin(), words.end(), c.argv.begin());
  });
}

struct split_path {
  bool absolute = false;
  std::vector<std::string_view> parts;  ///< without empty and "." components
};

/// nullopt for "" and for any `..` component.
std::optional<split_path> split(std::string_view path) {
  if (path.empty()) return std::nullopt;
  split_path out;
  out.absolute = path.front() == '/';
  std::size_t start = 0;
  for (std::size_t i = 0; i <= path.size(); ++i) {
    if (i < path.size() && path[i] != '/') continue;
    const std::string_view part = path.substr(start, i - start);
    if (part == "..") return std::nullopt;
    if (!part.empty() && part != ".") out.parts.push_back(part);
    start = i + 1;
  }
  return out;
}

bool path_covered(std::string_view prefix, std::string_view path) {
  const auto p = split(prefix);
  const auto q = split(path);
  if (!p || !q || p->absolute != q->absolute || p->parts.size() > q->parts.size()) return false;
  return std::equal(p->parts.begin(), p->parts.end(), q->parts.begin());
}

/// Why a prefix of these words may not be remembered; nullopt when it may.
std::optional<std::string> words_refusal(const std::vector<std::string>& words) {
  const std::string& program = words.front();
  std::string shown = "'";  // built in steps: GCC 12 warns (-Wrestrict, falsely) on "x" + substr(…)
  shown.append(program, 0, 64);
  shown += program.size() > 64 ? "...'" : "'";
  if (risk::is_assignment_word(program)) {
    return "command_prefix must start with the program, not a NAME=value assignment (" + shown + ")";
  }
  if (program.find_first_of("*?[") != std::string::npos) {
    return "command_prefix's program " + shown + " is a glob pattern; name the program itself";
  }
  if (const risk::launcher_entry* l = risk::launcher_of(program)) {
    return "command_prefix cannot start with " + shown + ": it is a program that runs other programs (" +
           std::string(l->runs) + "; " + std::string(l->source) +
           "), so a prefix rule would allow whatever it is told to run. Allow this call once, or remember "
           "exactly these arguments (leave out command_prefix)";
  }
  if (program.find('/') != std::string::npos && !system_path(program)) {
    return "command_prefix's program " + shown +
           " is a file that a call can rewrite (only programs under /usr, /bin, /sbin or /opt, or found on "
           "the PATH, can be a prefix); remember exactly these arguments instead (leave out command_prefix)";
  }
  return std::nullopt;
}

/// Adds req's command prefix to r after checking it against the command seen.
std::optional<error> add_command_prefix(permission_rule& r, std::string_view prefix_text, const json& seen) {
  const std::string_view prefix = trim(prefix_text);
  if (r.tool != "terminal") return invalid("command_prefix is only for the terminal tool", "rule.command_prefix");
  if (prefix.empty()) return invalid("command_prefix is empty", "rule.command_prefix");
  const auto words = prefix_words(prefix);
  if (!words) return invalid("command_prefix must be plain words of one command", "rule.command_prefix");
  if (auto why = words_refusal(*words)) return invalid(std::move(*why), "rule.command_prefix", "prefix_runs_programs");
  const std::string* command = string_arg(seen, "command");
  if (command == nullptr || !command_covered(*words, *command))
    return invalid("command_prefix does not cover the command that was approved", "rule.command_prefix");
  r.command_prefix = std::string(prefix);
  return std::nullopt;
}

std::optional<error> add_path_prefix(permission_rule& r, std::string_view prefix_text, const json& seen) {
  const std::string_view prefix = trim(prefix_text);
  const std::string* path = string_arg(seen, "path");
  if (path == nullptr) return invalid("path_prefix needs a call with a string \"path\" argument", "rule.path_prefix");
  if (!split(prefix)) return invalid("path_prefix is empty or has a .. component", "rule.path_prefix");
  if (!path_covered(prefix, *path)) return invalid("path_prefix does not cover the path that was approved", "rule.path_prefix");
  r.path_prefix = std::string(prefix);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> prefix_refusal(std::string_view command_prefix) {
  const auto words = prefix_words(trim(command_prefix));
  if (!words) return std::nullopt;
  return words_refusal(*words);
}

const char* to_string(rule_scope scope) noexcept {
  switch (scope) {
    case rule_scope::session: return "session";
    case rule_scope::always: return "always";
  }
  return "session";
}

result<permission_rule> make_rule(const std::optional<rule_request>& req, std::string_view tool, const json& seen_args,
                                  rule_scope scope, std::string session_id, std::int64_t now_ms) {
  if (scope == rule_scope::session && shared_session(session_id)) {
    return invalid("the request that asked named no session_id, so there is no session to remember this for "
                   "(allow it once, or remember it for every session)",
                   "decision", "no_session");
  }
  permission_rule r;
  r.scope = scope;
  r.session_id = scope == rule_scope::session ? std::move(session_id) : std::string();
  r.tool = std::string(tool);
  r.created_unix_ms = now_ms;
  if (req) {
    if (!req->tool.empty() && req->tool != tool) {
      return invalid("rule.tool is '" + req->tool.substr(0, 64) + "' but the call being decided is a '" +
                         std::string(tool) + "' call; a rule can only be about the call you saw (omit rule.tool)",
                     "rule.tool");
    }
    if (req->expires_in_s) {
      const std::int64_t s = *req->expires_in_s;
      if (s <= 0 || s > k_max_rule_expiry_s) return invalid("expires_in_s must be between 1 and ten years", "rule.expires_in_s");
      r.expires_unix_ms = now_ms + s * 1000;
    }
    if (req->command_prefix)
      if (auto e = add_command_prefix(r, *req->command_prefix, seen_args)) return std::move(*e);
    if (req->path_prefix)
      if (auto e = add_path_prefix(r, *req->path_prefix, seen_args)) return std::move(*e);
  }
  if (!r.command_prefix && !r.path_prefix) r.arguments = dump_safe(seen_args);
  return r;
}

bool rule_matches(const permission_rule& r, std::string_view session_id, std::string_view tool, const json& args,
                  std::int64_t now_ms) {
  if (r.expires_unix_ms != 0 && now_ms >= r.expires_unix_ms) return false;
  if (r.scope == rule_scope::session && (shared_session(r.session_id) || r.session_id != session_id)) return false;
  if (r.tool != tool) return false;
  if (!r.arguments && !r.command_prefix && !r.path_prefix) return false;
  if (r.arguments && dump_safe(args) != *r.arguments) return false;
  if (r.command_prefix) {
    const auto words = prefix_words(*r.command_prefix);
    const std::string* command = string_arg(args, "command");
    if (!words || words_refusal(*words) || command == nullptr || !command_covered(*words, *command)) return false;
  }
  if (r.path_prefix) {
    const std::string* path = string_arg(args, "path");
    if (path == nullptr || !path_covered(*r.path_prefix, *path)) return false;
  }
  return true;
}

}  // namespace warden::agent
