// Knowledge bases on the control surface (issue 25; reference unsloth-studio.md §4.10).
//
//   POST   /api/kb                       {name} → 201 kb
//   GET    /api/kb                       → {"object":"list","data":[kb…]}
//   GET    /api/kb/{kb}                  → kb with "documents":[document…]
//   DELETE /api/kb/{kb}                  → {"deleted":true,"id"} (its documents and chunks too)
//   POST   /api/kb/{kb}/documents        {name?, kind?, one of: content (text), content_base64
//                                        (bytes: PDF, HTML, text), url (fetched through the web
//                                        guard, tools/web_fetch.h), stream?}
//          → 201 document. Text is read by tools::document_text, cut by store::chunk_text,
//          embedded in batches of 64 by the served model when it can embed (else the document is
//          searchable by its words only: "embedded": false), and stored in one transaction.
//          With "stream": true the answer is SSE: {"type":"progress","stage":"reading"|"embedding"
//          |"storing","done":n,"total":m} events, then {"type":"document","document":…} or
//          {"type":"error","error":{…}}. All document work runs off the io threads.
//   GET    /api/kb/{kb}/documents        → {"object":"list","data":[document…]}
//   DELETE /api/kb/{kb}/documents/{doc}  → {"deleted":true,"id"}
//   POST   /api/kb/{kb}/search           {query, top_k? 1..50, mode? "hybrid"|"lexical"} →
//          {"object":"list","data":[{document_id, document_name, source, chunk, text, score}]}
// kb = {id, name, owner, created_at_ms, documents (count)}; document = {id, kb_id, name, kind,
// source, bytes, chunks, embedded, created_at_ms}.
// Uploads are JSON bodies (a file as content_base64), never forms: the CSRF rule of the control
// surface (a JSON Content-Type) keeps holding. Sizes: the server's --max-body.
// Owners (issue 22): a user key sees and changes only its own knowledge bases; another key's id
// is answered like an unknown one (404). Admin keys and the single user see every one.
// Errors: the control surface's OpenAI envelope; 404 knowledge_base_not_found /
// document_not_found; 400 for a bad body or a document that cannot be read; 503 without a store.
// Thread-safety: handlers run concurrently; the store is thread-safe.
#pragma once

#include <vector>

#include "api/control/routes.h"
#include "tools/builtins.h"
#include "tools/knowledge.h"

namespace warden::api::control {

struct kb_deps {
  tools::knowledge_runtime* rt = nullptr;  ///< null or without a store: 503
  tools::web_options web;                  ///< the guard's settings for URL documents
  blocking_pool* fetch_pool = nullptr;     ///< where URL documents are fetched (null: inline)
};

std::vector<route> kb_routes(kb_deps& deps);

/// POST /api/kb/{id}/documents (kb_ingest.cpp).
boost::asio::awaitable<void> ingest(const http_request& req, response_writer& out, kb_deps& deps, const std::string& id);

}  // namespace warden::api::control
