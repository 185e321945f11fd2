// The Streamable HTTP transport (mcp_transports.h).
#include <curl/curl.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/sse.h"
#include "common/text.h"
#include "tools/mcp_transports.h"

namespace warden::tools::mcp {

namespace {

constexpr int k_resume_tries = 3;

/// One HTTP exchange's state, shared by the curl callbacks and the thread that waits for its headers.
struct exchange {
  std::mutex mu;
  std::condition_variable cv;
  bool headers_done = false;  ///< the status line and headers are in (or the transfer failed)
  long status = 0;
  std::string content_type;
  std::string session_id;
  std::string failure;        ///< curl's error when it failed before any headers
  std::string body;           ///< a JSON body (kept until the end)
  sse::parser events;
  bool sse = false;
  bool answered = false;      ///< the response to the request it carried arrived
  json request_id;            ///< the id of the request it carried (null: none)
  std::string method;         ///< that request's method
};

/// A session id as the spec allows it: visible ASCII (0x21–0x7E), at most 256 characters here.
bool valid_session_id(const std::string& id) {
  if (id.empty() || id.size() > 256) return false;
  return std::all_of(id.begin(), id.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

class http_transport final : public transport {
 public:
  explicit http_transport(http_options o) : o_(std::move(o)) {}
  ~http_transport() override { close(); }

  void start(message_fn on_message, closed_fn on_closed) override {
    on_message_ = std::move(on_message);
    on_closed_ = std::move(on_closed);
  }

  void set_protocol_version(const std::string& v) override {
    {
      std::lock_guard lk(mu_);
      version_ = v;
    }
    spawn([this] { listen(); });
  }

  /// Starts the POST on a thread of the transport and returns at once (never blocks an io
  /// thread). POSTs leave in order: each waits until the one before it has its answer's headers.
  /// A request whose POST fails, or whose answer never comes, gets a JSON-RPC error in its place.
  result<void> send(const json& msg) override {
    if (closing_.load()) return make_error(errc::upstream_unavailable, "the MCP connection to " + o_.label + " is closed");
    auto ex = std::make_shared<exchange>();
    if (msg.contains("method") && msg.contains("id")) {
      ex->request_id = msg["id"];
      ex->method = msg["method"].is_string() ? msg["method"].get<std::string>() : std::string();
    }
    std::string body = msg.dump(-1, ' ', false, json::error_handler_t::replace);
    std::shared_ptr<exchange> before;
    {
      std::lock_guard lk(mu_);
      before = std::exchange(last_, ex);
    }
    spawn([this, ex, before, body = std::move(body)] {
      if (before) {
        std::unique_lock lk(before->mu);
        before->cv.wait_for(lk, o_.connect_timeout + std::chrono::seconds(5), [&] { return before->headers_done; });
      }
      post(ex, body);
    });
    return {};
  }

  void close() override {
    if (closing_.exchange(true)) return;
    if (has_session()) delete_session();
    // The transfers see closing_ in curl's progress callback and end; wait for every thread but
    // the calling one (the last owner may let go on a transport thread).
    std::unique_lock lk(mu_);
    const int self = in_transport_thread ? 1 : 0;
    done_cv_.wait(lk, [&] { return active_ <= self; });
  }

 private:
  template <class F>
  void spawn(F f) {
    std::lock_guard lk(mu_);
    if (closing_.load()) return;
    ++active_;
    std::thread([this, f = std::move(f)]() mutable {
      in_transport_thread = true;
      f();
      std::lock_guard lk2(mu_);
      --active_;
      done_cv_.notify_all();
    }).detach();
  }

  bool has_session() {
    std::lock_guard lk(mu_);
    return !session_id_.empty();
  }

  curl_slist* header_list(bool for_get, const std::string& last_event_id) {
    curl_slist* h = nullptr;
    h = curl_slist_append(h, for_get ? "Accept: text/event-stream" : "Accept: application/json, text/event-stream");
    if (!for_get) h = curl_slist_append(h, "Content-Type: application/json");
    std::lock_guard lk(mu_);
    if (!session_id_.empty()) h = curl_slist_append(h, ("Mcp-Session-Id: " + session_id_).c_str());
    if (!version_.empty()) h = curl_slist_append(h, ("MCP-Protocol-Version: " + version_).c_str());
    if (!last_event_id.empty()) h = curl_slist_append(h, ("Last-Event-ID: " + last_event_id).c_str());
    for (const auto& [k, v] : o_.headers) h = curl_slist_append(h, (k + ": " + v).c_str());
    return h;
  }

  static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
    auto* ex = static_cast<exchange*>(user);
    std::string_view line(data, size * n);
    const auto colon = line.find(':');
    if (colon != std::string_view::npos) {
      const std::string name = ascii_lower(std::string(line.substr(0, colon)));
      const std::string value(trim(line.substr(colon + 1)));
      std::lock_guard lk(ex->mu);
      if (name == "content-type") ex->content_type = ascii_lower(value);
      if (name == "mcp-session-id") ex->session_id = value;
    }
    return size * n;
  }

  struct write_ctx {
    http_transport* self;
    exchange* ex;
    CURL* curl;
  };

  static std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
    auto* w = static_cast<write_ctx*>(user);
    w->self->headers_in(*w->ex, w->curl);
    std::vector<sse::event> got;
    {
      std::lock_guard lk(w->ex->mu);
      if (w->ex->sse) {
        got = w->ex->events.feed(std::string_view(data, size * n));
      } else if (w->ex->body.size() < (64u << 20)) {
        w->ex->body.append(data, size * n);
      }
    }
    for (auto& e : got) w->self->deliver_text(*w->ex, e.data);
    return size * n;
  }

  static int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<http_transport*>(user)->closing_.load() ? 1 : 0;
  }

