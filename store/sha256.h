// sha256_hex — the SHA-256 digest (FIPS 180-4) of a byte string, as 64 lowercase hex digits,
// computed by OpenSSL's libcrypto (EVP_Digest). Used by the audit log (store/call_records.h):
// the hash of a call's canonical arguments and the hash chain of its rows.
// Errors: none that can happen with libcrypto's built-in SHA-256; an internal failure of
// EVP_Digest throws std::runtime_error (a bug or a broken libcrypto, never an expected failure).
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace warden::store {

/// SHA-256 of `bytes`, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace warden::store
