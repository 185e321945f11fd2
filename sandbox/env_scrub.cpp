#include "sandbox/env_scrub.h"

#include <algorithm>

#include "secrets/secret_detect.h"

namespace warden::sandbox {
namespace {
constexpr std::string_view k_moved[] = {"HOME", "TMPDIR", "TEMP", "TMP", "USERPROFILE", "APPDATA", "LOCALAPPDATA"};
}  // namespace

std::vector<std::string> bypass_env(const std::vector<std::string>& server_env, const std::string& home) {
  std::vector<std::string> out;
  bool has_mpl = false;
  for (const auto& kv : server_env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string_view name(kv.data(), eq);
    const std::string_view value(kv.data() + eq + 1, kv.size() - eq - 1);
    if (is_secret_variable(name, value)) continue;
    if (std::find(std::begin(k_moved), std::end(k_moved), name) != std::end(k_moved)) continue;
    if (name == "MPLBACKEND") has_mpl = true;
    out.push_back(kv);
  }
  for (auto m : {"HOME", "TMPDIR", "TEMP", "TMP"}) out.push_back(std::string(m) + "=" + home);
  if (!has_mpl) out.push_back("MPLBACKEND=Agg");
  return out;
}

}  // namespace warden::sandbox
