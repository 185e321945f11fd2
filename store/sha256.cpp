#include "store/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace warden::store {

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr) != 1 || n != 32) {
    throw std::runtime_error("EVP_Digest(SHA-256) failed");
  }
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (unsigned int i = 0; i < n; ++i) {
    out[2 * i] = k_hex[md[i] >> 4];
    out[2 * i + 1] = k_hex[md[i] & 0x0f];
  }
  return out;
}

}  // namespace warden::store
