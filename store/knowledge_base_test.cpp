#include "store/knowledge_base.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "store/database.h"
#include "store/testing/database.h"

namespace warden::store {
namespace {

using testing::must_open_memory;
using testing::query_text;

kb_document doc(const std::string& id, const std::string& kb_id, const std::string& name = "") {
  kb_document d;
  d.id = id;
  d.kb_id = kb_id;
  d.name = name.empty() ? id + ".md" : name;
  d.kind = "markdown";
  d.source = "/uploads/" + d.name;
  d.bytes = 1234;
  d.created_unix_ms = 1700000000000;
  return d;
}

std::vector<std::string> chunk_ids(const std::vector<kb_hit>& hits) {
  std::vector<std::string> out;
  for (const auto& h : hits) out.push_back(h.document_id + "#" + std::to_string(h.ordinal));
  return out;
}

class KnowledgeBase : public ::testing::Test {
 protected:
  void SetUp() override {
    db = must_open_memory();
    ASSERT_NE(db, nullptr);
    kb.emplace(*db);
    ASSERT_TRUE(kb->create_kb("kb_a", "Alpha", "alice", 100).ok());
    ASSERT_TRUE(kb->create_kb("kb_b", "Beta", "bob", 200).ok());
  }
  std::string count(const std::string& table) { return query_text(*db, "SELECT COUNT(*) FROM " + table); }
  /// Three documents in kb_a: only "cats" is about cats.
  void add_three() {
    ASSERT_TRUE(kb->add_document(doc("d_dogs", "kb_a"),
                                 {"Dogs are loyal companions.", "A dog barks at the mail carrier."}, {})
                    .ok());
    ASSERT_TRUE(kb->add_document(doc("d_cats", "kb_a"),
                                 {"Gardening in spring.", "Cats purr when content; a cat purrs loudly, cats nap."}, {})
                    .ok());
    ASSERT_TRUE(kb->add_document(doc("d_fish", "kb_a"), {"Fish swim in the sea. One cat watched them."}, {}).ok());
  }

  std::unique_ptr<database> db;
  std::optional<knowledge_base_store> kb;
};

TEST(KnowledgeBaseSchema, Fts5IsAvailable) {
  auto db = must_open_memory();
  ASSERT_NE(db, nullptr);
  EXPECT_GE(*db->schema_version(), 8);
  EXPECT_EQ(query_text(*db, "SELECT sqlite_compileoption_used('ENABLE_FTS5')"), "1");
  ASSERT_TRUE(db->with_connection([](connection& c) {
                  return c.exec("CREATE VIRTUAL TABLE temp.probe USING fts5(x, tokenize='unicode61 remove_diacritics 2');"
                                "INSERT INTO temp.probe(x) VALUES ('Crème brûlée recipe');");
                }).ok());
  EXPECT_EQ(query_text(*db, "SELECT x FROM temp.probe WHERE probe MATCH 'creme'"), "Crème brûlée recipe");
}

TEST_F(KnowledgeBase, CreateListGetRemove) {
  auto all = kb->list_kbs();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, "kb_a");
  EXPECT_EQ((*all)[0].name, "Alpha");
  EXPECT_EQ((*all)[0].owner, "alice");
  EXPECT_EQ((*all)[0].created_unix_ms, 100);
  EXPECT_EQ((*all)[1].id, "kb_b");
  auto bobs = kb->list_kbs(std::string("bob"));
  ASSERT_TRUE(bobs.ok());
  ASSERT_EQ(bobs->size(), 1u);
  EXPECT_EQ((*bobs)[0].id, "kb_b");
  EXPECT_TRUE(kb->list_kbs(std::string(""))->empty());

  EXPECT_FALSE(kb->create_kb("kb_a", "again", "", 1).ok());  // duplicate id
  auto got = kb->get_kb("kb_b");
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->name, "Beta");
  EXPECT_FALSE(kb->get_kb("nope")->has_value());

  EXPECT_TRUE(*kb->remove_kb("kb_a"));
  EXPECT_FALSE(*kb->remove_kb("kb_a"));
  EXPECT_FALSE(kb->get_kb("kb_a")->has_value());
  EXPECT_EQ(kb->list_kbs()->size(), 1u);
}

