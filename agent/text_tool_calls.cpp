#include "agent/text_tool_calls.h"

#include "common/json_util.h"

namespace warden::agent {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Parses JSON, repairing a cut-short tail.
std::optional<json> parse_lenient(std::string_view text) {
  text = trim(text);
  if (auto j = parse_json(text)) return j;
  if (auto fixed = repair_truncated_json(text)) return parse_json(*fixed);
  return std::nullopt;
}

/// A call from {"name":…, "arguments"|"parameters": {…} | "…"}.
std::optional<text_call> call_from_object(const json& j) {
  if (!j.is_object()) return std::nullopt;
  text_call c;
  auto n = j.find("name");
  if (n == j.end() || !n->is_string()) return std::nullopt;
  c.name = n->get<std::string>();
  auto a = j.find("arguments");
  if (a == j.end()) a = j.find("parameters");
  if (a == j.end() || a->is_null()) {
    c.arguments = "{}";
  } else if (a->is_string()) {
    c.arguments = a->get<std::string>();
  } else {
    c.arguments = dump_safe(*a);
  }
  return c;
}

/// Length of the first JSON array/object of `s` (json_balanced_end), or s.size() when it runs to
/// the end.
std::size_t json_value_extent(std::string_view s) {
  const std::size_t end = json_balanced_end(s);
  return end == std::string_view::npos ? s.size() : end;
}

std::vector<text_call> parse_qwen_xml(std::string_view s);

std::vector<text_call> parse_hermes(std::string_view s) {
  std::vector<text_call> out;
  constexpr std::string_view open = "<tool_call>", close = "</tool_call>";
  std::size_t pos = s.find(open);
  while (pos != std::string_view::npos) {
    const std::size_t body_start = pos + open.size();
    std::size_t end = s.find(close, body_start);
    std::string_view body = s.substr(body_start, end == std::string_view::npos ? std::string_view::npos : end - body_start);
    std::string_view t = trim(body);
    if (t.rfind("<function", 0) == 0) {
      auto inner = parse_qwen_xml(t);
      out.insert(out.end(), inner.begin(), inner.end());
    } else {
      std::optional<text_call> c;
      if (auto j = parse_lenient(t)) c = call_from_object(*j);
      if (!c) c = text_call{"", std::string(t)};
      out.push_back(std::move(*c));
    }
    if (end == std::string_view::npos) break;
    pos = s.find(open, end + close.size());
  }
  return out;
}

std::vector<text_call> parse_qwen_xml(std::string_view s) {
  std::vector<text_call> out;
  std::size_t pos = s.find("<function");
  while (pos != std::string_view::npos) {
    std::size_t p = pos + 9;  // after "<function"
    std::string name;
    if (p < s.size() && s[p] == '=') {
      const std::size_t gt = s.find('>', p);
      name = std::string(trim(s.substr(p + 1, gt == std::string_view::npos ? std::string_view::npos : gt - p - 1)));
      p = gt == std::string_view::npos ? s.size() : gt + 1;
    } else {  // <function name="…">
      const std::size_t q1 = s.find('"', p);
      const std::size_t q2 = q1 == std::string_view::npos ? q1 : s.find('"', q1 + 1);
      if (q2 != std::string_view::npos) name = std::string(s.substr(q1 + 1, q2 - q1 - 1));
      const std::size_t gt = s.find('>', p);
      p = gt == std::string_view::npos ? s.size() : gt + 1;
    }
    const std::size_t fend = s.find("</function>", p);
    std::string_view body = s.substr(p, fend == std::string_view::npos ? std::string_view::npos : fend - p);
    json args = json::object();
    std::size_t q = body.find("<parameter");
    while (q != std::string_view::npos) {
      std::size_t k = q + 10;
      std::string key;
      if (k < body.size() && body[k] == '=') ++k;
      const std::size_t gt = body.find('>', k);
      if (gt == std::string_view::npos) break;
      key = std::string(trim(body.substr(k, gt - k)));
      if (key.rfind("name=", 0) == 0) key = key.substr(5);
      if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
      const std::size_t vend = body.find("</parameter>", gt + 1);
      std::string_view v = body.substr(gt + 1, vend == std::string_view::npos ? std::string_view::npos : vend - gt - 1);
      // Values are text; the one newline the format puts around them is not part of the value.
      if (!v.empty() && v.front() == '\n') v.remove_prefix(1);
      if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
      args[key] = std::string(v);
      if (vend == std::string_view::npos) break;
      q = body.find("<parameter", vend);
    }
    out.push_back({name, dump_safe(args)});
    if (fend == std::string_view::npos) break;
    pos = s.find("<function", fend);
  }
  return out;
}

std::vector<text_call> parse_mistral(std::string_view s) {
  std::vector<text_call> out;
  constexpr std::string_view marker = "[TOOL_CALLS]";
  std::size_t pos = s.find(marker);
  while (pos != std::string_view::npos) {
    std::string_view rest = s.substr(pos + marker.size());
    std::string_view t = trim(rest);
    std::size_t consumed = 0;
    if (!t.empty() && (t.front() == '[' || t.front() == '{')) {
      const std::size_t n = json_value_extent(t);
      if (auto j = parse_lenient(t.substr(0, n))) {
        const json arr = j->is_array() ? *j : json::array({*j});
        for (const auto& e : arr) {
          if (auto c = call_from_object(e)) out.push_back(std::move(*c));
          else out.push_back({"", dump_safe(e)});
        }
      } else {
        out.push_back({"", std::string(t.substr(0, n))});
      }
      consumed = static_cast<std::size_t>(t.data() - rest.data()) + n;
    } else {
      // NAME[ARGS]{…} or NAME{…}
      const std::size_t brace = t.find('{');
      std::string_view name = t.substr(0, brace);
      const std::size_t args_tag = name.find("[ARGS]");
      if (args_tag != std::string_view::npos) name = name.substr(0, args_tag);
      const std::size_t call_id = name.find("[CALL_ID]");
      if (call_id != std::string_view::npos) name = name.substr(0, call_id);
      if (brace == std::string_view::npos) {
        out.push_back({std::string(trim(name)), ""});
        break;
      }
      const std::size_t n = json_value_extent(t.substr(brace));
      std::string_view a = t.substr(brace, n);
      auto j = parse_lenient(a);
      out.push_back({std::string(trim(name)), j ? dump_safe(*j) : std::string(a)});
      consumed = static_cast<std::size_t>(t.data() - rest.data()) + brace + n;
    }
    pos = s.find(marker, pos + marker.size() + consumed);
  }
  return out;
}

std::vector<text_call> parse_llama3(std::string_view s) {
  std::vector<text_call> out;
  constexpr std::string_view marker = "<|python_tag|>";
  std::size_t pos = s.find(marker);
  while (pos != std::string_view::npos) {
    std::string_view t = trim(s.substr(pos + marker.size()));
    const std::size_t n = json_value_extent(t);
    std::optional<text_call> c;
    if (auto j = parse_lenient(t.substr(0, n))) c = call_from_object(*j);
    out.push_back(c ? std::move(*c) : text_call{"", std::string(t.substr(0, n))});
    pos = s.find(marker, pos + marker.size() + n);
  }
  return out;
}

}  // namespace

