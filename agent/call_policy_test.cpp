#include <gtest/gtest.h>

#include "agent/call_policy.h"

namespace warden::agent {
namespace {

call_facts facts(std::string_view name, std::string_view raw, bool valid, bool enabled, tools::tool_traits traits,
                 std::optional<std::string> unavailable) {
  call_facts c;
  c.name = name;
  c.raw_arguments = raw;
  c.arguments_valid = valid;
  c.enabled = enabled;
  c.traits = traits;
  c.unavailable = std::move(unavailable);
  return c;
}

// Every reason × every flag combination × every trait that matters (runs_code; the others must
// not change the decision). The expected value is written out rule by rule, independently of
// the implementation's order of checks.
TEST(CallPolicy, EveryReasonPolicyRiskRuleAndTraitCombination) {
  struct shape {
    const char* name;
    bool has_name, args_ok, enabled, sandbox_missing;
  };
  const shape shapes[] = {
      {"fine", true, true, true, false},        {"no name", false, true, true, false},
      {"bad args", true, false, true, false},   {"not enabled", true, true, false, false},
      {"no sandbox", true, true, true, true},   {"no name + bad args", false, false, false, true},
  };
  const permission_mode modes[] = {permission_mode::ask, permission_mode::auto_, permission_mode::off, permission_mode::full};
  int counts[5] = {};
  int by_counts[8] = {};
  for (const auto& sh : shapes) {
    for (auto m : modes) {
      for (int bits = 0; bits < 4; ++bits) {
        gate_policy p;
        p.mode = m;
        p.bypass = m == permission_mode::full;
        p.confirm = (bits & 1) != 0 && !p.bypass;
        p.confirm_code = (bits & 2) != 0 && !p.bypass;
        for (int t = 0; t < 32; ++t) {
          tools::tool_traits tr{(t & 1) != 0, (t & 2) != 0, (t & 4) != 0, false};
          const bool high = (t & 8) != 0, has_rule = (t & 16) != 0;
          call_facts c = facts(sh.has_name ? "python" : "", "{oops", sh.args_ok, sh.enabled, tr,
                               sh.sandbox_missing ? std::optional<std::string>("bwrap missing") : std::nullopt);
          c.high_risk = high;
          if (has_rule) c.rule_id = "rule_1";
          const call_decision d = decide_call(c, p);
          // The expectation, rule by rule (call_policy.h):
          call_verdict want;
          decided_by by = decided_by::policy;
          const bool mode_gate = p.confirm && m != permission_mode::off && (m != permission_mode::auto_ || high);
          const bool asks = !p.bypass && ((p.confirm_code && tr.runs_code) || mode_gate);
          if (!sh.has_name || !sh.args_ok) want = call_verdict::refuse;
          else if (!sh.enabled) want = call_verdict::not_enabled;
          else if (tr.runs_code && sh.sandbox_missing && !p.bypass) want = call_verdict::sandbox_unavailable;
          else if (p.bypass) {
            want = call_verdict::run;
            by = decided_by::bypass;
          } else if (!asks) {
            want = call_verdict::run;
            if (p.confirm && m == permission_mode::auto_) by = decided_by::auto_classifier;
          } else if (has_rule) {
            want = call_verdict::run;
            by = decided_by::rule;
          } else {
            want = call_verdict::ask;
          }
          const std::string where = std::string(sh.name) + " mode=" + to_string(m) + " bits=" + std::to_string(bits) +
                                    " t=" + std::to_string(t);
          EXPECT_EQ(d.verdict, want) << where;
          if (want == call_verdict::run) {
            EXPECT_EQ(d.by, by) << where;
          }
          EXPECT_EQ(d.rule_id, by == decided_by::rule && want == call_verdict::run ? "rule_1" : "") << where;
          const bool refusal = want == call_verdict::refuse || want == call_verdict::not_enabled ||
                               want == call_verdict::sandbox_unavailable;
          EXPECT_EQ(d.reason.empty(), !refusal) << where;
          ++counts[static_cast<int>(d.verdict)];
          if (d.verdict == call_verdict::run) ++by_counts[static_cast<int>(d.by)];
        }
      }
    }
  }
  for (int v = 0; v < 5; ++v) EXPECT_GT(counts[v], 0) << "verdict " << v << " never produced";
  for (auto b : {decided_by::policy, decided_by::rule, decided_by::auto_classifier,
                 decided_by::bypass}) {
    EXPECT_GT(by_counts[static_cast<int>(b)], 0) << to_string(b) << " never produced";
  }
}

TEST(CallPolicy, AutoAsksOnlyForHighRiskAndRulesNeverBypassTheSandbox) {
  const gate_policy autom{permission_mode::auto_, true, false, false};
  call_facts low = facts("terminal", "{}", true, true, {.runs_code = true}, std::nullopt);
  low.high_risk = false;
  EXPECT_EQ(decide_call(low, autom).verdict, call_verdict::run);
  EXPECT_EQ(decide_call(low, autom).by, decided_by::auto_classifier);
  call_facts high = low;
  high.high_risk = true;
  EXPECT_EQ(decide_call(high, autom).verdict, call_verdict::ask);
  // A rule lets a call run unasked but the sandbox check still comes first.
  call_facts no_jail = high;
  no_jail.rule_id = "rule_x";
  no_jail.unavailable = "bwrap missing";
  EXPECT_EQ(decide_call(no_jail, autom).verdict, call_verdict::sandbox_unavailable);
}

TEST(CallPolicy, ReasonsSayWhatTheModelShouldDo) {
  const gate_policy none{permission_mode::off, false, false, false};
  auto d = decide_call(facts("", "{}", true, true, {}, std::nullopt), none);
  EXPECT_NE(d.reason.find("no tool name"), std::string::npos);
  d = decide_call(facts("python", "[1,2", false, true, {}, std::nullopt), none);
  EXPECT_NE(d.reason.find("not a valid JSON object: [1,2"), std::string::npos) << d.reason;
  d = decide_call(facts("python", std::string(500, 'x'), false, true, {}, std::nullopt), none);
  EXPECT_LT(d.reason.size(), 400u);  // the echoed arguments are cut at 200 bytes
  d = decide_call(facts("web", "{}", true, false, {}, std::nullopt), none);
  EXPECT_EQ(d.reason, "Error: the tool 'web' is not available in this conversation.");
  d = decide_call(facts("python", "{}", true, true, {.runs_code = true}, "bwrap missing"),
                  gate_policy{permission_mode::off, false, true, false});
  EXPECT_EQ(d.verdict, call_verdict::sandbox_unavailable);  // before anyone is asked
  EXPECT_EQ(d.reason, "Execution error: bwrap missing");
}

}  // namespace
}  // namespace warden::agent
