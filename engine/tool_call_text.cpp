#include "engine/tool_call_text.h"

#include <algorithm>
#include <cctype>
#include <span>

#include "common/json_util.h"
#include "common/utf8.h"

namespace warden::engine {

namespace {

using sv = std::string_view;
constexpr std::size_t npos = sv::npos;

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::size_t skip_space(sv s, std::size_t p) {
  while (p < s.size() && is_space(s[p])) ++p;
  return p;
}

sv trim(sv s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

/// Characters of a tool name (OpenAI allows [A-Za-z0-9_-]; MCP and clients add '.' and '/').
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' || c == '/' || c == ':';
}

/// `s` from `from` to the first `close` (its index) and the index after it; the text's end when
/// the closer never came.
struct until_result {
  sv body;
  std::size_t after;
};
until_result until(sv s, std::size_t from, sv close) {
  const std::size_t c = s.find(close, from);
  if (c == npos) return {s.substr(std::min(from, s.size())), s.size()};
  return {s.substr(from, c - from), c + close.size()};
}

/// until(), but a block never reaches past the next `reopen` (the next block of its family): a
/// block without its closer ends there, so a model repeating an opener costs linear time, and the
/// block after an unclosed one is still read.
until_result until_before(sv s, std::size_t from, sv close, sv reopen) {
  from = std::min(from, s.size());
  const std::size_t stop = s.find(reopen, from);
  const sv window = s.substr(from, stop == npos ? npos : stop - from);
  const std::size_t c = window.find(close);
  if (c == npos) return {window, stop == npos ? s.size() : stop};
  return {window.substr(0, c), from + c + close.size()};
}

/// Parses JSON, repairing a cut-short tail.
std::optional<json> parse_lenient(sv text) {
  text = trim(text);
  if (auto j = parse_json(text)) return j;
  if (auto fixed = repair_truncated_json(text)) return parse_json(*fixed);
  return std::nullopt;
}

/// End of the JSON array/object starting at `from` (one past it), or the text's end when it runs
/// to the end.
std::size_t json_value_end(sv s, std::size_t from) {
  const std::size_t e = json_balanced_end(s, from);
  return e == npos ? s.size() : e;
}

/// Where a closer may be looked for in a block whose body holds JSON: past the whole JSON values
/// (objects or arrays, side by side or comma-separated) from the first one after `from` that
/// starts before `naive_end` (where a plain search found the closer), so a closer or opener
/// written inside an argument string ({"code": "# </tool_call>"}) does not cut the call. `from`
/// when no whole value starts there (the call was cut short: the plain search stands).
std::size_t past_json(sv s, std::size_t from, std::size_t naive_end) {
  std::size_t p = s.find_first_of("{[", from);
  if (p == npos || p >= naive_end) return from;
  std::size_t end = from;
  while (p < s.size() && (s[p] == '{' || s[p] == '[')) {
    const std::size_t e = json_balanced_end(s, p);
    if (e == npos) break;
    end = e;
    p = skip_space(s, e);
    if (p < s.size() && s[p] == ',') p = skip_space(s, p + 1);
  }
  return end;
}

/// A JSON object's text from an arguments value: an object, or a string holding one.
std::optional<std::string> object_text(const json& a) {
  if (a.is_object()) return dump_safe(a);
  if (a.is_string()) {
    auto inner = parse_lenient(a.get<std::string>());
    if (inner && inner->is_object()) return dump_safe(*inner);
  }
  return std::nullopt;
}

/// A call from {"name":…, "arguments"|"parameters": {…} | "{…}"} (absent or null: no arguments).
std::optional<text_call> call_from_object(const json& j) {
  if (!j.is_object()) return std::nullopt;
  auto n = j.find("name");
  if (n == j.end() || !n->is_string() || n->get<std::string>().empty()) return std::nullopt;
  auto a = j.find("arguments");
  if (a == j.end()) a = j.find("parameters");
  if (a == j.end() || a->is_null()) return text_call{n->get<std::string>(), "{}"};
  auto args = object_text(*a);
  if (!args) return std::nullopt;
  return text_call{n->get<std::string>(), std::move(*args)};
}

/// Calls from one call object or an array of them; empty when any element is not a call.
std::vector<text_call> calls_from_json(const json& j) {
  std::vector<text_call> out;
  const json arr = j.is_array() ? j : json::array({j});
  for (const auto& e : arr) {
    auto c = call_from_object(e);
    if (!c) return {};
    out.push_back(std::move(*c));
  }
  return out;
}

/// A JSON value's text from markup that writes values as text: JSON when it reads as a number,
/// boolean, null, object or array, else the text as a string.
json loose_value(sv v) {
  const sv t = trim(v);
  if (!t.empty() && (t.front() == '{' || t.front() == '[' || t.front() == '-' || std::isdigit(static_cast<unsigned char>(t.front())) ||
                     t == "true" || t == "false" || t == "null")) {
    if (auto j = parse_json(t)) return *j;
  }
  return std::string(v);
}

/// A call block of one call, or of none when `c` is empty.
call_block block_of(std::size_t begin, std::size_t end, std::optional<text_call> c) {
  call_block b{begin, end, {}};
  if (c) b.calls.push_back(std::move(*c));
  return b;
}

// --- XML-like families -------------------------------------------------------------------

/// The value of `attr="…"` (or attr=…) in a tag's text, or "".
std::string attribute(sv tag, sv attr) {
  std::size_t p = tag.find(attr);
  if (p == npos) return "";
  p = skip_space(tag, p + attr.size());
  if (p >= tag.size() || tag[p] != '=') return "";
  p = skip_space(tag, p + 1);
  if (p < tag.size() && (tag[p] == '"' || tag[p] == '\'')) {
    const std::size_t q = tag.find(tag[p], p + 1);
    return std::string(tag.substr(p + 1, q == npos ? npos : q - p - 1));
  }
  std::size_t e = p;
  while (e < tag.size() && !is_space(tag[e]) && tag[e] != '>') ++e;
  return std::string(tag.substr(p, e - p));
}

/// `<parameter=K>V</parameter>` or `<parameter name="K">V</parameter>` pairs of `body`. Values
/// stay text (Qwen writes them unquoted); the newline the format puts around a value is not part
/// of it. `typed`: values that read as JSON numbers, booleans, objects… become those.
json xml_parameters(sv body, sv open, sv close, bool typed) {
  json args = json::object();
  std::size_t q = body.find(open);
  while (q != npos) {
    const std::size_t gt = body.find('>', q);
    if (gt == npos) break;
    sv tag = body.substr(q + open.size(), gt - q - open.size());
    std::string key = !tag.empty() && tag.front() == '=' ? std::string(trim(tag.substr(1))) : attribute(tag, "name");
    if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
    const std::size_t vend = body.find(close, gt + 1);
    sv v = body.substr(gt + 1, vend == npos ? npos : vend - gt - 1);
    if (!v.empty() && v.front() == '\n') v.remove_prefix(1);
    if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
    if (!key.empty()) args[key] = typed ? loose_value(v) : json(std::string(v));
    if (vend == npos) break;
    q = body.find(open, vend);
  }
  return args;
}

/// One `<function=NAME>…</function>` / `<function name="NAME">…` at `at`.
std::optional<call_block> parse_qwen_function(sv s, std::size_t at) {
  constexpr sv open = "<function";
  if (s.compare(at, open.size(), open) != 0) return std::nullopt;
  const std::size_t p = at + open.size();
  if (p >= s.size() || (s[p] != '=' && s[p] != ' ')) return std::nullopt;
  const std::size_t gt = s.find('>', p);
  const sv tag = s.substr(p, gt == npos ? npos : gt - p);
  std::string name = s[p] == '=' ? std::string(trim(tag.substr(1))) : attribute(tag, "name");
  if (gt == npos || name.empty()) return call_block{at, s.size(), {}};
  auto [body, after] = until_before(s, gt + 1, "</function>", "<function");
  json args = xml_parameters(body, "<parameter", "</parameter>", false);
  return block_of(at, after, text_call{std::move(name), dump_safe(args)});
}

/// Every <function…> of a wrapper's body, as calls (none if any is unreadable).
std::vector<text_call> qwen_functions(sv body) {
  std::vector<text_call> out;
  std::size_t p = body.find("<function");
  while (p != npos) {
    auto b = parse_qwen_function(body, p);
    if (!b || b->calls.empty()) return {};
    out.insert(out.end(), b->calls.begin(), b->calls.end());
    p = body.find("<function", b->end);
  }
  return out;
}

std::optional<call_block> parse_qwen_xml(sv s, std::size_t at) { return parse_qwen_function(s, at); }

/// Hermes/Qwen: `<tool_call>{"name":…,"arguments":…}</tool_call>`. Several JSON objects in one
/// block (side by side, or comma-separated) are several calls. A block without its closer ends
/// where its JSON does, so what the model wrote after an unclosed call stays text.
std::optional<call_block> parse_hermes(sv s, std::size_t at) {
  constexpr sv open = "<tool_call>";
  const std::size_t from = std::min(at + open.size(), s.size());
  auto [body, after] = until_before(s, from, "</tool_call>", open);
  if (!trim(body).empty() && trim(body).front() == '{') {  // the closer is past the JSON, not in its strings
    const std::size_t q = past_json(s, from, s.size());
    if (q > from) {
      auto [rest, rest_after] = until_before(s, q, "</tool_call>", open);
      body = s.substr(from, q - from + rest.size());
      after = rest_after;
    }
  }
  const bool closed = after - from > body.size();
  const sv t = trim(body);
  if (t.rfind("<function", 0) == 0) return call_block{at, after, qwen_functions(t)};
  if (t.empty() && after == s.size()) return call_block{at, after, {}};  // cut right after the opener
  if (t.empty() || t.front() != '{') return std::nullopt;                  // GLM's NAME<arg_key>…
  call_block b{at, after, {}};
  std::size_t end = 0;
  for (std::size_t p = 0; p < t.size() && t[p] == '{';) {
    const std::size_t e = json_value_end(t, p);
    auto j = parse_lenient(t.substr(p, e - p));
    auto c = j ? call_from_object(*j) : std::nullopt;
    if (!c) break;
    b.calls.push_back(std::move(*c));
    end = e;
    p = skip_space(t, e);
    if (p < t.size() && t[p] == ',') p = skip_space(t, p + 1);
  }
  if (!closed && !b.calls.empty() && !trim(t.substr(end)).empty()) {
    b.end = static_cast<std::size_t>(t.data() - s.data()) + end;
  }
  return b;
}

std::optional<call_block> parse_glm(sv s, std::size_t at) {
  constexpr sv open = "<tool_call>";
  auto [body, after] = until_before(s, at + open.size(), "</tool_call>", open);
  const std::size_t k = body.find("<arg_key>");
  const sv name = trim(body.substr(0, k));
  if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) return std::nullopt;
  json args = json::object();
  for (std::size_t p = k; p != npos;) {
    auto key = until(body, p + 9, "</arg_key>");
    const std::size_t v = body.find("<arg_value>", key.after);
    if (v == npos) break;
    auto val = until(body, v + 11, "</arg_value>");
    args[std::string(trim(key.body))] = loose_value(val.body);
    p = body.find("<arg_key>", val.after);
  }
  return block_of(at, after, text_call{std::string(name), dump_safe(args)});
}

std::optional<call_block> parse_seed_oss(sv s, std::size_t at) {
  auto [body, after] = until_before(s, at + sv("<seed:tool_call>").size(), "</seed:tool_call>", "<seed:tool_call>");
  return call_block{at, after, qwen_functions(body)};
}

std::optional<call_block> parse_minimax(sv s, std::size_t at) {
  auto [body, after] = until_before(s, at + sv("<minimax:tool_call>").size(), "</minimax:tool_call>", "<minimax:tool_call>");
  call_block b{at, after, {}};
  for (std::size_t p = body.find("<invoke"); p != npos;) {
    const std::size_t gt = body.find('>', p);
    if (gt == npos) return call_block{at, after, {}};
    std::string name = attribute(body.substr(p, gt - p), "name");
    auto inv = until(body, gt + 1, "</invoke>");
    if (name.empty()) return call_block{at, after, {}};
    b.calls.push_back({std::move(name), dump_safe(xml_parameters(inv.body, "<parameter", "</parameter>", true))});
    p = body.find("<invoke", inv.after);
  }
  return b;
}

// --- Pythonic calls: NAME(k="v", n=1) --------------------------------------------------------

/// Appends the character of the Python escape whose letter is at `i` (after the backslash) to
/// `out`, as UTF-8: \n \t \r \0 \xNN \uNNNN \UNNNNNNNN, and the escaped character itself for
/// the others (\\ \" \'); returns the index of the escape's last character.
std::size_t python_escape(sv s, std::size_t i, std::string& out) {
  const char e = s[i];
  const std::size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
  if (digits > 0 && i + digits < s.size()) {
    unsigned long cp = 0;
    for (std::size_t k = 1; k <= digits; ++k) {
      const char h = s[i + k];
      if (!std::isxdigit(static_cast<unsigned char>(h))) return i;  // not an escape: drop the backslash
      cp = cp * 16 + static_cast<unsigned long>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    append_utf8(out, static_cast<std::uint32_t>(cp));
    return i + digits;
  }
  out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == '0' ? '\0' : e;
  return i;
}

/// A Python literal at `p` (string, number, True/False/None, or a JSON-compatible list/dict) as
/// JSON; `p` moves past it. nullopt when it is none of these.
std::optional<json> python_literal(sv s, std::size_t& p) {
  if (p >= s.size()) return std::nullopt;
  const char c = s[p];
  if (c == '"' || c == '\'') {
    std::string out;
    for (std::size_t i = p + 1; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        i = python_escape(s, i + 1, out);
      } else if (s[i] == c) {
        p = i + 1;
        return json(out);
      } else {
        out += s[i];
      }
    }
    p = s.size();
    return json(out);  // cut short
  }
  if (c == '[' || c == '{') {
    const std::size_t e = json_value_end(s, p);
    auto j = parse_lenient(s.substr(p, e - p));
    p = e;
    return j;
  }
  std::size_t e = p;
  while (e < s.size() && s[e] != ',' && s[e] != ')' && !is_space(s[e])) ++e;
  const sv word = s.substr(p, e - p);
  p = e;
  if (word == "True") return json(true);
  if (word == "False") return json(false);
  if (word == "None") return json(nullptr);
  if (auto j = parse_json(word); j && j->is_number()) return j;
  return std::nullopt;
}

/// `NAME(k=v, …)` at `p` (`p` moves past the closing parenthesis); `name_end` is where NAME stops
/// (a '(' or ".call(").
std::optional<text_call> python_call(sv s, std::size_t& p, sv call_suffix) {
  const std::size_t open = s.find(call_suffix, p);
  if (open == npos) return std::nullopt;
  const sv name = trim(s.substr(p, open - p));
  if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) return std::nullopt;
  std::size_t q = open + call_suffix.size();
  json args = json::object();
  while (true) {
    q = skip_space(s, q);
    if (q >= s.size()) break;  // cut short
    if (s[q] == ')') {
      ++q;
      break;
    }
    if (s[q] == ',') {
      ++q;
      continue;
    }
    const std::size_t eq = s.find('=', q);
    if (eq == npos) return std::nullopt;
    const sv key = trim(s.substr(q, eq - q));
    if (key.empty() || !std::all_of(key.begin(), key.end(), is_name_char)) return std::nullopt;
    q = skip_space(s, eq + 1);
    auto v = python_literal(s, q);
    if (!v) return std::nullopt;
    args[std::string(key)] = std::move(*v);
  }
  p = q;
  return text_call{std::string(name), dump_safe(args)};
}

