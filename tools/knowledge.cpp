#include "tools/knowledge.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "common/json_util.h"
#include "common/text.h"
#include "common/utf8.h"
#include "tools/html_text.h"
#include "tools/pdf_text.h"
#include "tools/program.h"

namespace warden::tools {

namespace {

constexpr std::size_t k_default_top_k = 5;
constexpr int k_max_document_pages = 2000;
constexpr std::size_t k_max_document_text = 64 * 1024 * 1024;

/// The scope's knowledge bases that `owner` may read (all of them with any_owner).
result<std::vector<std::string>> readable(store::knowledge_base_store& kb, const rag_scope& scope, const std::string& owner,
                                          bool any_owner) {
  std::vector<std::string> out;
  for (const auto& id : scope.kb_ids) {
    auto k = kb.get_kb(id);
    if (!k) return k.error();
    if (*k && (any_owner || (*k)->owner == owner)) out.push_back(id);
  }
  return out;
}

std::string attribute(std::string_view s) {
  std::string out;
  for (char c : to_valid_utf8(utf8_prefix(s, 200))) {
    if (c == '"') out += "&quot;";
    else if (c == '<') out += "&lt;";
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out;
}

json kb_schema() {
  return {{"type", "object"},
          {"properties",
           {{"query", {{"type", "string"}, {"description", "What to look for in the user's documents."}}},
            {"top_k", {{"type", "integer"}, {"minimum", 1}, {"maximum", 8}, {"description", "How many passages (default 5)."}}}}},
          {"required", {"query"}}};
}

class kb_search_tool : public tool {
 public:
  explicit kb_search_tool(knowledge_runtime& rt) : rt_(rt) {
    info_ = {"search_knowledge_base", "knowledge base",
             "Search the user's documents (the knowledge base of this chat) for passages about a query. Cite what "
             "you use by its source.",
             kb_schema(),
             {.read_only = true, .needs_knowledge_base = true}};
  }
  const tool_info& info() const override { return info_; }
  std::optional<std::string> unavailable(isolation) const override {
    if (rt_.kb == nullptr) return std::string("the knowledge base is not available on this server");
    return std::nullopt;
  }
  std::string status_text(const json& args) const override {
    auto q = args.find("query");
    std::string text = q != args.end() && q->is_string() ? q->get<std::string>() : std::string();
    for (char& c : text) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    return "Searching documents: " + std::string(utf8_prefix(to_valid_utf8(text), 100));
  }

  boost::asio::awaitable<tool_result> run(const json& args, tool_context& ctx) override {
    std::string err;
    auto query = string_arg(args, "query", err);
    if (!query || trim(*query).empty()) co_return error_result("Error: search_knowledge_base needs a non-empty query.");
    if (ctx.rag == nullptr || ctx.rag->kb_ids.empty()) {
      co_return error_result("Error: this chat has no knowledge base (the request sets none in rag_scope).");
    }
    std::size_t top_k = static_cast<std::size_t>(ctx.rag->default_top_k.value_or(static_cast<int>(k_default_top_k)));
    if (auto t = args.find("top_k"); t != args.end() && t->is_number_integer()) {
      top_k = static_cast<std::size_t>(std::clamp<std::int64_t>(t->get<std::int64_t>(), 1, k_max_kb_top_k));
    }
    if (ctx.kb_searches && ctx.kb_searches->fetch_add(1) >= k_max_kb_searches) {
      co_return ok_result("You have already searched the knowledge base " + std::to_string(k_max_kb_searches) +
                          " times for this answer. Stop searching and answer with what you found.");
    }
    auto hits = co_await search_scope(rt_, *ctx.rag, *query, top_k, ctx.owner, ctx.any_owner);
    if (!hits) co_return error_result("Error: the knowledge base could not be searched: " + hits.error().message);
    if (hits->empty()) co_return ok_result("No passages in the knowledge base match this query.");
    co_return ok_result(format_kb_hits(*hits));
  }

 private:
  knowledge_runtime& rt_;
  tool_info info_;
};

}  // namespace

std::unique_ptr<tool> make_kb_search_tool(knowledge_runtime& rt) { return std::make_unique<kb_search_tool>(rt); }

boost::asio::awaitable<result<std::vector<store::kb_hit>>> search_scope(knowledge_runtime& rt, const rag_scope& scope,
                                                                      std::string query, std::size_t top_k,
                                                                      std::string owner, bool any_owner) {
  if (rt.kb == nullptr) co_return make_error(errc::upstream_unavailable, "no knowledge base on this server");
  auto* kb = rt.kb;
  auto pick = [kb, scope, owner, any_owner] { return readable(*kb, scope, owner, any_owner); };
  result<std::vector<std::string>> ids = co_await off_thread(rt.pool, pick);
  if (!ids) co_return ids.error();
  if (ids->empty()) {
    co_return make_error(errc::not_found, "no knowledge base " + scope.kb_ids.front() +
                                              (scope.kb_ids.size() > 1 ? " (nor the others named)" : "") +
                                              " exists for this key: check rag_scope's kb_id");
  }
  std::optional<std::vector<float>> vector;
  if (rt.embed && scope.mode != "lexical") {
    std::vector<std::string> one{query};
    auto v = co_await rt.embed(std::move(one));
    if (v && v->size() == 1) {
      vector = std::move(v->front());
    } else if (!v) {
      spdlog::debug("knowledge base: lexical search only (the query could not be embedded: {})", v.error().message);
    }
  }
  auto find = [kb, ids = std::move(*ids), query, vector, top_k] { return kb->search_hybrid(ids, query, vector, top_k); };
  co_return co_await off_thread(rt.pool, find);
}

boost::asio::awaitable<std::vector<store::kb_hit>> autoinject_hits(knowledge_runtime& rt, const rag_scope& scope,
                                                                  std::string query, std::string owner, bool any_owner) {
  std::vector<store::kb_hit> none;
  if (rt.kb == nullptr || !rt.embed) co_return none;
  std::vector<std::string> one{query};
  auto v = co_await rt.embed(std::move(one));
  if (!v || v->size() != 1) co_return none;
  auto* kb = rt.kb;
  const std::size_t top_k = std::min<std::size_t>(4, static_cast<std::size_t>(scope.default_top_k.value_or(5)));
  auto find = [kb, scope, owner, any_owner, vec = std::move(v->front()), top_k]() -> result<std::vector<store::kb_hit>> {
    auto ids = readable(*kb, scope, owner, any_owner);
    if (!ids) return ids.error();
    return kb->search_dense(*ids, vec, top_k);
  };
  auto hits = co_await off_thread(rt.pool, find);
  if (!hits) {
    spdlog::warn("knowledge base: auto-inject search failed: {}", hits.error().message);
    co_return none;
  }
  std::erase_if(*hits, [&scope](const store::kb_hit& h) { return h.score < scope.autoinject_min_score; });
  co_return std::move(*hits);
}

std::string format_kb_hits(const std::vector<store::kb_hit>& hits) {
  std::string blocks;
  json sources = json::object();
  for (std::size_t i = 0; i < hits.size(); ++i) {
    const auto& h = hits[i];
    char score[32];
    std::snprintf(score, sizeof score, "%.4f", h.score);
    std::string block = "<chunk source=\"" + attribute(h.document_name) + "\" n=\"" + std::to_string(i + 1) +
                        "\" score=\"" + score + "\">\n" + to_valid_utf8(h.text) + "\n</chunk>\n";
    json src = {{"document_id", h.document_id}, {"name", to_valid_utf8(h.document_name)},
                {"source", to_valid_utf8(h.source)}, {"chunk", h.ordinal}};
    const std::string line = "__RAG_SOURCES__:" + json(sources).dump();
    if (i > 0 && utf8_length(blocks) + utf8_length(block) + line.size() + 200 > k_max_result_chars) break;
    blocks += block;
    sources[std::to_string(i + 1)] = std::move(src);
  }
  return blocks + "__RAG_SOURCES__:" + sources.dump();
}

std::optional<std::string> doc_kind_of(std::string_view declared, std::string_view name, std::string_view bytes) {
  const std::string d = ascii_lower(declared);
  if (d == "pdf" || d == "html" || d == "markdown" || d == "text") return d;
  const std::string n = ascii_lower(name);
  if (bytes.starts_with("%PDF-") || n.ends_with(".pdf")) return std::string("pdf");
  if (n.ends_with(".html") || n.ends_with(".htm") || n.ends_with(".xhtml")) return std::string("html");
  if (n.ends_with(".md") || n.ends_with(".markdown")) return std::string("markdown");
  if (bytes.substr(0, 4096).find('\0') != std::string_view::npos) return std::nullopt;
  const std::string head = ascii_lower(trim(bytes.substr(0, 512)));
  if (head.starts_with("<!doctype html") || head.starts_with("<html")) return std::string("html");
  return std::string("text");
}

std::optional<std::string> decode_base64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0;
  bool padded = false;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=') { padded = true; continue; }
    else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    else return std::nullopt;
    if (padded) return std::nullopt;  // data after padding
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if (bits >= 6) return std::nullopt;  // a lone sextet cannot end a byte
  return out;
}

result<std::string> document_text(const std::string& kind, const std::string& bytes, const std::string& base_url) {
  if (kind == "pdf") {
    auto t = pdf_to_text(bytes, k_max_document_pages, k_max_document_text, std::chrono::seconds(120));
    if (!t) return make_error(errc::invalid_request, "the PDF could not be read: " + t.error().message);
    return t;
  }
  if (kind == "html") return html_to_text(bytes, base_url, k_max_document_text);
  return to_valid_utf8(bytes);
}

}  // namespace warden::tools
