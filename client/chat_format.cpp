#include "client/chat_format.h"

#include <cstdio>
#include <ctime>

#include "common/utf8.h"

namespace warden::client {

namespace {

std::string escape_code_point(char32_t cp) {
  char buf[12];
  if (cp >= 0x80) std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
  else std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
  return buf;
}

bool is_control(char32_t cp) { return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f); }

/// Shared walk of terminal_text and one_line: `multi_line` keeps \n and \t (and turns \r into
/// \n); otherwise they are escapes too.
std::string safe_text(std::string_view text, bool multi_line) {
  const std::string valid = to_valid_utf8(text);
  std::string out;
  out.reserve(valid.size());
  for (std::size_t i = 0; i < valid.size();) {
    const utf8_sequence q = decode_utf8(valid, i);
    const char32_t cp = q.code_point;
    if (multi_line && (cp == U'\n' || cp == U'\t')) {
      out += static_cast<char>(cp);
    } else if (multi_line && cp == U'\r') {
      if (i + 1 >= valid.size() || valid[i + 1] != '\n') out += '\n';  // "\r\n" → the "\n" that follows
    } else if (!multi_line && (cp == U'\n' || cp == U'\t' || cp == U'\r')) {
      out += cp == U'\n' ? "\\n" : cp == U'\t' ? "\\t" : "\\r";
    } else if (is_control(cp)) {
      out += escape_code_point(cp);
    } else {
      out.append(valid, i, q.length);
    }
    i += q.length;
  }
  return out;
}

/// At most `max_lines` lines of `text` (no trailing newline), then "… N more lines".
std::string first_lines(std::string_view text, std::size_t max_lines) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::string out;
  std::size_t lines = 0, pos = 0;
  while (pos <= text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (lines == max_lines) {
      std::size_t rest = 1;
      for (std::size_t p = pos; (p = text.find('\n', p)) != std::string_view::npos; ++p) ++rest;
      out += "\n… " + std::to_string(rest) + (rest == 1 ? " more line" : " more lines");
      return out;
    }
    if (lines > 0) out += '\n';
    out += line;
    ++lines;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

std::string string_or_json(const json& v) {
  return v.is_string() ? v.get<std::string>() : dump_safe(v);
}

std::string string_at(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return string_or_json(*it);
}

/// Unix ms as local "HH:MM:SS".
std::string local_clock(std::int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  if (::localtime_r(&secs, &tm) == nullptr) return "?";
  char buf[16];
  const std::size_t n = std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return std::string(buf, n);
}

std::string pad(std::string s, std::size_t width) {
  const std::size_t len = utf8_length(s);
  if (len < width) s.append(width - len, ' ');
  return s;
}

/// The arguments of an audit record or a rule on one line: python's code, terminal's
/// command, else the compact JSON.
std::string short_arguments(const json& args, std::size_t max_chars) {
  if (args.is_object() && args.size() == 1) {
    for (const char* key : {"code", "command"}) {
      if (auto it = args.find(key); it != args.end() && it->is_string()) return one_line(it->get<std::string>(), max_chars);
    }
  }
  return one_line(string_or_json(args), max_chars);
}

std::string audit_line(const json& r) {
  const json& started = r.contains("started_at") ? r["started_at"] : json();
  const std::string when = started.is_number_integer() ? local_clock(started.get<std::int64_t>()) : "?";
  const auto allowed_it = r.find("allowed");
  const bool allowed = allowed_it != r.end() && allowed_it->is_boolean() && allowed_it->get<bool>();
  std::string who = string_at(r, "decided_by");
  if (const std::string rule = string_at(r, "rule_id"); !rule.empty()) who += ":" + rule;
  std::string risk = "-";
  if (auto it = r.find("risk"); it != r.end() && it->is_object()) {
    if (std::string level = string_at(*it, "level"); !level.empty()) risk = level;
  }
  const std::string exit = string_at(r, "exit_status");
  const std::string took = string_at(r, "duration_ms");
  const json args = r.contains("arguments") ? r["arguments"] : json::object();
  return pad(when, 10) + pad(one_line(string_at(r, "tool"), 12), 13) + pad(allowed ? "ran" : "not run", 9) +
         pad(one_line(who, 30), 31) + pad(one_line(risk, 5), 6) + pad(exit.empty() ? "-" : exit, 6) +
         pad(took.empty() ? "-" : took + "ms", 9) + short_arguments(args, 40);
}

}  // namespace

/// Runs of two or more blank (whitespace-only) lines become one "⋯ N blank lines" line, so no
/// padding can push the end of a command below what the card shows.
std::string squeeze_blank_lines(std::string_view text) {
  std::string out;
  std::size_t blanks = 0, pos = 0;
  auto flush = [&] {
    if (blanks == 1) out += "\n";
    else if (blanks > 1) out += "⋯ " + std::to_string(blanks) + " blank lines\n";
    blanks = 0;
  };
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      ++blanks;
    } else {
      flush();
      out.append(line);
      out += '\n';
    }
    pos = nl + 1;
  }
  flush();
  if (!out.empty() && (text.empty() || text.back() != '\n')) out.pop_back();
  return out;
}

