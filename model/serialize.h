// model serialize — the typed conversation (conversation.h) as warden's own JSON, for storage
// (store/responses_store.h keeps a stored response's conversation this way). It is no wire
// format of any API: surfaces never send it; it only has to round-trip exactly.
//
// Shapes:
//   message = {"role": "system"|"user"|"assistant"|"tool", "content": [part…],
//              "name"?: string (omitted when ""), "extra"?: any (omitted when null)}
//   part    = {"type":"text","text"} | {"type":"reasoning","text"}
//           | {"type":"tool_call","id","name","arguments"}
//           | {"type":"tool_result","tool_call_id","content","is_error"}
//           | {"type":"image","url","detail"} | {"type":"opaque","value"}
// Errors: from_json of anything else → errc::internal (stored data that no longer parses is
// a bug or a damaged database, not a client error), naming the offending message index.
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "common/json_util.h"
#include "common/result.h"
#include "model/conversation.h"

namespace warden::model {

json to_json(const message& m);
json to_json(const std::vector<message>& ms);
result<message> message_from_json(const json& j);
result<std::vector<message>> messages_from_json(const json& j);

}  // namespace warden::model