std::optional<call_block> parse_llama3(sv s, std::size_t at) {
  std::size_t p = skip_space(s, at + sv("<|python_tag|>").size());
  if (p < s.size() && s[p] == '{') {
    const std::size_t e = json_value_end(s, p);
    std::optional<text_call> c;
    if (auto j = parse_lenient(s.substr(p, e - p))) c = call_from_object(*j);
    return block_of(at, e, std::move(c));
  }
  auto c = python_call(s, p, ".call(");
  return block_of(at, c ? p : s.size(), std::move(c));
}

std::optional<call_block> parse_lfm2(sv s, std::size_t at) {
  auto [body, after] = until_before(s, at + sv("<|tool_call_start|>").size(), "<|tool_call_end|>", "<|tool_call_start|>");
  call_block b{at, after, {}};
  std::size_t p = skip_space(body, 0);
  if (p < body.size() && body[p] == '[') ++p;
  while (true) {
    p = skip_space(body, p);
    if (p >= body.size() || body[p] == ']') break;
    if (body[p] == ',') {
      ++p;
      continue;
    }
    auto c = python_call(body, p, "(");
    if (!c) return call_block{at, after, {}};
    b.calls.push_back(std::move(*c));
  }
  return b;
}

// --- JSON families -------------------------------------------------------------------------