TEST_F(KnowledgeBase, DocumentsListAndRemove) {
  add_three();
  auto docs = kb->list_documents("kb_a");
  ASSERT_TRUE(docs.ok());
  ASSERT_EQ(docs->size(), 3u);
  EXPECT_EQ((*docs)[0].id, "d_cats");  // same time: by id
  EXPECT_EQ((*docs)[0].chunks, 2);
  EXPECT_EQ((*docs)[0].kind, "markdown");
  EXPECT_EQ((*docs)[0].source, "/uploads/d_cats.md");
  EXPECT_EQ((*docs)[0].bytes, 1234);
  EXPECT_TRUE(kb->list_documents("kb_b")->empty());

  EXPECT_FALSE(*kb->remove_document("kb_b", "d_cats"));  // another knowledge base's document
  EXPECT_TRUE(*kb->remove_document("kb_a", "d_cats"));
  EXPECT_FALSE(*kb->remove_document("kb_a", "d_cats"));
  EXPECT_EQ(count("kb_chunks"), "3");
  EXPECT_TRUE(kb->search_lexical({"kb_a"}, "purr", 10)->empty());
  EXPECT_FALSE(kb->add_document(doc("d_x", "kb_missing"), {"text"}, {}).ok());  // foreign key
}

TEST_F(KnowledgeBase, RemoveKbCascades) {
  add_three();
  ASSERT_TRUE(kb->add_document(doc("d_b", "kb_b"), {"cats in beta"}, {{1, 0}}).ok());
  EXPECT_EQ(count("kb_chunks"), "6");
  EXPECT_TRUE(*kb->remove_kb("kb_a"));
  EXPECT_EQ(count("kb_documents"), "1");
  EXPECT_EQ(count("kb_chunks"), "1");
  // the FTS index holds only the remaining chunk (its integrity check compares with kb_chunks)
  EXPECT_TRUE(db->with_connection([](connection& c) {
                  return c.exec("INSERT INTO kb_chunks_fts(kb_chunks_fts, rank) VALUES ('integrity-check', 1)");
                }).ok());
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM kb_chunks_fts WHERE kb_chunks_fts MATCH 'cats'"), "1");
  auto hits = kb->search_lexical({"kb_a", "kb_b"}, "cats", 10);
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].document_id, "d_b");
}

TEST_F(KnowledgeBase, AddDocumentIsAllOrNothing) {
  auto mismatch = kb->add_document(doc("d1", "kb_a"), {"one", "two", "three"}, {{1, 2}, {3, 4}});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().code, errc::invalid_request);
  EXPECT_EQ(count("kb_documents"), "0");
  EXPECT_EQ(count("kb_chunks"), "0");

  ASSERT_TRUE(kb->add_document(doc("d1", "kb_a"), {"first"}, {}).ok());
  // a duplicate document id fails after nothing else was written; no chunk of it stays
  EXPECT_FALSE(kb->add_document(doc("d1", "kb_a"), {"second", "third"}, {}).ok());
  EXPECT_EQ(count("kb_documents"), "1");
  EXPECT_EQ(count("kb_chunks"), "1");
  EXPECT_TRUE(kb->search_lexical({"kb_a"}, "second third", 10)->empty());
  // the connection is usable again (the transaction was rolled back)
  EXPECT_TRUE(kb->add_document(doc("d2", "kb_a"), {"second"}, {}).ok());
  EXPECT_EQ(kb->search_lexical({"kb_a"}, "second", 10)->size(), 1u);
}

