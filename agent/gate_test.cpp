#include <gtest/gtest.h>

#include "agent/agent_fakes.h"
#include "agent/gate.h"
#include "agent/tool_risk.h"

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

gate_flags flags(std::optional<bool> confirm, bool code, bool bypass, std::optional<std::string> mode = std::nullopt) {
  gate_flags g;
  g.confirm_tool_calls = confirm;
  g.confirm_code_execution = code;
  g.bypass_permissions = bypass;
  g.permission_mode = std::move(mode);
  return g;
}

loop_options opts(bool tools, std::optional<std::vector<std::string>> enabled, gate_flags g, int budget = 25,
                  bool stream = false) {
  loop_options o;
  o.enable_tools = tools;
  o.enabled_tools = std::move(enabled);
  o.gate = std::move(g);
  o.max_tool_calls_per_message = budget;
  o.stream = stream;
  return o;
}

using mode_name = std::optional<std::string>;

// The folding of reference §1.2 / §3.1, row by row, written out by hand.
TEST(Gate, FoldingExamples) {
  struct row {
    gate_flags f;
    bool stream;
    gate_policy want;  // mode, confirm, confirm_code, bypass
  } rows[] = {
      {flags(std::nullopt, false, false), true, {permission_mode::auto_, true, false, false}},    // unset+stream → auto gate
      {flags(std::nullopt, false, false), false, {permission_mode::auto_, false, false, false}},  // unset, no stream → ungated
      {flags(true, false, false), false, {permission_mode::ask, true, false, false}},             // confirm → ask
      {flags(false, false, false), true, {permission_mode::auto_, false, false, false}},          // explicit false wins
      {flags(std::nullopt, false, false, "ask"), false, {permission_mode::ask, true, false, false}},
      {flags(false, false, false, "ask"), true, {permission_mode::ask, false, false, false}},     // explicit wins over mode
      {flags(std::nullopt, false, false, "auto"), false, {permission_mode::auto_, true, false, false}},
      {flags(true, false, false, "off"), true, {permission_mode::off, false, false, false}},      // off forces no confirm
      {flags(std::nullopt, true, false, "off"), true, {permission_mode::off, false, true, false}},// seed flag composes
      {flags(std::nullopt, false, false, "full"), true, {permission_mode::full, false, false, true}},
      {flags(std::nullopt, false, true), true, {permission_mode::full, false, false, true}},     // bypass ⇒ full
      {flags(true, true, true), true, {permission_mode::full, false, false, true}},              // bypass beats confirm
      {flags(std::nullopt, false, true, "ask"), true, {permission_mode::full, false, false, true}},
      {flags(std::nullopt, false, false, "bogus"), false, {permission_mode::ask, true, false, false}},  // unknown → ask
      {flags(std::nullopt, false, false, "FULL"), true, {permission_mode::ask, true, false, false}},    // case matters
      {flags(std::nullopt, false, false, ""), true, {permission_mode::ask, true, false, false}},
      {flags(std::nullopt, true, false), false, {permission_mode::auto_, false, true, false}},
  };
  int i = 0;
  for (const auto& r : rows) {
    const gate_policy got = fold_gate(r.f, r.stream);
    EXPECT_EQ(got.mode, r.want.mode) << "row " << i << " got " << to_string(got.mode);
    EXPECT_EQ(got.confirm, r.want.confirm) << "row " << i;
    EXPECT_EQ(got.confirm_code, r.want.confirm_code) << "row " << i;
    EXPECT_EQ(got.bypass, r.want.bypass) << "row " << i;
    ++i;
  }
}

// Every combination of mode × confirm_tool_calls × confirm_code_execution × bypass × stream
// (6 × 3 × 2 × 2 × 2 = 144): the folded policy against the rules stated one by one.
TEST(Gate, FoldingTableEveryCombination) {
  const mode_name modes[] = {std::nullopt, "ask", "auto", "off", "full", "nonsense"};
  const std::optional<bool> confirms[] = {std::nullopt, true, false};
  int n = 0;
  for (const auto& m : modes) {
    for (auto c : confirms) {
      for (bool code : {false, true}) {
        for (bool bypass : {false, true}) {
          for (bool stream : {false, true}) {
            const gate_policy p = fold_gate(flags(c, code, bypass, m), stream);
            const std::string where = "mode=" + m.value_or("unset") + " confirm=" +
                                      (c ? (*c ? "true" : "false") : "unset") + " code=" + std::to_string(code) +
                                      " bypass=" + std::to_string(bypass) + " stream=" + std::to_string(stream);
            // full ⇔ bypass
            const bool want_bypass = bypass || m == "full";
            EXPECT_EQ(p.bypass, want_bypass) << where;
            EXPECT_EQ(p.mode == permission_mode::full, want_bypass) << where;
            // the mode otherwise
            if (!want_bypass) {
              permission_mode want = permission_mode::auto_;
              if (m == "ask" || m == "nonsense") want = permission_mode::ask;
              else if (m == "off") want = permission_mode::off;
              else if (!m && c == true) want = permission_mode::ask;
              EXPECT_EQ(p.mode, want) << where;
            }
            // the route-level confirm
            bool confirm = false;
            if (!want_bypass && m != "off") {
              if (c) confirm = *c;
              else if (m) confirm = true;  // ask, auto, unknown→ask
              else confirm = stream;
            }
            EXPECT_EQ(p.confirm, confirm) << where;
            EXPECT_EQ(p.confirm_code, code && !want_bypass) << where;
            ++n;
          }
        }
      }
    }
  }
  EXPECT_EQ(n, 144);
}

