#include "store/knowledge_base.h"

#include <sqlite3.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>
#include <utility>

namespace warden::store {

/// Normalised embeddings of one knowledge base: chunk ids[i] has dims[i] floats at data[offsets[i]].
struct knowledge_base_store::vectors {
  std::vector<std::int64_t> ids;
  std::vector<std::size_t> dims;
  std::vector<std::size_t> offsets;
  std::vector<float> data;
};

namespace {

constexpr std::size_t k_max_query_words = 64;
constexpr std::size_t k_fusion_depth = 30;  // each list's length fused by search_hybrid
constexpr double k_rrf_k = 60.0;

const std::string k_insert_kb =
    "INSERT INTO knowledge_bases (id, name, owner, created_unix_ms) VALUES (?1, ?2, ?3, ?4)";
const std::string k_list_kbs_all =
    "SELECT id, name, owner, created_unix_ms FROM knowledge_bases ORDER BY created_unix_ms, id";
const std::string k_list_kbs_owner =
    "SELECT id, name, owner, created_unix_ms FROM knowledge_bases WHERE owner = ?1 ORDER BY created_unix_ms, id";
const std::string k_get_kb = "SELECT id, name, owner, created_unix_ms FROM knowledge_bases WHERE id = ?1";
const std::string k_remove_kb = "DELETE FROM knowledge_bases WHERE id = ?1";
const std::string k_insert_document =
    "INSERT INTO kb_documents (id, kb_id, name, kind, source, bytes, chunks, created_unix_ms)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
const std::string k_insert_chunk =
    "INSERT INTO kb_chunks (document_id, kb_id, ordinal, text, embedding) VALUES (?1, ?2, ?3, ?4, ?5)";
const std::string k_list_documents =
    "SELECT id, kb_id, name, kind, source, bytes, chunks, created_unix_ms FROM kb_documents WHERE kb_id = ?1"
    " ORDER BY created_unix_ms, id";
const std::string k_remove_document = "DELETE FROM kb_documents WHERE id = ?1 AND kb_id = ?2";
const std::string k_search_lexical =
    "SELECT c.id, c.document_id, d.name, d.source, c.ordinal, c.text, bm25(kb_chunks_fts)"
    " FROM kb_chunks_fts JOIN kb_chunks c ON c.id = kb_chunks_fts.rowid"
    " JOIN kb_documents d ON d.id = c.document_id"
    " WHERE kb_chunks_fts MATCH ?1 AND c.kb_id = ?2 ORDER BY bm25(kb_chunks_fts), c.id LIMIT ?3";
const std::string k_load_vectors =
    "SELECT id, embedding FROM kb_chunks WHERE kb_id = ?1 AND embedding IS NOT NULL ORDER BY id";
const std::string k_get_chunk =
    "SELECT c.id, c.document_id, d.name, d.source, c.ordinal, c.text FROM kb_chunks c"
    " JOIN kb_documents d ON d.id = c.document_id WHERE c.id = ?1";


sqlite3_int64 sql_limit(std::size_t n) {
  return static_cast<sqlite3_int64>(std::min<std::size_t>(n, std::numeric_limits<sqlite3_int64>::max()));
}

/// The ids in order, each once.
std::vector<std::string> unique_ids(const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  std::set<std::string_view> seen;
  for (const auto& id : ids) {
    if (seen.insert(id).second) out.push_back(id);
  }
  return out;
}

/// Runs fn() between BEGIN and COMMIT; rolls back when fn or COMMIT fails.
template <class F>
result<void> in_transaction(connection& c, F&& fn) {
  if (auto b = c.exec("BEGIN IMMEDIATE"); !b) return b;
  result<void> r = std::forward<F>(fn)();
  if (r) r = c.exec("COMMIT");
  if (!r) (void)c.exec("ROLLBACK");
  return r;
}

/// float32 little-endian, whatever the host's byte order.
std::string encode_embedding(const std::vector<float>& v) {
  std::string out(v.size() * 4, '\0');
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto bits = std::bit_cast<std::uint32_t>(v[i]);
    for (std::size_t b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<char>((bits >> (8 * b)) & 0xFFU);
  }
  return out;
}

float decode_float(const unsigned char* p) {
  std::uint32_t bits = 0;
  for (std::size_t b = 0; b < 4; ++b) bits |= static_cast<std::uint32_t>(p[b]) << (8 * b);
  return std::bit_cast<float>(bits);
}

/// Appends v / |v| to `out`, where v[i] = at(i) for i < dim; false (nothing appended) when |v| is
/// zero or not finite.
template <class At>
bool append_normalised(std::size_t dim, At at, std::vector<float>& out) {
  double sum = 0;
  for (std::size_t i = 0; i < dim; ++i) {
    const double x = at(i);
    sum += x * x;
  }
  const double norm = std::sqrt(sum);
  if (!(norm > 0) || !std::isfinite(norm)) return false;
  for (std::size_t i = 0; i < dim; ++i) out.push_back(static_cast<float>(static_cast<double>(at(i)) / norm));
  return true;
}

/// ASCII letters and digits (whatever the locale) and every non-ASCII byte.
bool is_word_byte(unsigned char c) noexcept {
  return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/// The user's words as an FTS5 expression: "w1" OR "w2" OR …; "" when there is no word. A word is
/// a run of ASCII letters and digits and non-ASCII bytes, so it never holds a quote, NUL or
/// operator character, and a quoted word is always a plain string to FTS5.
std::string fts_expression(std::string_view query) {
  std::string out;
  std::size_t words = 0;
  std::size_t i = 0;
  while (i < query.size() && words < k_max_query_words) {
    while (i < query.size() && !is_word_byte(static_cast<unsigned char>(query[i]))) ++i;
    const std::size_t start = i;
    while (i < query.size() && is_word_byte(static_cast<unsigned char>(query[i]))) ++i;
    if (i == start) break;
    if (!out.empty()) out += " OR ";
    out += '"';
    out.append(query.substr(start, i - start));
    out += '"';
    ++words;
  }
  return out;
}

/// Columns 0..5 of k_search_lexical / k_get_chunk.
kb_hit read_hit(sqlite3_stmt* s) {
  kb_hit h;
  h.chunk_id = sqlite3_column_int64(s, 0);
  h.document_id = column_string(s, 1);
  h.document_name = column_string(s, 2);
  h.source = column_string(s, 3);
  h.ordinal = sqlite3_column_int64(s, 4);
  h.text = column_string(s, 5);
  return h;
}

knowledge_base read_kb(sqlite3_stmt* s) {
  return knowledge_base{column_string(s, 0), column_string(s, 1), column_string(s, 2), sqlite3_column_int64(s, 3)};
}

/// Best first, then by chunk id; at most top_k.
void rank(std::vector<kb_hit>& hits, std::size_t top_k) {
  std::sort(hits.begin(), hits.end(), [](const kb_hit& a, const kb_hit& b) {
    return a.score != b.score ? a.score > b.score : a.chunk_id < b.chunk_id;
  });
  if (hits.size() > top_k) hits.resize(top_k);
}

result<void> insert_document(connection& c, const kb_document& m, std::size_t chunks) {
  auto st = c.prepare(k_insert_document);
  if (!st) return st.error();
  sqlite3_stmt* s = st->get();
  const int codes[] = {bind_text(s, 1, m.id),
                       bind_text(s, 2, m.kb_id),
                       bind_text(s, 3, m.name),
                       bind_text(s, 4, m.kind),
                       bind_text(s, 5, m.source),
                       sqlite3_bind_int64(s, 6, m.bytes),
                       sqlite3_bind_int64(s, 7, sql_limit(chunks)),
                       sqlite3_bind_int64(s, 8, m.created_unix_ms)};
  for (int rc : codes) {
    if (rc != SQLITE_OK) return c.fail("binding document " + m.id);
  }
  if (sqlite3_step(s) != SQLITE_DONE) return c.fail("inserting document " + m.id + " into knowledge base " + m.kb_id);
  return {};
}

result<void> insert_chunk(connection& c, const kb_document& m, std::size_t ordinal, std::string_view text,
                          const std::vector<float>* embedding) {
  auto st = c.prepare(k_insert_chunk);
  if (!st) return st.error();
  sqlite3_stmt* s = st->get();
  const std::string blob = embedding != nullptr ? encode_embedding(*embedding) : std::string();
  const int codes[] = {bind_text(s, 1, m.id), bind_text(s, 2, m.kb_id),
                       sqlite3_bind_int64(s, 3, sql_limit(ordinal)), bind_text(s, 4, text),
                       blob.empty() ? sqlite3_bind_null(s, 5)
                                    : sqlite3_bind_blob64(s, 5, blob.data(), blob.size(), SQLITE_STATIC)};
  for (int rc : codes) {
    if (rc != SQLITE_OK) return c.fail("binding a chunk of document " + m.id);
  }
  if (sqlite3_step(s) != SQLITE_DONE) {
    return c.fail("inserting chunk " + std::to_string(ordinal) + " of document " + m.id);
  }
  return {};
}

/// The lexical hits of one knowledge base, scored -bm25.
result<void> search_one_kb(connection& c, const std::string& expression, const std::string& kb_id,
                           std::size_t top_k, std::vector<kb_hit>& out) {
  auto st = c.prepare(k_search_lexical);
  if (!st) return st.error();
  sqlite3_stmt* s = st->get();
  if (bind_text(s, 1, expression) != SQLITE_OK || bind_text(s, 2, kb_id) != SQLITE_OK ||
      sqlite3_bind_int64(s, 3, sql_limit(top_k)) != SQLITE_OK) {
    return c.fail("binding a knowledge base search");
  }
  int rc = SQLITE_OK;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    kb_hit h = read_hit(s);
    h.score = -sqlite3_column_double(s, 6);
    out.push_back(std::move(h));
  }
  if (rc != SQLITE_DONE) return c.fail("searching knowledge base " + kb_id);
  return {};
}

}  // namespace

knowledge_base_store::knowledge_base_store(database& db) : db_(db) {}

result<void> knowledge_base_store::create_kb(std::string_view id, std::string_view name, std::string_view owner,
                                             std::int64_t now_ms) {
  return db_.with_connection([&](connection& c) -> result<void> {
    auto st = c.prepare(k_insert_kb);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    if (bind_text(s, 1, id) != SQLITE_OK || bind_text(s, 2, name) != SQLITE_OK ||
        bind_text(s, 3, owner) != SQLITE_OK || sqlite3_bind_int64(s, 4, now_ms) != SQLITE_OK) {
      return c.fail("binding a knowledge base");
    }
    if (sqlite3_step(s) != SQLITE_DONE) return c.fail("creating knowledge base " + std::string(id));
    return {};
  });
}

result<std::vector<knowledge_base>> knowledge_base_store::list_kbs(const std::optional<std::string>& owner) {
  return db_.with_connection([&](connection& c) -> result<std::vector<knowledge_base>> {
    auto st = c.prepare(owner ? k_list_kbs_owner : k_list_kbs_all);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    if (owner && bind_text(s, 1, *owner) != SQLITE_OK) return c.fail("binding an owner");
    std::vector<knowledge_base> out;
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) out.push_back(read_kb(s));
    if (rc != SQLITE_DONE) return c.fail("listing knowledge bases");
    return out;
  });
}

