// The tool loop's events in OpenAI's streaming dialect (reference unsloth-studio.md §1.3).
//
// One chunk_renderer per answer (one id and `created` for every chunk):
//   role_frame()   — the first chunk: delta {"role":"assistant","content":""}
//   frame(event)   — text → delta {"content"}, reasoning → delta {"reasoning_content"};
//                    tool_status / tool_start / tool_args / tool_output / tool_end → warden's
//                    control frames `data: {"type":"tool_…",…}` (keys: tool_name, tool_call_id,
//                    arguments, provenance {"source":"local","healed"}, approval_id,
//                    awaiting_confirmation, text, result, content); ping → the SSE comment `: ping`.
//                    tool_start adds provenance "provisional": true only for a provisional card
//                    (reference §2.9: arguments {}, followed by tool_args frames — raw fragments
//                    of the arguments — and later the real tool_start with the same
//                    tool_call_id, or a tool_end), and a top-level "risk": {"level",
//                    "reasons": [...]} only when the call was classified; both keys are
//                    omitted otherwise
//   finish_frame() — an empty delta with the finish_reason
//   usage_frame()  — choices: [] with the summed usage (zeros when the upstream sent none)
// Every frame is `data: <json>\n\n` (a comment for ping). Byte-compatible with the frames the
// loop wrote before the typed core (tests/golden/openai_tool_loop.sse).
// Thread-safety: pure; a renderer belongs to one response.
#pragma once

#include <optional>
#include <string>

#include "agent/loop_events.h"
#include "model/conversation.h"
#include "model/events.h"

namespace warden::api::openai {

class chunk_renderer {
 public:
  chunk_renderer(std::string id, long long created, std::string model)
      : id_(std::move(id)), created_(created), model_(std::move(model)) {}

  std::string role_frame() const;
  std::string frame(const agent::loop_event& ev) const;
  /// A model event of a client-tool turn (engine/healing.h) as a chunk: text, reasoning,
  /// tool_call_started → delta.tool_calls [{index, id, type "function", function {name,
  /// arguments ""}}], an arguments fragment → delta.tool_calls [{index, function {arguments}}],
  /// ping → `: ping`; "" for the others (finish, usage and errors are the caller's).
  std::string model_frame(const model::stream_event& ev) const;
  std::string finish_frame(model::finish_reason reason) const;
  /// A chunk with no choices and `context_truncated` (api/wire/control_frames.h truncation_json),
  /// the reference's shape (unsloth-studio.md §1.3), in the loop's stream and a plain one alike.
  std::string truncation_frame(const model::context_truncated& t) const;
  std::string usage_frame(const std::optional<model::usage>& usage) const;

  const std::string& id() const { return id_; }
  long long created() const { return created_; }

 private:
  json chunk(json delta, json finish_reason = json()) const;
  std::string id_;
  long long created_;
  std::string model_;
};

/// OpenAI's usage object.
json usage_json(const model::usage& u);

}  // namespace warden::api::openai
