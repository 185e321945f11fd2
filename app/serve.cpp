#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "common/metrics.h"
#include "agent/rule_book.h"
#include "agent/tool_loop.h"
#include "api/anthropic/messages_handler.h"
#include "api/control/audit_routes.h"
#include "api/control/model_routes.h"
#include "api/control/monitor.h"
#include "api/control/provider_routes.h"
#include "api/control/routes.h"
#include "api/control/store_adapters.h"
#include "api/control/ui_routes.h"
#include "secrets/redact.h"
#include "store/sealed_secret.h"
#include "api/responses/responses_handler.h"
#include "api/responses/retention.h"
#include "api/openai/chat_handler.h"
#include "api/openai/legacy_handler.h"
#include "app/commands.h"
#include "common/blocking_pool.h"
#include "engine/admission_queue.h"
#include "engine/engine_pool.h"
#include "common/upstream_url.h"
#include "engine/chat_backend.h"
#include "engine/chat_service.h"
#include "sandbox/runner.h"
#include "store/database.h"
#include "store/responses_store.h"
#include "api/control/kb_routes.h"
#include "api/control/mcp_routes.h"
#include "tools/mcp_manager.h"
#include "store/knowledge_base.h"
#include "tools/builtins.h"
#include "tools/knowledge.h"
#include "engine/http_client.h"
#include "engine/llama_server.h"
#include "engine/model_host.h"
#include "engine/model_library.h"
#include "engine/model_pull.h"
#include "engine/openai_compatible.h"
#include "engine/upstream_registry.h"
#include "http/api_keys.h"
#include "http/router.h"
#include "http/server.h"

namespace warden::app {

namespace asio = boost::asio;

namespace {
/// Time given to open streams to write their last frames at shutdown.
constexpr int k_shutdown_flush_ms = 200;

void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_color_mt("warden");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::flush_on(spdlog::level::info);
}
std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out.append(sep);
    out.append(i);
  }
  return out;
}

/// This machine's non-loopback interface addresses, as a Host header would name them.
std::vector<std::string> interface_addresses() {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || (i->ifa_flags & IFF_LOOPBACK)) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    if (i->ifa_addr->sa_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
      out.emplace_back(buf);
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      const auto* a6 = reinterpret_cast<sockaddr_in6*>(i->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr)) continue;
      ::inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof buf);
      std::string bracketed = "[";
      bracketed.append(buf).append("]");
      out.push_back(std::move(bracketed));
    }
  }
  ::freeifaddrs(list);
  return out;
}

/// What an operator binding a network address should know: which names clients may use (the
/// Host check), and what no key means.
void warn_network_exposure(const config& cfg, agent::permission_mode max_permission) {
  if (cfg.api_key.empty() && cfg.api_keys_file.empty()) {
    spdlog::warn("--insecure-no-auth: {} is reachable from the network without an API key: anyone who can reach it "
                 "can use the model and run tools{}",
                 cfg.host,
                 max_permission == agent::permission_mode::full
                     ? ", outside the sandbox too (bypass_permissions); cap it with --max-permission ask"
                     : " (up to --max-permission " + std::string(agent::to_string(max_permission)) + ")");
  }
  if (cfg.allowed_hosts.empty()) {
    std::vector<std::string> names = interface_addresses();
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0 && host[0]) names.emplace_back(host);
    const std::string addrs = join(names, ",");
    spdlog::warn("clients on the network must address warden by a name it allows (the Host check against DNS "
                 "rebinding): list the ones they use with --allowed-hosts (WARDEN_ALLOWED_HOSTS){}",
                 addrs.empty() ? std::string() : ", e.g. --allowed-hosts " + addrs);
  } else {
    spdlog::info("clients on the network may address warden as {}", join(cfg.allowed_hosts, ", "));
  }
}

/// The permission ceiling, or the exit code start-up stops with (its message printed).
struct start_up_check {
  int exit_code = 0;
  agent::permission_mode ceiling = agent::permission_mode::ask;
};

/// What is checked before anything is opened or bound: this process non-dumpable, a key for a
/// non-loopback address, the model file. Also the one conversion of --max-permission (validated
/// by name in the config table, common/config.cpp) to agent::permission_mode.
start_up_check check_start_up(const config& cfg) {
  // Tools are children of this process: without this, a tool running as the same user could read
  // /proc/<warden>/environ (API keys) and warden's memory (reference §4.4, "parent hardening").
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    std::fprintf(stderr, "warden: cannot make the server non-dumpable (prctl: %s); refusing to start\n",
                 std::strerror(errno));
    return {1};
  }
  if (!http::binds_loopback_only(cfg.host) && cfg.api_key.empty() && cfg.api_keys_file.empty() &&
      !cfg.insecure_no_auth) {
    std::fprintf(stderr,
                 "warden: refusing to listen on %s without an API key: anyone who can reach this address could "
                 "use the model and run tools on this machine. Set --api-key (WARDEN_API_KEY) or "
                 "--api-keys-file (WARDEN_API_KEYS_FILE), or pass "
                 "--insecure-no-auth (WARDEN_INSECURE_NO_AUTH=1) to accept that risk explicitly.\n",
                 cfg.host.c_str());
    return {2};
  }
  const auto ceiling = agent::parse_permission_mode(cfg.max_permission);
  if (!ceiling) {  // config validated it; never default to the most permissive on a mismatch
    std::fprintf(stderr, "warden: invalid value for --max-permission (WARDEN_MAX_PERMISSION): '%s'\n",
                 cfg.max_permission.c_str());
    return {2};
  }
  if (local_replicas(cfg) > 0) {  // fail before binding anything when the model cannot exist
    std::error_code fs_ec;
    if (!std::filesystem::is_regular_file(cfg.model_path, fs_ec)) {
      std::fprintf(stderr, "warden: model file not found: %s (run `make setup` for the default model, or pass --model PATH)\n",
                   cfg.model_path.c_str());
      return {1};
    }
  }
  return {0, *ceiling};
}

