// The blocking half of mcp_routes.h: stored rows to entries and back, writing a set of entries,
// and --mcp-config's import at start-up.
#include "api/control/mcp_registry.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

#include "api/control/mcp_routes.h"

namespace warden::api::control {

std::int64_t mcp_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

result<tools::mcp_server_config> from_row(const store::stored_mcp_server& r) {
  auto j = parse_json(r.config_json);
  if (!j) return make_error(errc::internal, "the stored MCP server " + r.id + " is not valid JSON");
  auto c = tools::parse_server_config(*j, r.id);
  if (!c) return make_error(errc::internal, "the stored MCP server " + r.id + " is no longer valid: " + c.error().message);
  c->owner = r.owner;
  c->created_unix_ms = r.created_unix_ms;
  c->updated_unix_ms = r.updated_unix_ms;
  return c;
}

store::stored_mcp_server to_row(const tools::mcp_server_config& c) {
  return store::stored_mcp_server{c.id, c.owner, dump_safe(tools::to_json(c)), c.created_unix_ms, c.updated_unix_ms};
}

std::optional<error> sandbox_refusal(const tools::mcp_server_config& c, permission_mode max_permission) {
  if (c.sandbox || max_permission == permission_mode::full) return std::nullopt;
  return make_error(errc::forbidden,
                    "MCP server '" + c.id + "' has \"sandbox\": false, which runs it outside the jail: that needs warden "
                    "started with --max-permission full (it runs with --max-permission " +
                        to_string(max_permission) + ")",
                    "sandbox", "permission_mode_not_allowed");
}

result<std::vector<tools::mcp_server_config>> load_mcp_servers(store::mcp_server_store& store) {
  auto rows = store.list();
  if (!rows) return rows.error();
  std::vector<tools::mcp_server_config> out;
  out.reserve(rows->size());
  for (const auto& r : *rows) {
    auto c = from_row(r);
    if (!c) {
      spdlog::warn("mcp: {} (left out; fix it with PUT /api/mcp/servers/{} or delete it)", c.error().message, r.id);
      continue;
    }
    out.push_back(std::move(*c));
  }
  return out;
}

result<std::vector<tools::mcp_server_config>> put_entries(store::mcp_server_store& store,
                                                          std::vector<tools::mcp_server_config> entries, bool replace,
                                                          const std::string& owner, std::int64_t now_ms) {
  for (const auto& c : entries) {  // every check before the first write
    auto there = store.find(c.id);
    if (!there) return there.error();
    if (*there && !replace) {
      return make_error(errc::invalid_request,
                        "an MCP server with id " + c.id + " exists; send \"replace\": true to replace it", "id",
                        "mcp_server_exists");
    }
  }
  std::vector<tools::mcp_server_config> out;
  for (auto& c : entries) {
    c.owner = owner;
    c.created_unix_ms = now_ms;
    c.updated_unix_ms = now_ms;
    auto updated = store.update(to_row(c));
    if (!updated) return updated.error();
    if (!*updated) {
      if (auto added = store.insert(to_row(c)); !added) return added.error();
    }
    auto row = store.find(c.id);
    if (!row) return row.error();
    if (!*row) return make_error(errc::internal, "the MCP server " + c.id + " went away while it was written");
    auto back = from_row(**row);
    if (!back) return back.error();
    out.push_back(std::move(*back));
  }
  return out;
}

result<void> import_mcp_config_file(const std::string& path, store::mcp_server_store& store,
                                    permission_mode max_permission) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return make_error(errc::invalid_request, "--mcp-config " + path + ": cannot read it: " + std::strerror(errno));
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto doc = parse_json(text);
  if (!doc) return make_error(errc::invalid_request, "--mcp-config " + path + ": not a JSON document");
  auto entries = tools::parse_mcp_servers_document(*doc);
  if (!entries) {
    return make_error(errc::invalid_request, "--mcp-config " + path + ": " + entries.error().message,
                      entries.error().param, entries.error().type_code);
  }
  for (const auto& c : *entries) {
    if (auto e = sandbox_refusal(c, max_permission)) {
      return make_error(errc::invalid_request, "--mcp-config " + path + ": " + e->message, e->param, e->type_code);
    }
  }
  auto written = put_entries(store, std::move(*entries), true, "", mcp_now_ms());
  if (!written) return make_error(written.error().code, "--mcp-config " + path + ": " + written.error().message);
  spdlog::info("mcp: {} server{} from {}", written->size(), written->size() == 1 ? "" : "s", path);
  return {};
}

}  // namespace warden::api::control