result<std::optional<knowledge_base>> knowledge_base_store::get_kb(std::string_view id) {
  return db_.with_connection([&](connection& c) -> result<std::optional<knowledge_base>> {
    auto st = c.prepare(k_get_kb);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    if (bind_text(s, 1, id) != SQLITE_OK) return c.fail("binding a knowledge base id");
    const int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) return std::optional<knowledge_base>();
    if (rc != SQLITE_ROW) return c.fail("reading knowledge base " + std::string(id));
    return std::optional<knowledge_base>(read_kb(s));
  });
}

result<bool> knowledge_base_store::remove_kb(std::string_view id) {
  auto removed = db_.with_connection([&](connection& c) -> result<bool> {
    auto st = c.prepare(k_remove_kb);
    if (!st) return st.error();
    if (bind_text(st->get(), 1, id) != SQLITE_OK) return c.fail("binding a knowledge base id");
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("removing knowledge base " + std::string(id));
    return sqlite3_changes(c.handle()) > 0;
  });
  invalidate(id);
  return removed;
}

result<void> knowledge_base_store::add_document(const kb_document& meta, const std::vector<std::string>& chunks,
                                                const std::vector<std::vector<float>>& embeddings) {
  if (!embeddings.empty() && embeddings.size() != chunks.size()) {
    return make_error(errc::invalid_request, "document " + meta.id + " has " + std::to_string(chunks.size()) +
                                                 " chunks but " + std::to_string(embeddings.size()) + " embeddings");
  }
  auto added = db_.with_connection([&](connection& c) -> result<void> {
    return in_transaction(c, [&]() -> result<void> {
      if (auto r = insert_document(c, meta, chunks.size()); !r) return r;
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        const std::vector<float>* e = embeddings.empty() ? nullptr : &embeddings[i];
        if (auto r = insert_chunk(c, meta, i, chunks[i], e); !r) return r;
      }
      return {};
    });
  });
  invalidate(meta.kb_id);
  return added;
}

