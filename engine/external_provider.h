// external_provider — a request routed to a hosted provider configured on the server (issue 28
// §3; reference unsloth-studio.md §1.5): OpenAI, Anthropic (through its OpenAI-compatible API),
// Gemini, DeepSeek, Mistral, OpenRouter, a vLLM or llama.cpp server elsewhere, … Every provider
// type is reached through its OpenAI-compatible chat completions API at `base_url`
// (<base_url>/chat/completions), so every surface reaches it through the one typed core: the
// relay (OpenAI chat, byte for byte), and the typed turn of Anthropic Messages and Responses
// (chat_backend), and warden's own tool loop when the request asks to run tools locally.
//
// provider_upstream is an upstream that is always ready (warden does not probe a hosted
// provider: its errors are the request's answer): model_id() is the model at the provider, the
// key goes as `Authorization: Bearer`. provider_engine bundles it with a chat_service and an
// openai_chat_backend for one request.
// Errors: the provider's own, as chat_service maps them (a 4xx keeps its message: a wrong key is
// the provider's 401 text as errc::invalid_request; 5xx errc::upstream_error; unreachable 503).
// Thread-safety: one provider_engine per request; its parts as chat_service's.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "engine/chat_backend.h"
#include "engine/chat_service.h"
#include "engine/upstream.h"

namespace warden::engine {

/// Where a request goes: resolved from a saved provider by the composition root.
struct provider_target {
  std::string id;             ///< the saved provider's id
  std::string provider_type;  ///< "openai", "anthropic", … (api/wire/provider_fields.h)
  std::string base_url;       ///< http(s)://host[:port]/path of its OpenAI-compatible API (…/v1)
  std::string api_key;        ///< "" = none sent; never logged
  std::string model;          ///< the model at the provider
};

class provider_upstream final : public upstream {
 public:
  explicit provider_upstream(provider_target t) : t_(std::move(t)) {}
  result<void> start() override { return {}; }
  void stop() override {}
  upstream_state state() const override { return upstream_state::ready; }
  std::string status_message() const override { return "ready"; }
  std::string model_id() const override { return t_.model; }
  std::string url_for(std::string_view api_path) const override { return t_.base_url + "/" + std::string(api_path); }
  std::vector<std::string> request_headers() const override {
    if (t_.api_key.empty()) return {};
    return {"Authorization: Bearer " + t_.api_key};
  }
  bool is_local() const override { return false; }

 private:
  provider_target t_;
};

class provider_engine {
 public:
  provider_engine(provider_target t, http_client& client, std::chrono::milliseconds ping)
      : id_(t.id), up_(std::move(t)), chat_(up_, client, ping), backend_(chat_) {}
  provider_engine(const provider_engine&) = delete;
  provider_engine& operator=(const provider_engine&) = delete;
  chat_service& chat() { return chat_; }
  chat_backend& backend() { return backend_; }
  const std::string& id() const { return id_; }

 private:
  std::string id_;
  provider_upstream up_;
  chat_service chat_;
  openai_chat_backend backend_;
};

/// Resolves a saved provider for a request: by `id`, or else the first enabled one of `type`,
/// among those `owner` may use; `model` is the model at the provider. Set by the composition
/// root (it reads the store and opens the sealed key). Errors: errc::not_found (no such provider,
/// param provider_id / provider_type), errc::invalid_request (disabled, or its key's environment
/// variable is not set).
using provider_resolver = std::function<boost::asio::awaitable<result<std::unique_ptr<provider_engine>>>(
    std::string id, std::string type, std::string model, std::string owner)>;

/// `resolve` called, or, when null (a server with no providers), errc::not_found saying so.
boost::asio::awaitable<result<std::unique_ptr<provider_engine>>> resolve_provider(const provider_resolver& resolve,
                                                                                 std::string id, std::string type,
                                                                                 std::string model, std::string owner);

}  // namespace warden::engine
