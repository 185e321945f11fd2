#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>
#include <vector>

#include "common/ids.h"

namespace warden::ids {
namespace {

bool url_safe(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}
bool lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

TEST(Ids, RandomHexIsTwoLowercaseHexCharsPerByte) {
  EXPECT_EQ(random_hex(0), "");
  for (std::size_t n : {1u, 12u, 16u, 100u}) {
    const std::string h = random_hex(n);
    ASSERT_EQ(h.size(), 2 * n);
    for (char c : h) ASSERT_TRUE(lower_hex(c)) << h;
  }
}

TEST(Ids, RandomTokenIsUrlSafeAndUsesTheWholeAlphabet) {
  EXPECT_EQ(random_token(0), "");
  std::set<char> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string t = random_token(37);
    ASSERT_EQ(t.size(), 37u);
    for (char c : t) {
      ASSERT_TRUE(url_safe(c)) << t;
      seen.insert(c);
    }
  }
  // 7,400 draws over 64 symbols: missing one has probability ~64·(63/64)^7400 ≈ 1e-49.
  EXPECT_EQ(seen.size(), 64u);
}

struct shape {
  kind k;
  std::string prefix;
  std::size_t body;
  bool hex;
};

const std::vector<shape>& shapes() {
  static const std::vector<shape> s = {
      {kind::approval, "", 22, false},         {kind::tool_call, "call_", 24, false},
      {kind::completion, "chatcmpl-", 24, false}, {kind::response, "resp_", 24, false},
      {kind::message, "msg_", 24, false},      {kind::script, "", 24, true}, {kind::rule, "rule_", 16, false},
      {kind::knowledge_base, "kb_", 16, false}, {kind::document, "doc_", 16, false},
      {kind::rag_auto_call, "rag_auto_", 12, true},
  };
  return s;
}

TEST(Ids, EveryKindHasItsPrefixLengthAndAlphabet) {
  for (const auto& s : shapes()) {
    for (int i = 0; i < 100; ++i) {
      const std::string id = new_id(s.k);
      ASSERT_EQ(id.size(), s.prefix.size() + s.body) << id;
      ASSERT_EQ(id.substr(0, s.prefix.size()), s.prefix) << id;
      for (char c : id.substr(s.prefix.size())) ASSERT_TRUE(s.hex ? lower_hex(c) : url_safe(c)) << id;
    }
  }
}

TEST(Ids, TenThousandIdsOfEachKindNeverCollide) {
  for (const auto& s : shapes()) {
    std::set<std::string> seen;
    for (int i = 0; i < 10000; ++i) ASSERT_TRUE(seen.insert(new_id(s.k)).second) << s.prefix;
  }
}

TEST(Ids, RandomBytesFillsEveryPosition) {
  EXPECT_NO_THROW(random_bytes({}));
  // Over 64 draws a byte stays 0 with probability 2^-512: any position the call forgets to
  // write (buffer pre-zeroed every time) shows up as all-zero.
  constexpr std::size_t n = 1000;  // above any single-read threshold worth testing
  std::array<unsigned, n> ored{};
  std::vector<std::byte> buf(n);
  for (int draw = 0; draw < 64; ++draw) {
    std::fill(buf.begin(), buf.end(), std::byte{0});
    random_bytes(buf);
    for (std::size_t i = 0; i < n; ++i) ored[i] |= std::to_integer<unsigned>(buf[i]);
  }
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(ored[i], 0xFFu) << "byte " << i;
  // A large request (getrandom may return it short) is filled to the end too.
  std::vector<std::byte> big(1 << 20, std::byte{0});
  random_bytes(big);
  std::size_t zeros = 0;
  for (std::size_t i = big.size() - 4096; i < big.size(); ++i) zeros += big[i] == std::byte{0};
  EXPECT_LT(zeros, 64u);  // expected 16; an unfilled tail would give 4096
}

}  // namespace
}  // namespace warden::ids
