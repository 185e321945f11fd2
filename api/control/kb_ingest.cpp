// POST /api/kb/{kb}/documents (kb_routes.h): read, chunk, embed and store one document, off the
// io threads, with progress events when the request streams.
#include <spdlog/spdlog.h>

#include <chrono>

#include "api/control/extensions.h"
#include "api/control/kb_routes.h"
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

constexpr std::size_t k_embed_batch = 64;
constexpr std::size_t k_max_url_document = 10 * 1024 * 1024;

/// What the body asks to ingest.
struct upload {
  std::string name, kind, source;
  std::string bytes;     ///< content or decoded content_base64 ("" for a url)
  std::string url;       ///< "" unless fetched
  bool stream = false;
};

/// The body's fields, checked; exactly one of content, content_base64 and url.
result<upload> read_upload(std::string_view text) {
  auto body = parse_control_object(text);
  if (!body) return body.error();
  for (const char* k : {"name", "kind", "content", "content_base64", "url"}) {  // null = absent
    if (auto it = body->find(k); it != body->end() && it->is_null()) body->erase(it);
  }
  upload u;
  for (const char* k : {"name", "kind", "content", "content_base64", "url"}) {
    if (auto it = body->find(k); it != body->end() && !it->is_null() && !it->is_string()) {
      return field_wrong_type(k, "a string", *it);
    }
  }
  if (auto e = check_bool_field(*body, "stream", u.stream)) return *e;
  const int given = int{body->contains("content")} + int{body->contains("content_base64")} + int{body->contains("url")};
  if (given != 1) return field_invalid("send exactly one of 'content', 'content_base64' and 'url'", "content");
  u.name = std::string(trim(body->value("name", std::string())));
  u.kind = body->value("kind", std::string());
  if (u.name.size() > 200 || !is_valid_utf8(u.name)) return field_invalid("'name' must be at most 200 bytes of text", "name");
  if (body->contains("content")) {
    u.bytes = (*body)["content"].get<std::string>();
  } else if (body->contains("content_base64")) {
    auto decoded = tools::decode_base64((*body)["content_base64"].get<std::string>());
    if (!decoded) return field_invalid("'content_base64' is not valid base64", "content_base64");
    u.bytes = std::move(*decoded);
  } else {
    u.url = (*body)["url"].get<std::string>();
    if (auto p = tools::parse_url(u.url); !p) return field_invalid("'url': " + p.error().message, "url");
  }
  u.source = u.url.empty() ? (u.name.empty() ? std::string("upload") : u.name) : u.url;
  if (u.name.empty()) u.name = u.url.empty() ? std::string("untitled") : u.url.substr(0, 200);
  return u;
}

/// The fetched page of a url upload, into u.bytes (and its kind from the content type).
result<void> fetch_upload(upload& u, const tools::web_options& web) {
  tools::fetch_options fo;
  fo.allow_private = web.allow_private_fetch;
  fo.own_port = web.own_port;
  fo.max_bytes = k_max_url_document;
  fo.max_pdf_bytes = k_max_url_document;
  auto f = tools::fetch_url(u.url, fo);
  if (!f) return make_error(errc::invalid_request, "the url could not be fetched: " + f.error().message, "url");
  if (f->status >= 400) {
    return make_error(errc::invalid_request, "the url answered HTTP " + std::to_string(f->status), "url");
  }
  if (u.kind.empty()) {
    if (f->content_type == "application/pdf") u.kind = "pdf";
    else if (f->content_type == "text/html" || f->content_type == "application/xhtml+xml") u.kind = "html";
    else if (f->content_type == "text/markdown") u.kind = "markdown";
  }
  u.bytes = std::move(f->body);
  return {};
}

/// The document's chunks, its kind and byte count (blocking: fetch, PDF child, chunking).
struct prepared {
  std::string kind;
  std::int64_t bytes = 0;
  std::vector<std::string> chunks;
};

result<prepared> prepare(upload u, const tools::web_options& web) {
  if (!u.url.empty()) {
    if (auto r = fetch_upload(u, web); !r) return r.error();
  }
  auto kind = tools::doc_kind_of(u.kind, u.url.empty() ? u.name : u.url, u.bytes);
  if (!kind) return field_invalid("the document is binary content that is not a PDF", "content");
  auto text = tools::document_text(*kind, u.bytes, u.url);
  if (!text) return text.error();
  prepared p{*kind, static_cast<std::int64_t>(u.bytes.size()), store::chunk_text(*text)};
  if (p.chunks.empty()) return field_invalid("the document has no readable text", "content");
  return p;
}

/// Progress and the outcome, as SSE frames when the request streams.
class reporter {
 public:
  reporter(response_writer& out, bool stream) : out_(out), stream_(stream) {}
  asio::awaitable<bool> start() {
    if (!stream_) co_return true;
    co_return co_await out_.begin_stream();
  }
  asio::awaitable<bool> progress(const char* stage, std::size_t done, std::size_t total) {
    if (!stream_) co_return true;
    co_return co_await out_.write_stream(sse::data_frame(progress_json(stage, done, total).dump()));
  }
  asio::awaitable<void> finish(const json& document) {
    if (!stream_) {
      co_await out_.send(201, "application/json", dump_safe(document));
      co_return;
    }
    co_await out_.write_stream(sse::data_frame(done_json(document).dump()));
    co_await out_.end_stream();
  }
  asio::awaitable<void> failed(const error& e) {
    if (!out_.started()) co_return co_await wire::send_error(out_, control_surface(), e);
    co_await out_.write_stream(sse::data_frame(error_json(e).dump()));
    co_await out_.end_stream();
  }

