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

}  // namespace
}  // namespace warden::agent
