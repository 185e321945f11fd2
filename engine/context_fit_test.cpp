#include "engine/context_fit.h"

#include <gtest/gtest.h>

#include "engine/testing/scripted_backend.h"

namespace warden::engine {
namespace {

using testing::drain;

model::message msg(model::role r, std::string text) {
  model::message m;
  m.role = r;
  m.content.emplace_back(model::text_part{std::move(text)});
  return m;
}

/// An upstream with a context of `n_ctx` tokens where every character is a token: it refuses a
/// prompt that does not fit as chat_service answers llama-server's refusal.
class small_context_backend : public testing::scripted_backend {
 public:
  std::int64_t n_ctx = 1000;
  bool can_measure = true;
  int counts = 0;
  std::int64_t per_message = 4;  ///< template tokens around a message (the estimate assumes 4)
  std::int64_t size(const model::chat_request& r) const {
    std::int64_t n = 0;
    for (const auto& m : r.messages) n += static_cast<std::int64_t>(model::message_chars(m)) + per_message;
    return n;
  }
  boost::asio::awaitable<result<std::unique_ptr<chat_turn>>> open_turn(
      const model::chat_request& req, std::shared_ptr<cancel_token> c,
      std::function<boost::asio::awaitable<bool>()> s) override {
    if (size(req) >= n_ctx) {
      seen.push_back(req);
      co_return make_error(errc::invalid_request, "too long", "messages", "context_length_exceeded");
    }
    auto t = co_await scripted_backend::open_turn(req, std::move(c), std::move(s));
    co_return t;
  }
  boost::asio::awaitable<result<std::int64_t>> count_prompt_tokens(const model::chat_request& r) override {
    ++counts;
    if (!can_measure) co_return make_error(errc::invalid_request, "cannot count");
    co_return size(r);
  }
  boost::asio::awaitable<result<std::int64_t>> context_size() override {
    if (!can_measure) co_return make_error(errc::invalid_request, "cannot tell");
    co_return n_ctx;
  }
};

/// The error open_turn answers (nullopt when a turn opened).
std::optional<error> open_error(chat_backend& b, const model::chat_request& req) {
  boost::asio::io_context ioc;
  auto fut = boost::asio::co_spawn(
      ioc,
      [&]() -> boost::asio::awaitable<std::optional<error>> {
        auto r = co_await b.open_turn(req, nullptr, nullptr);
        if (r) co_return std::nullopt;
        co_return r.error();
      },
      boost::asio::use_future);
  ioc.run();
  return fut.get();
}

model::chat_request long_chat(int exchanges, std::size_t each) {
  model::chat_request r;
  r.messages.push_back(msg(model::role::system, "be brief"));
  for (int i = 0; i < exchanges; ++i) {
    r.messages.push_back(msg(model::role::user, "q" + std::to_string(i) + std::string(each, 'x')));
    r.messages.push_back(msg(model::role::assistant, "a" + std::to_string(i) + std::string(each, 'y')));
  }
  r.messages.push_back(msg(model::role::user, "last question"));
  return r;
}

TEST(ContextFitBackend, AFittingRequestIsNotMeasured) {
  small_context_backend up;
  up.events = {model::text_delta{"hi"}};
  context_fitting_backend b(up, model::overflow_policy::truncate_oldest);
  auto evs = drain(b, long_chat(2, 10));
  EXPECT_EQ(testing::text_of(evs), "hi");
  EXPECT_EQ(up.counts, 0);
  ASSERT_EQ(up.seen.size(), 1u);
}

TEST(ContextFitBackend, OldestDropsUntilTheAnswerHasRoom) {
  small_context_backend up;
  up.events = {model::text_delta{"ok"}};
  context_fitting_backend b(up, model::overflow_policy::truncate_oldest);
  const auto req = long_chat(10, 100);  // ~2100 chars against 1000
  auto evs = drain(b, req);
  ASSERT_GE(evs.size(), 2u);
  const auto* t = std::get_if<model::context_truncated>(&evs[0]);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->policy, "truncate_oldest");
  EXPECT_EQ(t->n_ctx, 1000);
  EXPECT_GT(t->prompt_tokens_before, 1000);
  EXPECT_LE(t->prompt_tokens_after, 1000 - answer_reserve(1000, std::nullopt));
  ASSERT_FALSE(t->dropped.empty());
  EXPECT_EQ(t->dropped.front().index, 1u);  // the oldest user message went first
  EXPECT_EQ(t->dropped.front().role, "user");
  EXPECT_EQ(t->dropped.size() % 2, 0u);      // whole exchanges
  const auto& sent = up.seen.back();
  EXPECT_EQ(sent.messages.front().text(), "be brief");
  EXPECT_EQ(sent.messages.back().text(), "last question");
  EXPECT_EQ(sent.messages.size(), req.messages.size() - t->dropped.size());
  EXPECT_EQ(testing::text_of(evs), "ok");
}

// The breaker's and the newcomer's finding: with estimates off (a template heavier per message
// than assumed), the fit gave up after a few units and said nothing more could go. Every size of
// conversation whose last turn is short must fit, whatever max_tokens.
TEST(ContextFitBackend, EveryConversationWithAShortLastTurnFits) {
  for (std::int64_t per_message : {4, 30, 80}) {
    for (int exchanges = 3; exchanges <= 60; ++exchanges) {
      for (std::optional<std::int64_t> max_tokens : {std::optional<std::int64_t>{8}, std::optional<std::int64_t>{16},
                                                     std::optional<std::int64_t>{}}) {
        small_context_backend up;
        up.per_message = per_message;
        up.events = {model::text_delta{"ok"}};
        auto req = long_chat(exchanges, 20 + static_cast<std::size_t>(exchanges % 7) * 15);
        req.sampling.max_tokens = max_tokens;
        if (up.size(req) < up.n_ctx) continue;
        for (auto policy : {model::overflow_policy::truncate_oldest, model::overflow_policy::truncate_middle}) {
          context_fitting_backend b(up, policy);
          auto evs = drain(b, req);
          ASSERT_FALSE(evs.empty()) << per_message << " " << exchanges;
          const auto* t = std::get_if<model::context_truncated>(&evs[0]);
          ASSERT_NE(t, nullptr) << "per_message " << per_message << ", " << exchanges << " exchanges";
          EXPECT_LE(t->prompt_tokens_after, up.n_ctx - answer_reserve(up.n_ctx, max_tokens));
          EXPECT_EQ(up.size(up.seen.back()), t->prompt_tokens_after);
        }
      }
    }
  }
}

TEST(ContextFitBackend, MiddleKeepsTheFirstExchange) {
  small_context_backend up;
  up.events = {model::text_delta{"ok"}};
  context_fitting_backend b(up, model::overflow_policy::truncate_middle);
  auto evs = drain(b, long_chat(10, 100));
  const auto* t = std::get_if<model::context_truncated>(&evs.at(0));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dropped.front().index, 3u);
  EXPECT_EQ(up.seen.back().messages.at(1).text().substr(0, 2), "q0");
}

