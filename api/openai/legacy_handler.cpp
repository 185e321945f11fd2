#include "api/openai/legacy_handler.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>

#include "api/openai/chat_handler.h"
#include "api/wire/errors.h"
#include "common/json_fields.h"
#include "common/sse.h"

namespace warden::api::openai {

namespace asio = boost::asio;

namespace {

/// Most entries in a list of prompts or inputs (OpenAI's limit for embeddings).
constexpr std::size_t k_max_inputs = 2048;
/// How often a request waiting for the embeddings child to load looks at its state.
constexpr std::chrono::milliseconds k_start_poll{100};

constexpr const char* k_inputs_shape = "a string, a list of strings, a list of token ids or a list of token-id lists";

bool is_token(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT32_MAX);
  return v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= INT32_MAX;
}

/// A non-empty list of token ids, or the 400 naming `where` (e.g. "prompt[2]").
std::optional<error> check_token_list(const json& list, const std::string& where, const std::string& param) {
  if (list.empty()) return field_invalid("'" + where + "' must not be an empty list", param);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!is_token(list[i])) {
      return field_invalid("'" + where + "[" + std::to_string(i) + "]' must be a token id (an integer from 0 to " +
                               std::to_string(INT32_MAX) + "), not " + list[i].dump(),
                           param);
    }
  }
  return std::nullopt;
}

/// A list whose every entry is a string; `allow_empty` says whether "" is allowed.
std::optional<error> check_string_list(const json& list, const std::string& param, bool allow_empty) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) return field_wrong_type(param, k_inputs_shape, list);
    if (!allow_empty && list[i].get_ref<const std::string&>().empty()) {
      return field_invalid("'" + param + "[" + std::to_string(i) + "]' must not be an empty string", param);
    }
  }
  return std::nullopt;
}

/// Validates `body[param]` (prompt or input): returns how many inputs it holds (a string or one
/// token list is one), or the 400. All errors name `param`.
result<std::size_t> check_inputs(const json& body, const std::string& param, bool allow_empty_string) {
  auto it = body.find(param);
  if (it == body.end() || it->is_null()) {
    return field_invalid("'" + param + "' is required", param, "missing_required_parameter");
  }
  const json& v = *it;
  if (v.is_string()) {
    if (!allow_empty_string && v.get_ref<const std::string&>().empty()) {
      return field_invalid("'" + param + "' must not be an empty string", param);
    }
    return std::size_t{1};
  }
  if (!v.is_array()) return field_wrong_type(param, k_inputs_shape, v);
  if (v.empty()) return field_invalid("'" + param + "' must not be an empty list", param);
  const json& first = v.front();
  if (first.is_number()) {  // one prompt as token ids
    if (auto e = check_token_list(v, param, param)) return *e;
    return std::size_t{1};
  }
  if (v.size() > k_max_inputs) {
    return field_invalid("'" + param + "' may hold at most " + std::to_string(k_max_inputs) + " entries, got " +
                             std::to_string(v.size()),
                         param);
  }
  if (first.is_string()) {
    if (auto e = check_string_list(v, param, allow_empty_string)) return *e;
    return v.size();
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_array()) return field_wrong_type(param, k_inputs_shape, v);
    if (auto e = check_token_list(v[i], param + "[" + std::to_string(i) + "]", param)) return *e;
  }
  return v.size();
}

std::optional<error> check_stop(const json& body) {
  auto it = body.find("stop");
  if (it == body.end() || it->is_null() || it->is_string()) return std::nullopt;
  if (!it->is_array()) return field_wrong_type("stop", "a string or a list of strings", *it);
  for (const auto& s : *it) {
    if (!s.is_string()) return field_wrong_type("stop", "a string or a list of strings", *it);
  }
  return std::nullopt;
}

