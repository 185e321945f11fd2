// command_support — what the one-shot client commands (`warden kb`, `warden mcp`) share: the API
// key they send and the JSON of a reply, each failure printed as "warden <cmd>: <why>".
// Thread-safety: plain functions (they print to stderr).
#pragma once

#include <optional>
#include <string>

#include "client/chat_client.h"
#include "common/json_util.h"

namespace warden::client {

/// The key to send: `api_key`, else `api_key_file`'s content, else $WARDEN_API_KEY /
/// $WARDEN_API_KEY_FILE (as `warden chat` finds it); nullopt (message printed with `prog`, e.g.
/// "warden kb") when a key file cannot be read.
std::optional<std::string> find_api_key(const std::string& api_key, const std::string& api_key_file, const char* prog);

/// The reply's JSON, or nullopt after printing why not (an error status's message, or a body that
/// is not JSON).
std::optional<json> reply_json(const http_reply& r, const char* prog);

}  // namespace warden::client
