#include "api/anthropic/convert.h"

#include <string_view>

namespace warden::api::anthropic {

namespace {

error bad_block(const std::string& where, const std::string& what) {
  return make_error(errc::invalid_request, "'" + where + "' " + what, where, "invalid_value");
}

/// The text of a tool_result's (or a server tool result's) content.
std::string result_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  auto add = [&out](const std::string& s) {
    if (!out.empty()) out += "\n";
    out += s;
  };
  if (content.is_array()) {
    for (const auto& b : content) {
      if (!b.is_object()) continue;
      const std::string type = b.value("type", "");
      if (b.contains("text") && b["text"].is_string()) add(b["text"].get<std::string>());
      else if (type == "image") add("[image]");
      else if (type == "search_result" && b.contains("content")) add(result_text(b["content"]));
      else if (type == "document" && b.contains("source") && b["source"].is_object() &&
               b["source"].value("data", json()).is_string() && b["source"].value("type", "") == "text") {
        add(b["source"]["data"].get<std::string>());
      }
    }
  } else if (content.is_object()) {
    for (const char* k : {"text", "stdout", "stderr"}) {
      if (content.contains(k) && content[k].is_string() && !content[k].get<std::string>().empty()) add(content[k]);
    }
    if (content.contains("content")) {
      std::string inner = result_text(content["content"]);
      if (!inner.empty()) add(inner);
    }
  }
  return out;
}

result<model::content_part> image_from(const json& b, const std::string& where) {
  const json src = b.value("source", json());
  if (!src.is_object()) return bad_block(where + ".source", "must be an object");
  const std::string type = src.value("type", "");
  if (type == "base64" && src.contains("data") && src["data"].is_string() && src.contains("media_type") &&
      src["media_type"].is_string()) {
    return model::content_part{model::image_part{"data:" + src["media_type"].get<std::string>() + ";base64," +
                                                     src["data"].get<std::string>(),
                                                 ""}};
  }
  if (type == "url" && src.contains("url") && src["url"].is_string()) {
    return model::content_part{model::image_part{src["url"].get<std::string>(), ""}};
  }
  return bad_block(where + ".source", "must be {\"type\":\"base64\",\"media_type\",\"data\"} or {\"type\":\"url\",\"url\"}");
}

result<model::content_part> document_from(const json& b, const std::string& where) {
  const json src = b.value("source", json());
  if (src.is_object() && src.value("type", "") == "text" && src.contains("data") && src["data"].is_string()) {
    return model::content_part{model::text_part{src["data"].get<std::string>()}};
  }
  return bad_block(where + ".source", "is not supported: warden reads documents with a text source only");
}

bool is_tool_result_type(const std::string& type) {
  constexpr std::string_view suffix = "_tool_result";
  return type.size() > suffix.size() && type.compare(type.size() - suffix.size(), suffix.size(), suffix) == 0;
}

model::message tool_message(const json& b) {
  model::message m;
  m.role = model::role::tool;
  m.content.emplace_back(model::tool_result_part{b.value("tool_use_id", ""), result_text(b.value("content", json(""))),
                                                 b.value("is_error", json(false)).is_boolean() && b.value("is_error", false)});
  return m;
}

/// Appends the message to `out` when it has parts.
void flush(model::message& m, std::vector<model::message>& out) {
  if (m.content.empty()) return;
  out.push_back(std::move(m));
  model::role r = out.back().role;
  m = model::message{};
  m.role = r;
}

/// One block of a user (or assistant) message: a part of `cur`, or a tool message of its own
/// (which ends `cur` so order is kept).
std::optional<error> read_block(const json& b, const std::string& w, bool user, model::message& cur,
                                std::vector<model::message>& out) {
  const std::string type = b.value("type", "");
  if (type == "text") {
    cur.content.emplace_back(model::text_part{b["text"].get<std::string>()});
  } else if (user ? type == "tool_result" : is_tool_result_type(type)) {
    flush(cur, out);
    out.push_back(tool_message(b));
  } else if (user && (type == "image" || type == "document")) {
    auto p = type == "image" ? image_from(b, w) : document_from(b, w);
    if (!p) return p.error();
    cur.content.push_back(std::move(*p));
  } else if (!user && type == "thinking") {
    cur.content.emplace_back(model::reasoning_part{b.value("thinking", "")});
  } else if (!user && (type == "tool_use" || type == "server_tool_use")) {
    cur.content.emplace_back(model::tool_call_part{b.value("id", ""), b.value("name", ""),
                                                   dump_safe(b.value("input", json::object()))});
  } else if (user || type != "redacted_thinking") {  // redacted thinking: encrypted for another model, dropped
    return bad_block(w + ".type", "'" + type + "' is not a content block warden can read in " +
                                      (user ? "a user" : "an assistant") + " message");
  }
  return std::nullopt;
}

std::optional<error> read_blocks(const json& blocks, const std::string& where, bool user, std::vector<model::message>& out) {
  model::message cur;
  cur.role = user ? model::role::user : model::role::assistant;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (auto e = read_block(blocks[i], where + ".content[" + std::to_string(i) + "]", user, cur, out)) return e;
  }
  flush(cur, out);
  return std::nullopt;
}