void report_sandbox(sandbox::sandbox& jail) {
  const auto sb = jail.probe();
  if (sb.available) {
    spdlog::info("tool sandbox: {}; warm jails: {}", sb.detail,
                 jail.policy().warm_jails == 0 ? std::string("off (--warm-jails 0)")
                                               : "up to " + std::to_string(jail.policy().warm_jails) + " (--warm-jails)");
  }
  else spdlog::warn("tool sandbox unavailable: {}; fix: {}. Tool calls fail unless a request sets bypass_permissions",
                    sb.detail, sb.fix);
}

/// <home>/warden.db and what lives on it: the audit log (and its recorder), the always-rules,
/// the stored responses. Non-copyable: the members hold references to `db`.
struct stores {
  stores(std::unique_ptr<store::database> database, blocking_pool& pool)
      : db(std::move(database)),
        calls(*db),
        recorder(calls, pool),
        rule_rows(*db),
        responses(*db),
        kept_rules(rule_rows),
        rules(&kept_rules),
        kb(*db),
        mcp(*db),
        providers(*db) {}
  stores(const stores&) = delete;
  stores& operator=(const stores&) = delete;

  std::unique_ptr<store::database> db;
  store::call_log calls;
  api::control::store_recorder recorder;
  store::rule_store rule_rows;
  store::response_store responses;
  api::control::stored_rules kept_rules;  ///< the rule book's persistence (api/control/store_adapters.h)
  agent::rule_book rules;
  store::knowledge_base_store kb;
  store::mcp_server_store mcp;
  store::provider_store providers;  ///< external providers (api/control/provider_routes.h)
};

/// Opens the database and loads the rules; null (message printed) when either fails.
std::unique_ptr<stores> open_store(const config& cfg, blocking_pool& pool) {
  auto db = store::database::open(cfg.home + "/warden.db");
  if (!db) {
    std::fprintf(stderr, "warden: %s\n", db.error().message.c_str());
    return nullptr;
  }
  auto st = std::make_unique<stores>(std::move(*db), pool);
  if (auto loaded = st->rules.load(); !loaded) {
    std::fprintf(stderr, "warden: %s\n", loaded.error().message.c_str());
    return nullptr;
  }
  return st;
}

tools::mcp_options mcp_options_for(const config& cfg, sandbox::sandbox& jail, blocking_pool& pool, tools::registry& reg,
                                   permission_mode ceiling, asio::io_context& ioc) {
  tools::mcp_options o;
  o.sb = &jail;
  o.pool = &pool;
  o.reg = &reg;
  o.workspaces_root = cfg.workspaces_dir;
  o.max_permission = ceiling;
  o.ex = ioc.get_executor();
  return o;
}

/// --mcp-config imported into the registry, then every stored server handed to the manager
/// (enabled ones start in the background); false (message printed) when the file is refused.
bool load_mcp_servers(const config& cfg, stores& st, tools::mcp_manager& mcp, permission_mode ceiling) {
  if (!cfg.mcp_config_file.empty()) {
    if (auto ok = api::control::import_mcp_config_file(cfg.mcp_config_file, st.mcp, ceiling); !ok) {
      std::fprintf(stderr, "warden: %s\n", ok.error().message.c_str());
      return false;
    }
  }
  auto servers = api::control::load_mcp_servers(st.mcp);
  if (!servers) {
    std::fprintf(stderr, "warden: %s\n", servers.error().message.c_str());
    return false;
  }
  spdlog::info("{} MCP server(s) configured", servers->size());
  mcp.configure(std::move(*servers));
  return true;
}

/// Registry names of the upstreams.
constexpr std::string_view k_chat_upstream = "chat";

/// The registry name of the `n`th chat engine (1-based): "chat", then "chat-2", "chat-3", …
std::string chat_engine_name(std::size_t n) {
  return n == 1 ? std::string(k_chat_upstream) : std::string(k_chat_upstream) + "-" + std::to_string(n);
}

constexpr std::string_view k_embeddings_upstream = "embeddings";

