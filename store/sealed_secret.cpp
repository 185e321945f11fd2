#include "store/sealed_secret.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "common/ids.h"

namespace warden::store {

namespace {

constexpr std::size_t k_nonce = 12;
constexpr std::size_t k_tag = 16;
constexpr std::string_view k_prefix = "v1:";

using ctx_ptr = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

std::string to_hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]);
    const int lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

error crypto_failure(const char* what) { return make_error(errc::internal, std::string("sealing a secret: ") + what); }

const unsigned char* bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

}  // namespace

result<std::string> load_or_create_seal_key(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    std::string key = ss.str();
    if (key.size() != k_seal_key_bytes) {
      return make_error(errc::internal, path + ": the sealing key must be " + std::to_string(k_seal_key_bytes) +
                                            " bytes, it has " + std::to_string(key.size()));
    }
    return key;
  }
  auto hex = from_hex(ids::random_hex(k_seal_key_bytes));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return make_error(errc::internal, path + ": cannot create the sealing key: " + std::strerror(errno));
  const ssize_t n = ::write(fd, hex->data(), hex->size());
  ::close(fd);
  if (n != static_cast<ssize_t>(hex->size())) return make_error(errc::internal, path + ": cannot write the sealing key");
  return *hex;
}

result<std::string> seal_secret(std::string_view key, std::string_view plain) {
  if (key.size() != k_seal_key_bytes) return crypto_failure("a key of the wrong size");
  const std::string nonce = *from_hex(ids::random_hex(k_nonce));
  ctx_ptr ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  std::string out(plain.size() + 16, '\0');
  int len = 0;
  int total = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, bytes(key), bytes(nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len, bytes(plain),
                        static_cast<int>(plain.size())) != 1) {
    return crypto_failure("encryption failed");
  }
  total = len;
  if (EVP_EncryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()) + total, &len) != 1) {
    return crypto_failure("encryption failed");
  }
  total += len;
  out.resize(static_cast<std::size_t>(total));
  std::string tag(k_tag, '\0');
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(k_tag), tag.data()) != 1) {
    return crypto_failure("no tag");
  }
  return std::string(k_prefix) + to_hex(nonce + out + tag);
}

result<std::string> open_secret(std::string_view key, std::string_view sealed) {
  const error not_sealed = make_error(errc::invalid_request, "not a sealed secret, or sealed with another key");
  if (key.size() != k_seal_key_bytes) return crypto_failure("a key of the wrong size");
  if (sealed.substr(0, k_prefix.size()) != k_prefix) return not_sealed;
  auto raw = from_hex(sealed.substr(k_prefix.size()));
  if (!raw || raw->size() < k_nonce + k_tag) return not_sealed;
  const std::string_view all(*raw);
  const std::string_view nonce = all.substr(0, k_nonce);
  const std::string_view body = all.substr(k_nonce, all.size() - k_nonce - k_tag);
  std::string tag(all.substr(all.size() - k_tag));
  ctx_ptr ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  std::string out(body.size() + 16, '\0');
  int len = 0;
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, bytes(key), bytes(nonce)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len, bytes(body),
                        static_cast<int>(body.size())) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(k_tag), tag.data()) != 1) {
    return not_sealed;
  }
  int total = len;
  if (EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()) + total, &len) != 1) return not_sealed;
  total += len;
  out.resize(static_cast<std::size_t>(total));
  return out;
}

}  // namespace warden::store