  /// Marks the headers as in (once): status, session id, SSE or not; wakes send().
  void headers_in(exchange& ex, CURL* curl) {
    std::lock_guard lk(ex.mu);
    if (ex.headers_done) return;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &ex.status);
    ex.sse = ex.content_type.rfind("text/event-stream", 0) == 0;
    if (valid_session_id(ex.session_id)) {
      std::lock_guard lk2(mu_);
      if (session_id_.empty()) session_id_ = ex.session_id;  // the one initialize's answer gave
    }
    ex.headers_done = true;
    ex.cv.notify_all();
  }

  void deliver_text(exchange& ex, std::string_view text) {
    json m = json::parse(text, nullptr, false);
    if (m.is_discarded()) return;
    std::vector<json> all;
    if (m.is_array()) {
      for (auto& one : m) all.push_back(std::move(one));
    } else {
      all.push_back(std::move(m));
    }
    for (auto& one : all) {
      if (!one.is_object()) continue;
      one.erase(k_related_request);
      const bool is_request = one.contains("method") && one.contains("id");
      if (!ex.request_id.is_null() && one.contains("id") && one["id"] == ex.request_id && !one.contains("method")) {
        std::lock_guard lk(ex.mu);
        ex.answered = true;
      }
      if (is_request && !ex.request_id.is_null()) one[k_related_request] = ex.request_id;  // the call it belongs to
      if (on_message_) on_message_(std::move(one));
    }
  }