TEST(Gate, PerCallRuleAndProvisionalPredicate) {
  const tools::tool_traits code{true, false, false, false}, html{false, true, false, true};
  const gate_policy ask{permission_mode::ask, true, false, false}, autom{permission_mode::auto_, true, false, false},
      off{permission_mode::off, false, false, false}, full{permission_mode::full, false, false, true},
      off_code{permission_mode::off, false, true, false}, auto_ungated{permission_mode::auto_, false, false, false};
  EXPECT_TRUE(needs_confirmation(ask, html, false));
  EXPECT_TRUE(needs_confirmation(autom, code, true));
  EXPECT_FALSE(needs_confirmation(autom, code, false));
  EXPECT_FALSE(needs_confirmation(off, code, true));
  EXPECT_FALSE(needs_confirmation(full, code, true));
  EXPECT_TRUE(needs_confirmation(off_code, code, false));   // confirm_code_execution: python/terminal always
  EXPECT_FALSE(needs_confirmation(off_code, html, true));
  EXPECT_FALSE(needs_confirmation(auto_ungated, code, true));  // non-streaming, nothing set
  tools::tool_info py{"python", "Python", "", json::object(), code};
  tools::tool_info rh{"render_html", "HTML", "", json::object(), html};
  tools::tool_info kb{"search_knowledge_base", "kb", "", json::object(), {.read_only = true}};
  EXPECT_TRUE(may_need_confirmation(autom, py));
  EXPECT_TRUE(may_need_confirmation(autom, rh));   // may reach the network
  EXPECT_FALSE(may_need_confirmation(autom, kb));  // always safe
  EXPECT_TRUE(may_need_confirmation(ask, kb));
  EXPECT_FALSE(may_need_confirmation(off_code, rh));
  EXPECT_TRUE(may_need_confirmation(off_code, py));
  EXPECT_FALSE(may_need_confirmation(full, py));
}

// The gate reads traits, not names: made-up tools, one per trait, get the treatment their traits
// call for (a read-only one is always safe, a read-only network one is safe until it names a URL,
// a code-running one is what confirm_code_execution gates, a file writer always asks in auto).
struct trait_registry {
  tools::registry reg;
  trait_registry() {
    reg.add(std::make_unique<testing::fake_tool>("lookup", tools::tool_traits{.read_only = true}));
    reg.add(std::make_unique<testing::fake_tool>("fetcher", tools::tool_traits{.reads_network = true, .read_only = true}));
    reg.add(std::make_unique<testing::fake_tool>("runner", testing::code_traits(tools::code_language::shell, "cmd")));
    reg.add(std::make_unique<testing::fake_tool>("writer", tools::tool_traits{.writes_files = true}));
    reg.add(std::make_unique<testing::fake_tool>("once", tools::tool_traits{.once_per_answer = true}));
  }
};

