// permission_rules — remembered approvals ("allow this for the session / always"), as pure
// values and pure matching. Storage and the tool-confirm endpoint live elsewhere; this file only
// decides what a rule is and whether it covers a call. Reference
// ../shared/reference/unsloth-studio.md §3.6 (a remembered approval must never widen into the
// high-risk cases the `auto` classifier exists to catch, hence the conservative matching below).
//
// A rule allows one tool and exactly one of:
//   arguments       these exact arguments (canonical JSON: nlohmann dump, keys sorted);
//   command_prefix  terminal only: every simple command of the command starts with the prefix's
//                   words (tokenized by risk/shell_words.h, so quoting cannot fake a match);
//   path_prefix     tools whose arguments have a string "path": the path lies under the prefix,
//                   compared component by component ("/workspace/a" covers "/workspace/a/b",
//                   not "/workspace/ab"); no `..` component on either side.
// A rule with none of the three matches nothing (fail closed).
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
///                        or it does not cover the command seen (see rule_matches);
///   rule.path_prefix     the call has no string "path"; blank or with a `..` component; or it
///                        does not cover the path seen;
///   rule.expires_in_s    ≤ 0 or more than ten years.
result<permission_rule> make_rule(const std::optional<rule_request>& req, std::string_view tool, const json& seen_args,
                                  rule_scope scope, std::string session_id, std::int64_t now_ms);

/// Whether the rule allows this call now. Expired rules (expires_unix_ms != 0 and ≤ now_ms)
/// never match; scope session needs a non-empty, equal session_id; the tool must be equal.
/// command_prefix: args["command"] is a string that parses ok, with no dynamic words, no nested
/// commands (substitutions, subshells, groups, sh -c), no output redirection, at least one
/// command, and EVERY simple command's words start with the prefix's words: `git status` covers
/// `git status -s` and `git status && git status`, not `git status; rm -rf ~`, `git statusx`,
/// `git status $(rm x)` or `git status > /etc/x`.
bool rule_matches(const permission_rule& r, std::string_view session_id, std::string_view tool, const json& args,
                  std::int64_t now_ms);

}  // namespace warden::agent
