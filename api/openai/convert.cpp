#include "api/openai/convert.h"

namespace warden::api::openai {

namespace {

error bad(const std::string& where, const std::string& what) {
  return make_error(errc::invalid_request, "'" + where + "' " + what, where, "invalid_value");
}

/// Typed when warden knows every field of the part; otherwise kept verbatim (e.g. a part with
/// cache_control), so nothing the client sent is lost on the way to the upstream.
model::content_part to_part(const json& p) {
  const std::string type = p.value("type", "");
  if (p.size() != 2) return model::opaque_part{p};
  if (type == "text" && p.contains("text") && p["text"].is_string()) return model::text_part{p["text"]};
  if (type == "image_url" && p.contains("image_url") && p["image_url"].is_object() &&
      p["image_url"].contains("url") && p["image_url"]["url"].is_string() && p["image_url"].size() <= 2) {
    const json& iu = p["image_url"];
    const json detail = iu.value("detail", json());
    if (detail.is_null() || detail.is_string()) {
      return model::image_part{iu["url"], detail.is_string() ? detail.get<std::string>() : ""};
    }
  }
  return model::opaque_part{p};
}

void add_content(const json& content, model::message& m) {
  if (content.is_string()) {
    if (m.role == model::role::tool) return;  // the tool-result part holds it
    m.content.emplace_back(model::text_part{content});
  } else if (content.is_array()) {
    for (const auto& p : content) m.content.emplace_back(to_part(p));
  }
}

std::optional<error> add_tool_calls(const json& calls, model::message& m, const std::string& where) {
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const json& c = calls[i];
    const std::string w = where + ".tool_calls[" + std::to_string(i) + "]";
    if (!c.is_object() || !c.contains("function") || !c["function"].is_object()) return bad(w, "must be a function call object");
    const json& fn = c["function"];
    if (!fn.contains("name") || !fn["name"].is_string()) return bad(w + ".function.name", "must be a string");
    if (c.contains("id") && !c["id"].is_string() && !c["id"].is_null()) return bad(w + ".id", "must be a string");
    const json args = fn.value("arguments", json("{}"));
    m.content.emplace_back(model::tool_call_part{c.value("id", json("")).is_string() ? c.value("id", "") : "",
                                                 fn["name"], args.is_string() ? args.get<std::string>() : dump_safe(args)});
  }
  return std::nullopt;
}

constexpr const char* k_interpreted_message_fields[] = {"role", "content", "name", "tool_calls", "tool_call_id",
                                                        "reasoning_content"};

}  // namespace

result<model::message> to_model_message(const json& j, const std::string& where) {
  model::message m;
  const std::string role = j.value("role", "");
  m.role = role == "function" ? model::role::tool : model::parse_role(role).value_or(model::role::user);
  // A tool message is its result alone: reasoning and calls on one are not read (the upstream
  // never gets them: engine's encode_openai_message writes a tool message's result only).
  const bool tool = m.role == model::role::tool;
  if (auto rc = j.find("reasoning_content"); !tool && rc != j.end() && rc->is_string() && !rc->get<std::string>().empty()) {
    m.content.emplace_back(model::reasoning_part{*rc});
  }
  const json content = j.value("content", json());
  add_content(content, m);
  if (auto tc = j.find("tool_calls"); !tool && tc != j.end() && tc->is_array()) {
    if (auto e = add_tool_calls(*tc, m, where)) return *e;
  }
  if (tool) {
    const json id = j.value("tool_call_id", json(""));
    std::string text = content.is_string() ? content.get<std::string>() : "";
    if (content.is_array()) {
      for (const auto& p : content) text += p.value("text", json("")).is_string() ? p.value("text", "") : "";
      m.content.clear();
    }
    m.content.emplace_back(model::tool_result_part{id.is_string() ? id.get<std::string>() : "", text, false});
  }
  if (auto n = j.find("name"); n != j.end() && n->is_string()) m.name = *n;
  for (auto& [k, v] : j.items()) {
    if (std::find(std::begin(k_interpreted_message_fields), std::end(k_interpreted_message_fields), k) ==
        std::end(k_interpreted_message_fields)) {
      if (!m.extra.is_object()) m.extra = json::object();
      m.extra[k] = v;
    }
  }
  return m;
}

namespace {

std::optional<model::tool_choice> to_tool_choice(const json& c) {
  if (c.is_string()) {
    const std::string s = c;
    if (s == "none") return model::tool_choice{model::tool_choice::mode::none, ""};
    if (s == "required") return model::tool_choice{model::tool_choice::mode::required, ""};
    return model::tool_choice{model::tool_choice::mode::auto_, ""};
  }
  if (c.is_object() && c.contains("function") && c["function"].is_object()) {
    return model::tool_choice{model::tool_choice::mode::named, c["function"].value("name", "")};
  }
  return std::nullopt;
}

void take_sampling(json& body, model::sampling& s) {
  auto take = [&body](const char* k) {
    json v;
    if (auto it = body.find(k); it != body.end()) {
      v = std::move(*it);
      body.erase(it);
    }
    return v;
  };
  if (json v = take("temperature"); v.is_number()) s.temperature = v.get<double>();
  if (json v = take("top_p"); v.is_number()) s.top_p = v.get<double>();
  json max_tokens = take("max_tokens");
  json max_completion = take("max_completion_tokens");
  if (max_tokens.is_number_integer()) s.max_tokens = max_tokens.get<std::int64_t>();
  else if (max_completion.is_number_integer()) s.max_tokens = max_completion.get<std::int64_t>();
  if (json v = take("seed"); v.is_number_integer()) s.seed = v.get<std::int64_t>();
  if (json v = take("stop"); v.is_string()) {
    s.stop = std::vector<std::string>{v.get<std::string>()};
  } else if (v.is_array()) {
    s.stop = v.get<std::vector<std::string>>();
  }
}

/// The client's function tools ({"type": "function", "function": {name, description,
/// parameters}}); other kinds are not the model's to call here and are left out.
std::vector<model::tool_spec> to_tool_specs(const json& tools) {
  std::vector<model::tool_spec> out;
  for (const auto& t : tools) {
    auto f = t.find("function");
    if (!t.is_object() || t.value("type", "function") != "function" || f == t.end() || !f->is_object()) continue;
    auto n = f->find("name");
    if (n == f->end() || !n->is_string()) continue;
    model::tool_spec spec;
    spec.name = n->get<std::string>();
    if (auto d = f->find("description"); d != f->end() && d->is_string()) spec.description = d->get<std::string>();
    spec.parameters = f->value("parameters", json::object());
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace

result<model::chat_request> to_model_request(json body) {
  model::chat_request req;
  const json& messages = body["messages"];
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto m = to_model_message(messages[i], "messages[" + std::to_string(i) + "]");
    if (!m) return m.error();
    req.messages.push_back(std::move(*m));
  }
  if (auto t = body.find("tools"); t != body.end() && t->is_array()) req.tools = to_tool_specs(*t);
  if (auto c = body.find("tool_choice"); c != body.end()) req.tool_choice = to_tool_choice(*c);
  if (auto p = body.find("parallel_tool_calls"); p != body.end() && p->is_boolean()) req.parallel_tool_calls = p->get<bool>();
  for (const char* k : {"messages", "tools", "tool_choice", "parallel_tool_calls", "stream", "stream_options", "model"}) {
    body.erase(k);
  }
  take_sampling(body, req.sampling);
  req.sampling.extra = std::move(body);
  req.include_usage = true;
  return req;
}

}  // namespace warden::api::openai
