// edit_text — the text half of the edit_file tool (reference unsloth-studio.md §4.6, issue 25):
// one exact replacement in a file's bytes (or every one, with replace_all), with the file's
// newline style and BOM kept, and a capped unified diff of the change for the tool's result and
// the approval card. Where the bytes come from and go to (the workspace, the jail, the atomic
// write) is the tool's business, not this file's.
//
// Rules (§4.6):
// - `old_string` must occur exactly once unless `replace_all`; no occurrence, or several without
//   replace_all, is an error that names the count, and nothing is to be written.
// - An empty `old_string` creates the file with `new_string` (both empty: an empty file). The
//   file must not exist yet, or be empty.
// - Matching is on text whose line breaks are "\n": the file's "\r\n" (and the strings' "\r\n")
//   are read as "\n". The result is written back with the file's own style: "\r\n" when its first
//   line break is "\r\n", "\n" otherwise (a new file: as `new_string` has them). A UTF-8 BOM at
//   the file's start is kept and is never part of a match.
// - `old_string` and `new_string` must be well-formed UTF-8: a lone surrogate (as CESU-8 bytes;
//   JSON's "\ud800" alone does not parse) or any other ill-formed byte is refused.
// - The file and the result are each at most k_max_edit_bytes (the reference's 16 MiB).
// - The diff is unified (`--- a/PATH`, `+++ b/PATH`, `@@ -l,n +l,n @@`, 3 lines of context), cut
//   to k_diff_max_lines lines of k_diff_max_line_chars characters and k_diff_max_chars in all
//   (the reference's 40 / 200 / 4000), with a last line saying what was cut.
// Errors: errc::invalid_request, with a message for the model. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace warden::tools {

inline constexpr std::size_t k_max_edit_bytes = 16u * 1024u * 1024u;
inline constexpr std::size_t k_diff_max_lines = 40;
inline constexpr std::size_t k_diff_max_line_chars = 200;
inline constexpr std::size_t k_diff_max_chars = 4000;

struct text_edit {
  std::string old_string;
  std::string new_string;
  bool replace_all = false;
};

struct edit_outcome {
  std::string content;            ///< the file's new bytes (BOM and newline style kept)
  std::size_t replacements = 0;   ///< occurrences replaced (0 when the file was created)
  bool created = false;           ///< old_string was empty: a new file
  std::string diff;               ///< unified diff, capped (see above)
};

/// Applies `edit` to `current` (the file's bytes; nullopt when there is no such file). `path`
/// names the file in the diff's headers.
result<edit_outcome> apply_text_edit(std::optional<std::string_view> current, const text_edit& edit,
                                     std::string_view path);

}  // namespace warden::tools
