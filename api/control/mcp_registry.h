// Internal to api/control/mcp_routes.cpp and mcp_registry.cpp: the registry's blocking helpers
// (rows ↔ entries, writing a set of entries) and its one policy check.
// Thread-safety: pure functions, or blocking calls on a thread-safe store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/permission_mode.h"
#include "common/result.h"
#include "store/mcp_server_store.h"
#include "tools/mcp_config.h"

namespace warden::api::control {

std::int64_t mcp_now_ms();

/// A stored row as an entry (owner and times from the row); errc::internal when it no longer parses.
result<tools::mcp_server_config> from_row(const store::stored_mcp_server& r);
store::stored_mcp_server to_row(const tools::mcp_server_config& c);

/// The 403 for "sandbox": false under a --max-permission below full; nullopt when allowed.
std::optional<error> sandbox_refusal(const tools::mcp_server_config& c, permission_mode max_permission);

/// Writes `entries` with `owner` and `now_ms` (blocking): a new id is inserted; an existing one
/// is replaced (created and owner kept) when `replace`, else the 400 mcp_server_exists before
/// anything is written. The entries as stored.
result<std::vector<tools::mcp_server_config>> put_entries(store::mcp_server_store& store,
                                                          std::vector<tools::mcp_server_config> entries, bool replace,
                                                          const std::string& owner, std::int64_t now_ms);

}  // namespace warden::api::control