/// The keys requests must carry: none, the one --api-key (single user), or the named keys of
/// --api-keys-file (http/api_keys.h); nullopt (message printed) when the file is refused.
std::optional<http::key_ring> load_keys(const config& cfg) {
  struct stat st {};
  if (!cfg.api_key_file.empty() && ::stat(cfg.api_key_file.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    spdlog::warn("--api-key-file {} may be read by other users (mode {:03o}); chmod 600 it", cfg.api_key_file,
                 static_cast<unsigned>(st.st_mode & 0777));
  }
  if (cfg.api_keys_file.empty()) return http::key_ring(cfg.api_key);
  auto keys = http::read_api_keys_file(cfg.api_keys_file);
  if (!keys) {
    std::fprintf(stderr, "warden: %s\n", keys.error().message.c_str());
    return std::nullopt;
  }
  std::size_t admins = 0;
  for (const auto& k : *keys) admins += k.role == key_role::admin ? 1 : 0;
  spdlog::info("named API keys: {} ({} admin) from {}; each request acts as its key's owner", keys->size(), admins,
               cfg.api_keys_file);
  return http::key_ring(std::move(*keys));
}

/// The start-up model (--model, --ctx, --parallel) as a model host's spec.
engine::model_spec startup_spec(const config& cfg) {
  engine::model_spec spec;
  spec.model_id = cfg.model_id;
  spec.model_path = cfg.model_path;
  spec.ctx_tokens = cfg.ctx_tokens;
  spec.parallel_slots = cfg.parallel_slots;
  return spec;
}

/// A model host making llama-server children from `base` (binary, key, load timeout, role) and
/// each spec's model and flags.
engine::model_host::options host_options(const config& cfg, engine::llama_server_options base, bool embeddings,
                                         std::string label = {}) {
  engine::model_host::options o;
  o.name = !label.empty() ? label : embeddings ? "llama-server for embeddings" : "llama-server";
  base.label = std::move(label);
  o.lazy = embeddings;
  o.idle_unload = std::chrono::seconds(cfg.idle_unload_s);
  o.make_child = [base](const engine::model_spec& spec) {
    engine::llama_server_options opts = base;
    opts.model_path = spec.model_path;
    opts.model_id = spec.model_id;
    opts.ctx_tokens = spec.ctx_tokens;
    opts.parallel_slots = spec.parallel_slots;
    opts.gpu_layers = spec.gpu_layers.value_or(-1);
    opts.rope_scaling = spec.rope_scaling;
    opts.rope_scale = spec.rope_scale;
    opts.yarn_orig_ctx = spec.yarn_orig_ctx;
    opts.extra_args = spec.extra_args;
    return std::make_unique<engine::llama_server>(opts);
  };
  return o;
}

/// One engine of the chat pool as make_upstreams() registered it (engine/engine_pool.h).
struct engine_line {
  std::string name;   ///< its registry name: "chat", then "chat-2", "chat-3", …
  int slots = 0;      ///< requests it serves at once; 0 = unknown
  std::string where;  ///< a remote engine's base URL; "" for a llama-server child
};

/// The remote engines: every --upstream, then each line of --upstreams-file (its key from its
/// key_env variable). Nullopt (message printed) when the file is refused.
std::optional<std::vector<std::pair<upstream_entry, std::string>>> remote_engines(const config& cfg) {
  std::vector<std::pair<upstream_entry, std::string>> out;  // entry, its key
  const bool only_remote = local_replicas(cfg) == 0;
  std::vector<std::string> urls;
  if (!cfg.upstream_url.empty()) urls.push_back(cfg.upstream_url);
  urls.insert(urls.end(), cfg.more_upstreams.begin(), cfg.more_upstreams.end());
  for (const auto& u : urls) out.push_back({{u, only_remote ? cfg.model_id : "", cfg.upstream_slots, ""}, cfg.upstream_api_key});
  if (cfg.upstreams_file.empty()) return out;
  auto file = read_upstreams_file(cfg.upstreams_file);
  if (!file) {
    std::fprintf(stderr, "warden: %s\n", file.error().message.c_str());
    return std::nullopt;
  }
  for (auto& e : *file) {
    const char* key = e.key_env.empty() ? nullptr : std::getenv(e.key_env.c_str());
    if (!e.key_env.empty() && !key) spdlog::warn("--upstreams-file: {} names key_env {}, which is not set", e.url, e.key_env);
    out.push_back({std::move(e), key ? key : ""});
  }
  return out;
}

/// The chat engines (warden's own llama-server children, --replicas of them, then the remote
/// engines; several make a pool), started at start-up; with a llama-server child also the
/// embeddings child (engine/llama_server.h), started on the first /v1/embeddings request (a remote
/// engine serves them itself). `lines` gets one entry per chat engine. Null (message printed)
/// when --llama-api-key-file or --upstreams-file cannot be read.
std::unique_ptr<engine::upstream_registry> make_upstreams(const config& cfg, std::vector<engine_line>& lines) {
  auto ups = std::make_unique<engine::upstream_registry>();
  auto next_name = [&lines] { return chat_engine_name(lines.size() + 1); };
  const int local = local_replicas(cfg);
  if (local > 0) {
    std::string llama_key;  // "" = a random key per launch
    if (!cfg.llama_api_key_file.empty()) {
      auto key = engine::read_llama_api_key_file(cfg.llama_api_key_file);
      if (!key) {
        std::fprintf(stderr, "warden: %s\n", key.error().message.c_str());
        return nullptr;
      }
      llama_key = std::move(*key);
    }
    engine::llama_server_options base;
    base.binary = cfg.llama_server_path;
    base.model_path = cfg.model_path;
    base.model_id = cfg.model_id;
    base.ctx_tokens = cfg.ctx_tokens;
    base.parallel_slots = cfg.parallel_slots;
    base.load_timeout_s = cfg.load_timeout_s;
    base.api_key = std::move(llama_key);
    // The children are model hosts (engine/model_host.h): loaded, swapped and restarted at run
    // time. The embeddings child starts on its first request and keeps the start-up model, so the
    // knowledge bases' vectors stay comparable across chat model swaps.
    for (int i = 0; i < local; ++i) {
      std::string name = next_name();
      // With several children the logs name each ("llama-server chat-2 ready at …").
      std::string label = local > 1 ? "llama-server " + name : std::string();
      auto host = std::make_unique<engine::model_host>(host_options(cfg, base, false, std::move(label)), startup_spec(cfg));
      ups->add(name, std::move(host), engine::start_policy::at_start_up);
      lines.push_back({std::move(name), cfg.parallel_slots, ""});
    }
    base.embeddings = true;
    ups->add(std::string(k_embeddings_upstream),
             std::make_unique<engine::model_host>(host_options(cfg, base, true), startup_spec(cfg)),
             engine::start_policy::at_start_up);
  }
  auto remote = remote_engines(cfg);
  if (!remote) return nullptr;
  for (auto& [e, key] : *remote) {
    std::string name = next_name();
    ups->add(name, std::make_unique<engine::openai_compatible>(e.url, key, e.model_id), engine::start_policy::at_start_up);
    lines.push_back({std::move(name), e.slots, e.url});
  }
  if (lines.empty()) {  // an --upstreams-file of comments only, and nothing else
    std::fprintf(stderr, "warden: no engine to serve: --upstreams-file %s names none (one 'URL [model=ID] "
                         "[slots=N] [key_env=VAR]' line each), and no --upstream or --replicas is given\n",
                 cfg.upstreams_file.c_str());
    return nullptr;
  }
  return ups;
}

/// The pool of the chat engines when there are several (engine/engine_pool.h), else null.
std::unique_ptr<engine::engine_pool> make_pool(const config& cfg, engine::upstream_registry& ups,
                                               const std::vector<engine_line>& lines, engine::http_client& client) {
  if (lines.size() < 2) return nullptr;
  std::vector<engine::pool_member_spec> members;
  for (const auto& l : lines) members.push_back({l.name, ups.find(l.name), l.slots, l.where});
  engine::pool_options o;
  o.head_timeout = std::chrono::seconds(cfg.engine_head_timeout_s);
  if (local_replicas(cfg) > 0) o.load_wait = std::chrono::milliseconds(std::int64_t{cfg.load_timeout_s} * 1000);
  spdlog::info("a pool of {} engines: least outstanding requests, session affinity, failover before the first byte",
               lines.size());
  return std::make_unique<engine::engine_pool>(std::move(members), client,
                                               std::chrono::milliseconds(cfg.sse_ping_interval_ms), o);
}

api::control::health_report health_of(const engine::upstream& up) {
  if (const auto* host = dynamic_cast<const engine::model_host*>(&up)) {  // warden's own llama-server
    const engine::host_status s = host->status();
    if (s.phase == engine::host_phase::restarting) return {false, "restarting", s.message};
    if (s.phase == engine::host_phase::unloaded && !s.loads_on_use) return {false, "unloaded", host->status_message()};
  }
  switch (up.state()) {
    case engine::upstream_state::ready: return {true, "ok", ""};
    case engine::upstream_state::starting:
    case engine::upstream_state::stopped: return {false, "loading", up.status_message()};
    case engine::upstream_state::failed: return {false, "error", up.status_message()};
  }
  return {false, "error", up.status_message()};
}

long long now_unix_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The paths served past --max-connections (http/server.h): a person can still see warden is up,
/// answer and list approvals, and stop a run while idle or slow clients hold every connection.
std::vector<std::string> k_reserved_paths() {
  return {"/health", "/api/inference/tool-confirm", "/api/inference/approvals", "/api/inference/cancel"};
}

/// The Responses budgets of the command line (api/responses/budgets.h).
api::responses::responses_limits responses_limits_of(const config& cfg) {
  api::responses::responses_limits l;
  l.max_body_bytes = static_cast<std::uint64_t>(cfg.max_body_bytes);
  l.max_stored_bytes = std::int64_t{cfg.responses_quota_mib} << 20;
  l.max_session_stored_bytes = std::int64_t{cfg.responses_session_quota_mib} << 20;
  l.max_background_runs = static_cast<std::size_t>(cfg.background_runs);
  l.max_session_background_runs = static_cast<std::size_t>(cfg.session_background_runs);
  return l;
}

/// The admission queue in front of the chat engine (engine/admission_queue.h): the local
/// llama-server's slots are its loaded model's --parallel; a remote --upstream is queued only with
/// --upstream-slots. Null with --no-queue.
std::shared_ptr<engine::admission_queue> make_admission(const config& cfg, engine::upstream& chat_up,
                                                      const engine::engine_pool* pool) {
  if (cfg.no_queue) return nullptr;
  engine::admission_options o;
  o.engine = std::string(k_chat_upstream);
  o.max_queue = cfg.queue_max;
  o.per_key_queue = cfg.queue_per_key;
  o.timeout = std::chrono::seconds(cfg.queue_timeout_s);
  o.tick = std::chrono::milliseconds(cfg.sse_ping_interval_ms);
  if (pool) {  // one queue in front of the pool: its slots are the healthy members' together
    if (pool->total_slots() <= 0) {
      spdlog::info("no admission queue: an engine of the pool has no known slots (slots= in --upstreams-file, "
                   "--upstream-slots)");
      return nullptr;
    }
    o.engine = "pool";
    o.slots = [pool] { return pool->slots_now(); };
  } else if (!cfg.upstream_url.empty()) {
    if (cfg.upstream_slots <= 0) return nullptr;
    const int n = cfg.upstream_slots;
    o.slots = [n] { return n; };
  } else {
    const auto* host = dynamic_cast<const engine::model_host*>(&chat_up);
    const int fallback = cfg.parallel_slots;
    o.slots = [host, fallback] {
      if (!host) return fallback;
      const engine::host_status st = host->status();
      return st.spec ? st.spec->parallel_slots : fallback;
    };
  }
  return std::make_shared<engine::admission_queue>(std::move(o));
}

/// What the API surfaces' routes hold by reference: lives as long as the server. Non-copyable.
struct surfaces {
  surfaces(const config& cfg, engine::upstream_registry& ups, engine::engine_pool* engines, engine::http_client& client,
           agent::tool_runtime& tools, stores& st, blocking_pool& pool)
      : ping(cfg.sse_ping_interval_ms),
        chat(engines ? engines->front() : *ups.find(k_chat_upstream), client, ping),
        backend(chat),
        embed_chat(ups.find(k_embeddings_upstream)
                       ? std::make_unique<engine::chat_service>(*ups.find(k_embeddings_upstream), client, ping)
                       : nullptr),
        legacy{chat, embed_chat.get(), ups.find(k_embeddings_upstream)},
        openai{chat, backend, &tools, now_unix_s(), !cfg.no_heal_tool_calls, nullptr, nullptr},
        anthropic{backend, &tools, !cfg.no_heal_tool_calls},
        responses_api{backend, &tools, &st.responses, &pool, &background_runs, ping, responses_limits_of(cfg),
                      !cfg.no_heal_tool_calls},
        control{&tools, [this] { return health_of(chat.upstream()); }, nullptr} {
    api::responses::fail_unfinished_runs(st.responses);
    control.metrics_key = cfg.metrics_key;
    chat.set_pool(engines);
    if (local_replicas(cfg) > 0) wire_local_models(cfg, ups, pool, engines != nullptr);
    if (engines) list_pool_models(*engines, pool);
    admission = make_admission(cfg, chat.upstream(), engines);
    openai.admission = legacy.admission = anthropic.admission = responses_api.admission = admission;
    monitor = std::make_unique<api::control::api_monitor>(monitor_setup(cfg, chat.upstream()));
  }

  /// GET /v1/models with a pool: what the library lists (llama-server children), and every model
  /// id the pool's engines serve that it does not.
  void list_pool_models(const engine::engine_pool& engines, blocking_pool& pool) {
    openai.pool = &pool;
    openai.model_list = [&engines, base = openai.model_list, created = openai.started_unix_s] {
      json list = base ? base() : json{{"object", "list"}, {"data", json::array()}};
      json& data = list["data"];
      for (const auto& m : engines.status()) {
        if (m.model_id.empty()) continue;
        const bool listed = std::any_of(data.begin(), data.end(), [&m](const json& e) {
          return e.is_object() && e.contains("id") && e["id"] == m.model_id;
        });
        if (!listed) data.push_back({{"id", m.model_id}, {"object", "model"}, {"created", created}, {"owned_by", "warden"}});
      }
      return list;
    };
  }

  /// The API monitor's options: texts redacted (secrets/redact.h); the engine as the monitor shows it.
  api::control::monitor_options monitor_setup(const config& cfg, engine::upstream& chat_up) {
    api::control::monitor_options o;
    o.enabled = !cfg.no_api_monitor;
    o.redact = [](std::string_view t) { return secrets::redact_secrets(t); };
    o.engine = [this, &chat_up] {
      api::control::engine_view v;
      v.active_model = chat_up.model_id();
      v.ready = chat_up.state() == engine::upstream_state::ready;
      if (const auto* host = dynamic_cast<const engine::model_host*>(&chat_up)) {
        v.context_length = api::control::slot_context(host->status()).value_or(0);
      }
      if (admission) {
        const auto q = admission->snapshot();
        v.queue = json{{"waiting", q.waiting}, {"slots", q.slots}, {"busy", q.busy}, {"max_queue", q.max_queue}};
      }
      return v;
    };
    return o;
  }

  /// --auto-swap: loads library model `id` (nothing for an id not in the library).
  boost::asio::awaitable<result<void>> swap_to(std::string id, blocking_pool& pool) {
    auto find = [this, id] { return library->find(id); };
    std::optional<engine::library_model> m = co_await pool.run_blocking(find);
    if (!m) co_return result<void>{};
    if (!m->error.empty()) {
      co_return make_error(errc::invalid_request, "model '" + id + "' cannot be loaded: " + m->error, "model",
                           "corrupt_gguf");
    }
    engine::model_spec spec = models.defaults;
    spec.model_id = id;
    spec.model_path = m->path;
    spdlog::info("--auto-swap: a request names model {}; loading it", id);
    auto load = [this, spec] { return models.chat->load(spec); };
    result<engine::host_status> loaded = co_await pool.run_blocking(load);
    if (!loaded) co_return loaded.error();
    co_return result<void>{};
  }

  /// The model library and the hosts behind /api/models and /api/inference/{load,unload,status};
  /// requests wait for a loading or restarting model up to --load-timeout.
  /// With a pool (`pooled`) the models API acts on the first child ("chat") and there is no
  /// --auto-swap: the pool routes each request by its model instead.
  void wire_local_models(const config& cfg, engine::upstream_registry& ups, blocking_pool& pool, bool pooled) {
    const std::chrono::milliseconds wait{std::int64_t{cfg.load_timeout_s} * 1000};
    chat.set_load_wait(wait);
    if (embed_chat) embed_chat->set_load_wait(wait);
    library = std::make_unique<engine::model_library>(cfg.models_dir, cfg.model_id, cfg.model_path);
    models.library = library.get();
    models.chat = dynamic_cast<engine::model_host*>(ups.find(k_chat_upstream));
    for (int i = 2; i <= local_replicas(cfg); ++i) {  // the other --replicas children
      const std::string name = chat_engine_name(static_cast<std::size_t>(i));
      if (auto* h = dynamic_cast<engine::model_host*>(ups.find(name))) models.replicas.push_back({name, h});
    }
    models.embeddings = dynamic_cast<engine::model_host*>(ups.find(k_embeddings_upstream));
    models.pool = &pool;
    models.defaults = startup_spec(cfg);
    models.llama_server_binary = cfg.llama_server_path;
    std::error_code ec;
    std::filesystem::create_directories(cfg.models_dir, ec);
    pulls = std::make_unique<engine::pull_manager>(cfg.models_dir, cfg.hf_endpoint, [this](const std::string& path) {
      std::error_code same_ec;
      for (const engine::model_host* h : models.hosts()) {
        const std::string used = h->path_in_use();
        if (!used.empty() && std::filesystem::equivalent(used, path, same_ec)) return true;
      }
      return false;
    });
    models.pulls = pulls.get();
    if (cfg.auto_swap && !pooled) chat.set_auto_swap([this, &pool](std::string id) { return swap_to(std::move(id), pool); });
    openai.pool = &pool;
    openai.model_list = [this] {
      json data = json::array();
      const std::string loaded = models.chat ? models.chat->path_in_use() : "";
      const engine::host_status hs = models.chat ? models.chat->status() : engine::host_status{};
      const std::string loaded_id = !loaded.empty() && hs.spec ? hs.spec->model_id : "";
      const std::optional<std::int64_t> slot_ctx = loaded.empty() ? std::nullopt : api::control::slot_context(hs);
      for (const auto& m : library->list()) {
        // By path, or by id: a --models-dir link named as the start-up model is listed in its place.
        const bool is_loaded = !loaded.empty() && (m.path == loaded || m.id == loaded_id);
        json entry = api::control::model_json(m, is_loaded);
        if (is_loaded && slot_ctx) entry["n_ctx_slot"] = *slot_ctx;  // what a request really gets
        data.push_back(std::move(entry));
      }
      return json{{"object", "list"}, {"data", std::move(data)}};
    };
  }
  surfaces(const surfaces&) = delete;
  surfaces& operator=(const surfaces&) = delete;

  std::chrono::milliseconds ping;
  engine::chat_service chat;
  engine::openai_chat_backend backend;
  std::unique_ptr<engine::chat_service> embed_chat;  ///< null for an OpenAI-compatible upstream
  std::shared_ptr<engine::admission_queue> admission;  ///< null: --no-queue, or a remote upstream without --upstream-slots
  std::unique_ptr<api::control::api_monitor> monitor;  ///< GET /api/inference/monitor (api/control/monitor.h)
  api::openai::legacy_deps legacy;
  api::openai::openai_deps openai;
  api::anthropic::anthropic_deps anthropic;
  api::responses::run_registry background_runs;
  api::responses::responses_deps responses_api;
  api::control::control_deps control;
  std::unique_ptr<engine::model_library> library;  ///< null for a remote --upstream
  std::unique_ptr<engine::pull_manager> pulls;     ///< null for a remote --upstream
  api::control::model_deps models;
};

/// Every route: control, audit, the three API dialects (and legacy OpenAI), the web UI.
std::vector<route> make_routes(surfaces& api, stores& st, blocking_pool& pool, api::control::kb_deps& kb,
                               api::control::mcp_deps& mcp, api::control::provider_deps& providers) {
  std::vector<route> table = api::control::routes(api.control);
  for (auto& r : api::control::provider_routes(providers)) table.push_back(std::move(r));
  for (auto& r : api::control::kb_routes(kb)) table.push_back(std::move(r));
  for (auto& r : api::control::mcp_routes(mcp)) table.push_back(std::move(r));
  for (auto& r : api::control::model_routes(api.models)) table.push_back(std::move(r));
  for (auto& r : api::control::audit_routes(&st.calls, &pool)) table.push_back(std::move(r));
  for (auto& r : api::control::monitor_routes(*api.monitor)) table.push_back(std::move(r));
  const std::size_t model_routes_from = table.size();
  for (auto& r : api::openai::routes(api.openai)) table.push_back(std::move(r));
  for (auto& r : api::openai::legacy_routes(api.legacy)) table.push_back(std::move(r));
  for (auto& r : api::anthropic::routes(api.anthropic)) table.push_back(std::move(r));
  for (auto& r : api::responses::routes(api.responses_api)) table.push_back(std::move(r));
  // The model requests are what the API monitor records (api/control/monitor.h).
  for (std::size_t i = model_routes_from; i < table.size(); ++i) {
    route& r = table[i];
    const bool model_request = r.method == "POST" && !r.prefix &&
                               (r.path == "/v1/chat/completions" || r.path == "/v1/completions" ||
                                r.path == "/v1/messages" || r.path == "/v1/responses");
    if (model_request) r.handler = api::control::monitored(std::move(r.handler), *api.monitor);
  }
  for (auto& r : api::control::ui_routes()) table.push_back(std::move(r));
  return table;
}

/// `n` threads running `ioc` until it stops.
std::vector<std::thread> run_io_threads(asio::io_context& ioc, int n) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&ioc] {
      // A handler that throws (a bug, or a library that throws inside an operation) must not
      // take the server down: log it and keep serving (the asio-documented pattern).
      while (true) {
        try {
          ioc.run();
          return;
        } catch (const std::exception& e) {
          spdlog::error("an operation failed with an exception: {}; the server goes on", e.what());
        }
      }
    });
  }
  return threads;
}

