// llama_devices — which accelerator a llama-server binary was built for and what it offloads
// (issue 27 §7): `backend` and `devices` in GET /api/inference/status and `warden doctor`,
// `gpu_offload` from the child's own log.
//
// parse_list_devices() reads `llama-server --list-devices` (llama.cpp's common/arg.cpp prints
// "Available devices:" then one "  <Name><n>: <description> (<total> MiB, <free> MiB free)" line per
// device; "  (none)" for a CPU-only build). The backend is the device name without its index,
// lower-cased: "CUDA0" → "cuda", "Vulkan1" → "vulkan", "ROCm0" → "rocm", "Metal" → "metal";
// "cpu" when there is none.
// parse_offload() finds llama.cpp's load line "load_tensors: offloaded 31/31 layers to GPU" in a
// child's output: "31/31"; "" when it has none (a CPU build prints none).
// probe_llama_devices() runs the binary with --list-devices (10 s at most) once per path and
// caches the answer (thread-safe); a binary that cannot run gives backend "unknown".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace warden::engine {

struct llama_device {
  std::string name;         ///< "CUDA0"
  std::string description;  ///< "NVIDIA H200"
  std::int64_t total_mib = 0;
  std::int64_t free_mib = 0;
};

struct llama_devices {
  std::string backend = "cpu";  ///< "cpu" | "cuda" | "vulkan" | "rocm" | "metal" | … | "unknown"
  std::vector<llama_device> devices;
};

/// Pure (see above).
llama_devices parse_list_devices(std::string_view output);
/// Pure (see above).
std::string parse_offload(std::string_view output);
/// Runs `binary --list-devices`; cached per path.
llama_devices probe_llama_devices(const std::string& binary);

}  // namespace warden::engine
