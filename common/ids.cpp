#include "common/ids.h"

#include <array>

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace warden::ids {

void random_bytes(std::span<std::byte> out) {
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::getrandom(out.data() + got, out.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
    }
    got += static_cast<std::size_t>(n);
  }
}

namespace {

/// Bytes for ids: getrandom()'s output drawn 4 KiB at a time into a per-thread buffer, each byte
/// used once (an id per item of a 200,000-item request is then not a system call each).
void id_bytes(std::span<std::byte> out) {
  constexpr std::size_t k_batch = 4096;
  thread_local std::array<std::byte, k_batch> pool{};
  thread_local std::size_t used = k_batch;
  if (out.empty()) return;  // memcpy/memset take no null pointer, even for zero bytes
  if (out.size() > k_batch) return random_bytes(out);
  if (k_batch - used < out.size()) {
    random_bytes(pool);
    used = 0;
  }
  std::memcpy(out.data(), pool.data() + used, out.size());
  std::memset(pool.data() + used, 0, out.size());  // a byte handed out is not kept
  used += out.size();
}

}  // namespace

std::string random_hex(std::size_t bytes) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::vector<std::byte> raw(bytes);
  id_bytes(raw);
  std::string out;
  out.reserve(2 * bytes);
  for (std::byte b : raw) {
    const auto v = std::to_integer<unsigned>(b);
    out += k_hex[v >> 4];
    out += k_hex[v & 15u];
  }
  return out;
}

std::string random_token(std::size_t chars) {
  static constexpr char k_b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  // One byte per character, low 6 bits kept: 256 is a multiple of 64, so each is uniform.
  std::vector<std::byte> raw(chars);
  id_bytes(raw);
  std::string out;
  out.reserve(chars);
  for (std::byte b : raw) out += k_b64url[std::to_integer<unsigned>(b) & 63u];
  return out;
}

std::string new_id(kind k) {
  switch (k) {
    case kind::approval: return random_token(22);
    case kind::tool_call: return "call_" + random_token(24);
    case kind::completion: return "chatcmpl-" + random_token(24);
    case kind::response: return "resp_" + random_token(24);
    case kind::message: return "msg_" + random_token(24);
    case kind::script: return random_hex(12);
    case kind::rule: return "rule_" + random_token(16);
    case kind::request: return "req_" + random_token(24);
    case kind::tool_use: return "toolu_" + random_token(24);
    case kind::server_tool_use: return "srvtoolu_" + random_token(24);
    case kind::reasoning_item: return "rs_" + random_token(24);
    case kind::function_call_item: return "fc_" + random_token(24);
    case kind::approval_request: return "mcpr_" + random_token(24);
    case kind::mcp_call: return "mcp_" + random_token(24);
    case kind::input_item: return "item_" + random_token(24);
    case kind::knowledge_base: return "kb_" + random_token(16);
    case kind::document: return "doc_" + random_token(16);
    case kind::rag_auto_call: return "rag_auto_" + random_hex(6);
  }
  throw std::logic_error("ids::new_id: unknown kind");
}

}  // namespace warden::ids
