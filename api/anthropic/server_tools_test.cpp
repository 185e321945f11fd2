// The gate rules of /v1/messages server tools (server_tools.h; reference unsloth-studio.md §3.3,
// DESIGN §6), as a table, plus the alias map.
#include <gtest/gtest.h>

#include "api/anthropic/server_tools.h"

namespace warden::api::anthropic {
namespace {

const selected_tool k_python{"python", true};
const selected_tool k_terminal{"terminal", true};
const selected_tool k_web{"web_search", false, true};
const selected_tool k_kb{"search_knowledge_base", false, true};
const selected_tool k_render{"render_html", false};

struct gate_case {
  const char* name;
  agent::gate_flags flags;
  std::vector<selected_tool> selected;
  const char* param;  ///< "" = allowed
  const char* says = "";
};

agent::gate_flags flags(std::optional<std::string> mode, std::optional<bool> confirm = std::nullopt,
                        bool code = false, bool bypass = false) {
  agent::gate_flags f;
  f.permission_mode = std::move(mode);
  f.confirm_tool_calls = confirm;
  f.confirm_code_execution = code;
  f.bypass_permissions = bypass;
  return f;
}

class MessagesGate : public ::testing::TestWithParam<gate_case> {};

TEST_P(MessagesGate, DecidesBeforeAnyModelWork) {
  const auto& c = GetParam();
  auto e = messages_gate(c.flags, c.selected);
  if (std::string(c.param).empty()) {
    EXPECT_FALSE(e.has_value()) << (e ? e->message : "");
    return;
  }
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, errc::invalid_request);
  EXPECT_EQ(e->param, c.param);
  EXPECT_NE(e->message.find(c.says), std::string::npos) << e->message;
}

const gate_case k_cases[] = {
    {"no_server_tools_anything_goes", flags("ask", true, true), {}, ""},
    // seed parity: confirm_code_execution on this route
    {"seed_confirm_code_with_python_is_400", flags("off", std::nullopt, true), {k_python}, "confirm_code_execution",
     "not supported for Anthropic Messages server tools"},
    {"seed_confirm_code_with_non_code_selection_is_ignored", flags(std::nullopt, std::nullopt, true), {k_web}, ""},
    {"confirm_code_with_terminal_among_others", flags("off", std::nullopt, true), {k_web, k_terminal},
     "confirm_code_execution", "'terminal' runs code"},
    {"confirm_code_with_explicit_opt_out_still_400", flags(std::nullopt, false, true), {k_python},
     "confirm_code_execution", ""},
    {"confirm_code_bypassed", flags(std::nullopt, std::nullopt, true, true), {k_python}, ""},
    {"confirm_tool_calls_true_is_400", flags("off", true), {k_web}, "confirm_tool_calls",
     "confirm_tool_calls is not supported for Anthropic Messages server tools"},
    {"confirm_tool_calls_true_with_bypass_passes", flags(std::nullopt, true, false, true), {k_python}, ""},
    {"confirm_tool_calls_true_with_mode_full_passes", flags("full", true), {k_python}, ""},
    {"explicit_confirm_false_opts_out", flags(std::nullopt, false), {k_python, k_terminal, k_render}, ""},
    {"explicit_confirm_false_opts_out_of_ask", flags("ask", false), {k_python}, ""},
    {"mode_ask_is_400", flags("ask"), {k_web}, "permission_mode", "'ask' has no confirmation channel"},
    {"unknown_mode_folds_to_ask", flags("sometimes"), {k_web}, "permission_mode", "set 'off'"},
    {"mode_auto_with_code_tool_is_400", flags("auto"), {k_python}, "permission_mode", "'python' could need one"},
    {"unset_mode_with_code_tool_is_400", flags(std::nullopt), {k_terminal}, "permission_mode", "(the default)"},
    {"unset_mode_with_render_html_is_400", flags(std::nullopt), {k_render}, "permission_mode", "'render_html'"},
    {"mode_auto_with_only_safe_tools_passes", flags("auto"), {k_web, k_kb}, ""},
    {"unset_mode_with_only_safe_tools_passes", flags(std::nullopt), {k_kb}, ""},
    {"mode_off_passes", flags("off"), {k_python, k_terminal}, ""},
    {"mode_full_passes", flags("full"), {k_python}, ""},
    {"bypass_passes_whatever_the_mode", flags("ask", std::nullopt, false, true), {k_python}, ""},
};

INSTANTIATE_TEST_SUITE_P(Table, MessagesGate, ::testing::ValuesIn(k_cases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ServerToolAliases, MapToWardensTools) {
  for (const char* t : {"web_search", "web_search_20250305", "web_fetch", "web_fetch_20250910", "web_fetch_20260209"}) {
    EXPECT_EQ(server_tool_for(t), std::optional<std::string>("web_search")) << t;
  }
  EXPECT_EQ(server_tool_for("python"), std::optional<std::string>("python"));
  EXPECT_EQ(server_tool_for("terminal"), std::optional<std::string>("terminal"));
  for (const char* t : {"bash_20250124", "code_execution_20250522", "text_editor_20250728", "custom", ""}) {
    EXPECT_FALSE(server_tool_for(t).has_value()) << t;
  }
}

}  // namespace
}  // namespace warden::api::anthropic
