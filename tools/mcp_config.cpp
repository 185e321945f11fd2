#include "tools/mcp_config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <limits>
#include <set>

#include "common/json_fields.h"
#include "common/utf8.h"
#include "secrets/find_secrets.h"
#include "secrets/secret_detect.h"

namespace warden::tools {

namespace {

constexpr std::size_t k_max_id = 32;
constexpr std::size_t k_max_name_chars = 100;
constexpr std::size_t k_max_text = 4096;
constexpr std::size_t k_max_var_name = 128;
constexpr std::int64_t k_min_timeout_ms = 1000;
constexpr std::int64_t k_max_timeout_ms = 3600000;

constexpr std::array<std::string_view, 20> k_fields = {
    "id",         "name",          "transport", "command", "args",    "env",             "cwd",
    "url",        "headers",       "bearer_token_env",     "enabled", "timeout_ms",      "allowed_tools",
    "trusted",    "network",       "sandbox",   "read_only_paths",    "owner",           "created_at_ms",
    "updated_at_ms"};

constexpr std::string_view k_reference_hint =
    "set it in warden's environment and write a reference such as \"${env:NAME}\" instead";

/// Joins a field path: "env" + "HOME" → "env.HOME".
std::string sub(std::string_view parent, std::string_view child) {
  return std::string(parent) + "." + std::string(child);
}

bool valid_var_name(std::string_view n) noexcept {
  if (n.empty() || n.size() > k_max_var_name || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  return std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// RFC 9110 token characters.
bool valid_header_name(std::string_view n) noexcept {
  constexpr std::string_view extra = "!#$%&'*+.^_`|~-";
  if (n.empty() || n.size() > 256) return false;
  return std::all_of(n.begin(), n.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || extra.find(c) != std::string_view::npos;
  });
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

/// One `${…}` of a value: the variable's name, or why it is not a reference warden resolves.
struct reference {
  std::size_t begin = 0, end = 0;  ///< byte span of `${…}`
  std::string name;
};

/// The references of `value` in order; an error for `${` that does not open one.
result<std::vector<reference>> scan_references(std::string_view value) {
  std::vector<reference> out;
  for (std::size_t at = value.find("${"); at != std::string_view::npos; at = value.find("${", at)) {
    const auto close = value.find('}', at);
    if (close == std::string_view::npos) {
      return make_error(errc::invalid_request, "an unclosed '${' in \"" + std::string(value.substr(at, 40)) +
                                                   "\"; write ${env:NAME} or ${NAME}");
    }
    std::string_view inner = value.substr(at + 2, close - at - 2);
    if (inner.rfind("env:", 0) == 0) inner.remove_prefix(4);
    if (!valid_var_name(inner)) {
      return make_error(errc::invalid_request, "'" + std::string(value.substr(at, close - at + 1)) +
                                                   "' is not a reference warden resolves: write ${env:NAME} or ${NAME} "
                                                   "(a variable of warden's environment)");
    }
    out.push_back({at, close + 1, std::string(inner)});
    at = close + 1;
  }
  return out;
}

/// `value` without its references (what is written literally).
std::string literal_part(std::string_view value, const std::vector<reference>& refs) {
  std::string out;
  std::size_t from = 0;
  for (const auto& r : refs) {
    out.append(value.substr(from, r.begin - from));
    from = r.end;
  }
  out.append(value.substr(from));
  return out;
}

/// A string field of at most k_max_text bytes; absent/null leaves `out` unchanged.
std::optional<error> read_text(const json& j, const char* name, std::string& out, std::string_view param) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) return field_wrong_type(std::string(param), "a string", *it);
  const auto& s = it->get_ref<const std::string&>();
  if (s.size() > k_max_text) return field_invalid("'" + std::string(param) + "' is longer than 4096 bytes", std::string(param));
  if (s.find('\0') != std::string::npos) return field_invalid("'" + std::string(param) + "' holds a NUL byte", std::string(param));
  out = s;
  return std::nullopt;
}

/// An array of strings (each ≤ k_max_text bytes).
std::optional<error> read_strings(const json& j, const char* name, std::vector<std::string>& out) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return field_wrong_type(name, "an array of strings", *it);
  out.clear();
  for (std::size_t i = 0; i < it->size(); ++i) {
    const std::string p = std::string(name) + "[" + std::to_string(i) + "]";
    const json& v = (*it)[i];
    if (!v.is_string()) return field_wrong_type(p, "a string", v);
    std::string s = v.get<std::string>();
    if (s.size() > k_max_text || s.find('\0') != std::string::npos) {
      return field_invalid("'" + p + "' must be at most 4096 bytes without NUL", p);
    }
    out.push_back(std::move(s));
  }
  return std::nullopt;
}

/// A {name: string} map whose names pass `valid` and whose values may hold references.
std::optional<error> read_map(const json& j, const char* name, bool (*valid)(std::string_view) noexcept,
                              const char* what, std::map<std::string, std::string>& out) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return field_wrong_type(name, "an object of strings", *it);
  out.clear();
  for (const auto& [k, v] : it->items()) {
    const std::string p = sub(name, k);
    if (!valid(k)) return field_invalid("'" + k + "' is not a valid " + what, p);
    if (!v.is_string()) return field_wrong_type(p, "a string", v);
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() > k_max_text || s.find('\0') != std::string::npos || s.find_first_of("\r\n") != std::string::npos) {
      return field_invalid("'" + p + "' must be at most 4096 bytes on one line", p);
    }
    if (auto refs = scan_references(s); !refs) return field_invalid(refs.error().message, p);
    out[k] = s;
  }
  return std::nullopt;
}