/// A JSON value (array or object) of calls right after `opener` at `at`, up to `close` if given.
std::optional<call_block> json_calls_after(sv s, std::size_t at, sv opener, sv close) {
  const std::size_t p = skip_space(s, at + opener.size());
  if (p < s.size() && s[p] != '[' && s[p] != '{') return std::nullopt;
  const std::size_t e = p >= s.size() ? s.size() : json_value_end(s, p);
  std::size_t after = e;
  if (!close.empty()) {
    const std::size_t c = skip_space(s, e);
    if (s.compare(c, close.size(), close) == 0) after = c + close.size();
  }
  std::vector<text_call> calls;
  if (p < s.size()) {
    if (auto j = parse_lenient(s.substr(p, e - p))) calls = calls_from_json(*j);
  }
  return call_block{at, after, std::move(calls)};
}

std::optional<call_block> parse_granite(sv s, std::size_t at) { return json_calls_after(s, at, "<|tool_call|>", ""); }

std::optional<call_block> parse_phi4(sv s, std::size_t at) {
  // "functools" then the array: the opener includes the '['.
  return json_calls_after(s, at, "functools", "");
}

std::optional<call_block> parse_apertus(sv s, std::size_t at) {
  constexpr sv open = "<|tools_prefix|>";
  auto [body, after] = until_before(s, at + open.size(), "<|tools_suffix|>", open);
  call_block b{at, after, {}};
  auto j = parse_lenient(body);
  if (!j) return b;
  const json arr = j->is_array() ? *j : json::array({*j});
  for (const auto& e : arr) {  // [{"NAME": {args}}, …]
    if (!e.is_object() || e.size() != 1) return call_block{at, after, {}};
    auto args = object_text(e.begin().value());
    if (!args) return call_block{at, after, {}};
    b.calls.push_back({e.begin().key(), std::move(*args)});
  }
  return b;
}

