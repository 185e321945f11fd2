#include "engine/gguf_info.h"

#include <fstream>
#include <map>
#include <string_view>

namespace warden::engine {

namespace {

// GGUF value types (specification order).
enum class gguf_type : std::uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7, string = 8, array = 9,
  u64 = 10, i64 = 11, f64 = 12,
};

/// Keys longer than this, strings longer than this or more entries than this mean a corrupt file.
constexpr std::uint64_t k_max_key_bytes = 64 * 1024;
constexpr std::uint64_t k_max_string_bytes = 64ull << 20;
constexpr std::uint64_t k_max_kv_count = 1ull << 20;
/// A chat template longer than this is not read (only noted as present).
constexpr std::uint64_t k_max_template_bytes = 1ull << 20;

class reader {
 public:
  explicit reader(std::ifstream& f) : f_(f) {}
  bool ok() const { return static_cast<bool>(f_); }

  template <class T>
  T num() {
    T v{};
    f_.read(reinterpret_cast<char*>(&v), sizeof v);
    return v;
  }
  bool str(std::string& out, std::uint64_t max) {
    const auto n = num<std::uint64_t>();
    if (!ok() || n > max) return false;
    out.resize(static_cast<std::size_t>(n));
    f_.read(out.data(), static_cast<std::streamsize>(n));
    return ok();
  }
  bool skip_str() {
    const auto n = num<std::uint64_t>();
    if (!ok() || n > k_max_string_bytes) return false;
    skip(n);
    return ok();
  }
  // Small skips go through the stream buffer (a seek per vocabulary string would be a syscall).
  void skip(std::uint64_t n) {
    if (n < (1u << 20)) f_.ignore(static_cast<std::streamsize>(n));
    else f_.seekg(static_cast<std::streamoff>(n), std::ios::cur);
  }
  static std::uint64_t scalar_size(gguf_type t) {
    switch (t) {
      case gguf_type::u8: case gguf_type::i8: case gguf_type::boolean: return 1;
      case gguf_type::u16: case gguf_type::i16: return 2;
      case gguf_type::u32: case gguf_type::i32: case gguf_type::f32: return 4;
      case gguf_type::u64: case gguf_type::i64: case gguf_type::f64: return 8;
      case gguf_type::string: case gguf_type::array: return 0;
    }
    return 0;
  }
  bool skip_value(gguf_type t, int depth) {
    if (t == gguf_type::string) return skip_str();
    if (t == gguf_type::array) {
      if (depth > 4) return false;
      const auto et = static_cast<gguf_type>(num<std::uint32_t>());
      const auto count = num<std::uint64_t>();
      if (!ok() || static_cast<std::uint32_t>(et) > 12) return false;
      if (const auto sz = scalar_size(et); sz > 0) {
        if (count > (k_max_string_bytes * 16) / sz) return false;
        skip(count * sz);
        return ok();
      }
      for (std::uint64_t i = 0; i < count; ++i) {
        if (!skip_value(et, depth + 1)) return false;
      }
      return true;
    }
    if (static_cast<std::uint32_t>(t) > 12) return false;
    skip(scalar_size(t));
    return ok();
  }
  std::uint64_t uint_value(gguf_type t) {
    switch (t) {
      case gguf_type::u32: return num<std::uint32_t>();
      case gguf_type::i32: return static_cast<std::uint64_t>(num<std::int32_t>());
      case gguf_type::u64: return num<std::uint64_t>();
      case gguf_type::i64: return static_cast<std::uint64_t>(num<std::int64_t>());
      case gguf_type::u8: case gguf_type::i8: case gguf_type::u16: case gguf_type::i16:
      case gguf_type::f32: case gguf_type::boolean: case gguf_type::string: case gguf_type::array:
      case gguf_type::f64:
        skip_value(t, 0);
        return 0;
    }
    return 0;
  }

 private:
  std::ifstream& f_;
};

/// Suffixes of "<arch>.<suffix>" keys whose unsigned value is kept.
constexpr std::string_view k_arch_numbers[] = {"context_length", "block_count", "embedding_length",
                                                "attention.head_count", "attention.head_count_kv",
                                                "attention.key_length", "attention.value_length", "pooling_type"};

bool arch_number_key(const std::string& key) {
  const auto dot = key.find('.');
  if (dot == std::string::npos || key.starts_with("general.") || key.starts_with("tokenizer.")) return false;
  const std::string_view suffix = std::string_view(key).substr(dot + 1);
  for (auto s : k_arch_numbers) {
    if (suffix == s) return true;
  }
  return false;
}

/// Reads the value of `key` into `info`/`numbers` when it is one warden uses, else skips it.
bool read_known(reader& r, const std::string& key, gguf_type type, gguf_info& info,
                std::map<std::string, std::uint64_t>& numbers) {
  if (key == "general.architecture" && type == gguf_type::string) return r.str(info.architecture, 1024);
  if (key == "general.name" && type == gguf_type::string) return r.str(info.name, 4096);
  if (key == "general.size_label" && type == gguf_type::string) return r.str(info.parameters, 256);
  if (key == "general.file_type") {
    info.file_type = static_cast<std::uint32_t>(r.uint_value(type));
    return r.ok();
  }
  if (key == "tokenizer.chat_template") {
    info.has_chat_template = true;
    std::string text;
    if (type != gguf_type::string || !r.str(text, k_max_template_bytes)) return r.skip_value(type, 0);
    info.has_tool_template = text.find("tools") != std::string::npos || text.find("tool_call") != std::string::npos;
    return true;
  }
  if (arch_number_key(key)) {
    numbers[key] = r.uint_value(type);
    return r.ok();
  }
  return r.skip_value(type, 0);
}

}  // namespace

