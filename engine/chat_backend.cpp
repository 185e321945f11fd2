#include "engine/chat_backend.h"

#include <deque>

namespace warden::engine {

namespace asio = boost::asio;

namespace {

json encode_part(const model::content_part& p) {
  if (const auto* t = std::get_if<model::text_part>(&p)) return json{{"type", "text"}, {"text", t->text}};
  if (const auto* i = std::get_if<model::image_part>(&p)) {
    json url = json{{"url", i->url}};
    if (!i->detail.empty()) url["detail"] = i->detail;
    return json{{"type", "image_url"}, {"image_url", std::move(url)}};
  }
  if (const auto* o = std::get_if<model::opaque_part>(&p)) return o->value;
  return json();
}

/// content: one text part → a string; no visible part → null; otherwise a list of parts.
json encode_content(const model::message& m) {
  std::vector<const model::content_part*> visible;
  for (const auto& p : m.content) {
    if (std::holds_alternative<model::text_part>(p) || std::holds_alternative<model::image_part>(p) ||
        std::holds_alternative<model::opaque_part>(p)) {
      visible.push_back(&p);
    }
  }
  if (visible.empty()) return json();
  if (visible.size() == 1) {
    if (const auto* t = std::get_if<model::text_part>(visible[0])) return t->text;
  }
  json parts = json::array();
  for (const auto* p : visible) parts.push_back(encode_part(*p));
  return parts;
}

json encode_tool_message(const model::message& m) {
  json out = json{{"role", "tool"}};
  std::string content;
  for (const auto& p : m.content) {
    if (const auto* r = std::get_if<model::tool_result_part>(&p)) {
      out["tool_call_id"] = r->tool_call_id;
      content += r->content;
    }
  }
  out["content"] = content;
  return out;
}

json encode_tool_choice(const model::tool_choice& c) {
  switch (c.kind) {
    case model::tool_choice::mode::auto_: return "auto";
    case model::tool_choice::mode::none: return "none";
    case model::tool_choice::mode::required: return "required";
    case model::tool_choice::mode::named: return json{{"type", "function"}, {"function", {{"name", c.name}}}};
  }
  return "auto";
}

void encode_sampling(const model::sampling& s, json& body) {
  if (s.temperature) body["temperature"] = *s.temperature;
  if (s.top_p) body["top_p"] = *s.top_p;
  if (s.max_tokens) body["max_tokens"] = *s.max_tokens;
  if (s.seed) body["seed"] = *s.seed;
  if (s.stop) body["stop"] = *s.stop;
}

}  // namespace

json encode_openai_message(const model::message& m) {
  json out = m.extra.is_object() ? m.extra : json::object();
  if (m.role == model::role::tool) {
    json t = encode_tool_message(m);
    for (auto& [k, v] : t.items()) out[k] = v;
  } else {
    out["role"] = model::to_string(m.role);
    out["content"] = encode_content(m);
    std::string reasoning;
    json calls = json::array();
    for (const auto& p : m.content) {
      if (const auto* r = std::get_if<model::reasoning_part>(&p)) reasoning += r->text;
      if (const auto* c = std::get_if<model::tool_call_part>(&p)) {
        calls.push_back({{"id", c->id}, {"type", "function"}, {"function", {{"name", c->name}, {"arguments", c->arguments}}}});
      }
    }
    if (!reasoning.empty()) out["reasoning_content"] = reasoning;
    if (!calls.empty()) out["tool_calls"] = std::move(calls);
  }
  if (!m.name.empty()) out["name"] = m.name;
  return out;
}

json encode_openai_request(const model::chat_request& req) {
  json body = req.sampling.extra.is_object() ? req.sampling.extra : json::object();
  encode_sampling(req.sampling, body);
  json messages = json::array();
  for (const auto& m : req.messages) messages.push_back(encode_openai_message(m));
  body["messages"] = std::move(messages);
  if (!req.tools.empty()) {
    json tools = json::array();
    for (const auto& t : req.tools) {
      // An empty description is left out, as a client that sent none would have it: the template
      // renders the tool as the client wrote it (and a passthrough and a typed turn cost the same
      // prompt tokens: bench/anthropic_bench.py's healing ratio).
      json function = {{"name", t.name}};
      if (!t.description.empty()) function["description"] = t.description;
      function["parameters"] = t.parameters;
      tools.push_back({{"type", "function"}, {"function", std::move(function)}});
    }
    body["tools"] = std::move(tools);
  }
  if (req.tool_choice) body["tool_choice"] = encode_tool_choice(*req.tool_choice);
  if (req.parallel_tool_calls) body["parallel_tool_calls"] = *req.parallel_tool_calls;
  if (req.include_usage) body["stream_options"] = json{{"include_usage", true}};
  return body;
}

void openai_chunk_decoder::decode_tool_calls(const json& deltas, std::vector<model::stream_event>& out) {
  if (!deltas.is_array()) return;
  for (const auto& d : deltas) {
    if (!d.is_object()) continue;
    const auto given = d.find("index");
    const long long key = given != d.end() && given->is_number_integer() ? given->get<long long>()
                                                                          : static_cast<long long>(index_of_.size());
    auto [it, fresh] = index_of_.try_emplace(key, open_.size());
    if (fresh) open_.push_back(true);
    const std::size_t index = it->second;
    model::tool_call_started started{index, "", ""};
    if (auto id = d.find("id"); id != d.end() && id->is_string()) started.id = *id;
    const json* fn = d.contains("function") && d["function"].is_object() ? &d["function"] : nullptr;
    if (fn && fn->contains("name") && (*fn)["name"].is_string()) started.name = (*fn)["name"];
    if (fresh || !started.id.empty() || !started.name.empty()) out.emplace_back(std::move(started));
    if (!fn) continue;
    if (auto a = fn->find("arguments"); a != fn->end() && !a->is_null()) {
      std::string fragment = a->is_string() ? a->get<std::string>() : dump_safe(*a);
      if (!fragment.empty()) out.emplace_back(model::tool_call_arguments_delta{index, std::move(fragment)});
    }
  }
}

std::vector<model::stream_event> openai_chunk_decoder::decode(const json& chunk) {
  std::vector<model::stream_event> out;
  if (auto u = chunk.find("usage"); u != chunk.end() && u->is_object()) {
    model::usage usage;
    auto count = [&](const char* k) { return u->contains(k) && (*u)[k].is_number_integer() ? (*u)[k].get<std::int64_t>() : 0; };
    usage.prompt_tokens = count("prompt_tokens");
    usage.completion_tokens = count("completion_tokens");
    usage.total_tokens = count("total_tokens");
    out.emplace_back(model::usage_event{usage});
  }
  auto ch = chunk.find("choices");
  if (ch == chunk.end() || !ch->is_array() || ch->empty() || !(*ch)[0].is_object()) return out;
  const json& c0 = (*ch)[0];
  if (auto d = c0.find("delta"); d != c0.end() && d->is_object()) {
    if (auto rc = d->find("reasoning_content"); rc != d->end() && rc->is_string() && !rc->get<std::string>().empty()) {
      out.emplace_back(model::reasoning_delta{*rc});
    }
    if (auto tc = d->find("tool_calls"); tc != d->end()) decode_tool_calls(*tc, out);
    if (auto ct = d->find("content"); ct != d->end() && ct->is_string() && !ct->get<std::string>().empty()) {
      out.emplace_back(model::text_delta{*ct});
    }
  }
  if (auto fr = c0.find("finish_reason"); fr != c0.end() && fr->is_string()) {
    for (auto& e : finish()) out.push_back(std::move(e));
    out.emplace_back(model::finish_event{model::parse_finish_reason(fr->get<std::string>()).value_or(model::finish_reason::stop)});
  }
  return out;
}

std::vector<model::stream_event> openai_chunk_decoder::finish() {
  std::vector<model::stream_event> out;
  for (std::size_t i = 0; i < open_.size(); ++i) {
    if (open_[i]) out.emplace_back(model::tool_call_finished{i});
    open_[i] = false;
  }
  return out;
}

namespace {

class openai_turn : public chat_turn {
 public:
  explicit openai_turn(std::unique_ptr<chat_stream> s) : stream_(std::move(s)) {}