/// The typed fields of a completions body (legacy_handler.h lists them).
std::optional<error> check_completion_fields(const json& body) {
  if (auto e = check_kind_field(body, "model", &json::is_string, "a string")) return e;
  if (auto e = check_kind_field(body, "stream", &json::is_boolean, "a boolean")) return e;
  if (auto e = check_kind_field(body, "stream_options", &json::is_object, "an object")) return e;
  if (auto e = check_int_field(body, "max_tokens", 0, INT32_MAX)) return e;
  if (auto e = check_number_field(body, "temperature", 0.0, 2.0)) return e;
  if (auto e = check_number_field(body, "top_p", 0.0, 1.0)) return e;
  if (auto e = check_number_field(body, "min_p", 0.0, 1.0)) return e;
  if (auto e = check_number_field(body, "presence_penalty", -2.0, 2.0)) return e;
  if (auto e = check_number_field(body, "frequency_penalty", -2.0, 2.0)) return e;
  if (auto e = check_number_field(body, "repetition_penalty", 0.0, 2.0)) return e;
  if (auto e = check_int_field(body, "n", 1, 128)) return e;
  if (auto e = check_int_field(body, "best_of", 1, 128)) return e;
  if (auto e = check_int_field(body, "top_k", -1, 100000)) return e;
  if (auto e = check_int_field(body, "seed", INT64_MIN, INT64_MAX)) return e;
  if (auto e = check_int_field(body, "logprobs", 0, 20)) return e;
  if (auto e = check_int_field(body, "n_probs", 0, 100)) return e;  // as chat: bounds the answer's size
  if (auto e = check_kind_field(body, "echo", &json::is_boolean, "a boolean")) return e;
  if (auto e = check_kind_field(body, "suffix", &json::is_string, "a string")) return e;
  if (auto e = check_kind_field(body, "user", &json::is_string, "a string")) return e;
  if (auto e = check_kind_field(body, "logit_bias", &json::is_object, "an object")) return e;
  return check_stop(body);
}

}  // namespace

result<completion_request> parse_completion_request(std::string_view text) {
  auto parsed = parse_request_body(text, "'prompt'");
  if (!parsed) return parsed.error();
  completion_request req;
  req.body = std::move(*parsed);
  const json& body = req.body;
  auto inputs = check_inputs(body, "prompt", true);
  if (!inputs) return inputs.error();
  if (auto e = check_completion_fields(body)) return *e;
  req.stream = body.value("stream", json(false)).is_boolean() && body.value("stream", false);
  if (auto so = body.find("stream_options"); so != body.end() && so->is_object()) {
    if (!req.stream) return field_invalid("'stream_options' is only allowed when 'stream' is true", "stream_options");
    auto iu = so->find("include_usage");
    if (iu != so->end() && !iu->is_null()) {
      if (!iu->is_boolean()) return field_wrong_type("stream_options.include_usage", "a boolean", *iu);
      req.include_usage = iu->get<bool>();
    }
  }
  if (req.stream && body.contains("n") && body["n"].is_number_integer() && body["n"].get<std::int64_t>() > 1) {
    return field_invalid("'n' greater than 1 is not supported with streaming", "n", "unsupported_parameter");
  }
  return req;
}

result<embedding_request> parse_embedding_request(std::string_view text) {
  auto parsed = parse_request_body(text, "'input'");
  if (!parsed) return parsed.error();
  embedding_request req;
  req.body = std::move(*parsed);
  json& body = req.body;
  auto inputs = check_inputs(body, "input", false);
  if (!inputs) return inputs.error();
  req.input_count = *inputs;
  if (auto e = check_kind_field(body, "model", &json::is_string, "a string")) return *e;
  if (auto e = check_kind_field(body, "user", &json::is_string, "a string")) return *e;
  if (auto e = check_kind_field(body, "encoding_format", &json::is_string, "a string")) return *e;
  if (auto e = check_int_field(body, "dimensions", 1, INT32_MAX)) return *e;
  if (auto f = body.find("encoding_format"); f != body.end() && f->is_string()) {
    if (*f != "float" && *f != "base64") {
      return field_invalid("'encoding_format' must be \"float\" or \"base64\", not " + f->dump(), "encoding_format");
    }
    req.base64 = *f == "base64";
  }
  if (auto d = body.find("dimensions"); d != body.end() && !d->is_null()) req.dimensions = d->get<std::int64_t>();
  body.erase("dimensions");
  body["encoding_format"] = "float";  // the upstream always sends floats; warden encodes base64
  return req;
}

std::string base64_float32(std::span<const float> values) {
  static constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  bytes.reserve(values.size() * 4);
  for (const float f : values) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<char>((bits >> shift) & 0xFFu));
  }
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      const auto byte = k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u;
      group = (group << 8) | byte;
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out.push_back(k <= n ? k_alphabet[(group >> (18 - 6 * k)) & 0x3Fu] : '=');
    }
  }
  return out;
}

