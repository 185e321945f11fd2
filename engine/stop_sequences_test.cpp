// engine/stop_sequences.h: the matcher (pure) and the wrapping backend over a scripted turn.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "engine/stop_sequences.h"
#include "engine/testing/scripted_backend.h"

namespace warden::engine {
namespace {

namespace asio = boost::asio;
using testing::drain;
using testing::scripted_backend;
using testing::text_of;

TEST(StopMatch, EarliestAndLongestAtThePosition) {
  const std::vector<std::string> stops = {"END", "EN", "\n\n"};
  EXPECT_EQ(find_stop("abc END x", stops), (std::pair<std::size_t, std::string>{4, "END"}));
  EXPECT_EQ(find_stop("a\n\nEND", stops), (std::pair<std::size_t, std::string>{1, "\n\n"}));
  EXPECT_EQ(find_stop("nothing", stops).first, std::string::npos);
  EXPECT_EQ(find_stop("x", {""}).first, std::string::npos);
}

TEST(StopMatch, HeldBackTailIsAPossibleStart) {
  const std::vector<std::string> stops = {"STOP", "\n\n"};
  EXPECT_EQ(stop_prefix_tail("hello ST", stops), 2u);
  EXPECT_EQ(stop_prefix_tail("hello STO", stops), 3u);
  EXPECT_EQ(stop_prefix_tail("hello\n", stops), 1u);
  EXPECT_EQ(stop_prefix_tail("hello", stops), 0u);
  EXPECT_EQ(stop_prefix_tail("", stops), 0u);
}

TEST(StopSequenceBackend, CutsAcrossDeltasAndAborts) {
  scripted_backend inner;
  inner.events = {model::text_delta{"one, two, th"}, model::text_delta{"ree, fo"}, model::text_delta{"ur"},
                  model::finish_event{model::finish_reason::length}};
  stop_sequence_backend b(inner, {"three", ""});
  model::chat_request req;
  req.sampling.stop = std::vector<std::string>{"client"};
  auto evs = drain(b, req);
  EXPECT_EQ(text_of(evs), "one, two, ");
  EXPECT_EQ(b.matched(), "three");
  EXPECT_EQ(inner.cancels, 1);
  ASSERT_FALSE(inner.seen.empty());
  EXPECT_FALSE(inner.seen[0].sampling.stop.has_value());  // the upstream is not told
  ASSERT_GE(evs.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<model::finish_event>(evs.back()));
  EXPECT_EQ(std::get<model::finish_event>(evs.back()).reason, model::finish_reason::stop);
  const auto* u = std::get_if<model::usage_event>(&evs[evs.size() - 2]);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->usage.completion_tokens, 2);  // the two content events read before the match
  EXPECT_EQ(u->usage.prompt_tokens, 7);      // counted by the backend: the upstream was cut before reporting
}

TEST(StopSequenceBackend, NoMatchPassesEverythingThrough) {
  scripted_backend inner;
  inner.events = {model::text_delta{"abc S"}, model::tool_call_started{0, "id", "f"}, model::text_delta{"TOx"},
                  model::finish_event{model::finish_reason::stop}, model::usage_event{model::usage{1, 2, 3}}};
  stop_sequence_backend b(inner, {"STOP"});
  auto evs = drain(b, model::chat_request{});
  EXPECT_EQ(text_of(evs), "abc STOx");  // a held-back "S" is released by the next non-text event
  EXPECT_EQ(b.matched(), "");
  EXPECT_EQ(inner.cancels, 0);
  ASSERT_EQ(evs.size(), 6u);  // "abc ", the released "S", the call, "TOx", finish, usage
  EXPECT_EQ(std::get<model::text_delta>(evs[0]).text, "abc ");
  EXPECT_EQ(std::get<model::text_delta>(evs[1]).text, "S");
  EXPECT_TRUE(std::holds_alternative<model::tool_call_started>(evs[2]));
  EXPECT_TRUE(std::holds_alternative<model::usage_event>(evs[5]));
}

TEST(StopSequenceBackend, WithoutSequencesTheRequestIsUntouched) {
  scripted_backend inner;
  inner.events = {model::text_delta{"x"}};
  stop_sequence_backend b(inner, {});
  model::chat_request req;
  req.sampling.stop = std::vector<std::string>{"keep"};
  auto evs = drain(b, req);
  EXPECT_EQ(text_of(evs), "x");
  EXPECT_EQ(inner.seen[0].sampling.stop, (std::optional<std::vector<std::string>>{{"keep"}}));
}

}  // namespace
}  // namespace warden::engine
