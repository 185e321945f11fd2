// How far the knowledge base's brute-force vector search goes (issue 25; README "Knowledge
// bases"): a store in a temporary SQLite file with N chunks of 384-dimension float vectors (the
// reference's embedder, bge-small-en-v1.5, has 384), then the median per query of
//   - search_dense (cosine over the cached, normalised vectors; the first query loads them),
//   - search_lexical (FTS5 bm25) and search_hybrid (both, fused by RRF),
// against a baseline in the same process: one plain pass of dot products over the same N×384
// floats in a std::vector (the least a brute-force search can do). Also the ingest time of N.
// Usage: kb_search_bench [N...]   (default 10000 100000)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/knowledge_base.h"

using namespace warden;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_dim = 384;
constexpr std::size_t k_per_doc = 1000;

template <class F>
double median_ms(int n, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
  return ms[ms.size() / 2];
}

std::vector<float> random_vector(std::mt19937& rng) {
  std::normal_distribution<float> d;
  std::vector<float> v(k_dim);
  for (auto& x : v) x = d(rng);
  return v;
}

void run(std::size_t n) {
  const fs::path dir = fs::temp_directory_path() / ("kb_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto db = store::database::open((dir / "kb.db").string());
  if (!db) {
    std::fprintf(stderr, "kb_search_bench: %s\n", db.error().message.c_str());
    std::exit(1);
  }
  store::knowledge_base_store kb(**db);
  (void)kb.create_kb("kb_bench", "bench", "", 0);
  std::mt19937 rng(42);
  std::vector<float> flat;
  flat.reserve(n * k_dim);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t doc = 0; doc * k_per_doc < n; ++doc) {
    std::vector<std::string> chunks;
    std::vector<std::vector<float>> vecs;
    for (std::size_t i = doc * k_per_doc; i < std::min(n, (doc + 1) * k_per_doc); ++i) {
      chunks.push_back("chunk " + std::to_string(i) + " about topic" + std::to_string(i % 997) + " and more words here");
      vecs.push_back(random_vector(rng));
      flat.insert(flat.end(), vecs.back().begin(), vecs.back().end());
    }
    store::kb_document d{"doc_" + std::to_string(doc), "kb_bench", "d", "text", "d", 0, 0, 0};
    if (auto r = kb.add_document(d, chunks, vecs); !r) std::exit(1);
  }
  const double ingest_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto q = random_vector(rng);
  const std::vector<std::string> ids{"kb_bench"};
  const double first = median_ms(1, [&] { (void)kb.search_dense(ids, q, 10); });
  volatile float sink = 0;
  const double base = median_ms(9, [&] {
    float best = -1e9f;
    for (std::size_t i = 0; i < n; ++i) {
      float dot = 0;
      for (std::size_t k = 0; k < k_dim; ++k) dot += flat[i * k_dim + k] * q[k];
      best = std::max(best, dot);
    }
    sink = best;
  });
  const double dense = median_ms(9, [&] { (void)kb.search_dense(ids, q, 10); });
  const double lexical = median_ms(9, [&] { (void)kb.search_lexical(ids, "topic42 words", 10); });
  const double hybrid = median_ms(9, [&] { (void)kb.search_hybrid(ids, "topic42 words", q, 10); });
  std::printf("  %7zu chunks: ingest %.1f s; dense %.1f ms (first, loading %.0f ms), baseline dot pass %.1f ms, "
              "ratio %.2f; lexical %.1f ms; hybrid %.1f ms\n",
              n, ingest_s, dense, first, base, dense / base, lexical, hybrid);
  db->reset();
  fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(static_cast<std::size_t>(std::atol(argv[i])));
  if (sizes.empty()) sizes = {10000, 100000};
  std::printf("kb_search_bench: %zu-dimension vectors, median of 9 queries, top 10\n", k_dim);
  for (auto n : sizes) run(n);
  return 0;
}