std::string terminal_text(std::string_view text) { return safe_text(text, true); }

std::string one_line(std::string_view text, std::size_t max_chars) {
  const std::string valid = to_valid_utf8(text);
  const std::string_view cut = utf8_prefix(valid, max_chars);
  std::string out = safe_text(cut, false);
  if (cut.size() < valid.size()) out += "…";
  return out;
}

std::string indent(std::string_view text, std::string_view prefix) {
  std::string out;
  bool at_start = true;
  for (char c : text) {
    if (at_start) out += prefix;
    out += c;
    at_start = c == '\n';
  }
  return out;
}

namespace {

/// edit_file's arguments as the change it asks for (as the web UI's card shows it): the path,
/// old_string's lines with "-" ("(new file)" when it is empty) and new_string's with "+".
std::string edit_change(const json& arguments) {
  std::string out = string_at(arguments, "path");
  if (arguments.value("replace_all", json(false)) == json(true)) out += "  (every occurrence)";
  auto lines = [&](const char* key, char mark) {
    const json v = arguments.value(key, json(""));
    std::string text = v.is_string() ? v.get<std::string>() : string_or_json(v);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    std::string got;
    if (text.empty()) return got;
    got += '\n';
    got += mark;
    for (char c : text) {
      got += c;
      if (c == '\n') got += mark;
    }
    return got;
  };
  const std::string removed = lines("old_string", '-');
  out += removed.empty() ? "\n(new file)" : removed;
  out += lines("new_string", '+');
  return out;
}

}  // namespace

std::string format_arguments(std::string_view tool, const json& arguments, std::size_t max_lines) {
  std::string text;
  if (!arguments.is_object() || arguments.empty()) {
    text = arguments.is_object() ? "(no arguments)" : string_or_json(arguments);
  } else if (tool == "python" && arguments.contains("code") && arguments["code"].is_string()) {
    text = arguments["code"].get<std::string>();
  } else if (tool == "terminal" && arguments.contains("command") && arguments["command"].is_string()) {
    text = "$ " + arguments["command"].get<std::string>();
  } else if (tool == "edit_file" && arguments.contains("path") && arguments["path"].is_string()) {
    text = edit_change(arguments);
  } else if (tool == "render_html" && arguments.contains("code") && arguments["code"].is_string()) {
    if (arguments.contains("title")) text = "title: " + string_at(arguments, "title") + "\n";
    text += std::to_string(arguments["code"].get<std::string>().size()) + " bytes of HTML";
  } else {
    for (const auto& [key, value] : arguments.items()) {
      if (!text.empty()) text += '\n';
      text += key + ": " + string_or_json(value);
    }
  }
  return first_lines(squeeze_blank_lines(terminal_text(text)), max_lines);
}

