#include "api/wire/admission.h"

#include "common/json_fields.h"

namespace warden::api::wire {

namespace {

admission refuse(const agent::loop_options& o, error e) {
  admission a;
  a.refusal = std::move(e);
  a.park_approvals = o.park_approvals;
  a.stream = o.stream;
  return a;
}

}  // namespace

admission admit(const agent::loop_options& o, const agent::tool_runtime* tools, const admission_options& opt) {
  if (!o.enable_tools) {
    if (opt.resuming) return refuse(o, field_invalid("resuming approval requests needs 'enable_tools'", "enable_tools"));
    return admission{std::nullopt, o.park_approvals, o.stream};
  }
  if (!tools) return refuse(o, make_error(errc::upstream_unavailable, "the tool loop is not available on this server"));
  if (opt.approval_mcp && !opt.can_park) {
    return refuse(o, field_invalid("approval_format 'mcp' needs 'store': true (the parked call is kept until it is answered)",
                                   "approval_format"));
  }
  agent::loop_options run = o;
  run.park_approvals = !opt.background && opt.can_park && (!o.stream || opt.approval_mcp);
  run.stream = opt.background || run.park_approvals || o.stream;
  admission a{std::nullopt, run.park_approvals, run.stream};
  // A parked turn was folded as a streaming one (parking is how it asked); resuming it on a
  // request that can neither park, stream nor run in the background would fold its gate as
  // "no mode, not streaming" = ungated, widening it. Refused instead.
  if (opt.resuming && !run.stream) {
    return refuse(o, field_invalid("resuming approval requests runs under the parked request's gate, which asks: send "
                                   "'store': true (further questions are parked) or 'stream': true",
                                   "store"));
  }
  if (opt.rule) a.refusal = opt.rule(run, tools->tools);
  if (!a.refusal && !opt.background && !run.park_approvals) a.refusal = agent::stream_requirement(run, tools->tools);
  if (!a.refusal && !run.may_bypass && agent::effective_mode(run, tools->tools) == permission_mode::full) {
    a.refusal = make_error(errc::forbidden,
                           "bypass_permissions: true (permission_mode 'full') runs tools outside the sandbox, where they "
                           "could read other keys' workspaces and warden's own files; a 'user' API key may not ask for it "
                           "(an 'admin' key may, up to --max-permission). Remove bypass_permissions / permission_mode "
                           "'full' to run tools in the sandbox.",
                           "bypass_permissions", "permission_mode_not_allowed");
  }
  if (!a.refusal) a.refusal = agent::check_permission_ceiling(run, tools->max_permission, tools->tools);
  return a;
}

}  // namespace warden::api::wire
