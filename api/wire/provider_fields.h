// provider_fields — the external-provider fields of a model request (issue 28 §3; reference
// unsloth-studio.md §1.5 and §3.3), the same on every surface, and the seed's rules for them.
//
// take_provider_fields() validates and removes from `body`:
//   provider_id        string [A-Za-z0-9_.-]{1,64}: a provider saved on the server (/api/providers)
//   provider_type      string: the first enabled saved provider of this type (provider_types())
//   external_model     string (1–256 chars): the model at the provider; default the request's model
//   run_tools_locally  boolean: warden's own tool loop (and gate) runs against the provider
// nullopt when neither provider_id nor provider_type is given; external_model or
// run_tools_locally without one of them is a 400 naming that field.
//
// apply_provider_rules(), the seed's rules for a request routed to a provider:
//   - n > 1 → 400 (param n): one choice only;
//   - warden's loop runs only with run_tools_locally: true (then every gate rule applies as for
//     the local model: warden's tools run in warden's sandbox);
//   - otherwise the request is relayed (hosted tools pass through, the provider runs its own code):
//     confirm_code_execution is ignored (the provider's hosted code runs in its sandbox), and
//     confirm_tool_calls: true with tools (a `tools` list, enable_tools, enabled_tools or
//     mcp_enabled) → 400 (param confirm_tool_calls) "confirm_tool_calls is only supported for
//     local streaming tools": nothing could ask a person before the provider's tools run.
// Errors: errc::invalid_request with `param` naming the field (common/json_fields.h).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "agent/gate.h"
#include "common/json_util.h"
#include "common/result.h"

namespace warden::api::wire {

struct provider_choice {
  std::string id;              ///< provider_id; "" = by type
  std::string type;            ///< provider_type; "" = the saved provider's own
  std::string external_model;  ///< "" = the request's model
  bool run_tools_locally = false;
};

/// The provider types the reference knows (§1.5); every one is reached through its
/// OpenAI-compatible chat completions API (engine/external_provider.h).
const std::set<std::string>& provider_types();

result<std::optional<provider_choice>> take_provider_fields(json& body);

/// See above. `body`: the request as it goes on (for n, tools); `o`: its loop options, changed in
/// place (confirm_code_execution off, the loop off, when relayed).
std::optional<error> apply_provider_rules(const provider_choice& c, agent::loop_options& o, const json& body);

/// Whether warden's loop runs for this request against the provider.
inline bool runs_loop_locally(const provider_choice& c, const agent::loop_options& o) {
  return c.run_tools_locally && o.enable_tools;
}

}  // namespace warden::api::wire