std::optional<error> read_bool(const json& j, const char* name, bool& out) { return check_bool_field(j, name, out); }

/// Whether a header or env value written in the entry carries a secret in clear.
bool literal_secret(std::string_view name, std::string_view value) {
  if (value.empty()) return false;
  auto refs = scan_references(value);
  if (!refs) return false;  // refused elsewhere
  if (refs->empty()) return secrets::is_secret_variable(name, value);
  const std::string rest = literal_part(value, *refs);  // a reference's name is not the secret
  return !rest.empty() && secrets::is_secret_variable("", rest);
}

/// The Authorization header: a scheme word and references only.
bool authorization_by_reference(std::string_view value) {
  auto refs = scan_references(value);
  if (!refs || refs->empty()) return false;
  std::string rest = literal_part(value, *refs);
  while (!rest.empty() && rest.back() == ' ') rest.pop_back();
  while (!rest.empty() && rest.front() == ' ') rest.erase(0, 1);
  if (rest.empty()) return true;
  // only an authentication scheme may be written around the reference ("Bearer ${env:T}")
  for (const char* scheme : {"Bearer", "Basic", "Token", "Bot", "token", "bearer", "basic"}) {
    if (rest == scheme) return true;
  }
  return false;
}

std::optional<error> check_secrets(const mcp_server_config& c) {
  for (const auto& [k, v] : c.headers) {
    const std::string p = sub("headers", k);
    if (iequals(k, "Authorization") && !authorization_by_reference(v)) {
      return field_invalid("an Authorization header is never stored in clear: write \"Bearer ${env:NAME}\" with the "
                           "token in warden's environment variable NAME, or use bearer_token_env",
                           p, "literal_secret");
    }
    std::string env_like = k;
    std::replace(env_like.begin(), env_like.end(), '-', '_');
    if (!iequals(k, "Authorization") && literal_secret(env_like, v)) {
      return field_invalid("'" + p + "' looks like a secret written literally; " + std::string(k_reference_hint), p,
                           "literal_secret");
    }
  }
  for (const auto& [k, v] : c.env) {
    const std::string p = sub("env", k);
    if (literal_secret(k, v)) {
      return field_invalid("'" + p + "' looks like a secret written literally; " + std::string(k_reference_hint), p,
                           "literal_secret");
    }
  }
  std::string line = c.command;
  for (const auto& a : c.args) line += " " + a;
  if (!line.empty() && !secrets::find_secrets(line).empty()) {
    return field_invalid("'args' hold a secret written literally; pass it in 'env' as a reference such as "
                         "\"${env:NAME}\" instead",
                         "args", "literal_secret");
  }
  if (!c.url.empty() && secrets::is_secret_variable("", c.url)) {
    return field_invalid("'url' carries a credential; send it in a header written as a reference (\"${env:NAME}\") "
                         "or with bearer_token_env",
                         "url", "literal_secret");
  }
  return std::nullopt;
}

