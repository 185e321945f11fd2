// warden::store::knowledge_base_store — knowledge bases for retrieval: named collections of
// documents, each cut into chunks (store/kb_text.h) that are searched by full text (FTS5 with
// bm25), by embedding (cosine similarity) or by both fused. Fetching, parsing and embedding
// documents is the caller's work; this store keeps the results and searches them.
//
// Tables (schema version 8, database.cpp):
//   knowledge_bases: id TEXT PRIMARY KEY, name, owner ("" = the single user), created_unix_ms.
//   kb_documents: id TEXT PRIMARY KEY, kb_id REFERENCES knowledge_bases ON DELETE CASCADE, name,
//     kind ("text" | "markdown" | "html" | "pdf" | "url"; not checked here), source (a file name
//     or URL), bytes (the original's size), chunks (how many), created_unix_ms. Indexed on kb_id.
//   kb_chunks: id INTEGER PRIMARY KEY, document_id REFERENCES kb_documents ON DELETE CASCADE,
//     kb_id, ordinal (0, 1, … within the document), text, embedding BLOB (float32 little-endian,
//     4 bytes a dimension; NULL when none). Indexed on kb_id and on document_id.
//   kb_chunks_fts: FTS5 over kb_chunks.text (external content, content_rowid id, tokenizer
//     unicode61 remove_diacritics 2), kept in sync by triggers on kb_chunks (insert, delete —
//     cascaded deletes included — and update of the text).
// Removing a knowledge base removes its documents, their chunks and their FTS rows; removing a
// document removes its chunks and their FTS rows.
// Times are Unix epoch milliseconds. Strings are stored byte for byte with their length.
//
// Search: every search takes the ids of the knowledge bases to search (duplicates are ignored;
// none → no hits; unknown ids → nothing from them) and top_k (0 → no hits). Hits are best first;
// equal scores are ordered by chunk id. A hit's score depends on the search:
//   search_lexical: -bm25() (higher is better; > 0 for a match). The query is never handed to
//     FTS5 as syntax: it is split into words at whitespace and ASCII punctuation (the first 64
//     words count), each word is quoted as an FTS5 string, and the strings are joined with OR; a
//     query with no word gives no hits. Quotes, operators (AND, OR, NOT, NEAR), '*', '^',
//     parentheses and column filters in a query are therefore plain text, never an error.
//   search_dense: the cosine similarity in [-1, 1] of the query vector and a chunk's embedding.
//     Chunks with no embedding, an embedding of another dimension than the query, or a zero or
//     non-finite one are skipped; a zero or non-finite query gives no hits. Brute force over an
//     in-memory cache of each knowledge base's normalised vectors, loaded on first search and
//     dropped whenever a document is added to or removed from it (or it is removed). The cache
//     holds every searched knowledge base's vectors (4 bytes a dimension a chunk); it is not
//     bounded otherwise.
//   search_hybrid: reciprocal rank fusion of search_lexical's and search_dense's best
//     max(30, top_k) each: score = Σ 1 / (60 + rank), rank 1 for each list's best. With no
//     query vector it is search_lexical (with bm25 scores); a query with no word but a vector
//     gives the dense list's order (with fused scores).
// bm25's statistics (chunk count, lengths, word frequencies) cover every knowledge base, so
// scores from different knowledge bases compare. A hit's chunk_id names a chunk only while its
// document is stored: the id of a removed chunk may be given to a later one.
//
// Errors: errc::internal naming the database file, what was being done and sqlite3_errmsg
// (database.h): a duplicate knowledge base or document id, a document whose knowledge base does
// not exist (foreign key). errc::invalid_request for a caller's mistake: add_document with an
// embeddings count that is neither 0 nor the chunks count. Nothing throws for SQLite errors.
// Thread-safety: thread-safe: database calls serialize on the database, the vector cache has its
// own mutex. It only borrows the database, which must outlive it. Calls block on disk I/O: run
// them off the io threads (common/blocking_pool.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace warden::store {

