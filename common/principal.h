// principal — who sent a request: the named API key it presented (issue 22, part 3).
//
// http/router.h resolves the key of every request on a keyed route to a principal and hands it
// to the handler in http_request::caller; the API surfaces pass its name down as the owner of
// what the request creates (sessions' workspaces, runs and stored responses, approval tickets,
// remembered rules, audit rows) and check it against the owner of what a request names.
//
//   single user (no key, or the one --api-key): name "" and role admin — every row's owner is ""
//     and every request sees everything, exactly as before named keys existed;
//   named keys (--api-keys-file, http/api_keys.h): name = the key's name ([A-Za-z0-9_-]{1,64}),
//     role as the file says. A user sees, answers and cancels only what has its name as owner;
//     an admin sees and acts on everything (rows with owner "" included).
// The default-constructed principal (name "", role user) is what a request carries before the
// router has resolved it (open routes such as /health): it owns nothing named, so a path that
// forgot to resolve it can never reach another key's rows.
// Thread-safety: a plain value.
#pragma once

#include <string>
#include <string_view>

namespace warden {

enum class key_role { user, admin };

/// "user" / "admin".
constexpr const char* to_string(key_role r) noexcept { return r == key_role::admin ? "admin" : "user"; }

struct principal {
  std::string name;                ///< the key's name; "" = single user
  key_role role = key_role::user;

  bool admin() const noexcept { return role == key_role::admin; }
  /// Whether this caller may see and act on something owned by `owner`: an admin always, a user
  /// only on its own. Another owner's thing must then look exactly like an unknown one (404).
  bool may_access(std::string_view owner) const noexcept { return admin() || owner == name; }
};

/// The principal of single-user mode (no key configured, or the one --api-key): owner "", admin.
inline principal single_user() { return principal{"", key_role::admin}; }

}  // namespace warden
