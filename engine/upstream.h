// upstream — where chat requests go: a managed llama-server child (llama_server.h) or an
// existing OpenAI-compatible server (openai_compatible.h).
//
// State machine (every kind; written once in upstream_status.h, which lists every allowed move):
//
//     stopped ──start()──▶ starting ──health ok──▶ ready
//                             │                     │ child exits / probe fails
//                             ▼                     ▼
//                           failed ◀────────────────┘
//                             └──▶ ready when a later probe answers (remote upstreams)
//
// Requests are served only in `ready`; otherwise callers answer 503 with `status_message()`.
// Thread-safety: state(), status_message(), model_id() and url_for() are safe from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace warden::engine {

enum class upstream_state { stopped, starting, ready, failed };

/// What the served model's chat template can do, as far as warden must know to constrain
/// output itself (forced_tool_call.h). Known once the upstream is ready.
struct model_caps {
  /// The template renders tools and llama-server parses their calls (llama-server's GET /props
  /// `chat_template_caps.supports_tool_calls`); without it llama-server ignores
  /// `tool_choice: "required"`, so warden forces the call with a JSON schema.
  bool native_tool_calls = true;
  /// The GGUF has no chat template and llama-server formats prompts as ChatML (its fallback);
  /// the model's end-of-turn token may then not be `<|im_end|>`, so warden adds it as a stop string.
  bool chatml_fallback = false;
  /// Layers llama-server offloaded to a GPU, from its log ("31/31"; engine/llama_devices.h); ""
  /// when it said nothing (a CPU build).
  std::string gpu_offload{};
};

const char* to_string(upstream_state s) noexcept;

class upstream {
 public:
  virtual ~upstream() = default;

  /// Blocks until ready or failed (start-up thread, never an io thread).
  /// Errors: errc::upstream_unavailable with a message naming the model and, for llama-server,
  /// quoting the last lines of its output.
  virtual result<void> start() = 0;
  /// Stops the child (if any); idempotent. Called on shutdown.
  virtual void stop() = 0;

  virtual upstream_state state() const = 0;
  /// Why the upstream is not ready ("loading gemma-3-270m-q4_k_m", the crash message, …).
  virtual std::string status_message() const = 0;
  /// Public model id (never a local path).
  virtual std::string model_id() const = 0;
  /// Absolute URL of an OpenAI API path such as "chat/completions".
  virtual std::string url_for(std::string_view api_path) const = 0;
  /// Extra request headers (e.g. "Authorization: Bearer …").
  virtual std::vector<std::string> request_headers() const = 0;
  /// True for warden's own llama-server (the request may use llama.cpp extensions).
  virtual bool is_local() const = 0;
  /// The served model's template capabilities; the defaults (native tools, own template) for
  /// upstreams warden does not inspect.
  virtual model_caps caps() const { return {}; }
  /// Asks an upstream that starts on use (a lazy or idle-unloaded model_host, an
  /// on_demand_upstream) to start now; returns at once. Others: nothing.
  virtual void begin() {}
  /// Held by a request for as long as it talks to the upstream (engine/upstream_call.h keeps it
  /// with the call): a model_host swap waits until every lease is released. Null where nothing
  /// waits for requests (the default).
  virtual std::shared_ptr<void> lease() { return nullptr; }
};

}  // namespace warden::engine
