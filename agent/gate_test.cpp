#include <gtest/gtest.h>

#include "agent/gate.h"

namespace warden::agent {
namespace {

// Every flag combination × every tool kind (DESIGN.md §6):
// ask ⇔ enabled && (confirm_tool_calls || (confirm_code_execution && code tool)) && !bypass.
TEST(Gate, DecideOverEveryFlagCombinationAndToolKind) {
  const char* tools[] = {"python", "terminal", "render_html", "some_future_tool"};
  int asks = 0;
  for (int bits = 0; bits < 8; ++bits) {
    gate_flags f{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0};
    for (const char* t : tools) {
      const bool code = std::string(t) == "python" || std::string(t) == "terminal";
      for (bool enabled : {true, false}) {
        const gate_action got = decide(t, enabled, f);
        gate_action want = gate_action::run;
        if (!enabled) want = gate_action::not_enabled;
        else if ((f.confirm_tool_calls || (f.confirm_code_execution && code)) && !f.bypass_permissions) want = gate_action::ask;
        EXPECT_EQ(got, want) << t << " enabled=" << enabled << " confirm=" << f.confirm_tool_calls
                             << " confirm_code=" << f.confirm_code_execution << " bypass=" << f.bypass_permissions;
        if (got == gate_action::ask) ++asks;
      }
    }
  }
  // confirm_tool_calls (2 bypass-free combos × 4 tools) + confirm_code only (1 combo × 2 code tools)
  EXPECT_EQ(asks, 2 * 4 + 2);
}

TEST(Gate, SpotChecks) {
  EXPECT_EQ(decide("python", true, {false, true, false}), gate_action::ask);
  EXPECT_EQ(decide("render_html", true, {false, true, false}), gate_action::run);
  EXPECT_EQ(decide("terminal", true, {true, true, true}), gate_action::run);  // bypass wins over both
  EXPECT_EQ(decide("terminal", true, {false, false, false}), gate_action::run);
  EXPECT_EQ(decide("python", false, {false, false, true}), gate_action::not_enabled);
}

loop_options opts(bool tools, std::optional<std::vector<std::string>> enabled, gate_flags g, int budget = 25) {
  loop_options o;
  o.enable_tools = tools;
  o.enabled_tools = std::move(enabled);
  o.gate = g;
  o.max_tool_calls_per_message = budget;
  return o;
}

TEST(Gate, StreamRequirementAndItsScope) {
  struct row {
    loop_options o;
    bool stream;
    const char* param;  // nullptr = allowed
  } rows[] = {
      {opts(true, std::nullopt, {true, false, false}), false, "confirm_tool_calls"},
      {opts(true, std::nullopt, {true, false, false}), true, nullptr},
      {opts(true, std::nullopt, {false, true, false}), false, "confirm_code_execution"},
      {opts(true, std::vector<std::string>{"python"}, {false, true, false}), false, "confirm_code_execution"},
      {opts(true, std::vector<std::string>{"terminal"}, {false, true, false}), false, "confirm_code_execution"},
      {opts(true, std::vector<std::string>{"render_html"}, {false, true, false}), false, nullptr},
      {opts(true, std::vector<std::string>{}, {false, true, false}), false, nullptr},
      {opts(true, std::vector<std::string>{}, {true, false, false}), false, nullptr},
      {opts(true, std::nullopt, {false, true, false}, 0), false, nullptr},
      {opts(true, std::nullopt, {true, false, false}, 0), false, nullptr},
      {opts(false, std::nullopt, {true, true, false}), false, nullptr},
      {opts(true, std::nullopt, {true, true, true}), false, nullptr},
      {opts(true, std::nullopt, {false, false, false}), false, nullptr},
      {opts(true, std::vector<std::string>{"render_html"}, {true, false, false}), false, "confirm_tool_calls"},
  };
  int i = 0;
  for (const auto& r : rows) {
    auto e = stream_requirement(r.o, r.stream);
    if (r.param) {
      ASSERT_TRUE(e) << "row " << i;
      EXPECT_EQ(e->param, r.param) << "row " << i;
      EXPECT_EQ(e->code, errc::invalid_request);
      EXPECT_NE(e->message.find("stream=true"), std::string::npos);
    } else {
      EXPECT_FALSE(e) << "row " << i << ": " << (e ? e->message : "");
    }
    ++i;
  }
}

TEST(Gate, SelectedToolsFollowBuiltInOrder) {
  EXPECT_EQ(opts(true, std::nullopt, {}).selected_tools(), (std::vector<std::string>{"python", "terminal", "render_html"}));
  EXPECT_EQ(opts(true, std::vector<std::string>{"render_html", "python"}, {}).selected_tools(),
            (std::vector<std::string>{"python", "render_html"}));
  EXPECT_TRUE(opts(false, std::nullopt, {}).selected_tools().empty());
}

// The permission ladder (issue 8): what each flag combination amounts to, and the ceiling.
TEST(PermissionCeiling, EffectiveModeTable) {
  struct row {
    loop_options o;
    permission_mode want;
  };
  auto opts = [](bool tools, bool confirm, bool confirm_code, bool bypass,
                 std::optional<std::vector<std::string>> enabled = std::nullopt, int budget = 25) {
    loop_options o;
    o.enable_tools = tools;
    o.gate = {confirm, confirm_code, bypass};
    o.enabled_tools = std::move(enabled);
    o.max_tool_calls_per_message = budget;
    return o;
  };
  const row rows[] = {
      {opts(false, false, false, false), permission_mode::ask},  // nothing can run
      {opts(false, false, false, true), permission_mode::full},  // bypass is full, tools or not
      {opts(true, false, false, true), permission_mode::full},
      {opts(true, true, false, true), permission_mode::full},    // bypass wins over confirm
      {opts(true, false, false, false), permission_mode::off},   // tools on, no gate
      {opts(true, true, false, false), permission_mode::ask},
      {opts(true, false, true, false), permission_mode::auto_},  // render_html runs unasked
      {opts(true, false, true, false, std::vector<std::string>{"python", "terminal"}), permission_mode::ask},
      {opts(true, false, true, false, std::vector<std::string>{"render_html"}), permission_mode::auto_},
      {opts(true, false, false, false, std::vector<std::string>{}), permission_mode::ask},  // none selected
      {opts(true, false, false, false, std::nullopt, 0), permission_mode::ask},             // budget 0
  };
  int i = 0;
  for (const auto& r : rows) {
    EXPECT_EQ(effective_mode(r.o), r.want) << "row " << i;
    ++i;
  }
}

TEST(PermissionCeiling, RefusesAboveAndNamesTheFlags) {
  loop_options bypass;
  bypass.enable_tools = true;
  bypass.gate.bypass_permissions = true;
  loop_options flags_off;
  flags_off.enable_tools = true;
  loop_options gated;
  gated.enable_tools = true;
  gated.gate.confirm_tool_calls = true;
  for (auto c : {permission_mode::ask, permission_mode::auto_, permission_mode::off}) {
    auto e = check_permission_ceiling(bypass, c);
    ASSERT_TRUE(e) << to_string(c);
    EXPECT_EQ(http_status(e->code), 403);
    EXPECT_EQ(e->param, "bypass_permissions");
    EXPECT_NE(e->message.find("--max-permission full"), std::string::npos) << e->message;
  }
  EXPECT_FALSE(check_permission_ceiling(bypass, permission_mode::full));
  auto e = check_permission_ceiling(flags_off, permission_mode::ask);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "confirm_tool_calls");
  EXPECT_NE(e->message.find("--max-permission off"), std::string::npos) << e->message;
  EXPECT_TRUE(check_permission_ceiling(flags_off, permission_mode::auto_));
  EXPECT_FALSE(check_permission_ceiling(flags_off, permission_mode::off));
  for (auto c : {permission_mode::ask, permission_mode::auto_, permission_mode::off, permission_mode::full}) {
    EXPECT_FALSE(check_permission_ceiling(gated, c)) << to_string(c);
  }
}

TEST(PermissionCeiling, NamesRoundTrip) {
  for (auto m : {permission_mode::ask, permission_mode::auto_, permission_mode::off, permission_mode::full}) {
    EXPECT_EQ(parse_permission_mode(to_string(m)), m);
  }
  EXPECT_FALSE(parse_permission_mode("Full"));
  EXPECT_FALSE(parse_permission_mode(""));
}

}  // namespace
}  // namespace warden::agent