/// What the serving process needs to run and to shut down.
struct serving {
  const config& cfg;
  asio::io_context& ioc;
  http::server& srv;
  int port;
  engine::upstream_registry& ups;
  engine::http_client& client;
  agent::cancel_registry& cancels;
  blocking_pool& pool;
  blocking_pool& net_pool;
  blocking_pool& kb_fetch_pool;
};

/// Runs the io threads, starts the upstreams on this (the main) thread, and serves until
/// SIGINT/SIGTERM. Returns the exit code: 0 after a clean shutdown, 1 when the model failed.
/// The sampled gauges of GET /metrics (common/metrics.h): live work from `control.counts`, and
/// each engine's readiness and requests in flight. Both arguments outlive the serving.
void register_gauges(api::control::control_deps& control, engine::upstream_registry& ups,
                     const engine::engine_pool* engines, std::shared_ptr<engine::admission_queue> queue) {
  using series = std::vector<std::pair<metrics::labels, double>>;
  auto& m = metrics::global();
  auto count = [&control](auto field) {
    return [&control, field] { return series{{{}, static_cast<double>(control.counts().*field)}}; };
  };
  m.gauge("warden_active_handlers", "Requests being answered now (open streams included).",
          count(&api::control::live_counts::handlers_running));
  m.gauge("warden_connections_open", "HTTP connections open now.", count(&api::control::live_counts::connections_open));
  m.gauge("warden_approvals_pending", "Tool calls waiting for a person's decision.",
          count(&api::control::live_counts::approvals_pending));
  m.gauge("warden_tool_loops_running", "Tool loops running now.", count(&api::control::live_counts::tool_loops_running));
  m.gauge("warden_engine_up",
          "1 when the engine answers requests (and, in a pool, is not ejected), else 0 (the embeddings engine starts "
          "on first use).",
          [&ups, engines] {
            series out;
            for (const auto& st : ups.statuses()) {
              out.push_back({{{"engine", st.name}}, st.state == engine::upstream_state::ready ? 1.0 : 0.0});
            }
            if (!engines) return out;
            for (const auto& ms : engines->status()) {
              for (auto& [l, v] : out) {
                if (l.front().second == ms.name) v = ms.healthy ? 1.0 : 0.0;
              }
            }
            return out;
          });
  m.gauge("warden_engine_outstanding_requests", "Requests in flight to the engine.", [&ups, engines] {
    series out;
    if (engines) {
      for (const auto& ms : engines->status()) out.push_back({{{"engine", ms.name}}, static_cast<double>(ms.outstanding)});
    }
    for (const auto& st : ups.statuses()) {
      if (engines && st.name != k_embeddings_upstream) continue;
      if (auto* h = dynamic_cast<engine::model_host*>(ups.find(st.name))) {
        out.push_back({{{"engine", st.name}}, static_cast<double>(h->status().in_flight)});
      }
    }
    return out;
  });
  if (!queue) return;
  auto sample = [queue](int engine::admission_queue::snapshot_t::*field) {
    return [queue, field] {
      return series{{{{"engine", queue->engine()}}, static_cast<double>(queue->snapshot().*field)}};
    };
  };
  m.gauge("warden_queue_depth", "Model requests waiting in the admission queue for a slot of the engine.",
          sample(&engine::admission_queue::snapshot_t::waiting));
  m.gauge("warden_engine_slots",
          "Requests the engine serves at once (llama-server's --parallel, --upstream-slots; engine=\"pool\": the "
          "healthy engines of the pool together).",
          sample(&engine::admission_queue::snapshot_t::slots));
  m.gauge("warden_engine_slots_busy", "Slots of the engine held by a model request now.",
          sample(&engine::admission_queue::snapshot_t::busy));
}

