#include "model/conversation.h"

namespace warden::model {

const char* to_string(role r) noexcept {
  switch (r) {
    case role::system: return "system";
    case role::user: return "user";
    case role::assistant: return "assistant";
    case role::tool: return "tool";
  }
  return "user";
}

std::optional<role> parse_role(std::string_view s) noexcept {
  if (s == "developer") return role::system;
  for (auto r : {role::system, role::user, role::assistant, role::tool}) {
    if (s == to_string(r)) return r;
  }
  return std::nullopt;
}

std::string message::text() const {
  std::string out;
  for (const auto& p : content) {
    if (const auto* t = std::get_if<text_part>(&p)) out += t->text;
  }
  return out;
}

std::vector<const tool_call_part*> message::tool_calls() const {
  std::vector<const tool_call_part*> out;
  for (const auto& p : content) {
    if (const auto* c = std::get_if<tool_call_part>(&p)) out.push_back(c);
  }
  return out;
}

const char* to_string(finish_reason f) noexcept {
  switch (f) {
    case finish_reason::stop: return "stop";
    case finish_reason::length: return "length";
    case finish_reason::tool_calls: return "tool_calls";
    case finish_reason::content_filter: return "content_filter";
  }
  return "stop";
}

std::optional<finish_reason> parse_finish_reason(std::string_view s) noexcept {
  for (auto f : {finish_reason::stop, finish_reason::length, finish_reason::tool_calls, finish_reason::content_filter}) {
    if (s == to_string(f)) return f;
  }
  return std::nullopt;
}

std::optional<std::string> tool_name_problem(std::string_view name) {
  constexpr std::size_t k_max = 128;
  if (name.empty()) return "must not be empty";
  if (name.size() > k_max) return "is " + std::to_string(name.size()) + " characters long; at most 128 are allowed";
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.' || c == ':' || c == '/';
    if (!ok) return "may hold only letters, digits and _ - . : / (no spaces, quotes or other characters)";
  }
  return std::nullopt;
}

}  // namespace warden::model
