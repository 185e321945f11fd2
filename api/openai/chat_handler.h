// Handlers of the OpenAI surface: POST /v1/chat/completions and GET /v1/models[/{id}].
//
// chat: validate (400 envelope before any upstream work) → non-stream: one chat.completion JSON
// body; stream: `data: <chunk>\n\n` frames forwarded the moment each upstream chunk arrives,
// `: ping` comments while the upstream is silent, `data: [DONE]` last. Failures before the
// first byte get a real status (503 upstream not ready, 502 upstream broke, 400 the upstream
// rejected the request); failures after it go in-band (errors.h).
// A client that disconnects cancels the handler (http/ races it against a peer watch); the
// upstream request is then aborted by chat_stream's destructor.
// Thread-safety: one call per request, on the connection's strand.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <string>

#include "agent/chat_service.h"
#include "common/http_types.h"

namespace warden::api::openai {

boost::asio::awaitable<void> handle_chat_completions(const http_request& req, response_writer& out,
                                                     agent::chat_service& chat);

/// GET /v1/models and /v1/models/{id}: the one served model. `created_s` is a Unix time.
boost::asio::awaitable<void> handle_models(const http_request& req, response_writer& out,
                                           const std::string& model_id, long long created_s);

/// Sends `e` in the OpenAI envelope with its HTTP status.
boost::asio::awaitable<void> send_error(response_writer& out, const error& e);

}  // namespace warden::api::openai