namespace {

error malformed_embeddings(const std::string& why) {
  return make_error(errc::upstream_error, "the model server sent a malformed embeddings answer: " + why);
}

/// The upstream's vectors in input order (`index` when given, else position), each a non-empty
/// list of numbers, all of one length; or the 502.
result<std::vector<const json*>> upstream_vectors(const json& upstream, std::size_t expected) {
  auto data = upstream.find("data");
  if (data == upstream.end() || !data->is_array()) return malformed_embeddings("no 'data' list");
  if (data->size() != expected) {
    return malformed_embeddings(std::to_string(data->size()) + " vectors for " + std::to_string(expected) + " inputs");
  }
  std::vector<const json*> slots(expected, nullptr);
  for (std::size_t i = 0; i < data->size(); ++i) {
    const json& item = (*data)[i];
    if (!item.is_object()) return malformed_embeddings("an entry of 'data' is not an object");
    std::size_t at = i;
    if (auto idx = item.find("index"); idx != item.end() && !idx->is_null()) {
      if (!idx->is_number_unsigned() && !(idx->is_number_integer() && idx->get<std::int64_t>() >= 0)) {
        return malformed_embeddings("an 'index' is not a non-negative integer");
      }
      at = static_cast<std::size_t>(idx->get<std::uint64_t>());
    }
    if (at >= expected || slots[at]) return malformed_embeddings("the indexes are not 0.." + std::to_string(expected - 1));
    auto vec = item.find("embedding");
    if (vec == item.end() || !vec->is_array() || vec->empty()) return malformed_embeddings("an 'embedding' is not a list");
    for (const auto& x : *vec) {
      if (!x.is_number()) return malformed_embeddings("an 'embedding' holds something other than numbers");
    }
    if (slots[0] != nullptr && vec->size() != slots[0]->size()) return malformed_embeddings("the vectors differ in length");
    slots[at] = &*vec;
  }
  for (const json* s : slots) {
    if (s->size() != slots.front()->size()) return malformed_embeddings("the vectors differ in length");
  }
  return slots;
}

std::int64_t usage_count(const json& upstream, const char* name, std::int64_t fallback) {
  auto u = upstream.find("usage");
  if (u == upstream.end() || !u->is_object()) return fallback;
  auto n = u->find(name);
  if (n == u->end() || !n->is_number_integer()) return fallback;
  return n->get<std::int64_t>();
}

}  // namespace

result<json> embedding_response(const json& upstream, const embedding_request& req, const std::string& model) {
  if (!upstream.is_object()) return malformed_embeddings("not a JSON object");
  auto vectors = upstream_vectors(upstream, req.input_count);
  if (!vectors) return vectors.error();
  const std::size_t length = vectors->front()->size();
  if (req.dimensions && static_cast<std::uint64_t>(*req.dimensions) != length) {
    return field_invalid("'dimensions' " + std::to_string(*req.dimensions) + " is not supported: model " + model +
                             " makes vectors of " + std::to_string(length) +
                             " dimensions only (omit 'dimensions' or send " + std::to_string(length) + ")",
                         "dimensions", "unsupported_parameter");
  }
  json data = json::array();
  for (std::size_t i = 0; i < vectors->size(); ++i) {
    json item = json::object();
    item["object"] = "embedding";
    item["index"] = i;
    const json& vec = *(*vectors)[i];
    if (req.base64) {
      std::vector<float> floats;
      floats.reserve(vec.size());
      for (const auto& x : vec) floats.push_back(static_cast<float>(x.get<double>()));
      item["embedding"] = base64_float32(floats);
    } else {
      item["embedding"] = vec;
    }
    data.push_back(std::move(item));
  }
  const std::int64_t prompt_tokens = usage_count(upstream, "prompt_tokens", 0);
  json usage = json::object();
  usage["prompt_tokens"] = prompt_tokens;
  usage["total_tokens"] = usage_count(upstream, "total_tokens", prompt_tokens);
  json out = json::object();
  out["object"] = "list";
  out["data"] = std::move(data);
  out["model"] = model;
  out["usage"] = std::move(usage);
  return out;
}

namespace {


/// Begins the embeddings child and waits (off any thread: a timer) until it is ready. The error
/// to answer otherwise (errc::cancelled when the request itself was cancelled meanwhile).
asio::awaitable<std::optional<error>> wait_until_started(engine::upstream& child) {
  child.begin();
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (child.state() == engine::upstream_state::starting) {
    timer.expires_after(k_start_poll);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return make_error(errc::cancelled, "the request was cancelled while the embeddings model loaded");
  }
  if (child.state() == engine::upstream_state::ready) co_return std::nullopt;
  co_return make_error(errc::upstream_unavailable, child.status_message());
}

}  // namespace

