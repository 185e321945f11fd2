// load_failure — what llama-server's own output says about why it could not start, as a kind
// and a sentence that says what to do (reference unsloth-studio.md §5.4 classifies start
// failures the same way and retries once without a flag llama-server does not know).
//
// The patterns are llama-server's (llama.cpp b1-80fb11a) messages, recorded from real runs in
// engine/testdata/load_failure/*.txt (each file's first line is the command), which the unit test
// classifies:
//   unsupported_flag   "error: invalid argument: --foo" / "unknown argument"  (param = the flag)
//   port_in_use        "couldn't bind HTTP server socket"
//   permission_denied  "failed to open GGUF file '…' (Permission denied)"
//   missing_file       "failed to open GGUF file '…' (No such file or directory)"
//   out_of_memory      "insufficient memory" / "failed to allocate" / "failed to create context"
//   unsupported_architecture  "unknown model architecture"
//   corrupt_gguf       "failed to read key-value pairs", "invalid magic", other model load errors
//   timed_out          the load did not finish within --load-timeout
//   unknown            none of these
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace warden::engine {

enum class load_failure_kind {
  unsupported_flag,
  port_in_use,
  permission_denied,
  missing_file,
  out_of_memory,
  unsupported_architecture,
  corrupt_gguf,
  timed_out,
  unknown,
};

/// lower_snake name, used as an error's type_code.
const char* to_string(load_failure_kind k) noexcept;

struct load_failure {
  load_failure_kind kind = load_failure_kind::unknown;
  std::string advice;  ///< what to do, one sentence ("" for unknown)
  std::string param;   ///< the flag llama-server refused (unsupported_flag), else ""
};

/// Classifies llama-server's output (its last lines, any length). `timed_out`: it was stopped
/// for taking longer than --load-timeout.
load_failure classify_load_failure(std::string_view output, bool timed_out);

}  // namespace warden::engine
