// tool_risk — the auto classifier (risk/risk.h) applied to a tool of the registry: the tool's
// declared traits (tools/tool.h) mapped to the classifier's profile, never its name.
// Thread-safety: pure functions; the profile views `tool`'s strings, so it must not outlive it.
#pragma once

#include "common/json_util.h"
#include "risk/risk.h"
#include "tools/tool.h"

namespace warden::agent {

/// The classifier's view of `tool`: read_only, reads_network, writes_files, code and
/// code_argument from its traits; its name only for wording reasons.
risk::tool_profile risk_profile(const tools::tool_info& tool);

/// classify_call(risk_profile(tool), args).
risk::risk_assessment classify_tool_call(const tools::tool_info& tool, const json& args);
/// The same with the traits of this call (tools::tool::traits_for_call).
risk::risk_assessment classify_tool_call(const tools::tool_info& tool, const tools::tool_traits& traits, const json& args);

}  // namespace warden::agent
