#include "agent/tool_loop.h"

#include <spdlog/spdlog.h>

#include <boost/asio/this_coro.hpp>
#include <map>
#include <set>

#include "agent/text_tool_calls.h"
#include "sandbox/runner.h"
#include "tools/tool.h"

namespace warden::agent {

namespace asio = boost::asio;

std::string canonical_call_key(const std::string& name, const json& args) {
  // nlohmann's json objects keep keys sorted, so dump() is canonical.
  return name + ":" + dump_safe(args);
}

namespace {

struct pending_call {
  std::string id;
  std::string name;
  std::string arguments;  ///< raw JSON text as the model wrote it
  bool from_text = false;
};

/// Accumulates streamed structured tool_calls deltas by index.
struct call_accumulator {
  std::map<long long, pending_call> by_index;
  void add(const json& deltas) {
    if (!deltas.is_array()) return;
    for (const auto& d : deltas) {
      if (!d.is_object()) continue;
      const long long idx = d.value("index", json(0)).is_number_integer() ? d["index"].get<long long>()
                                                                            : static_cast<long long>(by_index.size());
      auto& c = by_index[idx];
      if (auto id = d.find("id"); id != d.end() && id->is_string() && !id->get<std::string>().empty()) c.id = *id;
      if (auto fn = d.find("function"); fn != d.end() && fn->is_object()) {
        if (auto n = fn->find("name"); n != fn->end() && n->is_string()) c.name += n->get<std::string>();
        if (auto a = fn->find("arguments"); a != fn->end()) {
          if (a->is_string()) c.arguments += a->get<std::string>();
          else if (!a->is_null()) c.arguments += dump_safe(*a);
        }
      }
    }
  }
};

std::string random_call_id() { return "call_" + random_approval_id().substr(0, 16); }

void add_usage(json& total, const json& u) {
  if (!u.is_object()) return;
  if (!total.is_object()) total = json::object();
  for (const char* k : {"prompt_tokens", "completion_tokens", "total_tokens"}) {
    if (u.contains(k) && u[k].is_number_integer()) total[k] = total.value(k, 0LL) + u[k].get<long long>();
  }
}

json control(const char* type) { return json{{"type", type}}; }

json tool_specs_for(const std::vector<std::string>& names) {
  json specs = json::array();
  for (const auto& name : names) specs.push_back(tools::find_tool(name)->openai_spec());
  return specs;
}

// Frame builders live outside the coroutine: GCC 12 rejects braced JSON built from string
// literals inside a coroutine body ("array used as initializer").
json delta_of(const char* key, const json& value) { return json{{key, value}}; }
json status_frame(const std::string& text) { return json{{"type", "tool_status"}, {"content", text}}; }
json output_frame(const std::string& name, const std::string& id, std::string text) {
  return json{{"type", "tool_output"}, {"tool_name", name}, {"tool_call_id", id}, {"text", std::move(text)}};
}
json end_frame(const std::string& name, const std::string& id, const std::string& result, const json& provenance) {
  return json{{"type", "tool_end"}, {"tool_name", name}, {"tool_call_id", id}, {"result", result}, {"provenance", provenance}};
}
json provenance_of(bool healed) { return json{{"source", "local"}, {"healed", healed}}; }
json assistant_message(const std::string& text) {
  return json{{"role", "assistant"}, {"content", text.empty() ? json() : json(text)}};
}
json call_entry(const std::string& id, const std::string& name, const std::string& args) {
  return json{{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", args}}}};
}
json tool_message(const std::string& id, const std::string& content) {
  return json{{"role", "tool"}, {"tool_call_id", id}, {"content", content}};
}

}  // namespace

asio::awaitable<loop_result> run_tool_loop(chat_service& chat, json body, const loop_options& opts,
                                           tool_runtime& rt, loop_sink& sink) {
  loop_result res;
  const std::vector<std::string> selected = opts.selected_tools();
  bool tools_on = !selected.empty() && opts.max_tool_calls_per_message > 0;
  const bool named_choice = body.contains("tool_choice") && body["tool_choice"].is_object();
  json tool_choice = body.contains("tool_choice") ? body["tool_choice"] : json();
  // tool_choice "none": no call runs, structured or written as text (the model is not offered
  // the tools, and whatever call it still writes is hidden and ignored).
  if (tool_choice.is_string() && tool_choice.get<std::string>() == "none") tools_on = false;
  json messages = std::move(body["messages"]);
  body.erase("messages");
  body.erase("tools");
  body.erase("tool_choice");
  body.erase("parallel_tool_calls");

  auto token = cancel_token::make();
  std::optional<cancel_registry::registration> by_cancel_id, by_session;
  if (!opts.cancel_id.empty()) by_cancel_id.emplace(rt.cancels.add("cancel_id", opts.cancel_id, token));
  // No session_id means the shared "_default" session: its workspace, approvals and cancels.
  const std::string session = opts.session_id.empty() ? "_default" : opts.session_id;
  by_session.emplace(rt.cancels.add("session_id", session, token));
  std::string workspace;  // created on the first tool run

  auto emit = [&](loop_event::kind k, json data) -> asio::awaitable<bool> {
    if (res.client_gone) co_return false;
    loop_event ev;
    ev.type = k;
    ev.data = std::move(data);
    const bool ok = co_await sink.emit(std::move(ev));
    if (!ok) res.client_gone = true;
    co_return !res.client_gone;
  };

  std::set<std::string> succeeded;
  std::map<std::string, int> duplicate_counts;
  int executed_turns = 0;
  int fruitless_turns = 0;
  bool forced_done = false;
  bool rendered = false;  // render_html is one-shot per answer (reference §2.6)

  while (true) {
    if (token->cancelled()) break;
    json req = body;
    req["messages"] = messages;
    if (tools_on) {
      req["tools"] = tool_specs_for(selected);  // built per turn: nothing kept while parked
      if (!tool_choice.is_null() && !(named_choice && forced_done)) req["tool_choice"] = tool_choice;
      if (!opts.parallel_tool_calls) req["parallel_tool_calls"] = false;
    }
    ++res.turns;
    auto opened = co_await chat.open_stream(std::move(req), token, [&]() -> asio::awaitable<bool> {
      const bool ok = co_await emit(loop_event::kind::ping, json());
      co_return ok;
    });
    if (!opened) {
      if (token->cancelled() || res.client_gone) break;
      res.failure = opened.error();
      co_return res;
    }
    std::unique_ptr<chat_stream> stream = std::move(*opened);
    auto stop_upstream = token->on_cancel(stream->canceller());

    text_call_scanner scanner;
    call_accumulator structured;
    std::string turn_text;
    std::string finish;
    bool turn_failed = false;
    while (true) {
      chat_event ev = co_await stream->next();
      bool done = false;
      switch (ev.type) {
        case chat_event::kind::ping:
          if (!co_await emit(loop_event::kind::ping, json())) co_return res;
          break;
        case chat_event::kind::failed:
          if (!token->cancelled()) res.failure = ev.failure;
          turn_failed = true;
          done = true;
          break;
        case chat_event::kind::finished:
          done = true;
          break;
        case chat_event::kind::chunk: {
          const json& j = ev.parsed;
          if (j.contains("usage")) add_usage(res.usage, j["usage"]);
          auto ch = j.find("choices");
          if (ch == j.end() || !ch->is_array() || ch->empty() || !(*ch)[0].is_object()) break;
          const json& c0 = (*ch)[0];
          if (auto fr = c0.find("finish_reason"); fr != c0.end() && fr->is_string()) finish = *fr;
          auto d = c0.find("delta");
          if (d == c0.end() || !d->is_object()) break;
          if (auto rc = d->find("reasoning_content"); rc != d->end() && rc->is_string() && !rc->get<std::string>().empty()) {
            if (!co_await emit(loop_event::kind::delta, delta_of("reasoning_content", *rc))) co_return res;
          }
          if (auto tc = d->find("tool_calls"); tc != d->end() && tools_on) structured.add(*tc);
          if (auto ct = d->find("content"); ct != d->end() && ct->is_string()) {
            // Scanned even in a tool-less pass: call markup never reaches the user's text.
            std::string show = scanner.feed(ct->get<std::string>());
            if (!show.empty()) {
              turn_text += show;
              if (!co_await emit(loop_event::kind::delta, delta_of("content", show))) co_return res;
            }
          }
          break;
        }
      }
      if (done) break;
    }
    stop_upstream.reset();
    stream.reset();
    if (token->cancelled()) {  // a turn cut short by a cancel is not acted on
      res.finish_reason = "stop";
      break;
    }
    if (turn_failed) {
      if (res.failure) co_return res;
      break;  // cancelled
    }
    auto tail = scanner.finish();
    if (!tail.text.empty()) {
      turn_text += tail.text;
      if (!co_await emit(loop_event::kind::delta, delta_of("content", tail.text))) co_return res;
    }

    // The turn's calls: structured ones win over text ones.
    std::vector<pending_call> calls;
    for (auto& [idx, c] : structured.by_index) calls.push_back(std::move(c));
    if (calls.empty() && tools_on) {
      std::set<std::string> seen;
      for (auto& t : tail.calls) {
        if (calls.size() >= k_max_text_calls_per_turn) break;
        if (!seen.insert(t.name + "\n" + t.arguments).second) continue;
        calls.push_back({"", std::move(t.name), std::move(t.arguments), true});
      }
    }
    res.final_text = turn_text;
    if (calls.empty() || !tools_on) {
      res.finish_reason = finish.empty() || finish == "tool_calls" ? "stop" : finish;
      break;
    }
    if (!opts.parallel_tool_calls && calls.size() > 1) calls.resize(1);

    json assistant = assistant_message(turn_text);
    json call_list = json::array();
    std::vector<json> tool_messages;
    bool ran_any = false;
    bool force_final = false;
    // First pass: every call of the turn is checked, and each one that needs a person gets
    // its approval id and its card now, so all of a turn's questions are pending together and
    // can be answered in any order (they still run in the model's order).
    struct call_plan {
      std::optional<json> args;
      const tools::tool_def* def = nullptr;
      std::string refusal;  // non-empty: answered without running
      json start;
      bool start_sent = false;
      std::unique_ptr<approval_registry::ticket> ticket;
      cancel_token::registration deny_on_cancel;  // declared after the ticket: released first
    };
    std::vector<call_plan> plans(calls.size());
    std::set<std::string> ids;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      auto& call = calls[i];
      auto& plan = plans[i];
      // Every call needs its own id: results, cards and approvals are matched by it.
      if (call.id.empty() || !ids.insert(call.id).second) {
        call.id = random_call_id();
        ids.insert(call.id);
      }
      plan.args = parse_json(call.arguments.empty() ? std::string_view("{}") : std::string_view(call.arguments));
      const bool args_ok = plan.args && plan.args->is_object();
      if (!args_ok) plan.args.reset();
      call_list.push_back(call_entry(call.id, call.name, args_ok ? dump_safe(*plan.args) : std::string("{}")));
      plan.def = tools::find_tool(call.name);
      const bool enabled = plan.def && std::find(selected.begin(), selected.end(), call.name) != selected.end();
      plan.start = control("tool_start");
      plan.start["tool_name"] = call.name;
      plan.start["tool_call_id"] = call.id;
      plan.start["arguments"] = args_ok ? *plan.args : json::object();
      plan.start["provenance"] = provenance_of(call.from_text);
      plan.start["approval_id"] = "";
      plan.start["awaiting_confirmation"] = false;
      if (call.name.empty()) {
        plan.refusal = "Error: the tool call could not be parsed (no tool name). Write the call again as valid JSON.";
      } else if (!args_ok) {
        plan.refusal = "Error: the arguments for " + call.name + " are not a valid JSON object: " +
                       call.arguments.substr(0, 200) + ". Call the tool again with valid JSON arguments.";
      } else if (!enabled) {
        plan.refusal = "Error: the tool '" + call.name + "' is not available in this conversation.";
        force_final = true;
      } else if (tools::is_code_tool(call.name) && !opts.gate.bypass_permissions && !sandbox::status().available) {
        // Fail closed, and before asking anyone to approve a call that cannot run.
        plan.refusal = "Execution error: " + sandbox::unavailable_message(sandbox::status());
      } else if (decide(call.name, enabled, opts.gate) == gate_action::ask) {
        plan.ticket = rt.approvals.open(session, co_await asio::this_coro::executor);
        plan.deny_on_cancel = token->on_cancel(plan.ticket->canceller());
        plan.start["approval_id"] = plan.ticket->id();
        plan.start["awaiting_confirmation"] = true;
        if (!co_await emit(loop_event::kind::tool_status, status_frame("Waiting for approval: " + plan.def->label))) {
          co_return res;
        }
        if (!co_await emit(loop_event::kind::tool_start, plan.start)) co_return res;
        plan.start_sent = true;
      }
    }

    for (std::size_t i = 0; i < calls.size(); ++i) {
      auto& call = calls[i];
      auto& plan = plans[i];
      json& start = plan.start;
      const tools::tool_def* def = plan.def;
      bool start_sent = plan.start_sent;
      std::string result;
      bool is_error = true;
      bool executed = false;
      const std::string key = plan.args ? canonical_call_key(call.name, *plan.args) : std::string();
      if (!plan.refusal.empty()) {
        result = plan.refusal;
      } else if (call.name == "render_html" && rendered) {
        result = "render_html already ran for this answer; it runs once per answer.";
        force_final = true;
      } else if (succeeded.count(key)) {
        result = "This exact call already ran successfully; its result is above. Do not repeat it.";
        if (++duplicate_counts[key] >= 2) force_final = true;
      } else {
        bool allowed = true;
        if (plan.ticket) {
          std::optional<approval_outcome> outcome;
          while (!(outcome = co_await plan.ticket->wait(rt.ping_interval))) {
            if (!co_await emit(loop_event::kind::ping, json())) co_return res;
          }
          allowed = *outcome == approval_outcome::allowed;
          spdlog::info("tool call {} ({}): approval {}", call.id, call.name,
                       *outcome == approval_outcome::allowed    ? "allowed"
                       : *outcome == approval_outcome::denied   ? "denied"
                       : *outcome == approval_outcome::timed_out ? "timed out (deny)"
                                                                 : "cancelled (deny)");
        }
        if (token->cancelled()) allowed = false;
        if (!allowed) {
          result = k_declined;
          is_error = false;
        } else {
          if (!start_sent) {
            if (!co_await emit(loop_event::kind::tool_start, start)) co_return res;
            start_sent = true;
          }
          if (workspace.empty()) {
            auto ws = tools::ensure_workspace(rt.workspaces_root, session,
                                              opts.gate.bypass_permissions ? sandbox::isolation::bypass
                                                                           : sandbox::isolation::sandboxed);
            if (!ws) {
              result = "Execution error: " + ws.error().message;
            } else {
              workspace = *ws;
            }
          }
          if (!workspace.empty()) {
            if (!co_await emit(loop_event::kind::tool_status, status_frame("Running " + def->label))) {
              co_return res;
            }
            tools::tool_context ctx;
            ctx.workspace = workspace;
            ctx.mode = opts.gate.bypass_permissions ? sandbox::isolation::bypass : sandbox::isolation::sandboxed;
            ctx.timeout = opts.tool_call_timeout_s >= k_no_tool_timeout_s
                              ? std::chrono::milliseconds(0)
                              : std::chrono::milliseconds(std::int64_t{opts.tool_call_timeout_s} * 1000);
            ctx.cancel = token;
            ctx.idle_interval = rt.ping_interval;
            const std::string call_id = call.id, tool_name = call.name;
            ctx.on_output = [&, call_id, tool_name](std::string text) -> asio::awaitable<void> {
              co_await emit(loop_event::kind::tool_output, output_frame(tool_name, call_id, std::move(text)));
            };
            ctx.on_idle = [&]() -> asio::awaitable<void> { co_await emit(loop_event::kind::ping, json()); };
            auto r = co_await tools::execute(*def, *plan.args, ctx);
            if (res.client_gone) co_return res;
            result = std::move(r.text);
            is_error = r.is_error;
            executed = true;
            ++res.tools_run;
          }
        }
      }
      if (!start_sent) {
        // Refused before running: the card still opens so the user sees what was asked.
        if (!co_await emit(loop_event::kind::tool_start, start)) co_return res;
      }
      if (!co_await emit(loop_event::kind::tool_end, end_frame(call.name, call.id, result, start["provenance"]))) {
        co_return res;
      }
      if (executed) {
        ran_any = true;
        if (call.name == "render_html" && !is_error) rendered = true;
        if (!is_error) succeeded.insert(key);
      }
      tool_messages.push_back(tool_message(call.id, result));
      plan.deny_on_cancel.reset();
      plan.ticket.reset();
      // After a cancel the remaining calls are still answered (declined), card by card.
    }
    co_await emit(loop_event::kind::tool_status, status_frame(""));
    assistant["tool_calls"] = std::move(call_list);
    messages.push_back(std::move(assistant));
    for (auto& m : tool_messages) messages.push_back(std::move(m));
    if (token->cancelled()) {
      res.finish_reason = "stop";
      break;
    }
    // A named tool_choice has been honoured once the model made its call: forcing it again
    // after a denial would only repeat the question.
    forced_done = true;
    if (ran_any) {
      ++executed_turns;
      fruitless_turns = 0;
    } else if (++fruitless_turns >= 3) {
      force_final = true;
    }
    if (force_final || (!opts.unlimited_budget() && executed_turns >= opts.max_tool_calls_per_message)) {
      if (!force_final) {
        json& last = messages.back();
        last["content"] = last["content"].get<std::string>() + "\n\n" + k_budget_spent;
      }
      tools_on = false;
    }
  }
  if (token->cancelled()) {
    res.finish_reason = "stop";
    if (token->reason() == k_shutdown_reason && !res.failure) {
      res.failure = make_error(errc::upstream_unavailable, k_shutdown_reason);
    }
  }
  co_return res;
}

}  // namespace warden::agent
