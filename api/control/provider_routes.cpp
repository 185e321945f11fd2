#include "api/control/provider_routes.h"

#include <chrono>
#include <cstdlib>

#include "api/control/extensions.h"
#include "api/control/routes.h"
#include "api/wire/provider_fields.h"
#include "common/ids.h"
#include "store/sealed_secret.h"

namespace warden::api::control {

namespace asio = boost::asio;

namespace {

constexpr std::string_view k_prefix = "/api/providers";
constexpr std::size_t k_max_url = 2048;
constexpr std::size_t k_max_key = 4096;

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

error bad(const std::string& message, const char* param) {
  return make_error(errc::invalid_request, message, param, "invalid_value");
}
error not_found(const std::string& id) {
  return make_error(errc::not_found, "no provider '" + id.substr(0, 64) + "'", "provider_id", "provider_not_found");
}
error admin_only() {
  return make_error(errc::forbidden,
                    "only the single user or an admin key may add, change or remove providers (a provider makes "
                    "warden send requests, with a key of the server's, to the URL it names)",
                    "", "admin_only");
}

/// The string at `key`; "" when absent, null or not a string.
std::string text_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool valid_id(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') return false;
  }
  return true;
}

/// A variable that holds a key: [A-Za-z_][A-Za-z0-9_]* ending in _KEY or _TOKEN, never warden's own
/// (WARDEN_*): api_key_env must not be a way to send the server's other settings (PATH, HOME, a
/// warden secret) to a URL.
bool valid_env_name(std::string_view s) {
  if (s.empty() || s.size() > 128 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  const bool keyish = s.ends_with("_KEY") || s.ends_with("_TOKEN");
  return keyish && !s.starts_with("WARDEN_");
}

/// http(s)://host[:port][/path], no user info, query or fragment.
std::optional<error> check_url(const std::string& url) {
  if (url.size() > k_max_url) return bad("base_url is longer than 2048 characters", "base_url");
  const bool scheme = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
  const std::size_t host_at = url.find("//") + 2;
  const std::string rest = scheme ? url.substr(host_at) : "";
  const std::string authority = rest.substr(0, rest.find('/'));
  if (!scheme || authority.empty() || authority.find('@') != std::string::npos ||
      url.find_first_of("?# \t\r\n") != std::string::npos) {
    return bad("base_url must be an http:// or https:// URL without user info, query or fragment, such as "
               "https://api.openai.com/v1",
               "base_url");
  }
  return std::nullopt;
}

/// The type, URL and name of `body` applied to `cfg` (create: every rule; update: what is sent).
std::optional<error> apply_place(const json& body, json& cfg, bool creating) {
  for (const char* k : {"name", "provider_type", "base_url", "api_key", "api_key_env"}) {
    auto it = body.find(k);
    if (it != body.end() && !it->is_null() && !it->is_string()) return bad(std::string(k) + " must be a string", k);
  }
  if (body.contains("provider_type")) {
    if (!creating) return bad("provider_type cannot be changed; add another provider", "provider_type");
    cfg["provider_type"] = body["provider_type"];
  }
  if (creating && !wire::provider_types().count(text_at(cfg, "provider_type"))) {
    return bad("provider_type must be one of openai, anthropic, gemini, deepseek, mistral, kimi, qwen, huggingface, "
               "vllm, custom, ollama, llama_cpp, openrouter",
               "provider_type");
  }
  if (body.contains("base_url")) cfg["base_url"] = text_at(body, "base_url");
  if (creating || body.contains("base_url")) {
    std::string url = text_at(cfg, "base_url");
    while (!url.empty() && url.back() == '/') url.pop_back();
    if (auto e = check_url(url)) return e;  // before any key is touched
    cfg["base_url"] = url;
  }
  if (body.contains("name")) {
    if (text_at(body, "name").size() > 200) return bad("name is longer than 200 characters", "name");
    cfg["name"] = text_at(body, "name");
  }
  return std::nullopt;
}

/// `models` and `enabled` of `body` applied to `cfg`.
std::optional<error> apply_flags(const json& body, json& cfg) {
  if (auto m = body.find("models"); m != body.end()) {
    if (!m->is_array() || m->size() > 1000) return bad("models must be a list of model names", "models");
    for (const auto& x : *m) {
      if (!x.is_string() || x.get<std::string>().empty() || x.get<std::string>().size() > 256) {
        return bad("models must be a list of model names", "models");
      }
    }
    cfg["models"] = *m;
  }
  if (auto en = body.find("enabled"); en != body.end()) {
    if (!en->is_boolean()) return bad("enabled must be a boolean", "enabled");
    cfg["enabled"] = *en;
  }
  return std::nullopt;
}

/// A sent api_key sealed into `cfg` ("" drops the key).
std::optional<error> apply_sealed_key(const std::string& k, json& cfg, const std::string& seal_key) {
  if (k.empty()) {
    cfg.erase("api_key_sealed");
    cfg.erase("api_key_env");
    return std::nullopt;
  }
  if (k.size() > k_max_key) return bad("api_key is longer than 4096 characters", "api_key");
  for (unsigned char c : k) {
    if (c < 0x21 || c > 0x7e) return bad("api_key must be printable ASCII without spaces", "api_key");
  }
  auto sealed = store::seal_secret(seal_key, k);
  if (!sealed) return sealed.error();
  cfg["api_key_sealed"] = *sealed;
  cfg.erase("api_key_env");
  return std::nullopt;
}

/// The key fields of `body` applied to `cfg` (after apply_place: its URL is checked already).
std::optional<error> apply_key(const json& body, json& cfg, const std::string& seal_key, bool creating) {
  const bool key = body.contains("api_key") && !body["api_key"].is_null();
  const bool env = body.contains("api_key_env") && !body["api_key_env"].is_null();
  if (key && env) return bad("send api_key or api_key_env, not both", "api_key");
  // A key goes only where it was given for: moving a provider with a key to another URL needs
  // the key again (or "api_key": "" to drop it).
  const bool has_key = cfg.contains("api_key_sealed") || cfg.contains("api_key_env");
  if (!creating && body.contains("base_url") && has_key && !key && !env) {
    return bad("send api_key (or api_key_env) again when base_url changes: a key goes only to the URL it was given for",
               "api_key");
  }
  if (env) {
    const std::string name = body["api_key_env"].get<std::string>();
    if (!valid_env_name(name)) {
      return bad("api_key_env must name an environment variable ending in _KEY, _API_KEY or _TOKEN (and not WARDEN_*)",
                 "api_key_env");
    }
    cfg["api_key_env"] = name;
    cfg.erase("api_key_sealed");
  }
  if (key) return apply_sealed_key(body["api_key"].get<std::string>(), cfg, seal_key);
  return std::nullopt;
}

/// Applies the fields of `body` to the provider config `cfg` (create: every rule; update: the
/// fields sent).
std::optional<error> apply_fields(const json& body, json& cfg, const std::string& seal_key, bool creating) {
  if (auto e = apply_place(body, cfg, creating)) return e;
  if (auto e = apply_flags(body, cfg)) return e;
  return apply_key(body, cfg, seal_key, creating);
}

json public_json(const store::stored_row& r) {
  const json cfg = parse_json(r.config_json).value_or(json::object());
  return {{"id", r.id},
          {"object", "provider"},
          {"name", cfg.value("name", r.id)},
          {"provider_type", cfg.value("provider_type", "")},
          {"base_url", cfg.value("base_url", "")},
          {"api_key_env", cfg.contains("api_key_env") ? cfg["api_key_env"] : json(nullptr)},
          {"api_key_set", cfg.contains("api_key_sealed") || cfg.contains("api_key_env")},
          {"models", cfg.value("models", json::array())},
          {"enabled", cfg.value("enabled", true)},
          {"created_at", r.created_unix_ms},
          {"updated_at", r.updated_unix_ms}};
}

asio::awaitable<void> send_json(response_writer& out, int status, const json& body) {
  co_await out.send(status, "application/json", dump_safe(body));
}
asio::awaitable<void> fail(response_writer& out, const error& e) {
  co_await wire::send_error(out, control_surface(), e);
}

asio::awaitable<void> create(const http_request& req, response_writer& out, provider_deps& d) {
  auto body = parse_control_object(req.body);
  if (!body) co_return co_await fail(out, body.error());
  json cfg = {{"enabled", true}};
  if (auto e = apply_fields(*body, cfg, d.seal_key, true)) co_return co_await fail(out, *e);
  std::string id = text_at(*body, "id");
  if (body->contains("id") && (!(*body)["id"].is_string() || !valid_id(id))) {
    const error e = bad("id must be 1-64 characters of letters, digits, '_', '-' or '.'", "id");
    co_return co_await fail(out, e);
  }
  if (id.empty()) id = text_at(cfg, "provider_type") + "-" + ids::random_hex(4);
  const std::int64_t now = unix_ms();
  store::stored_row row{id, req.caller.name, dump_safe(cfg), now, now};
  auto add = [&d, row] { return d.store->insert(row); };
  auto added = co_await off_thread(d.pool, add);
  if (!added) co_return co_await fail(out, added.error());
  const json made = public_json(row);
  co_await send_json(out, 201, made);
}

asio::awaitable<void> update(const http_request& req, response_writer& out, provider_deps& d, const std::string& id) {
  auto body = parse_control_object(req.body);
  if (!body) co_return co_await fail(out, body.error());
  auto look = [&d, id] { return d.store->find(id); };
  auto found = co_await off_thread(d.pool, look);
  if (!found) co_return co_await fail(out, found.error());
  if (!*found) {
    const error e = not_found(id);
    co_return co_await fail(out, e);
  }
  store::stored_row row = **found;
  json cfg = parse_json(row.config_json).value_or(json::object());
  if (auto e = apply_fields(*body, cfg, d.seal_key, false)) co_return co_await fail(out, *e);
  row.config_json = dump_safe(cfg);
  row.updated_unix_ms = unix_ms();
  auto put = [&d, row] { return d.store->update(row); };
  auto stored = co_await off_thread(d.pool, put);
  if (!stored) co_return co_await fail(out, stored.error());
  const json changed = public_json(row);
  co_await send_json(out, 200, changed);
}

asio::awaitable<void> handle(const http_request& req, response_writer& out, provider_deps& d) {
  if (!d.store) {
    const error e = make_error(errc::upstream_unavailable, "the provider registry is not available");
    co_return co_await fail(out, e);
  }
  const std::string id = req.path.size() > k_prefix.size() + 1 ? req.path.substr(k_prefix.size() + 1) : "";
  const std::string& m = req.method;
  if (m != "GET" && !req.caller.admin()) {
    const error e = admin_only();
    co_return co_await fail(out, e);
  }
  if (id.empty()) {
    if (m == "POST") co_return co_await create(req, out, d);
    auto load = [&d] { return d.store->list(); };
    auto all = co_await off_thread(d.pool, load);
    if (!all) co_return co_await fail(out, all.error());
    json data = json::array();
    for (const auto& r : *all) data.push_back(public_json(r));
    const json list = {{"object", "list"}, {"data", std::move(data)}};
    co_return co_await send_json(out, 200, list);
  }
  if (m == "PUT") co_return co_await update(req, out, d, id);
  if (m == "DELETE") {
    auto drop = [&d, id] { return d.store->remove(id); };
    auto removed = co_await off_thread(d.pool, drop);
    if (!removed) co_return co_await fail(out, removed.error());
    if (!*removed) {
      const error e = not_found(id);
      co_return co_await fail(out, e);
    }
    const json done = {{"id", id}, {"deleted", true}};
    co_return co_await send_json(out, 200, done);
  }
  auto look = [&d, id] { return d.store->find(id); };
  auto found = co_await off_thread(d.pool, look);
  if (!found) co_return co_await fail(out, found.error());
  if (!*found) {
    const error e = not_found(id);
    co_return co_await fail(out, e);
  }
  const json one = public_json(**found);
  co_await send_json(out, 200, one);
}

/// The row a request names: by id, or the first enabled one of the type.
result<store::stored_row> pick(const std::vector<store::stored_row>& rows, const std::string& id, const std::string& type) {
  for (const auto& r : rows) {
    if (!id.empty()) {
      if (r.id == id) return r;
      continue;
    }
    const json cfg = parse_json(r.config_json).value_or(json::object());
    if (cfg.value("provider_type", "") == type && cfg.value("enabled", true)) return r;
  }
  if (!id.empty()) return not_found(id);
  return make_error(errc::not_found, "no enabled provider of type '" + type + "' (POST /api/providers adds one)",
                    "provider_type", "provider_not_found");
}

/// The engine for a resolved row: the key opened (sealed) or read (environment).
result<std::unique_ptr<engine::provider_engine>> engine_for(const store::stored_row& r, const std::string& model,
                                                             provider_deps& d) {
  const json cfg = parse_json(r.config_json).value_or(json::object());
  if (!cfg.value("enabled", true)) {
    return make_error(errc::invalid_request, "provider '" + r.id + "' is disabled", "provider_id", "provider_disabled");
  }
  if (model.empty()) {
    return make_error(errc::invalid_request, "name the model at the provider: external_model or model", "external_model",
                      "invalid_value");
  }
  engine::provider_target t{r.id, cfg.value("provider_type", ""), cfg.value("base_url", ""), "", model};
  if (auto env = cfg.find("api_key_env"); env != cfg.end() && env->is_string()) {
    const char* v = std::getenv(env->get<std::string>().c_str());
    if (!v || !*v) {
      return make_error(errc::invalid_request,
                        "provider '" + r.id + "' takes its key from $" + env->get<std::string>() + ", which is not set",
                        "provider_id", "provider_key_missing");
    }
    t.api_key = v;
  } else if (auto sealed = cfg.find("api_key_sealed"); sealed != cfg.end() && sealed->is_string()) {
    auto key = store::open_secret(d.seal_key, sealed->get<std::string>());
    if (!key) return make_error(errc::internal, "provider '" + r.id + "': its stored key cannot be opened");
    t.api_key = std::move(*key);
  }
  return std::make_unique<engine::provider_engine>(std::move(t), *d.client, d.ping);
}

}  // namespace

std::vector<route> provider_routes(provider_deps& deps) {
  const surface* s = &control_surface();
  auto bound = [&deps](const http_request& req, response_writer& out) { return handle(req, out, deps); };
  return {
      {"GET", "/api/providers", false, auth_policy::api_key, s, bound},
      {"POST", "/api/providers", false, auth_policy::api_key, s, bound},
      {"GET", "/api/providers/", true, auth_policy::api_key, s, bound},
      {"PUT", "/api/providers/", true, auth_policy::api_key, s, bound},
      {"DELETE", "/api/providers/", true, auth_policy::api_key, s, bound},
  };
}

engine::provider_resolver provider_resolver(provider_deps& deps) {
  return [&deps](std::string id, std::string type, std::string model,
                 std::string owner) -> asio::awaitable<result<std::unique_ptr<engine::provider_engine>>> {
    (void)owner;  // every key may use the providers the admin configured
    if (!deps.store) co_return make_error(errc::upstream_unavailable, "the provider registry is not available");
    auto load = [&deps] { return deps.store->list(); };
    auto rows = co_await off_thread(deps.pool, load);
    if (!rows) co_return rows.error();
    auto row = pick(*rows, id, type);
    if (!row) co_return row.error();
    co_return engine_for(*row, model, deps);
  };
}

}  // namespace warden::api::control
