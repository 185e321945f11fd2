// The smoke driver's own test (fuzz/CMakeLists.txt, ctest fuzz/smoke_catches_a_crash): a harness
// that breaks its invariant on any input containing "boom". Its seed is "boo" and its dictionary
// "m", so the driver must reach the crash by mutation, report it and write the input.
#include <string_view>

#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = warden::fuzz::as_text(data, size);
  warden::fuzz::check(text.find("boom") == std::string_view::npos, "the input has no \"boom\"");
  return 0;
}
