// api/wire/admission.h: the one request-level gate, row by row. The loop options are read from
// the wire with take_loop_fields, as every surface reads them.
#include <gtest/gtest.h>

#include "agent/agent_fakes.h"
#include "api/wire/admission.h"
#include "api/wire/loop_fields.h"
#include "common/json_fields.h"

namespace warden::api::wire {
namespace {

struct server {
  agent::testing::fake_registry tools;  // python, terminal (run code), render_html
  agent::approval_registry approvals{std::chrono::milliseconds(60000)};
  agent::cancel_registry cancels;
  agent::tool_runtime rt;
  explicit server(agent::permission_mode ceiling)
      : rt{approvals, cancels, tools.reg, "/tmp/unused", std::chrono::milliseconds(1000), ceiling} {}
};

agent::loop_options options(const char* fields, bool stream) {
  json body = json::parse(fields);
  agent::loop_options o;
  const std::vector<std::string> known = {"python", "terminal", "render_html"};
  auto e = take_loop_fields(body, o, known);
  EXPECT_FALSE(e) << fields << ": " << (e ? e->message : "");
  o.stream = stream;
  return o;
}

/// A surface rule that refuses whatever it sees, naming how the options reached it.
std::optional<error> refuse_all(const agent::loop_options& o, const tools::registry&) {
  return field_invalid(std::string("rule saw stream=") + (o.stream ? "1" : "0") + " park=" + (o.park_approvals ? "1" : "0"),
                       "rule");
}

struct row {
  const char* name;
  const char* fields;
  bool stream;
  admission_options opt;
  bool runtime;                     // the server has a tool loop
  agent::permission_mode ceiling;   // --max-permission
  int status;                       // 0 = admitted
  const char* param;                // the refusal's param
  bool park;                        // admitted: park_approvals
  bool folded_stream;               // admitted: stream the gate folds with
};

using pm = agent::permission_mode;
const admission_options k_plain{};
const admission_options k_park{.can_park = true};
const admission_options k_park_mcp{.can_park = true, .approval_mcp = true};
const admission_options k_mcp_no_store{.approval_mcp = true};
const admission_options k_background{.can_park = true, .background = true};
const admission_options k_resuming{.can_park = true, .resuming = true};
const admission_options k_resuming_unstored{.resuming = true};  // store: false
const admission_options k_rule{.rule = &refuse_all};

const row k_rows[] = {
    {"tools off: as sent", R"({})", false, k_plain, true, pm::full, 0, "", false, false},
    {"tools off, streaming: as sent", R"({})", true, k_plain, true, pm::full, 0, "", false, true},
    {"tools off with no runtime: admitted", R"({})", false, k_plain, false, pm::full, 0, "", false, false},
    {"tools off while resuming: 400", R"({})", false, k_resuming, true, pm::full, 400, "enable_tools", false, false},
    {"no runtime: 503", R"({"enable_tools":true})", true, k_plain, false, pm::full, 503, "", false, false},
    {"no runtime beats mcp without store", R"({"enable_tools":true})", true, k_mcp_no_store, false, pm::full, 503, "", false, false},
    {"mcp without store: 400", R"({"enable_tools":true})", true, k_mcp_no_store, true, pm::full, 400, "approval_format", false, false},
    {"confirm, streaming: admitted", R"({"enable_tools":true,"confirm_tool_calls":true})", true, k_plain, true, pm::full, 0, "", false, true},
    {"confirm, not streaming: 400", R"({"enable_tools":true,"confirm_tool_calls":true})", false, k_plain, true, pm::full, 400, "confirm_tool_calls", false, false},
    {"mode ask, not streaming: 400", R"({"enable_tools":true,"permission_mode":"ask"})", false, k_plain, true, pm::full, 400, "permission_mode", false, false},
    {"code confirm, not streaming: 400", R"({"enable_tools":true,"confirm_code_execution":true,"permission_mode":"off"})", false, k_plain, true, pm::full, 400, "confirm_code_execution", false, false},
    {"confirm false, not streaming: admitted", R"({"enable_tools":true,"confirm_tool_calls":false})", false, k_plain, true, pm::full, 0, "", false, false},
    {"budget 0 cannot ask: admitted", R"({"enable_tools":true,"confirm_tool_calls":true,"max_tool_calls_per_message":0})", false, k_plain, true, pm::full, 0, "", false, false},
    {"bypass over ceiling off: 403", R"({"enable_tools":true,"bypass_permissions":true})", true, k_plain, true, pm::off, 403, "bypass_permissions", false, false},
    {"mode off over ceiling auto: 403", R"({"enable_tools":true,"permission_mode":"off"})", true, k_plain, true, pm::auto_, 403, "permission_mode", false, false},
    {"confirm false over ceiling ask: 403", R"({"enable_tools":true,"confirm_tool_calls":false})", true, k_plain, true, pm::ask, 403, "confirm_tool_calls", false, false},
    {"mode ask under ceiling ask: admitted", R"({"enable_tools":true,"permission_mode":"ask"})", true, k_plain, true, pm::ask, 0, "", false, true},
    {"parking, not streaming: parks, folds as a stream", R"({"enable_tools":true,"confirm_tool_calls":true})", false, k_park, true, pm::full, 0, "", true, true},
    {"parking, streaming: asks over the stream", R"({"enable_tools":true,"confirm_tool_calls":true})", true, k_park, true, pm::full, 0, "", false, true},
    {"parking with mcp, streaming: parks", R"({"enable_tools":true,"confirm_tool_calls":true})", true, k_park_mcp, true, pm::full, 0, "", true, true},
    {"parking still meets the ceiling", R"({"enable_tools":true,"bypass_permissions":true})", false, k_park, true, pm::off, 403, "bypass_permissions", false, false},
    {"background, not streaming: no stream rule, never parks", R"({"enable_tools":true,"confirm_tool_calls":true})", false, k_background, true, pm::full, 0, "", false, true},
    {"background meets the ceiling", R"({"enable_tools":true,"bypass_permissions":true})", false, k_background, true, pm::ask, 403, "bypass_permissions", false, false},
    {"resuming with tools: admitted, parks", R"({"enable_tools":true,"confirm_tool_calls":true})", false, k_resuming, true, pm::full, 0, "", true, true},
    // a parked turn was folded as streaming; a resume that can neither park nor stream would run it ungated
    {"resuming unstored, not streaming, no mode: 400", R"({"enable_tools":true})", false, k_resuming_unstored, true, pm::full, 400, "store", false, false},
    {"resuming unstored, streaming: admitted", R"({"enable_tools":true})", true, k_resuming_unstored, true, pm::full, 0, "", false, true},
    {"surface rule runs before the stream rule", R"({"enable_tools":true,"confirm_tool_calls":true})", false, k_rule, true, pm::full, 400, "rule", false, false},
    {"surface rule not run with tools off", R"({})", false, k_rule, true, pm::full, 0, "", false, false},
    {"surface rule not run without runtime", R"({"enable_tools":true})", false, k_rule, false, pm::full, 503, "", false, false},
};

TEST(Admission, Table) {
  for (const auto& r : k_rows) {
    SCOPED_TRACE(r.name);
    server s(r.ceiling);
    const agent::loop_options o = options(r.fields, r.stream);
    const admission a = admit(o, r.runtime ? &s.rt : nullptr, r.opt);
    if (r.status == 0) {
      ASSERT_TRUE(a.admitted()) << a.refusal->message;
      EXPECT_EQ(a.park_approvals, r.park);
      EXPECT_EQ(a.stream, r.folded_stream);
      continue;
    }
    ASSERT_FALSE(a.admitted());
    EXPECT_EQ(http_status(a.refusal->code), r.status);
    EXPECT_EQ(a.refusal->param, r.param);
  }
}

// The exact texts the Python suites assert.
TEST(Admission, RefusalTextsAreTheSurfacesOwn) {
  server s(pm::full);
  const auto off = admit(options(R"({"enable_tools":true})", true), nullptr, k_plain);
  EXPECT_EQ(off.refusal->message, "the tool loop is not available on this server");
  const auto mcp = admit(options(R"({"enable_tools":true})", true), &s.rt, k_mcp_no_store);
  EXPECT_EQ(mcp.refusal->message, "approval_format 'mcp' needs 'store': true (the parked call is kept until it is answered)");
  EXPECT_EQ(mcp.refusal->type_code, "invalid_value");
  const auto resume = admit(options(R"({})", false), &s.rt, k_resuming);
  EXPECT_EQ(resume.refusal->message, "resuming approval requests needs 'enable_tools'");
}

// A named user key never runs tools outside the sandbox (issue 22); an admin key may, up to the ceiling.
TEST(Admission, AUserKeyCannotBypassTheSandbox) {
  server s(pm::full);
  for (const char* fields : {R"({"enable_tools":true,"permission_mode":"full"})", R"({"enable_tools":true,"bypass_permissions":true})"}) {
    SCOPED_TRACE(fields);
    agent::loop_options user = options(fields, true);
    user.may_bypass = false;
    const auto refused = admit(user, &s.rt, k_plain);
    ASSERT_FALSE(refused.admitted());
    EXPECT_EQ(http_status(refused.refusal->code), 403);
    EXPECT_EQ(refused.refusal->param, "bypass_permissions");
    EXPECT_EQ(refused.refusal->type_code, "permission_mode_not_allowed");
    EXPECT_NE(refused.refusal->message.find("a 'user' API key may not"), std::string::npos) << refused.refusal->message;
    EXPECT_TRUE(admit(options(fields, true), &s.rt, k_plain).admitted()) << "an admin key (or the single user) may";
  }
  for (const char* mode : {"ask", "auto", "off"}) {
    agent::loop_options user = options((std::string(R"({"enable_tools":true,"permission_mode":")") + mode + "\"}").c_str(), true);
    user.may_bypass = false;
    EXPECT_TRUE(admit(user, &s.rt, k_plain).admitted()) << mode << " runs in the sandbox";
  }
}

TEST(Admission, TheRuleSeesTheFoldedOptions) {
  server s(pm::full);
  admission_options o = k_park;
  o.rule = &refuse_all;
  const auto a = admit(options(R"({"enable_tools":true})", false), &s.rt, o);
  ASSERT_FALSE(a.admitted());
  EXPECT_EQ(a.refusal->message, "rule saw stream=1 park=1");
}

TEST(Admission, ApplyWritesParkingAndFolding) {
  server s(pm::full);
  agent::loop_options o = options(R"({"enable_tools":true,"confirm_tool_calls":true})", false);
  const auto a = admit(o, &s.rt, k_park);
  ASSERT_TRUE(a.admitted());
  a.apply(o);
  EXPECT_TRUE(o.park_approvals);
  EXPECT_TRUE(o.stream);
}

}  // namespace
}  // namespace warden::api::wire
