#include "api/responses/response_builder.h"

#include "api/wire/control_frames.h"
#include "common/ids.h"

namespace warden::api::responses {

namespace {

json message_item(const std::string& id, const std::string& status) {
  return {{"id", id}, {"type", "message"}, {"status", status}, {"role", "assistant"}, {"content", json::array()}};
}
json text_part(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}, {"logprobs", json::array()}};
}
json reasoning_part(const std::string& text) { return {{"type", "reasoning_text"}, {"text", text}}; }

json usage_json(const std::optional<model::usage>& u) {
  if (!u) return json();
  return {{"input_tokens", u->prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", 0}}},
          {"output_tokens", u->completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", u->total_tokens}};
}

json echo_or(const json& echo, const char* key, json fallback) {
  auto it = echo.find(key);
  return it != echo.end() ? *it : fallback;
}

}  // namespace

response_builder::response_builder(std::string id, std::int64_t created_at, response_settings s)
    : id_(std::move(id)), created_at_(created_at), settings_(std::move(s)) {}

json response_builder::event(const char* type, json fields) {
  fields["type"] = type;
  fields["sequence_number"] = seq_++;
  return fields;
}

std::vector<json> response_builder::start() {
  std::vector<json> out;
  out.push_back(event("response.created", {{"response", response()}}));
  out.push_back(event("response.in_progress", {{"response", response()}}));
  return out;
}

void response_builder::open_message(std::vector<json>& out) {
  open_index_ = output_.size();
  const std::string item_id = ids::new_id(ids::kind::message);
  output_.push_back(message_item(item_id, "in_progress"));
  out.push_back(event("response.output_item.added", {{"output_index", open_index_}, {"item", output_.back()}}));
  output_.back()["content"].push_back(text_part(""));
  out.push_back(event("response.content_part.added",
                      {{"item_id", item_id}, {"output_index", open_index_}, {"content_index", 0}, {"part", text_part("")}}));
  open_ = open_kind::message;
}

void response_builder::open_reasoning(std::vector<json>& out) {
  open_index_ = output_.size();
  const std::string item_id = ids::new_id(ids::kind::reasoning_item);
  output_.push_back({{"id", item_id}, {"type", "reasoning"}, {"summary", json::array()}, {"content", json::array()}});
  out.push_back(event("response.output_item.added", {{"output_index", open_index_}, {"item", output_.back()}}));
  output_.back()["content"].push_back(reasoning_part(""));
  out.push_back(event("response.content_part.added", {{"item_id", item_id}, {"output_index", open_index_},
                                                      {"content_index", 0}, {"part", reasoning_part("")}}));
  open_ = open_kind::reasoning;
}

/// reasoning.summary "auto", "concise" or "detailed" (Codex CLI asks "auto" and shows only
/// summaries): a reasoning item also gets a summary.
static bool wants_summary(const json& echo) {
  auto r = echo.find("reasoning");
  return r != echo.end() && r->is_object() && r->value("summary", json()).is_string();
}

void response_builder::add_summary(json& item, const std::string& text, std::vector<json>& out) {
  // warden has no summariser: the summary is the reasoning text itself, sent whole when it ends.
  const json base = {{"item_id", item["id"]}, {"output_index", open_index_}, {"summary_index", 0}};
  const json part = {{"type", "summary_text"}, {"text", text}};
  json added = base;
  added["part"] = {{"type", "summary_text"}, {"text", ""}};
  out.push_back(event("response.reasoning_summary_part.added", std::move(added)));
  json delta = base;
  delta["delta"] = text;
  out.push_back(event("response.reasoning_summary_text.delta", std::move(delta)));
  json done = base;
  done["text"] = text;
  out.push_back(event("response.reasoning_summary_text.done", std::move(done)));
  json part_done = base;
  part_done["part"] = part;
  out.push_back(event("response.reasoning_summary_part.done", std::move(part_done)));
  item["summary"] = json::array({part});
}

void response_builder::close_open(std::vector<json>& out, const char* message_status) {
  if (open_ == open_kind::message || open_ == open_kind::reasoning) {
    json& item = output_[open_index_];
    const std::string item_id = item["id"];
    const json part = item["content"][0];
    const std::string text = part["text"];
    const bool msg = open_ == open_kind::message;
    json done = {{"item_id", item_id}, {"output_index", open_index_}, {"content_index", 0}, {"text", text}};
    if (msg) done["logprobs"] = json::array();
    out.push_back(event(msg ? "response.output_text.done" : "response.reasoning_text.done", std::move(done)));
    out.push_back(event("response.content_part.done",
                        {{"item_id", item_id}, {"output_index", open_index_}, {"content_index", 0}, {"part", part}}));
    if (!msg && wants_summary(settings_.echo)) add_summary(item, text, out);
    if (msg) item["status"] = message_status;
    out.push_back(event("response.output_item.done", {{"output_index", open_index_}, {"item", item}}));
  }
  while (!call_items_.empty()) call_finished(call_items_.begin()->first, out);
  open_ = open_kind::none;
}

void response_builder::text(const std::string& delta, std::vector<json>& out) {
  if (delta.empty()) return;
  if (open_ != open_kind::message) {
    close_open(out);
    open_message(out);
  }
  json& part = output_[open_index_]["content"][0];
  part["text"].get_ref<std::string&>() += delta;  // appended in place: deltas are the hot path
  out.push_back(event("response.output_text.delta", {{"item_id", output_[open_index_]["id"]},
                                                     {"output_index", open_index_},
                                                     {"content_index", 0},
                                                     {"delta", delta},
                                                     {"logprobs", json::array()}}));
}

void response_builder::reasoning(const std::string& delta, std::vector<json>& out) {
  if (delta.empty()) return;
  if (open_ != open_kind::reasoning) {
    close_open(out);
    open_reasoning(out);
  }
  json& part = output_[open_index_]["content"][0];
  part["text"].get_ref<std::string&>() += delta;  // appended in place: deltas are the hot path
  out.push_back(event("response.reasoning_text.delta",
                      {{"item_id", output_[open_index_]["id"]}, {"output_index", open_index_}, {"content_index", 0}, {"delta", delta}}));
}

void response_builder::name_call(json& item, const std::string& flat) const {
  auto ns = settings_.namespaced.find(flat);
  if (ns == settings_.namespaced.end()) {
    item["name"] = flat;
    item.erase("namespace");
    return;
  }
  item["name"] = ns->second.second;
  item["namespace"] = ns->second.first;
}

void response_builder::call_started(const model::tool_call_started& s, std::vector<json>& out) {
  if (auto it = call_items_.find(s.index); it != call_items_.end()) {  // a split name goes on
    name_call(output_[it->second], call_names_[s.index] += s.name);
    return;
  }
  if (open_ == open_kind::message || open_ == open_kind::reasoning) close_open(out);
  const std::size_t at = output_.size();
  output_.push_back({{"id", ids::new_id(ids::kind::function_call_item)},
                     {"type", "function_call"},
                     {"status", "in_progress"},
                     {"call_id", s.id.empty() ? ids::new_id(ids::kind::tool_call) : s.id},
                     {"name", s.name},
                     {"arguments", ""}});
  call_names_[s.index] = s.name;
  name_call(output_[at], s.name);
  call_items_[s.index] = at;
  open_ = open_kind::function_call;
  out.push_back(event("response.output_item.added", {{"output_index", at}, {"item", output_[at]}}));
}

void response_builder::call_args(const model::tool_call_arguments_delta& d, std::vector<json>& out) {
  auto it = call_items_.find(d.index);
  if (it == call_items_.end() || d.fragment.empty()) return;
  json& item = output_[it->second];
  item["arguments"].get_ref<std::string&>() += d.fragment;
  out.push_back(event("response.function_call_arguments.delta",
                      {{"item_id", item["id"]}, {"output_index", it->second}, {"delta", d.fragment}}));
}

void response_builder::call_finished(std::size_t index, std::vector<json>& out) {
  auto it = call_items_.find(index);
  if (it == call_items_.end()) return;
  const std::size_t at = it->second;
  call_items_.erase(it);
  call_names_.erase(index);
  json& item = output_[at];
  item["status"] = "completed";
  out.push_back(event("response.function_call_arguments.done",
                      {{"item_id", item["id"]}, {"output_index", at}, {"name", item["name"]}, {"arguments", item["arguments"]}}));
  out.push_back(event("response.output_item.done", {{"output_index", at}, {"item", item}}));
  if (call_items_.empty()) open_ = open_kind::none;
}

std::vector<json> response_builder::on_model_event(const model::stream_event& ev) {
  std::vector<json> out;
  if (const auto* t = std::get_if<model::text_delta>(&ev)) text(t->text, out);
  else if (const auto* r = std::get_if<model::reasoning_delta>(&ev)) reasoning(r->text, out);
  else if (const auto* s = std::get_if<model::tool_call_started>(&ev)) call_started(*s, out);
  else if (const auto* a = std::get_if<model::tool_call_arguments_delta>(&ev)) call_args(*a, out);
  else if (const auto* f = std::get_if<model::tool_call_finished>(&ev)) call_finished(f->index, out);
  else if (const auto* c = std::get_if<model::context_truncated>(&ev)) truncated(*c, out);
  return out;
}

void response_builder::truncated(const model::context_truncated& t, std::vector<json>& out) {
  truncated_ = wire::truncation_json(t);
  out.push_back(event("context_truncated", *truncated_));
}

void response_builder::tool_started(const agent::tool_start& s, std::vector<json>& out) {
  if (s.provisional || mcp_items_.count(s.call_id)) return;  // a card: the item opens with the real start
  close_open(out);
  std::size_t at = output_.size();
  output_.push_back({{"id", ids::new_id(ids::kind::mcp_call)},
                     {"type", "mcp_call"},
                     {"server_label", "warden"},
                     {"name", s.tool},
                     {"arguments", dump_safe(s.arguments)},
                     {"status", "in_progress"},
                     {"output", nullptr},
                     {"error", nullptr}});
  if (!s.approval_id.empty()) output_.back()["approval_request_id"] = "mcpr_" + s.approval_id;
  if (approval_items_ && s.awaiting_confirmation) {  // the question first, then the call it is about
    json ask = {{"id", "mcpr_" + s.approval_id}, {"type", "mcp_approval_request"}, {"server_label", "warden"},
                {"name", s.tool}, {"arguments", dump_safe(s.arguments)}};
    output_.insert(output_.begin() + static_cast<std::ptrdiff_t>(at), ask);
    out.push_back(event("response.output_item.added", {{"output_index", at}, {"item", ask}}));
    out.push_back(event("response.output_item.done", {{"output_index", at}, {"item", ask}}));
    ++at;
  }
  mcp_items_[s.call_id] = at;
  out.push_back(event("response.output_item.added", {{"output_index", at}, {"item", output_[at]}}));
}

void response_builder::tool_ended(const agent::tool_end& e, std::vector<json>& out) {
  auto it = mcp_items_.find(e.call_id);
  if (it == mcp_items_.end()) return;
  json& item = output_[it->second];
  item["status"] = "completed";
  item["output"] = e.result;
  out.push_back(event("response.output_item.done", {{"output_index", it->second}, {"item", item}}));
  mcp_items_.erase(it);
}

void response_builder::elicitation_item(const agent::elicitation_request& q, std::vector<json>& out) {
  close_open(out);
  const std::size_t at = output_.size();
  json item = wire::control_json(q);
  item.erase("type");
  item["type"] = "mcp_elicitation_request";
  item["id"] = q.approval_id;
  item["server_label"] = q.server;
  output_.push_back(std::move(item));
  out.push_back(event("response.output_item.added", {{"output_index", at}, {"item", output_[at]}}));
  out.push_back(event("response.output_item.done", {{"output_index", at}, {"item", output_[at]}}));
}

std::vector<json> response_builder::on_loop_event(const agent::loop_event& ev) {
  std::vector<json> out;
  if (const auto* t = std::get_if<model::text_delta>(&ev)) {
    text(t->text, out);
    return out;
  }
  if (const auto* r = std::get_if<model::reasoning_delta>(&ev)) {
    reasoning(r->text, out);
    return out;
  }
  if (std::holds_alternative<model::ping_event>(ev)) return out;
  if (const auto* c = std::get_if<model::context_truncated>(&ev)) {
    truncated(*c, out);
    return out;
  }
  if (const auto* s = std::get_if<agent::tool_start>(&ev)) tool_started(*s, out);
  if (const auto* q = std::get_if<agent::elicitation_request>(&ev)) elicitation_item(*q, out);
  json control = wire::control_json(ev);
  const std::string type = control["type"];
  out.push_back(event(type.c_str(), std::move(control)));
  if (const auto* e = std::get_if<agent::tool_end>(&ev)) tool_ended(*e, out);
  return out;
}

std::vector<json> response_builder::approval_requests(const agent::parked_turn& turn,
                                                      std::map<std::string, std::string>& ids) {
  std::vector<json> out;
  close_open(out);
  for (const auto& c : turn.calls) {
    if (!c.needs_approval) continue;
    const std::size_t at = output_.size();
    const std::string rid = ids::new_id(ids::kind::approval_request);
    ids[rid] = c.id;
    output_.push_back({{"id", rid}, {"type", "mcp_approval_request"}, {"server_label", "warden"}, {"name", c.name},
                       {"arguments", dump_safe(c.card_arguments)}});
    out.push_back(event("response.output_item.added", {{"output_index", at}, {"item", output_[at]}}));
    out.push_back(event("response.output_item.done", {{"output_index", at}, {"item", output_[at]}}));
  }
  return out;
}

json response_builder::error_event(const error& e) {
  return event("error", {{"code", e.type_code.empty() ? json("server_error") : json(e.type_code)},
                         {"message", e.message},
                         {"param", e.param.empty() ? json() : json(e.param)}});
}

std::vector<json> response_builder::finish(const std::optional<model::usage>& usage, bool length,
                                           const std::optional<error>& failure, bool cancelled) {
  std::vector<json> out;
  close_open(out, (length || cancelled || failure) ? "incomplete" : "completed");  // a message cut short says so
  for (auto& [call_id, at] : mcp_items_) output_[at]["status"] = "incomplete";
  mcp_items_.clear();
  if (length) {  // a call whose arguments max_output_tokens cut short is not a completed call
    for (auto& item : output_) {
      if (item["type"] != "function_call") continue;
      auto args = parse_json(item.value("arguments", std::string()));
      if (!args || !args->is_object()) item["status"] = "incomplete";
    }
  }
  usage_ = usage.value_or(model::usage{});
  if (failure) {
    status_ = "failed";
    error_ = {{"code", "server_error"}, {"message", failure->message}};
    out.push_back(event("response.failed", {{"response", response()}}));
  } else if (cancelled) {
    status_ = "cancelled";
    out.push_back(event("response.incomplete", {{"response", response()}}));
  } else if (length) {
    status_ = "incomplete";
    incomplete_ = {{"reason", "max_output_tokens"}};
    out.push_back(event("response.incomplete", {{"response", response()}}));
  } else {
    status_ = "completed";
    out.push_back(event("response.completed", {{"response", response()}}));
  }
  return out;
}

json response_builder::response() const {
  const json& e = settings_.echo;
  json r = {{"id", id_},
            {"object", "response"},
            {"created_at", created_at_},
            {"status", status_},
            {"background", settings_.background},
            {"error", error_},
            {"incomplete_details", incomplete_},
            {"instructions", echo_or(e, "instructions", json())},
            {"max_output_tokens", echo_or(e, "max_output_tokens", json())},
            {"model", settings_.model},
            {"output", output_},
            {"parallel_tool_calls", echo_or(e, "parallel_tool_calls", true)},
            {"previous_response_id", settings_.previous_response_id.empty() ? json() : json(settings_.previous_response_id)},
            {"reasoning", echo_or(e, "reasoning", json{{"effort", nullptr}, {"summary", nullptr}})},
            {"store", settings_.store},
            {"temperature", echo_or(e, "temperature", 1.0)},
            {"text", echo_or(e, "text", json{{"format", {{"type", "text"}}}})},
            {"tool_choice", echo_or(e, "tool_choice", "auto")},
            {"tools", echo_or(e, "tools", json::array())},
            {"top_p", echo_or(e, "top_p", 1.0)},
            {"truncation", echo_or(e, "truncation", "disabled")},
            {"usage", usage_json(usage_)},
            {"user", echo_or(e, "user", json())},
            {"metadata", echo_or(e, "metadata", json::object())}};
  if (auto notes = e.find("warden_notes"); notes != e.end()) r["warden_notes"] = *notes;
  if (truncated_) r["context_truncated"] = *truncated_;
  return r;
}

model::message response_builder::assistant_message() const {
  model::message m;
  m.role = model::role::assistant;
  for (const auto& item : output_) {
    const std::string type = item["type"];
    if (type == "reasoning" && !item["content"].empty()) m.content.emplace_back(model::reasoning_part{item["content"][0]["text"]});
    if (type == "message" && !item["content"].empty()) m.content.emplace_back(model::text_part{item["content"][0]["text"]});
    if (type == "function_call") m.content.emplace_back(model::tool_call_part{item["call_id"], model_name_of_call(item), item["arguments"]});
  }
  return m;
}

std::string sse(const json& ev) {
  return "event: " + ev.value("type", std::string("message")) + "\ndata: " + dump_safe(ev) + "\n\n";
}

}  // namespace warden::api::responses
