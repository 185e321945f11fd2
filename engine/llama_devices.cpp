#include "engine/llama_devices.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

namespace warden::engine {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

}  // namespace

llama_devices parse_list_devices(std::string_view output) {
  static const std::regex line(R"(^\s+([A-Za-z]+)(\d*):\s*(.*?)\s*(?:\((\d+) MiB, (\d+) MiB free\))?\s*$)");
  llama_devices out;
  std::istringstream in{std::string(output)};
  std::string l;
  bool listing = false;
  while (std::getline(in, l)) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (l.rfind("Available devices:", 0) == 0) {
      listing = true;
      continue;
    }
    std::smatch m;
    if (!listing || !std::regex_match(l, m, line)) continue;
    llama_device d;
    d.name = m[1].str() + m[2].str();
    d.description = m[3].str();
    if (m[4].matched) d.total_mib = std::stoll(m[4].str());
    if (m[5].matched) d.free_mib = std::stoll(m[5].str());
    if (out.devices.empty()) out.backend = lower(m[1].str());
    out.devices.push_back(std::move(d));
  }
  return out;
}

std::string parse_offload(std::string_view output) {
  static const std::regex offload(R"(offloaded (\d+)/(\d+) layers to GPU)");
  std::string found;
  const std::string text(output);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), offload); it != std::sregex_iterator(); ++it) {
    found = (*it)[1].str() + "/" + (*it)[2].str();  // the last load's
  }
  return found;
}

llama_devices probe_llama_devices(const std::string& binary) {
  static std::mutex mu;
  static std::map<std::string, llama_devices> cache;
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(binary); it != cache.end()) return it->second;
  }
  llama_devices found;
  found.backend = "unknown";
  const std::string cmd = "timeout 10 " + quoted(binary) + " --list-devices 2>&1";
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    std::string text;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) text.append(buf.data(), n);
    if (::pclose(p) == 0 && text.find("Available devices:") != std::string::npos) found = parse_list_devices(text);
  }
  std::lock_guard lock(mu);
  cache[binary] = found;
  return found;
}

}  // namespace warden::engine
