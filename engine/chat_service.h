// chat_service — one OpenAI-compatible chat completion against the upstream, as raw chunks.
//
// The plain OpenAI passthrough (api/openai without warden's tools) forwards these chunks
// unchanged; everything else reads the upstream as typed events through chat_backend.h, which
// is built on this.
//
// open_stream(): posts the request with "stream": true and waits for the upstream's response
// head. A non-200 head or a transport failure is returned as an error *before* anything is
// sent to the client, so the surface can still answer with a real HTTP status.
// chat_stream::next(): the next event; `ping` after `ping_interval` of upstream silence;
// `finished` once (after the upstream's [DONE] or end of body); `failed` once when the stream
// breaks after it started. Destroying a chat_stream aborts the upstream request at once (the
// llama-server slot is freed).
// complete(): posts with "stream": false and returns the upstream's JSON body.
// open_stream_path() / post_path(): the same for another OpenAI route under /v1 (the legacy
// "completions", "embeddings"): "model" is replaced by the served id as for chat, nothing else
// is rewritten (no forced tool call).
// For warden's own llama-server (forced_tool_call.h): a tool_choice naming a function is forced
// by warden, and so is "required" when the template has no tool support (upstream::caps());
// `response_format: json_object` becomes a json_schema; a ChatML-fallback model gets
// "<|im_end|>" as a stop string. Other upstreams get the request unchanged.
//
// Errors: errc::upstream_unavailable (not ready, unreachable, 503), errc::invalid_request (the
// upstream rejected the request with 4xx: its message is kept; also llama-server's 500 for an
// image without vision support, and for an embeddings input longer than its batch, param
// "input"), errc::upstream_error (5xx, malformed body, broken stream).
// Thread-safety: chat_service is shared and thread-safe; a chat_stream belongs to one coroutine.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel_token.h"
#include "common/json_util.h"
#include "common/result.h"
#include "common/sse.h"
#include "engine/http_client.h"
#include "engine/forced_tool_call.h"
#include "engine/upstream.h"

namespace warden::engine {

struct chat_event {
  enum class kind { chunk, ping, finished, failed };
  kind type = kind::finished;
  std::string raw;               ///< chunk: one chat.completion.chunk as the upstream sent it
  json parsed;                   ///< chunk: the same, parsed
  std::optional<error> failure;  ///< failed
};

/// The upstream's SSE body → chat events: each `data:` frame parsed into a chunk (rewritten for
/// a forced call, forced_tool_call.h), `[DONE]` noted, and an error frame, a malformed frame or
/// an oversized one (sse::parser's limit) turned into one failed event, after which later frames
/// are ignored. chat_stream's decoding, apart so that it is fuzzed (fuzz/sse_chunks.cpp).
/// Thread-safety: one per stream.
class chunk_reader {
 public:
  explicit chunk_reader(std::optional<forced_call> forced = std::nullopt);
  /// Appends the events that `bytes` complete (any split of the body) to `out`.
  void take(std::string_view bytes, std::deque<chat_event>& out);
  /// `[DONE]` or a failure was seen: the stream is over.
  bool saw_done() const { return saw_done_marker_; }

 private:
  sse::parser parser_;
  bool saw_done_marker_ = false;
  std::optional<stream_rewriter> rewriter_;
};

class chat_stream {
 public:
  chat_stream(std::shared_ptr<upstream_call> call, std::chrono::milliseconds ping_interval,
              std::optional<forced_call> forced);
  ~chat_stream();
  chat_stream(const chat_stream&) = delete;
  chat_stream& operator=(const chat_stream&) = delete;

  boost::asio::awaitable<chat_event> next();
  /// The next event when next() would return it without waiting (decoding what has arrived
  /// already), else nullopt. Lets a writer send every frame that is ready in one write.
  std::optional<chat_event> try_next();
  /// Aborts the upstream request; thread-safe (the call is shared).
  std::function<void()> canceller() const {
    return [c = call_] { c->cancel(); };
  }
  /// When the request was sent (open_stream), for warden_time_to_first_token_seconds.
  void set_started(std::chrono::steady_clock::time_point t) { started_ = t; }
  /// Keeps `h` as long as the stream lives (an engine pool's count of outstanding requests).
  void keep(std::shared_ptr<void> h) { kept_.push_back(std::move(h)); }