std::optional<call_block> parse_llama32_bare(sv s, std::size_t at) {
  if (at >= s.size() || s[at] != '{') return std::nullopt;
  const std::size_t e = json_value_end(s, at);
  auto j = parse_lenient(s.substr(at, e - at));
  // Only an object of exactly a name and its arguments: other JSON is an answer, not a call.
  if (!j || !j->is_object() || !j->contains("name") || !(j->contains("parameters") || j->contains("arguments")) ||
      j->size() != 2) {
    return std::nullopt;
  }
  return block_of(at, e, call_from_object(*j));
}

std::optional<call_block> parse_mistral(sv s, std::size_t at) {
  constexpr sv marker = "[TOOL_CALLS]";
  std::size_t p = skip_space(s, at + marker.size());
  if (p < s.size() && (s[p] == '[' || s[p] == '{')) {
    const std::size_t e = json_value_end(s, p);
    std::vector<text_call> calls;
    if (auto j = parse_lenient(s.substr(p, e - p))) calls = calls_from_json(*j);
    return call_block{at, e, std::move(calls)};
  }
  // NAME[ARGS]{…} | NAME[CALL_ID]ID[ARGS]{…} | NAME{…}
  const std::size_t brace = s.find('{', p);
  sv head = s.substr(p, brace == npos ? npos : brace - p);
  if (const std::size_t a = head.find("[ARGS]"); a != npos) head = head.substr(0, a);
  if (const std::size_t c = head.find("[CALL_ID]"); c != npos) head = head.substr(0, c);
  const sv name = trim(head);
  if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) return call_block{at, s.size(), {}};
  if (brace == npos) return call_block{at, s.size(), {}};
  const std::size_t e = json_value_end(s, brace);
  auto j = parse_lenient(s.substr(brace, e - brace));
  std::optional<text_call> c;
  if (j) {
    if (auto args = object_text(*j)) c = text_call{std::string(name), std::move(*args)};
  }
  return block_of(at, e, std::move(c));
}

std::optional<call_block> parse_mistral_bare(sv s, std::size_t at) {
  const std::size_t a = s.find("[ARGS]", at);
  if (a == npos) return std::nullopt;
  const sv name = s.substr(at, a - at);
  if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) return std::nullopt;
  const std::size_t brace = skip_space(s, a + 6);
  if (brace >= s.size() || s[brace] != '{') return call_block{at, s.size(), {}};
  const std::size_t e = json_value_end(s, brace);
  std::optional<text_call> c;
  if (auto j = parse_lenient(s.substr(brace, e - brace))) {
    if (auto args = object_text(*j)) c = text_call{std::string(name), std::move(*args)};
  }
  return block_of(at, e, std::move(c));
}

// --- Gemma 4: call:NAME{key:<|"|>text<|"|>,n:1} ------------------------------------------------

constexpr sv k_gemma_quote = "<|\"|>";

std::optional<json> gemma_value(sv s, std::size_t& p, std::size_t depth);

