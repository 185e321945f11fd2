#include "client/mcp_command.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "client/chat_client.h"
#include "client/command_support.h"
#include "common/secret_file.h"
#include "common/text.h"

namespace warden::client {

namespace {

constexpr long k_test_timeout_ms = 5L * 60 * 1000;  // a first `npx -y` downloads its package

std::optional<std::string> find_key(const mcp_options& o) { return find_api_key(o.api_key, o.api_key_file, "warden mcp"); }
std::optional<json> answer(const http_reply& r) { return reply_json(r, "warden mcp"); }

error usage(const std::string& message) { return make_error(errc::invalid_request, message); }

/// --header 'Name: value' and --env NAME=VALUE into the entry's maps.
result<json> pairs(const std::vector<std::string>& items, char sep, const char* flag) {
  json out = json::object();
  for (const auto& item : items) {
    const auto at = item.find(sep);
    const std::string name(trim(item.substr(0, at)));
    if (at == std::string::npos || name.empty()) {
      return usage(std::string("warden mcp add: ") + flag + " takes " + (sep == ':' ? "'Name: value'" : "NAME=VALUE") +
                   ", not '" + item + "'");
    }
    out[name] = std::string(sep == ':' ? trim(item.substr(at + 1)) : std::string_view(item).substr(at + 1));
  }
  return out;
}

std::string tools_line(const json& tools) {
  std::string out;
  for (const auto& t : tools) {
    out += "  " + t.value("name", std::string()) + (t.value("executable", true) ? "" : " (not offered: " +
                                                         t.value("excluded_reason", std::string()) + ")");
    out += "\n";
  }
  return out.empty() ? "  (no tools)\n" : out;
}

int list(const http_api& api) {
  auto j = answer(api.get("/api/mcp/servers"));
  if (!j) return 1;
  if ((*j)["data"].empty()) {
    std::printf("(no MCP servers: warden mcp add ID -- COMMAND ARGS... or --url URL)\n");
    return 0;
  }
  std::printf("%-32s %-9s %-8s %-10s %s\n", "ID", "TRANSPORT", "ENABLED", "STATE", "TOOLS");
  for (const auto& x : (*j)["data"]) {
    const json& st = x.contains("status") ? x["status"] : json::object();
    std::printf("%-32s %-9s %-8s %-10s %lld\n", x.value("id", "").c_str(), x.value("transport", "").c_str(),
                x.value("enabled", true) ? "yes" : "no", st.value("state", "").c_str(),
                static_cast<long long>(st.value("tool_count", 0)));
  }
  return 0;
}

int test(const mcp_options& o, const std::string& key) {
  if (o.args.size() != 1) {
    std::fprintf(stderr, "warden mcp test: give one server id\n");
    return 2;
  }
  const http_api api(o.server, key, 5000, k_test_timeout_ms);
  auto j = answer(api.post_json("/api/mcp/servers/" + o.args[0] + "/test", json::object()));
  if (!j) return 1;
  std::printf("%s: %s, protocol %s\n", j->value("id", "").c_str(), j->value("state", "").c_str(),
              j->value("protocol_version", "").c_str());
  if (!j->value("error", "").empty()) std::printf("  error: %s\n", j->value("error", "").c_str());
  std::fputs(tools_line((*j)["tools"]).c_str(), stdout);
  return 0;
}

int import_document(const http_api& api, const mcp_options& o) {
  if (o.args.size() != 1) {
    std::fprintf(stderr, "warden mcp import: give one file\n");
    return 2;
  }
  std::ifstream f(o.args[0], std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto doc = f ? parse_json(text) : std::nullopt;
  if (!doc) {
    std::fprintf(stderr, "warden mcp import: cannot read %s as JSON\n", o.args[0].c_str());
    return 2;
  }
  json body = json::object();
  body["document"] = std::move(*doc);
  body["replace"] = o.replace;
  auto j = answer(api.post_json("/api/mcp/import", body));
  if (!j) return 1;
  for (const auto& x : (*j)["data"]) std::printf("added %s (%s)\n", x.value("id", "").c_str(), x.value("transport", "").c_str());
  if ((*j)["data"].empty()) std::printf("(the file names no servers)\n");
  return 0;
}

}  // namespace

result<json> mcp_add_body(const mcp_options& o) {
  const bool http = !o.url.empty();
  if (o.args.empty()) return usage("warden mcp add: give the server's id, then -- COMMAND ARGS... or --url URL");
  if (http && o.args.size() > 1) return usage("warden mcp add: give either --url or -- COMMAND ARGS..., not both");
  if (!http && o.args.size() < 2) return usage("warden mcp add: give the command after the id: warden mcp add ID -- COMMAND ARGS...");
  if (!http && (!o.headers.empty() || !o.bearer_token_env.empty())) {
    return usage("warden mcp add: --header and --bearer-token-env are for --url servers");
  }
  json e = json::object();
  e["id"] = o.args[0];
  if (http) {
    e["url"] = o.url;
    auto h = pairs(o.headers, ':', "--header");
    if (!h) return h.error();
    if (!h->empty()) e["headers"] = std::move(*h);
    if (!o.bearer_token_env.empty()) e["bearer_token_env"] = o.bearer_token_env;
  } else {
    e["command"] = o.args[1];
    e["args"] = std::vector<std::string>(o.args.begin() + 2, o.args.end());
  }
  auto env = pairs(o.env, '=', "--env");
  if (!env) return env.error();
  if (!env->empty()) e["env"] = std::move(*env);
  if (o.trusted) e["trusted"] = true;
  if (o.network) e["network"] = true;
  if (o.no_sandbox) e["sandbox"] = false;
  if (!o.read_only_paths.empty()) e["read_only_paths"] = o.read_only_paths;
  return e;
}

int run_mcp(const mcp_options& o) {
  auto key = find_key(o);
  if (!key) return 2;
  global_init();
  const http_api api(o.server, *key);
  if (o.action == "list") return list(api);
  if (o.action == "test") return test(o, *key);
  if (o.action == "import") return import_document(api, o);
  if (o.action == "add") {
    auto body = mcp_add_body(o);
    if (!body) {
      std::fprintf(stderr, "%s\n", body.error().message.c_str());
      return 2;
    }
    auto j = answer(api.post_json("/api/mcp/servers", *body));
    if (!j) return 1;
    std::printf("added %s (%s)\n", j->value("id", "").c_str(), j->value("transport", "").c_str());
    return 0;
  }
  if (o.action == "rm" && o.args.size() == 1) {
    if (!answer(api.del("/api/mcp/servers/" + o.args[0]))) return 1;
    std::printf("deleted %s\n", o.args[0].c_str());
    return 0;
  }
  std::fprintf(stderr, "warden mcp: use add ID -- COMMAND ARGS... | add ID --url URL, list, rm ID, test ID, import FILE\n");
  return 2;
}

}  // namespace warden::client