 private:
  static json progress_json(const char* stage, std::size_t done, std::size_t total) {
    return {{"type", "progress"}, {"stage", stage}, {"done", done}, {"total", total}};
  }
  static json done_json(const json& d) { return {{"type", "document"}, {"document", d}}; }
  static json error_json(const error& e) {
    return {{"type", "error"}, {"error", {{"message", e.message}, {"type", to_string(e.code)}, {"param", e.param}}}};
  }
  response_writer& out_;
  bool stream_;
};

/// Embeddings for every chunk, in batches; empty when the served model cannot embed.
asio::awaitable<std::vector<std::vector<float>>> embed_all(kb_deps& deps, const std::vector<std::string>& chunks,
                                                           reporter& rep) {
  std::vector<std::vector<float>> out;
  if (!deps.rt->embed) co_return out;
  for (std::size_t at = 0; at < chunks.size(); at += k_embed_batch) {
    const std::size_t end = std::min(chunks.size(), at + k_embed_batch);
    std::vector<std::string> batch(chunks.begin() + static_cast<std::ptrdiff_t>(at),
                                   chunks.begin() + static_cast<std::ptrdiff_t>(end));
    auto v = co_await deps.rt->embed(std::move(batch));
    if (!v || v->size() != end - at) {
      spdlog::info("knowledge base: stored without embeddings (searchable by words): {}",
                   v ? std::string("a short answer") : v.error().message);
      out.clear();
      co_return out;
    }
    for (auto& e : *v) out.push_back(std::move(e));
    const bool open = co_await rep.progress("embedding", end, chunks.size());
    if (!open) co_return std::vector<std::vector<float>>();
  }
  co_return out;
}

store::kb_document document_of(const upload& u, const prepared& p, const std::string& kb_id) {
  store::kb_document d;
  d.id = ids::new_id(ids::kind::document);
  d.kb_id = kb_id;
  d.name = u.name;
  d.kind = u.url.empty() ? p.kind : "url";
  d.source = u.source;
  d.bytes = p.bytes;
  d.chunks = static_cast<std::int64_t>(p.chunks.size());
  d.created_unix_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return d;
}

json stored_json(const store::kb_document& d, bool embedded) {
  return {{"id", d.id}, {"object", "document"}, {"kb_id", d.kb_id}, {"name", d.name}, {"kind", d.kind},
          {"source", d.source}, {"bytes", d.bytes}, {"chunks", d.chunks}, {"embedded", embedded},
          {"created_at_ms", d.created_unix_ms}};
}

}  // namespace

asio::awaitable<void> ingest(const http_request& req, response_writer& out, kb_deps& deps, const std::string& id) {
  auto u = read_upload(req.body);
  if (!u) co_return co_await wire::send_error(out, control_surface(), u.error());
  auto* kb = deps.rt->kb;
  auto look = [kb, id] { return kb->get_kb(id); };
  auto k = co_await off_thread(deps.rt->pool, look);
  if (!k) co_return co_await wire::send_error(out, control_surface(), k.error());
  if (!*k || !req.caller.may_access((*k)->owner)) {
    co_return co_await wire::send_error(out, control_surface(),
                                        make_error(errc::not_found, "no knowledge base with this id", "kb_id", "knowledge_base_not_found"));
  }
  reporter rep(out, u->stream);
  // Named results, never co_await inside a condition (GCC 12).
  bool open = co_await rep.start();
  if (open) open = co_await rep.progress("reading", 0, 1);
  if (!open) co_return;
  // a URL upload waits on the network: on a pool of its own, so slow uploads never hold up
  // web_search's fetches nor the database work
  blocking_pool* where = u->url.empty() ? deps.rt->pool : deps.fetch_pool;
  auto read = [up = *u, web = deps.web] { return prepare(up, web); };
  auto p = co_await off_thread(where, read);
  if (!p) co_return co_await rep.failed(p.error());
  open = co_await rep.progress("reading", 1, 1);
  if (!open) co_return;
  auto vectors = co_await embed_all(deps, p->chunks, rep);
  open = co_await rep.progress("storing", 0, 1);
  if (!open) co_return;
  const bool embedded = !vectors.empty();
  const store::kb_document doc = document_of(*u, *p, id);
  auto save = [kb, doc, chunks = std::move(p->chunks), vectors = std::move(vectors)] {
    return kb->add_document(doc, chunks, vectors);
  };
  auto saved = co_await off_thread(deps.rt->pool, save);
  if (!saved) {  // most likely the knowledge base was deleted meanwhile (its foreign key)
    spdlog::warn("knowledge base {}: storing document {} failed: {}", id, doc.id, saved.error().message);
    auto again = co_await off_thread(deps.rt->pool, look);
    const error why = again && !*again ? make_error(errc::not_found, "the knowledge base was deleted while the document was added",
                                                    "kb_id", "knowledge_base_not_found")
                                       : make_error(errc::internal, "the document could not be stored (see the server log)");
    co_return co_await rep.failed(why);
  }
  co_await rep.finish(stored_json(doc, embedded));
}

}  // namespace warden::api::control
