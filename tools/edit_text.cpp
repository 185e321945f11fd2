#include "tools/edit_text.h"

#include <algorithm>
#include <vector>

#include "common/utf8.h"

namespace warden::tools {

namespace {

using sv = std::string_view;
constexpr sv k_bom = "\xEF\xBB\xBF";
constexpr std::size_t k_context = 3;

error bad(std::string message) { return make_error(errc::invalid_request, std::move(message)); }

/// `raw` with every "\r\n" read as "\n", and where each dropped '\r' was: the index, in the
/// result, of the '\n' it stood before (ascending).
struct lf_text {
  std::string text;
  std::vector<std::size_t> dropped_cr;
  /// The index in `raw` of index `i` of `text` (a "\r\n" counts from its '\r').
  std::size_t raw_index(std::size_t i) const {
    return i + static_cast<std::size_t>(std::lower_bound(dropped_cr.begin(), dropped_cr.end(), i) - dropped_cr.begin());
  }
};

lf_text to_lf(sv raw) {
  lf_text out;
  out.text.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') {
      out.dropped_cr.push_back(out.text.size());
      continue;
    }
    out.text += raw[i];
  }
  return out;
}

std::string with_crlf(sv lf) {
  std::string out;
  out.reserve(lf.size() + lf.size() / 16);
  for (char c : lf) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

/// True when the first line break of `raw` is "\r\n".
bool uses_crlf(sv raw) {
  const std::size_t nl = raw.find('\n');
  return nl != sv::npos && nl > 0 && raw[nl - 1] == '\r';
}

/// Start offsets of the non-overlapping occurrences of `needle` in `hay`.
std::vector<std::size_t> occurrences(sv hay, sv needle) {
  std::vector<std::size_t> at;
  for (std::size_t p = hay.find(needle); p != sv::npos; p = hay.find(needle, p + needle.size())) at.push_back(p);
  return at;
}

// --- the diff ------------------------------------------------------------------------------

std::vector<sv> split_lines(sv text) {
  std::vector<sv> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    if (nl == sv::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

/// One changed run of lines: old lines [old_first, old_first + old.size()) became `added`.
struct change {
  std::size_t old_first = 0;
  std::size_t old_count = 0;
  std::vector<std::string> added;
};

/// The changed runs of lines, from the matches (LF text) that were replaced by `replacement`:
/// matches whose lines touch share one run, and a run whose new text does not end a line takes
/// in the next line too (it joins the replacement's last line). Linear in the text: each run's
/// new text is appended as the run grows, never rebuilt.
std::vector<change> changes_of(sv old_text, const std::vector<std::size_t>& matches, std::size_t match_len,
                               sv replacement) {
  std::vector<std::size_t> line_start{0};
  for (std::size_t i = 0; i < old_text.size(); ++i) {
    if (old_text[i] == '\n') line_start.push_back(i + 1);
  }
  auto line_of = [&](std::size_t pos) {
    return static_cast<std::size_t>(std::upper_bound(line_start.begin(), line_start.end(), pos) - line_start.begin()) - 1;
  };
  auto line_end = [&](std::size_t line) { return line + 1 < line_start.size() ? line_start[line + 1] : old_text.size(); };
  std::vector<change> out;
  for (std::size_t m = 0; m < matches.size();) {
    const std::size_t first = line_of(matches[m]);
    std::size_t last = first;
    std::string chunk;
    std::size_t p = line_start[first];  // old text before p is in chunk
    for (;;) {
      // the matches that start before the run's end, each widening it to its own last line
      while (m < matches.size() && matches[m] < line_end(last)) {
        chunk.append(old_text.substr(p, matches[m] - p));
        chunk.append(replacement);
        p = matches[m] + match_len;
        last = std::max(last, line_of(p - 1));
        ++m;
      }
      chunk.append(old_text.substr(p, line_end(last) - p));
      p = line_end(last);
      if (chunk.empty() || chunk.back() == '\n' || p >= old_text.size()) break;
      ++last;  // the new text runs on into the next line
    }
    change c;
    c.old_first = first;
    c.old_count = last - first + 1;
    for (sv l : split_lines(chunk)) c.added.emplace_back(l);
    out.push_back(std::move(c));
  }
  return out;
}

/// Collects diff lines under the caps of edit_text.h.
class capped_lines {
 public:
  void add(std::string line) {
    if (full_) {
      ++left_out_;
      return;
    }
    const sv cut = utf8_prefix(line, k_diff_max_line_chars);
    if (cut.size() < line.size()) line = std::string(cut) + "…";
    if (lines_ + 1 > k_diff_max_lines || text_.size() + line.size() + 1 > k_diff_max_chars) {
      full_ = true;
      ++left_out_;
      return;
    }
    text_ += line;
    text_ += '\n';
    ++lines_;
  }
  std::string done() {
    if (left_out_ > 0) text_ += "… (diff cut: " + std::to_string(left_out_) + " more lines)\n";
    return std::move(text_);
  }

 private:
  std::string text_;
  std::size_t lines_ = 0;
  std::size_t left_out_ = 0;
  bool full_ = false;
};

/// A diff line: its mark (' ', '-', '+') and the line.
std::string marked(char mark, sv line) {
  std::string out(1, mark);
  out.append(line);
  return out;
}

std::string range(std::size_t first, std::size_t count) {
  // unified diff: "start,count", 1-based; an empty range names the line before it
  return std::to_string(count == 0 ? first : first + 1) + "," + std::to_string(count);
}

/// Unified diff of `changes` against `old_lines`, hunks merged when their context would touch.
std::string unified_diff(const std::vector<sv>& old_lines, const std::vector<change>& changes, sv path) {
  capped_lines out;
  out.add("--- a/" + std::string(path));
  out.add("+++ b/" + std::string(path));
  long long shift = 0;  // new line index − old line index, before the current change
  for (std::size_t h = 0; h < changes.size();) {
    std::size_t last = h;  // the hunk's changes are [h, last]
    while (last + 1 < changes.size() &&
           changes[last + 1].old_first <= changes[last].old_first + changes[last].old_count + 2 * k_context) {
      ++last;
    }
    const std::size_t begin = changes[h].old_first >= k_context ? changes[h].old_first - k_context : 0;
    const std::size_t end = std::min(old_lines.size(), changes[last].old_first + changes[last].old_count + k_context);
    std::vector<std::string> body;
    std::size_t old_count = 0, new_count = 0;
    const long long shift_at_begin = shift;
    std::size_t line = begin;
    for (std::size_t k = h; k <= last; ++k) {
      for (; line < changes[k].old_first; ++line, ++old_count, ++new_count) body.push_back(marked(' ', old_lines[line]));
      for (std::size_t i = 0; i < changes[k].old_count; ++i, ++line, ++old_count) body.push_back(marked('-', old_lines[line]));
      for (const auto& a : changes[k].added) body.push_back(marked('+', a));
      new_count += changes[k].added.size();
      shift += static_cast<long long>(changes[k].added.size()) - static_cast<long long>(changes[k].old_count);
    }
    for (; line < end; ++line, ++old_count, ++new_count) body.push_back(marked(' ', old_lines[line]));
    const auto new_begin = static_cast<std::size_t>(static_cast<long long>(begin) + shift_at_begin);
    out.add("@@ -" + range(begin, old_count) + " +" + range(new_begin, new_count) + " @@");
    for (auto& l : body) out.add(std::move(l));
    h = last + 1;
  }
  return out.done();
}

result<edit_outcome> create_file(std::optional<sv> current, const text_edit& edit, sv path) {
  if (current && !current->empty()) {
    return bad("old_string is empty, which creates a new file, but " + std::string(path) + " already exists (" +
               std::to_string(current->size()) + " bytes); give the exact text to replace as old_string");
  }
  edit_outcome o;
  o.content = edit.new_string;
  o.created = true;
  const lf_text lf = to_lf(edit.new_string);
  change c;
  for (sv l : split_lines(lf.text)) c.added.emplace_back(l);
  o.diff = unified_diff({}, {c}, path);
  return o;
}

}  // namespace

result<edit_outcome> apply_text_edit(std::optional<std::string_view> current, const text_edit& edit,
                                     std::string_view path) {
  for (const auto* s : {&edit.old_string, &edit.new_string}) {
    if (!is_valid_utf8(*s)) {
      return bad(std::string(s == &edit.old_string ? "old_string" : "new_string") +
                 " is not valid UTF-8 (a lone surrogate or a broken byte sequence); send the text as it should be written");
    }
  }
  if (current && current->size() > k_max_edit_bytes) {
    return bad(std::string(path) + " is " + std::to_string(current->size()) +
               " bytes; edit_file works on files of at most 16 MiB (16777216 bytes)");
  }
  if (edit.old_string.empty()) return create_file(current, edit, path);
  if (!current) {
    return bad(std::string(path) + " does not exist; to create it, call edit_file with an empty old_string");
  }
  const bool bom = current->substr(0, k_bom.size()) == k_bom;
  const sv raw = bom ? current->substr(k_bom.size()) : *current;
  const lf_text file = to_lf(raw);
  const std::string needle = to_lf(edit.old_string).text;
  const std::vector<std::size_t> at = occurrences(file.text, needle);
  if (at.empty()) return bad("old_string was not found in " + std::string(path) + "; nothing was written");
  if (at.size() > 1 && !edit.replace_all) {
    return bad("old_string occurs " + std::to_string(at.size()) + " times in " + std::string(path) +
               "; nothing was written. Give more surrounding text so it occurs once, or set replace_all");
  }
  // Replace in the file's own bytes, so lines the edit does not touch keep their line breaks.
  const std::string lf_new = to_lf(edit.new_string).text;
  const std::string replacement = uses_crlf(raw) ? with_crlf(lf_new) : lf_new;
  // The size first: a short file and a long new_string with replace_all could otherwise make
  // gigabytes before the cap says no.
  std::size_t size = (bom ? k_bom.size() : 0) + raw.size();
  for (std::size_t m : at) {
    size = size - (file.raw_index(m + needle.size()) - file.raw_index(m)) + replacement.size();
    if (size > k_max_edit_bytes) break;
  }
  if (size > k_max_edit_bytes) {
    return bad("the edit would make " + std::string(path) + " more than 16 MiB (16777216 bytes), the most edit_file "
               "writes; nothing was written");
  }
  std::string content(bom ? k_bom : sv());
  content.reserve(size);
  std::size_t done = 0;  // raw bytes copied so far
  for (std::size_t m : at) {
    const std::size_t rs = file.raw_index(m), re = file.raw_index(m + needle.size());
    content.append(raw.substr(done, rs - done));
    content.append(replacement);
    done = re;
  }
  content.append(raw.substr(done));
  edit_outcome o;
  o.content = std::move(content);
  o.replacements = at.size();
  o.diff = unified_diff(split_lines(file.text), changes_of(file.text, at, needle.size(), lf_new), path);
  return o;
}

}  // namespace warden::tools
