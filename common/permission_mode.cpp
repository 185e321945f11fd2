#include "common/permission_mode.h"

namespace warden {

const char* to_string(permission_mode m) noexcept {
  switch (m) {
    case permission_mode::ask: return "ask";
    case permission_mode::auto_: return "auto";
    case permission_mode::off: return "off";
    case permission_mode::full: return "full";
  }
  return "ask";
}

std::optional<permission_mode> parse_permission_mode(std::string_view s) noexcept {
  for (auto m : {permission_mode::ask, permission_mode::auto_, permission_mode::off, permission_mode::full}) {
    if (s == to_string(m)) return m;
  }
  return std::nullopt;
}

bool valid_session_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > 64) return false;
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace warden