  /// One transfer: POST `body` (or GET when empty); false when curl failed.
  bool transfer(exchange& ex, const std::string* body, const std::string& last_event_id, bool stream_timeout) {
    CURL* curl = curl_easy_init();
    if (!curl) return false;
    curl_slist* headers = header_list(body == nullptr, last_event_id);
    write_ctx w{this, &ex, curl};
    curl_easy_setopt(curl, CURLOPT_URL, o_.url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_PROXY, "");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o_.connect_timeout.count()));
    if (!stream_timeout) curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &http_transport::on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &ex);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &http_transport::on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &w);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &http_transport::on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, this);
    if (body) {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->c_str());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    } else {
      curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    }
    const CURLcode rc = curl_easy_perform(curl);
    headers_in(ex, curl);  // a body-less answer (202) has its headers in now
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    if (rc != CURLE_OK) {
      std::lock_guard lk(ex.mu);
      if (ex.status == 0) ex.failure = curl_easy_strerror(rc);
      return false;
    }
    return true;
  }

  void post(std::shared_ptr<exchange> ex, std::string body) {
    transfer(*ex, &body, "", true);
    std::string json_body;
    {
      std::lock_guard lk(ex->mu);
      if (!ex->sse) json_body = std::move(ex->body);
    }
    if (!json_body.empty() && ex->status < 300) deliver_text(*ex, json_body);
    if (ex->status == 404 && has_session() && !closing_.load() && on_closed_) on_closed_("the MCP server " + o_.label + " ended the session");
    resume_if_cut(*ex);
    fail_unanswered(*ex);
  }

  /// Why the request `ex` carried got no answer ("" when it did, or carried none).
  std::string no_answer_reason(exchange& ex) {
    std::lock_guard lk(ex.mu);
    if (ex.request_id.is_null() || ex.answered) return "";
    if (!ex.failure.empty()) return "could not reach the MCP server " + o_.label + ": " + ex.failure;
    if (ex.status == 401 || ex.status == 403) {
      return "the MCP server " + o_.label + " refused the credentials (HTTP " + std::to_string(ex.status) + ")";
    }
    if (ex.status >= 300) return "the MCP server " + o_.label + " answered HTTP " + std::to_string(ex.status);
    return "the MCP server " + o_.label + " sent no answer to " + (ex.method.empty() ? "the request" : ex.method);
  }

  /// A request that got no answer gets an error in its place, so its waiter does not wait out its timeout.
  void fail_unanswered(exchange& ex) {
    if (closing_.load() || !on_message_) return;
    const std::string why = no_answer_reason(ex);
    if (why.empty()) return;
    json err = json::object();
    err["jsonrpc"] = "2.0";
    err["id"] = ex.request_id;
    err["error"] = json{{"code", -32000}, {"message", why}};
    on_message_(std::move(err));
  }

  /// An SSE answer that ended before its response: GET with Last-Event-ID (spec "Resumability"),
  /// from the last event seen on any of its streams, at most k_resume_tries times.
  void resume_if_cut(exchange& ex) {
    std::string last;
    {
      std::lock_guard lk(ex.mu);
      if (!ex.sse || ex.answered || ex.request_id.is_null()) return;
      last = ex.events.last_event_id();
    }
    for (int i = 0; i < k_resume_tries && !closing_.load() && !last.empty(); ++i) {
      exchange again;
      again.request_id = ex.request_id;
      transfer(again, nullptr, last, true);
      std::lock_guard lk(again.mu);
      if (again.answered) {
        std::lock_guard lk2(ex.mu);
        ex.answered = true;
        return;
      }
      if (again.status >= 400) break;
      if (!again.events.last_event_id().empty()) last = again.events.last_event_id();
    }
    spdlog::warn("MCP {}: a response stream ended before its answer", o_.label);
  }

  /// The GET stream of the server's own messages, kept open (reconnecting with Last-Event-ID).
  void listen() {
    std::string last;
    for (int tries = 0; tries < 5 && !closing_.load(); ++tries) {
      exchange ex;
      transfer(ex, nullptr, last, true);
      if (ex.status == 405 || ex.status == 404 || (ex.status >= 400 && ex.status != 0)) return;  // no stream offered
      last = ex.events.last_event_id();
      for (int i = 0; i < 10 && !closing_.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  void delete_session() {
    CURL* curl = curl_easy_init();
    if (!curl) return;
    curl_slist* headers = header_list(true, "");
    curl_easy_setopt(curl, CURLOPT_URL, o_.url.c_str());
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "DELETE");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_PROXY, "");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 2000L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, +[](char*, std::size_t s, std::size_t n, void*) { return s * n; });
    curl_easy_perform(curl);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
  }

  http_options o_;
  message_fn on_message_;
  closed_fn on_closed_;
  std::mutex mu_;
  std::string session_id_;
  std::string version_;
  std::shared_ptr<exchange> last_;  ///< the latest POST (the next waits for its headers)
  int active_ = 0;  ///< threads running (guarded by mu_)
  std::condition_variable done_cv_;
  std::atomic<bool> closing_{false};
};

}  // namespace

std::unique_ptr<transport> make_http_transport(http_options o) { return std::make_unique<http_transport>(std::move(o)); }

}  // namespace warden::tools::mcp
