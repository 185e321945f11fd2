// Handlers of the OpenAI surface: POST /v1/chat/completions and GET /v1/models[/{id}].
//
// chat: validate (400 envelope before any upstream work) → non-stream: one chat.completion JSON
// body; stream: `data: <chunk>\n\n` frames forwarded the moment each upstream chunk arrives,
// `: ping` comments while the upstream is silent, `data: [DONE]` last. Failures before the
// first byte get a real status (503 upstream not ready, 502 upstream broke, 400 the upstream
// rejected the request); failures after it go in-band (errors.h).
// A client that disconnects cancels the handler (http/ races it against a peer watch); the
// upstream request is then aborted by chat_stream's destructor.
// With `enable_tools` the request runs warden's tool loop (agent/tool_loop.h): the stream then
// carries content/reasoning chunks (one id for the whole answer, a role chunk first), the
// control frames `{"type":"tool_status"|"tool_start"|"tool_output"|"tool_end",…}` as `data:`
// lines, then one chunk with the final finish_reason, a usage chunk when asked, `[DONE]`.
// Non-streaming, it answers one chat.completion with the last turn's text.
// Thread-safety: one call per request, on the connection's strand.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <string>

#include "agent/chat_service.h"
#include "agent/tool_loop.h"
#include "common/http_types.h"

namespace warden::api::openai {

/// `tools` may be null (no tool loop: enable_tools gets 503).
boost::asio::awaitable<void> handle_chat_completions(const http_request& req, response_writer& out,
                                                     agent::chat_service& chat, agent::tool_runtime* tools);

/// GET /v1/models and /v1/models/{id}: the one served model. `created_s` is a Unix time.
boost::asio::awaitable<void> handle_models(const http_request& req, response_writer& out,
                                           const std::string& model_id, long long created_s);

/// Sends `e` in the OpenAI envelope with its HTTP status.
boost::asio::awaitable<void> send_error(response_writer& out, const error& e);

}  // namespace warden::api::openai