  asio::awaitable<std::optional<model::stream_event>> next() override {
    while (ready_.empty()) {
      if (ended_) co_return std::nullopt;
      if (poll_ready()) continue;
      absorb(co_await stream_->next());
    }
    model::stream_event e = std::move(ready_.front());
    ready_.pop_front();
    co_return e;
  }
  bool poll_ready() override {
    while (ready_.empty() && !ended_) {
      auto ev = stream_->try_next();
      if (!ev) return false;
      absorb(std::move(*ev));
    }
    return true;
  }
  std::function<void()> canceller() const override { return stream_->canceller(); }

 private:
  void absorb(chat_event ev) {
    switch (ev.type) {
      case chat_event::kind::chunk:
        for (auto& e : decoder_.decode(ev.parsed)) ready_.push_back(std::move(e));
        break;
      case chat_event::kind::ping:
        ready_.emplace_back(model::ping_event{});
        break;
      case chat_event::kind::failed:
        ready_.emplace_back(model::error_event{ev.failure.value_or(make_error(errc::upstream_error, "stream failed"))});
        ended_ = true;
        break;
      case chat_event::kind::finished:
        for (auto& e : decoder_.finish()) ready_.push_back(std::move(e));
        ended_ = true;
        break;
    }
  }

  std::unique_ptr<chat_stream> stream_;
  openai_chunk_decoder decoder_;
  std::deque<model::stream_event> ready_;
  bool ended_ = false;
};

}  // namespace

asio::awaitable<result<std::unique_ptr<chat_turn>>> openai_chat_backend::open_turn(
    const model::chat_request& req, std::shared_ptr<cancel_token> cancel,
    std::function<asio::awaitable<bool>()> on_silence) {
  json body = encode_openai_request(req);
  if (!req.route.model.empty()) body["model"] = req.route.model;  // a pool routes by it
  route_hint route{req.route.follow, req.route.record};
  auto opened = co_await chat_.open_stream(std::move(body), std::move(cancel), std::move(on_silence), std::move(route));
  if (!opened) co_return opened.error();
  co_return std::unique_ptr<chat_turn>(std::make_unique<openai_turn>(std::move(*opened)));
}

asio::awaitable<std::optional<model::stream_event>> rewriting_turn::next() {
  while (ready_.empty()) {
    if (!inner_) co_return std::nullopt;
    auto ev = co_await inner_->next();
    if (!ev) {
      at_end();
      inner_.reset();
      continue;
    }
    take(std::move(*ev));
    if (cut_pending()) co_await after_cut();
  }
  model::stream_event ev = std::move(ready_.front());
  ready_.pop_front();
  co_return ev;
}

asio::awaitable<result<std::int64_t>> chat_backend::count_prompt_tokens(const model::chat_request&) {
  co_return make_error(errc::invalid_request, "this upstream cannot count tokens without generating");
}

asio::awaitable<result<std::int64_t>> chat_backend::context_size() {
  co_return make_error(errc::invalid_request, "this upstream does not report its context size");
}

asio::awaitable<result<std::int64_t>> openai_chat_backend::context_size() {
  auto props = co_await chat_.get_root("/props");
  if (!props) co_return props.error();
  const json* dgs = props->contains("default_generation_settings") ? &(*props)["default_generation_settings"] : nullptr;
  if (!dgs || !dgs->is_object() || !dgs->contains("n_ctx") || !(*dgs)["n_ctx"].is_number_integer()) {
    co_return make_error(errc::invalid_request, "the model server's /props has no default_generation_settings.n_ctx");
  }
  co_return (*dgs)["n_ctx"].get<std::int64_t>();
}

asio::awaitable<result<std::int64_t>> openai_chat_backend::count_prompt_tokens(const model::chat_request& req) {
  json body = encode_openai_request(req);
  json templ = json::object();
  templ["messages"] = std::move(body["messages"]);
  if (body.contains("tools")) templ["tools"] = std::move(body["tools"]);
  if (body.contains("chat_template_kwargs")) templ["chat_template_kwargs"] = std::move(body["chat_template_kwargs"]);
  auto rendered = co_await chat_.post_root("/apply-template", std::move(templ));
  if (!rendered) co_return rendered.error();
  auto prompt = rendered->find("prompt");
  if (prompt == rendered->end() || !prompt->is_string()) {
    co_return make_error(errc::upstream_error, "the model server's /apply-template answer has no 'prompt'");
  }
  json tok = json::object();
  tok["content"] = std::move(*prompt);
  tok["add_special"] = true;  // as llama-server tokenizes a chat prompt (server-context.cpp)
  tok["parse_special"] = true;
  auto tokens = co_await chat_.post_root("/tokenize", std::move(tok));
  if (!tokens) co_return tokens.error();
  auto list = tokens->find("tokens");
  if (list == tokens->end() || !list->is_array()) {
    co_return make_error(errc::upstream_error, "the model server's /tokenize answer has no 'tokens'");
  }
  co_return static_cast<std::int64_t>(list->size());
}

}  // namespace warden::engine
