#include "common/config.h"

#include <array>
#include <charconv>
#include <cctype>
#include <filesystem>
#include <optional>
#include <string_view>

namespace warden {
namespace {

// Version of the npm package node-llama-cpp whose llama.cpp source scripts/setup builds.
constexpr const char* k_llama_cpp_package_version = "3.21.1";

constexpr std::array<option_spec, 24> k_table{{
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
     31 * 86400, "How long a tool call waits for a person's allow/deny; then it expires and does not run (the model is told it expired, not that it was refused)"},
    {"workspaces", "--workspaces", "WARDEN_WORKSPACES", option_type::path, "", 0, 0,
     "Folder of the per-session tool workspaces (default: <home>/workspaces)"},
    {"bwrap", "--bwrap", "WARDEN_BWRAP", option_type::path, "", 0, 0,
     "bubblewrap binary for the tool sandbox (default: /usr/bin/bwrap)"},
    {"allowed_hosts", "--allowed-hosts", "WARDEN_ALLOWED_HOSTS", option_type::list, "", 0, 0,
     "Comma-separated extra host names (name or name:port) requests may address warden by; "
     "localhost, 127.0.0.1, [::1] and the bound address are always allowed"},
    {"allowed_origins", "--allowed-origins", "WARDEN_ALLOWED_ORIGINS", option_type::list, "", 0, 0,
     "Comma-separated browser origins (scheme://host[:port]) allowed to call warden besides its own"},
    {"insecure_no_auth", "--insecure-no-auth", "WARDEN_INSECURE_NO_AUTH", option_type::flag, "", 0, 0,
     "Allow a non-loopback --host without --api-key (anyone who can reach the port can run tools)"},
    {"max_permission", "--max-permission", "WARDEN_MAX_PERMISSION", option_type::permission, "", 0, 0,
     "The most a request may ask for: ask < auto < off < full (bypass_permissions)"},
    {"llama_api_key_file", "--llama-api-key-file", "WARDEN_LLAMA_API_KEY_FILE", option_type::path, "", 0, 0,
     "File whose first line is llama-server's API key (default: a random key per launch)"},
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

std::optional<bool> parse_flag(const std::string& raw) {
  std::string v;
  for (char c : raw) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "" || v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

/// Comma-separated items, trimmed, lower-cased (host names and origins are case-insensitive),
/// empty items dropped.
std::vector<std::string> split_list(const std::string& raw) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    while (!cur.empty() && std::isspace(static_cast<unsigned char>(cur.back()))) cur.pop_back();
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  };
  for (char c : raw) {
    if (c == ',') flush();
    else if (!cur.empty() || !std::isspace(static_cast<unsigned char>(c))) {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  flush();
  return out;
}

bool valid_port_text(std::string_view p) {
  if (p.empty() || p.size() > 5) return false;
  unsigned v = 0;
  for (char c : p) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v >= 1 && v <= 65535;
}

/// host, host:port, [v6] or [v6]:port, with only the characters of a DNS name or an address.
bool valid_host_entry(std::string_view h) {
  std::string_view name = h;
  if (!h.empty() && h.front() == '[') {
    const auto close = h.find(']');
    if (close == std::string_view::npos || close < 2) return false;
    for (char c : h.substr(1, close - 1)) {
      if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return false;
    }
    std::string_view rest = h.substr(close + 1);
    return rest.empty() || (rest.front() == ':' && valid_port_text(rest.substr(1)));
  }
  if (const auto colon = h.rfind(':'); colon != std::string_view::npos) {
    if (!valid_port_text(h.substr(colon + 1))) return false;
    name = h.substr(0, colon);
  }
  if (name.empty() || name.size() > 253) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) return false;
  }
  return true;
}

bool valid_origin_entry(std::string_view o) {
  std::string_view rest;
  if (o.rfind("http://", 0) == 0) rest = o.substr(7);
  else if (o.rfind("https://", 0) == 0) rest = o.substr(8);
  else return false;
  return valid_host_entry(rest);
}

std::vector<std::string>& host_list(config& cfg, const std::string& key) {
  return key == "allowed_hosts" ? cfg.allowed_hosts : cfg.allowed_origins;
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
    case option_type::flag:
      if (!parse_flag(raw)) return bad_value(s, raw, "a boolean (true/false, 1/0, yes/no, on/off)");
      break;
    case option_type::permission:
      if (raw != "ask" && raw != "auto" && raw != "off" && raw != "full") {
        return bad_value(s, raw, "one of ask, auto, off, full");
      }
      break;
    case option_type::list:
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
  else if (key == "allowed_hosts" || key == "allowed_origins") {
    std::vector<std::string> items;
    for (auto& item : split_list(raw)) {
      const bool host = key == "allowed_hosts";
      if (!(host ? valid_host_entry(item) : valid_origin_entry(item))) {
        return bad_value(s, item, host ? "a host name or address, optionally with :port (no scheme, no path)"
                                       : "an origin such as http://localhost:3000 (scheme://host[:port], no path; "
                                         "'null' and '*' are never allowed)");
      }
      items.push_back(std::move(item));
    }
    (host_list(cfg, key)) = std::move(items);
  } else if (key == "insecure_no_auth") cfg.insecure_no_auth = *parse_flag(raw);
  else if (key == "max_permission") cfg.max_permission = raw;
  else if (key == "llama_api_key_file") cfg.llama_api_key_file = raw;
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
  if (key == "max_permission") return d.max_permission;
  return "";
}

std::string default_model_path(const std::string& home) {
  return (std::filesystem::path(home) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf").string();
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