TEST_F(KnowledgeBase, LexicalRanksTheRightChunkFirst) {
  add_three();
  auto hits = kb->search_lexical({"kb_a"}, "cats purr", 10);
  ASSERT_TRUE(hits.ok());
  ASSERT_GE(hits->size(), 1u);
  const kb_hit& top = (*hits)[0];
  EXPECT_EQ(top.document_id, "d_cats");
  EXPECT_EQ(top.document_name, "d_cats.md");
  EXPECT_EQ(top.source, "/uploads/d_cats.md");
  EXPECT_EQ(top.ordinal, 1);
  EXPECT_EQ(top.text, "Cats purr when content; a cat purrs loudly, cats nap.");
  EXPECT_GT(top.score, 0);
  for (std::size_t i = 1; i < hits->size(); ++i) EXPECT_GE((*hits)[i - 1].score, (*hits)[i].score);
  EXPECT_EQ(kb->search_lexical({"kb_a"}, "cat", 10)->size(), 2u);  // "cat" itself, not "cats"
  EXPECT_EQ(kb->search_lexical({"kb_a"}, "cats purr", 1)->size(), 1u);
  EXPECT_TRUE(kb->search_lexical({"kb_a"}, "cats", 0)->empty());
  EXPECT_TRUE(kb->search_lexical({}, "cats", 10)->empty());
  EXPECT_TRUE(kb->search_lexical({"kb_a"}, "zebra", 10)->empty());
}

TEST_F(KnowledgeBase, HostileQueriesNeverFail) {
  add_three();
  ASSERT_TRUE(kb->add_document(doc("d_u", "kb_a"), {"Crème brûlée and 日本語 text"}, {}).ok());
  const std::vector<std::string> queries = {
      "\"", "\"\"", "AND OR NOT", "AND", "*", "cat*", "NEAR(", "NEAR(cat dog, 2)", ")", "(", "text:cat", "^cat",
      "-cat", "+", "'", "a\"b", "cat AND", "{text}: dog", "\xFF\xFE", "— … “”", "😀", "",
      "   ", std::string("cat\0dog", 7), "日本語", "creme", "OR OR OR"};
  for (const auto& q : queries) {
    auto r = kb->search_lexical({"kb_a"}, q, 5);
    EXPECT_TRUE(r.ok()) << "query [" << q << "]: " << (r.ok() ? "" : r.error().message);
  }
  EXPECT_EQ(kb->search_lexical({"kb_a"}, "creme BRULEE", 5)->at(0).document_id, "d_u");  // diacritics removed
  EXPECT_EQ(kb->search_lexical({"kb_a"}, "日本語", 5)->at(0).document_id, "d_u");
  EXPECT_EQ(kb->search_lexical({"kb_a"}, "\"dogs\" AND", 5)->at(0).document_id, "d_dogs");
  EXPECT_TRUE(kb->search_lexical({"kb_a"}, "", 5)->empty());
  EXPECT_TRUE(kb->search_lexical({"kb_a"}, "*** ()", 5)->empty());
}

TEST_F(KnowledgeBase, KbIdsIsolate) {
  add_three();
  ASSERT_TRUE(kb->add_document(doc("d_b", "kb_b"), {"Cats purr in beta too, cats cats."}, {{0, 1}}).ok());
  ASSERT_TRUE(kb->add_document(doc("d_a", "kb_a"), {"vector only"}, {{0, 1}}).ok());
  auto only_b = kb->search_lexical({"kb_b"}, "cats", 10);
  ASSERT_EQ(only_b->size(), 1u);
  EXPECT_EQ((*only_b)[0].document_id, "d_b");
  auto only_a = kb->search_lexical({"kb_a"}, "cats", 10);
  ASSERT_EQ(only_a->size(), 1u);
  for (const auto& h : *only_a) EXPECT_NE(h.document_id, "d_b");
  EXPECT_EQ(kb->search_lexical({"kb_a", "kb_b", "kb_a"}, "cats", 10)->size(), 2u);  // duplicates ignored
  EXPECT_TRUE(kb->search_lexical({"kb_other"}, "cats", 10)->empty());
  auto dense_b = kb->search_dense({"kb_b"}, {0, 1}, 10);
  ASSERT_EQ(dense_b->size(), 1u);
  EXPECT_EQ((*dense_b)[0].document_id, "d_b");
  EXPECT_EQ(kb->search_dense({"kb_a", "kb_b"}, {0, 1}, 10)->size(), 2u);
}