std::optional<std::string> repair_truncated_json(std::string_view text) {
  std::string s(trim(text));
  if (s.empty() || (s.front() != '{' && s.front() != '[')) return std::nullopt;
  std::string stack;  // the closers still owed, innermost last
  const json_walk_end end = walk_json_brackets(s, 0, [&](std::size_t, char c) {
    if (c == '{' || c == '[') {
      stack += c == '{' ? '}' : ']';
      return true;
    }
    if (stack.empty() || stack.back() != c) return false;  // a closer of the wrong kind or with nothing open: not JSON
    stack.pop_back();
    return true;
  });
  if (end.stopped_at != std::string_view::npos) return std::nullopt;
  if (end.in_string) {
    if (end.escaped) s.pop_back();
    s += '"';
  }
  // A dangling separator or a key without its value cannot be closed as is.
  while (!s.empty() && (s.back() == ',' || s.back() == ':' || s.back() == ' ' || s.back() == '\n')) {
    const char c = s.back();
    s.pop_back();
    if (c == ':') {  // drop the orphan key too: ..., "key":
      const std::size_t q2 = s.rfind('"');
      const std::size_t q1 = q2 == std::string::npos || q2 == 0 ? std::string::npos : s.rfind('"', q2 - 1);
      if (q1 != std::string::npos) s.erase(q1);
    }
  }
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) s += *it;
  return s;
}

const std::vector<text_call_format>& text_call_formats() {
  static const std::vector<text_call_format> formats = {
      {"hermes", "<tool_call>", &parse_hermes},
      {"qwen_xml", "<function=", &parse_qwen_xml},
      {"mistral", "[TOOL_CALLS]", &parse_mistral},
      {"llama3", "<|python_tag|>", &parse_llama3},
  };
  return formats;
}

std::string text_call_scanner::feed(std::string_view content) {
  if (format_) {
    held_.append(content);
    return {};
  }
  std::string buf = std::move(pending_);
  pending_.clear();
  buf.append(content);
  // A full marker: show what precedes it, hold the rest of the turn.
  std::size_t best = std::string::npos;
  const text_call_format* found = nullptr;
  for (const auto& f : text_call_formats()) {
    const std::size_t p = buf.find(f.marker);
    if (p < best) {
      best = p;
      found = &f;
    }
  }
  if (found) {
    format_ = found;
    held_ = buf.substr(best);
    return buf.substr(0, best);
  }
  // A possible marker prefix at the end waits for more text.
  std::size_t hold = 0;
  for (const auto& f : text_call_formats()) {
    for (std::size_t k = std::min(f.marker.size() - 1, buf.size()); k > hold; --k) {
      if (std::string_view(buf).substr(buf.size() - k) == f.marker.substr(0, k)) {
        hold = k;
        break;
      }
    }
  }
  pending_ = buf.substr(buf.size() - hold);
  buf.resize(buf.size() - hold);
  return buf;
}

text_call_scanner::outcome text_call_scanner::finish() {
  outcome o;
  if (!format_) {
    o.text = std::move(pending_);
    pending_.clear();
    return o;
  }
  o.calls = format_->parse(held_);
  if (o.calls.empty()) o.calls.push_back({"", held_});  // the marker alone: still a (broken) call
  return o;
}

}  // namespace warden::agent
