// Test support (header-only, for *_test.cpp files only): a response_writer that records what a
// handler wrote, for tests that drive a route's handler or http::router on an io_context.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/http_types.h"

namespace warden::testing {

/// Keeps a whole response: `send` sets status, content type and body; a stream sets status 200
/// and `streamed`, and each write_stream appends its bytes to `body` and to `frames`. It can stop
/// a stream: write_stream answers false once `stop_when(frame)` is true (the client went away after
/// that frame). Not thread-safe: one handler on one io_context at a time.
class recording_writer final : public response_writer {
 public:
  int status = 0;
  std::string content_type, body;
  bool streamed = false;
  std::vector<std::string> frames;
  std::vector<std::pair<std::string, std::string>> headers;
  std::function<bool(const std::string&)> stop_when;
  std::function<void(const std::string&)> on_frame;  ///< runs before write_stream answers
  bool yield_in_write = false;                       ///< suspend in write_stream, as a socket write does

  boost::asio::awaitable<bool> send(int s, std::string ct, std::string b) override {
    status = s;
    content_type = std::move(ct);
    body = std::move(b);
    co_return true;
  }
  boost::asio::awaitable<bool> begin_stream() override {
    streamed = true;
    status = 200;
    co_return true;
  }
  boost::asio::awaitable<bool> write_stream(std::string b) override {
    body += b;
    frames.push_back(std::move(b));
    if (on_frame) on_frame(frames.back());
    if (yield_in_write) {
      auto ex = co_await boost::asio::this_coro::executor;
      co_await boost::asio::post(ex, boost::asio::use_awaitable);
    }
    const bool stop = stop_when && stop_when(frames.back());
    co_return !stop;
  }
  boost::asio::awaitable<bool> end_stream() override { co_return true; }
  bool started() const override { return status != 0; }
  void add_header(std::string name, std::string value) override { headers.emplace_back(std::move(name), std::move(value)); }

  /// The first added header of that name; "" when none.
  std::string header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return v;
    }
    return "";
  }
  /// `body` parsed as JSON (throws nlohmann::json::parse_error when it is not).
  nlohmann::json json_body() const { return nlohmann::json::parse(body); }
};

}  // namespace warden::testing
