#include "agent/loop_guidance.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <regex>

namespace warden::agent {

namespace {

/// "`a` or `b`".
std::string tool_list(const std::vector<std::string>& names, const char* joiner) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? joiner : ", ";
    out += "`" + names[i] + "`";
  }
  return out;
}

std::vector<std::string> names_with(const std::vector<const tools::tool_info*>& tools,
                                    bool (*has)(const tools::tool_traits&)) {
  std::vector<std::string> out;
  for (const auto* t : tools) {
    if (has(t->traits)) out.push_back(t->name);
  }
  return out;
}

/// Lower case, typographic apostrophes as ', runs of whitespace as one space, trimmed.
std::string normalised(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "\xE2\x80\x99") == 0) {  // U+2019
      out += '\'';
      i += 2;
      space = false;
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (std::isspace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

/// The verbs of an action a tool would take; "know", "explain", "be" and the like are absent,
/// so "let me know", "I'll be happy to" and "let me explain" are not intents (unsloth #8907).
constexpr const char* k_action_verbs =
    "(run|use|call|check|compute|calculate|execute|write|create|search|look|try|start|test|open|read|list|fetch|"
    "get|find|verify|figure|work|begin|make|render|generate|install|inspect|query|count|plot|draw|go ahead|quickly|"
    "first|now)";

const std::regex& intent_regex() {
  static const std::regex re(std::string("\\b(i'll|i will|i'm going to|i am going to|let me|let's|let us) ") +
                                 k_action_verbs + "\\b" +
                                 "|\\b(first step|here's my plan|here is my plan|my plan is|step 1:)" +
                                 "|\\b(now|next|first),? i('ll| will)\\b",
                             std::regex::ECMAScript | std::regex::optimize);
  return re;
}

}  // namespace

std::string tool_prompt_nudge(std::string_view date, const std::vector<const tools::tool_info*>& tools,
                              bool full_access) {
  std::string n = "The current date is " + std::string(date) + ".\n";
  n += "You can call tools. When a step needs one, call it instead of describing what you would do, and use its "
       "result in your answer; when no tool is needed, answer directly.";
  const auto code = names_with(tools, [](const tools::tool_traits& t) { return t.runs_code; });
  const auto web = names_with(tools, [](const tools::tool_traits& t) { return t.reads_network; });
  const auto art = names_with(tools, [](const tools::tool_traits& t) { return t.once_per_answer; });
  if (!code.empty()) {
    n += "\nTo compute, check or transform something, run it with " + tool_list(code, " or ") +
         " and use the output rather than guessing it.";
  }
  if (!web.empty()) {
    n += "\nFor current facts or a page's content, use " + tool_list(web, " or ") + " and say where the answer came from.";
  }
  if (!art.empty()) {
    n += "\nTo show a page, chart or diagram, pass complete HTML to " + tool_list(art, " or ") +
         "; it is shown once per answer.";
  }
  if (full_access) {
    n += "\nYou have full access: code and commands run on the user's machine outside the sandbox, so do nothing "
         "destructive unless asked.";
  }
  return n;
}

void add_prompt_nudge(std::vector<model::message>& messages, const std::string& nudge) {
  if (!messages.empty() && messages.front().role == model::role::system) {
    auto& parts = messages.front().content;
    auto text = std::find_if(parts.rbegin(), parts.rend(),
                             [](const model::content_part& p) { return std::holds_alternative<model::text_part>(p); });
    if (text != parts.rend()) {
      auto& t = std::get<model::text_part>(*text).text;
      t += (t.empty() ? "" : "\n\n") + nudge;
      return;
    }
  }
  model::message sys;
  sys.role = model::role::system;
  sys.content.emplace_back(model::text_part{nudge});
  messages.insert(messages.begin(), std::move(sys));
}

std::string utc_date_today() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

bool announces_intent(std::string_view text) {
  if (text.size() >= k_max_intent_chars) return false;
  return std::regex_search(normalised(text), intent_regex());
}

std::string act_reprompt(const std::vector<std::string>& tool_names) {
  return "You have tools for this. If a step needs one, call " + tool_list(tool_names, " or ") +
         " now instead of describing it. If no tool is needed, give your final answer.";
}

std::optional<std::string> reprompt_tracker::after_text_turn(std::string_view text,
                                                             const std::vector<std::string>& tool_names) {
  if (denied_ || tool_names.empty() || !announces_intent(text)) return std::nullopt;
  if (tool_ran_ ? after_ >= k_reprompts_after_tool : before_ >= k_reprompts_before_tool) return std::nullopt;
  std::string norm = normalised(text);
  if (norm == last_) return std::nullopt;  // the retry restates itself: more re-prompts will not help
  last_ = std::move(norm);
  ++(tool_ran_ ? after_ : before_);
  return act_reprompt(tool_names);
}

}  // namespace warden::agent