/// `{k:v,…}` or `[v,…]` at `p`, nested at most k_max_json_depth deep.
std::optional<json> gemma_container(sv s, std::size_t& p, std::size_t depth = 0) {
  if (depth >= k_max_json_depth) return std::nullopt;
  const bool object = s[p] == '{';
  const char close = object ? '}' : ']';
  json out = object ? json::object() : json::array();
  ++p;
  while (true) {
    p = skip_space(s, p);
    if (p >= s.size()) return out;  // cut short
    if (s[p] == close) {
      ++p;
      return out;
    }
    if (s[p] == ',') {
      ++p;
      continue;
    }
    if (!object) {
      auto v = gemma_value(s, p, depth);
      if (!v) return std::nullopt;
      out.push_back(std::move(*v));
      continue;
    }
    std::string key;
    if (s.compare(p, k_gemma_quote.size(), k_gemma_quote) == 0) {
      auto k = gemma_value(s, p, depth);
      if (!k || !k->is_string()) return std::nullopt;
      key = k->get<std::string>();
    } else {
      const std::size_t colon = s.find(':', p);
      if (colon == npos) return std::nullopt;
      key = std::string(trim(s.substr(p, colon - p)));
      if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
      p = colon;
    }
    p = skip_space(s, p);
    if (p >= s.size() || s[p] != ':') return std::nullopt;
    p = skip_space(s, p + 1);
    auto v = gemma_value(s, p, depth);
    if (!v) return std::nullopt;
    out[key] = std::move(*v);
  }
}

std::optional<json> gemma_value(sv s, std::size_t& p, std::size_t depth) {
  if (p >= s.size()) return std::nullopt;
  if (s.compare(p, k_gemma_quote.size(), k_gemma_quote) == 0) {
    auto [text, after] = until(s, p + k_gemma_quote.size(), k_gemma_quote);
    p = after;
    return json(std::string(text));
  }
  if (s[p] == '{' || s[p] == '[') return gemma_container(s, p, depth + 1);
  if (s[p] == '"') return python_literal(s, p);
  std::size_t e = p;
  while (e < s.size() && s[e] != ',' && s[e] != '}' && s[e] != ']') ++e;
  if (e == p) return std::nullopt;  // a closer where a value belongs
  const sv word = trim(s.substr(p, e - p));
  p = e;
  if (auto j = parse_json(word)) return j;
  return json(std::string(word));
}

/// `call:NAME{…}` at `p`; `p` moves past it.
std::optional<text_call> gemma_call(sv s, std::size_t& p) {
  constexpr sv call = "call:";
  if (s.compare(p, call.size(), call) != 0) return std::nullopt;
  const std::size_t brace = s.find('{', p);
  if (brace == npos) return std::nullopt;
  const sv name = trim(s.substr(p + call.size(), brace - p - call.size()));
  if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) return std::nullopt;
  std::size_t q = brace;
  auto args = gemma_container(s, q);
  if (!args) return std::nullopt;
  p = q;
  return text_call{std::string(name), dump_safe(*args)};
}

std::optional<call_block> parse_gemma4(sv s, std::size_t at) {
  constexpr sv open = "<|tool_call>", close = "<tool_call|>";
  std::size_t p = skip_space(s, at + open.size());
  auto c = gemma_call(s, p);
  if (!c) return call_block{at, until_before(s, at + open.size(), close, open).after, {}};
  const std::size_t q = skip_space(s, p);
  const std::size_t after = s.compare(q, close.size(), close) == 0 ? q + close.size() : p;
  return block_of(at, after, std::move(c));
}

std::optional<call_block> parse_gemma_bare(sv s, std::size_t at) {
  std::size_t p = at;
  auto c = gemma_call(s, p);
  if (!c) return std::nullopt;
  return block_of(at, p, std::move(c));
}

// --- DeepSeek and Kimi K2 ------------------------------------------------------------------

/// The first of `spellings` in `s` from `from`: where, and its length.
std::pair<std::size_t, std::size_t> find_any(sv s, std::size_t from, std::span<const sv> spellings) {
  std::pair<std::size_t, std::size_t> best{npos, 0};
  for (sv w : spellings) {
    const std::size_t p = s.find(w, from);
    if (p < best.first) best = {p, w.size()};
  }
  return best;
}

constexpr sv k_ds_calls_begin[] = {"<｜tool▁calls▁begin｜>", "<｜tool_calls_begin｜>",
                                                         "<｜tool calls begin｜>", "<｜tool\\_calls\\_begin｜>"};
constexpr sv k_ds_call_begin[] = {"<｜tool▁call▁begin｜>", "<｜tool_call_begin｜>"};
constexpr sv k_ds_call_end[] = {"<｜tool▁call▁end｜>", "<｜tool_call_end｜>"};
constexpr sv k_ds_calls_end[] = {"<｜tool▁calls▁end｜>", "<｜tool_calls_end｜>"};
constexpr sv k_ds_sep[] = {"<｜tool▁sep｜>", "<｜tool_sep｜>"};

/// One DeepSeek call's text (between call-begin and call-end).
std::optional<text_call> deepseek_call(sv body) {
  auto [sep, sep_len] = find_any(body, 0, k_ds_sep);
  if (sep == npos) return std::nullopt;
  sv left = trim(body.substr(0, sep));
  sv right = body.substr(sep + sep_len);
  std::string name;
  if (left == "function") {  // R1 / V3: function<sep>NAME\n```json\n{…}\n```
    const std::size_t nl = right.find_first_of("\n`{");
    name = std::string(trim(right.substr(0, nl)));
    right = nl == npos ? sv() : right.substr(nl);
  } else {  // V3.1: NAME<sep>{…}
    name = std::string(left);
  }
  const std::size_t brace = right.find('{');
  if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) return std::nullopt;
  if (brace == npos) return std::nullopt;
  auto j = parse_lenient(right.substr(brace, json_value_end(right, brace) - brace));
  if (!j) return std::nullopt;
  auto args = object_text(*j);
  if (!args) return std::nullopt;
  return text_call{std::move(name), std::move(*args)};
}