std::string mark_prompt_escapes(std::string_view prompt) {
  std::string out;
  bool open = false;  // inside a \1 … \1 group
  for (std::size_t i = 0; i < prompt.size();) {
    if (prompt[i] != '\x1b') {
      if (open) out += '\1';
      open = false;
      out += prompt[i++];
      continue;
    }
    std::size_t end = i + 1;
    if (end < prompt.size() && prompt[end] == '[') {
      ++end;
      while (end < prompt.size() && !(prompt[end] >= '@' && prompt[end] <= '~')) ++end;
    }
    end = end < prompt.size() ? end + 1 : prompt.size();
    if (!open) out += '\1';
    open = true;
    out.append(prompt, i, end - i);
    i = end;
  }
  if (open) out += '\1';
  return out;
}

std::string format_risk(const risk_info& risk) {
  if (risk.level.empty()) return "";
  std::string reasons;
  for (std::size_t i = 0; i < risk.reasons.size(); ++i) reasons += (i ? "; " : "") + one_line(risk.reasons[i], 120);
  // "high" means the classifier does not know the call to be safe (issue 22): say that, and why
  if (risk.level == "high") return reasons.empty() ? "not known to be safe" : "not known to be safe: " + reasons;
  std::string out = "risk: " + one_line(risk.level, 16);
  if (!reasons.empty()) out += " (" + reasons + ")";
  return out;
}

std::string brief_result(std::string_view result, std::size_t max_lines) {
  return first_lines(terminal_text(result), max_lines);
}

std::string decided_by_text(const tool_end_event& end) {
  if (!end.decided_by) return "";
  const std::string& by = *end.decided_by;
  const bool allowed = end.allowed.value_or(true);
  if (by == "user") return allowed ? "you allowed it" : "you declined it";
  if (by == "rule") return allowed ? "allowed by a remembered rule" : "refused by a rule";
  if (by == "auto") return allowed ? "ran without asking (auto: low risk)" : "refused (auto)";
  if (by == "policy") return allowed ? "ran without asking (policy)" : "refused by policy";
  if (by == "bypass") return "ran outside the sandbox (full)";
  if (by == "expired") return "expired: nobody answered in time";
  if (by == "client_gone") return "not run: the client went away";
  if (by == "cancel") return "cancelled";
  return (allowed ? "allowed by " : "refused by ") + one_line(by, 32);
}

std::string rules_table(const json& body) {
  if (!body.is_object() || !body.contains("data") || !body["data"].is_array()) return "";
  const json& data = body["data"];
  if (data.empty()) return "no remembered rules\n";
  std::string out;
  for (const auto& r : data) {
    if (!r.is_object()) continue;
    std::string what;
    if (const std::string p = string_at(r, "command_prefix"); !p.empty()) what = "command starts with: " + one_line(p, 50);
    else if (const std::string p2 = string_at(r, "path_prefix"); !p2.empty()) what = "path starts with: " + one_line(p2, 50);
    else if (r.contains("arguments")) what = short_arguments(r["arguments"], 50);
    const json& expires = r.contains("expires_at_ms") ? r["expires_at_ms"] : json();
    const std::string until = expires.is_number_integer() ? "until " + local_clock(expires.get<std::int64_t>()) : "no expiry";
    out += pad(one_line(string_at(r, "id"), 30), 26) + pad(one_line(string_at(r, "scope"), 10), 9) +
           pad(one_line(string_at(r, "tool"), 16), 13) + pad(what, 52) + until + "\n";
  }
  return out;
}

std::string audit_table(const json& records) {
  if (!records.is_array() || records.empty()) return "no tool calls in this session yet\n";
  std::string out = pad("time", 10) + pad("tool", 13) + pad("ran?", 9) + pad("decided by", 31) + pad("risk", 6) +
                    pad("exit", 6) + pad("took", 9) + "arguments\n";
  for (const auto& r : records) {
    if (r.is_object()) out += audit_line(r) + "\n";
  }
  return out;
}

}  // namespace warden::client
