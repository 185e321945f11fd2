// permission_rules — remembered approvals ("allow this for the session / always"), as pure
// values and pure matching. Storage and the tool-confirm endpoint live elsewhere; this file only
// decides what a rule is and whether it covers a call. Reference
// ../shared/reference/unsloth-studio.md §3.6 (a remembered approval must never widen into the
// high-risk cases the `auto` classifier exists to catch, hence the conservative matching below).
//
// A rule allows one tool and exactly one of:
//   arguments       these exact arguments (canonical JSON: nlohmann dump, keys sorted);
//   command_prefix  terminal only: every simple command of the command starts with the prefix's
//                   words (tokenized by risk/shell_words.h, so quoting cannot fake a match). The
//                   prefix's first word is the program, never a program that runs other programs
//                   (risk/launchers.h: shells, interpreters, runners, wrappers, find, git, …: a
//                   prefix for one of them would cover whatever it is told to run), never a file
//                   a call can rewrite (a path outside /usr, /bin, /sbin and /opt), never a
//                   NAME=value assignment or a glob (issue 22);
//   path_prefix     tools whose arguments have a string "path": the path lies under the prefix,
//                   compared component by component ("/workspace/a" covers "/workspace/a/b",
//                   not "/workspace/ab"); no `..` component on either side.
// A rule with none of the three matches nothing (fail closed).
// Session rules belong to a session the request named: the shared session of requests that name
// none (k_shared_session, "_default") has none; make_rule refuses one and rule_matches never
// applies one there (issue 22: otherwise every id-less client would share them).
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/json_util.h"
#include "common/result.h"

namespace warden::agent {

enum class rule_scope { session, always };

/// The session of requests that name no session_id (agent/tool_loop.cpp): a shared workspace and
/// approval scope, and no session rules.
inline constexpr std::string_view k_shared_session = "_default";

/// Why `command_prefix` may not be a rule's prefix (its program runs other programs, is a path a
/// call can write to, or is missing); nullopt when it may. The prefix is parsed as in make_rule;
/// one that does not parse as plain words gives nullopt here (make_rule refuses it on its own).
std::optional<std::string> prefix_refusal(std::string_view command_prefix);

/// "session" / "always".
const char* to_string(rule_scope scope) noexcept;

struct permission_rule {
  std::string id;                             ///< "rule_…" (set by the caller)
  rule_scope scope = rule_scope::session;
  std::string session_id;                     ///< for scope session; "" for always
  std::string owner;                          ///< the API key name whose calls it covers ("" = single user)
  std::string tool;
  std::optional<std::string> command_prefix;  ///< terminal only
  std::optional<std::string> path_prefix;     ///< tools whose arguments have a string "path"
  std::optional<std::string> arguments;       ///< canonical JSON for "these exact arguments"
  std::int64_t created_unix_ms = 0;
  std::int64_t expires_unix_ms = 0;           ///< 0 = never
  bool operator==(const permission_rule&) const = default;
};

/// The remembered part a person asked for (tool-confirm `rule` body), before it becomes a rule.
struct rule_request {
  std::string tool;  ///< "" = the tool of the call being decided; otherwise it must be that tool
  std::optional<std::string> command_prefix, path_prefix;
  std::optional<std::int64_t> expires_in_s;
};

/// Longest expiry a request may ask for: ten years of 365.25 days.
inline constexpr std::int64_t k_max_rule_expiry_s = 315576000;

/// Builds the rule for a decision on the call the person saw (tool + its args), created at
/// now_ms. No request, or a request with neither prefix: exact arguments. The prefix given is
/// stored trimmed of surrounding blanks.
/// Errors (errc::invalid_request, param "rule.<field>"):
///   rule.tool            differs from the call's tool;
///   rule.command_prefix  tool is not terminal; blank; not a plain list of words (it must parse
///                        as one simple command, without expansions, redirections or nesting);
///                        refused by prefix_refusal() (code "prefix_runs_programs"); or it does
///                        not cover the command seen (see rule_matches);
///   rule.path_prefix     the call has no string "path"; blank or with a `..` component; or it
///                        does not cover the path seen;
///   rule.expires_in_s    ≤ 0 or more than ten years;
///   decision             scope session with session_id "" or k_shared_session (code
///                        "no_session": the request that asked named no session).
result<permission_rule> make_rule(const std::optional<rule_request>& req, std::string_view tool, const json& seen_args,
                                  rule_scope scope, std::string session_id, std::int64_t now_ms);

/// Whether the rule allows this call now. Expired rules (expires_unix_ms != 0 and ≤ now_ms)
/// never match; scope session needs an equal session_id that is neither "" nor
/// k_shared_session; the tool must be equal; a command_prefix that prefix_refusal() refuses
/// (a rule stored before issue 22) matches nothing.
/// command_prefix: args["command"] is a string that parses ok, with no dynamic words, no nested
/// commands (substitutions, subshells, groups, sh -c), no output redirection, at least one
/// command, and EVERY simple command's words start with the prefix's words: `git status` covers
/// `git status -s` and `git status && git status`, not `git status; rm -rf ~`, `git statusx`,
/// `git status $(rm x)` or `git status > /etc/x`.
bool rule_matches(const permission_rule& r, std::string_view session_id, std::string_view tool, const json& args,
                  std::int64_t now_ms);

}  // namespace warden::agent
