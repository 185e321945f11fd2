#include <gtest/gtest.h>

#include "agent/agent_fakes.h"
#include "agent/gate.h"

namespace warden::agent {
namespace {

const testing::fake_registry& reg() {
  static const testing::fake_registry r;
  return r;
}

std::vector<std::string> names(const std::vector<tools::tool*>& ts) {
  std::vector<std::string> out;
  for (auto* t : ts) out.push_back(t->info().name);
  return out;
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
    auto e = stream_requirement(r.o, r.stream, reg().reg);
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
  EXPECT_EQ(names(opts(true, std::nullopt, {}).selected(reg().reg)), (std::vector<std::string>{"python", "terminal", "render_html"}));
  EXPECT_EQ(names(opts(true, std::vector<std::string>{"render_html", "python"}, {}).selected(reg().reg)),
            (std::vector<std::string>{"python", "render_html"}));
  EXPECT_TRUE(opts(false, std::nullopt, {}).selected(reg().reg).empty());
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
    EXPECT_EQ(effective_mode(r.o, reg().reg), r.want) << "row " << i;
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
    auto e = check_permission_ceiling(bypass, c, reg().reg);
    ASSERT_TRUE(e) << to_string(c);
    EXPECT_EQ(http_status(e->code), 403);
    EXPECT_EQ(e->param, "bypass_permissions");
    EXPECT_NE(e->message.find("--max-permission full"), std::string::npos) << e->message;
  }
  EXPECT_FALSE(check_permission_ceiling(bypass, permission_mode::full, reg().reg));
  auto e = check_permission_ceiling(flags_off, permission_mode::ask, reg().reg);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "confirm_tool_calls");
  EXPECT_NE(e->message.find("--max-permission off"), std::string::npos) << e->message;
  EXPECT_TRUE(check_permission_ceiling(flags_off, permission_mode::auto_, reg().reg));
  EXPECT_FALSE(check_permission_ceiling(flags_off, permission_mode::off, reg().reg));
  for (auto c : {permission_mode::ask, permission_mode::auto_, permission_mode::off, permission_mode::full}) {
    EXPECT_FALSE(check_permission_ceiling(gated, c, reg().reg)) << to_string(c);
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
