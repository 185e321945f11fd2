#include "engine/llama_devices.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace warden::engine {
namespace {

TEST(LlamaDevices, ACpuBuildListsNone) {
  // `llama-server --list-devices` of scripts/setup's CPU build (llama.cpp 0.4.0, 80fb11a), recorded.
  auto d = parse_list_devices("Available devices:\n  (none)\n");
  EXPECT_EQ(d.backend, "cpu");
  EXPECT_TRUE(d.devices.empty());
}

TEST(LlamaDevices, GpuBuildsNameTheirBackendAndMemory) {
  auto d = parse_list_devices(
      "ggml_cuda_init: found 2 CUDA devices:\n"
      "  Device 0: NVIDIA H200, compute capability 9.0, VMM: yes\n"
      "Available devices:\n"
      "  CUDA0: NVIDIA H200 (143771 MiB, 142890 MiB free)\n"
      "  CUDA1: NVIDIA H200 (143771 MiB, 140000 MiB free)\n");
  EXPECT_EQ(d.backend, "cuda");
  ASSERT_EQ(d.devices.size(), 2u);
  EXPECT_EQ(d.devices[0].name, "CUDA0");
  EXPECT_EQ(d.devices[0].description, "NVIDIA H200");
  EXPECT_EQ(d.devices[0].total_mib, 143771);
  EXPECT_EQ(d.devices[1].free_mib, 140000);
  auto v = parse_list_devices("Available devices:\n  Vulkan0: AMD Radeon RX 7900 XTX (RADV NAVI31) (24560 MiB, 24000 MiB free)\n");
  EXPECT_EQ(v.backend, "vulkan");
  ASSERT_EQ(v.devices.size(), 1u);
  EXPECT_EQ(v.devices[0].description, "AMD Radeon RX 7900 XTX (RADV NAVI31)");
}

std::string recording(const std::string& name) {
  const char* root = std::getenv("WARDEN_SOURCE_DIR");  // set by ctest (CMakeLists.txt)
  std::ifstream f(std::string(root ? root : ".") + "/engine/testdata/llama_devices/" + name);
  EXPECT_TRUE(f.is_open()) << name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(LlamaDevices, TheRecordedCudaBuildOnAnH200) {
  // scripts/setup's CUDA build (its flags, llama.cpp 80fb11a, nvcc 13.0, sm_90) on a lent H200,
  // `llama-server --list-devices` 2>&1 as recorded there (2026-12-04): no ggml_cuda_init line.
  auto d = parse_list_devices(recording("list-devices-cuda-h200.txt"));
  EXPECT_EQ(d.backend, "cuda");
  ASSERT_EQ(d.devices.size(), 1u);
  EXPECT_EQ(d.devices[0].name, "CUDA0");
  EXPECT_EQ(d.devices[0].description, "NVIDIA H200");
  EXPECT_EQ(d.devices[0].total_mib, 143155);
  EXPECT_EQ(d.devices[0].free_mib, 142629);
  // The load lines of that build at -lv 4 (llama.cpp logs libllama's INFO at verbosity 4; at
  // llama-server's default 3 the offload line is not printed at all).
  EXPECT_EQ(parse_offload(recording("load-tensors-cuda-h200-lv4.txt")), "5/5");
}

TEST(LlamaDevices, OffloadComesFromTheLastLoadLine) {
  EXPECT_EQ(parse_offload("llama_model_load: x\nload_tensors: offloaded 12/31 layers to GPU\n"
                          "load_tensors: offloaded 31/31 layers to GPU\n"),
            "31/31");
  EXPECT_EQ(parse_offload("load_tensors:   CPU_Mapped model buffer size =    85.82 MiB\n"), "");
}

TEST(LlamaDevices, TheRealBinaryIsProbedAndCached) {
  // A binary that cannot list devices is "unknown", never an error.
  auto d = probe_llama_devices("/bin/false");
  EXPECT_EQ(d.backend, "unknown");
  EXPECT_EQ(probe_llama_devices("/bin/false").backend, "unknown");
}

}  // namespace
}  // namespace warden::engine