result<std::vector<kb_document>> knowledge_base_store::list_documents(std::string_view kb_id) {
  return db_.with_connection([&](connection& c) -> result<std::vector<kb_document>> {
    auto st = c.prepare(k_list_documents);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    if (bind_text(s, 1, kb_id) != SQLITE_OK) return c.fail("binding a knowledge base id");
    std::vector<kb_document> out;
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      out.push_back(kb_document{column_string(s, 0), column_string(s, 1), column_string(s, 2), column_string(s, 3),
                                column_string(s, 4), sqlite3_column_int64(s, 5), sqlite3_column_int64(s, 6),
                                sqlite3_column_int64(s, 7)});
    }
    if (rc != SQLITE_DONE) return c.fail("listing the documents of knowledge base " + std::string(kb_id));
    return out;
  });
}

result<bool> knowledge_base_store::remove_document(std::string_view kb_id, std::string_view doc_id) {
  auto removed = db_.with_connection([&](connection& c) -> result<bool> {
    auto st = c.prepare(k_remove_document);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    if (bind_text(s, 1, doc_id) != SQLITE_OK || bind_text(s, 2, kb_id) != SQLITE_OK) {
      return c.fail("binding a document id");
    }
    if (sqlite3_step(s) != SQLITE_DONE) return c.fail("removing document " + std::string(doc_id));
    return sqlite3_changes(c.handle()) > 0;
  });
  invalidate(kb_id);
  return removed;
}

