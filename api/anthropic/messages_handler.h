// The Anthropic surface: POST /v1/messages and POST /v1/messages/count_tokens (routes()).
//
// messages: validate (messages_request.h; 400 in Anthropic's envelope before any upstream
// work) → the one request-level gate (api/wire/admission.h) with this route's own rule
// (server_tools.h messages_gate: no confirmation channel), admit_messages() → one of two
// paths over
// engine::chat_backend, wrapped in engine::stop_sequence_backend for stop_sequences:
//   client path (no server tools): one model turn, read as typed events and rendered by
//     stream_render.h's message_builder — streaming: message_start once the upstream answered,
//     or earlier with `ping`s when it is silent for a ping interval (failures before any byte
//     get a real status: 503 overloaded_error, 502 api_error, 400; after, `event: error`), then
//     blocks as the events arrive, `ping` while the upstream is silent, message_delta and
//     message_stop; an upstream failure after the start is one `event: error`. Non-streaming:
//     one message object.
//   server-tool path: agent::run_tool_loop with a sink that renders loop events (server_tool_use
//     and result blocks); same framing.
// A client that disconnects cancels the handler; the upstream request is aborted with it.
// count_tokens: the same body without max_tokens → {"input_tokens": N} from the upstream's
// chat template and tokenizer (engine::chat_backend::count_prompt_tokens), client tools and the
// selected server tools' schemas included.
// Thread-safety: one call per request, on the connection's strand.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <vector>

#include "agent/tool_loop.h"
#include "api/anthropic/messages_request.h"
#include "api/wire/admission.h"
#include "common/http_types.h"
#include "engine/admission_queue.h"
#include "engine/chat_backend.h"
#include "engine/external_provider.h"

namespace warden::api::anthropic {

struct anthropic_deps {
  engine::chat_backend& backend;
  agent::tool_runtime* tools = nullptr;  ///< null: server tools get 503
  bool heal_tool_calls = true;           ///< the server's default for auto_heal_tool_calls (engine/healing.h)
  /// The chat engine's admission queue (engine/admission_queue.h); null: no admission control.
  std::shared_ptr<engine::admission_queue> admission{};
  /// External providers (engine/external_provider.h); null: none configured.
  engine::provider_resolver providers{};
};

/// The Anthropic error dialect (api/wire/errors.h: the Anthropic envelope).
const surface& anthropic_surface();

/// The messages request's verdict from the one request-level gate (api/wire/admission.h): no
/// parking, no background, and this route's server-tool rule (server_tools.h messages_gate: no
/// confirmation channel) before the stream requirement. `tools` null: no tool loop here.
wire::admission admit_messages(const messages_request& r, const agent::tool_runtime* tools);

/// /v1/messages and /v1/messages/count_tokens. `deps` must outlive the routes.
std::vector<route> routes(anthropic_deps& deps);

boost::asio::awaitable<void> handle_messages(const http_request& req, response_writer& out, anthropic_deps& deps);
boost::asio::awaitable<void> handle_count_tokens(const http_request& req, response_writer& out, anthropic_deps& deps);

}  // namespace warden::api::anthropic
