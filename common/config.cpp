#include "common/config.h"
#include "common/text.h"

#include "common/secret_file.h"
#include "common/upstream_url.h"

#include <array>
#include <charconv>
#include <cctype>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>

namespace warden {
namespace {

// Version of the npm package node-llama-cpp whose llama.cpp source scripts/setup builds.
constexpr const char* k_llama_cpp_package_version = "3.21.1";

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


const char* non_empty_host(std::string_view v) { return v.empty() ? "a host name or address" : nullptr; }

const char* host_entry(std::string_view v) {
  return valid_host_entry(v) ? nullptr : "a host name or address, optionally with :port (no scheme, no path)";
}

const char* search_backend_entry(std::string_view v) {
  if (v == "none" || v == "duckduckgo") return nullptr;
  if (v.rfind("duckduckgo:", 0) == 0 && has_http_scheme(v.substr(11))) return nullptr;
  if (v.rfind("searxng:", 0) == 0 && has_http_scheme(v.substr(8))) return nullptr;
  return "none, duckduckgo, duckduckgo:http(s)://URL or searxng:http(s)://URL";
}

const char* origin_entry(std::string_view v) {
  return valid_origin_entry(v) ? nullptr
                               : "an origin such as http://localhost:3000 (scheme://host[:port], no path; "
                                 "'null' and '*' are never allowed)";
}

using t = option_type;

// One row per option, in --help order. Fields left out are empty ("", 0, no check).
constexpr std::array<option_spec, 59> k_table{{
    {.key = "host", .flag = "--host", .env = "WARDEN_HOST", .type = t::string, .unit = "", .default_value = "127.0.0.1",
     .help = "Address to bind; 0.0.0.0 opens the server to the network", .field = &config::host,
     .check = non_empty_host},
    {.key = "port", .flag = "--port", .env = "WARDEN_PORT", .type = t::integer, .unit = "", .default_value = "8888",
     .min_value = 0, .max_value = 65535, .help = "Port to bind (0 = any free port)", .field = &config::port},
    {.key = "model", .flag = "--model", .env = "WARDEN_MODEL", .type = t::path, .unit = "", .default_value = "",
     .help = "GGUF model to serve with llama-server (default: the model set-up downloaded)",
     .field = &config::model_path},
    {.key = "model_id", .flag = "--model-id", .env = "WARDEN_MODEL_ID", .type = t::string, .unit = "",
     .default_value = "",
     .help = "Public model id (default: the GGUF file name without .gguf, or the upstream's first model)",
     .field = &config::model_id},
    {.key = "upstream", .flag = "--upstream", .env = "WARDEN_UPSTREAM", .type = t::url, .unit = "",
     .default_value = "",
     .help = "Use an existing OpenAI-compatible server instead of llama-server, e.g. http://host:8080/v1",
     .field = &config::upstream_url},
    {.key = "upstream_api_key", .flag = "--upstream-api-key", .env = "WARDEN_UPSTREAM_API_KEY", .type = t::string,
     .unit = "", .default_value = "", .help = "Bearer key for --upstream", .field = &config::upstream_api_key},
    {.key = "ctx", .flag = "--ctx", .env = "WARDEN_CTX", .type = t::integer, .unit = "tokens", .default_value = "8192",
     .min_value = 256, .max_value = 1048576, .help = "Context size shared by all slots (llama-server -c)",
     .field = &config::ctx_tokens},
    {.key = "parallel", .flag = "--parallel", .env = "WARDEN_PARALLEL", .type = t::integer, .unit = "slots",
     .default_value = "4", .min_value = 1, .max_value = 64, .help = "Concurrent llama-server slots (--parallel)",
     .field = &config::parallel_slots},
    {.key = "queue_max", .flag = "--queue-max", .env = "WARDEN_QUEUE_MAX", .type = t::integer, .unit = "requests",
     .default_value = "0", .min_value = 0, .max_value = 1 << 20,
     .help = "Requests that may wait for a slot of the engine; one more gets 429 with Retry-After (0: max(64, 16 x "
             "slots))",
     .field = &config::queue_max},
    {.key = "queue_per_key", .flag = "--queue-per-key", .env = "WARDEN_QUEUE_PER_KEY", .type = t::integer,
     .unit = "requests", .default_value = "0", .min_value = 0, .max_value = 1 << 20,
     .help = "Waiting places one named API key may hold, so one client cannot fill the queue (0: half the queue)",
     .field = &config::queue_per_key},
    {.key = "queue_timeout_s", .flag = "--queue-timeout", .env = "WARDEN_QUEUE_TIMEOUT_S", .type = t::integer,
     .unit = "s", .default_value = "0", .min_value = 0, .max_value = 86400,
     .help = "Longest wait for a slot of the engine; then 503 (0: no limit)", .field = &config::queue_timeout_s},
    {.key = "upstream_slots", .flag = "--upstream-slots", .env = "WARDEN_UPSTREAM_SLOTS", .type = t::integer,
     .unit = "slots", .default_value = "0", .min_value = 0, .max_value = 4096,
     .help = "Requests --upstream serves at once; more wait in warden's queue (0: no queue in front of --upstream)",
     .field = &config::upstream_slots},
    {.key = "upstreams_file", .flag = "--upstreams-file", .env = "WARDEN_UPSTREAMS_FILE", .type = t::path, .unit = "",
     .default_value = "",
     .help = "More engines for the pool, one 'URL [model=ID] [slots=N] [key_env=VAR]' per line (# comments)",
     .field = &config::upstreams_file},
    {.key = "replicas", .flag = "--replicas", .env = "WARDEN_REPLICAS", .type = t::integer, .unit = "children",
     .default_value = "0", .min_value = 0, .max_value = 16,
     .help = "llama-server children of the model in the pool, beside any --upstream (0: one, or none with --upstream)",
     .field = &config::replicas},
    {.key = "engine_head_timeout_s", .flag = "--engine-head-timeout", .env = "WARDEN_ENGINE_HEAD_TIMEOUT_S",
     .type = t::integer, .unit = "s", .default_value = "120", .min_value = 0, .max_value = 86400,
     .help = "In a pool, a streamed request whose engine sends no answer head this long goes to another engine (0: "
             "no limit)",
     .field = &config::engine_head_timeout_s},
    {.key = "no_queue", .flag = "--no-queue", .env = "WARDEN_NO_QUEUE", .type = t::flag, .unit = "", .default_value = "",
     .help = "No admission queue: every request goes straight to the engine", .field = &config::no_queue},
    {.key = "metrics_key", .flag = "--metrics-key", .env = "WARDEN_METRICS_KEY", .type = t::string, .unit = "",
     .default_value = "",
     .help = "A key of its own for GET /metrics (a scraper's, good for nothing else); default: the API key guards it",
     .field = &config::metrics_key},
    {.key = "no_api_monitor", .flag = "--no-api-monitor", .env = "WARDEN_NO_API_MONITOR", .type = t::flag, .unit = "",
     .default_value = "",
     .help = "Keep no API monitor (GET /api/inference/monitor: the last 50 model requests, prompts and replies redacted)",
     .field = &config::no_api_monitor},
    {.key = "api_key", .flag = "--api-key", .env = "WARDEN_API_KEY", .type = t::string, .unit = "",
     .default_value = "", .help = "Require this key (Authorization: Bearer or X-Api-Key) on /v1/* and /api/*",
     .field = &config::api_key},
    {.key = "api_keys_file", .flag = "--api-keys-file", .env = "WARDEN_API_KEYS_FILE", .type = t::path, .unit = "",
     .default_value = "",
     .help = "Named API keys for several people: one 'NAME ROLE KEY' per line, ROLE user or admin (chmod 600); a "
             "user key sees and acts on its own sessions, approvals, rules, runs and audit rows only, an admin "
             "key on everyone's. Instead of --api-key",
     .field = &config::api_keys_file},
    {.key = "llama_server", .flag = "--llama-server", .env = "WARDEN_LLAMA_SERVER", .type = t::path, .unit = "",
     .default_value = "", .help = "llama-server binary (default: the one set-up built)",
     .field = &config::llama_server_path},
    {.key = "home", .flag = "--home", .env = "WARDEN_HOME", .type = t::path, .unit = "", .default_value = "",
     .help = "Cache and state folder (default: ~/.cache/warden)", .field = &config::home},
    {.key = "load_timeout_s", .flag = "--load-timeout", .env = "WARDEN_LOAD_TIMEOUT_S", .type = t::integer,
     .unit = "s", .default_value = "600", .min_value = 1, .max_value = 86400,
     .help = "How long llama-server may take to load the model", .field = &config::load_timeout_s},
    {.key = "models_dir", .flag = "--models-dir", .env = "WARDEN_MODELS_DIR", .type = t::path, .unit = "",
     .default_value = "", .help = "The model library: GGUF files listed, loaded and pulled here (default: <home>/models)",
     .field = &config::models_dir},
    {.key = "hf_endpoint", .flag = "--hf-endpoint", .env = "WARDEN_HF_ENDPOINT", .type = t::url, .unit = "",
     .default_value = "https://huggingface.co",
     .help = "Where hf: \"owner/repo:file\" pulls resolve (<endpoint>/<owner>/<repo>/resolve/main/<file>)",
     .field = &config::hf_endpoint},
    {.key = "auto_swap", .flag = "--auto-swap", .env = "WARDEN_AUTO_SWAP", .type = t::flag, .unit = "",
     .default_value = "",
     .help = "A request naming another model of the library loads it first (after every check of the request; "
             "streams in flight finish first)",
     .field = &config::auto_swap},
    {.key = "idle_unload_s", .flag = "--idle-unload", .env = "WARDEN_IDLE_UNLOAD_S", .type = t::integer, .unit = "s",
     .default_value = "0", .min_value = 0, .max_value = 2592000,
     .help = "Unload the model after this long without a request (0 = never); the next request loads it again",
     .field = &config::idle_unload_s},
    {.key = "sse_ping_interval_ms", .flag = "--sse-ping-interval", .env = "WARDEN_SSE_PING_INTERVAL_MS",
     .type = t::integer, .unit = "ms", .default_value = "15000", .min_value = 10, .max_value = 3600000,
     .help = "SSE keep-alive comment while the model is silent", .field = &config::sse_ping_interval_ms},
    {.key = "max_body_bytes", .flag = "--max-body", .env = "WARDEN_MAX_BODY_BYTES", .type = t::integer,
     .unit = "bytes", .default_value = "33554432", .min_value = 1024, .max_value = 1LL << 32,
     .help = "Largest request body accepted (413 above)", .field = &config::max_body_bytes},
    {.key = "header_timeout_s", .flag = "--header-timeout", .env = "WARDEN_HEADER_TIMEOUT_S", .type = t::integer,
     .unit = "s", .default_value = "10", .min_value = 1, .max_value = 3600,
     .help = "A request's head must arrive within this long; an idle keep-alive connection is closed after it",
     .field = &config::header_timeout_s},
    {.key = "max_connections", .flag = "--max-connections", .env = "WARDEN_MAX_CONNECTIONS", .type = t::integer,
     .unit = "connections", .default_value = "0", .min_value = 0, .max_value = 1 << 24,
     .help = "Connections open at once; past it only /health, tool-confirm, the approvals inbox and cancel are "
             "served (64 more), others get 503 with Retry-After (0: the open-file limit less 192)",
     .field = &config::max_connections},
    {.key = "max_pending_body_bytes", .flag = "--max-pending-body", .env = "WARDEN_MAX_PENDING_BODY_BYTES",
     .type = t::integer, .unit = "bytes", .default_value = "268435456", .min_value = 1024, .max_value = 1LL << 40,
     .help = "Request bodies being received or handled at once, in bytes; a request past it gets 503 with "
             "Retry-After before its body is read",
     .field = &config::max_pending_body_bytes},
    {.key = "io_threads", .flag = "--threads", .env = "WARDEN_THREADS", .type = t::integer, .unit = "threads",
     .default_value = "2", .min_value = 1, .max_value = 256, .help = "Threads serving HTTP and streams",
     .field = &config::io_threads},
    {.key = "approval_timeout_s", .flag = "--approval-timeout", .env = "WARDEN_APPROVAL_TIMEOUT_S",
     .type = t::integer, .unit = "s", .default_value = "3600", .min_value = 1, .max_value = 31 * 86400,
     .help = "How long a tool call waits for a person's allow/deny; then it expires and does not run (the model "
             "is told it expired, not that it was refused)",
     .field = &config::approval_timeout_s},
    {.key = "workspaces", .flag = "--workspaces", .env = "WARDEN_WORKSPACES", .type = t::path, .unit = "",
     .default_value = "", .help = "Folder of the per-session tool workspaces (default: <home>/workspaces)",
     .field = &config::workspaces_dir},
    {.key = "bwrap", .flag = "--bwrap", .env = "WARDEN_BWRAP", .type = t::path, .unit = "",
     .default_value = "/usr/bin/bwrap",
     .help = "bubblewrap binary for the tool sandbox (default: /usr/bin/bwrap)", .field = &config::bwrap_path},
    {.key = "call_memory_mib", .flag = "--call-memory", .env = "WARDEN_CALL_MEMORY_MIB", .type = t::integer,
     .unit = "MiB", .default_value = "4096", .min_value = 64, .max_value = 1 << 22,
     .help = "Memory of one sandboxed tool call: all its processes and its /tmp together, in a cgroup of its own "
             "(past it the kernel kills the call's largest process); needs a usable memory cgroup (warden doctor)",
     .field = &config::call_memory_mib},
    {.key = "workspace_quota_mib", .flag = "--workspace-quota", .env = "WARDEN_WORKSPACE_QUOTA_MIB",
     .type = t::integer, .unit = "MiB", .default_value = "1024", .min_value = 1, .max_value = 1 << 24,
     .help = "Disk quota of one session's tool workspace: measured before each tool call, which is not run "
             "while the workspace holds more",
     .field = &config::workspace_quota_mib},
    {.key = "warm_jails", .flag = "--warm-jails", .env = "WARDEN_WARM_JAILS", .type = t::integer, .unit = "",
     .default_value = "8", .min_value = 0, .max_value = 256,
     .help = "Sandboxed jails kept started ahead of their call, one per recently used session workspace (each "
             "serves one call, then a new one is made; 0: every call starts its jail cold)",
     .field = &config::warm_jails},
    {.key = "responses_quota_mib", .flag = "--responses-quota", .env = "WARDEN_RESPONSES_QUOTA_MIB",
     .type = t::integer, .unit = "MiB", .default_value = "4096", .min_value = 0, .max_value = 1 << 24,
     .help = "Bytes all stored Responses (and their stream events) may take; a request that would store past it "
             "gets 429 storage_quota_exceeded (0: no quota)",
     .field = &config::responses_quota_mib},
    {.key = "responses_session_quota_mib", .flag = "--responses-session-quota",
     .env = "WARDEN_RESPONSES_SESSION_QUOTA_MIB", .type = t::integer, .unit = "MiB", .default_value = "1024",
     .min_value = 0, .max_value = 1 << 24,
     .help = "The same for the stored Responses of one session of one key (0: no quota)",
     .field = &config::responses_session_quota_mib},
    {.key = "background_runs", .flag = "--background-runs", .env = "WARDEN_BACKGROUND_RUNS", .type = t::integer,
     .unit = "runs", .default_value = "64", .min_value = 0, .max_value = 1 << 20,
     .help = "Live background Responses runs in all; one more gets 429 too_many_background_runs (0: no cap)",
     .field = &config::background_runs},
    {.key = "session_background_runs", .flag = "--session-background-runs", .env = "WARDEN_SESSION_BACKGROUND_RUNS",
     .type = t::integer, .unit = "runs", .default_value = "16", .min_value = 0, .max_value = 1 << 20,
     .help = "Live background Responses runs of one session of one key (0: no cap)",
     .field = &config::session_background_runs},
    {.key = "responses_ttl_s", .flag = "--responses-ttl", .env = "WARDEN_RESPONSES_TTL_S", .type = t::integer,
     .unit = "s", .default_value = "2592000", .min_value = 0, .max_value = 100LL * 365 * 86400,
     .help = "How long a finished stored response and its events are kept after its last update (default 30 "
             "days, as OpenAI keeps them); a sweep deletes older ones (0: keep forever)",
     .field = &config::responses_ttl_s},
    {.key = "allowed_hosts", .flag = "--allowed-hosts", .env = "WARDEN_ALLOWED_HOSTS", .type = t::list, .unit = "",
     .default_value = "",
     .help = "Comma-separated extra host names (name or name:port) requests may address warden by; "
             "localhost, 127.0.0.1, [::1] and the bound address are always allowed",
     .field = &config::allowed_hosts, .check = host_entry},
    {.key = "allowed_origins", .flag = "--allowed-origins", .env = "WARDEN_ALLOWED_ORIGINS", .type = t::list,
     .unit = "", .default_value = "",
     .help = "Comma-separated browser origins (scheme://host[:port]) allowed to call warden besides its own",
     .field = &config::allowed_origins, .check = origin_entry},
    {.key = "insecure_no_auth", .flag = "--insecure-no-auth", .env = "WARDEN_INSECURE_NO_AUTH", .type = t::flag,
     .unit = "", .default_value = "",
     .help = "Allow a non-loopback --host without --api-key (anyone who can reach the port can run tools)",
     .field = &config::insecure_no_auth},
    {.key = "no_heal_tool_calls", .flag = "--no-heal-tool-calls", .env = "WARDEN_NO_HEAL_TOOL_CALLS", .type = t::flag,
     .unit = "", .default_value = "",
     .help = "Leave tool calls a model writes as text (<tool_call>…, [TOOL_CALLS]…) as text; a request's "
             "auto_heal_tool_calls still turns them on for it",
     .field = &config::no_heal_tool_calls},
    {.key = "no_tool_prompt_nudge", .flag = "--no-tool-prompt-nudge", .env = "WARDEN_NO_TOOL_PROMPT_NUDGE",
     .type = t::flag, .unit = "", .default_value = "",
     .help = "Do not add the date and tool tips to the system prompt of tool-loop requests; a request's "
             "tool_prompt_nudge still turns it on for it",
     .field = &config::no_tool_prompt_nudge},
    {.key = "no_tool_error_nudge", .flag = "--no-tool-error-nudge", .env = "WARDEN_NO_TOOL_ERROR_NUDGE",
     .type = t::flag, .unit = "", .default_value = "",
     .help = "Do not ask the model to fix a failed tool call (a sentence after the error it sees); a request's "
             "tool_error_nudge still turns it on for it",
     .field = &config::no_tool_error_nudge},
    {.key = "no_act_reprompts", .flag = "--no-act-reprompts", .env = "WARDEN_NO_ACT_REPROMPTS", .type = t::flag,
     .unit = "", .default_value = "",
     .help = "Do not re-prompt a model that announces a tool action without calling a tool; a request's "
             "act_reprompts still turns it on for it",
     .field = &config::no_act_reprompts},
    {.key = "search_backend", .flag = "--search-backend", .env = "WARDEN_SEARCH_BACKEND", .type = t::string,
     .unit = "", .default_value = "none",
     .help = "Where web_search searches: none, duckduckgo (its HTML endpoint), duckduckgo:URL or searxng:URL (a "
             "SearXNG instance with the json format on); reading a page by URL works with every choice",
     .field = &config::search_backend, .check = search_backend_entry},
    {.key = "allow_private_fetch", .flag = "--allow-private-fetch", .env = "WARDEN_ALLOW_PRIVATE_FETCH",
     .type = t::flag, .unit = "", .default_value = "",
     .help = "Let web_search read pages on private, loopback and link-local addresses (your LAN, this machine, "
             "cloud metadata); warden's own port stays refused",
     .field = &config::allow_private_fetch},
    {.key = "mcp_config", .flag = "--mcp-config", .env = "WARDEN_MCP_CONFIG", .type = t::path, .unit = "",
     .default_value = "",
     .help = "An MCP servers file (Claude Desktop or Cursor mcpServers, VS Code servers) whose entries are added to "
             "the registry at start-up, replacing those with the same ids",
     .field = &config::mcp_config_file},
    {.key = "max_permission", .flag = "--max-permission", .env = "WARDEN_MAX_PERMISSION", .type = t::permission,
     .unit = "", .default_value = "full", .choices = "ask,auto,off,full",
     .help = "The most a request may ask for: ask < auto < off < full (bypass_permissions)",
     .field = &config::max_permission},
    {.key = "llama_api_key_file", .flag = "--llama-api-key-file", .env = "WARDEN_LLAMA_API_KEY_FILE", .type = t::path,
     .unit = "", .default_value = "",
     .help = "File whose first line is llama-server's API key (default: a random key per launch)",
     .field = &config::llama_api_key_file},
    {.key = "log_level", .flag = "--log-level", .env = "WARDEN_LOG_LEVEL", .type = t::level, .unit = "",
     .default_value = "info", .choices = "trace,debug,info,warn,error,off",
     .help = "trace, debug, info, warn, error or off", .field = &config::log_level},
    {.key = "api_key_file", .flag = "--api-key-file", .env = "WARDEN_API_KEY_FILE", .type = t::path, .unit = "",
     .default_value = "",
     .help = "File holding the --api-key value (one line; a trailing newline is dropped), so the key is not on the "
             "command line. Instead of --api-key",
     .field = &config::api_key_file},
    {.key = "upstream_api_key_file", .flag = "--upstream-api-key-file", .env = "WARDEN_UPSTREAM_API_KEY_FILE",
     .type = t::path, .unit = "", .default_value = "",
     .help = "File holding the --upstream-api-key value (one line). Instead of --upstream-api-key",
     .field = &config::upstream_api_key_file},
}};

template <class F>
constexpr bool holds(const option_field& f) {
  return std::holds_alternative<F>(f);
}

/// A row's field fits its type (an int field its bounds too), and a choice row lists its choices.
constexpr bool row_is_consistent(const option_spec& s) {
  switch (s.type) {
    case option_type::integer:
      if (s.min_value > s.max_value) return false;
      if (holds<int config::*>(s.field)) {
        return s.min_value >= std::numeric_limits<int>::min() && s.max_value <= std::numeric_limits<int>::max();
      }
      return holds<std::int64_t config::*>(s.field);
    case option_type::flag: return holds<bool config::*>(s.field);
    case option_type::list: return holds<std::vector<std::string> config::*>(s.field);
    case option_type::level:
    case option_type::permission: return holds<std::string config::*>(s.field) && *s.choices != '\0';
    case option_type::string:
    case option_type::path:
    case option_type::url: return holds<std::string config::*>(s.field);
  }
  return false;
}

/// Every row consistent; keys, flags and variables each named once.
constexpr bool table_is_consistent() {
  for (std::size_t i = 0; i < k_table.size(); ++i) {
    if (!row_is_consistent(k_table[i])) return false;
    for (std::size_t j = 0; j < i; ++j) {
      if (std::string_view(k_table[i].key) == k_table[j].key || std::string_view(k_table[i].flag) == k_table[j].flag ||
          std::string_view(k_table[i].env) == k_table[j].env) {
        return false;
      }
    }
  }
  return true;
}
static_assert(table_is_consistent(), "a config row writes a field of the wrong type (or an int out of its "
                                     "bounds), lacks its choices, or repeats a key, flag or variable");

std::string range_text(const option_spec& s) {
  return std::to_string(s.min_value) + ".." + std::to_string(s.max_value);
}

error bad_value(const option_spec& s, std::string_view raw, const std::string& want) {
  return make_error(errc::invalid_request,
                    std::string("invalid value for ") + s.flag + " (" + s.env + "): '" + std::string(raw) +
                        "' is not " + want,
                    s.key);
}

/// A converted value, ready to store: the alternative follows the row's type.
using option_value = std::variant<std::string, std::int64_t, bool, std::vector<std::string>>;

bool is_choice(const option_spec& s, std::string_view raw) {
  std::string_view rest = s.choices;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    if (rest.substr(0, comma) == raw) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

std::string choices_text(const option_spec& s) {
  std::string out = "one of ";
  for (const char* c = s.choices; *c; ++c) out += *c == ',' ? std::string(", ") : std::string(1, *c);
  return out;
}

result<option_value> parse_integer(const option_spec& s, const std::string& raw) {
  std::int64_t num = 0;
  const char* last = raw.data() + raw.size();
  auto [ptr, ec] = std::from_chars(raw.data(), last, num);
  if (raw.empty() || ec != std::errc{} || ptr != last || num < s.min_value || num > s.max_value) {
    return bad_value(s, raw, "an integer in " + range_text(s) + (*s.unit ? std::string(" ") + s.unit : ""));
  }
  return option_value{num};
}

result<option_value> parse_list(const option_spec& s, const std::string& raw) {
  std::vector<std::string> items = split_list(raw);
  for (const auto& item : items) {
    if (const char* want = s.check ? s.check(item) : nullptr) return bad_value(s, item, want);
  }
  return option_value{std::move(items)};
}

/// The type's rules, then the row's own check.
result<option_value> parse_value(const option_spec& s, const std::string& raw) {
  switch (s.type) {
    case option_type::integer: return parse_integer(s, raw);
    case option_type::list: return parse_list(s, raw);
    case option_type::flag: {
      const auto v = parse_flag(raw);
      if (!v) return bad_value(s, raw, "a boolean (true/false, 1/0, yes/no, on/off)");
      return option_value{*v};
    }
    case option_type::url:
      if (!raw.empty() && raw.rfind("http://", 0) != 0 && raw.rfind("https://", 0) != 0) {
        return bad_value(s, raw, "an http:// or https:// URL");
      }
      break;
    case option_type::level:
    case option_type::permission:
      if (!is_choice(s, raw)) return bad_value(s, raw, choices_text(s));
      break;
    case option_type::path:
    case option_type::string: break;
  }
  if (const char* want = s.check ? s.check(raw) : nullptr) return bad_value(s, raw, want);
  return option_value{raw};
}

/// Stores a parsed value through the row's member pointer (types matched by table_is_consistent).
struct field_writer {
  config& cfg;
  option_value& v;
  void operator()(std::string config::*f) const { cfg.*f = std::move(std::get<std::string>(v)); }
  void operator()(int config::*f) const { cfg.*f = static_cast<int>(std::get<std::int64_t>(v)); }
  void operator()(std::int64_t config::*f) const { cfg.*f = std::get<std::int64_t>(v); }
  void operator()(bool config::*f) const { cfg.*f = std::get<bool>(v); }
  void operator()(std::vector<std::string> config::*f) const {
    cfg.*f = std::move(std::get<std::vector<std::string>>(v));
  }
};

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

/// Reads `file` (a --*-key-file) into `key`; the key given both ways is an error.
result<void> take_key_file(std::string& key, const std::string& file, const char* key_flag, const char* file_flag,
                           const char* param) {
  if (file.empty()) return {};
  if (!key.empty()) {
    return make_error(errc::invalid_request,
                      std::string(key_flag) + " and " + file_flag + " are exclusive: give the key one way", param);
  }
  auto read = read_secret_file(file, file_flag);
  if (!read) return make_error(errc::invalid_request, read.error().message, param);
  key = std::move(*read);
  return {};
}

}  // namespace

config::config() {
  for (const auto& s : k_table) {
    if (*s.default_value) (void)apply_option(*this, s, s.default_value);  // valid: ConfigRows tests
  }
}

std::span<const option_spec> config_table() { return k_table; }

result<void> apply_option(config& cfg, const option_spec& s, const std::string& raw) {
  auto v = parse_value(s, raw);
  if (!v) return v.error();
  std::visit(field_writer{cfg, *v}, s.field);
  return {};
}

std::string default_text(const option_spec& s) { return s.default_value; }

std::string markdown_table() {
  std::string out = "| flag | env | default | meaning |\n|---|---|---|---|\n";
  for (const auto& s : k_table) {
    std::string def = s.type == option_type::flag ? "off" : "—";
    if (*s.default_value) def = std::string("`") + s.default_value + "`" + (*s.unit ? std::string(" ") + s.unit : "");
    out += std::string("| `") + s.flag + "` | `" + s.env + "` | " + def + " | " + markdown_cell(s.help) + " |\n";
  }
  return out;
}

std::string default_model_path(const std::string& home) {
  return (std::filesystem::path(home) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf").string();
}

std::string default_llama_server_path(const std::string& home) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(home) / "llama.cpp";
  const std::string version = k_llama_cpp_package_version;
  // A GPU build of scripts/setup (its own cache key, complete) before the CPU one.
  for (const char* backend : {"-cuda", "-vulkan"}) {
    const fs::path dir = root / (version + backend);
    std::error_code ec;
    if (fs::exists(dir / ".complete", ec) && fs::exists(dir / "bin" / "llama-server", ec)) {
      return (dir / "bin" / "llama-server").string();
    }
  }
  return (root / version / "bin" / "llama-server").string();
}

int local_replicas(const config& cfg) {
  if (cfg.replicas > 0) return cfg.replicas;
  const bool remote = !cfg.upstream_url.empty() || !cfg.more_upstreams.empty() || !cfg.upstreams_file.empty();
  return remote ? 0 : 1;
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
  if (auto r = take_key_file(cfg.api_key, cfg.api_key_file, "--api-key", "--api-key-file", "api_key_file"); !r) return r;
  if (auto r = take_key_file(cfg.upstream_api_key, cfg.upstream_api_key_file, "--upstream-api-key",
                             "--upstream-api-key-file", "upstream_api_key_file");
      !r) {
    return r;
  }
  if (!cfg.api_key.empty() && !cfg.api_keys_file.empty()) {
    return make_error(errc::invalid_request,
                      "--api-key and --api-keys-file are exclusive: one key for a single user, or named keys "
                      "(put an admin key in the file instead of --api-key)",
                      "api_keys_file");
  }
  const bool remote = !cfg.upstream_url.empty() || !cfg.more_upstreams.empty() || !cfg.upstreams_file.empty();
  if (remote && !cfg.model_path.empty() && cfg.replicas == 0) {
    return make_error(errc::invalid_request,
                      "--model and --upstream are exclusive: serve a local GGUF or use an existing "
                      "server, not both (add --replicas N to run N llama-server children beside the upstreams)",
                      "upstream");
  }
  if (std::string why = cfg.upstream_url.empty() ? "" : url_problem(cfg.upstream_url); !why.empty()) {
    return make_error(errc::invalid_request, "--upstream (WARDEN_UPSTREAM): " + why, "upstream");
  }
  for (const auto& u : cfg.more_upstreams) {
    if (std::string why = url_problem(u); !why.empty()) {
      return make_error(errc::invalid_request, "--upstream: " + why, "upstream");
    }
  }
  if (cfg.upstream_url.empty() && !cfg.more_upstreams.empty()) {
    cfg.upstream_url = cfg.more_upstreams.front();
    cfg.more_upstreams.erase(cfg.more_upstreams.begin());
  }
  for (auto& u : cfg.more_upstreams) u = upstream_base_url(u);
  if (local_replicas(cfg) > 0) {
    if (cfg.model_path.empty()) cfg.model_path = default_model_path(cfg.home);
    if (cfg.llama_server_path.empty()) cfg.llama_server_path = default_llama_server_path(cfg.home);
    if (cfg.model_id.empty()) {
      cfg.model_id = std::filesystem::path(cfg.model_path).stem().string();
    }
  }
  cfg.upstream_url = upstream_base_url(cfg.upstream_url);
  if (cfg.models_dir.empty()) cfg.models_dir = (std::filesystem::path(cfg.home) / "models").string();
  while (cfg.hf_endpoint.size() > 1 && cfg.hf_endpoint.back() == '/') cfg.hf_endpoint.pop_back();
  return {};
}

}  // namespace warden
