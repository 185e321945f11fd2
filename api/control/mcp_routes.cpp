#include "api/control/mcp_routes.h"

#include <spdlog/spdlog.h>

#include "api/control/extensions.h"
#include "api/control/mcp_registry.h"
#include "common/json_fields.h"
#include "common/json_util.h"

namespace warden::api::control {

namespace {

namespace asio = boost::asio;
using store::stored_mcp_server;
using tools::mcp_server_config;
using tools::mcp_server_status;

constexpr std::string_view k_prefix = "/api/mcp/servers/";

asio::awaitable<void> fail(response_writer& out, error e) { co_await wire::send_error(out, control_surface(), e); }

asio::awaitable<void> send_json(response_writer& out, int status, json body) {
  co_await out.send(status, "application/json", dump_safe(body));
}

error not_found() { return make_error(errc::not_found, "no MCP server with this id", "id", "mcp_server_not_found"); }
error unavailable() { return make_error(errc::upstream_unavailable, "the MCP registry is not available"); }
error admin_only() {
  return make_error(errc::forbidden,
                    "only the single user or an admin key may change MCP servers (an entry may start a program on "
                    "this machine)",
                    "", "admin_only");
}
error bad_route(const std::string& path) { return make_error(errc::not_found, "no such MCP route: " + path); }
error bad_method(const std::string& path) {
  return make_error(errc::method_not_allowed, "this method is not allowed on " + path);
}

/// A failure to reach a server as the 502 the routes answer.
error unreachable(const error& e) { return make_error(errc::upstream_error, e.message, e.param, "mcp_server_error"); }

json list_json(json data) {
  json j = json::object();
  j["object"] = "list";
  j["data"] = std::move(data);
  return j;
}

json deleted_json(const std::string& id) {
  json j = json::object();
  j["deleted"] = true;
  j["id"] = id;
  return j;
}

/// The status the manager reports for `c`, or the one before it has any.
mcp_server_status status_of(const mcp_server_config& c, const std::vector<mcp_server_status>& all) {
  for (const auto& s : all) {
    if (s.id == c.id) return s;
  }
  mcp_server_status s;
  s.id = c.id;
  s.state = c.enabled ? "idle" : "disabled";
  return s;
}

/// entry + "status" (compact: "tool_count" instead of the tools).
json entry_json(const mcp_server_config& c, const mcp_server_status& s) {
  json j = tools::to_json(c);
  json st = tools::to_json(s);
  st.erase("tools");
  st["tool_count"] = s.tools.size();
  j["status"] = std::move(st);
  return j;
}

json detail_json(const mcp_server_config& c, const mcp_server_status& s) {
  json j = entry_json(c, s);
  json tools = json::array();
  for (const auto& t : s.tools) tools.push_back(tools::to_json(t));
  j["tools"] = std::move(tools);
  return j;
}

/// The parts of a path under /api/mcp/servers/: {id} or {id}/{action}.
std::vector<std::string> path_parts(const std::string& path) {
  std::vector<std::string> parts;
  std::string_view rest = std::string_view(path).substr(std::min(path.size(), k_prefix.size()));
  while (!rest.empty()) {
    auto slash = rest.find('/');
    parts.emplace_back(rest.substr(0, slash));
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
    if (rest.empty()) parts.emplace_back();
  }
  return parts;
}

/// The body as an entry, checked against --max-permission. `path_id` (PUT) fills a missing id
/// and must equal a given one; `fallback_id` only fills a missing one.
result<mcp_server_config> entry_from_body(const std::string& body, const std::string& path_id, permission_mode max,
                                          const std::string& fallback_id = "") {
  auto j = parse_control_object(body);
  if (!j) return j.error();
  const bool has_id = j->contains("id") && !(*j)["id"].is_null();
  auto c = tools::parse_server_config(*j, has_id || !path_id.empty() ? path_id : fallback_id);
  if (!c) return c.error();
  if (auto e = sandbox_refusal(*c, max)) return *e;
  return c;
}

/// Import's body: the document's entries and "replace".
result<std::pair<std::vector<mcp_server_config>, bool>> import_body(const std::string& body, permission_mode max) {
  auto j = parse_control_object(body);
  if (!j) return j.error();
  for (const auto& [k, v] : j->items()) {
    if (k != "document" && k != "replace") return field_invalid("unknown field '" + k + "'", k, "unknown_parameter");
  }
  bool replace = false;
  if (auto e = check_bool_field(*j, "replace", replace)) return *e;
  auto doc = j->find("document");
  if (doc == j->end() || doc->is_null()) {
    return make_error(errc::invalid_request, "'document' is required: an {\"mcpServers\": {…}} document", "document",
                      "missing_required_parameter");
  }
  auto entries = tools::parse_mcp_servers_document(*doc);
  if (!entries) {
    error e = entries.error();
    e.param = e.param == "document" ? e.param : "document." + e.param;
    return e;
  }
  for (const auto& c : *entries) {
    if (auto e = sandbox_refusal(c, max)) return *e;
  }
  return std::pair{std::move(*entries), replace};
}

/// The stored entry `id` (blocking): nullopt when there is none.
result<std::optional<mcp_server_config>> find_entry(store::mcp_server_store& st, const std::string& id) {
  auto row = st.find(id);
  if (!row) return row.error();
  if (!*row) return std::optional<mcp_server_config>();
  auto c = from_row(**row);
  if (!c) return c.error();
  return std::optional<mcp_server_config>(std::move(*c));
}

/// The entry `id` or the 404 / 500 to answer.
asio::awaitable<result<mcp_server_config>> find(mcp_deps& deps, const std::string& id) {
  auto* st = deps.store;
  auto look = [st, id] { return find_entry(*st, id); };
  auto found = co_await off_thread(deps.pool, look);
  if (!found) co_return found.error();
  if (!*found) co_return not_found();
  co_return std::move(**found);
}

/// Hands the whole registry to the manager; a store error is logged (the change itself stands).
asio::awaitable<void> reload(mcp_deps& deps) {
  auto* st = deps.store;
  auto load = [st] { return load_mcp_servers(*st); };
  auto all = co_await off_thread(deps.pool, load);
  if (!all) {
    spdlog::warn("mcp: the registry could not be read after a change: {}", all.error().message);
    co_return;
  }
  deps.control->configure(std::move(*all));
}

asio::awaitable<void> list(response_writer& out, mcp_deps& deps) {
  auto* st = deps.store;
  auto load = [st] { return load_mcp_servers(*st); };
  auto all = co_await off_thread(deps.pool, load);
  if (!all) co_return co_await fail(out, all.error());
  const auto statuses = deps.control->statuses();
  json data = json::array();
  for (const auto& c : *all) data.push_back(entry_json(c, status_of(c, statuses)));
  co_await send_json(out, 200, list_json(std::move(data)));
}

asio::awaitable<void> show(response_writer& out, mcp_deps& deps, const std::string& id) {
  auto c = co_await find(deps, id);
  if (!c) co_return co_await fail(out, c.error());
  const auto status = status_of(*c, deps.control->statuses());
  co_await send_json(out, 200, detail_json(*c, status));
}

asio::awaitable<void> create(const http_request& req, response_writer& out, mcp_deps& deps) {
  auto c = entry_from_body(req.body, "", deps.max_permission);
  if (!c) co_return co_await fail(out, c.error());
  c->owner = req.caller.name;
  c->created_unix_ms = c->updated_unix_ms = mcp_now_ms();
  auto* st = deps.store;
  const stored_mcp_server row = to_row(*c);
  auto add = [st, row] { return st->insert(row); };
  auto added = co_await off_thread(deps.pool, add);
  if (!added) co_return co_await fail(out, added.error());
  co_await reload(deps);
  const auto status = status_of(*c, deps.control->statuses());
  co_await send_json(out, 201, entry_json(*c, status));
}

/// PUT's write (blocking): the entry as stored, or nullopt when there is none.
result<std::optional<mcp_server_config>> replace_entry(store::mcp_server_store& st, const mcp_server_config& c) {
  auto updated = st.update(to_row(c));
  if (!updated) return updated.error();
  if (!*updated) return std::optional<mcp_server_config>();
  return find_entry(st, c.id);
}

asio::awaitable<void> replace(const http_request& req, response_writer& out, mcp_deps& deps, const std::string& id) {
  auto c = entry_from_body(req.body, id, deps.max_permission);
  if (!c) co_return co_await fail(out, c.error());
  c->updated_unix_ms = mcp_now_ms();
  auto* st = deps.store;
  const mcp_server_config entry = *c;
  auto put = [st, entry] { return replace_entry(*st, entry); };
  auto stored = co_await off_thread(deps.pool, put);
  if (!stored) co_return co_await fail(out, stored.error());
  if (!*stored) co_return co_await fail(out, not_found());
  co_await reload(deps);
  const auto status = status_of(**stored, deps.control->statuses());
  co_await send_json(out, 200, entry_json(**stored, status));
}

asio::awaitable<void> remove(response_writer& out, mcp_deps& deps, const std::string& id) {
  auto* st = deps.store;
  auto drop = [st, id] { return st->remove(id); };
  auto removed = co_await off_thread(deps.pool, drop);
  if (!removed) co_return co_await fail(out, removed.error());
  if (!*removed) co_return co_await fail(out, not_found());
  co_await reload(deps);
  co_await send_json(out, 200, deleted_json(id));
}

asio::awaitable<void> refresh(response_writer& out, mcp_deps& deps, const std::string& id) {
  auto c = co_await find(deps, id);
  if (!c) co_return co_await fail(out, c.error());
  auto status = co_await deps.control->refresh(id);
  if (!status) co_return co_await fail(out, not_found());
  co_await send_json(out, 200, tools::to_json(*status));
}

/// Tests `c` with the manager: its status, or the 502.
asio::awaitable<void> run_test(response_writer& out, mcp_deps& deps, mcp_server_config c) {
  auto status = co_await deps.control->test(std::move(c));
  if (!status) co_return co_await fail(out, unreachable(status.error()));
  co_await send_json(out, 200, tools::to_json(*status));
}

asio::awaitable<void> test_saved(response_writer& out, mcp_deps& deps, const std::string& id) {
  auto c = co_await find(deps, id);
  if (!c) co_return co_await fail(out, c.error());
  co_await run_test(out, deps, std::move(*c));
}

asio::awaitable<void> test_unsaved(const http_request& req, response_writer& out, mcp_deps& deps) {
  auto c = entry_from_body(req.body, "", deps.max_permission, "test");
  if (!c) co_return co_await fail(out, c.error());
  co_await run_test(out, deps, std::move(*c));
}

asio::awaitable<void> prompts(response_writer& out, mcp_deps& deps, const std::string& id) {
  auto c = co_await find(deps, id);
  if (!c) co_return co_await fail(out, c.error());
  auto listed = co_await deps.control->list_prompts(id);
  if (!listed) co_return co_await fail(out, unreachable(listed.error()));
  json data = json::array();
  if (listed->is_array()) data = std::move(*listed);
  co_await send_json(out, 200, list_json(std::move(data)));
}

asio::awaitable<void> import_document(const http_request& req, response_writer& out, mcp_deps& deps) {
  auto body = import_body(req.body, deps.max_permission);
  if (!body) co_return co_await fail(out, body.error());
  auto* st = deps.store;
  const std::vector<mcp_server_config> entries = std::move(body->first);
  const bool replace = body->second;
  const std::string owner = req.caller.name;
  auto write = [st, entries, replace, owner] { return put_entries(*st, entries, replace, owner, mcp_now_ms()); };
  auto written = co_await off_thread(deps.pool, write);
  if (!written) co_return co_await fail(out, written.error());
  co_await reload(deps);
  const auto statuses = deps.control->statuses();
  json data = json::array();
  for (const auto& c : *written) data.push_back(entry_json(c, status_of(c, statuses)));
  co_await send_json(out, 200, list_json(std::move(data)));
}

/// Routes a request under /api/mcp/servers/: {id}, {id}/refresh|test|prompts.
asio::awaitable<void> dispatch_one(const http_request& req, response_writer& out, mcp_deps& deps,
                                   const std::string& m) {
  const auto p = path_parts(req.path);
  const bool shaped = !p.empty() && p.size() <= 2 && tools::valid_mcp_server_id(p[0]);
  if (!shaped) co_return co_await fail(out, bad_route(req.path));
  const std::string& id = p[0];
  if (p.size() == 1) {
    if (m == "GET") co_return co_await show(out, deps, id);
    if (m == "PUT") co_return co_await replace(req, out, deps, id);
    if (m == "DELETE") co_return co_await remove(out, deps, id);
    co_return co_await fail(out, bad_method(req.path));
  }
  const std::string& action = p[1];
  if (action != "refresh" && action != "test" && action != "prompts") co_return co_await fail(out, bad_route(req.path));
  if (action == "prompts" && m == "GET") co_return co_await prompts(out, deps, id);
  if (action == "refresh" && m == "POST") co_return co_await refresh(out, deps, id);
  if (action == "test" && m == "POST") co_return co_await test_saved(out, deps, id);
  co_await fail(out, bad_method(req.path));
}

route_handler bind(mcp_deps& deps, const char* method) {
  const std::string m = method;
  return [&deps, m](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    if (deps.store == nullptr || deps.control == nullptr) co_return co_await fail(out, unavailable());
    if (m != "GET" && !req.caller.admin()) co_return co_await fail(out, admin_only());
    if (req.path == "/api/mcp/servers") {
      if (m == "POST") co_return co_await create(req, out, deps);
      co_return co_await list(out, deps);
    }
    if (req.path == "/api/mcp/servers/test") {  // POST only: no GET/PUT/DELETE route has this exact path first
      if (m == "POST") co_return co_await test_unsaved(req, out, deps);
    }
    if (req.path == "/api/mcp/import") co_return co_await import_document(req, out, deps);
    co_await dispatch_one(req, out, deps, m);
  };
}

}  // namespace

std::vector<route> mcp_routes(mcp_deps& deps) {
  const surface* s = &control_surface();
  return {
      {"GET", "/api/mcp/servers", false, auth_policy::api_key, s, bind(deps, "GET")},
      {"POST", "/api/mcp/servers", false, auth_policy::api_key, s, bind(deps, "POST")},
      {"POST", "/api/mcp/servers/test", false, auth_policy::api_key, s, bind(deps, "POST")},
      {"POST", "/api/mcp/import", false, auth_policy::api_key, s, bind(deps, "POST")},
      {"GET", "/api/mcp/servers/", true, auth_policy::api_key, s, bind(deps, "GET")},
      {"POST", "/api/mcp/servers/", true, auth_policy::api_key, s, bind(deps, "POST")},
      {"PUT", "/api/mcp/servers/", true, auth_policy::api_key, s, bind(deps, "PUT")},
      {"DELETE", "/api/mcp/servers/", true, auth_policy::api_key, s, bind(deps, "DELETE")},
  };
}

}  // namespace warden::api::control