std::string file_type_name(std::uint32_t t) {
  // llama.cpp's llama_ftype numbers (include/llama.h LLAMA_FTYPE_MOSTLY_*); 1 << 10 marks a
  // type chosen by the converter ("guessed") and is ignored here.
  switch (t & 0x3ff) {
    case 0: return "F32";
    case 1: return "F16";
    case 2: return "Q4_0";
    case 3: return "Q4_1";
    case 7: return "Q8_0";
    case 8: return "Q5_0";
    case 9: return "Q5_1";
    case 10: return "Q2_K";
    case 11: return "Q3_K_S";
    case 12: return "Q3_K_M";
    case 13: return "Q3_K_L";
    case 14: return "Q4_K_S";
    case 15: return "Q4_K_M";
    case 16: return "Q5_K_S";
    case 17: return "Q5_K_M";
    case 18: return "Q6_K";
    case 19: return "IQ2_XXS";
    case 20: return "IQ2_XS";
    case 21: return "Q2_K_S";
    case 22: return "IQ3_XS";
    case 23: return "IQ3_XXS";
    case 24: return "IQ1_S";
    case 25: return "IQ4_NL";
    case 26: return "IQ3_S";
    case 27: return "IQ3_M";
    case 28: return "IQ2_S";
    case 29: return "IQ2_M";
    case 30: return "IQ4_XS";
    case 31: return "IQ1_M";
    case 32: return "BF16";
    case 36: return "TQ1_0";
    case 37: return "TQ2_0";
    case 38: return "MXFP4";
    default: return "";
  }
}

result<gguf_info> read_gguf_info(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return make_error(errc::invalid_request, "cannot open model file " + path);
  reader r(f);
  char magic[4] = {};
  f.read(magic, 4);
  if (!f || std::string(magic, 4) != "GGUF") {
    return make_error(errc::invalid_request, path + " is not a GGUF file (no GGUF magic)");
  }
  gguf_info info;
  info.version = r.num<std::uint32_t>();
  (void)r.num<std::uint64_t>();  // tensor count
  const auto kv_count = r.num<std::uint64_t>();
  if (!r.ok() || info.version < 2 || info.version > 3 || kv_count > k_max_kv_count) {
    return make_error(errc::invalid_request, path + " has an unsupported or corrupt GGUF header");
  }
  std::map<std::string, std::uint64_t> numbers;  // "<arch>.<suffix>" keys of k_arch_numbers
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    std::string key;
    if (!r.str(key, k_max_key_bytes)) break;
    const auto type = static_cast<gguf_type>(r.num<std::uint32_t>());
    if (!r.ok()) break;
    if (!read_known(r, key, type, info, numbers)) {
      return make_error(errc::invalid_request, path + ": corrupt GGUF metadata at key '" + key + "'");
    }
  }
  if (info.architecture.empty()) {
    return make_error(errc::invalid_request, path + ": GGUF metadata has no general.architecture");
  }
  const auto arch_number = [&](std::string_view suffix) {
    auto it = numbers.find(info.architecture + "." + std::string(suffix));
    return it == numbers.end() ? std::uint64_t{0} : it->second;
  };
  info.context_length = arch_number("context_length");
  info.block_count = arch_number("block_count");
  info.embedding_length = arch_number("embedding_length");
  info.head_count = arch_number("attention.head_count");
  info.head_count_kv = arch_number("attention.head_count_kv");
  if (info.head_count_kv == 0) info.head_count_kv = info.head_count;  // no GQA key: one KV head per head
  info.key_length = arch_number("attention.key_length");
  info.value_length = arch_number("attention.value_length");
  if (info.head_count > 0 && info.key_length == 0) info.key_length = info.embedding_length / info.head_count;
  if (info.head_count > 0 && info.value_length == 0) info.value_length = info.embedding_length / info.head_count;
  info.embedding_model = numbers.count(info.architecture + ".pooling_type") > 0 || info.architecture == "bert" ||
                         info.architecture == "nomic-bert" || info.architecture == "jina-bert-v2";
  info.quantization = file_type_name(info.file_type);
  return info;
}

std::uint64_t gguf_info::kv_cache_bytes(std::uint64_t n_ctx) const {
  // f16 K and V (2 bytes each) for every layer, context position and KV head:
  // n_layer × n_ctx × n_head_kv × (key_length + value_length) × 2 bytes (llama.cpp's default
  // cache type is f16; figures from its KV cache layout, llama.cpp src/llama-kv-cache).
  return block_count * n_ctx * head_count_kv * (key_length + value_length) * 2;
}

}  // namespace warden::engine
