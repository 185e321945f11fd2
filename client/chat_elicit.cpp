#include "client/chat_elicit.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "client/chat_format.h"
#include "common/utf8.h"

namespace warden::client {

namespace {

std::string string_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<double> number_at(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<std::int64_t> count_at(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

/// "12", "0.5", "1e+30": a bound as typed numbers are shown.
std::string number_text(double v) {
  if (std::abs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<std::int64_t>(v));
  return dump_safe(json(v));
}

/// ", at least 0", ", 1 to 5", ", at most 9"; "" when unbounded.
std::string range_text(const std::optional<double>& lo, const std::optional<double>& hi, const std::string& unit) {
  const std::string u = unit.empty() ? "" : " " + unit;
  if (lo && hi) return ", " + number_text(*lo) + " to " + number_text(*hi) + u;
  if (lo) return ", at least " + number_text(*lo) + u;
  if (hi) return ", at most " + number_text(*hi) + u;
  return "";
}

std::optional<double> as_double(const std::optional<std::int64_t>& v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

elicitation_field field_of(const std::string& name, const json& p) {
  elicitation_field f;
  f.name = name;
  f.title = string_at(p, "title");
  f.description = string_at(p, "description");
  f.type = string_at(p, "type");
  f.format = string_at(p, "format");
  if (auto e = p.find("enum"); e != p.end() && e->is_array()) {
    for (const auto& c : *e) {
      if (c.is_string()) f.choices.push_back(c.get<std::string>());
    }
  }
  if (auto e = p.find("enumNames"); e != p.end() && e->is_array() && e->size() == f.choices.size()) {
    for (const auto& c : *e) f.choice_labels.push_back(c.is_string() ? c.get<std::string>() : dump_safe(c));
  }
  f.minimum = number_at(p, "minimum");
  f.maximum = number_at(p, "maximum");
  f.min_length = count_at(p, "minLength");
  f.max_length = count_at(p, "maxLength");
  if (auto d = p.find("default"); d != p.end() && !d->is_null()) f.default_value = *d;
  return f;
}

std::optional<json> bounded(const elicitation_field& f, double v, json value, std::string& error) {
  if ((f.minimum && v < *f.minimum) || (f.maximum && v > *f.maximum)) {
    error = "must be " + range_text(f.minimum, f.maximum, "").substr(2);  // "must be at least 0", "must be 1 to 5"
    return std::nullopt;
  }
  return value;
}

std::optional<json> integer_value(const elicitation_field& f, const std::string& t, std::string& error) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE) {
    error = "type a whole number";
    return std::nullopt;
  }
  return bounded(f, static_cast<double>(v), json(static_cast<std::int64_t>(v)), error);
}

std::optional<json> number_value(const elicitation_field& f, const std::string& t, std::string& error) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  const bool hex_or_word = t.find_first_of("xXnNiI") != std::string::npos;  // 0x1p3, nan, inf
  if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE || !std::isfinite(v) || hex_or_word) {
    error = "type a number";
    return std::nullopt;
  }
  const bool whole = v == std::floor(v) && std::abs(v) < 9e15;
  return bounded(f, v, whole ? json(static_cast<std::int64_t>(v)) : json(v), error);
}

std::optional<json> choice_value(const elicitation_field& f, const std::string& t, std::string& error) {
  if (auto it = std::find(f.choices.begin(), f.choices.end(), t); it != f.choices.end()) return json(*it);
  char* end = nullptr;
  const long k = std::strtol(t.c_str(), &end, 10);
  if (!t.empty() && end == t.c_str() + t.size() && k >= 1 && static_cast<std::size_t>(k) <= f.choices.size()) {
    return json(f.choices[static_cast<std::size_t>(k - 1)]);
  }
  error = "type a number from 1 to " + std::to_string(f.choices.size());
  return std::nullopt;
}

std::optional<json> text_value(const elicitation_field& f, std::string_view line, std::string& error) {
  const std::string text = to_valid_utf8(line);
  const auto n = static_cast<std::int64_t>(utf8_length(text));
  if ((f.min_length && n < *f.min_length) || (f.max_length && n > *f.max_length)) {
    error = "must be " + range_text(as_double(f.min_length), as_double(f.max_length), "characters").substr(2) +
            " (this is " + std::to_string(n) + ")";
    return std::nullopt;
  }
  return json(text);
}

/// "call text" or "key: value, key: value", for a line of the inbox.
std::string short_arguments(const json& args) {
  if (args.is_object() && args.size() == 1 && args.begin()->is_string()) return args.begin()->get<std::string>();
  if (!args.is_object()) return dump_safe(args);
  if (args.empty()) return "(no arguments)";
  std::string out;
  for (const auto& [k, v] : args.items()) {
    out += (out.empty() ? "" : ", ") + k + ": " + (v.is_string() ? v.get<std::string>() : dump_safe(v));
  }
  return out;
}

}  // namespace

std::vector<elicitation_field> form_fields(const json& schema) {
  std::vector<elicitation_field> out;
  if (!schema.is_object()) return out;
  auto props = schema.find("properties");
  if (props == schema.end() || !props->is_object()) return out;
  std::vector<std::string> required;
  if (auto r = schema.find("required"); r != schema.end() && r->is_array()) {
    for (const auto& name : *r) {
      if (name.is_string() && std::find(required.begin(), required.end(), name.get<std::string>()) == required.end()) {
        required.push_back(name.get<std::string>());
      }
    }
  }
  for (const auto& name : required) {
    if (auto p = props->find(name); p != props->end() && p->is_object()) {
      out.push_back(field_of(name, *p));
      out.back().required = true;
    }
  }
  for (const auto& [name, p] : props->items()) {
    if (!p.is_object() || std::find(required.begin(), required.end(), name) != required.end()) continue;
    out.push_back(field_of(name, p));
  }
  return out;
}

