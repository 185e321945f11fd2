// The OpenAI surface: POST /v1/chat/completions and GET /v1/models[/{id}] (routes()).
//
// chat: validate (400 envelope before any upstream work) → non-stream: one chat.completion JSON
// body; stream: `data: <chunk>\n\n` frames forwarded the moment each upstream chunk arrives,
// `: ping` comments while the upstream is silent, `data: [DONE]` last. Failures before the
// first byte get a real status (503 upstream not ready, 502 upstream broke, 400 the upstream
// rejected the request); failures after it go in-band (api/wire/errors.h). Without warden's tools the
// upstream's bytes are forwarded unchanged (engine::chat_service); nothing needs rewriting.
// A client that disconnects cancels the handler (http/ races it against a peer watch); the
// upstream request is then aborted by chat_stream's destructor.
// With `enable_tools` the request is checked by the one request-level gate (api/wire/admission.h:
// tools present, agent::stream_requirement, the --max-permission ceiling), converted to the typed model
// (convert.h) and run by warden's tool loop (agent/tool_loop.h) over engine::chat_backend; its events are
// rendered by stream_render.h: a role chunk first, content/reasoning chunks and the control
// frames, one chunk with the final finish_reason, a usage chunk when asked, `[DONE]`.
// Non-streaming, it answers one chat.completion with the last turn's text.
// Thread-safety: one call per request, on the connection's strand.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <string>
#include <functional>
#include <vector>

#include "common/blocking_pool.h"

#include "agent/tool_loop.h"
#include "api/openai/chat_request.h"
#include "api/wire/admission.h"
#include "common/http_types.h"
#include "engine/admission_queue.h"
#include "engine/chat_backend.h"
#include "engine/chat_service.h"
#include "engine/external_provider.h"

namespace warden::api::openai {

struct openai_deps {
  engine::chat_service& chat;       ///< raw passthrough
  engine::chat_backend& backend;    ///< typed turns for the tool loop
  agent::tool_runtime* tools = nullptr;  ///< null: enable_tools gets 503
  long long started_unix_s = 0;     ///< `created` of the model object
  bool heal_tool_calls = true;      ///< the server's default for auto_heal_tool_calls (engine/healing.h)
  /// The model library (api/control/model_routes.h's model objects, with `loaded`), for GET
  /// /v1/models; blocking (reads the models folder), run on `pool`. Null (or no pool): the one
  /// served model only (a remote --upstream).
  std::function<json()> model_list{};
  blocking_pool* pool = nullptr;
  /// The chat engine's admission queue (engine/admission_queue.h); null: no admission control.
  std::shared_ptr<engine::admission_queue> admission{};
  /// External providers (engine/external_provider.h); null: none configured.
  engine::provider_resolver providers{};
};

/// The OpenAI surface's error dialect (api/wire/errors.h: the OpenAI envelope).
const surface& openai_surface();

/// /v1/chat/completions, /v1/models, /v1/models/{id}. `deps` must outlive the routes.
std::vector<route> routes(openai_deps& deps);

/// The chat request's verdict from the one request-level gate (api/wire/admission.h): no
/// parking, no background, no rule of its own. `tools` null: no tool loop on this server.
wire::admission admit_chat(const chat_request& req, const agent::tool_runtime* tools);

boost::asio::awaitable<void> handle_chat_completions(const http_request& req, response_writer& out, openai_deps& deps);

/// GET /v1/models and /v1/models/{id} from deps.model_list (the model library).
boost::asio::awaitable<void> handle_library_models(const http_request& req, response_writer& out, openai_deps& deps);

/// GET /v1/models and /v1/models/{id}: the one served model. `created_s` is a Unix time.
boost::asio::awaitable<void> handle_models(const http_request& req, response_writer& out,
                                           const std::string& model_id, long long created_s);

/// Forwards an opened upstream stream to the client unchanged (the raw passthrough of chat and
/// completions): each chunk as `data: <raw>` the moment it arrives (a usage-only chunk only when
/// `include_usage`), `: ping` while silent, an in-band error after a failure, `[DONE]` last.
/// `what` names the route in logs.
/// A keep-alive for a request that talks to chat_service directly: opens the SSE response (when
/// not yet open) and sends a `: ping` comment; false when the client is gone.
std::function<boost::asio::awaitable<bool>()> sse_keep_alive(response_writer& out);
/// Ends a stream after a failure: a real status before the first byte, an in-band error after.
boost::asio::awaitable<void> fail_stream(response_writer& out, const error& e);
/// A slot of `queue` for a request that talks to chat_service directly (the byte-for-byte relay,
/// legacy completions), keyed by the caller's key name; `keep_alive` (may be null) while it
/// waits. A refusal sets Retry-After on `out`. Null `queue`: an empty slot at once.
boost::asio::awaitable<result<std::shared_ptr<void>>> take_slot(const std::shared_ptr<engine::admission_queue>& queue,
                                                                const http_request& http, response_writer& out,
                                                                std::function<boost::asio::awaitable<bool>()> keep_alive);

boost::asio::awaitable<void> forward_stream(std::unique_ptr<engine::chat_stream> stream, bool include_usage,
                                            response_writer& out, const char* what);

}  // namespace warden::api::openai
