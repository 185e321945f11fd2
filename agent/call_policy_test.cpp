#include <gtest/gtest.h>

#include "agent/call_policy.h"

namespace warden::agent {
namespace {

// Every reason × every flag combination × every trait that matters (runs_code; the others must
// not change the decision). The expected value is written out rule by rule, independently of
// the implementation's order of checks.
TEST(CallPolicy, EveryReasonFlagAndTraitCombination) {
  struct shape {
    const char* name;
    bool has_name, args_ok, enabled, sandbox_missing;
  };
  const shape shapes[] = {
      {"fine", true, true, true, false},        {"no name", false, true, true, false},
      {"bad args", true, false, true, false},   {"not enabled", true, true, false, false},
      {"no sandbox", true, true, true, true},   {"no name + bad args", false, false, false, true},
  };
  int counts[5] = {};
  for (const auto& sh : shapes) {
    for (int bits = 0; bits < 8; ++bits) {
      const gate_flags f{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0};
      for (int t = 0; t < 8; ++t) {
        tools::tool_traits tr{(t & 1) != 0, (t & 2) != 0, (t & 4) != 0, false};
        call_facts c{sh.has_name ? "python" : "", "{oops", sh.args_ok, sh.enabled, tr,
                     sh.sandbox_missing ? std::optional<std::string>("bwrap missing") : std::nullopt};
        const call_decision d = decide_call(c, f);
        call_verdict want;
        if (!sh.has_name || !sh.args_ok) want = call_verdict::refuse;
        else if (!sh.enabled) want = call_verdict::not_enabled;
        else if (tr.runs_code && sh.sandbox_missing && !f.bypass_permissions) want = call_verdict::sandbox_unavailable;
        else if (f.bypass_permissions) want = call_verdict::run;
        else if (f.confirm_tool_calls || (f.confirm_code_execution && tr.runs_code)) want = call_verdict::ask;
        else want = call_verdict::run;
        EXPECT_EQ(d.verdict, want) << sh.name << " flags=" << bits << " traits=" << t;
        const bool refusal = want == call_verdict::refuse || want == call_verdict::not_enabled ||
                             want == call_verdict::sandbox_unavailable;
        EXPECT_EQ(d.reason.empty(), !refusal) << sh.name << " flags=" << bits << " traits=" << t;
        ++counts[static_cast<int>(d.verdict)];
      }
    }
  }
  for (int v = 0; v < 5; ++v) EXPECT_GT(counts[v], 0) << "verdict " << v << " never produced";
}

TEST(CallPolicy, ReasonsSayWhatTheModelShouldDo) {
  const gate_flags none{};
  auto d = decide_call({"", "{}", true, true, {}, std::nullopt}, none);
  EXPECT_NE(d.reason.find("no tool name"), std::string::npos);
  d = decide_call({"python", "[1,2", false, true, {}, std::nullopt}, none);
  EXPECT_NE(d.reason.find("not a valid JSON object: [1,2"), std::string::npos) << d.reason;
  d = decide_call({"python", std::string(500, 'x'), false, true, {}, std::nullopt}, none);
  EXPECT_LT(d.reason.size(), 400u);  // the echoed arguments are cut at 200 bytes
  d = decide_call({"web", "{}", true, false, {}, std::nullopt}, none);
  EXPECT_EQ(d.reason, "Error: the tool 'web' is not available in this conversation.");
  d = decide_call({"python", "{}", true, true, {.runs_code = true}, "bwrap missing"}, {false, true, false});
  EXPECT_EQ(d.verdict, call_verdict::sandbox_unavailable);  // before anyone is asked
  EXPECT_EQ(d.reason, "Execution error: bwrap missing");
}

}  // namespace
}  // namespace warden::agent
