#include "api/control/kb_routes.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "api/control/extensions.h"
#include "common/ids.h"
#include "common/json_fields.h"
#include "common/json_util.h"
#include "common/sse.h"
#include "common/text.h"
#include "common/utf8.h"
#include "store/kb_text.h"
#include "tools/web_fetch.h"

namespace warden::api::control {

namespace {

namespace asio = boost::asio;
using store::kb_document;
using store::knowledge_base;

constexpr std::string_view k_prefix = "/api/kb/";
constexpr std::size_t k_max_name = 200;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

asio::awaitable<void> fail(response_writer& out, error e) { co_await wire::send_error(out, control_surface(), e); }

error kb_not_found() { return make_error(errc::not_found, "no knowledge base with this id", "kb_id", "knowledge_base_not_found"); }
error doc_not_found() { return make_error(errc::not_found, "no document with this id", "document_id", "document_not_found"); }

json kb_json(const knowledge_base& k, std::size_t documents) {
  return {{"id", k.id}, {"object", "knowledge_base"}, {"name", k.name}, {"owner", k.owner},
          {"created_at_ms", k.created_unix_ms}, {"documents", documents}};
}

json doc_json(const kb_document& d) {
  return {{"id", d.id}, {"object", "document"}, {"kb_id", d.kb_id}, {"name", d.name}, {"kind", d.kind},
          {"source", d.source}, {"bytes", d.bytes}, {"chunks", d.chunks}, {"created_at_ms", d.created_unix_ms}};
}

json list_json(json data) { return {{"object", "list"}, {"data", std::move(data)}}; }
json deleted_json(const std::string& id) { return {{"deleted", true}, {"id", id}}; }

/// The parts of a path under /api/kb/: {kb}, {kb}/documents, {kb}/documents/{doc}, {kb}/search.
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

/// The knowledge base `id` if the caller may see it (blocking).
result<std::optional<knowledge_base>> visible_kb(store::knowledge_base_store& kb, const std::string& id,
                                                 const principal& caller) {
  if (!agent::valid_session_id(id)) return std::optional<knowledge_base>();
  auto k = kb.get_kb(id);
  if (!k) return k.error();
  if (*k && !caller.may_access((*k)->owner)) return std::optional<knowledge_base>();
  return k;
}

/// The caller's knowledge base or the 404 / 500 to answer.
asio::awaitable<result<knowledge_base>> find_kb(kb_deps& deps, const std::string& id, const principal& caller) {
  auto* kb = deps.rt->kb;
  auto look = [kb, id, caller] { return visible_kb(*kb, id, caller); };
  auto k = co_await off_thread(deps.rt->pool, look);
  if (!k) co_return k.error();
  if (!*k) co_return kb_not_found();
  co_return std::move(**k);
}

asio::awaitable<void> create(const http_request& req, response_writer& out, kb_deps& deps) {
  auto body = parse_control_body(req.body, {"name"});
  if (!body) co_return co_await fail(out, body.error());
  const std::string name(trim(body->count("name") ? body->at("name") : std::string()));
  if (name.empty() || name.size() > k_max_name || !is_valid_utf8(name)) {
    co_return co_await fail(out, field_invalid("'name' must be 1 to 200 bytes of text", "name"));
  }
  knowledge_base k{ids::new_id(ids::kind::knowledge_base), name, req.caller.name, now_ms()};
  auto* kb = deps.rt->kb;
  auto add = [kb, k] { return kb->create_kb(k.id, k.name, k.owner, k.created_unix_ms); };
  auto added = co_await off_thread(deps.rt->pool, add);
  if (!added) co_return co_await fail(out, added.error());
  co_await out.send(201, "application/json", dump_safe(kb_json(k, 0)));
}

/// The caller's knowledge bases with their document counts (blocking).
result<json> list_visible(store::knowledge_base_store& kb, const principal& caller) {
  auto all = kb.list_kbs(caller.admin() ? std::nullopt : std::optional<std::string>(caller.name));
  if (!all) return all.error();
  json data = json::array();
  for (const auto& k : *all) {
    auto docs = kb.list_documents(k.id);
    if (!docs) return docs.error();
    data.push_back(kb_json(k, docs->size()));
  }
  return list_json(std::move(data));
}

asio::awaitable<void> list(const http_request& req, response_writer& out, kb_deps& deps) {
  auto* kb = deps.rt->kb;
  auto read = [kb, caller = req.caller] { return list_visible(*kb, caller); };
  auto body = co_await off_thread(deps.rt->pool, read);
  if (!body) co_return co_await fail(out, body.error());
  co_await out.send(200, "application/json", dump_safe(*body));
}

asio::awaitable<void> show(const http_request& req, response_writer& out, kb_deps& deps, const std::string& id,
                           bool documents_only) {
  auto k = co_await find_kb(deps, id, req.caller);
  if (!k) co_return co_await fail(out, k.error());
  auto* kb = deps.rt->kb;
  auto read = [kb, id] { return kb->list_documents(id); };
  auto docs = co_await off_thread(deps.rt->pool, read);
  if (!docs) co_return co_await fail(out, docs.error());
  json list = json::array();
  for (const auto& d : *docs) list.push_back(doc_json(d));
  json body = documents_only ? list_json(std::move(list)) : kb_json(*k, docs->size());
  if (!documents_only) body["documents"] = std::move(list);
  co_await out.send(200, "application/json", dump_safe(body));
}

asio::awaitable<void> remove(const http_request& req, response_writer& out, kb_deps& deps, const std::string& id,
                             const std::string& doc) {
  auto k = co_await find_kb(deps, id, req.caller);
  if (!k) co_return co_await fail(out, k.error());
  auto* kb = deps.rt->kb;
  auto drop = [kb, id, doc] { return doc.empty() ? kb->remove_kb(id) : kb->remove_document(id, doc); };
  auto removed = co_await off_thread(deps.rt->pool, drop);
  if (!removed) co_return co_await fail(out, removed.error());
  if (!*removed) {  // a named error: GCC 12 destroys a ?: temporary inside co_await twice
    const error missing = doc.empty() ? kb_not_found() : doc_not_found();
    co_return co_await fail(out, missing);
  }
  const std::string gone = dump_safe(deleted_json(doc.empty() ? id : doc));
  co_await out.send(200, "application/json", gone);
}

json hit_json(const store::kb_hit& h) {
  return {{"document_id", h.document_id}, {"document_name", to_valid_utf8(h.document_name)},
          {"source", to_valid_utf8(h.source)}, {"chunk", h.ordinal}, {"text", to_valid_utf8(h.text)}, {"score", h.score}};
}

asio::awaitable<void> search(const http_request& req, response_writer& out, kb_deps& deps, const std::string& id) {
  auto body = parse_control_object(req.body);
  if (!body) co_return co_await fail(out, body.error());
  auto q = body->find("query");
  if (q == body->end() || !q->is_string() || trim(q->get<std::string>()).empty()) {
    co_return co_await fail(out, field_invalid("'query' must be a non-empty string", "query"));
  }
  if (auto e = check_int_field(*body, "top_k", 1, 50)) co_return co_await fail(out, *e);
  tools::rag_scope scope;
  scope.kb_ids = {id};
  if (auto m = body->find("mode"); m != body->end() && !m->is_null()) {
    if (*m != "hybrid" && *m != "lexical") co_return co_await fail(out, field_invalid("'mode' must be \"hybrid\" or \"lexical\"", "mode"));
    scope.mode = m->get<std::string>();
  }
  auto k = co_await find_kb(deps, id, req.caller);
  if (!k) co_return co_await fail(out, k.error());
  const std::size_t top_k = static_cast<std::size_t>(body->value("top_k", 5));
  auto hits = co_await tools::search_scope(*deps.rt, scope, q->get<std::string>(), top_k, req.caller.name, true);
  if (!hits) co_return co_await fail(out, hits.error());
  json data = json::array();
  for (const auto& h : *hits) data.push_back(hit_json(h));
  co_await out.send(200, "application/json", dump_safe(list_json(std::move(data))));
}


route_handler bind(kb_deps& deps, const char* method) {
  const std::string m = method;
  return [&deps, m](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    if (deps.rt == nullptr || deps.rt->kb == nullptr) {
      co_return co_await fail(out, make_error(errc::upstream_unavailable, "the knowledge base is not available"));
    }
    if (req.path == "/api/kb") {
      if (m == "POST") co_return co_await create(req, out, deps);
      co_return co_await list(req, out, deps);
    }
    const auto p = path_parts(req.path);
    const bool docs = p.size() >= 2 && p[1] == "documents";
    if (p.empty() || p[0].empty() || p.size() > 3 || (p.size() >= 2 && !docs && !(p.size() == 2 && p[1] == "search")) ||
        (p.size() == 3 && p[2].empty())) {
      co_return co_await fail(out, make_error(errc::not_found, "no such knowledge base route: " + req.path));
    }
    if (m == "GET" && p.size() <= 2 && (p.size() == 1 || docs)) co_return co_await show(req, out, deps, p[0], docs);
    if (m == "DELETE" && (p.size() == 1 || (docs && p.size() == 3))) {
      const std::string doc = p.size() == 3 ? p[2] : std::string();  // named (GCC 12, as above)
      co_return co_await remove(req, out, deps, p[0], doc);
    }
    if (m == "POST" && p.size() == 2 && docs) co_return co_await ingest(req, out, deps, p[0]);
    if (m == "POST" && p.size() == 2 && p[1] == "search") co_return co_await search(req, out, deps, p[0]);
    co_return co_await fail(out, make_error(errc::method_not_allowed, "this method is not allowed on " + req.path));
  };
}

}  // namespace

std::vector<route> kb_routes(kb_deps& deps) {
  const surface* s = &control_surface();
  return {
      {"POST", "/api/kb", false, auth_policy::api_key, s, bind(deps, "POST")},
      {"GET", "/api/kb", false, auth_policy::api_key, s, bind(deps, "GET")},
      {"GET", "/api/kb/", true, auth_policy::api_key, s, bind(deps, "GET")},
      {"POST", "/api/kb/", true, auth_policy::api_key, s, bind(deps, "POST")},
      {"DELETE", "/api/kb/", true, auth_policy::api_key, s, bind(deps, "DELETE")},
  };
}

}  // namespace warden::api::control