/// The first field of `j` warden does not know.
std::optional<error> unknown_field(const json& j) {
  for (const auto& [k, v] : j.items()) {
    if (std::find(k_fields.begin(), k_fields.end(), k) == k_fields.end()) {
      return field_invalid("unknown field '" + k + "' in an MCP server entry", k, "unknown_parameter");
    }
  }
  return std::nullopt;
}

/// Fields of the other transport must be absent, null or empty.
std::optional<error> foreign_fields(const json& j, mcp_transport t) {
  static constexpr std::array<const char*, 4> stdio_only = {"command", "args", "env", "cwd"};
  static constexpr std::array<const char*, 3> http_only = {"url", "headers", "bearer_token_env"};
  auto check = [&](const auto& names, const char* belongs) -> std::optional<error> {
    for (const char* n : names) {
      auto it = j.find(n);
      if (it != j.end() && !it->is_null() && !it->empty() && *it != "") {
        return field_invalid("'" + std::string(n) + "' belongs to " + belongs + " servers", n);
      }
    }
    return std::nullopt;
  };
  return t == mcp_transport::http ? check(stdio_only, "stdio") : check(http_only, "http");
}

std::optional<error> read_identity(const json& j, std::string_view id, mcp_server_config& c) {
  if (auto e = read_text(j, "id", c.id, "id")) return e;
  if (!id.empty() && !c.id.empty() && c.id != id) {
    return field_invalid("the body's id '" + c.id + "' differs from the path's '" + std::string(id) + "'", "id");
  }
  if (c.id.empty()) c.id = std::string(id);
  if (c.id.empty()) return make_error(errc::invalid_request, "'id' is required", "id", "missing_required_parameter");
  if (!valid_mcp_server_id(c.id)) {
    return field_invalid("'id' must be 1 to 32 of A-Z a-z 0-9 _ - (it prefixes the tools' names)", "id");
  }
  if (auto e = read_text(j, "name", c.name, "name")) return e;
  if (c.name.empty()) c.name = c.id;
  if (!is_valid_utf8(c.name) || utf8_length(c.name) > k_max_name_chars) {
    return field_invalid("'name' must be at most 100 characters", "name");
  }
  std::string transport;
  if (auto e = read_text(j, "transport", transport, "transport")) return e;
  if (transport.empty()) transport = j.contains("url") && !j["url"].is_null() ? "http" : "stdio";
  if (transport != "stdio" && transport != "http") return field_invalid("'transport' must be \"stdio\" or \"http\"", "transport");
  c.transport = transport == "http" ? mcp_transport::http : mcp_transport::stdio;
  return foreign_fields(j, c.transport);
}

std::optional<error> read_stdio(const json& j, mcp_server_config& c) {
  if (auto e = read_text(j, "command", c.command, "command")) return e;
  if (c.command.empty()) {
    return make_error(errc::invalid_request, "'command' is required for a stdio server", "command",
                      "missing_required_parameter");
  }
  if (auto e = read_strings(j, "args", c.args)) return e;
  if (auto e = read_map(j, "env", valid_var_name, "variable name", c.env)) return e;
  return read_text(j, "cwd", c.cwd, "cwd");
}

std::optional<error> read_http(const json& j, mcp_server_config& c) {
  if (auto e = read_text(j, "url", c.url, "url")) return e;
  if (c.url.empty()) return make_error(errc::invalid_request, "'url' is required for an http server", "url", "missing_required_parameter");
  const bool scheme = c.url.rfind("http://", 0) == 0 || c.url.rfind("https://", 0) == 0;
  if (!scheme || c.url.size() <= 8 || c.url.find_first_of(" \r\n\t") != std::string::npos) {
    return field_invalid("'url' must be an http:// or https:// URL", "url");
  }
  if (auto e = read_map(j, "headers", valid_header_name, "header name", c.headers)) return e;
  if (auto e = read_text(j, "bearer_token_env", c.bearer_token_env, "bearer_token_env")) return e;
  if (!c.bearer_token_env.empty() && !valid_var_name(c.bearer_token_env)) {
    return field_invalid("'bearer_token_env' must name an environment variable ([A-Za-z_][A-Za-z0-9_]*)", "bearer_token_env");
  }
  const bool has_auth = std::any_of(c.headers.begin(), c.headers.end(), [](const auto& h) { return iequals(h.first, "Authorization"); });
  if (has_auth && !c.bearer_token_env.empty()) {
    return field_invalid("give either an Authorization header or bearer_token_env, not both", "bearer_token_env");
  }
  return std::nullopt;
}

