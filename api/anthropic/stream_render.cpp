#include "api/anthropic/stream_render.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "api/anthropic/convert.h"
#include "api/wire/control_frames.h"
#include "common/ids.h"

namespace warden::api::anthropic {

std::string event_frame(const char* name, const json& data) {
  std::string out = "event: ";
  out += name;
  out += "\ndata: ";
  out += dump_safe(data);
  out += "\n\n";
  return out;
}

std::string ping_frame() { return event_frame("ping", json{{"type", "ping"}}); }

const char* stop_reason_for(model::finish_reason f, bool had_tool_use, bool stop_sequence_matched) noexcept {
  if (stop_sequence_matched) return "stop_sequence";
  switch (f) {
    case model::finish_reason::tool_calls: return "tool_use";
    case model::finish_reason::length: return "max_tokens";
    case model::finish_reason::content_filter: return "refusal";
    case model::finish_reason::stop: return had_tool_use ? "tool_use" : "end_turn";
  }
  return "end_turn";
}

message_builder::message_builder(std::string id, std::string model) : id_(std::move(id)), model_(std::move(model)) {}

std::string message_builder::start_frame() const {
  json message = {{"id", id_},          {"type", "message"},        {"role", "assistant"},
                  {"content", json::array()}, {"model", model_},    {"stop_reason", nullptr},
                  {"stop_sequence", nullptr}, {"usage", {{"input_tokens", 0}, {"output_tokens", 0}}}};
  return event_frame("message_start", json{{"type", "message_start"}, {"message", std::move(message)}});
}

std::string message_builder::start_block(json block) {
  const std::size_t index = blocks_.size();
  std::string out = event_frame("content_block_start", json{{"type", "content_block_start"}, {"index", index}, {"content_block", block}});
  blocks_.push_back(std::move(block));
  return out;
}

std::string message_builder::close_open() {
  if (open_ == kind::none) return "";
  open_ = kind::none;
  const std::size_t index = blocks_.size() - 1;
  std::string out;
  if (auto p = prefixes_.find(index); p != prefixes_.end()) {  // a client call: its arguments must parse
    const std::string closing = p->second.prefix.closing();
    if (!closing.empty()) {
      call_args_[index] += closing;
      out += event_frame("content_block_delta", json{{"type", "content_block_delta"}, {"index", index},
                                                     {"delta", {{"type", "input_json_delta"}, {"partial_json", closing}}}});
    }
    prefixes_.erase(p);
  }
  out += event_frame("content_block_stop", json{{"type", "content_block_stop"}, {"index", index}});
  return out;
}

std::string message_builder::open_pending() {
  if (!pending_) return "";
  std::string out = close_open();
  const pending_call p = std::move(*pending_);
  pending_.reset();
  call_block_[p.upstream_index] = blocks_.size();
  call_args_[blocks_.size()] = "";
  prefixes_[blocks_.size()] = call_arguments{};
  out += start_block(json{{"type", "tool_use"}, {"id", ids::new_id(ids::kind::tool_use)}, {"name", p.name}, {"input", json::object()}});
  open_ = kind::tool_use;
  open_call_ = p.upstream_index;
  open_finished_ = false;
  had_tool_use_ = true;
  return out;
}

bool message_builder::open_call_done() const {
  if (open_ != kind::tool_use || open_finished_) return true;
  auto p = prefixes_.find(blocks_.size() - 1);
  return p == prefixes_.end() || p->second.prefix.complete();
}

std::string message_builder::open_waiting() {
  if (waiting_.empty()) return "";
  waiting_call w = std::move(waiting_.front());
  waiting_.erase(waiting_.begin());
  std::string out = close_open();
  pending_ = pending_call{w.upstream_index, std::move(w.name)};
  out += open_pending();
  if (!w.arguments.empty()) out += feed_open(w.arguments);
  open_finished_ = w.finished;
  return out;
}

std::string message_builder::advance() {
  std::string out;
  while (!waiting_.empty() && open_call_done()) out += open_waiting();
  if (open_ == kind::tool_use && open_finished_) out += close_open();  // a waiting call that had finished
  return out;
}

std::string message_builder::end_calls() {
  std::string out = open_pending();
  while (!waiting_.empty()) out += open_waiting();
  return out;
}

std::string message_builder::text_like(kind k, const std::string& text) {
  if (text.empty()) return "";
  std::string out = end_calls();
  if (open_ != k) {
    out += close_open();
    out += start_block(k == kind::text ? json{{"type", "text"}, {"text", ""}}
                                       : json{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
    open_ = k;
  }
  json& block = blocks_.back();
  const char* field = k == kind::text ? "text" : "thinking";
  block[field] = block[field].get<std::string>() + text;
  json delta = k == kind::text ? json{{"type", "text_delta"}, {"text", text}} : json{{"type", "thinking_delta"}, {"thinking", text}};
  out += event_frame("content_block_delta", json{{"type", "content_block_delta"}, {"index", blocks_.size() - 1}, {"delta", std::move(delta)}});
  return out;
}

std::string message_builder::tool_started(const model::tool_call_started& s) {
  if (call_block_.count(s.index)) return "";  // a repeated start for an open block: the name is already out
  if (pending_ && pending_->upstream_index == s.index) {
    pending_->name += s.name;
    return "";
  }
  auto w = std::find_if(waiting_.begin(), waiting_.end(), [&](const waiting_call& c) { return c.upstream_index == s.index; });
  if (w != waiting_.end()) {
    w->name += s.name;
    return "";
  }
  std::string out = open_pending();
  if (!waiting_.empty() || !open_call_done()) {  // interleaved with the open call: wait for its block to end
    waiting_.push_back(waiting_call{s.index, s.name, "", false});
    return out;
  }
  out += close_open();
  pending_ = pending_call{s.index, s.name};
  return out;
}

std::string message_builder::feed_open(const std::string& fragment) {
  const std::size_t index = blocks_.size() - 1;
  auto prefix = prefixes_.find(index);
  if (prefix == prefixes_.end()) return "";
  // Only text up to the last safe point of a valid JSON-object prefix is sent (api/wire/json_prefix.h);
  // the block is closed into a valid object when it ends.
  call_arguments& a = prefix->second;
  a.accepted += fragment.substr(0, a.prefix.feed(fragment));
  const std::size_t safe = a.prefix.safe_length();
  if (safe <= a.sent) return "";
  std::string piece = a.accepted.substr(a.sent, safe - a.sent);
  a.sent = safe;
  call_args_[index] += piece;
  return event_frame("content_block_delta",
                     json{{"type", "content_block_delta"}, {"index", index},
                          {"delta", {{"type", "input_json_delta"}, {"partial_json", std::move(piece)}}}});
}

std::string message_builder::tool_fragment(const model::tool_call_arguments_delta& d) {
  std::string out;
  if (pending_ && pending_->upstream_index == d.index) out += open_pending();
  auto w = std::find_if(waiting_.begin(), waiting_.end(), [&](const waiting_call& c) { return c.upstream_index == d.index; });
  if (w != waiting_.end()) {  // its block opens when the open one ends
    w->arguments += d.fragment;
    return out;
  }
  auto it = call_block_.find(d.index);
  if (it == call_block_.end()) return out;  // a fragment for a call never started: nothing to attach it to
  if (open_ != kind::tool_use || open_call_ != d.index || !prefixes_.count(it->second)) {
    spdlog::warn("anthropic stream: arguments for tool call {} arrived after its block closed; dropped", d.index);
    return out;
  }
  out += feed_open(d.fragment);
  out += advance();  // its arguments may now be whole: a waiting call can have its block
  return out;
}

std::string message_builder::tool_finished(const model::tool_call_finished& f) {
  std::string out;
  if (pending_ && pending_->upstream_index == f.index) out += open_pending();
  auto w = std::find_if(waiting_.begin(), waiting_.end(), [&](const waiting_call& c) { return c.upstream_index == f.index; });
  if (w != waiting_.end()) {
    w->finished = true;
    return out;
  }
  if (open_ == kind::tool_use && open_call_ == f.index) {
    out += close_open();
    out += advance();
  }
  return out;
}

std::string message_builder::on_model_event(const model::stream_event& ev) {
  if (const auto* t = std::get_if<model::text_delta>(&ev)) return text_like(kind::text, t->text);
  if (const auto* r = std::get_if<model::reasoning_delta>(&ev)) return text_like(kind::thinking, r->text);
  if (const auto* s = std::get_if<model::tool_call_started>(&ev)) return tool_started(*s);
  if (const auto* d = std::get_if<model::tool_call_arguments_delta>(&ev)) return tool_fragment(*d);
  if (const auto* f = std::get_if<model::tool_call_finished>(&ev)) return tool_finished(*f);
  if (const auto* u = std::get_if<model::usage_event>(&ev)) {
    usage_ = usage_.value_or(model::usage{});
    *usage_ += u->usage;
  } else if (const auto* fin = std::get_if<model::finish_event>(&ev)) {
    finish_ = fin->reason;
  } else if (std::holds_alternative<model::ping_event>(ev)) {
    return event_frame("ping", json{{"type", "ping"}});
  } else if (const auto* e = std::get_if<model::error_event>(&ev)) {
    failure_ = e->failure;
  } else if (const auto* c = std::get_if<model::context_truncated>(&ev)) {
    return truncated(*c);
  }
  return "";
}

std::string message_builder::truncated(const model::context_truncated& t) {
  truncated_ = wire::truncation_json(t);
  json data = *truncated_;
  data["type"] = "context_truncated";
  return event_frame("context_truncated", data);
}

std::string message_builder::server_call(const agent::tool_start& s) {
  if (s.provisional || server_ids_.count(s.call_id)) return "";
  std::string out = end_calls();
  out += close_open();
  const std::string id = ids::new_id(ids::kind::server_tool_use);
  server_ids_[s.call_id] = id;
  const std::size_t index = blocks_.size();
  out += start_block(json{{"type", "server_tool_use"}, {"id", id}, {"name", s.tool}, {"input", json::object()}});
  blocks_.back()["input"] = s.arguments;
  out += event_frame("content_block_delta",
                     json{{"type", "content_block_delta"}, {"index", index},
                          {"delta", {{"type", "input_json_delta"}, {"partial_json", dump_safe(s.arguments)}}}});
  open_ = kind::tool_use;
  out += close_open();
  return out;
}

std::string message_builder::server_result(const agent::tool_end& e) {
  std::string out = end_calls();
  out += close_open();
  auto it = server_ids_.find(e.call_id);
  const std::string id = it != server_ids_.end() ? it->second : ids::new_id(ids::kind::server_tool_use);
  json content = json::array({json{{"type", "text"}, {"text", e.result}}});
  out += start_block(json{{"type", e.tool + "_tool_result"}, {"tool_use_id", id}, {"content", content}});
  open_ = kind::text;  // any kind: close_open() only needs one open
  out += close_open();
  out += event_frame("tool_result", json{{"type", "tool_result"}, {"tool_use_id", id}, {"content", e.result}});
  return out;
}

std::string message_builder::on_loop_event(const agent::loop_event& ev) {
  if (const auto* t = std::get_if<model::text_delta>(&ev)) return text_like(kind::text, t->text);
  if (const auto* r = std::get_if<model::reasoning_delta>(&ev)) return text_like(kind::thinking, r->text);
  if (const auto* s = std::get_if<agent::tool_start>(&ev)) return server_call(*s);
  if (const auto* e = std::get_if<agent::tool_end>(&ev)) return server_result(*e);
  if (std::holds_alternative<model::ping_event>(ev)) return event_frame("ping", json{{"type", "ping"}});
  if (const auto* c = std::get_if<model::context_truncated>(&ev)) return truncated(*c);
  return "";  // tool_status, tool_output, tool_args: no place on this wire
}

namespace {

json usage_json(const std::optional<model::usage>& u) {
  return json{{"input_tokens", u ? u->prompt_tokens : 0}, {"output_tokens", u ? u->completion_tokens : 0}};
}

json stop_sequence_json(const std::string& s) { return s.empty() ? json() : json(s); }

}  // namespace

std::string message_builder::finish_frames(const std::string& stop_reason, const std::string& stop_sequence,
                                           const std::optional<model::usage>& usage) {
  std::string out = end_calls();
  out += close_open();
  out += event_frame("message_delta",
                     json{{"type", "message_delta"},
                          {"delta", {{"stop_reason", stop_reason}, {"stop_sequence", stop_sequence_json(stop_sequence)}}},
                          {"usage", usage_json(usage)}});
  out += event_frame("message_stop", json{{"type", "message_stop"}});
  return out;
}

json message_builder::message(const std::string& stop_reason, const std::string& stop_sequence,
                              const std::optional<model::usage>& usage) {
  (void)end_calls();
  (void)close_open();
  json content = blocks_;
  for (const auto& [index, args] : call_args_) content[index]["input"] = tool_input(args);
  json m{{"id", id_},
         {"type", "message"},
         {"role", "assistant"},
         {"content", std::move(content)},
         {"model", model_},
         {"stop_reason", stop_reason},
         {"stop_sequence", stop_sequence_json(stop_sequence)},
         {"usage", usage_json(usage)}};
  if (truncated_) m["context_truncated"] = *truncated_;
  return m;
}

}  // namespace warden::api::anthropic
