#include "engine/context_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/utf8.h"

namespace warden::engine {

namespace asio = boost::asio;

namespace {

constexpr std::string_view k_context_code = "context_length_exceeded";
constexpr std::int64_t k_default_reserve = 512;  ///< tokens kept for an answer without max_tokens
constexpr std::int64_t k_message_overhead = 4;   ///< template tokens around one message (ChatML: 4–5)
constexpr std::size_t k_preview_chars = 80;

/// A turn that yields one event before another turn's.
class prefixed_turn : public chat_turn {
 public:
  prefixed_turn(std::unique_ptr<chat_turn> inner, model::stream_event first)
      : inner_(std::move(inner)), first_(std::move(first)) {}
  asio::awaitable<std::optional<model::stream_event>> next() override {
    if (first_) {
      std::optional<model::stream_event> ev = std::move(first_);
      first_.reset();
      co_return ev;
    }
    auto ev = co_await inner_->next();
    co_return ev;
  }
  bool poll_ready() override { return first_.has_value() || inner_->poll_ready(); }
  std::function<void()> canceller() const override { return inner_->canceller(); }

 private:
  std::unique_ptr<chat_turn> inner_;
  std::optional<model::stream_event> first_;
};

/// Each message's estimated tokens: its characters scaled so that all of the prompt (messages
/// and tool definitions) comes to `total` tokens, plus the template's few per message.
std::vector<std::int64_t> estimate_tokens(const model::chat_request& req, std::int64_t total) {
  std::size_t chars = 0;
  std::vector<std::size_t> each;
  for (const auto& m : req.messages) {
    each.push_back(model::message_chars(m));
    chars += each.back();
  }
  for (const auto& t : req.tools) chars += t.name.size() + t.description.size() + dump_safe(t.parameters).size();
  const double per_char = static_cast<double>(total) / static_cast<double>(std::max<std::size_t>(chars, 1));
  std::vector<std::int64_t> out;
  out.reserve(each.size());
  for (std::size_t c : each) out.push_back(static_cast<std::int64_t>(std::ceil(static_cast<double>(c) * per_char)) + k_message_overhead);
  return out;
}

/// The estimated tokens the next round sheds: what must go, scaled by how far the estimate of the
/// last round's drop (`dropped`) was from what it really shed (`shed`), with a tenth more; always
/// more than the last round's estimate, so at least one more unit goes.
std::int64_t next_shed(const std::vector<std::int64_t>& weights, const std::vector<std::size_t>& dropped,
                       std::int64_t shed, std::int64_t must_shed) {
  std::int64_t estimated = 0;
  for (std::size_t i : dropped) estimated += i < weights.size() ? weights[i] : 0;
  const double ratio = shed > 0 && estimated > 0 ? static_cast<double>(shed) / static_cast<double>(estimated) : 0.5;
  const auto scaled = static_cast<std::int64_t>(std::ceil(static_cast<double>(must_shed) / ratio * 1.1));
  return std::max(scaled, estimated + 1);
}

struct fitted {
  model::chat_request req;
  model::context_truncated report;
};

error cannot_fit(std::int64_t before, std::int64_t after, std::int64_t n_ctx, std::int64_t reserve, std::size_t dropped) {
  return make_error(errc::invalid_request,
                    "the conversation needs " + std::to_string(before) + " prompt tokens but the model's context size is " +
                        std::to_string(n_ctx) + " tokens per slot, " + std::to_string(reserve) +
                        " of them kept for the answer (max_tokens, at most a quarter); after dropping every message "
                        "that may go (" + std::to_string(dropped) +
                        ": system messages and the last user turn stay) it still needs " + std::to_string(after) +
                        ". Shorten the last turn, ask for fewer max_tokens, or load the model with a larger ctx.",
                    "messages", std::string(k_context_code));
}

/// Drops units until the prompt leaves room for an answer (see the header); `refusal` is the
/// upstream's answer, returned when the upstream cannot say how large things are.
asio::awaitable<result<fitted>> fit(chat_backend& b, const model::chat_request& req, model::overflow_policy policy,
                                    const error& refusal) {
  auto n_ctx = co_await b.context_size();
  if (!n_ctx) co_return refusal;
  auto before = co_await b.count_prompt_tokens(req);
  if (!before) co_return refusal;
  const std::int64_t target = *n_ctx - answer_reserve(*n_ctx, req.sampling.max_tokens);
  const std::vector<std::int64_t> weights = estimate_tokens(req, *before);
  std::int64_t to_shed = *before - target;
  std::vector<std::size_t> last;
  std::int64_t after = *before;
  for (int round = 0; round <= k_fit_rounds; ++round) {
    // The last round, if it comes to that, drops every unit that may go (the estimates were far off).
    if (round == k_fit_rounds) to_shed = std::numeric_limits<std::int64_t>::max();
    std::vector<std::size_t> drop = model::choose_drops(req.messages, weights, policy, to_shed);
    // Each round asks for more than the last dropped (below), so the same set means none is left.
    if (drop.empty() || drop == last) break;
    model::chat_request candidate = req;
    candidate.messages = model::without(req.messages, drop);
    auto counted = co_await b.count_prompt_tokens(candidate);
    if (!counted) co_return counted.error();
    after = *counted;
    if (after <= target) {
      model::context_truncated report{std::string(model::to_string(policy)), describe_dropped(req.messages, drop), *before,
                                      after, *n_ctx};
      co_return fitted{std::move(candidate), std::move(report)};
    }
    to_shed = next_shed(weights, drop, *before - after, *before - target);
    last = std::move(drop);
  }
  co_return cannot_fit(*before, after, *n_ctx, *n_ctx - target, last.size());
}

}  // namespace

std::int64_t answer_reserve(std::int64_t n_ctx, std::optional<std::int64_t> max_tokens) {
  const std::int64_t want = max_tokens && *max_tokens > 0 ? *max_tokens : k_default_reserve;
  return std::max<std::int64_t>(0, std::min(want, n_ctx / 4));
}

std::vector<model::dropped_message> describe_dropped(const std::vector<model::message>& msgs,
                                                     const std::vector<std::size_t>& dropped) {
  std::vector<model::dropped_message> out;
  for (std::size_t i : dropped) {
    if (i >= msgs.size()) continue;
    const model::message& m = msgs[i];
    model::dropped_message d;
    d.index = i;
    d.role = model::to_string(m.role);
    for (const auto& part : m.content) {
      if (const auto* c = std::get_if<model::tool_call_part>(&part)) d.tool_call_ids.push_back(c->id);
      if (const auto* r = std::get_if<model::tool_result_part>(&part)) d.tool_call_ids.push_back(r->tool_call_id);
    }
    std::string text = m.text();
    for (const auto& part : m.content) {
      if (const auto* r = std::get_if<model::tool_result_part>(&part); r && text.empty()) text = r->content;
    }
    d.preview = to_valid_utf8(utf8_prefix(text, k_preview_chars));
    out.push_back(std::move(d));
  }
  return out;
}

asio::awaitable<result<std::unique_ptr<chat_turn>>> context_fitting_backend::open_turn(
    const model::chat_request& req, std::shared_ptr<cancel_token> cancel,
    std::function<asio::awaitable<bool>()> on_silence) {
  auto opened = co_await inner_.open_turn(req, cancel, on_silence);
  if (opened || policy_ == model::overflow_policy::error || opened.error().type_code != k_context_code) {
    co_return std::move(opened);
  }
  const error refusal = opened.error();
  auto made = co_await fit(inner_, req, policy_, refusal);
  if (!made) co_return made.error();
  auto again = co_await inner_.open_turn(made->req, std::move(cancel), std::move(on_silence));
  if (!again) co_return again.error();
  model::stream_event first = std::move(made->report);
  std::unique_ptr<chat_turn> turn = std::make_unique<prefixed_turn>(std::move(*again), std::move(first));
  co_return turn;
}

}  // namespace warden::engine
