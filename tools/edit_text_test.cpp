// edit_text: the behaviours of reference §4.6 as a table, then the diff and its caps.
#include <gtest/gtest.h>

#include "tools/edit_text.h"

namespace warden::tools {
namespace {

struct row {
  const char* what;
  std::optional<std::string> file;  ///< nullopt: no such file
  text_edit edit;
  std::optional<std::string> want;  ///< the new content; nullopt: an error
  std::string error_has;            ///< part of the error message
  std::size_t replacements = 0;
};

std::vector<row> rows() {
  const std::string bom = "\xEF\xBB\xBF";
  return {
      {"one match", "a = 1\nb = 2\n", {"b = 2", "b = 3"}, "a = 1\nb = 3\n", "", 1},
      {"no match", "a = 1\n", {"z", "y"}, std::nullopt, "was not found", 0},
      {"several matches", "x\nx\nx\n", {"x", "y"}, std::nullopt, "occurs 3 times", 0},
      {"replace_all", "x\nx\nx\n", {"x", "y", true}, "y\ny\ny\n", "", 3},
      {"create", std::nullopt, {"", "new\n"}, "new\n", "", 0},
      {"create an empty file", std::nullopt, {"", ""}, "", "", 0},
      {"create over an empty file", "", {"", "n"}, "n", "", 0},
      {"create over a file with text", "old", {"", "n"}, std::nullopt, "already exists (3 bytes)", 0},
      {"edit a file that is not there", std::nullopt, {"a", "b"}, std::nullopt, "does not exist", 0},
      {"CRLF file: matched as LF, written as CRLF", "one\r\ntwo\r\nthree\r\n", {"one\ntwo", "1\n2"},
       "1\r\n2\r\nthree\r\n", "", 1},
      {"CRLF old_string matches an LF file", "one\ntwo\n", {"one\r\ntwo", "1"}, "1\n", "", 1},
      {"mixed file: untouched lines keep their breaks", "a\r\nb\nc\r\n", {"c", "C"}, "a\r\nb\nC\r\n", "", 1},
      {"BOM kept and never matched", bom + "head\nbody\n", {"head", "HEAD"}, bom + "HEAD\nbody\n", "", 1},
      {"lone surrogate (CESU-8) refused", "a", {"a", "\xED\xA0\x80"}, std::nullopt, "new_string is not valid UTF-8", 0},
      {"broken old_string refused", "a", {"\xC3", "b"}, std::nullopt, "old_string is not valid UTF-8", 0},
      {"16 MiB file is fine", std::string(k_max_edit_bytes - 1, 'x') + "y", {"y", "z"},
       std::string(k_max_edit_bytes - 1, 'x') + "z", "", 1},
      {"16 MiB + 1 refused", std::string(k_max_edit_bytes + 1, 'x'), {"x", "y", true}, std::nullopt,
       "at most 16 MiB", 0},
      {"a result over 16 MiB refused (once)", std::string(k_max_edit_bytes - 1, 'x') + "y", {"y", "yy"},
       std::nullopt, "would make", 0},
      {"a short file times a long new_string is refused before it is built", std::string(20000, 'a') + "\n",
       {"a", std::string(50000, 'b'), true}, std::nullopt, "more than 16 MiB", 0},
  };
}

TEST(EditText, BehavesAsTheReferenceSays) {
  for (const auto& r : rows()) {
    std::optional<std::string_view> file;
    if (r.file) file = *r.file;
    auto got = apply_text_edit(file, r.edit, "f.txt");
    if (!r.want) {
      ASSERT_FALSE(got.ok()) << r.what;
      EXPECT_EQ(got.error().code, errc::invalid_request) << r.what;
      EXPECT_NE(got.error().message.find(r.error_has), std::string::npos) << r.what << ": " << got.error().message;
      continue;
    }
    ASSERT_TRUE(got.ok()) << r.what << ": " << got.error().message;
    EXPECT_EQ(got->content, *r.want) << r.what;
    EXPECT_EQ(got->replacements, r.replacements) << r.what;
    EXPECT_EQ(got->created, r.edit.old_string.empty()) << r.what;
  }
}

TEST(EditText, TheDiffIsUnifiedWithThreeLinesOfContext) {
  const std::string file = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  auto got = apply_text_edit(std::string_view(file), {"5\n", "five\nFIVE\n"}, "src/n.txt");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->diff,
            "--- a/src/n.txt\n+++ b/src/n.txt\n@@ -2,7 +2,8 @@\n 2\n 3\n 4\n-5\n+five\n+FIVE\n 6\n 7\n 8\n");
}

TEST(EditText, ReplaceAllGivesOneHunkPerDistantChangeWithShiftedNewLines) {
  std::string file;
  for (int i = 0; i < 20; ++i) file += (i == 2 || i == 15 ? "x" : std::to_string(i)) + "\n";
  auto got = apply_text_edit(std::string_view(file), {"x\n", "a\nb\n", true}, "f");
  ASSERT_TRUE(got.ok());
  EXPECT_NE(got->diff.find("@@ -1,6 +1,7 @@\n 0\n 1\n-x\n+a\n+b\n 3\n 4\n 5\n"), std::string::npos) << got->diff;
  EXPECT_NE(got->diff.find("@@ -13,7 +14,8 @@\n 12\n 13\n 14\n-x\n+a\n+b\n 16\n 17\n 18\n"), std::string::npos)
      << got->diff;
}

TEST(EditText, ANewStringThatDoesNotEndTheLineJoinsTheNextOneInTheDiff) {
  auto got = apply_text_edit(std::string_view("a\nb\nc\n"), {"a\n", "x"}, "f");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->content, "xb\nc\n");
  EXPECT_EQ(got->diff, "--- a/f\n+++ b/f\n@@ -1,3 +1,2 @@\n-a\n-b\n+xb\n c\n");
}