 private:
  /// Decodes one upstream event into ready_ (done_ at its end).
  void absorb(call_event ev);
  /// The metrics of the chunks ready_ holds from index `from`: the first token's time, usage.
  void observe(std::size_t from);

  std::shared_ptr<upstream_call> call_;
  std::chrono::milliseconds ping_interval_;
  chunk_reader reader_;
  std::deque<chat_event> ready_;
  bool done_ = false;
  bool first_token_seen_ = false;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<void>> kept_;
};

class engine_pool;

/// Which engine of a pool a request prefers, and what it is remembered as (engine/engine_pool.h's
/// session affinity). Ignored without a pool.
struct route_hint {
  std::string follow;               ///< the request's session_id, or a Responses previous_response_id; "" = none
  std::vector<std::string> record;  ///< keys remembered for the engine that answers (the session_id, a new response id)
};

class chat_service {
 public:
  chat_service(engine::upstream& up, http_client& client,
               std::chrono::milliseconds ping_interval)
      : upstream_(up), client_(client), ping_interval_(ping_interval) {}

  /// `cancel` (optional) aborts the request while it waits for the upstream's head too; the
  /// result is then errc::cancelled. `on_silence` (optional) is called every ping interval while
  /// the upstream has not answered yet (prompt processing can be long): the tool loop sends a
  /// keep-alive from it; returning false gives up (errc::cancelled).
  /// `route` picks the engine of a pool (set_pool()).
  boost::asio::awaitable<result<std::unique_ptr<chat_stream>>> open_stream(
      json body, std::shared_ptr<cancel_token> cancel = nullptr,
      std::function<boost::asio::awaitable<bool>()> on_silence = nullptr, route_hint route = {});
  boost::asio::awaitable<result<json>> complete(json body, route_hint route = {});
  /// open_stream() for `api_path` under /v1 (e.g. "completions"): sets "stream": true and the
  /// model id; the events are that route's chunks (chat_event::raw/parsed hold one chunk each).
  boost::asio::awaitable<result<std::unique_ptr<chat_stream>>> open_stream_path(
      std::string api_path, json body, std::shared_ptr<cancel_token> cancel = nullptr,
      std::function<boost::asio::awaitable<bool>()> on_silence = nullptr, route_hint route = {});
  /// POSTs `body` to `api_path` under /v1 (e.g. "embeddings") with only "model" replaced (the
  /// "stream" field is left as the caller set it) and returns the JSON object; errors as complete().
  boost::asio::awaitable<result<json>> post_path(std::string api_path, json body, route_hint route = {});
  /// POSTs `body` to a path at the upstream server's root (not under /v1: llama-server's
  /// "/apply-template", "/tokenize") and returns its JSON object; errors as complete().
  boost::asio::awaitable<result<json>> post_root(std::string_view path, json body);
  /// GET of a path at the upstream server's root (llama-server's "/props"); errors as complete().
  boost::asio::awaitable<result<json>> get_root(std::string_view path);

  engine::upstream& upstream() { return upstream_; }

  /// How long a request waits for an upstream in `starting` (a model loading, swapping or
  /// restarting after a crash: engine/model_host.h) before it is answered 503; 0 (the default)
  /// answers at once. With a wait, a local upstream's request that fails before its answer while
  /// the model server goes away (a crash) is sent once more when the server is back. Set during
  /// set-up only.
  void set_load_wait(std::chrono::milliseconds wait) { load_wait_ = wait; }
  /// --auto-swap: called with the request's "model" before it goes upstream when that is not
  /// the model served now; it may load that model (engine/model_host.h waits for the requests in
  /// flight first) or do nothing (an id it does not know). An error is the request's answer.
  /// Runs after every check of the surfaces, so a bad request never evicts the loaded model.
  /// Set during set-up only.
  using swap_fn = std::function<boost::asio::awaitable<result<void>>(std::string model)>;
  void set_auto_swap(swap_fn swap) { auto_swap_ = std::move(swap); }
  /// Routes every open_stream / complete / post_path through `pool` (engine/engine_pool.h: its
  /// members' own chat services, failing over before the first byte); this service's upstream
  /// should then be pool->front(). Set during set-up only; the pool outlives the service.
  void set_pool(engine_pool* pool) { pool_ = pool; }
  /// How often a stream's `on_silence` runs while its head is awaited, when shorter than the
  /// ping interval (0 = the ping interval). A pool member's (engine_pool.h): its head-timeout
  /// watch must fire on time, and passes the keep-alive on at the ping interval itself. Set
  /// during set-up only.
  void set_head_tick(std::chrono::milliseconds tick) { head_tick_ = tick; }

