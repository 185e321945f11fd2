// Fakes for the agent's unit tests: tools with chosen traits that record their calls (the
// "runner" the orchestrator drives), a chat_backend that plays scripted turns of model events,
// a sink and a recorder that keep everything in memory.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <deque>
#include <string>
#include <vector>

#include "agent/loop_context.h"
#include "agent/loop_events.h"
#include "engine/chat_backend.h"
#include "engine/testing/scripted_turn.h"
#include "tools/tool.h"

namespace warden::agent::testing {

class fake_tool : public tools::tool {
 public:
  fake_tool(std::string name, tools::tool_traits traits, std::string answer = "ok")
      : answer_(std::move(answer)) {
    info_ = {name, name + " label", "a fake " + name, json{{"type", "object"}}, traits};
  }
  const tools::tool_info& info() const override { return info_; }
  std::optional<std::string> unavailable(tools::isolation mode) const override {
    if (sandbox_missing && mode == tools::isolation::sandboxed && info_.traits.runs_code) return "no sandbox here";
    return std::nullopt;
  }
  boost::asio::awaitable<tools::tool_result> run(const json& args, tools::tool_context& ctx) override {
    calls.push_back(args);
    modes.push_back(ctx.mode);
    if (ctx.on_output) co_await ctx.on_output("live:" + info_.name);
    co_return result_for(args);
  }

  tools::tool_result result_for(const json& args) const {
    if (not_run) return tools::tool_result{"Execution error: " + *not_run, true, std::nullopt, 0, not_run};
    return tools::tool_result{answer_ + ":" + dump_safe(args), fail, std::optional<int>(fail ? 1 : 0), 7};
  }

  bool sandbox_missing = false;
  bool fail = false;
  std::optional<std::string> not_run;  ///< set: the program "never started", for this reason
  std::vector<json> calls;
  std::vector<tools::isolation> modes;

 private:
  tools::tool_info info_;
  std::string answer_;
};

/// The traits of a code tool (python, terminal); `code`/`argument` say what the risk classifier
/// judges (python in "code" by default).
inline tools::tool_traits code_traits(tools::code_language code = tools::code_language::python, std::string argument = "code") {
  return {.runs_code = true, .reads_network = false, .writes_files = true, .once_per_answer = false,
          .code = code, .code_argument = std::move(argument)};
}
/// render_html's: once per answer, HTML in "code".
inline tools::tool_traits once_traits() {
  return {.runs_code = false, .reads_network = false, .writes_files = false, .once_per_answer = true,
          .code = tools::code_language::html, .code_argument = "code"};
}

/// A registry with python/terminal (code) and render_html (once per answer) fakes.
struct fake_registry {
  tools::registry reg;
  fake_tool* python;
  fake_tool* terminal;
  fake_tool* render;
  fake_registry() {
    auto p = std::make_unique<fake_tool>("python", code_traits());
    auto t = std::make_unique<fake_tool>("terminal", code_traits(tools::code_language::shell, "command"));
    auto r = std::make_unique<fake_tool>("render_html", once_traits());
    python = p.get();
    terminal = t.get();
    render = r.get();
    reg.add(std::move(p));
    reg.add(std::move(t));
    reg.add(std::move(r));
  }
};

/// Plays one scripted list of events per turn; remembers every request.
class fake_backend : public engine::chat_backend {
 public:
  std::deque<std::vector<model::stream_event>> turns;
  std::vector<model::chat_request> requests;
  std::optional<error> open_failure;

  boost::asio::awaitable<result<std::unique_ptr<engine::chat_turn>>> open_turn(
      const model::chat_request& req, std::shared_ptr<cancel_token>, std::function<boost::asio::awaitable<bool>()>) override {
    requests.push_back(req);
    if (open_failure) co_return *open_failure;
    std::vector<model::stream_event> events;
    if (!turns.empty()) {
      events = std::move(turns.front());
      turns.pop_front();
    } else {
      events.push_back(model::text_delta{"(script ended)"});
    }
    co_return std::unique_ptr<engine::chat_turn>(std::make_unique<engine::testing::scripted_turn>(std::move(events)));
  }
  std::string model_id() const override { return "fake-model"; }
};

/// One structured call as a model turn would stream it.
inline std::vector<model::stream_event> call_turn(const std::string& name, const std::string& args, const std::string& id = "") {
  return {model::tool_call_started{0, id, name}, model::tool_call_arguments_delta{0, args}, model::tool_call_finished{0},
          model::finish_event{model::finish_reason::tool_calls}};
}
inline std::vector<model::stream_event> text_turn(const std::string& text) {
  return {model::text_delta{text}, model::finish_event{model::finish_reason::stop},
          model::usage_event{model::usage{3, 2, 5}}};
}

class memory_sink : public loop_sink {
 public:
  std::vector<loop_event> events;
  boost::asio::awaitable<bool> emit(loop_event ev) override {
    events.push_back(std::move(ev));
    co_return true;
  }
  template <class T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& e : events) {
      if (const auto* v = std::get_if<T>(&e)) out.push_back(*v);
    }
    return out;
  }
};

/// Records in memory: `records` holds every final record in order (a row opened before a run
/// is replaced by its completion); `opened` counts open() calls; `fail_open` makes open() fail
/// (the audit log cannot be written).
class memory_recorder : public call_recorder {
 public:
  std::vector<call_record> records;
  int opened = 0;
  bool fail_open = false;
  boost::asio::awaitable<result<std::int64_t>> open(call_record r) override {
    if (fail_open) co_return make_error(errc::internal, "database is locked");
    ++opened;
    records.push_back(std::move(r));
    co_return static_cast<std::int64_t>(records.size());
  }
  boost::asio::awaitable<void> record(std::int64_t row, call_record r) override {
    record_now(row, r);
    co_return;
  }
  void record_now(std::int64_t row, const call_record& r) override {
    if (row > 0 && static_cast<std::size_t>(row) <= records.size()) records[static_cast<std::size_t>(row - 1)] = r;
    else records.push_back(r);
  }
};

template <class T>
T run_sync(boost::asio::io_context& ioc, boost::asio::awaitable<T> aw) {
  auto fut = boost::asio::co_spawn(ioc, std::move(aw), boost::asio::use_future);
  ioc.restart();
  ioc.run();
  return fut.get();
}

}  // namespace warden::agent::testing
