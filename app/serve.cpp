#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <atomic>
#include <filesystem>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "agent/rule_book.h"
#include "agent/tool_loop.h"
#include "api/anthropic/messages_handler.h"
#include "api/control/audit_routes.h"
#include "api/control/routes.h"
#include "api/control/store_adapters.h"
#include "api/control/ui_routes.h"
#include "api/responses/responses_handler.h"
#include "api/openai/chat_handler.h"
#include "api/openai/legacy_handler.h"
#include "app/commands.h"
#include "common/blocking_pool.h"
#include "engine/chat_backend.h"
#include "engine/chat_service.h"
#include "sandbox/runner.h"
#include "store/database.h"
#include "store/responses_store.h"
#include "tools/builtins.h"
#include "engine/http_client.h"
#include "engine/llama_server.h"
#include "engine/openai_compatible.h"
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
  if (cfg.api_key.empty()) {
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

}  // namespace

int run_serve(const config& cfg) {
  setup_logging(cfg.log_level);
  // Tools are children of this process: without this, a tool running as the same user could read
  // /proc/<warden>/environ (API keys) and warden's memory (reference §4.4, "parent hardening").
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    std::fprintf(stderr, "warden: cannot make the server non-dumpable (prctl: %s); refusing to start\n",
                 std::strerror(errno));
    return 1;
  }
  if (!http::binds_loopback_only(cfg.host) && cfg.api_key.empty() && !cfg.insecure_no_auth) {
    std::fprintf(stderr,
                 "warden: refusing to listen on %s without an API key: anyone who can reach this address could "
                 "use the model and run tools on this machine. Set --api-key (WARDEN_API_KEY), or pass "
                 "--insecure-no-auth (WARDEN_INSECURE_NO_AUTH=1) to accept that risk explicitly.\n",
                 cfg.host.c_str());
    return 2;
  }
  const auto max_permission = agent::parse_permission_mode(cfg.max_permission);
  if (!max_permission) {  // config validated it; never default to the most permissive on a mismatch
    std::fprintf(stderr, "warden: invalid value for --max-permission (WARDEN_MAX_PERMISSION): '%s'\n",
                 cfg.max_permission.c_str());
    return 2;
  }
  if (cfg.upstream_url.empty()) {  // fail before binding anything when the model cannot exist
    std::error_code fs_ec;
    if (!std::filesystem::is_regular_file(cfg.model_path, fs_ec)) {
      std::fprintf(stderr, "warden: model file not found: %s (run `make setup` for the default model, or pass --model PATH)\n",
                   cfg.model_path.c_str());
      return 1;
    }
  }
  // Blocking work (spawn preparation, workspace folders, SQLite) runs here, never on io threads.
  blocking_pool pool(2);
  sandbox::sandbox jail({cfg.bwrap_path}, &pool);
  {
    const auto sb = jail.probe();
    if (sb.available) spdlog::info("tool sandbox: {}", sb.detail);
    else spdlog::warn("tool sandbox unavailable: {}; fix: {}. Tool calls fail unless a request sets bypass_permissions",
                      sb.detail, sb.fix);
  }
  auto db = store::database::open(cfg.home + "/warden.db");
  if (!db) {
    std::fprintf(stderr, "warden: %s\n", db.error().message.c_str());
    return 1;
  }
  store::call_log calls(**db);
  api::control::store_recorder recorder(calls, pool);
  store::rule_store rule_rows(**db);
  store::response_store responses(**db);
  api::control::stored_rules kept_rules(rule_rows);
  agent::rule_book rules(&kept_rules);
  if (auto loaded = rules.load(); !loaded) {
    std::fprintf(stderr, "warden: %s\n", loaded.error().message.c_str());
    return 1;
  }
  auto registry = tools::make_builtin_registry(jail);
  // Declared before the io_context so it is destroyed after it: destroying the io_context
  // destroys suspended handlers, whose guards cancel their upstream calls through the client.
  engine::http_client client;
  // Same for the tool-loop registries: suspended handlers hold approval tickets and cancel
  // registrations that unregister themselves when the io_context destroys them.
  agent::approval_registry approvals(std::chrono::milliseconds(std::int64_t{cfg.approval_timeout_s} * 1000));
  agent::cancel_registry cancels;
  agent::tool_runtime tools{approvals, cancels, *registry, cfg.workspaces_dir,
                            std::chrono::milliseconds(cfg.sse_ping_interval_ms), *max_permission, &pool, &recorder};
  tools.rules = &rules;
  asio::io_context ioc(cfg.io_threads);
  std::unique_ptr<engine::upstream> up;
  engine::llama_server_options llama_opts;  // warden's own llama-server: the embeddings child's too
  if (cfg.upstream_url.empty()) {
    std::string llama_key;  // "" = a random key per launch
    if (!cfg.llama_api_key_file.empty()) {
      auto key = engine::read_llama_api_key_file(cfg.llama_api_key_file);
      if (!key) {
        std::fprintf(stderr, "warden: %s\n", key.error().message.c_str());
        return 2;
      }
      llama_key = std::move(*key);
    }
    llama_opts = engine::llama_server_options{cfg.llama_server_path, cfg.model_path, cfg.model_id, cfg.ctx_tokens,
                                              cfg.parallel_slots, cfg.load_timeout_s, std::move(llama_key)};
    up = std::make_unique<engine::llama_server>(llama_opts);
  } else {
    up = std::make_unique<engine::openai_compatible>(cfg.upstream_url, cfg.upstream_api_key, cfg.model_id);
  }
  engine::chat_service chat(*up, client, std::chrono::milliseconds(cfg.sse_ping_interval_ms));
  engine::openai_chat_backend backend(chat);
  // /v1/embeddings on warden's own llama-server: a second child with --embeddings, started on
  // the first request (engine/llama_server.h); an OpenAI-compatible upstream serves them itself.
  std::unique_ptr<engine::on_demand_upstream> embed_up;
  std::unique_ptr<engine::chat_service> embed_chat;
  if (cfg.upstream_url.empty()) {
    llama_opts.embeddings = true;
    embed_up = std::make_unique<engine::on_demand_upstream>(std::make_unique<engine::llama_server>(llama_opts));
    embed_chat = std::make_unique<engine::chat_service>(*embed_up, client, std::chrono::milliseconds(cfg.sse_ping_interval_ms));
  }
  api::openai::legacy_deps legacy{chat, embed_chat.get(), embed_up.get()};
  const long long now_s = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  api::openai::openai_deps openai{chat, backend, &tools, now_s};
  api::anthropic::anthropic_deps anthropic{backend, &tools};
  api::responses::run_registry background_runs;
  api::responses::fail_unfinished_runs(responses);
  api::responses::responses_deps responses_api{backend, &tools, &responses, &pool, &background_runs,
                                               std::chrono::milliseconds(cfg.sse_ping_interval_ms)};
  api::control::control_deps control{&tools, [&up] {
    api::control::health_report h;
    switch (up->state()) {
      case engine::upstream_state::ready: h = {true, "ok", ""}; break;
      case engine::upstream_state::starting:
      case engine::upstream_state::stopped: h = {false, "loading", up->status_message()}; break;
      case engine::upstream_state::failed: h = {false, "error", up->status_message()}; break;
    }
    return h;
  }};
  std::vector<route> table = api::control::routes(control);
  for (auto& r : api::control::audit_routes(&calls, &pool)) table.push_back(std::move(r));
  for (auto& r : api::openai::routes(openai)) table.push_back(std::move(r));
  for (auto& r : api::openai::legacy_routes(legacy)) table.push_back(std::move(r));
  for (auto& r : api::anthropic::routes(anthropic)) table.push_back(std::move(r));
  for (auto& r : api::responses::routes(responses_api)) table.push_back(std::move(r));
  for (auto& r : api::control::ui_routes()) table.push_back(std::move(r));
  http::router routes({cfg.api_key}, std::move(table), api::openai::openai_surface());
  http::server srv(ioc, {cfg.host, cfg.port, static_cast<std::uint64_t>(cfg.max_body_bytes)}, routes);
  auto port = srv.listen();
  if (!port) {
    std::fprintf(stderr, "warden: %s\n", port.error().message.c_str());
    return 2;
  }
  routes.set_guard(http::make_guard_policy(cfg.host, *port, cfg.allowed_hosts, cfg.allowed_origins));
  srv.start();
  spdlog::info("listening on http://{}:{} (model loading); permission ceiling '{}'", cfg.host, *port,
               agent::to_string(*max_permission));
  if (!http::binds_loopback_only(cfg.host)) warn_network_exposure(cfg, *max_permission);

  // Shutdown: stop accepting, end open streams with an in-band error (not a cut connection),
  // stop llama-server, then stop the io threads. Runs off the io threads so they can still
  // flush the last frames.
  std::thread shutdown;
  std::atomic<bool> shutting_down{false};
  asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", sig);
    shutting_down.store(true);
    srv.stop();
    shutdown = std::thread([&] {
      client.abort_all("warden is shutting down");
      cancels.cancel_all(agent::k_shutdown_reason);  // tool loops parked on approvals or tools
      up->stop();
      if (embed_up) embed_up->stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(k_shutdown_flush_ms));
      ioc.stop();
    });
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < cfg.io_threads; ++i) {
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

  // Loads on the main thread: llama-server is forked from here, and its PR_SET_PDEATHSIG is
  // tied to this thread, which lives as long as the process.
  auto started = up->start();
  int rc = 0;
  if (!started) {
    if (!shutting_down.load()) {
      std::fprintf(stderr, "warden: %s\n", started.error().message.c_str());
      rc = 1;
    }
    ioc.stop();
  } else {
    if (up->state() == engine::upstream_state::ready) {
      std::printf("warden: serving %s at http://%s:%d/v1\n", up->model_id().c_str(), cfg.host.c_str(), *port);
    } else {
      std::printf("warden: listening at http://%s:%d/v1; upstream not ready: %s\n", cfg.host.c_str(), *port,
                  up->status_message().c_str());
    }
    std::fflush(stdout);
  }
  for (auto& t : threads) t.join();
  if (shutdown.joinable()) shutdown.join();
  pool.stop();  // before the io_context goes: its last completions are posted there
  up->stop();
  if (embed_up) embed_up->stop();
  return rc;
}

}  // namespace warden::app
