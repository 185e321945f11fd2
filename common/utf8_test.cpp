#include <gtest/gtest.h>

#include <string>

#include "common/utf8.h"

namespace warden {
namespace {

const std::string k_fffd = "\xEF\xBF\xBD";

TEST(Utf8Decode, CodePointsAndLengths) {
  struct row {
    std::string bytes;
    char32_t cp;
  };
  const row rows[] = {{"A", U'A'},
                      {"\x7F", U'\x7F'},
                      {"\xC2\x80", U'\x80'},
                      {"\xDF\xBF", U'\x7FF'},
                      {"\xE0\xA0\x80", U'\x800'},
                      {"\xED\x9F\xBF", U'\xD7FF'},
                      {"\xEE\x80\x80", U'\xE000'},
                      {"\xEF\xBF\xBF", U'\xFFFF'},
                      {"\xF0\x90\x80\x80", U'\x10000'},
                      {"\xF4\x8F\xBF\xBF", U'\x10FFFF'}};
  for (const auto& r : rows) {
    const auto q = decode_utf8(r.bytes, 0);
    EXPECT_EQ(q.state, utf8_sequence::status::valid) << r.bytes;
    EXPECT_EQ(q.length, r.bytes.size()) << r.bytes;
    EXPECT_EQ(q.code_point, r.cp) << r.bytes;
    EXPECT_TRUE(is_valid_utf8(r.bytes)) << r.bytes;
  }
}

TEST(Utf8Decode, IllFormedGivesTheMaximalSubpart) {
  struct row {
    std::string bytes;
    utf8_sequence::status state;
    std::size_t length;
  };
  using st = utf8_sequence::status;
  const row rows[] = {
      {"\x80", st::invalid, 1},               // stray continuation
      {"\xC0\xAF", st::invalid, 1},           // overlong lead
      {"\xC1\xBF", st::invalid, 1},           // overlong lead
      {"\xE0\x80\xAF", st::invalid, 1},       // overlong 3-byte '/'
      {"\xF0\x80\x80\xAF", st::invalid, 1},   // overlong 4-byte '/'
      {"\xED\xA0\x80", st::invalid, 1},       // surrogate U+D800
      {"\xED\xBF\xBF", st::invalid, 1},       // surrogate U+DFFF
      {"\xF4\x90\x80\x80", st::invalid, 1},   // U+110000
      {"\xF5\x80\x80\x80", st::invalid, 1},   // lead above F4
      {"\xFF", st::invalid, 1},
      {"\xE2\x82" "A", st::invalid, 2},       // cut by a non-continuation
      {"\xF0\x9F\x98" "A", st::invalid, 3},
      {"\xC3", st::truncated, 1},             // cut by the end
      {"\xE2\x82", st::truncated, 2},
      {"\xF0\x9F\x98", st::truncated, 3},
  };
  for (const auto& r : rows) {
    const auto q = decode_utf8(r.bytes, 0);
    EXPECT_EQ(q.state, r.state) << r.bytes;
    EXPECT_EQ(q.length, r.length) << r.bytes;
    EXPECT_EQ(q.code_point, 0u) << r.bytes;
    EXPECT_FALSE(is_valid_utf8(r.bytes)) << r.bytes;
  }
}

TEST(Utf8Valid, ValidatesStrictly) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xf0\x9f\x9a\x80"));
  EXPECT_TRUE(is_valid_utf8(std::string("nul\0inside", 10)));
  EXPECT_FALSE(is_valid_utf8("\xff\xfe"));
  EXPECT_FALSE(is_valid_utf8("ok\xc3"));                // truncated at the end
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));              // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));          // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));      // > U+10FFFF
  EXPECT_FALSE(is_valid_utf8("a\x80" "b"));             // lone continuation in the middle
}