namespace {

json embed_body(std::vector<std::string> texts) { return json{{"input", std::move(texts)}}; }

result<std::vector<std::vector<float>>> read_vectors(const json& answer, std::size_t expected) {
  if (!answer.is_object()) return malformed_embeddings("not a JSON object");
  auto slots = upstream_vectors(answer, expected);
  if (!slots) return slots.error();
  std::vector<std::vector<float>> out;
  out.reserve(expected);
  for (const json* v : *slots) {
    std::vector<float> f;
    f.reserve(v->size());
    for (const auto& x : *v) f.push_back(x.get<float>());
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

asio::awaitable<result<std::vector<std::vector<float>>>> embed_texts(legacy_deps& deps, std::vector<std::string> texts) {
  const std::size_t n = texts.size();
  if (n == 0 || n > k_max_inputs) co_return make_error(errc::invalid_request, "1 to 2048 texts can be embedded at once");
  engine::chat_service& service = deps.embeddings ? *deps.embeddings : deps.chat;
  if (deps.embeddings_child) {
    const std::optional<error> not_ready = co_await wait_until_started(*deps.embeddings_child);
    if (not_ready) co_return *not_ready;
  }
  std::string path = "embeddings";
  json body = embed_body(std::move(texts));
  engine::route_hint route;  // named: no temporary inside co_await (GCC 12)
  auto answer = co_await service.post_path(std::move(path), std::move(body), std::move(route));
  if (!answer) co_return answer.error();
  co_return read_vectors(*answer, n);
}

asio::awaitable<void> handle_completions(const http_request& http, response_writer& out, legacy_deps& deps) {
  auto parsed = parse_completion_request(http.body);
  if (!parsed) {
    co_await wire::send_error(out, openai_surface(), parsed.error());
    co_return;
  }
  completion_request req = std::move(*parsed);
  std::string path = "completions";
  // A slot of the engine's admission queue first (engine/admission_queue.h), kept to the end.
  std::function<asio::awaitable<bool>()> ping = req.stream ? sse_keep_alive(out) : nullptr;
  auto slot = co_await take_slot(deps.admission, http, out, ping);
  if (!slot) {
    co_await fail_stream(out, slot.error());
    co_return;
  }
  if (req.stream) {
    engine::route_hint route;  // named: no temporary inside co_await (GCC 12)
    std::shared_ptr<cancel_token> no_cancel;
    auto opened = co_await deps.chat.open_stream_path(std::move(path), std::move(req.body), std::move(no_cancel), ping,
                                                      std::move(route));
    if (!opened) {
      co_await fail_stream(out, opened.error());
      co_return;
    }
    co_await forward_stream(std::move(*opened), req.include_usage, out, "completions");
    co_return;
  }
  req.body["stream"] = false;
  engine::route_hint route;  // named: no temporary inside co_await (GCC 12)
  auto done = co_await deps.chat.post_path(std::move(path), std::move(req.body), std::move(route));
  if (!done) {
    co_await wire::send_error(out, openai_surface(), done.error());
    co_return;
  }
  co_await out.send(200, "application/json", dump_safe(*done));
  co_return;
}

asio::awaitable<void> handle_embeddings(const http_request& http, response_writer& out, legacy_deps& deps) {
  auto parsed = parse_embedding_request(http.body);
  if (!parsed) {
    co_await wire::send_error(out, openai_surface(), parsed.error());
    co_return;
  }
  embedding_request req = std::move(*parsed);
  engine::chat_service& service = deps.embeddings ? *deps.embeddings : deps.chat;
  if (deps.embeddings_child) {
    const std::optional<error> not_ready = co_await wait_until_started(*deps.embeddings_child);
    if (not_ready) {
      if (not_ready->code != errc::cancelled) co_await wire::send_error(out, openai_surface(), *not_ready);
      co_return;
    }
  }
  std::string path = "embeddings";
  json body = std::move(req.body);
  engine::route_hint route;  // named: no temporary inside co_await (GCC 12)
  auto answer = co_await service.post_path(std::move(path), std::move(body), std::move(route));
  if (!answer) {
    co_await wire::send_error(out, openai_surface(), answer.error());
    co_return;
  }
  auto rendered = embedding_response(*answer, req, service.upstream().model_id());
  if (!rendered) {
    co_await wire::send_error(out, openai_surface(), rendered.error());
    co_return;
  }
  co_await out.send(200, "application/json", dump_safe(*rendered));
  co_return;
}

std::vector<route> legacy_routes(legacy_deps& deps) {
  const surface* s = &openai_surface();
  auto completions = [&deps](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    co_await handle_completions(req, out, deps);
  };
  auto embeddings = [&deps](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    co_await handle_embeddings(req, out, deps);
  };
  return {
      {"POST", "/v1/completions", false, auth_policy::api_key, s, completions},
      {"POST", "/v1/embeddings", false, auth_policy::api_key, s, embeddings},
  };
}

}  // namespace warden::api::openai