/// The line saying warden serves: its model, or with a pool of engines each engine's (the first
/// one's state alone read as "not ready" while the others served: a newcomer run).
void print_serving(const serving& s) {
  std::vector<std::pair<std::string, const engine::upstream*>> engines;
  for (std::size_t i = 1;; ++i) {
    std::string name = chat_engine_name(i);
    const engine::upstream* up = s.ups.find(name);
    if (up == nullptr) break;
    engines.emplace_back(std::move(name), up);
  }
  const std::string at = "http://" + s.cfg.host + ":" + std::to_string(s.port) + "/v1";
  if (engines.size() == 1) {
    const engine::upstream& up = *engines.front().second;
    if (up.state() == engine::upstream_state::ready) {
      std::printf("warden: serving %s at %s\n", up.model_id().c_str(), at.c_str());
    } else {
      std::printf("warden: listening at %s; upstream not ready: %s\n", at.c_str(), up.status_message().c_str());
    }
  } else {
    std::string each;
    std::size_t ready = 0;
    for (const auto& [name, up] : engines) {
      const bool ok = up->state() == engine::upstream_state::ready;
      ready += ok ? 1 : 0;
      each += (each.empty() ? "" : "; ") + name + " " + (ok ? up->model_id() : "not ready: " + up->status_message());
    }
    if (ready > 0) {
      std::printf("warden: serving a pool of %zu engines (%zu ready) at %s: %s\n", engines.size(), ready, at.c_str(),
                  each.c_str());
    } else {
      std::printf("warden: listening at %s; no engine of the pool is ready: %s\n", at.c_str(), each.c_str());
    }
  }
  std::fflush(stdout);
}

