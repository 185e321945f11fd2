// knowledge — the knowledge base as the tools see it (issue 25; reference unsloth-studio.md §2.10,
// §4.10): the search_knowledge_base tool, the search the loop's RAG auto-inject runs, and the
// reading of documents into text for ingestion (api/control/kb_routes.h).
//
// search_knowledge_base {query, top_k?}: searches the knowledge bases of the request's rag_scope
// (tool_context::rag; the tool is offered only with one) that the caller may read (their owner,
// or any for an admin / the single user): hybrid (FTS5 bm25 + cosine over embeddings of the
// served model, fused by RRF, store/knowledge_base.h) when the query can be embedded, else
// lexical. top_k: 1..8 (default rag_scope.default_top_k, else 5). At most k_max_kb_searches
// searches per answer (shared with auto-inject): past them the model is told to stop searching.
// The result: one `<chunk source="…" n="i" score="…">text</chunk>` block a hit, then a line
// `__RAG_SOURCES__:{"i":{"document_id","name","source","chunk"}}` (the citation map the UI reads),
// capped at tools::k_max_result_chars (whole chunks dropped from the end).
// Thread-safety: the tool and the functions are thread-safe; the runtime's members must outlive
// them.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/blocking_pool.h"
#include "common/result.h"
#include "store/knowledge_base.h"
#include "tools/tool.h"

namespace warden::tools {

/// Knowledge-base searches per answer, shared by the tool and auto-inject (reference §2.10).
inline constexpr int k_max_kb_searches = 3;
/// Most hits one search returns.
inline constexpr std::size_t k_max_kb_top_k = 8;

/// Embeds texts with the served model (api::openai::embed_texts); an error when it cannot.
using embedder = std::function<boost::asio::awaitable<result<std::vector<std::vector<float>>>>(std::vector<std::string>)>;

/// What the knowledge tools use; wired in app/serve.cpp.
struct knowledge_runtime {
  store::knowledge_base_store* kb = nullptr;  ///< null: no knowledge base (the tool says so)
  embedder embed;                             ///< null: lexical search only
  blocking_pool* pool = nullptr;              ///< SQLite and document work (null: inline)
};

/// search_knowledge_base.
std::unique_ptr<tool> make_kb_search_tool(knowledge_runtime& rt);

/// One search as the tool and auto-inject run it: the hits (best first) of the scope's knowledge
/// bases readable by `owner` (`any_owner`: every one); hybrid when `rt.embed` embeds the query.
boost::asio::awaitable<result<std::vector<store::kb_hit>>> search_scope(knowledge_runtime& rt, const rag_scope& scope,
                                                                      std::string query, std::size_t top_k,
                                                                      std::string owner, bool any_owner);

/// RAG auto-inject's search (reference §2.10): the query embedded, the scope's best
/// min(4, default_top_k) chunks by cosine with a score of at least rag_scope.autoinject_min_score.
/// Empty when nothing passes, when the query cannot be embedded (no cosine to judge by), or on
/// an error (logged): auto-inject is a help, never a failure. These hits decide whether to inject
/// and how many: what is injected is the tool's own search of the question with top_k = their
/// count (agent/tool_loop.cpp), so the model sees the same ranking as when it searches itself.
boost::asio::awaitable<std::vector<store::kb_hit>> autoinject_hits(knowledge_runtime& rt, const rag_scope& scope,
                                                                  std::string query, std::string owner, bool any_owner);

/// The hits as the model reads them (`<chunk>` blocks and the __RAG_SOURCES__ line, above).
std::string format_kb_hits(const std::vector<store::kb_hit>& hits);

/// A document's kind from its declared kind, its name's extension and its first bytes:
/// "pdf" | "html" | "markdown" | "text"; nullopt for binary content that is none of them.
std::optional<std::string> doc_kind_of(std::string_view declared, std::string_view name, std::string_view bytes);

/// The bytes of standard base64 (RFC 4648 §4; padding optional, whitespace ignored); nullopt
/// when it is not base64.
std::optional<std::string> decode_base64(std::string_view text);

/// A document's readable text: text and Markdown as they are (invalid UTF-8 repaired), HTML
/// through html_text.h, PDF through pdf_text.h (at most 2000 pages). Blocking (PDF: a child
/// process). Errors: errc::invalid_request naming what could not be read.
result<std::string> document_text(const std::string& kind, const std::string& bytes, const std::string& base_url);

}  // namespace warden::tools