std::optional<call_block> parse_deepseek(sv s, std::size_t at) {
  call_block b{at, s.size(), {}};
  for (std::size_t p = at;;) {
    auto [cb, cb_len] = find_any(s, p, k_ds_call_begin);
    auto [se, se_len] = find_any(s, p, k_ds_calls_end);
    if (cb == npos || (se != npos && se < cb)) {  // no more calls: the section ends here
      b.end = se != npos ? se + se_len : b.calls.empty() ? s.size() : p;
      return b;
    }
    // The call's end is past its JSON (an end marker inside an argument string does not count).
    const std::size_t from = cb + cb_len;
    const std::size_t q = past_json(s, from, std::min(find_any(s, from, k_ds_call_end).first, find_any(s, from, k_ds_calls_end).first));
    auto [ce, ce_len] = find_any(s, q, k_ds_call_end);
    const std::size_t section_end = find_any(s, q, k_ds_calls_end).first;
    const bool call_closed = ce != npos && (section_end == npos || ce < section_end);
    const std::size_t body_end = call_closed ? ce : section_end == npos ? s.size() : section_end;
    auto c = deepseek_call(s.substr(from, body_end - from));
    if (!c) return call_block{at, body_end, {}};
    b.calls.push_back(std::move(*c));
    p = call_closed ? ce + ce_len : body_end;
  }
}

std::optional<call_block> parse_kimi(sv s, std::size_t at) {
  constexpr sv begin = "<|tool_call_begin|>", arg = "<|tool_call_argument_begin|>", end = "<|tool_call_end|>";
  constexpr sv section_open = "<|tool_calls_section_begin|>";
  auto [section, after] = until_before(s, at + section_open.size(), "<|tool_calls_section_end|>", section_open);
  call_block b{at, after, {}};
  for (std::size_t p = section.find(begin); p != npos;) {
    const std::size_t a = section.find(arg, p);
    if (a == npos) return call_block{at, after, {}};
    sv id = trim(section.substr(p + begin.size(), a - p - begin.size()));  // functions.NAME:IDX
    if (id.rfind("functions.", 0) == 0) id.remove_prefix(10);
    if (const std::size_t colon = id.rfind(':'); colon != npos) id = id.substr(0, colon);
    const std::size_t json_from = a + arg.size();
    const std::size_t q = past_json(section, json_from, until(section, json_from, end).body.size() + json_from);
    auto [rest, next] = until(section, q, end);
    const sv json_text = section.substr(json_from, q - json_from + rest.size());
    auto j = parse_lenient(json_text);
    auto args = j ? object_text(*j) : std::nullopt;
    if (id.empty() || !args) return call_block{at, after, {}};
    b.calls.push_back({std::string(id), std::move(*args)});
    p = section.find(begin, next);
  }
  return b;
}

// --- the table -----------------------------------------------------------------------------

/// Families found at a declared name (NAME[ARGS]) or only at the turn's start.
constexpr const char* k_mistral_bare = "mistral_bare";
constexpr const char* k_llama32_bare = "llama32_bare";
constexpr const char* k_gemma_bare = "gemma_bare";

bool all_declared(const call_block& b, const std::set<std::string>& declared) {
  return !b.calls.empty() &&
         std::all_of(b.calls.begin(), b.calls.end(), [&](const text_call& c) { return declared.count(c.name) > 0; });
}

/// The earliest opener of a family (or NAME[ARGS] of a declared name, on a name boundary) at or
/// after `from`.
std::size_t next_opener(sv text, std::size_t from, const std::vector<std::string>& openers) {
  std::size_t best = npos;
  for (const auto& o : openers) {
    for (std::size_t p = text.find(o, from); p != npos && p < best; p = text.find(o, p + 1)) {
      const bool named = o.size() > 6 && o.compare(o.size() - 6, 6, "[ARGS]") == 0;
      if (named && p > 0 && is_name_char(text[p - 1])) continue;  // "my_get[ARGS]" is not "get"
      best = p;
      break;
    }
  }
  return best;
}

std::vector<std::string> openers_for(const std::set<std::string>& declared) {
  std::vector<std::string> out;
  for (const auto& f : text_call_families()) {
    for (sv o : f.openers) out.emplace_back(o);
  }
  for (const auto& n : declared) out.push_back(n + "[ARGS]");
  return out;
}

/// The block at `at` by the first family that reads it, or nullopt.
std::optional<call_block> block_at(sv text, std::size_t at, bool anchored_start) {
  for (const auto& f : text_call_families()) {
    const bool anchored = f.name == k_llama32_bare || f.name == k_gemma_bare;
    if (anchored != anchored_start) continue;
    bool matches = f.name == k_mistral_bare || anchored;
    for (sv o : f.openers) matches = matches || text.compare(at, o.size(), o) == 0;
    if (!matches) continue;
    if (auto b = f.parse(text, at)) return b;
  }
  return std::nullopt;
}