TEST(Utf8Repair, ReplacesEachMaximalSubpartOnce) {
  // Cases of tools/tools_test.cpp (TextUtil.Utf8RepairCountAndPrefix).
  EXPECT_EQ(to_valid_utf8("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(to_valid_utf8("a\xFF" "b"), "a" + k_fffd + "b");
  EXPECT_EQ(to_valid_utf8("\xED\xA0\x80"), k_fffd + k_fffd + k_fffd);  // surrogate: 3 subparts
  // Unicode §3.9, Table 3-8 example: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
  EXPECT_EQ(to_valid_utf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
            "a" + k_fffd + k_fffd + k_fffd + "b" + k_fffd + "c" + k_fffd + k_fffd + "d");
  EXPECT_EQ(to_valid_utf8("\xC0\xAF"), k_fffd + k_fffd);                // overlong
  EXPECT_EQ(to_valid_utf8("\xF4\x90\x80\x80"), k_fffd + k_fffd + k_fffd + k_fffd);
  EXPECT_EQ(to_valid_utf8("end\xF0\x9F\x98"), "end" + k_fffd);          // truncated tail: one
  EXPECT_EQ(to_valid_utf8("\xE2\x82" "A"), k_fffd + "A");
  EXPECT_EQ(to_valid_utf8(""), "");
  const std::string good = "\xF0\x9F\x9A\x80 \xE2\x82\xAC \xC3\xA9 x";
  EXPECT_EQ(to_valid_utf8(good), good);
}

TEST(Utf8Repair, OutputIsAlwaysValid) {
  // Every 1..3-byte string over a set of interesting bytes.
  const unsigned char interesting[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1,
                                       0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  std::string s;
  auto check = [&] {
    const std::string fixed = to_valid_utf8(s);
    ASSERT_TRUE(is_valid_utf8(fixed)) << s;
    EXPECT_EQ(utf8_length(s), utf8_length(fixed)) << s;
    if (is_valid_utf8(s)) {
      EXPECT_EQ(fixed, s);
    }
  };
  for (unsigned char a : interesting) {
    s.assign(1, static_cast<char>(a));
    check();
    for (unsigned char b : interesting) {
      s.assign({static_cast<char>(a), static_cast<char>(b)});
      check();
      for (unsigned char c : interesting) {
        s.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
        check();
      }
    }
  }
}

TEST(Utf8Tail, HoldsBackOnlyAWellFormedPrefixAtTheEnd) {
  EXPECT_EQ(incomplete_utf8_tail("ab\xE2\x82"), 2u);
  EXPECT_EQ(incomplete_utf8_tail("ab\xE2\x82\xAC"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("ab\xFF"), 0u);
  EXPECT_EQ(incomplete_utf8_tail(""), 0u);
  EXPECT_EQ(incomplete_utf8_tail("\xC3"), 1u);
  EXPECT_EQ(incomplete_utf8_tail("x\xF0\x9F\x98"), 3u);
  EXPECT_EQ(incomplete_utf8_tail("\xF0\x9F\x98\x80"), 0u);  // complete 4-byte sequence
  EXPECT_EQ(incomplete_utf8_tail("x\xE0\x80"), 0u);         // overlong start: never completes
  EXPECT_EQ(incomplete_utf8_tail("x\xED\xA0"), 0u);         // surrogate start: never completes
  EXPECT_EQ(incomplete_utf8_tail("x\xF4\x90"), 0u);         // > U+10FFFF: never completes
  EXPECT_EQ(incomplete_utf8_tail("x\xC0"), 0u);             // C0 never starts a sequence
  // Split a valid text at every byte: the head minus its tail is always valid, and the held-back
  // tail plus the rest is too.
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x9A\x80z";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    const std::string head = text.substr(0, cut);
    const std::size_t hold = incomplete_utf8_tail(head);
    EXPECT_TRUE(is_valid_utf8(head.substr(0, head.size() - hold))) << cut;
    EXPECT_TRUE(is_valid_utf8(head.substr(head.size() - hold) + text.substr(cut))) << cut;
  }
}

TEST(Utf8Count, LengthAndPrefix) {
  EXPECT_EQ(utf8_length(""), 0u);
  EXPECT_EQ(utf8_length("\xE2\x82\xAC\xE2\x82\xAC" "a"), 3u);
  EXPECT_EQ(utf8_length("\xF0\x9F\x9A\x80\xC3\xA9"), 2u);
  EXPECT_EQ(utf8_prefix("\xE2\x82\xAC\xE2\x82\xAC" "a", 1), "\xE2\x82\xAC");
  EXPECT_EQ(utf8_prefix("\xE2\x82\xAC\xE2\x82\xAC" "a", 0), "");
  EXPECT_EQ(utf8_prefix("\xE2\x82\xAC\xE2\x82\xAC" "a", 3), "\xE2\x82\xAC\xE2\x82\xAC" "a");
  EXPECT_EQ(utf8_prefix("ab", 99), "ab");
  // Ill-formed input: each maximal subpart counts once, and a cut never splits a good sequence.
  EXPECT_EQ(utf8_length("a\xFF\xE2\x82" "b"), 4u);  // a, FF, E2 82, b
  EXPECT_EQ(utf8_prefix("a\xFF\xE2\x82" "b", 3), "a\xFF\xE2\x82");
  EXPECT_EQ(utf8_prefix("\xF0\x9F\x9A\x80", 1), "\xF0\x9F\x9A\x80");
}

}  // namespace
}  // namespace warden