TEST(Gate, DecidesByTraitsNotNames) {
  const trait_registry t;
  const gate_policy autom{permission_mode::auto_, true, false, false}, off_code{permission_mode::off, false, true, false};
  struct row {
    const char* tool;
    bool always_safe, may_ask_auto, may_ask_off_code;
  } rows[] = {
      {"lookup", true, false, false},
      {"fetcher", true, false, false},
      {"runner", false, true, true},
      {"writer", false, true, false},
      {"once", false, true, false},
  };
  for (const auto& r : rows) {
    const tools::tool_info& info = t.reg.find(r.tool)->info();
    EXPECT_EQ(always_safe_tool(info.traits), r.always_safe) << r.tool;
    EXPECT_EQ(may_need_confirmation(autom, info), r.may_ask_auto) << r.tool;
    EXPECT_EQ(may_need_confirmation(off_code, info), r.may_ask_off_code) << r.tool;
  }
  using v = std::vector<std::string>;
  struct stream_row {
    loop_options o;
    const char* param;  // nullptr = allowed
  } stream_rows[] = {
      {opts(true, v{"lookup"}, flags(std::nullopt, false, false, "auto")), nullptr},  // always safe, no network
      {opts(true, v{"fetcher"}, flags(std::nullopt, false, false, "auto")), "permission_mode"},  // could fetch a URL
      {opts(true, v{"lookup", "writer"}, flags(std::nullopt, false, false, "auto")), "permission_mode"},
      {opts(true, v{"lookup", "runner"}, flags(std::nullopt, true, false, "off")), "confirm_code_execution"},
      {opts(true, v{"writer", "once"}, flags(std::nullopt, true, false, "off")), nullptr},  // nothing runs code
  };
  int i = 0;
  for (const auto& r : stream_rows) {
    const auto e = stream_requirement(r.o, t.reg);
    if (r.param) {
      ASSERT_TRUE(e) << "row " << i;
      EXPECT_EQ(e->param, r.param) << "row " << i;
    } else {
      EXPECT_FALSE(e) << "row " << i << ": " << (e ? e->message : "");
    }
    ++i;
  }
  // confirm_code_execution raises the effective mode to ask only when every selected tool runs code
  EXPECT_EQ(effective_mode(opts(true, v{"runner"}, flags(std::nullopt, true, false, "off")), t.reg), permission_mode::ask);
  EXPECT_EQ(effective_mode(opts(true, v{"runner", "writer"}, flags(std::nullopt, true, false, "off")), t.reg),
            permission_mode::auto_);
}

// The auto classifier sees a registry tool through its traits (agent/tool_risk.h).
TEST(Gate, RiskProfileComesFromTraits) {
  const trait_registry t;
  const auto level = [&](const char* tool, const json& args) {
    return classify_tool_call(t.reg.find(tool)->info(), args);
  };
  EXPECT_EQ(level("lookup", json::array()).level, risk::risk_level::low);
  EXPECT_EQ(level("fetcher", {{"q", "x"}}).level, risk::risk_level::low);
  EXPECT_EQ(level("fetcher", {{"url", "https://x"}}).reasons, std::vector<std::string>{"fetches a URL"});
  EXPECT_EQ(level("runner", {{"cmd", "ls"}}).level, risk::risk_level::low);
  EXPECT_EQ(level("runner", {{"cmd", "rm -rf x"}}).reasons, std::vector<std::string>{"runs rm (destructive)"});
  EXPECT_EQ(level("writer", json::object()).reasons, std::vector<std::string>{"writer always asks"});
  EXPECT_EQ(level("once", json::object()).reasons, std::vector<std::string>{"unknown tool"});
  const testing::fake_registry builtin;
  EXPECT_EQ(classify_tool_call(builtin.terminal->info(), {{"command", "rm -rf x"}}).level, risk::risk_level::high);
  EXPECT_EQ(classify_tool_call(builtin.python->info(), {{"code", "print(1)"}}).level, risk::risk_level::low);
  const risk::tool_profile p = risk_profile(builtin.render->info());
  EXPECT_EQ(p.code, risk::code_language::html);
  EXPECT_EQ(p.code_argument, "code");
  EXPECT_EQ(p.name, "render_html");
}

