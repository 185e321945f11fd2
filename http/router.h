// router — maps a parsed request to its handler; checks the API key; renders 404/405/401.
//
// Routes:
//   GET  /health                      public; 200 {"status":"ok"} when the model is ready,
//                                     503 {"status":"loading"|"error","message":…} otherwise
//   GET  /v1/models, /v1/models/{id}  OpenAI model list / one model
//   POST /v1/chat/completions         OpenAI chat (api/openai/chat_handler.h)
//   POST /api/inference/tool-confirm  {session_id?, approval_id, decision:"allow"|"deny"} →
//                                     200 {"resolved":true}; 404 for an unknown, already decided
//                                     or other-session id; 400 for a malformed body
//   POST /api/inference/cancel        {cancel_id?, session_id?} (one at least) → 200
//                                     {"cancelled": n}: running tool loops stopped (pending
//                                     approvals denied, tools killed)
// Everything under /v1/ and /api/ needs the API key when one is configured: `Authorization: Bearer KEY`
// or `X-Api-Key: KEY` (compared in constant time); 401 in the OpenAI envelope otherwise.
// Unknown paths → 404, known path with another method → 405, both in the OpenAI envelope.
// Thread-safety: route() may run concurrently on many strands; the router is immutable.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <string>

#include "agent/chat_service.h"
#include "agent/tool_loop.h"
#include "common/http_types.h"

namespace warden::http {

struct health_report {
  bool ready = false;
  std::string status;   ///< "ok", "loading" or "error"
  std::string message;  ///< why not ready
};

struct router_options {
  std::string api_key;        ///< "" = no authentication
  long long started_unix_s = 0;
  agent::tool_runtime* tools = nullptr;  ///< null: the tool endpoints answer 503
};

class router {
 public:
  router(router_options opts, agent::chat_service& chat, std::function<health_report()> health)
      : opts_(std::move(opts)), chat_(chat), health_(std::move(health)) {}

  boost::asio::awaitable<void> route(const http_request& req, response_writer& out);

  /// True when the request carries the configured key (or none is configured).
  bool authorized(const http_request& req) const;

 private:
  boost::asio::awaitable<void> tool_confirm(const http_request& req, response_writer& out);
  boost::asio::awaitable<void> cancel(const http_request& req, response_writer& out);

  router_options opts_;
  agent::chat_service& chat_;
  std::function<health_report()> health_;
};

}  // namespace warden::http