TEST_F(KnowledgeBase, DenseRanksByCosine) {
  ASSERT_TRUE(kb->add_document(doc("d", "kb_a"), {"east", "north", "northeast", "none", "west", "3d", "zero"},
                               {{10, 0}, {0, 3}, {1, 1}, {}, {-2, 0}, {1, 0, 0}, {0, 0}})
                  .ok());
  auto hits = kb->search_dense({"kb_a"}, {2, 0.5f}, 10);
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(chunk_ids(*hits), (std::vector<std::string>{"d#0", "d#2", "d#1", "d#4"}));  // other dims / none skipped
  EXPECT_NEAR((*hits)[0].score, 2 / std::sqrt(4.25), 1e-6);
  EXPECT_NEAR((*hits)[3].score, -2 / std::sqrt(4.25), 1e-6);
  EXPECT_EQ((*hits)[1].text, "northeast");
  EXPECT_EQ(kb->search_dense({"kb_a"}, {2, 0.5f}, 2)->size(), 2u);
  EXPECT_EQ(chunk_ids(*kb->search_dense({"kb_a"}, {0, 0, 5}, 10)), (std::vector<std::string>{"d#5"}));
  EXPECT_TRUE(kb->search_dense({"kb_a"}, {0, 0}, 10)->empty());  // zero query
  EXPECT_TRUE(kb->search_dense({"kb_a"}, {}, 10)->empty());
  EXPECT_TRUE(kb->search_dense({"kb_a"}, {1, 0}, 0)->empty());
  // stored as float32 little-endian: 2 dimensions → 8 bytes
  EXPECT_EQ(query_text(*db, "SELECT length(embedding) FROM kb_chunks WHERE ordinal = 0"), "8");
  EXPECT_EQ(query_text(*db, "SELECT hex(embedding) FROM kb_chunks WHERE ordinal = 0"), "0000204100000000");
  EXPECT_EQ(query_text(*db, "SELECT embedding IS NULL FROM kb_chunks WHERE ordinal = 3"), "1");
}

TEST_F(KnowledgeBase, CacheIsInvalidatedByAddAndRemove) {
  ASSERT_TRUE(kb->add_document(doc("d1", "kb_a"), {"one"}, {{1, 0}}).ok());
  EXPECT_EQ(kb->search_dense({"kb_a"}, {1, 0}, 10)->size(), 1u);  // loads the cache
  ASSERT_TRUE(kb->add_document(doc("d2", "kb_a"), {"two"}, {{1, 0.1f}}).ok());
  EXPECT_EQ(kb->search_dense({"kb_a"}, {1, 0}, 10)->size(), 2u);
  ASSERT_TRUE(*kb->remove_document("kb_a", "d1"));
  auto after = kb->search_dense({"kb_a"}, {1, 0}, 10);
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].document_id, "d2");
  ASSERT_TRUE(*kb->remove_kb("kb_a"));
  EXPECT_TRUE(kb->search_dense({"kb_a"}, {1, 0}, 10)->empty());
  // a new knowledge base with the same id starts empty
  ASSERT_TRUE(kb->create_kb("kb_a", "again", "", 1).ok());
  EXPECT_TRUE(kb->search_dense({"kb_a"}, {1, 0}, 10)->empty());
}

