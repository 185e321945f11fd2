#include "client/chat_events.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "api/wire/vocabulary.h"

namespace warden::client {

namespace {

namespace n = api::wire::names;

std::string string_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool bool_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::optional<risk_info> risk_of(const json& frame) {
  auto it = frame.find(n::risk);
  if (it == frame.end() || !it->is_object()) return std::nullopt;
  risk_info r;
  r.level = string_at(*it, "level");
  if (auto reasons = it->find("reasons"); reasons != it->end() && reasons->is_array()) {
    for (const auto& reason : *reasons) {
      if (reason.is_string()) r.reasons.push_back(reason.get<std::string>());
    }
  }
  return r;
}

tool_start_event tool_start_of(const json& f) {
  tool_start_event e;
  e.tool = string_at(f, n::tool_name);
  e.call_id = string_at(f, n::tool_call_id);
  if (auto a = f.find(n::arguments); a != f.end()) e.arguments = *a;
  e.approval_id = string_at(f, n::approval_id);
  e.awaiting = bool_at(f, n::awaiting_confirmation) && !e.approval_id.empty();
  if (auto p = f.find(n::provenance); p != f.end() && p->is_object()) e.provisional = bool_at(*p, n::provisional);
  e.risk = risk_of(f);
  return e;
}

tool_end_event tool_end_of(const json& f) {
  tool_end_event e;
  e.tool = string_at(f, n::tool_name);
  e.call_id = string_at(f, n::tool_call_id);
  e.result = string_at(f, n::result);
  if (auto d = f.find(n::decided_by); d != f.end() && d->is_string()) e.decided_by = d->get<std::string>();
  if (auto a = f.find(n::allowed); a != f.end() && a->is_boolean()) e.allowed = a->get<bool>();
  return e;
}

elicitation_event elicitation_of(const json& f) {
  elicitation_event e;
  e.tool = string_at(f, n::tool_name);
  e.call_id = string_at(f, n::tool_call_id);
  e.approval_id = string_at(f, n::approval_id);
  e.server = string_at(f, "server");
  if (std::string mode = string_at(f, "mode"); !mode.empty()) e.mode = std::move(mode);
  e.message = string_at(f, "message");
  if (auto s = f.find("requested_schema"); s != f.end() && s->is_object()) e.schema = *s;
  e.url = string_at(f, "url");
  return e;
}

/// A control frame ({"type": …}); nullopt for types this client does not know.
std::optional<stream_event> control_event(const json& f, const std::string& type) {
  if (type == n::tool_start) return tool_start_of(f);
  if (type == n::tool_status) return tool_status_event{string_at(f, n::content)};
  if (type == n::tool_output) return tool_output_event{string_at(f, n::tool_name), string_at(f, n::tool_call_id), string_at(f, n::text)};
  if (type == n::tool_args) return tool_args_event{string_at(f, n::tool_name), string_at(f, n::tool_call_id), string_at(f, n::text)};
  if (type == n::tool_end) return tool_end_of(f);
  if (type == "elicitation_request") return elicitation_of(f);
  return std::nullopt;
}

void chunk_events(const json& f, std::vector<stream_event>& out) {
  auto choices = f.find("choices");
  if (choices == f.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) return;
  const json& c = (*choices)[0];
  if (auto d = c.find("delta"); d != c.end() && d->is_object()) {
    std::string reasoning = string_at(*d, "reasoning_content");
    if (!reasoning.empty()) out.push_back(text_event{std::move(reasoning), true});
    std::string content = string_at(*d, "content");
    if (!content.empty()) out.push_back(text_event{std::move(content), false});
  }
  std::string finish = string_at(c, "finish_reason");
  if (!finish.empty()) out.push_back(finish_event{std::move(finish)});
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

bool valid_tool_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '.' || c == '-';
  });
}

}  // namespace

std::vector<stream_event> parse_stream_data(std::string_view data) {
  std::vector<stream_event> out;
  if (data == "[DONE]") {
    out.push_back(done_event{});
    return out;
  }
  auto parsed = parse_json(data);
  if (!parsed || !parsed->is_object()) return out;
  const json& f = *parsed;
  if (auto err = f.find("error"); err != f.end()) {
    std::string message = err->is_object() ? string_at(*err, "message") : err->is_string() ? err->get<std::string>() : "";
    out.push_back(error_event{message.empty() ? std::string("the server reported an error") : message});
    return out;
  }
  if (auto type = f.find(n::type); type != f.end() && type->is_string()) {
    if (auto e = control_event(f, type->get<std::string>())) out.push_back(std::move(*e));
    return out;
  }
  chunk_events(f, out);
  return out;
}