std::optional<error> read_paths(const json& j, mcp_server_config& c) {
  if (auto e = read_strings(j, "read_only_paths", c.read_only_paths)) return e;
  for (std::size_t i = 0; i < c.read_only_paths.size(); ++i) {
    const std::string& p = c.read_only_paths[i];
    const bool dotdot = p == ".." || p.find("/../") != std::string::npos || p.ends_with("/..");
    if (p.empty() || p[0] != '/' || dotdot) {
      const std::string param = "read_only_paths[" + std::to_string(i) + "]";
      return field_invalid("'" + param + "' must be an absolute path without '..'", param);
    }
  }
  return std::nullopt;
}

std::optional<error> read_common(const json& j, mcp_server_config& c) {
  for (auto [name, field] : {std::pair{"enabled", &c.enabled}, std::pair{"trusted", &c.trusted},
                             std::pair{"network", &c.network}, std::pair{"sandbox", &c.sandbox}}) {
    if (auto e = read_bool(j, name, *field)) return e;
  }
  if (auto e = check_int_field(j, "timeout_ms", k_min_timeout_ms, k_max_timeout_ms)) return e;
  if (j.contains("timeout_ms") && !j["timeout_ms"].is_null()) c.timeout_ms = j["timeout_ms"].get<int>();
  if (auto it = j.find("allowed_tools"); it != j.end() && !it->is_null()) {
    std::vector<std::string> names;
    if (auto e = read_strings(j, "allowed_tools", names)) return e;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i].empty() || names[i].size() > 128) {
        const std::string p = "allowed_tools[" + std::to_string(i) + "]";
        return field_invalid("'" + p + "' must be a tool name of 1 to 128 bytes", p);
      }
    }
    c.allowed_tools = std::move(names);
  }
  if (auto e = read_paths(j, c)) return e;
  if (auto e = read_text(j, "owner", c.owner, "owner")) return e;
  for (auto [name, field] : {std::pair{"created_at_ms", &c.created_unix_ms}, std::pair{"updated_at_ms", &c.updated_unix_ms}}) {
    if (auto e = check_int_field(j, name, 0, std::numeric_limits<std::int64_t>::max())) return e;
    if (j.contains(name) && !j[name].is_null()) *field = j[name].get<std::int64_t>();
  }
  return std::nullopt;
}

/// `name` in the id alphabet: other characters → '_', runs of '_' → one, no trailing '_', cut to 32.
std::string sanitised_id(std::string_view name) {
  std::string id;
  for (char ch : name.substr(0, k_max_id)) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '_';
    if (ch == '_' && !id.empty() && id.back() == '_') continue;
    id.push_back(ch);
  }
  while (!id.empty() && id.back() == '_') id.pop_back();
  return id;
}

/// One entry of an mcpServers document as warden's entry JSON.
result<json> imported_entry(const std::string& name, const json& src) {
  const std::string p = sub("servers", name);
  if (!src.is_object()) return field_wrong_type(p, "an object", src);
  json e = json::object();
  for (const auto& [k, v] : src.items()) {
    if (k == "type") {
      if (!v.is_string() || (v != "stdio" && v != "http" && v != "streamable-http" && v != "sse")) {
        return field_invalid("'" + sub(p, k) + "' must be \"stdio\", \"http\", \"streamable-http\" or \"sse\"", sub(p, k));
      }
      e["transport"] = v == "stdio" ? "stdio" : "http";
    } else if (k == "serverUrl") {
      e["url"] = v;
    } else if (k == "disabled") {
      if (!v.is_boolean()) return field_wrong_type(sub(p, k), "a boolean", v);
      e["enabled"] = !v.get<bool>();
    } else if (k == "autoApprove" || k == "alwaysAllow") {
      continue;  // other clients' approval lists: warden's own gate decides
    } else {
      e[k] = v;
    }
  }
  if (!e.contains("id")) e["id"] = sanitised_id(name);
  if (!e.contains("name") && utf8_length(name) <= k_max_name_chars && is_valid_utf8(name)) e["name"] = name;
  return e;
}

