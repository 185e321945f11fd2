#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "app/commands.h"
#include "engine/http_client.h"
#include "engine/llama_server.h"

namespace warden::app {

namespace {

struct reporter {
  int failures = 0;
  void line(bool ok, const std::string& what, const std::string& detail) {
    std::printf("[%s] %-13s %s\n", ok ? " ok " : "FAIL", what.c_str(), detail.c_str());
    if (!ok) ++failures;
  }
  void info(const std::string& what, const std::string& detail) {
    std::printf("[info] %-13s %s\n", what.c_str(), detail.c_str());
  }
};

std::string first_line_of(const std::string& cmd) {
  std::array<char, 512> buf{};
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    while (std::fgets(buf.data(), buf.size(), p)) {
      out = buf.data();
      if (out.find("version") != std::string::npos) break;
    }
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

int run_doctor(const config& cfg) {
  namespace fs = std::filesystem;
  reporter r;
  r.info("home", cfg.home);
  if (!cfg.upstream_url.empty()) {
    auto [status, body] = engine::http_client::get_blocking(cfg.upstream_url + "/models", {}, 3000);
    r.line(status == 200, "upstream", cfg.upstream_url + (status == 200 ? " answers /models"
                                                                        : " does not answer /models (HTTP " +
                                                                              std::to_string(status) + ")"));
  } else {
    std::error_code ec;
    const bool bin_ok = fs::exists(cfg.llama_server_path, ec) && ::access(cfg.llama_server_path.c_str(), X_OK) == 0;
    r.line(bin_ok, "llama-server",
           bin_ok ? cfg.llama_server_path + " (" + first_line_of("'" + cfg.llama_server_path + "' --version 2>&1") + ")"
                  : cfg.llama_server_path + " missing: run `make setup` or pass --llama-server");
    bool model_ok = false;
    std::string detail = cfg.model_path;
    if (fs::is_regular_file(cfg.model_path, ec)) {
      std::ifstream f(cfg.model_path, std::ios::binary);
      char magic[4] = {};
      f.read(magic, 4);
      model_ok = std::string(magic, 4) == "GGUF";
      detail += " (" + std::to_string(fs::file_size(cfg.model_path, ec) / (1024 * 1024)) + " MiB" +
                (model_ok ? ", GGUF)" : ", NOT a GGUF file)");
    } else {
      detail += " missing: run `make setup` or pass --model";
    }
    r.line(model_ok, "model", detail);
  }
  auto port = engine::pick_free_port();
  r.line(port.ok(), "loopback", port.ok() ? "can bind 127.0.0.1" : port.error().message);
  std::error_code ec;
  const bool bwrap = fs::exists("/usr/bin/bwrap", ec);
  r.info("sandbox", bwrap ? "bubblewrap found at /usr/bin/bwrap (server-side tools are not enabled yet)"
                          : "bubblewrap not installed (needed for server-side tools later)");
  std::printf("%s\n", r.failures == 0 ? "all checks passed" : "some checks failed");
  return r.failures == 0 ? 0 : 1;
}

}  // namespace warden::app