TEST_F(KnowledgeBase, HybridFusesRanks) {
  // lexical: c0 (more "apple"), c1; dense: c1, c2, c3, c0. Fused: c1 (2nd and 1st), then c0
  // (1st and 4th), then c2 and c3 (dense only).
  ASSERT_TRUE(kb->add_document(doc("d", "kb_a"), {"apple apple apple pie", "apple tart", "banana bread", "kiwi"},
                               {{-1, 0}, {1, 0}, {0.8f, 0.6f}, {0, 1}})
                  .ok());
  auto lexical = kb->search_lexical({"kb_a"}, "apple", 10);
  ASSERT_EQ(chunk_ids(*lexical), (std::vector<std::string>{"d#0", "d#1"}));
  auto dense = kb->search_dense({"kb_a"}, {1, 0}, 10);
  ASSERT_EQ(chunk_ids(*dense), (std::vector<std::string>{"d#1", "d#2", "d#3", "d#0"}));

  auto hybrid = kb->search_hybrid({"kb_a"}, "apple", std::vector<float>{1, 0}, 10);
  ASSERT_TRUE(hybrid.ok());
  ASSERT_EQ(chunk_ids(*hybrid), (std::vector<std::string>{"d#1", "d#0", "d#2", "d#3"}));
  EXPECT_NEAR((*hybrid)[0].score, 1.0 / 62 + 1.0 / 61, 1e-12);
  EXPECT_NEAR((*hybrid)[1].score, 1.0 / 61 + 1.0 / 64, 1e-12);
  EXPECT_NEAR((*hybrid)[2].score, 1.0 / 62, 1e-12);
  EXPECT_NEAR((*hybrid)[3].score, 1.0 / 63, 1e-12);
  EXPECT_EQ(kb->search_hybrid({"kb_a"}, "apple", std::vector<float>{1, 0}, 2)->size(), 2u);

  auto plain = kb->search_hybrid({"kb_a"}, "apple", std::nullopt, 10);  // no vector: lexical
  ASSERT_EQ(chunk_ids(*plain), chunk_ids(*lexical));
  EXPECT_DOUBLE_EQ((*plain)[0].score, (*lexical)[0].score);
  // a query with no words still fuses the dense list
  EXPECT_EQ(chunk_ids(*kb->search_hybrid({"kb_a"}, "\"*", std::vector<float>{1, 0}, 1)),
            (std::vector<std::string>{"d#1"}));
}

TEST_F(KnowledgeBase, ConcurrentSearchesAndChanges) {
  ASSERT_TRUE(kb->add_document(doc("d0", "kb_a"), {"seed"}, {{1, 0}}).ok());
  std::atomic<bool> failed{false};
  std::thread writer([&] {
    for (int i = 1; i <= 50; ++i) {
      std::string id = "d";
      id += std::to_string(i);
      if (!kb->add_document(doc(id, "kb_a"), {"text " + id}, {{1, static_cast<float>(i)}}).ok()) failed = true;
      if (i % 2 == 0 && !kb->remove_document("kb_a", id).ok()) failed = true;
    }
  });
  std::thread reader([&] {
    for (int i = 0; i < 200; ++i) {
      if (!kb->search_dense({"kb_a"}, {1, 0}, 5).ok()) failed = true;
      if (!kb->search_hybrid({"kb_a"}, "text", std::vector<float>{1, 0}, 5).ok()) failed = true;
    }
  });
  writer.join();
  reader.join();
  EXPECT_FALSE(failed);
  EXPECT_EQ(kb->search_dense({"kb_a"}, {1, 0}, 100)->size(), 26u);  // d0 and the 25 odd ones: the cache is fresh
}

}  // namespace
}  // namespace warden::store

namespace warden::store {
namespace {

// A search after the searched document was removed (the FTS rows go with it) finds nothing and
// leaves the connection usable: the route once crashed here.
TEST(KnowledgeBaseRemoval, SearchAfterRemovingTheOnlyDocument) {
  auto db = testing::must_open_memory();
  knowledge_base_store kb(*db);
  ASSERT_TRUE(kb.create_kb("kb_t", "t", "", 1).ok());
  kb_document d;
  d.id = "doc_z";
  d.kb_id = "kb_t";
  d.name = "a.md";
  d.kind = "markdown";
  d.source = "a.md";
  ASSERT_TRUE(kb.add_document(d, {"zebrafish words"}, {}).ok());
  auto before = kb.search_lexical({"kb_t"}, "zebrafish", 5);
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->size(), 1u);
  auto removed = kb.remove_document("kb_t", "doc_z");
  ASSERT_TRUE(removed.ok() && *removed);
  auto after = kb.search_lexical({"kb_t"}, "zebrafish", 5);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_TRUE(after->empty());
  auto hybrid = kb.search_hybrid({"kb_t"}, "zebrafish", std::nullopt, 5);
  ASSERT_TRUE(hybrid.ok());
  EXPECT_TRUE(hybrid->empty());
}

}  // namespace
}  // namespace warden::store
