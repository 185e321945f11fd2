// api_keys — named API keys (`--api-keys-file`, issue 22 part 3): the file's format, its
// reading, and the key ring that turns a presented key into a principal (common/principal.h).
//
// The file: UTF-8/ASCII text, one key per line, three fields separated by spaces or tabs:
//
//     # name   role   key
//     alice    user   3f9c2a…            (the key: 16..512 printable ASCII characters, no blanks)
//     bob      user   b71e0d…
//     ops      admin  9a44c1…
//
//   name  [A-Za-z0-9_-]{1,64} (the characters of a session id: it names a workspace folder),
//         unique in the file; it is the owner recorded on what the key creates;
//   role  `user` (sees and acts on its own sessions, runs, approvals, rules and audit rows) or
//         `admin` (sees and acts on everyone's);
//   key   what clients send (`Authorization: Bearer KEY` or `X-Api-Key: KEY`); unique in the file.
// Blank lines and lines whose first non-blank character is '#' are skipped; a trailing "\r" is
// dropped. The file must be a regular file that only its owner may read or write (no group or
// other permission bits: `chmod 600`), owned by warden's user or root (its owner could add an
// admin key), at most 1 MiB, with at least one key.
// Errors (errc::invalid_request; start-up prints it and stops with exit 2): one message naming the
// file, and for a bad entry its line number and what is wrong (a bad name, an unknown role, a key
// too short or with blanks, a repeated name or key, a line without three fields). A message
// never quotes a key.
//
// key_ring::resolve compares the presented key with every key of the ring in constant time for
// that key's length (no early exit, no comparison by a hash table), so the answer time does not
// tell which key, or how much of one, matched.
// Thread-safety: parse_api_keys and key_ring are pure / immutable after construction;
// read_api_keys_file blocks on the file system (start-up only).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/principal.h"
#include "common/result.h"

namespace warden::http {

/// Key lengths accepted in the file (bytes). 16 bytes = 128 bits when random hex is used.
inline constexpr std::size_t k_min_api_key_bytes = 16;
inline constexpr std::size_t k_max_api_key_bytes = 512;
/// The largest keys file read.
inline constexpr std::size_t k_max_api_keys_file_bytes = 1 << 20;

struct named_key {
  std::string name;
  key_role role = key_role::user;
  std::string key;
};

/// The entries of a keys file's text; `source` names it in messages (the path).
result<std::vector<named_key>> parse_api_keys(std::string_view text, std::string_view source);

/// Reads and parses the file at `path`, after checking that it is a regular file without group
/// or other permission bits, owned by the effective uid or root (the checks are made on the
/// opened file: fstat, not stat).
result<std::vector<named_key>> read_api_keys_file(const std::string& path);

/// Whether `a` and `b` are equal, in time that depends on their lengths only.
bool equal_constant_time(std::string_view a, std::string_view b) noexcept;

/// The keys a server accepts, and whom each stands for.
///   no key at all      → every request is single_user() (no authentication);
///   the one --api-key  → that key is single_user() (owner "", admin): today's behaviour;
///   named keys         → each key is its name and role.
class key_ring {
 public:
  key_ring() = default;
  /// Single-user: `api_key` "" = no authentication. Implicit, so router_options{"…"} reads as
  /// before named keys.
  key_ring(std::string api_key);  // NOLINT(google-explicit-constructor)
  /// Named keys (from the file; parse_api_keys already checked them).
  explicit key_ring(std::vector<named_key> keys);

  /// True when requests must carry a key.
  bool required() const noexcept { return !keys_.empty(); }
  /// True for named keys (owners are recorded and filtered).
  bool named() const noexcept { return named_; }
  /// Who `presented` stands for; nullopt when keys are required and it matches none (also for "").
  std::optional<principal> resolve(std::string_view presented) const;

 private:
  std::vector<named_key> keys_;
  bool named_ = false;
};

}  // namespace warden::http
