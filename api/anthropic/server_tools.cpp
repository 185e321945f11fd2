#include "api/anthropic/server_tools.h"

namespace warden::api::anthropic {

std::optional<std::string> server_tool_for(std::string_view type) noexcept {
  for (std::string_view alias : {"web_search", "web_search_20250305", "web_fetch", "web_fetch_20250910",
                                 "web_fetch_20260209"}) {
    if (type == alias) return std::string("web_search");
  }
  if (type == "python") return std::string("python");
  if (type == "terminal") return std::string("terminal");
  return std::nullopt;
}

namespace {

error refuse(std::string message, std::string param) {
  return make_error(errc::invalid_request, std::move(message), std::move(param), "unsupported_parameter");
}

}  // namespace

std::optional<error> messages_gate(const agent::gate_flags& flags, const std::vector<selected_tool>& selected) {
  if (selected.empty()) return std::nullopt;
  const std::string mode = flags.permission_mode.value_or("");
  if (flags.bypass_permissions || mode == "full") return std::nullopt;
  if (flags.confirm_tool_calls == true) {
    return refuse("confirm_tool_calls is not supported for Anthropic Messages server tools: this route has no "
                  "confirmation channel; set permission_mode 'off' (sandboxed, nothing asked) or 'full'",
                  "confirm_tool_calls");
  }
  for (const auto& t : selected) {
    if (flags.confirm_code_execution && t.runs_code) {
      return refuse("confirm_code_execution is not supported for Anthropic Messages server tools: '" + t.name +
                        "' runs code and this route has no confirmation channel; drop confirm_code_execution and "
                        "set permission_mode 'off' (sandboxed, nothing asked) or 'full'",
                    "confirm_code_execution");
    }
  }
  if (flags.confirm_tool_calls == false) return std::nullopt;
  if (mode == "off") return std::nullopt;
  const std::string shown = mode.empty() ? "auto" : mode;
  if (mode == "auto" || mode.empty()) {
    for (const auto& t : selected) {
      if (!t.always_safe) {
        return refuse("permission_mode '" + shown + "'" + (mode.empty() ? " (the default)" : "") +
                          " has no confirmation channel on Anthropic Messages server tools and '" + t.name +
                          "' could need one; set 'off' (sandboxed, nothing asked) or 'full'",
                      "permission_mode");
      }
    }
    return std::nullopt;
  }
  return refuse("permission_mode '" + shown + "' has no confirmation channel on Anthropic Messages server tools; "
                "set 'off' (sandboxed, nothing asked) or 'full'",
                "permission_mode");
}

}  // namespace warden::api::anthropic
