#include "client/chat_client.h"

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>

#include <mutex>
#include <utility>

#include "common/sse.h"

namespace warden::client {

namespace {

constexpr std::size_t k_max_error_body_bytes = 1u << 20;

/// True for the failures that mean "nobody answered at that address".
bool unreachable(CURLcode code) {
  return code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY ||
         code == CURLE_OPERATION_TIMEDOUT || code == CURLE_URL_MALFORMAT || code == CURLE_UNSUPPORTED_PROTOCOL;
}

}  // namespace

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string http_reply::error_text() const {
  if (!transport_error.empty()) return transport_error;
  if (status >= 200 && status < 300) return "";
  return http_error_message(status, body);
}

struct http_api::call {
  const char* method = "GET";
  std::string path;
  std::string body;
  bool streaming = false;
  const std::function<void(std::string_view)>* on_bytes = nullptr;
  const std::atomic<bool>* abort = nullptr;
  CURL* handle = nullptr;
  std::string received;

  static std::size_t on_write(char* data, std::size_t size, std::size_t n, void* user) {
    auto* c = static_cast<call*>(user);
    const std::size_t len = size * n;
    if (c->abort != nullptr && c->abort->load()) return 0;  // ends the transfer (CURLE_WRITE_ERROR)
    long status = 0;
    curl_easy_getinfo(c->handle, CURLINFO_RESPONSE_CODE, &status);
    if (c->on_bytes != nullptr && status >= 200 && status < 300) {
      (*c->on_bytes)(std::string_view(data, len));
    } else if (c->received.size() < k_max_error_body_bytes) {
      c->received.append(data, len);
    }
    return len;
  }

  static int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* c = static_cast<call*>(user);
    return c->abort != nullptr && c->abort->load() ? 1 : 0;
  }
};

http_api::http_api(std::string base_url, std::string api_key, long connect_timeout_ms, long timeout_ms)
    : base_url_(normalize_base_url(base_url)),
      api_key_(std::move(api_key)),
      connect_timeout_ms_(connect_timeout_ms),
      timeout_ms_(timeout_ms) {}

http_reply http_api::perform(call& c) const {
  http_reply reply;
  CURL* h = curl_easy_init();
  if (h == nullptr) {
    reply.transport_error = "could not start an HTTP request (libcurl)";
    return reply;
  }
  c.handle = h;
  const std::string url = base_url_ + c.path;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Expect:");
  if (c.streaming) headers = curl_slist_append(headers, "Accept: text/event-stream");
  if (std::string_view(c.method) == "POST") headers = curl_slist_append(headers, "Content-Type: application/json");
  const std::string auth = "Authorization: Bearer " + api_key_;
  if (!api_key_.empty()) headers = curl_slist_append(headers, auth.c_str());
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms_);
  if (!c.streaming) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms_);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &call::on_write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &c);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &call::on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &c);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  if (std::string_view(c.method) == "POST") {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, c.body.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(c.body.size()));
  } else if (std::string_view(c.method) != "GET") {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c.method);
  }
  const CURLcode code = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &reply.status);
  reply.body = std::move(c.received);
  if (code != CURLE_OK) {
    const std::string reason = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(code);
    if (c.abort != nullptr && c.abort->load()) reply.transport_error = "aborted";
    else if (unreachable(code) && reply.status == 0) reply.transport_error = "cannot reach warden at " + base_url_ + ": " + reason;
    else reply.transport_error = "the connection to " + base_url_ + " broke: " + reason;
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return reply;
}

http_reply http_api::get(std::string_view path) const {
  call c;
  c.path = path;
  return perform(c);
}

http_reply http_api::post_json(std::string_view path, const json& body) const {
  call c;
  c.method = "POST";
  c.path = path;
  c.body = dump_safe(body);
  return perform(c);
}

http_reply http_api::del(std::string_view path) const {
  call c;
  c.method = "DELETE";
  c.path = path;
  return perform(c);
}

http_reply http_api::stream(std::string_view path, const json& body, const std::function<void(std::string_view)>& on_bytes,
                            const std::atomic<bool>& abort) const {
  call c;
  c.method = "POST";
  c.path = path;
  c.body = dump_safe(body);
  c.streaming = true;
  c.on_bytes = &on_bytes;
  c.abort = &abort;
  return perform(c);
}

event_stream::event_stream(const http_api& api, std::string path, json body) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGWINCH);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  reader_ = std::thread([this, &api, path = std::move(path), body = std::move(body)] { read(api, path, body); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

event_stream::~event_stream() {
  abort_ = true;
  if (reader_.joinable()) reader_.join();
}

void event_stream::push(stream_item item) {
  {
    std::lock_guard lock(mu_);
    items_.push_back(std::move(item));
  }
  cv_.notify_one();
}

void event_stream::read(const http_api& api, const std::string& path, const json& body) {
  sse::parser parser;
  bool saw_done = false;
  const std::function<void(std::string_view)> on_bytes = [&](std::string_view bytes) {
    for (const auto& ev : parser.feed(bytes)) {
      for (auto& e : parse_stream_data(ev.data)) {
        if (std::holds_alternative<done_event>(e)) saw_done = true;
        push(std::move(e));
      }
    }
    if (parser.failed()) abort_ = true;
  };
  http_reply reply = api.stream(path, body, on_bytes, abort_);
  push(stream_closed{std::move(reply), saw_done});
}

std::optional<stream_item> event_stream::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (closed_handed_out_) return std::nullopt;
  if (!cv_.wait_for(lock, timeout, [this] { return !items_.empty(); })) return std::nullopt;
  stream_item item = std::move(items_.front());
  items_.pop_front();
  if (std::holds_alternative<stream_closed>(item)) closed_handed_out_ = true;
  return item;
}

}  // namespace warden::client