/// The {name: entry} map of a document; an error when there is none.
result<const json*> servers_map(const json& doc) {
  if (!doc.is_object()) return field_wrong_type("document", "an object", doc);
  for (const char* key : {"mcpServers", "servers"}) {
    if (auto it = doc.find(key); it != doc.end()) {
      if (!it->is_object()) return field_wrong_type(key, "an object of servers", *it);
      return &*it;
    }
  }
  for (const auto& [k, v] : doc.items()) {
    if (!v.is_object()) {
      return field_invalid("not an MCP servers document: expected {\"mcpServers\": {name: {command|url, …}}}, "
                           "{\"servers\": {…}} or {name: {…}}",
                           "document");
    }
  }
  return &doc;
}

}  // namespace

const char* to_string(mcp_transport t) noexcept {
  switch (t) {
    case mcp_transport::stdio: return "stdio";
    case mcp_transport::http: return "http";
  }
  return "stdio";
}

bool valid_mcp_server_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > k_max_id) return false;
  // "__" separates the id from the tool name in `<id>__<tool>`: an id with it, or ending in "_",
  // could give two servers' tools the same name
  if (id.find("__") != std::string_view::npos || id.back() == '_') return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; });
}

result<mcp_server_config> parse_server_config(const json& j, std::string_view id) {
  if (!j.is_object()) return field_wrong_type("", "an object (an MCP server entry)", j);
  if (auto e = unknown_field(j)) return *e;
  mcp_server_config c;
  if (auto e = read_identity(j, id, c)) return *e;
  const auto transport_error = c.transport == mcp_transport::stdio ? read_stdio(j, c) : read_http(j, c);
  if (transport_error) return *transport_error;
  if (auto e = read_common(j, c)) return *e;
  if (auto e = check_secrets(c)) return *e;
  return c;
}

json to_json(const mcp_server_config& c) {
  json j = json::object();
  j["id"] = c.id;
  j["name"] = c.name;
  j["transport"] = to_string(c.transport);
  switch (c.transport) {
    case mcp_transport::stdio:
      j["command"] = c.command;
      j["args"] = c.args;
      j["env"] = c.env;
      j["cwd"] = c.cwd;
      break;
    case mcp_transport::http:
      j["url"] = c.url;
      j["headers"] = c.headers;
      j["bearer_token_env"] = c.bearer_token_env;
      break;
  }
  j["enabled"] = c.enabled;
  j["timeout_ms"] = c.timeout_ms;
  j["allowed_tools"] = c.allowed_tools ? json(*c.allowed_tools) : json(nullptr);
  j["trusted"] = c.trusted;
  j["network"] = c.network;
  j["sandbox"] = c.sandbox;
  j["read_only_paths"] = c.read_only_paths;
  j["owner"] = c.owner;
  j["created_at_ms"] = c.created_unix_ms;
  j["updated_at_ms"] = c.updated_unix_ms;
  return j;
}

result<std::vector<mcp_server_config>> parse_mcp_servers_document(const json& doc) {
  auto map = servers_map(doc);
  if (!map) return map.error();
  std::vector<mcp_server_config> out;
  std::map<std::string, std::string> seen;  // id → the entry's name
  for (const auto& [name, src] : (*map)->items()) {
    auto entry = imported_entry(name, src);
    if (!entry) return entry.error();
    auto c = parse_server_config(*entry);
    const std::string p = sub("servers", name);
    if (!c) {
      error e = c.error();
      e.param = e.param.empty() ? p : sub(p, e.param);
      e.message = "server '" + name + "': " + e.message;
      return e;
    }
    if (auto [it, fresh] = seen.emplace(c->id, name); !fresh) {
      return field_invalid("servers '" + it->second + "' and '" + name + "' both become id '" + c->id +
                               "'; give one an \"id\"",
                           p);
    }
    out.push_back(std::move(*c));
  }
  return out;
}

result<std::string> resolve_references(std::string_view value,
                                       const std::function<std::optional<std::string>(const std::string&)>& lookup) {
  auto refs = scan_references(value);
  if (!refs) return refs.error();
  std::string out;
  std::size_t from = 0;
  for (const auto& r : *refs) {
    auto v = lookup(r.name);
    if (!v) {
      return make_error(errc::invalid_request, "environment variable " + r.name + " is not set (referenced as \"" +
                                                   std::string(value.substr(r.begin, r.end - r.begin)) + "\")");
    }
    out.append(value.substr(from, r.begin - from));
    out.append(*v);
    from = r.end;
  }
  out.append(value.substr(from));
  return out;
}

}  // namespace warden::tools