std::string system_text(const json& system) {
  if (system.is_string()) return system.get<std::string>();
  std::string out;
  if (!system.is_array()) return out;
  for (const auto& b : system) {
    if (!b.is_object() || !b.contains("text") || !b["text"].is_string()) continue;
    if (!out.empty()) out += "\n\n";
    out += b["text"].get<std::string>();
  }
  return out;
}

}  // namespace

result<std::vector<model::message>> to_model_messages(const json& system, const json& messages) {
  std::vector<model::message> out;
  if (!system.is_null()) {
    const std::string text = system_text(system);
    if (!text.empty()) {
      model::message m;
      m.role = model::role::system;
      m.content.emplace_back(model::text_part{text});
      out.push_back(std::move(m));
    }
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    const bool user = m.value("role", "") == "user";
    const json& content = m["content"];
    if (content.is_string()) {
      model::message one;
      one.role = user ? model::role::user : model::role::assistant;
      one.content.emplace_back(model::text_part{content.get<std::string>()});
      out.push_back(std::move(one));
      continue;
    }
    const std::size_t before = out.size();
    auto e = read_blocks(content, where, user, out);
    if (e) return *e;
    if (out.size() == before) {  // no block warden keeps: the turn itself stays
      model::message empty;
      empty.role = user ? model::role::user : model::role::assistant;
      out.push_back(std::move(empty));
    }
  }
  return out;
}

json tool_input(const std::string& arguments) {
  if (arguments.empty()) return json::object();
  auto j = parse_json(arguments);
  if (!j || !j->is_object()) return json::object();
  return std::move(*j);
}

namespace {

json image_block(const model::image_part& img) {
  const std::string_view url = img.url;
  if (url.rfind("data:", 0) == 0) {
    const auto semi = url.find(";base64,");
    if (semi != std::string_view::npos) {
      return json{{"type", "image"},
                  {"source",
                   {{"type", "base64"}, {"media_type", std::string(url.substr(5, semi - 5))},
                    {"data", std::string(url.substr(semi + 8))}}}};
    }
  }
  return json{{"type", "image"}, {"source", {{"type", "url"}, {"url", img.url}}}};
}

/// The blocks of any message (tool results included); opaque parts dropped.
json blocks_of(const model::message& m) {
  json out = json::array();
  for (const auto& p : m.content) {
    if (const auto* t = std::get_if<model::text_part>(&p)) {
      out.push_back({{"type", "text"}, {"text", t->text}});
    } else if (const auto* r = std::get_if<model::reasoning_part>(&p)) {
      out.push_back({{"type", "thinking"}, {"thinking", r->text}, {"signature", ""}});
    } else if (const auto* c = std::get_if<model::tool_call_part>(&p)) {
      out.push_back({{"type", "tool_use"}, {"id", c->id}, {"name", c->name}, {"input", tool_input(c->arguments)}});
    } else if (const auto* res = std::get_if<model::tool_result_part>(&p)) {
      json b = {{"type", "tool_result"}, {"tool_use_id", res->tool_call_id}, {"content", res->content}};
      if (res->is_error) b["is_error"] = true;
      out.push_back(std::move(b));
    } else if (const auto* img = std::get_if<model::image_part>(&p)) {
      out.push_back(image_block(*img));
    }
  }
  return out;
}

/// A single text block → its string; otherwise the blocks.
json compact(json blocks) {
  if (blocks.size() == 1 && blocks[0]["type"] == "text") return blocks[0]["text"];
  return blocks;
}

}  // namespace

json content_blocks(const model::message& m) { return blocks_of(m); }

json to_anthropic(const std::vector<model::message>& messages) {
  std::string system;
  json out = json::array();
  json pending_results = json::array();  // tool results waiting for their user message
  auto flush_results = [&]() {
    if (pending_results.empty()) return;
    out.push_back({{"role", "user"}, {"content", std::move(pending_results)}});
    pending_results = json::array();
  };
  for (const auto& m : messages) {
    switch (m.role) {
      case model::role::system:
        if (!system.empty()) system += "\n\n";
        system += m.text();
        break;
      case model::role::tool:
        for (auto& b : blocks_of(m)) pending_results.push_back(std::move(b));
        break;
      case model::role::user: {
        json blocks = blocks_of(m);
        if (!pending_results.empty()) {
          for (auto& b : blocks) pending_results.push_back(std::move(b));
          flush_results();
        } else {
          out.push_back({{"role", "user"}, {"content", compact(std::move(blocks))}});
        }
        break;
      }
      case model::role::assistant:
        flush_results();
        out.push_back({{"role", "assistant"}, {"content", compact(blocks_of(m))}});
        break;
    }
  }
  flush_results();
  json body = {{"messages", std::move(out)}};
  if (!system.empty()) body["system"] = system;
  return body;
}

}  // namespace warden::api::anthropic
