// Test support (header-only, for *_test.cpp files only): a model turn that plays a list of events.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <deque>
#include <functional>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "engine/chat_backend.h"
#include "model/events.h"

namespace warden::engine::testing {

/// Plays `events` in order through next(), then std::nullopt. Its canceller runs `on_cancel`
/// (nothing when empty). Not thread-safe: one reader on one io_context.
class scripted_turn final : public chat_turn {
 public:
  explicit scripted_turn(std::vector<model::stream_event> events, std::function<void()> on_cancel = {})
      : events_(std::make_move_iterator(events.begin()), std::make_move_iterator(events.end())),
        on_cancel_(std::move(on_cancel)) {}
  boost::asio::awaitable<std::optional<model::stream_event>> next() override {
    if (events_.empty()) co_return std::nullopt;
    auto e = std::move(events_.front());
    events_.pop_front();
    co_return e;
  }
  std::function<void()> canceller() const override {
    if (on_cancel_) return on_cancel_;
    return [] {};
  }

 private:
  std::deque<model::stream_event> events_;
  std::function<void()> on_cancel_;
};

}  // namespace warden::engine::testing
