// gguf_info — reads the metadata header of a GGUF file (no tensors): the architecture, the
// native context and whether the file carries a chat template (logged at start-up; doctor). Format: "GGUF", u32 version (2 or 3), u64 tensor count, u64 key/value count, then
// key/value pairs (key = u64 length + bytes, u32 value type, value; arrays = u32 element type +
// u64 count + elements), all little-endian (GGUF specification, ggml docs/gguf.md).
//
// Errors: errc::invalid_request when the file is missing, not GGUF, truncated or implausible
// (limits below), with a message naming the file.
// Thread-safety: pure function over a file.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace warden::engine {

struct gguf_info {
  std::uint32_t version = 0;
  std::string architecture;        ///< general.architecture, e.g. "gemma3"
  std::string name;                ///< general.name, "" when absent
  bool has_chat_template = false;  ///< tokenizer.chat_template present
  std::uint64_t context_length = 0;  ///< <arch>.context_length, 0 when absent
};

result<gguf_info> read_gguf_info(const std::string& path);

}  // namespace warden::engine
