// `warden chat`, the wire: blocking HTTP calls to a warden server over libcurl, and one
// streaming request read on a thread of its own (so the terminal can ask a person about a tool
// call, and send the answer as a separate request, while the stream stays open).
//
// http_api: GET / POST (JSON) / DELETE against `base_url` (e.g. http://127.0.0.1:8888), with
// `Authorization: Bearer <api_key>` when a key is set. Connecting may take at most
// `connect_timeout_ms` (the server being down is an answer in seconds, never a hang); a whole
// call at most `timeout_ms`. A reply whose `transport_error` is set never reached the server
// (refused, timed out, bad URL): its message names the URL and curl's reason.
//
// event_stream: POSTs a chat request and turns the SSE body into typed events
// (chat_events.h) on a reader thread; next() hands them to the caller in order, then one
// stream_closed. An HTTP error status ends the stream at once with that status and body (the
// body is not parsed as SSE). abort() makes the transfer stop within about a second (curl's
// progress callback), and the destructor aborts and joins. The stream has no total timeout: a
// card may wait for a person for an hour, and the server pings meanwhile.
//
// Thread-safety: http_api is immutable after construction; its calls may run on any thread at
// once (each uses its own curl handle). event_stream: next() from one consumer thread; abort()
// from any thread. curl_global_init must have run (global_init()) before any thread starts.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>

#include "client/chat_events.h"

namespace warden::client {

/// curl_global_init once per process (idempotent); call before starting threads.
void global_init();

struct http_reply {
  long status = 0;              ///< HTTP status; 0 when the server was not reached
  std::string body;             ///< the body (of an error status too)
  std::string transport_error;  ///< set when the server was not reached, or the transfer broke or was aborted
  bool ok() const { return transport_error.empty() && status >= 200 && status < 300; }
  /// transport_error, or http_error_message(status, body) for a status outside 2xx; "" when ok.
  std::string error_text() const;
};

class http_api {
 public:
  http_api(std::string base_url, std::string api_key, long connect_timeout_ms = 5000, long timeout_ms = 30000);

  http_reply get(std::string_view path) const;
  http_reply post_json(std::string_view path, const json& body) const;
  http_reply del(std::string_view path) const;

  /// POSTs `body` and calls `on_bytes` with each piece of a 2xx body as it arrives; an error
  /// status's body is collected into the reply instead. Returns when the body ends, the
  /// transfer fails, or `abort` becomes true (transport_error "aborted"). No total timeout.
  http_reply stream(std::string_view path, const json& body, const std::function<void(std::string_view)>& on_bytes,
                    const std::atomic<bool>& abort) const;

  const std::string& base_url() const { return base_url_; }

 private:
  struct call;
  http_reply perform(call& c) const;

  std::string base_url_;
  std::string api_key_;
  long connect_timeout_ms_;
  long timeout_ms_;
};

/// How a stream ended: the reply (status, error body, transport error) and whether `[DONE]`
/// was seen.
struct stream_closed {
  http_reply reply;
  bool saw_done = false;
};

using stream_item = std::variant<stream_event, stream_closed>;

class event_stream {
 public:
  /// Starts the request at once on a reader thread (SIGINT blocked there, so Ctrl-C always
  /// reaches the terminal's thread). `api` must outlive the stream.
  event_stream(const http_api& api, std::string path, json body);
  ~event_stream();
  event_stream(const event_stream&) = delete;
  event_stream& operator=(const event_stream&) = delete;

  /// The next item, waiting at most `timeout`; nullopt when none came in time. After the
  /// stream_closed item, always nullopt.
  std::optional<stream_item> next(std::chrono::milliseconds timeout);

  /// Stops reading (the server sees the client go away); returns at once.
  void abort() { abort_ = true; }

 private:
  void read(const http_api& api, const std::string& path, const json& body);
  void push(stream_item item);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<stream_item> items_;
  bool closed_handed_out_ = false;
  std::atomic<bool> abort_{false};
  std::thread reader_;
};

}  // namespace warden::client