std::optional<decision> parse_answer(std::string_view line) {
  const std::string t = trim(line);
  if (t == "y" || t == "Y" || lower(t) == "yes") return decision::allow;
  if (t == "a") return decision::allow_session;
  if (t == "A") return decision::allow_always;
  if (t == "n" || t == "N" || lower(t) == "no") return decision::deny;
  return std::nullopt;
}

const char* wire_name(decision d) {
  switch (d) {
    case decision::allow: return n::allow;
    case decision::allow_session: return n::allow_session;
    case decision::allow_always: return n::allow_always;
    case decision::deny: return n::deny;
  }
  return n::deny;
}

std::optional<permission_mode> parse_mode(std::string_view text) { return parse_permission_mode(lower(trim(text))); }

tool_selection parse_tool_selection(std::string_view text, std::string& error) {
  std::vector<std::string> names;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && std::find(names.begin(), names.end(), word) == names.end()) names.push_back(word);
    word.clear();
  };
  for (char c : text) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) flush();
    else word += c;
  }
  flush();
  error.clear();
  if (names.size() == 1 && lower(names[0]) == "all") return std::nullopt;
  if (names.size() == 1 && lower(names[0]) == "none") return std::vector<std::string>{};
  if (names.empty()) {
    error = "name the tools (python,terminal,edit_file,web_search,render_html), or say all or none";
    return std::nullopt;
  }
  for (const auto& n : names) {
    if (!valid_tool_name(n)) {
      error = "not a tool name: '" + n + "' (letters, digits, '_', '.', '-'; at most 64)";
      return std::nullopt;
    }
    if (std::find(std::begin(k_known_tools), std::end(k_known_tools), n) == std::end(k_known_tools)) {
      error = "unknown tool '" + n + "' (the tools are python, terminal, edit_file, web_search and render_html)";
      return std::nullopt;
    }
  }
  return names;
}

std::string describe_tools(const tool_selection& tools) {
  if (!tools) return "all";
  if (tools->empty()) return "none";
  std::string out;
  for (const auto& t : *tools) out += (out.empty() ? "" : ", ") + t;
  return out;
}

command_line parse_command(std::string_view line) {
  const std::string t = trim(line);
  if (t.size() < 2 || t[0] != '/') return {};
  const std::size_t space = t.find_first_of(" \t");
  if (space == std::string::npos) return {t.substr(1), ""};
  return {t.substr(1, space - 1), trim(std::string_view(t).substr(space))};
}

json chat_request_body(const run_settings& s, const std::vector<chat_message>& messages, std::string_view cancel_id) {
  json msgs = json::array();
  if (!s.system_prompt.empty()) msgs.push_back({{"role", "system"}, {"content", s.system_prompt}});
  for (const auto& m : messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
  json body = {{"model", s.model},
               {"messages", std::move(msgs)},
               {"stream", true},
               {"enable_tools", !s.tools || !s.tools->empty()},  // "/tools none": a plain chat
               {"permission_mode", to_string(s.mode)},
               {"session_id", s.session_id},
               {"cancel_id", std::string(cancel_id)}};
  if (s.tools && !s.tools->empty()) body["enabled_tools"] = *s.tools;
  if (s.mcp) body["mcp_enabled"] = true;
  return body;
}

json confirm_body(std::string_view approval_id, decision d, std::string_view session_id) {
  return {{n::approval_id, std::string(approval_id)}, {"decision", wire_name(d)}, {"session_id", std::string(session_id)}};
}

std::string http_error_message(long status, std::string_view body) {
  std::string message;
  if (auto j = parse_json(body); j && j->is_object()) {
    if (auto e = j->find("error"); e != j->end()) {
      message = e->is_object() ? string_at(*e, "message") : e->is_string() ? e->get<std::string>() : "";
    }
  }
  if (message.empty()) {
    std::string_view first = body.substr(0, body.find('\n'));
    message = trim(to_valid_utf8(utf8_prefix(first, 200)));
  }
  return "HTTP " + std::to_string(status) + (message.empty() ? "" : ": " + message);
}

std::optional<std::string> first_model_id(std::string_view body) {
  auto j = parse_json(body);
  if (!j || !j->is_object()) return std::nullopt;
  auto data = j->find("data");
  if (data == j->end() || !data->is_array()) return std::nullopt;
  for (const auto& m : *data) {
    if (m.is_object()) {
      std::string id = string_at(m, "id");
      if (!id.empty()) return id;
    }
  }
  return std::nullopt;
}

std::string normalize_base_url(std::string_view url) {
  std::string u = trim(url);
  while (!u.empty() && u.back() == '/') u.pop_back();
  if (u.size() >= 3 && u.compare(u.size() - 3, 3, "/v1") == 0) u.resize(u.size() - 3);
  while (!u.empty() && u.back() == '/') u.pop_back();
  return u;
}

std::string url_encode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace warden::client