TEST(EditText, JoiningEveryLineStaysLinear) {
  // replace_all that takes out every line break makes one run of the whole file; it was built
  // again for every line it took in (80 s for 120,000 lines). ctest's timeout is the check.
  std::string file;
  for (int i = 0; i < 400000; ++i) file += "ab\n";
  auto got = apply_text_edit(std::string_view(file), {"b\n", "c", true}, "big.txt");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->replacements, 400000u);
  EXPECT_EQ(got->content.size(), 800000u);
  EXPECT_NE(got->diff.find("(diff cut:"), std::string::npos);
}

TEST(EditText, ACreatedFileIsAllAdded) {
  auto got = apply_text_edit(std::nullopt, {"", "hello\nworld\n"}, "new.py");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->diff, "--- a/new.py\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+hello\n+world\n");
}

TEST(EditText, TheDiffIsCutAtFortyLinesTwoHundredCharactersAndFourThousandInAll) {
  std::string many;
  for (int i = 0; i < 100; ++i) many += "line " + std::to_string(i) + "\n";
  auto got = apply_text_edit(std::nullopt, {"", many}, "f");
  ASSERT_TRUE(got.ok());
  std::size_t lines = 0;
  for (char c : got->diff) lines += c == '\n';
  EXPECT_EQ(lines, k_diff_max_lines + 1);  // 40 and the line that says what was cut
  EXPECT_NE(got->diff.find("(diff cut: 63 more lines)"), std::string::npos) << got->diff;

  auto wide = apply_text_edit(std::nullopt, {"", std::string(500, 'w') + "\n"}, "f");
  ASSERT_TRUE(wide.ok());
  std::string cut(1, '+');
  cut.append(k_diff_max_line_chars - 1, 'w');
  cut += "…\n";
  EXPECT_NE(wide->diff.find(cut), std::string::npos);

  std::string long_lines;
  for (int i = 0; i < 30; ++i) long_lines += std::string(300, static_cast<char>('a' + i % 26)) + "\n";
  auto big = apply_text_edit(std::nullopt, {"", long_lines}, "f");
  ASSERT_TRUE(big.ok());
  EXPECT_LE(big->diff.size(), k_diff_max_chars + 64);  // the cap, and the closing note
  EXPECT_NE(big->diff.find("more lines)"), std::string::npos);
}

}  // namespace
}  // namespace warden::tools
