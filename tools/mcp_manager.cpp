#include "tools/mcp_manager.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <thread>

#include "tools/mcp_transports.h"
#include "tools/workspace.h"

namespace warden::tools {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

struct mcp_manager::server {
  mcp_server_config cfg;
  std::shared_ptr<mcp::session> live;
  std::string state = "idle";
  std::string error;
  std::string version;
  json info = json::object();
  std::vector<mcp_tool_status> tools;
  std::vector<json> resources;  ///< resources/list's entries (capability "resources")
  std::map<std::string, std::shared_ptr<tool>> objects;     ///< qualified name → tool (reused)
  std::map<std::string, std::string> fingerprints;          ///< qualified name → its definition
  int restarts = 0;
  int failures = 0;
  clock_type::time_point next_try{};
  bool starting = false;
  std::uint64_t generation = 0;  ///< bumped when the entry changes (a start in flight is dropped)
};

namespace {

std::optional<std::string> getenv_lookup(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

/// Back-off before restart number `failures` (1 s doubling to 60 s).
std::chrono::milliseconds backoff(int failures) {
  if (failures <= 0) return std::chrono::milliseconds(0);
  const int shift = std::min(failures - 1, 6);
  return std::min(std::chrono::milliseconds(1000LL << shift), std::chrono::milliseconds(60000));
}

/// `command` as an absolute path: itself when it has a '/', else found on warden's PATH.
result<std::string> resolve_command(const std::string& command) {
  if (command.find('/') != std::string::npos) {
    if (command.front() != '/') return make_error(errc::invalid_request, "the MCP command '" + command + "' must be absolute or a program on PATH");
    return command;
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string full = dir + "/" + command;
    if (::access(full.c_str(), X_OK) == 0) return full;
  }
  return make_error(errc::invalid_request, "the MCP command '" + command + "' is not on PATH");
}

result<std::vector<std::string>> resolved_env(const mcp_server_config& c, const mcp_options& o) {
  std::vector<std::string> out;
  for (const auto& [k, v] : c.env) {
    auto r = resolve_references(v, o.lookup_env);
    if (!r) return r.error();
    out.push_back(k + "=" + *r);
  }
  return out;
}

result<std::map<std::string, std::string>> resolved_headers(const mcp_server_config& c, const mcp_options& o) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : c.headers) {
    auto r = resolve_references(v, o.lookup_env);
    if (!r) return r.error();
    out[k] = *r;
  }
  if (!c.bearer_token_env.empty()) {
    auto token = o.lookup_env(c.bearer_token_env);
    if (!token) return make_error(errc::invalid_request, "the environment variable " + c.bearer_token_env + " (bearer_token_env) is not set");
    out["Authorization"] = "Bearer " + *token;
  }
  return out;
}

error step_error(const mcp_server_config& c, const std::string& step, const std::string& why) {
  return make_error(errc::upstream_unavailable, "MCP server '" + c.id + "': " + step + " failed: " + why);
}

/// Starts a stdio server's child (blocking: on the pool).
result<std::unique_ptr<mcp::transport>> start_stdio(const mcp_server_config& c, const mcp_options& o) {
  if (!o.sb) return step_error(c, "start", "no sandbox on this server");
  if (!c.sandbox && o.max_permission != permission_mode::full) {
    return step_error(c, "start", "'sandbox': false needs the server's --max-permission full");
  }
  const auto mode = c.sandbox ? sandbox::isolation::sandboxed : sandbox::isolation::bypass;
  auto ws = ensure_workspace(o.workspaces_root + "/.mcp", c.id, c.sandbox ? isolation::sandboxed : isolation::bypass);
  if (!ws) return step_error(c, "its workspace", ws.error().message);
  auto cmd = resolve_command(c.command);
  if (!cmd) return step_error(c, "start", cmd.error().message);
  auto env = resolved_env(c, o);
  if (!env) return step_error(c, "start", env.error().message);
  sandbox::service_request req;
  req.argv.push_back(*cmd);
  req.argv.insert(req.argv.end(), c.args.begin(), c.args.end());
  req.workdir = (!c.sandbox && !c.cwd.empty()) ? c.cwd : *ws;
  req.mode = mode;
  req.network = c.network;
  req.read_only_paths = c.read_only_paths;
  req.env = std::move(*env);
  auto proc = o.sb->start_service(req);
  if (!proc) return step_error(c, "start", proc.error().message);
  return mcp::make_stdio_transport(std::move(*proc), "'" + c.id + "'");
}

result<std::unique_ptr<mcp::transport>> make_transport(const mcp_server_config& c, const mcp_options& o) {
  if (c.transport == mcp_transport::stdio) return start_stdio(c, o);
  auto headers = resolved_headers(c, o);
  if (!headers) return step_error(c, "connect", headers.error().message);
  mcp::http_options h;
  h.url = c.url;
  h.headers = std::move(*headers);
  h.label = "'" + c.id + "'";
  h.connect_timeout = std::chrono::milliseconds(std::min(c.timeout_ms, 30000));
  return mcp::make_http_transport(std::move(h));
}

/// Closes a session on a thread of its own: closing kills and reaps a child or DELETEs an HTTP
/// session (up to seconds), which must not hold an io thread.
void close_later(std::shared_ptr<mcp::session> s) {
  if (s) std::thread([s = std::move(s)] { s->close(); }).detach();
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  boost::system::error_code ec;
  co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

}  // namespace

mcp_manager::mcp_manager(mcp_options o) : o_(std::move(o)) {
  if (!o_.lookup_env) o_.lookup_env = getenv_lookup;
}

mcp_manager::~mcp_manager() { close_all(); }

void mcp_manager::close_all() {
  std::vector<std::shared_ptr<mcp::session>> live;
  {
    std::lock_guard lk(mu_);
    for (auto& [id, s] : servers_) {
      if (s->live) live.push_back(std::move(s->live));
    }
  }
  for (auto& s : live) s->close();
}

void mcp_manager::configure(std::vector<mcp_server_config> servers) {
  std::vector<std::shared_ptr<mcp::session>> stopped;
  std::vector<std::string> to_start;
  {
    std::lock_guard lk(mu_);
    std::map<std::string, std::unique_ptr<server>> next;
    for (auto& c : servers) {
      auto it = servers_.find(c.id);
      mcp_server_config old_cfg;
      if (it != servers_.end()) old_cfg = it->second->cfg;
      old_cfg.created_unix_ms = c.created_unix_ms;
      old_cfg.updated_unix_ms = c.updated_unix_ms;
      if (it != servers_.end() && old_cfg == c) {
        next[c.id] = std::move(it->second);
        servers_.erase(it);
        continue;
      }
      auto s = std::make_unique<server>();
      if (it != servers_.end()) s->generation = it->second->generation + 1;
      s->cfg = std::move(c);
      s->state = s->cfg.enabled ? "idle" : "disabled";
      if (s->cfg.enabled) to_start.push_back(s->cfg.id);
      next[s->cfg.id] = std::move(s);
    }
    for (auto& [id, s] : servers_) {  // removed or changed
      if (s->live) stopped.push_back(std::move(s->live));
    }
    servers_ = std::move(next);
  }
  for (auto& s : stopped) close_later(std::move(s));
  publish();
  if (!o_.ex) return;
  for (const auto& id : to_start) {  // learn their tools now, so mcp_enabled finds them
    auto go = [this, id]() -> asio::awaitable<void> {
      auto r = co_await start(id);
      if (!r) spdlog::warn("{}", r.error().message);
    };
    asio::co_spawn(o_.ex, go, asio::detached);
  }
}

std::optional<mcp_server_config> mcp_manager::config_of(const std::string& id) const {
  std::lock_guard lk(mu_);
  auto it = servers_.find(id);
  if (it == servers_.end()) return std::nullopt;
  return it->second->cfg;
}

asio::awaitable<result<std::shared_ptr<mcp::session>>> mcp_manager::connect(mcp_server_config cfg) {
  auto make = [this, cfg]() { return make_transport(cfg, o_); };
  result<std::unique_ptr<mcp::transport>> t = make_error(errc::internal, "not started");
  if (o_.pool && cfg.transport == mcp_transport::stdio) {
    t = co_await o_.pool->run_blocking(make);
  } else {
    t = make();
  }
  if (!t) co_return t.error();
  auto s = std::make_shared<mcp::session>(std::move(*t));
  auto init = co_await s->initialize(true, std::chrono::milliseconds(cfg.timeout_ms));
  if (!init) {
    std::string why = init.error().message;
    const std::string diag = s->diagnostics();
    const std::string death = s->death();
    const std::string tail = diag.substr(diag.size() > 400 ? diag.size() - 400 : 0);
    close_later(s);
    if (!death.empty() && why.find(death) == std::string::npos) {
      why += " (" + death + ")";
    } else if (!tail.empty() && why.find(tail.substr(0, 40)) == std::string::npos && death.find(tail.substr(0, 40)) == std::string::npos) {
      why += " (stderr: " + tail + ")";
    }
    if (cfg.transport == mcp_transport::stdio && cfg.sandbox) {
      why += ". A jailed server sees only /usr, its workspace and its read_only_paths, and has no network unless "
             "'network': true (npx -y needs it to download; or install the package and bind it with read_only_paths)";
    }
    co_return step_error(cfg, "initialize", why);
  }
  co_return s;
}

asio::awaitable<result<std::vector<mcp::tool_def>>> mcp_manager::list_tools(std::shared_ptr<mcp::session> s,
                                                                           std::chrono::milliseconds timeout) {
  std::vector<mcp::tool_def> all;
  std::string cursor;
  for (int page = 0; page < 100; ++page) {
    json params = json::object();
    if (!cursor.empty()) params["cursor"] = cursor;
    auto r = co_await s->request("tools/list", std::move(params), timeout);
    if (!r) co_return r.error();
    auto p = mcp::parse_tools_page(*r);
    if (!p) co_return p.error();
    for (auto& d : p->tools) all.push_back(std::move(d));
    if (p->next_cursor.empty() || p->next_cursor == cursor) break;
    cursor = p->next_cursor;
  }
  co_return all;
}

namespace {

/// Whether any string inside `j` (a schema's descriptions, titles, enum values) carries markup.
bool strings_carry_markup(const json& j) {
  if (j.is_string()) return mcp::has_template_markup(j.get_ref<const std::string&>());
  if (j.is_object()) {
    for (const auto& [key, v] : j.items()) {  // property names reach the template too
      if (mcp::has_template_markup(key) || strings_carry_markup(v)) return true;
    }
  }
  if (j.is_array()) {
    for (const auto& v : j) {
      if (strings_carry_markup(v)) return true;
    }
  }
  return false;
}

std::string excluded_reason(const mcp_server_config& c, const mcp::tool_def& d) {
  if (c.allowed_tools && std::find(c.allowed_tools->begin(), c.allowed_tools->end(), d.name) == c.allowed_tools->end()) {
    return "not in allowed_tools";
  }
  if (d.app_only) return "for the server's own app only (_meta.ui.visibility)";
  if (mcp::has_template_markup(d.description) || mcp::has_template_markup(d.title) ||
      strings_carry_markup(d.input_schema)) {
    return "its description carries chat-template markup";
  }
  return "";
}

}  // namespace

void mcp_manager::set_tools(const std::string& id, std::vector<mcp::tool_def> defs) {
  server& s = *servers_.at(id);
  std::map<std::string, std::shared_ptr<tool>> objects;
  std::map<std::string, std::string> prints;
  s.tools.clear();
  for (const auto& d : defs) {
    mcp_tool_status st;
    st.tool = d.name;
    st.name = mcp::qualified_name(id, d.name);
    st.description = mcp::has_template_markup(d.description) ? mcp::neutralise(d.description) : d.description;
    st.input_schema = d.input_schema;
    st.annotations = d.annotations;
    st.excluded_reason = excluded_reason(s.cfg, d);
    if (st.excluded_reason.empty() && objects.count(st.name)) st.excluded_reason = "its name repeats another tool's";
    st.executable = st.excluded_reason.empty();
    if (st.executable) {
      const std::string print = json{{"d", d.description}, {"s", d.input_schema}, {"a", d.annotations}, {"t", s.cfg.trusted},
                                     {"n", d.name}}.dump();
      auto old = s.objects.find(st.name);
      const bool same = old != s.objects.end() && s.fingerprints[st.name] == print;
      objects[st.name] = same ? old->second : make_mcp_tool(*this, id, st.name, d, s.cfg.trusted);
      prints[st.name] = print;
    }
    s.tools.push_back(std::move(st));
  }
  s.objects = std::move(objects);
  s.fingerprints = std::move(prints);
}

asio::awaitable<std::vector<json>> mcp_manager::list_resources(std::shared_ptr<mcp::session> s,
                                                              std::chrono::milliseconds timeout) {
  std::vector<json> out;
  if (!s->server_capabilities().contains("resources")) co_return out;
  std::string cursor;
  for (int page = 0; page < 5; ++page) {
    json params = json::object();
    if (!cursor.empty()) params["cursor"] = cursor;
    auto r = co_await s->request("resources/list", std::move(params), timeout);
    if (!r || !r->is_object()) break;
    const json list = r->value("resources", json::array());
    for (const auto& item : list) {
      if (item.is_object() && item.contains("uri") && item["uri"].is_string()) out.push_back(item);
    }
    const auto at = r->find("nextCursor");
    const std::string next = at != r->end() && at->is_string() ? at->get<std::string>() : std::string();
    if (next.empty() || next == cursor) break;
    cursor = next;
  }
  co_return out;
}

std::shared_ptr<tool> mcp_manager::resource_tool_locked() {
  std::vector<std::string> servers, trusted;
  std::string listing;
  int listed = 0;
  for (const auto& [id, s] : servers_) {
    if (!s->cfg.enabled || s->resources.empty()) continue;
    servers.push_back(id);
    if (s->cfg.trusted) trusted.push_back(id);
    for (const auto& r : s->resources) {
      if (listed++ >= 40) break;
      std::string line = "\n- " + id + ": " + r["uri"].get<std::string>();
      const std::string name = r.contains("name") && r["name"].is_string() ? r["name"].get<std::string>() : std::string();
      if (!name.empty()) line += " (" + name + ")";
      if (!mcp::has_template_markup(line)) listing += line;
    }
  }
  if (servers.empty()) return nullptr;
  if (!listing.empty()) listing = "\nResources:" + listing;
  const std::string print = json{{"s", servers}, {"t", trusted}, {"l", listing}}.dump();
  if (!resource_tool_ || print != resource_print_) {
    resource_tool_ = make_resource_tool(*this, servers, trusted, listing);
    resource_print_ = print;
  }
  return resource_tool_;
}

void mcp_manager::publish() {
  if (!o_.reg) return;
  std::vector<std::shared_ptr<tool>> all;
  {
    std::lock_guard lk(mu_);
    std::set<std::string> taken;  // a name two servers' tools share is offered once (id order)
    for (const auto& [id, s] : servers_) {
      if (!s->cfg.enabled) continue;
      for (const auto& st : s->tools) {
        auto it = s->objects.find(st.name);
        if (st.executable && it != s->objects.end() && taken.insert(st.name).second) all.push_back(it->second);
      }
    }
    if (auto r = resource_tool_locked()) all.push_back(std::move(r));
  }
  o_.reg->set_dynamic(std::move(all));
}

void mcp_manager::watch(const std::string& id, const std::shared_ptr<mcp::session>& sess) {
  std::weak_ptr<mcp::session> weak = sess;
  sess->on_tools_changed([this, id, weak] {
    if (!o_.ex) return;
    auto relist = [this, id, weak]() -> asio::awaitable<void> {
      auto s = weak.lock();
      if (!s) co_return;
      const auto cfg = config_of(id);
      if (!cfg) co_return;
      auto defs = co_await list_tools(s, std::chrono::milliseconds(cfg->timeout_ms));
      if (!defs) co_return;
      {
        std::lock_guard lk(mu_);
        auto it = servers_.find(id);
        if (it == servers_.end() || it->second->live != s) co_return;
        set_tools(id, std::move(*defs));
      }
      publish();
    };
    asio::co_spawn(o_.ex, relist, asio::detached);
  });
}

asio::awaitable<result<void>> mcp_manager::start(std::string id) {
  mcp_server_config cfg;
  std::uint64_t generation = 0;
  for (int waited = 0;; waited += 50) {
    std::chrono::milliseconds wait{0};
    {
      std::lock_guard lk(mu_);
      auto it = servers_.find(id);
      if (it == servers_.end()) co_return make_error(errc::invalid_request, "there is no MCP server '" + id + "'");
      server& s = *it->second;
      if (!s.cfg.enabled) co_return make_error(errc::upstream_unavailable, "the MCP server '" + id + "' is disabled");
      if (s.live && s.live->alive()) co_return result<void>{};
      const auto now = clock_type::now();
      if (waited > s.cfg.timeout_ms) co_return step_error(s.cfg, "start", "it is still starting");
      if (!s.starting && now >= s.next_try) {
        s.starting = true;
        s.state = s.restarts > 0 ? "restarting" : "starting";
        cfg = s.cfg;
        generation = s.generation;
        break;
      }
      wait = s.starting ? std::chrono::milliseconds(50)
                        : std::chrono::duration_cast<std::chrono::milliseconds>(s.next_try - now) + std::chrono::milliseconds(1);
      if (!s.starting && wait.count() > s.cfg.timeout_ms) {
        co_return step_error(s.cfg, "restart", "it failed; next try in " + std::to_string(wait.count() / 1000 + 1) + " s (" + s.error + ")");
      }
    }
    co_await sleep_for(wait);
  }
  auto conn = co_await connect(cfg);
  result<std::vector<mcp::tool_def>> defs = make_error(errc::internal, "not listed");
  std::vector<json> resources;
  if (conn) defs = co_await list_tools(*conn, std::chrono::milliseconds(cfg.timeout_ms));
  if (conn && defs) resources = co_await list_resources(*conn, std::chrono::milliseconds(cfg.timeout_ms));
  std::optional<error> failure;
  {
    std::lock_guard lk(mu_);
    auto it = servers_.find(id);
    const bool current = it != servers_.end() && it->second->generation == generation;
    if (!current) {
      if (conn) close_later(*conn);
      co_return make_error(errc::upstream_unavailable, "the MCP server '" + id + "' was changed while it started");
    }
    server& s = *it->second;
    s.starting = false;
    if (conn && defs) {
      s.live = *conn;
      s.failures = 0;
      s.state = "ready";
      s.error.clear();
      s.version = s.live->protocol_version();
      s.info = s.live->server_info();
      s.resources = std::move(resources);
      set_tools(id, std::move(*defs));
      watch(id, s.live);
    } else {
      failure = conn ? defs.error() : conn.error();
      if (conn) close_later(*conn);
      ++s.failures;
      s.next_try = clock_type::now() + backoff(s.failures);
      s.state = "error";
      s.error = failure->message;
    }
  }
  publish();
  if (failure) co_return *failure;
  co_return result<void>{};
}

asio::awaitable<result<std::shared_ptr<mcp::session>>> mcp_manager::session_for(std::string id) {
  {
    std::lock_guard lk(mu_);
    auto it = servers_.find(id);
    if (it != servers_.end() && it->second->live) {
      server& s = *it->second;
      if (s.live->alive()) co_return s.live;
      s.error = s.live->death();  // it died: restart (with back-off)
      s.live.reset();
      ++s.restarts;
      ++s.failures;
      s.next_try = clock_type::now() + backoff(s.failures);
      s.state = "restarting";
      spdlog::warn("MCP server '{}' died ({}); restarting", id, s.error);
    }
  }
  auto r = co_await start(id);
  if (!r) co_return r.error();
  std::lock_guard lk(mu_);
  auto it = servers_.find(id);
  if (it == servers_.end() || !it->second->live) co_return make_error(errc::upstream_unavailable, "the MCP server '" + id + "' went away");
  co_return it->second->live;
}

mcp_server_status mcp_manager::status_of(const server& s) const {
  mcp_server_status st;
  st.id = s.cfg.id;
  st.state = s.state;
  st.error = s.error;
  if (s.live && !s.live->alive()) {
    st.state = "restarting";
    st.error = s.live->death();
  }
  st.protocol_version = s.version;
  st.server_info = s.info;
  st.tools = s.tools;
  st.restarts = s.restarts;
  return st;
}

std::vector<mcp_server_status> mcp_manager::statuses() const {
  std::vector<mcp_server_status> out;
  std::lock_guard lk(mu_);
  for (const auto& [id, s] : servers_) out.push_back(status_of(*s));
  return out;
}

asio::awaitable<std::optional<mcp_server_status>> mcp_manager::refresh(std::string id) {
  std::shared_ptr<mcp::session> old;
  {
    std::lock_guard lk(mu_);
    auto it = servers_.find(id);
    if (it == servers_.end()) co_return std::nullopt;
    old = std::move(it->second->live);
    it->second->failures = 0;
    it->second->next_try = {};
  }
  close_later(std::move(old));
  auto r = co_await start(id);  // its outcome is in the status
  (void)r;
  std::lock_guard lk(mu_);
  auto it = servers_.find(id);
  if (it == servers_.end()) co_return std::nullopt;
  co_return status_of(*it->second);
}

asio::awaitable<result<mcp_server_status>> mcp_manager::test(mcp_server_config cfg) {
  auto conn = co_await connect(cfg);
  if (!conn) co_return conn.error();
  auto defs = co_await list_tools(*conn, std::chrono::milliseconds(cfg.timeout_ms));
  close_later(*conn);
  if (!defs) co_return step_error(cfg, "tools/list", defs.error().message);
  mcp_server_status st;
  st.id = cfg.id;
  st.state = "ready";
  st.protocol_version = (*conn)->protocol_version();
  st.server_info = (*conn)->server_info();
  for (const auto& d : *defs) {
    mcp_tool_status t;
    t.tool = d.name;
    t.name = mcp::qualified_name(cfg.id, d.name);
    t.description = mcp::has_template_markup(d.description) ? mcp::neutralise(d.description) : d.description;
    t.input_schema = d.input_schema;
    t.annotations = d.annotations;
    t.excluded_reason = excluded_reason(cfg, d);
    t.executable = t.excluded_reason.empty();
    st.tools.push_back(std::move(t));
  }
  co_return st;
}

asio::awaitable<result<json>> mcp_manager::list_prompts(std::string id) {
  auto s = co_await session_for(id);
  if (!s) co_return s.error();
  const auto cfg = config_of(id);
  const auto timeout = std::chrono::milliseconds(cfg ? cfg->timeout_ms : 60000);
  auto r = co_await (*s)->request("prompts/list", json::object(), timeout);
  if (!r) co_return r.error();
  co_return r->value("prompts", json::array());
}

}  // namespace warden::tools
