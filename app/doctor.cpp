#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "app/commands.h"
#include "engine/gguf_info.h"
#include "sandbox/call_cgroup.h"
#include "sandbox/runner.h"
#include "engine/http_client.h"
#include "engine/llama_devices.h"
#include "engine/llama_server.h"
#include "http/api_keys.h"
#include "http/server.h"

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

/// "cuda: CUDA0 NVIDIA H200 (143771 MiB)", or "cpu (no GPU devices)".
std::string backend_line(const engine::llama_devices& d) {
  if (d.devices.empty()) return d.backend + (d.backend == "cpu" ? " (no GPU devices in this build)" : "");
  std::string s = d.backend + ":";
  for (const auto& dev : d.devices) {
    s += " " + dev.name + " " + dev.description;
    if (dev.total_mib > 0) s += " (" + std::to_string(dev.total_mib) + " MiB)";
  }
  return s;
}

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

/// What limits each tool call (sandbox/limits.h): the call cgroup's places on this machine, and
/// the fallbacks where a controller has none.
std::string call_limits_line(const config& cfg) {
  using sandbox::cgroup_controller;
  bool held[3] = {false, false, false};
  for (const auto& p : sandbox::call_cgroup_places()) held[static_cast<int>(p.controller)] = true;
  const std::string where = sandbox::call_cgroup_summary();
  std::string out = "each tool call: " + std::string(where.empty() ? "no usable cgroup" : "a cgroup (" + where + ")");
  if (held[static_cast<int>(cgroup_controller::pids)]) {
    out += "; " + std::to_string(sandbox::k_max_processes) + " processes";
  } else if (::geteuid() == 0) {
    out += "; " + std::to_string(sandbox::k_max_processes) +
           " processes of uid 65534 for all calls together (RLIMIT_NPROC: one call's flood blocks the others)";
  } else {
    out += "; no process cap";
  }
  out += held[static_cast<int>(cgroup_controller::memory)]
             ? "; " + std::to_string(cfg.call_memory_mib) + " MiB memory"
             : "; memory only per process (8 GiB address space)";
  if (held[static_cast<int>(cgroup_controller::cpu)]) out += "; equal CPU weight";
  out += "; /tmp " + std::to_string(sandbox::k_tmp_bytes / sandbox::k_mib) + " MiB, /dev/shm " +
         std::to_string(sandbox::k_shm_bytes / sandbox::k_mib) + " MiB; each session's workspace " +
         std::to_string(cfg.workspace_quota_mib) + " MiB (--workspace-quota)";
  return out;
}

}  // namespace

int run_doctor(const config& cfg) {
  namespace fs = std::filesystem;
  reporter r;
  r.info("home", cfg.home);
  if (!cfg.upstream_url.empty()) {
    const auto reply = engine::http_client::get_blocking(cfg.upstream_url + "/models", {}, 3000);
    const bool ok = reply && reply->status == 200;
    r.line(ok, "upstream", cfg.upstream_url + (ok      ? " answers /models"
                                               : reply ? " does not answer /models (HTTP " + std::to_string(reply->status) + ")"
                                                       : " does not answer /models (unreachable: " + reply.error().message + ")"));
  } else {
    std::error_code ec;
    const bool bin_ok = fs::exists(cfg.llama_server_path, ec) && ::access(cfg.llama_server_path.c_str(), X_OK) == 0;
    r.line(bin_ok, "llama-server",
           bin_ok ? cfg.llama_server_path + " (" + first_line_of("'" + cfg.llama_server_path + "' --version 2>&1") + ")"
                  : cfg.llama_server_path + " missing: run `make setup` or pass --llama-server");
    if (bin_ok) r.line(true, "backend", backend_line(engine::probe_llama_devices(cfg.llama_server_path)));
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
  r.line(port.ok(), "loopback", port.ok() ? "can bind 127.0.0.1 (llama-server's port)" : port.error().message);
  {
    // Can `warden serve` bind its own address?
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(cfg.port));
    const bool ip_ok = ::inet_pton(AF_INET, cfg.host.c_str(), &addr.sin_addr) == 1;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const bool bound = fd >= 0 && ip_ok && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    const std::string where = cfg.host + ":" + std::to_string(cfg.port);
    if (fd >= 0) ::close(fd);
    if (!ip_ok) r.info("listen", where + " (not an IPv4 address; not checked)");
    else r.line(bound, "listen", bound ? where + " is free" : where + " is in use: pick another with --port");
  }
  if (!cfg.api_keys_file.empty()) {
    auto keys = http::read_api_keys_file(cfg.api_keys_file);
    r.line(keys.ok(), "api keys",
           keys ? std::to_string(keys->size()) + " named key(s) in " + cfg.api_keys_file + "; each owner sees its own"
                : keys.error().message);
  }
  if (http::binds_loopback_only(cfg.host)) {
    r.line(true, "exposure", cfg.host + " is loopback only; web pages are refused (Host, Origin, Content-Type checks)");
  } else if (!cfg.api_key.empty() || !cfg.api_keys_file.empty()) {
    r.line(true, "exposure", cfg.host + " is reachable from the network; every route but /health needs the API key");
  } else if (cfg.insecure_no_auth) {
    r.info("exposure", cfg.host + " is reachable from the network WITHOUT an API key (--insecure-no-auth): "
                       "anyone who can reach it can run tools");
  } else {
    r.line(false, "exposure", cfg.host + " is reachable from the network and no --api-key is set: serve refuses "
                              "to start; set --api-key, or --insecure-no-auth to accept the risk");
  }
  r.info("permission", "requests may ask for up to '" + cfg.max_permission + "' (--max-permission; ask < auto < off < full)");
  if (local_replicas(cfg) > 0) {
    const std::string preload = engine::nodump_preload_path();
    r.line(!preload.empty(), "hardening",
           preload.empty() ? std::string(engine::k_nodump_preload_name) +
                                 " is missing next to the warden binary: llama-server would be dumpable (its key "
                                 "readable by your other processes); rebuild with `make setup`"
                           : "llama-server runs non-dumpable (" + preload + "), minimal environment, key through a pipe");
  }
  sandbox::sandbox jail(sandbox::sandbox_policy{cfg.bwrap_path});
  const auto sb = jail.probe();
  r.line(sb.available, "sandbox", sb.available ? sb.detail : sb.detail + "; fix: " + sb.fix);
  r.info("limits", call_limits_line(cfg));
  if (local_replicas(cfg) > 0) {
    if (auto info = engine::read_gguf_info(cfg.model_path)) {
      r.info("gguf", "architecture " + info->architecture + ", native context " +
                         std::to_string(info->context_length) + " tokens, " +
                         (info->has_chat_template ? "own chat template" : "no chat template (llama-server uses ChatML)"));
    }
  }
  std::printf("%s\n", r.failures == 0 ? "all checks passed" : "some checks failed");
  return r.failures == 0 ? 0 : 1;
}

}  // namespace warden::app
