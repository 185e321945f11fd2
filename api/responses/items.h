// Responses API input items ↔ the typed model (model/conversation.h).
//
// to_model_input() reads `input` (a string, or a list of items) as OpenAI's Responses API
// defines it:
//   string                         → one user message
//   {type?:"message", role, content: string | [parts]}
//       roles user/system/developer/assistant; parts input_text {text}, input_image
//       {image_url, detail?} (a URL or data: URL; file_id is refused), output_text {text},
//       refusal {refusal}; input_file and input_audio are refused
//   {type:"function_call", call_id, name, arguments}   → an assistant tool call (consecutive
//       calls, and calls right after an assistant message, join that message)
//   {type:"function_call_output", call_id, output: string | [input_text parts]} → a tool message
//   {type:"reasoning", summary?: [{text}], content?: [{type:"reasoning_text", text}]} →
//       an assistant reasoning part (content preferred, else the summary)
//   {type:"mcp_approval_response", approval_request_id, approve, reason?} → an approval answer,
//       not a message
//   {type:"mcp_approval_request" | "mcp_call", …} → ignored (a client echoing an earlier
//       output: the server already knows it)
// Anything else → 400 with `param` "input[i]…". Every item also comes back with an `id` (the
// client's, or a fresh "item_…"/"msg_…") in `items`, the shape GET …/input_items lists.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/json_util.h"
#include "common/result.h"
#include "model/conversation.h"

namespace warden::api::responses {

/// An mcp_approval_response input item.
struct approval_answer {
  std::string approval_request_id;
  bool approve = false;
  std::string reason;  ///< "" when absent
};

struct model_input {
  std::vector<model::message> messages;  ///< the input as conversation messages, in order
  std::vector<approval_answer> approvals;
  json items = json::array();            ///< the items as listed by input_items (ids assigned); empty
                                         ///< unless asked for (a response that is not stored lists none)
  bool has_user_or_assistant = false;    ///< something beyond system/developer messages
};

/// `list_items`: also build model_input::items (only a stored response needs them: each is a JSON
/// object with an id, a cost that dominated a 200,000-item request with store: false).
result<model_input> to_model_input(json input, bool list_items = true);

/// The name a function declared in a `namespace` tool has for the model: "<namespace>__<name>".
inline std::string flat_namespaced_name(const std::string& ns, const std::string& name) { return ns + "__" + name; }

/// The name the model knows a function_call item by: flat_namespaced_name when the item carries a
/// string `namespace`, else its `name`.
inline std::string model_name_of_call(const json& item) {
  const json ns = item.value("namespace", json());
  const std::string name = item.value("name", std::string());
  return ns.is_string() && !ns.get<std::string>().empty() ? flat_namespaced_name(ns.get<std::string>(), name) : name;
}

/// The text of a Responses message content (a string, or parts with `text`).
std::string content_text(const json& content);

}  // namespace warden::api::responses
