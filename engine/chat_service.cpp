#include "engine/chat_service.h"

#include <cctype>

#include "engine/engine_pool.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <mutex>

#include "common/metrics.h"

namespace warden::engine {

namespace asio = boost::asio;

namespace {

void describe_model_metrics() {
  static std::once_flag described;
  std::call_once(described, [] {
    auto& m = metrics::global();
    m.describe("warden_time_to_first_token_seconds", "histogram",
               "Time from sending a streamed model request to the engine until its first token (content, "
               "reasoning or a tool call)");
    m.describe("warden_tokens_total", "counter",
               "Tokens the engines reported in their usage, by kind (prompt, completion)");
  });
}

/// Adds a usage object's prompt and completion tokens to warden_tokens_total.
void count_usage(const json& j) {
  auto u = j.find("usage");
  if (u == j.end() || !u->is_object()) return;
  describe_model_metrics();
  for (const char* kind : {"prompt", "completion"}) {
    auto n = u->find(std::string(kind) + "_tokens");
    if (n != u->end() && n->is_number_unsigned()) {
      metrics::global().add("warden_tokens_total", {{"kind", kind}}, static_cast<double>(n->get<std::uint64_t>()));
    }
  }
}

bool non_empty(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && ((it->is_string() && !it->get_ref<const std::string&>().empty()) ||
                           (it->is_array() && !it->empty()));
}

/// A chunk that carries a token: delta content, reasoning or a tool call (chat), or text (legacy).
bool carries_token(const json& chunk) {
  auto ch = chunk.find("choices");
  if (ch == chunk.end() || !ch->is_array() || ch->empty() || !ch->front().is_object()) return false;
  const json& c = ch->front();
  if (non_empty(c, "text")) return true;
  auto d = c.find("delta");
  return d != c.end() && d->is_object() &&
         (non_empty(*d, "content") || non_empty(*d, "reasoning_content") || non_empty(*d, "tool_calls"));
}

}  // namespace

namespace {
/// Cancels the upstream call unless released (c = nullptr). A constructor, not aggregate
/// initialization: GCC 12 may destroy an aggregate-initialized coroutine local twice.
struct call_guard {
  explicit call_guard(std::shared_ptr<upstream_call> call) : c(std::move(call)) {}
  ~call_guard() {
    if (c) c->cancel();
  }
  std::shared_ptr<upstream_call> c;
};

/// How long to wait for a whole non-streamed completion before giving up on silence between
/// bytes; streaming requests use the ping interval instead. Generation can be slow on CPU.
constexpr std::chrono::milliseconds k_head_wait_slice{1000};
/// How often a request waiting for a loading model looks again.
constexpr std::chrono::milliseconds k_start_poll{50};
/// How long after a request failed before its answer the local model server must be seen
/// not ready for the request to count as cut by a crash (and be sent again once).
constexpr std::chrono::milliseconds k_crash_notice{1000};

/// What an upstream error body says: its message, and its machine-readable type and code
/// (strings; "" when absent or not a string: llama-server's `code` is the HTTP status again).
struct upstream_detail {
  std::string message;
  std::string type;
  std::string code;
};

std::string string_member(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

upstream_detail read_upstream_error(std::string_view body) {
  if (auto j = parse_json(body)) {
    if (j->is_object() && j->contains("error")) {
      const json& e = (*j)["error"];
      if (e.is_object() && e.contains("message") && e["message"].is_string()) {
        return {e["message"].get<std::string>(), string_member(e, "type"), string_member(e, "code")};
      }
      if (e.is_string()) return {e.get<std::string>(), "", ""};
    }
    if (j->is_object() && j->contains("detail") && (*j)["detail"].is_string()) {
      return {(*j)["detail"].get<std::string>(), "", ""};
    }
  }
  std::string s(body.substr(0, 300));
  return {s.empty() ? "no details" : s, "", ""};
}

/// llama-server's error `type` for a prompt that does not fit the context
/// (tools/server: ERROR_TYPE_EXCEED_CONTEXT_SIZE, answered with HTTP 400).
constexpr std::string_view k_llama_context_type = "exceed_context_size_error";
/// OpenAI's error `code` for the same, which warden answers with too.
constexpr std::string_view k_context_code = "context_length_exceeded";

/// A context overflow is recognised by its type or code. Fallback, for upstreams that send no
/// string code (older llama-server builds, other OpenAI-compatible servers): the message
/// mentions "context" and "exceed".
bool is_context_overflow(const upstream_detail& d) {
  if (d.type == k_llama_context_type || d.code == k_context_code) return true;
  return d.code.empty() && d.message.find("context") != std::string::npos && d.message.find("exceed") != std::string::npos;
}
/// llama-server's refusal carries the counts (n_prompt_tokens, n_ctx: tokens, one slot's
/// context); the message then says them and what to do. Else the upstream's own message.
std::string context_overflow_message(std::string_view body, const std::string& upstream_msg) {
  auto j = parse_json(body);
  const json* e = j && j->is_object() && j->contains("error") ? &(*j)["error"] : nullptr;
  if (!e || !e->is_object() || !e->contains("n_prompt_tokens") || !e->contains("n_ctx") ||
      !(*e)["n_prompt_tokens"].is_number_integer() || !(*e)["n_ctx"].is_number_integer()) {
    return upstream_msg;
  }
  return "the conversation needs " + std::to_string((*e)["n_prompt_tokens"].get<long long>()) +
         " prompt tokens but the model's context size is " + std::to_string((*e)["n_ctx"].get<long long>()) +
         " tokens per slot. Shorten it, send \"context_overflow\": \"truncate_oldest\" or \"truncate_middle\" to drop "
         "old messages, or load the model with a larger ctx.";
}
}  // namespace

error without_upstream_key(error e, const std::vector<std::string>& request_headers) {
  auto lower = [](std::string t) {
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  for (const std::string& h : request_headers) {
    const std::size_t sp = h.rfind(' ');
    const std::string key = sp == std::string::npos ? std::string() : lower(h.substr(sp + 1));
    if (key.empty()) continue;
    // Matched in any case (a provider may quote it lowercased) and whatever its length (a short
    // key may cut into words: garbled is better than shown; both from a breaker run).
    std::string folded = lower(e.message);
    for (std::size_t at; (at = folded.find(key)) != std::string::npos;) {
      e.message.replace(at, key.size(), "[REDACTED]");
      folded.replace(at, key.size(), "[redacted]");
    }
  }
  return e;
}

error upstream_status_error(long status, std::string_view body) {
  const upstream_detail detail = read_upstream_error(body);
  const std::string& msg = detail.message;
  if (status == 503) return make_error(errc::upstream_unavailable, "the model server is not ready: " + msg);
  // The engine or provider refusing the key warden sends is the server's configuration, not the
  // caller's request (the caller's own key is warden's and never forwarded): 502, and a pool
  // fails over to another engine and ejects this one.
  if (status == 401 || status == 403) {
    return make_error(errc::upstream_error, "the model server refused the credentials warden sends it (HTTP " +
                                                std::to_string(status) +
                                                "; see the engine's key_env or the provider's api_key): " + msg);
  }
  // A rate-limited engine or provider: 429 to the caller too (its SDK backs off and retries), and
  // a pool tries another engine first.
  if (status == 429) return make_error(errc::too_many_requests, "the model server is rate limiting (HTTP 429): " + msg);
  // llama-server answers 500 for an image sent to a model without vision support (no mmproj):
  // the request cannot succeed however often it is retried, so it is the caller's 400.
  if (msg.find("image input is not supported") != std::string::npos) {
    return make_error(errc::invalid_request, msg, "messages", "image_not_supported");
  }
  // llama-server's embeddings answer 500 for an input longer than its physical batch: the input
  // is the caller's to shorten.
  if (msg.find("is too large to process") != std::string::npos) {
    return make_error(errc::invalid_request, msg, "input", std::string(k_context_code));
  }
  if (status >= 400 && status < 500 && is_context_overflow(detail)) {
    return make_error(errc::invalid_request, context_overflow_message(body, msg), "messages", std::string(k_context_code));
  }
  if (status >= 400 && status < 500) return make_error(errc::invalid_request, msg);
  return make_error(errc::upstream_error,
                    "the model server answered HTTP " + std::to_string(status) + ": " + msg);
}

result<http_call_request> chat_service::prepare(std::string_view api_path, json body, std::optional<bool> stream,
                                               std::optional<forced_call>& forced) const {
  if (upstream_.state() != upstream_state::ready) return make_error(errc::upstream_unavailable, upstream_.status_message());
  if (stream) body["stream"] = *stream;
  body["model"] = upstream_.model_id();
  if (upstream_.is_local() && api_path == "chat/completions") {
    const model_caps caps = upstream_.caps();
    enforce_json_object(body);
    if (caps.chatml_fallback) add_chatml_stop(body);
    forced = find_forced_call(body, !caps.native_tool_calls);
  }
  if (forced) body = rewrite_request(std::move(body), *forced);
  http_call_request req;
  req.url = upstream_.url_for(api_path);
  req.headers = upstream_.request_headers();
  req.headers.emplace_back("Content-Type: application/json");
  if (stream.value_or(false)) req.headers.emplace_back("Accept: text/event-stream");
  req.body = dump_safe(body);
  return req;
}

asio::awaitable<result<std::shared_ptr<void>>> chat_service::wait_ready() {
  upstream_.begin();  // a lazy or idle-unloaded model starts now
  const auto deadline = std::chrono::steady_clock::now() + load_wait_;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (true) {
    std::shared_ptr<void> lease = upstream_.lease();  // before the check: a swap then waits for it
    const upstream_state s = upstream_.state();
    if (s == upstream_state::ready) co_return lease;
    lease.reset();
    if (s != upstream_state::starting || std::chrono::steady_clock::now() >= deadline) {
      co_return make_error(errc::upstream_unavailable, upstream_.status_message());
    }
    timer.expires_after(k_start_poll);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return make_error(errc::cancelled, "cancelled while the model loaded");
  }
}

asio::awaitable<bool> chat_service::restarting_after_failure() {
  if (!upstream_.is_local() || load_wait_.count() == 0) co_return false;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto deadline = std::chrono::steady_clock::now() + k_crash_notice;
  while (upstream_.state() == upstream_state::ready) {
    if (std::chrono::steady_clock::now() >= deadline) co_return false;
    timer.expires_after(k_start_poll);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return false;
  }
  spdlog::info("the model server went away under a request before it answered; sending it again once restarted");
  co_return true;
}

asio::awaitable<result<std::shared_ptr<upstream_call>>> chat_service::begin(std::string api_path, json body,
                                                                          std::optional<bool> stream,
                                                                          std::optional<forced_call>& forced) {
  if (auto_swap_ && body.is_object() && body.contains("model") && body["model"].is_string() &&
      body["model"].get<std::string>() != upstream_.model_id()) {
    std::string wanted = body["model"].get<std::string>();
    auto swapped = co_await auto_swap_(std::move(wanted));
    if (!swapped) co_return swapped.error();
  }
  auto ready = co_await wait_ready();
  if (!ready) co_return ready.error();
  auto prepared = prepare(api_path, std::move(body), stream, forced);
  if (!prepared) co_return prepared.error();
  auto call = client_.start(std::move(*prepared), co_await asio::this_coro::executor);
  call->lease = std::move(*ready);
  co_return call;
}

asio::awaitable<result<std::unique_ptr<chat_stream>>> chat_service::open_stream(
    json body, std::shared_ptr<cancel_token> cancel, std::function<asio::awaitable<bool>()> on_silence,
    route_hint route) {
  // Not a coroutine: it hands back the coroutine that does the work (no co_await in branches,
  // which GCC 12 miscompiles).
  return open_stream_path("chat/completions", std::move(body), std::move(cancel), std::move(on_silence),
                          std::move(route));
}

namespace {
std::string model_of(const json& body) {
  auto it = body.is_object() ? body.find("model") : body.end();
  return body.is_object() && it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}
}  // namespace

namespace {
/// The keep-alive callback of one attempt through a pool: gives up (and says so in `late`) once
/// the engine has sent no answer head for `limit`, else calls the caller's own (if any).
std::function<asio::awaitable<bool>()> head_watch(std::function<asio::awaitable<bool>()> on_silence,
                                                  std::shared_ptr<bool> late, std::chrono::milliseconds limit,
                                                  std::chrono::milliseconds ping) {
  const auto since = std::chrono::steady_clock::now();
  auto last_ping = std::make_shared<std::chrono::steady_clock::time_point>(since);
  return [on_silence = std::move(on_silence), late = std::move(late), limit, since, ping,
          last_ping]() -> asio::awaitable<bool> {
    const auto now = std::chrono::steady_clock::now();
    if (limit.count() > 0 && now - since >= limit) {
      *late = true;
      co_return false;
    }
    // Called every head tick (engine_pool: finer than the ping); the keep-alive at the ping.
    if (!on_silence || now - *last_ping < ping) co_return true;
    *last_ping = now;
    const bool ok = co_await on_silence();
    co_return ok;
  };
}
}  // namespace

asio::awaitable<result<std::unique_ptr<chat_stream>>> chat_service::pooled_stream(
    std::string api_path, json body, std::shared_ptr<cancel_token> cancel,
    std::function<asio::awaitable<bool>()> on_silence, route_hint route) {
  std::vector<std::size_t> tried;
  std::vector<std::pair<std::size_t, error>> failures;
  const std::string model = model_of(body);
  while (tried.size() < pool_->options().max_attempts) {
    auto picked = co_await pool_->wait_pick(model, route.follow, tried);
    if (!picked) break;
    if (cancel && cancel->cancelled()) co_return make_error(errc::cancelled, "cancelled");
    const std::size_t at = picked->index;
    json attempt = body;
    std::string path = api_path;  // named arguments: no temporaries inside co_await (GCC 12)
    route_hint none;
    auto late = std::make_shared<bool>(false);
    auto watch = head_watch(on_silence, late, pool_->options().head_timeout, ping_interval_);
    auto opened = co_await pool_->chat(at).open_stream_path(std::move(path), std::move(attempt), cancel,
                                                            std::move(watch), std::move(none));
    if (opened) {
      pool_->settle(failures, true);
      pool_->succeeded(at, route.record);
      (*opened)->keep(std::move(picked->hold));
      co_return std::move(opened);
    }
    error why = *late ? make_error(errc::upstream_unavailable, "engine " + pool_->name(at) + " sent no answer within " +
                                                                   std::to_string(pool_->options().head_timeout.count() / 1000) + " s")
                      : opened.error();
    if (!engine_pool::fails_over(why)) {  // the request's own answer (a 4xx)
      pool_->settle(failures, false);
      co_return why;
    }
    failures.emplace_back(at, why);
    tried.push_back(at);
  }
  co_return pool_->give_up(failures, model);
}

asio::awaitable<result<json>> chat_service::pooled_post(std::string api_path, json body, std::optional<bool> stream,
                                                        route_hint route) {
  std::vector<std::size_t> tried;
  std::vector<std::pair<std::size_t, error>> failures;
  const std::string model = model_of(body);
  while (tried.size() < pool_->options().max_attempts) {
    auto picked = co_await pool_->wait_pick(model, route.follow, tried);
    if (!picked) break;
    const std::size_t at = picked->index;
    json attempt = body;
    if (stream) attempt["stream"] = *stream;
    std::string path = api_path;  // named arguments: no temporaries inside co_await (GCC 12)
    route_hint none;
    auto answer = co_await pool_->chat(at).post_path(std::move(path), std::move(attempt), std::move(none));
    if (answer) {
      pool_->settle(failures, true);
      pool_->succeeded(at, route.record);
      co_return std::move(answer);
    }
    if (!engine_pool::fails_over(answer.error())) {
      pool_->settle(failures, false);
      co_return std::move(answer);
    }
    failures.emplace_back(at, answer.error());
    tried.push_back(at);
  }
  co_return pool_->give_up(failures, model);
}

asio::awaitable<result<std::unique_ptr<chat_stream>>> chat_service::open_stream_path(
    std::string api_path, json body, std::shared_ptr<cancel_token> cancel,
    std::function<asio::awaitable<bool>()> on_silence, route_hint route) {
  if (pool_) {
    return pooled_stream(std::move(api_path), std::move(body), std::move(cancel), std::move(on_silence),
                         std::move(route));
  }
  return open_stream_one(std::move(api_path), std::move(body), std::move(cancel), std::move(on_silence));
}

asio::awaitable<result<std::unique_ptr<chat_stream>>> chat_service::open_stream_one(
    std::string api_path, json body, std::shared_ptr<cancel_token> cancel,
    std::function<asio::awaitable<bool>()> on_silence) {
  const bool may_retry = upstream_.is_local() && load_wait_.count() > 0;
  json again = may_retry ? body : json();
  bool no_head = false;
  auto first = co_await open_stream_once(api_path, std::move(body), cancel, on_silence, no_head);
  if (first || !no_head || !may_retry) co_return first;
  const bool restarting = co_await restarting_after_failure();
  if (!restarting) co_return first;
  bool no_head_again = false;
  auto second = co_await open_stream_once(std::move(api_path), std::move(again), std::move(cancel),
                                          std::move(on_silence), no_head_again);
  co_return second;
}

asio::awaitable<result<std::unique_ptr<chat_stream>>> chat_service::open_stream_once(
    std::string api_path, json body, std::shared_ptr<cancel_token> cancel,
    std::function<asio::awaitable<bool>()> on_silence, bool& no_head) {
  const auto asked_at = std::chrono::steady_clock::now();
  std::optional<forced_call> forced;
  auto started = co_await begin(std::move(api_path), std::move(body), true, forced);
  if (!started) co_return started.error();
  std::shared_ptr<upstream_call> call = std::move(*started);
  call_guard g(call);
  auto abort_on_cancel = cancel ? cancel->on_cancel([c = call] { c->cancel(); }) : cancel_token::registration{};

  // Wait for the head (generation may take a while to start: prompt processing).
  std::optional<call_event> ev;
  auto last_sign = std::chrono::steady_clock::now();
  const auto silence_tick = head_tick_.count() > 0 ? std::min(head_tick_, ping_interval_) : ping_interval_;
  while (!(ev = co_await call->next(k_head_wait_slice))) {
    if (on_silence && std::chrono::steady_clock::now() - last_sign >= silence_tick) {
      last_sign = std::chrono::steady_clock::now();
      if (!co_await on_silence()) co_return make_error(errc::cancelled, "the client went away");
    }
  }
  if (cancel && cancel->cancelled()) co_return make_error(errc::cancelled, "cancelled");
  if (ev->type == call_event::kind::end) {
    no_head = true;
    co_return ev->failure.value_or(make_error(errc::upstream_error, "the model server closed the connection"));
  }
  if (ev->status != 200) {
    std::string body_text;
    while (true) {
      auto more = co_await call->next(std::min(k_head_wait_slice, ping_interval_));
      if (!more) continue;
      if (more->type == call_event::kind::data) body_text += more->bytes;
      if (more->type == call_event::kind::end) break;
    }
    co_return without_upstream_key(upstream_status_error(ev->status, body_text), upstream_.request_headers());
  }
  g.c = nullptr;
  auto stream = std::make_unique<chat_stream>(std::move(call), ping_interval_, std::move(forced));
  stream->set_started(asked_at);
  co_return stream;
}

// complete() and post_path() are not coroutines: each hands back the coroutine that does the work.
asio::awaitable<result<json>> chat_service::complete(json body, route_hint route) {
  if (pool_) return pooled_post("chat/completions", std::move(body), false, std::move(route));
  return post_with_retry("chat/completions", std::move(body), false);
}

asio::awaitable<result<json>> chat_service::post_path(std::string api_path, json body, route_hint route) {
  if (pool_) return pooled_post(std::move(api_path), std::move(body), std::nullopt, std::move(route));
  return post_with_retry(std::move(api_path), std::move(body), std::nullopt);
}

asio::awaitable<result<json>> chat_service::post_once(std::string api_path, json body, std::optional<bool> stream,
                                                      bool& no_head) {
  std::optional<forced_call> forced;  // only chat/completions is rewritten (prepare)
  auto started = co_await begin(std::move(api_path), std::move(body), stream, forced);
  if (!started) co_return started.error();
  auto j = co_await read_json(std::move(*started), &no_head);
  if (!j) co_return j.error();
  if (forced) co_return rewrite_completion(std::move(*j), *forced);
  co_return std::move(*j);
}

asio::awaitable<result<json>> chat_service::post_with_retry(std::string api_path, json body,
                                                            std::optional<bool> stream) {
  const bool may_retry = upstream_.is_local() && load_wait_.count() > 0;
  json again = may_retry ? body : json();
  bool no_head = false;
  auto first = co_await post_once(api_path, std::move(body), stream, no_head);
  if (first || !no_head || !may_retry) co_return first;
  const bool restarting = co_await restarting_after_failure();
  if (!restarting) co_return first;
  bool no_head_again = false;
  auto second = co_await post_once(std::move(api_path), std::move(again), stream, no_head_again);
  co_return second;
}

std::string chat_service::root_url_for(std::string_view path) const {
  std::string url = upstream_.url_for("x");
  url.pop_back();
  if (url.size() >= 4 && url.compare(url.size() - 4, 4, "/v1/") == 0) url.resize(url.size() - 4);
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url + std::string(path);
}

asio::awaitable<result<json>> chat_service::post_root(std::string_view path, json body) {
  auto ready = co_await wait_ready();
  if (!ready) co_return ready.error();
  http_call_request req;
  req.url = root_url_for(path);
  req.headers = upstream_.request_headers();
  req.headers.emplace_back("Content-Type: application/json");
  req.body = dump_safe(body);
  auto call = client_.start(std::move(req), co_await asio::this_coro::executor);
  call->lease = std::move(*ready);
  co_return co_await read_json(std::move(call));
}

asio::awaitable<result<json>> chat_service::get_root(std::string_view path) {
  auto ready = co_await wait_ready();
  if (!ready) co_return ready.error();
  http_call_request req;
  req.method = "GET";
  req.url = root_url_for(path);
  req.headers = upstream_.request_headers();
  auto call = client_.start(std::move(req), co_await asio::this_coro::executor);
  call->lease = std::move(*ready);
  co_return co_await read_json(std::move(call));
}

asio::awaitable<result<json>> chat_service::read_json(std::shared_ptr<upstream_call> call, bool* no_head) {
  call_guard g(call);
  long status = 0;
  std::string text;
  while (true) {
    auto ev = co_await call->next(k_head_wait_slice);
    if (!ev) continue;
    if (ev->type == call_event::kind::head) status = ev->status;
    else if (ev->type == call_event::kind::data) text += ev->bytes;
    else {
      if (no_head) *no_head = status == 0;
      if (ev->failure) co_return *ev->failure;
      break;
    }
  }
  g.c = nullptr;
  if (status != 200) co_return without_upstream_key(upstream_status_error(status, text), upstream_.request_headers());
  auto j = parse_json(text);
  if (!j || !j->is_object()) {
    co_return make_error(errc::upstream_error, "the model server sent a malformed JSON body");
  }
  count_usage(*j);
  co_return std::move(*j);
}


void chat_stream::observe(std::size_t from) {
  for (std::size_t i = from; i < ready_.size(); ++i) {
    const chat_event& e = ready_[i];
    if (e.type != chat_event::kind::chunk || !e.parsed.is_object()) continue;
    if (!first_token_seen_ && carries_token(e.parsed)) {
      first_token_seen_ = true;
      describe_model_metrics();
      metrics::global().observe("warden_time_to_first_token_seconds", {},
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
    }
    count_usage(e.parsed);
  }
}

chat_stream::chat_stream(std::shared_ptr<upstream_call> call,
                         std::chrono::milliseconds ping_interval, std::optional<forced_call> forced)
    : call_(std::move(call)), ping_interval_(ping_interval), reader_(std::move(forced)) {}

chat_stream::~chat_stream() {
  if (!done_ && call_) {
    call_->cancel();
    spdlog::info("chat stream aborted before its end: upstream request cancelled");
  }
}

chunk_reader::chunk_reader(std::optional<forced_call> forced) {
  if (forced) rewriter_.emplace(std::move(*forced));
}

void chunk_reader::take(std::string_view bytes, std::deque<chat_event>& out) {
  for (auto& e : parser_.feed(bytes)) {
    if (saw_done_marker_) continue;
    if (e.data == "[DONE]") {
      saw_done_marker_ = true;
      continue;
    }
    chat_event ce;
    auto j = parse_json(e.data);
    if (!j || !j->is_object()) {
      ce.type = chat_event::kind::failed;
      ce.failure = make_error(errc::upstream_error, "the model server sent a malformed stream frame");
      out.push_back(std::move(ce));
      saw_done_marker_ = true;
      continue;
    }
    if (j->contains("error")) {
      ce.type = chat_event::kind::failed;
      ce.failure = make_error(errc::upstream_error, "the model server reported: " + read_upstream_error(e.data).message);
      const json& err = (*j)["error"];
      if (err.is_object() && err.value("code", json()).is_number_integer()) {
        const int code = err["code"].get<int>();
        if (code >= 400 && code < 500) ce.failure->code = errc::invalid_request;
      }
      out.push_back(std::move(ce));
      saw_done_marker_ = true;
      continue;
    }
    ce.type = chat_event::kind::chunk;
    if (rewriter_) {
      rewriter_->rewrite(*j);
      ce.raw = dump_safe(*j);
    } else {
      ce.raw = std::move(e.data);
    }
    ce.parsed = std::move(*j);
    out.push_back(std::move(ce));
  }
  if (parser_.failed()) {
    chat_event ce;
    ce.type = chat_event::kind::failed;
    ce.failure = make_error(errc::upstream_error, "the model server sent an oversized stream frame");
    out.push_back(std::move(ce));
    saw_done_marker_ = true;
  }
}

std::optional<chat_event> chat_stream::try_next() {
  while (ready_.empty() && !done_) {
    auto ev = call_->try_next();
    if (!ev) return std::nullopt;
    absorb(std::move(*ev));
  }
  if (ready_.empty()) {
    chat_event fin;
    fin.type = chat_event::kind::finished;
    return fin;
  }
  chat_event ev = std::move(ready_.front());
  ready_.pop_front();
  if (ev.type == chat_event::kind::failed) {
    done_ = true;
    call_->cancel();
  }
  return ev;
}

asio::awaitable<chat_event> chat_stream::next() {
  while (true) {
    if (auto ready = try_next()) co_return std::move(*ready);
    auto ev = co_await call_->next(ping_interval_);
    if (!ev) {
      chat_event ping;
      ping.type = chat_event::kind::ping;
      co_return ping;
    }
    absorb(std::move(*ev));
  }
}

void chat_stream::absorb(call_event ev) {
  switch (ev.type) {
    case call_event::kind::head:
      break;
    case call_event::kind::data: {
      const std::size_t before = ready_.size();
      reader_.take(ev.bytes, ready_);
      observe(before);
      break;
    }
    case call_event::kind::end: {
      done_ = true;
      if (ev.failure && ev.failure->code != errc::cancelled) {
        chat_event f;
        f.type = chat_event::kind::failed;
        f.failure = make_error(errc::upstream_error,
                               "the model server connection broke mid-stream: " + ev.failure->message);
        ready_.push_back(std::move(f));
      } else if (!reader_.saw_done() && !ev.failure) {
        // Body ended without [DONE]: a crash or a non-compliant server.
        chat_event f;
        f.type = chat_event::kind::failed;
        f.failure = make_error(errc::upstream_error, "the model server ended the stream without [DONE]");
        ready_.push_back(std::move(f));
      }
      break;
    }
  }
}

}  // namespace warden::engine
