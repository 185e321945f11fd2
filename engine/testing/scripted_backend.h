// Test support (header-only, for *_test.cpp files only): a backend whose turns play a list of
// events (scripted_turn), and helpers that read a whole turn.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <string>
#include <vector>

#include "engine/testing/scripted_turn.h"

namespace warden::engine::testing {

namespace asio = boost::asio;

class scripted_backend : public chat_backend {
 public:
  std::vector<model::stream_event> events;
  std::vector<model::chat_request> seen;
  int cancels = 0;
  asio::awaitable<result<std::unique_ptr<chat_turn>>> open_turn(const model::chat_request& req,
                                                                std::shared_ptr<cancel_token>,
                                                                std::function<asio::awaitable<bool>()>) override {
    seen.push_back(req);
    co_return std::unique_ptr<chat_turn>(std::make_unique<testing::scripted_turn>(events, [c = &cancels] { ++*c; }));
  }
  std::string model_id() const override { return "m"; }
  asio::awaitable<result<std::int64_t>> count_prompt_tokens(const model::chat_request&) override { co_return 7; }
};

inline std::vector<model::stream_event> drain(chat_backend& b, const model::chat_request& req) {
  asio::io_context ioc;
  auto fut = asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<std::vector<model::stream_event>> {
        std::vector<model::stream_event> out;
        auto t = co_await b.open_turn(req, nullptr, nullptr);
        if (!t) co_return out;
        while (auto ev = co_await (*t)->next()) out.push_back(std::move(*ev));
        co_return out;
      },
      asio::use_future);
  ioc.run();
  return fut.get();
}

inline std::string text_of(const std::vector<model::stream_event>& evs) {
  std::string s;
  for (const auto& e : evs) {
    if (const auto* t = std::get_if<model::text_delta>(&e)) s += t->text;
  }
  return s;
}

}  // namespace warden::engine::testing
