// gguf_info — reads the metadata header of a GGUF file (no tensors): the architecture, the
// native context, whether the file carries a chat template, the quantisation and the shape numbers
// the KV cache size follows from (logged at start-up; doctor; the model library). Format: "GGUF", u32 version (2 or 3), u64 tensor count, u64 key/value count, then
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
  bool has_tool_template = false;    ///< the chat template mentions tools (it can render them)
  std::uint32_t file_type = 0;       ///< general.file_type (llama.cpp's llama_ftype number)
  std::string quantization;          ///< file_type_name(file_type), "" when unknown
  std::string parameters;            ///< general.size_label ("135M"), "" when absent
  std::uint64_t block_count = 0;     ///< <arch>.block_count: layers
  std::uint64_t embedding_length = 0;  ///< <arch>.embedding_length
  std::uint64_t head_count = 0;      ///< <arch>.attention.head_count
  std::uint64_t head_count_kv = 0;   ///< <arch>.attention.head_count_kv (head_count when absent)
  std::uint64_t key_length = 0;      ///< per head; embedding_length / head_count when absent
  std::uint64_t value_length = 0;    ///< per head; embedding_length / head_count when absent
  bool embedding_model = false;      ///< a BERT-like encoder, or <arch>.pooling_type present

  /// Bytes of an f16 KV cache for `n_ctx` positions (all slots together):
  /// block_count × n_ctx × head_count_kv × (key_length + value_length) × 2. 0 when the header
  /// lacks the numbers.
  std::uint64_t kv_cache_bytes(std::uint64_t n_ctx) const;
};

result<gguf_info> read_gguf_info(const std::string& path);

/// The quantisation name of a general.file_type value ("Q4_K_M", "F16"; llama.cpp's
/// llama_ftype table); "" for an unknown one. Pure.
std::string file_type_name(std::uint32_t file_type);

}  // namespace warden::engine
