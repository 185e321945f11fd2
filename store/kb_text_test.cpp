#include "store/kb_text.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace warden::store {
namespace {

/// Whether `s` is well-formed UTF-8 (no cut sequence at either end).
bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

std::string words(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += "word" + std::to_string(i) + " ";
  return s;
}

TEST(ChunkText, EmptyAndWhitespaceGiveNoChunks) {
  EXPECT_TRUE(chunk_text("").empty());
  EXPECT_TRUE(chunk_text(" \n\t\r\n  \f\v").empty());
  EXPECT_TRUE(chunk_text(std::string(10000, ' '), 100, 10).empty());
}

TEST(ChunkText, ShortTextIsOneTrimmedChunk) {
  const auto c = chunk_text("  \n hello world.\n\n ");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0], "hello world.");
}

TEST(ChunkText, PrefersParagraphThenSentenceThenSpace) {
  // window 100, last fifth = bytes 80..100
  const std::string para = std::string(85, 'a') + "\n\nbb. cc " + std::string(200, 'd');
  EXPECT_EQ(chunk_text(para, 100, 0)[0], std::string(85, 'a'));
  const std::string sentence = std::string(82, 'a') + ". bb cc dd " + std::string(200, 'e');
  EXPECT_EQ(chunk_text(sentence, 100, 0)[0], std::string(82, 'a') + ".");
  const std::string space = std::string(90, 'a') + " b " + std::string(200, 'c');
  EXPECT_EQ(chunk_text(space, 100, 0)[0], std::string(90, 'a') + " b");
  // a paragraph break before the last fifth is not used: the sentence end inside it is
  const std::string early = std::string(30, 'a') + "\n\n" + std::string(55, 'b') + ". " + std::string(200, 'c');
  EXPECT_EQ(chunk_text(early, 100, 0)[0], std::string(30, 'a') + "\n\n" + std::string(55, 'b') + ".");
}

TEST(ChunkText, HardCutWithoutBreaks) {
  const auto c = chunk_text(std::string(1000, 'x'), 100, 0);
  ASSERT_EQ(c.size(), 10u);
  for (const auto& s : c) EXPECT_EQ(s.size(), 100u);
}

TEST(ChunkText, NeverSplitsUtf8) {
  std::string text;
  for (int i = 0; i < 500; ++i) text += (i % 3 == 0) ? "\xC3\xA9" : (i % 3 == 1) ? "\xE2\x82\xAC" : "\xF0\x9F\x98\x80";
  for (std::size_t size : {1u, 2u, 3u, 5u, 7u, 101u, 1000u}) {
    for (std::size_t overlap : {0u, 1u, 3u, 50u}) {
      const auto c = chunk_text(text, size, overlap);
      ASSERT_FALSE(c.empty());
      for (const auto& s : c) {
        EXPECT_TRUE(valid_utf8(s)) << "size " << size << " overlap " << overlap;
        EXPECT_LE(s.size(), size + 3);
      }
    }
  }
}

TEST(ChunkText, ConsecutiveChunksOverlap) {
  const std::string text = words(2000);
  const auto c = chunk_text(text, 2000, 256);
  ASSERT_GT(c.size(), 5u);
  std::size_t prev_end = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const std::size_t at = text.find(c[i]);
    ASSERT_NE(at, std::string::npos) << "chunk " << i << " is a piece of the text";
    EXPECT_LE(c[i].size(), 2000u);
    if (i > 0) {
      EXPECT_LT(at, prev_end) << "chunk " << i << " starts inside the previous one";
      EXPECT_GE(prev_end - at, 256u - 12u);  // about the overlap (moved to a word start)
      EXPECT_LE(prev_end - at, 256u);
    } else {
      EXPECT_EQ(at, 0u);
    }
    EXPECT_EQ(c[i].front(), 'w');  // starts at a word
    prev_end = at + c[i].size();
  }
  EXPECT_EQ(prev_end, text.size() - 1);  // the last chunk reaches the end (less the trailing space)
}

TEST(ChunkText, OverlapIsCappedSoChunksMoveForward) {
  const auto c = chunk_text(std::string(1000, 'x'), 100, 5000);
  EXPECT_GE(c.size(), 10u);
  EXPECT_LE(c.size(), 21u);
}

TEST(ChunkText, FiveMegabytesIsLinear) {
  std::string prose_text;
  const std::string sentence = "The quick brown fox jumps over the lazy dog near the river bank. ";
  while (prose_text.size() < 5u * 1024 * 1024) {
    prose_text += sentence;
    if (prose_text.size() % 7 == 0) prose_text += "\n\n";
  }
  const std::string& prose = prose_text;
  const std::string solid(5u * 1024 * 1024, 'z');  // no break anywhere: the worst case for the search
  for (const std::string* text : {&prose, &solid}) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto c = chunk_text(*text);
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("chunk_text: %zu bytes -> %zu chunks in %.1f ms\n", text->size(), c.size(), ms);
    EXPECT_GT(c.size(), text->size() / 2000);
    EXPECT_LT(c.size(), text->size() / 1300);
    for (const auto& s : c) {
      EXPECT_FALSE(s.empty());
      EXPECT_LE(s.size(), 2000u);
    }
  }
}

}  // namespace
}  // namespace warden::store