/// One row of `knowledge_bases`.
struct knowledge_base {
  std::string id;                   ///< unique ("kb_…")
  std::string name;                 ///< shown to the user
  std::string owner;                ///< the API key name that owns it ("" = single user)
  std::int64_t created_unix_ms = 0;
};

/// One row of `kb_documents`.
struct kb_document {
  std::string id;                   ///< unique over all knowledge bases ("doc_…")
  std::string kb_id;                ///< the knowledge base it belongs to (must exist)
  std::string name;                 ///< shown to the user
  std::string kind;                 ///< "text" | "markdown" | "html" | "pdf" | "url" (not checked here)
  std::string source;               ///< the file name or URL it came from
  std::int64_t bytes = 0;           ///< the original's size in bytes
  std::int64_t chunks = 0;          ///< how many chunks (add_document writes the count it is given)
  std::int64_t created_unix_ms = 0;
};

/// One search result: a chunk and the document it comes from.
struct kb_hit {
  std::int64_t chunk_id = 0;        ///< kb_chunks.id
  std::string document_id;
  std::string document_name;
  std::string source;               ///< the document's source
  std::int64_t ordinal = 0;         ///< the chunk's place in its document (0 = first)
  std::string text;                 ///< the chunk's text
  double score = 0;                 ///< higher is better; its meaning depends on the search (above)
};

class knowledge_base_store {
 public:
  explicit knowledge_base_store(database& db);

  /// Adds an empty knowledge base; an existing id is an error.
  result<void> create_kb(std::string_view id, std::string_view name, std::string_view owner, std::int64_t now_ms);
  /// The knowledge bases of `owner` (nullopt: of every owner), oldest first (created, then id).
  result<std::vector<knowledge_base>> list_kbs(const std::optional<std::string>& owner = std::nullopt);
  /// The knowledge base with this id; nullopt when there is none.
  result<std::optional<knowledge_base>> get_kb(std::string_view id);
  /// Deletes the knowledge base with its documents and chunks; false when there was none.
  result<bool> remove_kb(std::string_view id);

  /// Stores a document and its chunks in one transaction (all or nothing). `embeddings` is empty
  /// (no embeddings) or holds one vector per chunk, in the same order; an empty vector stores no
  /// embedding for that chunk. meta.chunks is ignored: chunks.size() is stored.
  result<void> add_document(const kb_document& meta, const std::vector<std::string>& chunks,
                            const std::vector<std::vector<float>>& embeddings);
  /// The documents of a knowledge base, oldest first (created, then id).
  result<std::vector<kb_document>> list_documents(std::string_view kb_id);
  /// Deletes document `doc_id` of knowledge base `kb_id` with its chunks; false when there was none.
  result<bool> remove_document(std::string_view kb_id, std::string_view doc_id);

  /// Full-text search (bm25; the query is made safe, see above).
  result<std::vector<kb_hit>> search_lexical(const std::vector<std::string>& kb_ids, std::string_view query,
                                             std::size_t top_k);
  /// Cosine similarity search over stored embeddings (see above).
  result<std::vector<kb_hit>> search_dense(const std::vector<std::string>& kb_ids,
                                           const std::vector<float>& query_vector, std::size_t top_k);
  /// Reciprocal rank fusion of both (see above); lexical only without a query vector.
  result<std::vector<kb_hit>> search_hybrid(const std::vector<std::string>& kb_ids, std::string_view query,
                                            const std::optional<std::vector<float>>& query_vector,
                                            std::size_t top_k);

 private:
  struct vectors;  ///< one knowledge base's normalised embeddings, as cached (knowledge_base.cpp)

  result<std::shared_ptr<const vectors>> vectors_of(const std::string& kb_id);
  void invalidate(std::string_view kb_id);

  database& db_;
  std::mutex cache_mu_;  ///< guards cache_ and generation_
  std::map<std::string, std::shared_ptr<const vectors>, std::less<>> cache_;
  std::uint64_t generation_ = 0;  ///< bumped by every invalidation: a load that raced one is not cached
};

}  // namespace warden::store