std::string field_label(const elicitation_field& f) { return f.title.empty() ? f.name : f.title; }

std::string field_hint(const elicitation_field& f) {
  if (!f.choices.empty()) return "choose 1-" + std::to_string(f.choices.size());
  if (f.type == "boolean") return "y/n";
  if (f.type == "integer") return "whole number" + range_text(f.minimum, f.maximum, "");
  if (f.type == "number") return "number" + range_text(f.minimum, f.maximum, "");
  const std::string kind = f.format.empty() ? "text" : f.format;
  return kind + range_text(as_double(f.min_length), as_double(f.max_length), "characters");
}

std::optional<json> parse_field_value(const elicitation_field& f, std::string_view line, std::string& error) {
  error.clear();
  const std::string t = trim(line);
  if (!f.choices.empty()) return choice_value(f, t, error);
  if (f.type == "boolean") {
    const std::string l = lower(t);
    if (l == "y" || l == "yes" || l == "true") return json(true);
    if (l == "n" || l == "no" || l == "false") return json(false);
    error = "type y or n";
    return std::nullopt;
  }
  if (f.type == "integer") return integer_value(f, t, error);
  if (f.type == "number") return number_value(f, t, error);
  return text_value(f, line, error);
}

const char* wire_name(elicit_decision d) {
  switch (d) {
    case elicit_decision::accept: return "accept";
    case elicit_decision::decline: return "decline";
    case elicit_decision::cancel: return "cancel";
  }
  return "cancel";
}

std::optional<elicit_decision> parse_elicit_answer(std::string_view line) {
  const std::string t = lower(trim(line));
  if (t == "y" || t == "yes") return elicit_decision::accept;
  if (t == "d" || t == "decline" || t == "n" || t == "no") return elicit_decision::decline;
  if (t == "c" || t == "cancel") return elicit_decision::cancel;
  return std::nullopt;
}

json elicit_confirm_body(std::string_view approval_id, elicit_decision d, const json& content,
                         std::string_view session_id) {
  json body = {{"approval_id", std::string(approval_id)}, {"decision", wire_name(d)},
               {"session_id", std::string(session_id)}};
  if (d == elicit_decision::accept) body["content"] = content.is_object() ? content : json::object();
  return body;
}

std::string error_field(std::string_view body) {
  auto j = parse_json(body);
  if (!j || !j->is_object()) return "";
  auto e = j->find("error");
  if (e == j->end() || !e->is_object()) return "";
  const std::string param = string_at(*e, "param");
  constexpr std::string_view prefix = "content.";
  return param.rfind(prefix, 0) == 0 ? param.substr(prefix.size()) : "";
}

std::optional<std::vector<inbox_item>> parse_inbox(std::string_view body) {
  auto j = parse_json(body);
  if (!j || !j->is_object()) return std::nullopt;
  auto data = j->find("data");
  if (data == j->end() || !data->is_array()) return std::nullopt;
  std::vector<inbox_item> out;
  for (const auto& a : *data) {
    if (!a.is_object() || string_at(a, "approval_id").empty()) continue;
    inbox_item it;
    it.kind = string_at(a, "kind").empty() ? "tool_call" : string_at(a, "kind");
    it.session_id = string_at(a, "session_id");
    if (auto x = a.find("expires_at_ms"); x != a.end() && x->is_number_integer()) it.expires_at_ms = x->get<std::int64_t>();
    // the stream's own frames, so the inbox reuses their parsing and their prompts
    json frame = {{"type", "tool_start"}, {"tool_name", string_at(a, "tool")}, {"tool_call_id", string_at(a, "tool_call_id")},
                  {"approval_id", string_at(a, "approval_id")}, {"awaiting_confirmation", true}};
    if (auto args = a.find("arguments"); args != a.end()) frame["arguments"] = *args;
    if (auto risk = a.find("risk"); risk != a.end() && risk->is_object()) frame["risk"] = *risk;
    it.card = std::get<tool_start_event>(parse_stream_data(dump_safe(frame)).at(0));
    if (it.kind == "elicitation") {
      const json el = a.contains("elicitation") && a["elicitation"].is_object() ? a["elicitation"] : json::object();
      json q = {{"type", "elicitation_request"}, {"tool_name", string_at(a, "tool")},
                {"tool_call_id", string_at(a, "tool_call_id")}, {"approval_id", string_at(a, "approval_id")},
                {"server", string_at(el, "server")}, {"mode", string_at(el, "mode")}, {"message", string_at(el, "message")},
                {"url", string_at(el, "url")}};
      if (auto s = el.find("requestedSchema"); s != el.end()) q["requested_schema"] = *s;
      it.question = std::get<elicitation_event>(parse_stream_data(dump_safe(q)).at(0));
    }
    out.push_back(std::move(it));
  }
  return out;
}

std::string inbox_line(const inbox_item& item, std::int64_t now_ms) {
  std::string line;
  if (item.kind == "elicitation") {
    const elicitation_event& q = item.question;
    line = one_line(q.server.empty() ? "an MCP server" : q.server, 40) + " asks: " + one_line(q.message, 80) + " (" +
           one_line(q.tool, 40) + (q.mode == "url" ? ", a URL" : "") + ")";
  } else {
    line = one_line(item.card.tool, 40) + " · " + one_line(short_arguments(item.card.arguments), 60);
  }
  if (!item.session_id.empty()) line += " · session " + one_line(item.session_id, 64);
  if (item.expires_at_ms > 0) {
    const std::int64_t left = std::max<std::int64_t>(0, (item.expires_at_ms - now_ms + 999) / 1000);
    line += " · expires in " + std::to_string(left) + " s";
  }
  return line;
}

}  // namespace warden::client