result<std::vector<kb_hit>> knowledge_base_store::search_lexical(const std::vector<std::string>& kb_ids,
                                                                 std::string_view query, std::size_t top_k) {
  const std::string expression = fts_expression(query);
  const std::vector<std::string> ids = unique_ids(kb_ids);
  if (expression.empty() || ids.empty() || top_k == 0) return std::vector<kb_hit>();
  // bm25's statistics cover the whole table, so the scores of separate knowledge bases compare.
  return db_.with_connection([&](connection& c) -> result<std::vector<kb_hit>> {
    std::vector<kb_hit> hits;
    for (const auto& id : ids) {
      if (auto r = search_one_kb(c, expression, id, top_k, hits); !r) return r.error();
    }
    rank(hits, top_k);
    return hits;
  });
}

void knowledge_base_store::invalidate(std::string_view kb_id) {
  std::lock_guard lk(cache_mu_);
  ++generation_;
  if (auto it = cache_.find(kb_id); it != cache_.end()) cache_.erase(it);
}

result<std::shared_ptr<const knowledge_base_store::vectors>> knowledge_base_store::vectors_of(
    const std::string& kb_id) {
  std::uint64_t generation = 0;
  {
    std::lock_guard lk(cache_mu_);
    if (auto it = cache_.find(kb_id); it != cache_.end()) return it->second;
    generation = generation_;
  }
  auto loaded = db_.with_connection([&](connection& c) -> result<std::shared_ptr<const vectors>> {
    auto st = c.prepare(k_load_vectors);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    if (bind_text(s, 1, kb_id) != SQLITE_OK) return c.fail("binding a knowledge base id");
    auto v = std::make_shared<vectors>();
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(s, 1));
      const auto bytes = static_cast<std::size_t>(sqlite3_column_bytes(s, 1));
      if (p == nullptr || bytes == 0 || bytes % 4 != 0) continue;
      const std::size_t offset = v->data.size();
      if (!append_normalised(bytes / 4, [p](std::size_t i) { return decode_float(p + i * 4); }, v->data)) continue;
      v->ids.push_back(sqlite3_column_int64(s, 0));
      v->dims.push_back(bytes / 4);
      v->offsets.push_back(offset);
    }
    if (rc != SQLITE_DONE) return c.fail("reading the embeddings of knowledge base " + kb_id);
    return std::shared_ptr<const vectors>(std::move(v));
  });
  if (!loaded) return loaded;
  std::lock_guard lk(cache_mu_);
  if (generation_ == generation) cache_[kb_id] = *loaded;  // else a change raced the load: do not keep it
  return loaded;
}