 private:
  /// The upstream request to `api_path` for `body` (stream flag unless nullopt, model id, and for
  /// chat/completions the forced-call rewrite); fails when the upstream is not ready.
  result<http_call_request> prepare(std::string_view api_path, json body, std::optional<bool> stream,
                                    std::optional<forced_call>& forced) const;
  /// Begins a lazy upstream, waits while it starts (up to load_wait_), and returns the lease the
  /// call must hold; errc::upstream_unavailable when it is not ready in time.
  boost::asio::awaitable<result<std::shared_ptr<void>>> wait_ready();
  /// After a failure before the answer: true when the local upstream leaves `ready` within a
  /// second (it crashed: the request may be sent again once it is back).
  boost::asio::awaitable<bool> restarting_after_failure();
  /// open_stream_path() on this service's own upstream (no pool): once, and again after a crash.
  boost::asio::awaitable<result<std::unique_ptr<chat_stream>>> open_stream_one(
      std::string api_path, json body, std::shared_ptr<cancel_token> cancel,
      std::function<boost::asio::awaitable<bool>()> on_silence);
  boost::asio::awaitable<result<std::unique_ptr<chat_stream>>> open_stream_once(
      std::string api_path, json body, std::shared_ptr<cancel_token> cancel,
      std::function<boost::asio::awaitable<bool>()> on_silence, bool& no_head);
  boost::asio::awaitable<result<json>> post_once(std::string api_path, json body, std::optional<bool> stream,
                                                 bool& no_head);
  boost::asio::awaitable<result<json>> post_with_retry(std::string api_path, json body, std::optional<bool> stream);
  /// wait_ready(), prepare(), then the request started on the caller's executor.
  boost::asio::awaitable<result<std::shared_ptr<upstream_call>>> begin(std::string api_path, json body,
                                                                        std::optional<bool> stream,
                                                                        std::optional<forced_call>& forced);
  /// The whole answer of a started call as a JSON object (non-200 → upstream_status_error).
  boost::asio::awaitable<result<json>> read_json(std::shared_ptr<upstream_call> call, bool* no_head = nullptr);
  /// open_stream_path / post_with_retry through the pool: each attempt on one member.
  boost::asio::awaitable<result<std::unique_ptr<chat_stream>>> pooled_stream(
      std::string api_path, json body, std::shared_ptr<cancel_token> cancel,
      std::function<boost::asio::awaitable<bool>()> on_silence, route_hint route);
  boost::asio::awaitable<result<json>> pooled_post(std::string api_path, json body, std::optional<bool> stream,
                                                   route_hint route);
  /// The upstream's root URL (url_for without a trailing "/v1/…") + `path`.
  std::string root_url_for(std::string_view path) const;
  engine::upstream& upstream_;
  http_client& client_;
  std::chrono::milliseconds ping_interval_;
  std::chrono::milliseconds load_wait_{0};
  std::chrono::milliseconds head_tick_{0};
  swap_fn auto_swap_;
  engine_pool* pool_ = nullptr;
};

/// `e` with the key this upstream is sent (the last word of each of its `request_headers`, such
/// as "Authorization: Bearer KEY") cut out of the message, in any case, as "[REDACTED]": a
/// provider that quotes the key in its refusal ("Incorrect API key provided: sk-…") must not
/// hand the server's key to the client (issue 28 §3). Pure.
error without_upstream_key(error e, const std::vector<std::string>& request_headers);

/// Turns a non-200 upstream answer into an error (pure; table-tested): 503 → upstream_unavailable;
/// 401/403 (the engine or provider refuses warden's key: the server's configuration) →
/// upstream_error; 429 → too_many_requests; a context overflow, an image to a text-only model or
/// an embedding input over the batch → invalid_request naming the field; any other 4xx →
/// invalid_request; anything else → upstream_error naming the status.
error upstream_status_error(long status, std::string_view body);

}  // namespace warden::engine
