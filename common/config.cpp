#include "common/config.h"

#include <array>
#include <charconv>
#include <filesystem>

namespace warden {
namespace {

// Version of the npm package node-llama-cpp whose llama.cpp source scripts/setup builds.
constexpr const char* k_llama_cpp_package_version = "3.21.1";

constexpr std::array<option_spec, 19> k_table{{
    {"host", "--host", "WARDEN_HOST", option_type::string, "", 0, 0,
     "Address to bind; 0.0.0.0 opens the server to the network"},
    {"port", "--port", "WARDEN_PORT", option_type::integer, "", 0, 65535,
     "Port to bind (0 = any free port)"},
    {"model", "--model", "WARDEN_MODEL", option_type::path, "", 0, 0,
     "GGUF model to serve with llama-server (default: the model set-up downloaded)"},
    {"model_id", "--model-id", "WARDEN_MODEL_ID", option_type::string, "", 0, 0,
     "Public model id (default: the GGUF file name without .gguf, or the upstream's first model)"},
    {"upstream", "--upstream", "WARDEN_UPSTREAM", option_type::url, "", 0, 0,
     "Use an existing OpenAI-compatible server instead of llama-server, e.g. http://host:8080/v1"},
    {"upstream_api_key", "--upstream-api-key", "WARDEN_UPSTREAM_API_KEY", option_type::string, "",
     0, 0, "Bearer key for --upstream"},
    {"ctx", "--ctx", "WARDEN_CTX", option_type::integer, "tokens", 256, 1048576,
     "Context size shared by all slots (llama-server -c)"},
    {"parallel", "--parallel", "WARDEN_PARALLEL", option_type::integer, "slots", 1, 64,
     "Concurrent llama-server slots (--parallel)"},
    {"api_key", "--api-key", "WARDEN_API_KEY", option_type::string, "", 0, 0,
     "Require this key (Authorization: Bearer or X-Api-Key) on /v1/* and /api/*"},
    {"llama_server", "--llama-server", "WARDEN_LLAMA_SERVER", option_type::path, "", 0, 0,
     "llama-server binary (default: the one set-up built)"},
    {"home", "--home", "WARDEN_HOME", option_type::path, "", 0, 0,
     "Cache and state folder (default: ~/.cache/warden)"},
    {"load_timeout_s", "--load-timeout", "WARDEN_LOAD_TIMEOUT_S", option_type::integer, "s", 1,
     86400, "How long llama-server may take to load the model"},
    {"sse_ping_interval_ms", "--sse-ping-interval", "WARDEN_SSE_PING_INTERVAL_MS",
     option_type::integer, "ms", 10, 3600000, "SSE keep-alive comment while the model is silent"},
    {"max_body_bytes", "--max-body", "WARDEN_MAX_BODY_BYTES", option_type::integer, "bytes", 1024,
     1LL << 32, "Largest request body accepted (413 above)"},
    {"io_threads", "--threads", "WARDEN_THREADS", option_type::integer, "threads", 1, 256,
     "Threads serving HTTP and streams"},
    {"approval_timeout_s", "--approval-timeout", "WARDEN_APPROVAL_TIMEOUT_S", option_type::integer, "s", 1,
     31 * 86400, "How long a tool call waits for a person's allow/deny before it counts as deny"},
    {"workspaces", "--workspaces", "WARDEN_WORKSPACES", option_type::path, "", 0, 0,
     "Folder of the per-session tool workspaces (default: <home>/workspaces)"},
    {"bwrap", "--bwrap", "WARDEN_BWRAP", option_type::path, "", 0, 0,
     "bubblewrap binary for the tool sandbox (default: /usr/bin/bwrap)"},
    {"log_level", "--log-level", "WARDEN_LOG_LEVEL", option_type::level, "", 0, 0,
     "trace, debug, info, warn, error or off"},
}};

std::string range_text(const option_spec& s) {
  return std::to_string(s.min_value) + ".." + std::to_string(s.max_value);
}

error bad_value(const option_spec& s, const std::string& raw, const std::string& want) {
  return make_error(errc::invalid_request,
                    std::string("invalid value for ") + s.flag + " (" + s.env + "): '" + raw +
                        "' is not " + want,
                    s.key);
}

}  // namespace

std::span<const option_spec> config_table() { return k_table; }

result<void> apply_option(config& cfg, const option_spec& s, const std::string& raw) {
  const std::string key = s.key;
  std::int64_t num = 0;
  switch (s.type) {
    case option_type::integer: {
      const char* first = raw.data();
      const char* last = raw.data() + raw.size();
      auto [ptr, ec] = std::from_chars(first, last, num);
      if (raw.empty() || ec != std::errc{} || ptr != last || num < s.min_value ||
          num > s.max_value) {
        return bad_value(s, raw, "an integer in " + range_text(s) + (*s.unit ? std::string(" ") + s.unit : ""));
      }
      break;
    }
    case option_type::url:
      if (!raw.empty() && raw.rfind("http://", 0) != 0 && raw.rfind("https://", 0) != 0) {
        return bad_value(s, raw, "an http:// or https:// URL");
      }
      break;
    case option_type::level:
      if (raw != "trace" && raw != "debug" && raw != "info" && raw != "warn" && raw != "error" &&
          raw != "off") {
        return bad_value(s, raw, "one of trace, debug, info, warn, error, off");
      }
      break;
    case option_type::path:
    case option_type::string:
      break;
  }
  if (key == "host") {
    if (raw.empty()) return bad_value(s, raw, "a host name or address");
    cfg.host = raw;
  } else if (key == "port") cfg.port = static_cast<int>(num);
  else if (key == "model") cfg.model_path = raw;
  else if (key == "model_id") cfg.model_id = raw;
  else if (key == "upstream") cfg.upstream_url = raw;
  else if (key == "upstream_api_key") cfg.upstream_api_key = raw;
  else if (key == "ctx") cfg.ctx_tokens = static_cast<int>(num);
  else if (key == "parallel") cfg.parallel_slots = static_cast<int>(num);
  else if (key == "api_key") cfg.api_key = raw;
  else if (key == "llama_server") cfg.llama_server_path = raw;
  else if (key == "home") cfg.home = raw;
  else if (key == "load_timeout_s") cfg.load_timeout_s = static_cast<int>(num);
  else if (key == "sse_ping_interval_ms") cfg.sse_ping_interval_ms = static_cast<int>(num);
  else if (key == "max_body_bytes") cfg.max_body_bytes = num;
  else if (key == "io_threads") cfg.io_threads = static_cast<int>(num);
  else if (key == "log_level") cfg.log_level = raw;
  else if (key == "approval_timeout_s") cfg.approval_timeout_s = static_cast<int>(num);
  else if (key == "workspaces") cfg.workspaces_dir = raw;
  else if (key == "bwrap") cfg.bwrap_path = raw;
  else return make_error(errc::internal, "config table has no setter for " + key);
  return {};
}

std::string default_text(const option_spec& s) {
  const config d{};
  const std::string key = s.key;
  if (key == "host") return d.host;
  if (key == "port") return std::to_string(d.port);
  if (key == "ctx") return std::to_string(d.ctx_tokens);
  if (key == "parallel") return std::to_string(d.parallel_slots);
  if (key == "load_timeout_s") return std::to_string(d.load_timeout_s);
  if (key == "sse_ping_interval_ms") return std::to_string(d.sse_ping_interval_ms);
  if (key == "max_body_bytes") return std::to_string(d.max_body_bytes);
  if (key == "io_threads") return std::to_string(d.io_threads);
  if (key == "log_level") return d.log_level;
  if (key == "approval_timeout_s") return std::to_string(d.approval_timeout_s);
  if (key == "bwrap") return d.bwrap_path;
  return "";
}

std::string default_model_path(const std::string& home) {
  return (std::filesystem::path(home) / "models" / "gemma-3-270m-q4_k_m.gguf").string();
}

std::string default_llama_server_path(const std::string& home) {
  return (std::filesystem::path(home) / "llama.cpp" / k_llama_cpp_package_version / "bin" /
          "llama-server")
      .string();
}

result<void> finalize(config& cfg, const std::string& user_home) {
  if (cfg.home.empty()) {
    if (user_home.empty()) {
      return make_error(errc::invalid_request, "neither --home (WARDEN_HOME) nor HOME is set", "home");
    }
    cfg.home = (std::filesystem::path(user_home) / ".cache" / "warden").string();
  }
  if (cfg.workspaces_dir.empty()) cfg.workspaces_dir = (std::filesystem::path(cfg.home) / "workspaces").string();
  cfg.workspaces_dir = std::filesystem::absolute(cfg.workspaces_dir).lexically_normal().string();
  if (!cfg.upstream_url.empty() && !cfg.model_path.empty()) {
    return make_error(errc::invalid_request,
                      "--model and --upstream are exclusive: serve a local GGUF or use an existing "
                      "server, not both",
                      "upstream");
  }
  if (cfg.upstream_url.empty()) {
    if (cfg.model_path.empty()) cfg.model_path = default_model_path(cfg.home);
    if (cfg.llama_server_path.empty()) cfg.llama_server_path = default_llama_server_path(cfg.home);
    if (cfg.model_id.empty()) {
      cfg.model_id = std::filesystem::path(cfg.model_path).stem().string();
    }
  }
  while (!cfg.upstream_url.empty() && cfg.upstream_url.back() == '/') cfg.upstream_url.pop_back();
  return {};
}

}  // namespace warden