result<std::vector<kb_hit>> knowledge_base_store::search_dense(const std::vector<std::string>& kb_ids,
                                                               const std::vector<float>& query_vector,
                                                               std::size_t top_k) {
  std::vector<float> q;
  const std::vector<std::string> ids = unique_ids(kb_ids);
  if (query_vector.empty() || ids.empty() || top_k == 0) return std::vector<kb_hit>();
  if (!append_normalised(query_vector.size(), [&](std::size_t i) { return query_vector[i]; }, q)) {
    return std::vector<kb_hit>();
  }
  std::vector<std::pair<double, std::int64_t>> scored;  // (cosine, chunk id)
  for (const auto& id : ids) {
    auto v = vectors_of(id);
    if (!v) return v.error();
    const vectors& vs = **v;
    for (std::size_t i = 0; i < vs.ids.size(); ++i) {
      if (vs.dims[i] != q.size()) continue;
      const float* d = vs.data.data() + vs.offsets[i];
      float dot = 0;  // float: 6x faster than widening each product to double (bench/kb_search_bench.cpp)
      for (std::size_t j = 0; j < q.size(); ++j) dot += d[j] * q[j];
      scored.emplace_back(static_cast<double>(dot), vs.ids[i]);
    }
  }
  const auto better = [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; };
  const std::size_t n = std::min(top_k, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(n), scored.end(), better);
  scored.resize(n);
  return db_.with_connection([&](connection& c) -> result<std::vector<kb_hit>> {
    std::vector<kb_hit> hits;
    for (const auto& [score, chunk_id] : scored) {
      auto st = c.prepare(k_get_chunk);
      if (!st) return st.error();
      if (sqlite3_bind_int64(st->get(), 1, chunk_id) != SQLITE_OK) return c.fail("binding a chunk id");
      const int rc = sqlite3_step(st->get());
      if (rc == SQLITE_DONE) continue;  // removed since the vectors were read
      if (rc != SQLITE_ROW) return c.fail("reading chunk " + std::to_string(chunk_id));
      hits.push_back(read_hit(st->get()));
      hits.back().score = score;
    }
    return hits;
  });
}

result<std::vector<kb_hit>> knowledge_base_store::search_hybrid(const std::vector<std::string>& kb_ids,
                                                                std::string_view query,
                                                                const std::optional<std::vector<float>>& query_vector,
                                                                std::size_t top_k) {
  if (!query_vector) return search_lexical(kb_ids, query, top_k);
  if (top_k == 0) return std::vector<kb_hit>();
  const std::size_t depth = std::max(k_fusion_depth, top_k);
  auto lexical = search_lexical(kb_ids, query, depth);
  if (!lexical) return lexical;
  auto dense = search_dense(kb_ids, *query_vector, depth);
  if (!dense) return dense;
  std::vector<kb_hit> fused;
  std::unordered_map<std::int64_t, std::size_t> at;  // chunk id → index in fused
  for (auto* list : {&*lexical, &*dense}) {
    for (std::size_t r = 0; r < list->size(); ++r) {
      kb_hit& h = (*list)[r];
      const double contribution = 1.0 / (k_rrf_k + static_cast<double>(r + 1));
      auto [it, fresh] = at.emplace(h.chunk_id, fused.size());
      if (fresh) {
        h.score = 0;
        fused.push_back(std::move(h));
      }
      fused[it->second].score += contribution;
    }
  }
  rank(fused, top_k);
  return fused;
}

}  // namespace warden::store