int serve_until_signal(serving s) {
  // Shutdown: stop accepting, end open streams with an in-band error (not a cut connection),
  // stop llama-server, then stop the io threads. Runs off the io threads so they can still
  // flush the last frames.
  std::thread shutdown;
  std::atomic<bool> shutting_down{false};
  asio::signal_set signals(s.ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", sig);
    shutting_down.store(true);
    s.srv.stop();
    shutdown = std::thread([&] {
      s.client.abort_all("warden is shutting down");
      s.cancels.cancel_all(agent::k_shutdown_reason);  // tool loops parked on approvals or tools
      s.ups.stop_all();
      std::this_thread::sleep_for(std::chrono::milliseconds(k_shutdown_flush_ms));
      s.ioc.stop();
    });
  });
  std::vector<std::thread> threads = run_io_threads(s.ioc, s.cfg.io_threads);

  // Loads on the main thread: llama-server is forked from here, and its PR_SET_PDEATHSIG is
  // tied to this thread, which lives as long as the process.
  auto started = s.ups.start_all();
  int rc = 0;
  if (!started) {
    if (!shutting_down.load()) {
      std::fprintf(stderr, "warden: %s\n", started.error().message.c_str());
      rc = 1;
    }
    s.ioc.stop();
  } else {
    print_serving(s);
  }
  for (auto& t : threads) t.join();
  if (shutdown.joinable()) shutdown.join();
  s.pool.stop();  // before the io_context goes: its last completions are posted there
  s.net_pool.stop();
  s.kb_fetch_pool.stop();
  s.ups.stop_all();
  return rc;
}

}  // namespace

