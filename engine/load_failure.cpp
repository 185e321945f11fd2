#include "engine/load_failure.h"

#include <array>

namespace warden::engine {

namespace {

bool has(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

/// The flag after "invalid argument: " (up to the end of the line or a space).
std::string flag_after(std::string_view text, std::string_view marker) {
  const auto at = text.find(marker);
  if (at == std::string_view::npos) return "";
  std::string_view rest = text.substr(at + marker.size());
  const auto end = rest.find_first_of(" \n\r'\"");
  return std::string(rest.substr(0, end));
}

struct rule {
  std::string_view needle;
  load_failure_kind kind;
  std::string_view advice;
};

// Order matters: the first match wins (an allocation failure is also "failed to load").
constexpr std::array<rule, 11> k_rules = {{
    {"couldn't bind HTTP server socket", load_failure_kind::port_in_use,
     "its port was taken by another program while it started; warden retries once on another port"},
    {"(Permission denied)", load_failure_kind::permission_denied,
     "llama-server may not read the model file: make it readable (chmod a+r) by the user warden runs as"},
    {"(No such file or directory)", load_failure_kind::missing_file,
     "the model file is not there: it was moved or deleted; pull it again or load another model"},
    {"insufficient memory", load_failure_kind::out_of_memory,
     "there is not enough memory for this model at this context: lower ctx or parallel, pick a smaller "
     "quantisation, or free memory"},
    {"failed to allocate", load_failure_kind::out_of_memory,
     "there is not enough memory for this model at this context: lower ctx or parallel, pick a smaller "
     "quantisation, or free memory"},
    {"failed to create context", load_failure_kind::out_of_memory,
     "llama-server could not create the context (usually memory): lower ctx or parallel, or free memory"},
    {"unknown model architecture", load_failure_kind::unsupported_architecture,
     "this llama.cpp build does not know the model's architecture: use a model llama.cpp supports, or a newer "
     "llama.cpp"},
    {"failed to read key-value pairs", load_failure_kind::corrupt_gguf,
     "the GGUF file is corrupt or truncated: download it again"},
    {"invalid magic", load_failure_kind::corrupt_gguf, "the file is not a GGUF model: download the .gguf file again"},
    {"failed to read tensor", load_failure_kind::corrupt_gguf, "the GGUF file is corrupt or truncated: download it again"},
    {"error loading model", load_failure_kind::corrupt_gguf,
     "llama.cpp could not read the model: the GGUF file may be corrupt, truncated or of an unsupported kind; "
     "download it again or pick another"},
}};

}  // namespace

const char* to_string(load_failure_kind k) noexcept {
  switch (k) {
    case load_failure_kind::unsupported_flag: return "unsupported_flag";
    case load_failure_kind::port_in_use: return "port_in_use";
    case load_failure_kind::permission_denied: return "permission_denied";
    case load_failure_kind::missing_file: return "missing_file";
    case load_failure_kind::out_of_memory: return "out_of_memory";
    case load_failure_kind::unsupported_architecture: return "unsupported_architecture";
    case load_failure_kind::corrupt_gguf: return "corrupt_gguf";
    case load_failure_kind::timed_out: return "timed_out";
    case load_failure_kind::unknown: return "unknown";
  }
  return "unknown";
}

load_failure classify_load_failure(std::string_view output, bool timed_out) {
  if (timed_out) {
    return {load_failure_kind::timed_out,
            "the model did not load within --load-timeout: raise it for a large model on a slow disk, or lower ctx",
            ""};
  }
  for (std::string_view marker : {"error: invalid argument: ", "error: unknown argument: "}) {
    if (has(output, marker)) {
      std::string flag = flag_after(output, marker);
      return {load_failure_kind::unsupported_flag,
              "this llama-server does not know " + flag + ": remove it from llama_extra_args", flag};
    }
  }
  for (const auto& r : k_rules) {
    if (has(output, r.needle)) return {r.kind, std::string(r.advice), ""};
  }
  return {load_failure_kind::unknown, "", ""};
}

}  // namespace warden::engine
