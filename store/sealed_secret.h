// sealed_secret — a secret kept at rest encrypted (issue 28 §3: a provider's API key "stored
// encrypted, never in logs"): AES-256-GCM (OpenSSL's EVP) under a key of 32 random bytes kept in
// a file of its own (mode 0600, created on first use), so the database alone does not give the
// secret away.
//
// Sealed form: "v1:" + hex(12-byte random nonce ‖ ciphertext ‖ 16-byte tag). open_secret() checks
// the tag: a changed byte, another key or a cut text is an error, never garbage.
// Errors: errc::internal (the key file cannot be read or made, its size is not 32 bytes, OpenSSL
// failed); errc::invalid_request (a text that is not a sealed secret, or does not open with the key).
// Thread-safety: pure functions over their arguments and the file system.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace warden::store {

inline constexpr std::size_t k_seal_key_bytes = 32;

/// The key in `path`; made (32 bytes from getrandom, mode 0600) when the file does not exist.
result<std::string> load_or_create_seal_key(const std::string& path);
result<std::string> seal_secret(std::string_view key, std::string_view plain);
result<std::string> open_secret(std::string_view key, std::string_view sealed);

}  // namespace warden::store