/// Where a start-anchored candidate (bare JSON, `call:NAME{…}`) in `t` ends: one past the
/// bracket that closes its first '{', or npos while it is open. The candidate is read up to there
/// and no further, streamed or whole, so the two always agree.
std::size_t anchored_end(sv t) {
  const std::size_t start = t.find('{', skip_space(t, 0));
  if (start == npos) return npos;
  return json_balanced_end(t, start);
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

const std::vector<text_call_family>& text_call_families() {
  static const std::vector<text_call_family> families = {
      {"hermes", {"<tool_call>"}, &parse_hermes},
      {"glm", {"<tool_call>"}, &parse_glm},
      {"qwen_xml", {"<function=", "<function name="}, &parse_qwen_xml},
      {"seed_oss", {"<seed:tool_call>"}, &parse_seed_oss},
      {"minimax", {"<minimax:tool_call>"}, &parse_minimax},
      {"llama3", {"<|python_tag|>"}, &parse_llama3},
      {"mistral", {"[TOOL_CALLS]"}, &parse_mistral},
      {"gemma4", {"<|tool_call>"}, &parse_gemma4},
      {"deepseek",
       {"<｜tool▁calls▁begin｜>", "<｜tool_calls_begin｜>", "<｜tool calls begin｜>", "<｜tool\\_calls\\_begin｜>",
        "<｜tool▁call▁begin｜>"},
       &parse_deepseek},
      {"kimi_k2", {"<|tool_calls_section_begin|>"}, &parse_kimi},
      {"granite", {"<|tool_call|>"}, &parse_granite},
      {"lfm2", {"<|tool_call_start|>"}, &parse_lfm2},
      {"phi4", {"functools["}, &parse_phi4},
      {"apertus", {"<|tools_prefix|>"}, &parse_apertus},
      {k_mistral_bare, {}, &parse_mistral_bare},
      {k_llama32_bare, {}, &parse_llama32_bare},
      {k_gemma_bare, {}, &parse_gemma_bare},
  };
  return families;
}

namespace {

/// Finds openers in one text from positions that only move forward: each opener's next
/// occurrence is remembered until the position passes it, so a text with many openers, or none,
/// is searched in linear time.
class opener_finder {
 public:
  opener_finder(sv text, const std::vector<std::string>& openers)
      : text_(text), openers_(openers), next_(openers.size(), 0), known_(openers.size(), false) {}
  std::size_t next(std::size_t from) {
    std::size_t best = npos;
    for (std::size_t i = 0; i < openers_.size(); ++i) {
      if (!known_[i] || (next_[i] != npos && next_[i] < from)) {
        next_[i] = find_one(openers_[i], from);
        known_[i] = true;
      }
      best = std::min(best, next_[i]);
    }
    return best;
  }

 private:
  std::size_t find_one(const std::string& o, std::size_t from) const {
    const bool named = o.size() > 6 && o.compare(o.size() - 6, 6, "[ARGS]") == 0;
    for (std::size_t p = text_.find(o, from); p != npos; p = text_.find(o, p + 1)) {
      if (!(named && p > 0 && is_name_char(text_[p - 1]))) return p;  // "my_get[ARGS]" is not "get"
    }
    return npos;
  }
  sv text_;
  const std::vector<std::string>& openers_;
  std::vector<std::size_t> next_;
  std::vector<bool> known_;
};

/// Blocks tried in one text that were not healed, before the rest is left as text: a model that
/// repeats an opener thousands of times costs bounded work.
constexpr int k_max_unhealed_blocks = 64;

/// The end of the start-anchored candidate of `t` that may be a call, or npos: one closed within
/// text_call_scanner::k_max_bare_call bytes, or one still open (cut short) in a text that short.
std::size_t eligible_anchored_end(sv t) {
  const std::size_t end = anchored_end(t);
  if (end != npos) return end <= text_call_scanner::k_max_bare_call ? end : npos;
  return t.size() <= text_call_scanner::k_max_bare_call ? t.size() : npos;
}

/// The [begin, end) ranges of ``` fenced code in `text` (a fence opens and closes on a line that
/// starts, after spaces, with three backticks; one never closed runs to the end). Markup there is
/// an example the model shows, not a call it makes.
std::vector<std::pair<std::size_t, std::size_t>> fenced_code(sv text) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t open = npos;
  for (std::size_t line = 0; line < text.size();) {
    const std::size_t nl = text.find('\n', line);
    const std::size_t first = text.find_first_not_of(" \t", line);
    if (first != npos && (nl == npos || first < nl) && text.compare(first, 3, "```") == 0) {
      if (open == npos) {
        open = line;
      } else {
        out.emplace_back(open, nl == npos ? text.size() : nl);
        open = npos;
      }
    }
    if (nl == npos) break;
    line = nl + 1;
  }
  if (open != npos) out.emplace_back(open, text.size());
  return out;
}

}  // namespace

std::vector<healed_piece> heal_text(std::string_view text, const std::set<std::string>& declared, bool at_start) {
  std::vector<healed_piece> out;
  bool healed = false;
  std::size_t shown = 0;  // text before this was emitted
  auto emit_text = [&](std::size_t to) {
    if (to > shown) out.push_back({std::string(text.substr(shown, to - shown)), std::nullopt});
  };
  auto take = [&](const call_block& b) {
    emit_text(b.begin);
    for (const auto& c : b.calls) out.push_back({"", c});
    healed = true;
    shown = b.end;
  };
  std::size_t pos = 0;
  if (at_start) {
    const std::size_t end = eligible_anchored_end(text);
    auto b = end == npos ? std::nullopt : block_at(text.substr(0, end), skip_space(text, 0), true);
    if (b && all_declared(*b, declared)) {
      take(*b);
      pos = b->end;
    }
  }
  const std::vector<std::string> openers = openers_for(declared);
  opener_finder find(text, openers);
  const auto fences = fenced_code(text);
  auto fence = fences.begin();
  for (int unhealed = 0; pos < text.size() && unhealed < k_max_unhealed_blocks;) {
    const std::size_t at = find.next(pos);
    if (at == npos) break;
    while (fence != fences.end() && fence->second <= at) ++fence;
    if (fence != fences.end() && fence->first <= at) {  // an example in fenced code: text
      pos = fence->second;
      continue;
    }
    auto b = block_at(text, at, false);
    if (b && all_declared(*b, declared)) {
      take(*b);
    } else {
      ++unhealed;
    }
    pos = b ? std::max(b->end, at + 1) : at + 1;
  }
  if (!healed) {
    out.clear();
    if (!text.empty()) out.push_back({std::string(text), std::nullopt});
    return out;
  }
  emit_text(text.size());
  // White space around the calls is the markup's, not the model's words.
  std::erase_if(out, [](const healed_piece& p) { return !p.call && trim(p.text).empty(); });
  return out;
}

