#include "engine/gguf_info.h"

#include <fstream>

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

}  // namespace

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
  std::uint64_t ctx = 0;
  std::string ctx_arch;
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    std::string key;
    if (!r.str(key, k_max_key_bytes)) break;
    const auto type = static_cast<gguf_type>(r.num<std::uint32_t>());
    if (!r.ok()) break;
    if (key == "general.architecture" && type == gguf_type::string) {
      if (!r.str(info.architecture, 1024)) break;
    } else if (key == "general.name" && type == gguf_type::string) {
      if (!r.str(info.name, 4096)) break;
    } else if (key == "tokenizer.chat_template") {
      info.has_chat_template = true;
      if (!r.skip_value(type, 0)) break;
    } else if (key.size() > 15 && key.ends_with(".context_length")) {
      ctx = r.uint_value(type);
      ctx_arch = key.substr(0, key.size() - 15);
    } else if (!r.skip_value(type, 0)) {
      return make_error(errc::invalid_request, path + ": corrupt GGUF metadata at key '" + key + "'");
    }
  }
  if (info.architecture.empty()) {
    return make_error(errc::invalid_request, path + ": GGUF metadata has no general.architecture");
  }
  if (ctx_arch == info.architecture) info.context_length = ctx;
  return info;
}

}  // namespace warden::engine