// The composition root: each step above, in order; the declaration order below is the
// destruction order, and it matters (comments).
int run_serve(const config& cfg) {
  setup_logging(cfg.log_level);
  const std::uint64_t open_files = http::raise_open_file_limit();  // before anything opens files
  spdlog::info("open-file limit {}", open_files);
  const start_up_check checked = check_start_up(cfg);
  if (checked.exit_code != 0) return checked.exit_code;
  std::optional<http::key_ring> keys = load_keys(cfg);
  if (!keys) return 2;
  // Blocking work (spawn preparation, workspace folders, SQLite) runs here, never on io threads.
  blocking_pool pool(2);
  sandbox::sandbox_policy policy;
  policy.bwrap_path = cfg.bwrap_path;
  policy.call_memory_bytes = static_cast<std::uint64_t>(cfg.call_memory_mib) * sandbox::k_mib;
  policy.workspace_quota_bytes = static_cast<std::uint64_t>(cfg.workspace_quota_mib) * sandbox::k_mib;
  policy.warm_jails = static_cast<std::size_t>(cfg.warm_jails);
  sandbox::sandbox jail(std::move(policy), &pool);
  report_sandbox(jail);
  const std::unique_ptr<stores> st = open_store(cfg, pool);
  if (!st) return 1;
  // web_search's fetches and searches (network waits of up to 60 s) run apart from the disk work.
  blocking_pool net_pool(4);
  blocking_pool kb_fetch_pool(2);  // URL documents: apart from web_search's fetches (a slow site holds only these)
  tools::web_options web;
  web.backend = *tools::parse_search_backend(cfg.search_backend);  // checked by the config table
  web.allow_private_fetch = cfg.allow_private_fetch;
  web.pool = &net_pool;
  const auto own_port = web.own_port;
  tools::knowledge_runtime knowledge{&st->kb, nullptr, &pool};  // `embed` is set once the surfaces exist
  auto registry = tools::make_builtin_registry(jail, &pool, web, &knowledge);
  // Declared before the io_context so they are destroyed after it: suspended handlers hold
  // approval tickets and cancel registrations that unregister themselves when the io_context
  // destroys them.
  agent::approval_registry approvals(std::chrono::milliseconds(std::int64_t{cfg.approval_timeout_s} * 1000));
  agent::cancel_registry cancels;
  agent::tool_runtime tools{approvals, cancels, *registry, cfg.workspaces_dir,
                            std::chrono::milliseconds(cfg.sse_ping_interval_ms), checked.ceiling, &pool,
                            &st->recorder};
  tools.rules = &st->rules;
  tools.knowledge = &knowledge;
  tools.heal_tool_calls = !cfg.no_heal_tool_calls;
  tools.guidance = {.prompt_nudge = !cfg.no_tool_prompt_nudge,
                    .error_nudge = !cfg.no_tool_error_nudge,
                    .act_reprompts = !cfg.no_act_reprompts};
  asio::io_context ioc(cfg.io_threads);
  // libcurl runs on the io threads. Destroyed before the io_context (after the io threads have
  // stopped): it ends its transfers; the handlers the io_context destroys later cancel their
  // calls through weak references only (http_client.h).
  engine::http_client client(ioc, static_cast<std::size_t>(cfg.io_threads));
  std::vector<engine_line> engine_lines;
  const std::unique_ptr<engine::upstream_registry> ups = make_upstreams(cfg, engine_lines);
  if (!ups) return 2;
  const std::unique_ptr<engine::engine_pool> engines = make_pool(cfg, *ups, engine_lines, client);
  surfaces api(cfg, *ups, engines.get(), client, tools, *st, pool);
  knowledge.embed = [&api](std::vector<std::string> texts) { return api::openai::embed_texts(api.legacy, std::move(texts)); };
  api::control::kb_deps kb_api{&knowledge, web, &kb_fetch_pool};
  // MCP servers (issue 26): their children are forked on `pool`'s threads, which live until the end.
  tools::mcp_manager mcp(mcp_options_for(cfg, jail, pool, *registry, checked.ceiling, ioc));
  if (!load_mcp_servers(cfg, *st, mcp, checked.ceiling)) return 2;
  api::control::mcp_deps mcp_api{&st->mcp, &mcp, checked.ceiling, &pool};
  // External providers (issue 28 §3): their keys sealed under a key file of the home.
  auto seal_key = store::load_or_create_seal_key(cfg.home + "/provider-seal.key");
  if (!seal_key) {
    std::fprintf(stderr, "warden: %s\n", seal_key.error().message.c_str());
    return 2;
  }
  api::control::provider_deps provider_api{&st->providers, &pool, std::move(*seal_key), &client,
                                           std::chrono::milliseconds(cfg.sse_ping_interval_ms)};
  const engine::provider_resolver resolver = api::control::provider_resolver(provider_api);
  api.openai.providers = api.anthropic.providers = api.responses_api.providers = resolver;
  http::router routes({std::move(*keys)}, make_routes(api, *st, pool, kb_api, mcp_api, provider_api),
                      api::openai::openai_surface());
  http::server_options server_opts{cfg.host, cfg.port, static_cast<std::uint64_t>(cfg.max_body_bytes),
                                   cfg.header_timeout_s, static_cast<std::size_t>(cfg.max_connections),
                                   static_cast<std::uint64_t>(cfg.max_pending_body_bytes), k_reserved_paths()};
  http::server srv(ioc, std::move(server_opts), routes);
  api.control.counts = [&srv, &approvals, &cancels, &api] {
    const http::server_stats h = srv.stats();
    return api::control::live_counts{h.connections_open, h.handlers_running, h.pending_body_bytes,
                                     approvals.pending(), cancels.size(), api.background_runs.active()};
  };
  register_gauges(api.control, *ups, engines.get(), api.admission);
  auto port = srv.listen();
  if (!port) {
    std::fprintf(stderr, "warden: %s\n", port.error().message.c_str());
    return 2;
  }
  routes.set_guard(http::make_guard_policy(cfg.host, *port, cfg.allowed_hosts, cfg.allowed_origins));
  own_port->store(*port);
  srv.start();
  if (cfg.responses_ttl_s > 0) {
    asio::co_spawn(ioc, api::responses::sweep_expired(st->responses, &pool, std::chrono::seconds(cfg.responses_ttl_s)),
                   asio::detached);
  }
  spdlog::info("listening on http://{}:{} (model loading); permission ceiling '{}'", cfg.host, *port,
               agent::to_string(checked.ceiling));
  if (!http::binds_loopback_only(cfg.host)) warn_network_exposure(cfg, checked.ceiling);
  return serve_until_signal({cfg, ioc, srv, *port, *ups, client, cancels, pool, net_pool, kb_fetch_pool});
}

}  // namespace warden::app