TEST(Gate, StreamRequirementAndItsScope) {
  struct row {
    loop_options o;
    const char* param;  // nullptr = allowed
  } rows[] = {
      {opts(true, std::nullopt, flags(true, false, false)), "confirm_tool_calls"},
      {opts(true, std::nullopt, flags(true, false, false), 25, true), nullptr},
      {opts(true, std::nullopt, flags(std::nullopt, true, false)), "confirm_code_execution"},
      {opts(true, std::vector<std::string>{"python"}, flags(std::nullopt, true, false)), "confirm_code_execution"},
      {opts(true, std::vector<std::string>{"terminal"}, flags(std::nullopt, true, false)), "confirm_code_execution"},
      {opts(true, std::vector<std::string>{"render_html"}, flags(std::nullopt, true, false)), nullptr},
      {opts(true, std::vector<std::string>{}, flags(std::nullopt, true, false)), nullptr},
      {opts(true, std::vector<std::string>{}, flags(true, false, false)), nullptr},
      {opts(true, std::nullopt, flags(std::nullopt, true, false), 0), nullptr},
      {opts(true, std::nullopt, flags(true, false, false), 0), nullptr},
      {opts(false, std::nullopt, flags(true, true, false)), nullptr},
      {opts(true, std::nullopt, flags(true, true, true)), nullptr},
      {opts(true, std::nullopt, flags(std::nullopt, false, false)), nullptr},  // unset, not streaming: ungated
      {opts(true, std::vector<std::string>{"render_html"}, flags(true, false, false)), "confirm_tool_calls"},
      {opts(true, std::nullopt, flags(std::nullopt, false, false, "ask")), "permission_mode"},
      {opts(true, std::nullopt, flags(std::nullopt, false, false, "auto")), "permission_mode"},
      {opts(true, std::vector<std::string>{"render_html"}, flags(std::nullopt, false, false, "auto")), "permission_mode"},
      {opts(true, std::nullopt, flags(std::nullopt, false, false, "off")), nullptr},
      {opts(true, std::nullopt, flags(std::nullopt, false, false, "full")), nullptr},
      {opts(true, std::nullopt, flags(false, false, false, "ask")), nullptr},  // explicit false wins
      {opts(true, std::nullopt, flags(std::nullopt, false, false, "auto"), 25, true), nullptr},
  };
  int i = 0;
  for (const auto& r : rows) {
    auto e = stream_requirement(r.o, reg().reg);
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
  EXPECT_EQ(names(opts(true, std::nullopt, gate_flags{}).selected(reg().reg)),
            (std::vector<std::string>{"python", "terminal", "render_html"}));
  EXPECT_EQ(names(opts(true, std::vector<std::string>{"render_html", "python"}, gate_flags{}).selected(reg().reg)),
            (std::vector<std::string>{"python", "render_html"}));
  EXPECT_TRUE(opts(false, std::nullopt, gate_flags{}).selected(reg().reg).empty());
}

// The permission ladder: what each request amounts to, and the ceiling.
TEST(PermissionCeiling, EffectiveModeTable) {
  struct row {
    loop_options o;
    permission_mode want;
  };
  using v = std::vector<std::string>;
  const row rows[] = {
      {opts(false, std::nullopt, flags(std::nullopt, false, false)), permission_mode::ask},  // nothing can run
      {opts(false, std::nullopt, flags(std::nullopt, false, true)), permission_mode::full},  // bypass is full, tools or not
      {opts(true, std::nullopt, flags(true, false, true)), permission_mode::full},           // bypass wins over confirm
      {opts(true, std::nullopt, flags(std::nullopt, false, false, "full")), permission_mode::full},
      {opts(true, std::nullopt, flags(std::nullopt, false, false)), permission_mode::off},   // not streaming, nothing set
      {opts(true, std::nullopt, flags(std::nullopt, false, false), 25, true), permission_mode::auto_},  // streaming default
      {opts(true, std::nullopt, flags(true, false, false)), permission_mode::ask},
      {opts(true, std::nullopt, flags(false, false, false, "ask"), 25, true), permission_mode::off},
      {opts(true, std::nullopt, flags(std::nullopt, false, false, "off"), 25, true), permission_mode::off},
      {opts(true, std::nullopt, flags(std::nullopt, true, false, "off")), permission_mode::auto_},  // render_html unasked
      {opts(true, v{"python", "terminal"}, flags(std::nullopt, true, false, "off")), permission_mode::ask},
      {opts(true, v{"python", "terminal"}, flags(std::nullopt, true, false), 25, true), permission_mode::ask},
      {opts(true, v{"render_html"}, flags(std::nullopt, true, false)), permission_mode::auto_},
      {opts(true, v{}, flags(std::nullopt, false, false)), permission_mode::ask},            // none selected
      {opts(true, std::nullopt, flags(std::nullopt, false, false), 0), permission_mode::ask},  // budget 0
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
  flags_off.stream = false;
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
  EXPECT_EQ(e->param, "permission_mode");
  EXPECT_NE(e->message.find("--max-permission off"), std::string::npos) << e->message;
  EXPECT_TRUE(check_permission_ceiling(flags_off, permission_mode::auto_, reg().reg));
  EXPECT_FALSE(check_permission_ceiling(flags_off, permission_mode::off, reg().reg));
  for (auto c : {permission_mode::ask, permission_mode::auto_, permission_mode::off, permission_mode::full}) {
    EXPECT_FALSE(check_permission_ceiling(gated, c, reg().reg)) << to_string(c);
  }
  loop_options streaming_default;
  streaming_default.enable_tools = true;  // stream = true by default: mode auto
  EXPECT_TRUE(check_permission_ceiling(streaming_default, permission_mode::ask, reg().reg));
  EXPECT_FALSE(check_permission_ceiling(streaming_default, permission_mode::auto_, reg().reg));
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