TEST(ContextFitBackend, ErrorPolicyPassesTheRefusalThrough) {
  small_context_backend up;
  context_fitting_backend b(up, model::overflow_policy::error);
  auto err = open_error(b, long_chat(10, 100));
  ASSERT_TRUE(err);
  const error& e = *err;
  EXPECT_EQ(e.type_code, "context_length_exceeded");
  EXPECT_EQ(up.counts, 0);
}

TEST(ContextFitBackend, ALastTurnTooLongForAnyDropIsAClearError) {
  small_context_backend up;
  context_fitting_backend b(up, model::overflow_policy::truncate_oldest);
  auto req = long_chat(2, 10);
  req.messages.back() = msg(model::role::user, std::string(2000, 'z'));
  auto err = open_error(b, req);
  ASSERT_TRUE(err);
  const error& e = *err;
  EXPECT_EQ(e.type_code, "context_length_exceeded");
  EXPECT_EQ(e.param, "messages");
  EXPECT_NE(e.message.find("last user turn"), std::string::npos) << e.message;
}

TEST(ContextFitBackend, AnUpstreamThatCannotMeasureGetsItsRefusalBack) {
  small_context_backend up;
  up.can_measure = false;
  context_fitting_backend b(up, model::overflow_policy::truncate_middle);
  auto err = open_error(b, long_chat(10, 100));
  ASSERT_TRUE(err);
  const error& e = *err;
  EXPECT_EQ(e.message, "too long");
}

TEST(ContextFitBackend, ReserveFollowsMaxTokensWithinAQuarter) {
  EXPECT_EQ(answer_reserve(8192, std::nullopt), 512);
  EXPECT_EQ(answer_reserve(8192, 100), 100);
  EXPECT_EQ(answer_reserve(1024, 4000), 256);
  EXPECT_EQ(answer_reserve(1024, 0), 256);
}

TEST(ContextFitBackend, DescribeListsRolesIdsAndAShortPreview) {
  std::vector<model::message> m = {msg(model::role::user, std::string(200, 'q'))};
  model::message call;
  call.role = model::role::assistant;
  call.content.emplace_back(model::tool_call_part{"c7", "python", "{}"});
  m.push_back(call);
  auto d = describe_dropped(m, {0, 1});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].preview.size(), 80u);
  EXPECT_EQ(d[1].tool_call_ids, (std::vector<std::string>{"c7"}));
  EXPECT_EQ(d[1].role, "assistant");
}

}  // namespace
}  // namespace warden::engine