// --- the scanner ---------------------------------------------------------------------------

text_call_scanner::text_call_scanner(std::set<std::string> declared)
    : declared_(std::move(declared)), openers_(openers_for(declared_)) {}

namespace {

/// True while `t` (the turn's text so far, white space included) may still become a
/// start-anchored call: bare JSON `{"name"` or Gemma's `call:`.
bool may_be_anchored_call(sv t) {
  t = trim(t);
  if (t.empty()) return true;
  if (t.front() == '{') {
    const std::size_t q = skip_space(t, 1);
    constexpr sv key = "\"name\"";
    const sv rest = t.substr(q);
    return rest.size() < key.size() ? key.substr(0, rest.size()) == rest : rest.substr(0, key.size()) == key;
  }
  constexpr sv call = "call:";
  return t.size() <= call.size() ? call.substr(0, t.size()) == t : t.substr(0, call.size()) == call;
}

}  // namespace

std::size_t text_call_scanner::opener_at(std::string_view buf, bool& found) const {
  // The last byte shown goes first, so a NAME[ARGS] opener is only found on a name boundary.
  const std::string with_last = last_shown_ + std::string(buf);
  const std::size_t skip = last_shown_.size();
  const std::size_t at = next_opener(with_last, skip, openers_);
  found = at != npos;
  if (found) return at - skip;
  // A possible opener's prefix at the end waits for more text (a name's, only on a boundary).
  std::size_t hold = 0;
  for (const auto& o : openers_) {
    const bool named = o.size() > 6 && o.compare(o.size() - 6, 6, "[ARGS]") == 0;
    for (std::size_t k = std::min(o.size() - 1, buf.size()); k > hold; --k) {
      if (buf.substr(buf.size() - k) != sv(o).substr(0, k)) continue;
      const std::size_t start = with_last.size() - k;
      if (named && start > 0 && is_name_char(with_last[start - 1])) continue;
      hold = k;
      break;
    }
  }
  return buf.size() - hold;
}

void fence_state::feed(std::string_view text) {
  for (char c : text) {
    if (c == '\n') {
      line_lead = true;
      ticks = 0;
    } else if (line_lead && ticks == 0 && (c == ' ' || c == '\t')) {
      continue;
    } else if (line_lead && c == '`') {
      if (++ticks == 3) {
        open = !open;
        line_lead = false;
      }
    } else {
      line_lead = false;
      ticks = 0;
    }
  }
}

std::string text_call_scanner::feed(std::string_view content) {
  if (draining_) {
    held_.append(content);
    return {};
  }
  std::string buf = std::move(pending_);
  pending_.clear();
  buf.append(content);
  if (at_start_ && !declared_.empty()) {
    const std::size_t end = anchored_end(buf);
    if (may_be_anchored_call(buf) && end == npos && buf.size() <= k_max_bare_call) {
      pending_ = std::move(buf);  // wait: it may be a bare call
      return {};
    }
    if (may_be_anchored_call(buf) && end != npos && end <= k_max_bare_call) {
      auto b = block_at(sv(buf).substr(0, end), skip_space(buf, 0), true);
      if (b && all_declared(*b, declared_)) {  // a call: hold the rest of the turn with it
        draining_ = true;
        held_at_start_ = true;
        held_ = std::move(buf);
        return {};
      }
    }
    if (!trim(buf).empty()) at_start_ = false;
  }
  std::string shown;
  for (;;) {
    bool found = false;
    const std::size_t cut = opener_at(buf, found);
    fence_state at_cut = shown_fence_;
    at_cut.feed(sv(buf).substr(0, cut));
    if (found && at_cut.open) {  // an example in fenced code: text; look again past its first byte
      shown += buf.substr(0, cut + 1);
      shown_fence_.feed(sv(buf).substr(0, cut + 1));
      last_shown_ = buf[cut];
      buf.erase(0, cut + 1);
      at_start_ = false;
      continue;
    }
    if (found) {
      draining_ = true;
      held_ = buf.substr(cut);
      buf.resize(cut);
      if (!trim(buf).empty()) at_start_ = false;
      return shown + buf;
    }
    pending_ = buf.substr(cut);
    buf.resize(cut);
    shown_fence_ = at_cut;
    if (!buf.empty()) last_shown_ = buf.back();
    return shown + buf;
  }
}

std::string text_call_scanner::held_text() {
  std::string out = std::move(pending_);
  out += held_;
  pending_.clear();
  held_.clear();
  draining_ = false;
  return out;
}

std::vector<healed_piece> text_call_scanner::finish() {
  if (!draining_) {
    // A bare call cut short is still read; anything else held back is text.
    std::string rest = std::move(pending_);
    pending_.clear();
    if (at_start_ && !declared_.empty() && !trim(rest).empty()) return heal_text(rest, declared_, true);
    if (rest.empty()) return {};
    return {{std::move(rest), std::nullopt}};
  }
  return heal_text(held_, declared_, held_at_start_);
}

}  // namespace warden::engine
