#include "api/control/monitor.h"

#include <algorithm>
#include <chrono>

#include "api/control/routes.h"
#include "common/ids.h"
#include "common/utf8.h"

namespace warden::api::control {

namespace asio = boost::asio;

namespace {

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string str_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// The text of a message's content: a string, or the text parts of a list (OpenAI, Anthropic, Responses).
std::string content_text(const json& c) {
  if (c.is_string()) return c.get<std::string>();
  std::string out;
  if (!c.is_array()) return out;
  for (const auto& p : c) {
    if (!p.is_object()) continue;
    auto t = p.find("text");
    if (t != p.end() && t->is_string()) {
      if (!out.empty()) out += "\n";
      out += t->get<std::string>();
    }
  }
  return out;
}

/// The last user text of a model request body (messages, Responses input, legacy prompt).
std::string prompt_of(const json& body) {
  for (const char* list : {"messages", "input"}) {
    auto it = body.find(list);
    if (it == body.end()) continue;
    if (it->is_string()) return it->get<std::string>();
    if (!it->is_array()) continue;
    for (auto m = it->rbegin(); m != it->rend(); ++m) {
      if (m->is_object() && str_at(*m, "role") == "user") return content_text(m->value("content", json()));
    }
  }
  auto p = body.find("prompt");
  if (p != body.end()) {
    if (p->is_string()) return p->get<std::string>();
    if (p->is_array() && !p->empty() && p->front().is_string()) return p->front().get<std::string>();
  }
  return {};
}

/// {prompt_tokens, completion_tokens} from OpenAI's or Anthropic's names; null when neither.
json usage_of(const json& u) {
  if (!u.is_object()) return nullptr;
  auto num = [&u](const char* a, const char* b) -> json {
    for (const char* k : {a, b}) {
      auto it = u.find(k);
      if (it != u.end() && it->is_number_integer()) return *it;
    }
    return nullptr;
  };
  json out = {{"prompt_tokens", num("prompt_tokens", "input_tokens")},
              {"completion_tokens", num("completion_tokens", "output_tokens")}};
  if (out["prompt_tokens"].is_null() && out["completion_tokens"].is_null()) return nullptr;
  return out;
}

/// Copies the known numbers of `u` over `into` (an Anthropic stream gives input and output apart).
void merge_usage(json& into, const json& u) {
  json got = usage_of(u);
  if (got.is_null()) return;
  if (!into.is_object()) into = json{{"prompt_tokens", nullptr}, {"completion_tokens", nullptr}};
  for (const char* k : {"prompt_tokens", "completion_tokens"}) {
    if (!got[k].is_null()) into[k] = got[k];
  }
}

bool has_key(const json& j, const char* key) { return j.is_object() && j.contains(key); }

/// Where the value of `"name"` starts in `frame` (past the colon and any blanks), from `at` on;
/// npos when the name is not there.
std::size_t value_at(std::string_view frame, std::string_view quoted_name, std::size_t& at) {
  at = frame.find(quoted_name, at);
  if (at == std::string_view::npos) return at;
  std::size_t v = at + quoted_name.size();
  while (v < frame.size() && frame[v] == ' ') ++v;
  if (v >= frame.size() || frame[v] != ':') return v;
  ++v;
  while (v < frame.size() && frame[v] == ' ') ++v;
  return v;
}

/// `"name"` with a non-empty string value (or, with `opener` '[', a list) somewhere in `frame`.
bool has_value(std::string_view frame, std::string_view quoted_name, char opener = '"') {
  for (std::size_t at = 0;; ++at) {
    const std::size_t v = value_at(frame, quoted_name, at);
    if (at == std::string_view::npos) return false;
    if (v + 1 < frame.size() && frame[v] == opener && (opener != '"' || frame[v + 1] != '"')) return true;
  }
}

/// An SSE frame of any surface that carries a token (text, reasoning or a tool call): a substring
/// test, so a stream's frames are not parsed while it runs (the monitor's first-token time).
bool carries_token(std::string_view frame) {
  // Responses' first events echo the request (its metadata, instructions): never a token.
  for (std::string_view echo : {"\"response.created\"", "\"response.in_progress\"", "\"response.queued\""}) {
    if (frame.find(echo) != std::string_view::npos) return false;
  }
  for (std::string_view name : {"\"content\"", "\"reasoning_content\"", "\"text\"", "\"thinking\"",
                                "\"partial_json\"", "\"delta\""}) {
    if (has_value(frame, name)) return true;
  }
  return has_value(frame, "\"tool_calls\"", '[');
}

}  // namespace

struct api_monitor::entry {
  std::string id;
  std::string endpoint;
  std::string method;
  std::string model;
  std::string engine = "local";  ///< "local" (warden's engine or pool) or "provider:<id or type>"
  std::string owner;
  bool via_api_key = false;
  bool stream = false;
  std::string status = "active";
  int http_status = 0;
  std::int64_t started_at = 0;
  std::int64_t updated_at = 0;
  std::optional<std::int64_t> first_token_ms;
  std::optional<std::int64_t> duration_ms;
  json usage = nullptr;
  std::string stop_reason;
  std::string error;
  std::string prompt;
  std::string reply;
  std::string pending;  ///< a stream's bytes not yet ending a frame
  /// The answer not yet read into the fields above: whole SSE frames ("…\n\n"), or a whole JSON
  /// body (`raw_is_body`). Read when the entry is shown, or when it passes k_raw_batch bytes, so a
  /// request pays for no JSON parse of its answer (api_monitor::digest).
  std::string raw;
  bool raw_is_body = false;
  std::size_t reply_chars = 0;
  bool reply_full = false;
};

api_monitor::api_monitor(monitor_options o) : opt_(std::move(o)) {}
api_monitor::~api_monitor() = default;

std::shared_ptr<api_monitor::entry> api_monitor::begin(const http_request& req) {
  if (!opt_.enabled) return nullptr;
  auto e = std::make_shared<entry>();
  e->id = "mon_" + ids::random_hex(12);
  e->endpoint = req.path;
  e->method = req.method;
  e->owner = req.caller.name;
  e->via_api_key = !req.header("authorization").empty() || !req.header("x-api-key").empty();
  e->started_at = e->updated_at = unix_ms();
  if (auto body = parse_json(req.body); body && body->is_object()) {
    e->model = str_at(*body, "model");
    auto flag = [&body](const char* k) {
      auto it = body->find(k);
      return it != body->end() && it->is_boolean() && it->get<bool>();
    };
    e->stream = flag("stream") || flag("background");
    // An external provider (api/wire/provider_fields.h), else warden's own engine(s).
    const std::string provider = !str_at(*body, "provider_id").empty() ? str_at(*body, "provider_id")
                                                                         : str_at(*body, "provider_type");
    e->engine = provider.empty() ? "local" : "provider:" + provider;
    // Redacted when shown (shown()); kept a margin past the cap so a secret cut there is whole.
    e->prompt = std::string(utf8_prefix(prompt_of(*body), opt_.max_text + k_redact_margin));
  }
  std::lock_guard lock(mu_);
  ring_.push_back(e);
  while (ring_.size() > opt_.capacity) ring_.pop_front();
  return e;
}

void api_monitor::touch(entry& e) { e.updated_at = unix_ms(); }

void api_monitor::on_status(entry& e, int status) {
  std::lock_guard lock(mu_);
  e.http_status = status;
  touch(e);
}

void api_monitor::add_reply(entry& e, std::string_view text) const {
  if (e.reply_full || text.empty()) return;
  e.reply += text;
  e.reply_chars += utf8_length(text);
  // Kept past the cap by a margin, so a secret that straddles the cut is still whole when the
  // text is redacted (shown()).
  if (e.reply_chars >= opt_.max_text + k_redact_margin) {
    e.reply = std::string(utf8_prefix(e.reply, opt_.max_text + k_redact_margin));
    e.reply_full = true;
  }
}

std::string api_monitor::shown(std::string_view text, std::size_t chars) const {
  const std::string_view head = utf8_prefix(text, chars + k_redact_margin);
  const std::string clean = opt_.redact ? opt_.redact(head) : std::string(head);
  return std::string(utf8_prefix(clean, chars));
}

void api_monitor::on_body(entry& e, std::string_view body) {
  std::lock_guard lock(mu_);
  touch(e);
  if (e.http_status < 400 && !e.first_token_ms) e.first_token_ms = unix_ms() - e.started_at;
  e.raw.assign(body);
  e.raw_is_body = true;
  if (e.raw.size() > k_raw_batch) digest(e);
}

void api_monitor::take_body(entry& e, std::string_view body) const {
  auto j = parse_json(body);
  if (!j || !j->is_object()) return;
  if (auto err = j->find("error"); err != j->end() && err->is_object()) {
    e.error = str_at(*err, "message");
    return;
  }
  merge_usage(e.usage, j->value("usage", json()));
  if (auto ch = j->find("choices"); ch != j->end() && ch->is_array() && !ch->empty() && ch->front().is_object()) {
    const json& c = ch->front();
    const json msg = c.value("message", json::object());
    add_reply(e, msg.is_object() ? str_at(msg, "content") : std::string());
    add_reply(e, str_at(c, "text"));  // legacy completions
    e.stop_reason = str_at(c, "finish_reason");
    return;
  }
  if (has_key(*j, "stop_reason")) {  // Anthropic
    add_reply(e, content_text(j->value("content", json())));
    e.stop_reason = str_at(*j, "stop_reason");
    return;
  }
  if (str_at(*j, "object") == "response") {  // Responses
    for (const auto& item : j->value("output", json::array())) {
      if (item.is_object() && str_at(item, "type") == "message") add_reply(e, content_text(item.value("content", json())));
    }
    e.stop_reason = str_at(*j, "status");
  }
}

void api_monitor::digest(entry& e) const {
  if (e.raw_is_body) {
    take_body(e, e.raw);
  } else {
    std::string_view rest = e.raw;
    for (std::size_t end; (end = rest.find("\n\n")) != std::string_view::npos; rest.remove_prefix(end + 2)) {
      take_frame(e, rest.substr(0, end));
    }
  }
  e.raw.clear();
  e.raw.shrink_to_fit();
  e.raw_is_body = false;
}

const api_monitor::entry& api_monitor::settled(entry& e, entry& scratch) const {
  if (e.raw.empty()) return e;
  if (e.status != "active") {  // ended: read once, for good
    digest(e);
    return e;
  }
  scratch = e;  // running: shown as read so far, the entry itself left to take more
  digest(scratch);
  return scratch;
}

void api_monitor::take_event(entry& e, const json& j) const {
  if (auto err = j.find("error"); err != j.end()) {
    e.error = err->is_object() ? str_at(*err, "message") : err->is_string() ? err->get<std::string>() : "error";
    return;
  }
  merge_usage(e.usage, j.value("usage", json()));
  if (auto ch = j.find("choices"); ch != j.end() && ch->is_array() && !ch->empty() && ch->front().is_object()) {
    const json& c = ch->front();
    const json d = c.value("delta", json::object());
    if (d.is_object()) add_reply(e, str_at(d, "content"));
    if (!str_at(c, "text").empty()) add_reply(e, str_at(c, "text"));  // legacy completions
    if (!str_at(c, "finish_reason").empty()) e.stop_reason = str_at(c, "finish_reason");
    return;
  }
  const std::string type = str_at(j, "type");
  if (type == "content_block_delta") {
    const json d = j.value("delta", json::object());
    add_reply(e, str_at(d, "text"));
  } else if (type == "message_start") {
    merge_usage(e.usage, j.value("message", json::object()).value("usage", json()));
  } else if (type == "message_delta") {
    e.stop_reason = str_at(j.value("delta", json::object()), "stop_reason");
  } else if (type == "response.output_text.delta") {
    add_reply(e, str_at(j, "delta"));
  } else if (type == "response.completed" || type == "response.incomplete" || type == "response.failed") {
    const json r = j.value("response", json::object());
    merge_usage(e.usage, r.value("usage", json()));
    e.stop_reason = str_at(r, "status");
    if (auto err = r.find("error"); err != r.end() && err->is_object()) e.error = str_at(*err, "message");
  }
}

void api_monitor::take_frame(entry& e, std::string_view frame) const {
  std::string data;
  std::size_t at = 0;
  while (at < frame.size()) {
    std::size_t nl = frame.find('\n', at);
    std::string_view line = frame.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? frame.size() : nl + 1;
    if (line.rfind("data:", 0) != 0) continue;
    line.remove_prefix(5);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!data.empty()) data += '\n';
    data += line;
  }
  if (data.empty() || data == "[DONE]") return;
  auto j = parse_json(data);
  if (j && j->is_object()) take_event(e, *j);
}

void api_monitor::on_stream(entry& e, std::string_view bytes) {
  constexpr std::size_t k_max_pending = 1 << 20;  // a frame past this is not read (it is still sent)
  std::lock_guard lock(mu_);
  touch(e);
  e.pending.append(bytes);
  std::string_view rest = e.pending;
  for (std::size_t end; (end = rest.find("\n\n")) != std::string_view::npos; rest.remove_prefix(end + 2)) {
    const std::string_view frame = rest.substr(0, end);
    if (!e.first_token_ms && carries_token(frame)) e.first_token_ms = unix_ms() - e.started_at;
    if (frame.find("\"error\"") != std::string_view::npos) {
      digest(e);  // what came before it first, in order
      take_frame(e, frame);  // now: the entry's end (finish) needs it
    } else {
      e.raw.append(frame).append("\n\n");
    }
  }
  e.pending.erase(0, e.pending.size() - rest.size());
  if (e.pending.size() > k_max_pending) e.pending.clear();
  if (e.raw.size() > k_raw_batch) digest(e);
}

void api_monitor::finish(entry& e, bool client_gone) {
  std::lock_guard lock(mu_);
  e.pending.clear();
  const std::int64_t now = unix_ms();
  e.duration_ms = now - e.started_at;
  e.updated_at = now;
  if (!e.error.empty() || e.http_status >= 400) {
    e.status = "error";
    if (e.error.empty()) e.error = "HTTP " + std::to_string(e.http_status);
  } else if (client_gone) {
    e.status = "cancelled";
  } else {
    e.status = "done";
  }
}

json api_monitor::to_json(const entry& e, bool full) const {
  auto opt_num = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); };
  auto or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  json j = {{"id", e.id},
            {"object", "monitor.entry"},
            {"endpoint", e.endpoint},
            {"method", e.method},
            {"model", or_null(e.model)},
            {"engine", e.engine},
            {"owner", e.owner},
            {"via_api_key", e.via_api_key},
            {"stream", e.stream},
            {"status", e.status},
            {"http_status", e.http_status == 0 ? json(nullptr) : json(e.http_status)},
            {"started_at", e.started_at},
            {"updated_at", e.updated_at},
            {"first_token_ms", opt_num(e.first_token_ms)},
            {"duration_ms", opt_num(e.duration_ms)},
            {"usage", e.usage},
            {"stop_reason", or_null(e.stop_reason)},
            {"error", or_null(shown(e.error, opt_.max_text))},
            {"prompt_preview", shown(e.prompt, opt_.preview)},
            {"reply_preview", shown(e.reply, opt_.preview)}};
  if (full) {
    j["prompt"] = shown(e.prompt, opt_.max_text);
    j["reply"] = shown(e.reply, opt_.max_text);
  }
  return j;
}

json api_monitor::list(const principal& who) const {
  const engine_view v = opt_.engine ? opt_.engine() : engine_view{};
  json entries = json::array();
  std::size_t active = 0;
  {
    std::lock_guard lock(mu_);
    for (auto it = ring_.rbegin(); it != ring_.rend(); ++it) {
      if (!who.may_access((*it)->owner)) continue;
      if ((*it)->status == "active") ++active;
      entry scratch;
      entries.push_back(to_json(settled(**it, scratch), false));
    }
  }
  const char* status = active > 0 ? "generating" : v.ready ? "ready" : "idle";
  const double now_s = static_cast<double>(unix_ms()) / 1000.0;
  return {{"object", "monitor"},
          {"status", status},
          {"server_time", now_s},
          {"active_model", v.active_model.empty() ? json(nullptr) : json(v.active_model)},
          {"context_length", v.context_length > 0 ? json(v.context_length) : json(nullptr)},
          {"active_requests", active},
          {"queue", v.queue},
          {"logging_enabled", opt_.enabled},
          {"entries", std::move(entries)}};
}

std::optional<json> api_monitor::find(const principal& who, std::string_view id) const {
  std::lock_guard lock(mu_);
  for (const auto& e : ring_) {
    if (e->id != id || !who.may_access(e->owner)) continue;
    entry scratch;
    return to_json(settled(*e, scratch), true);
  }
  return std::nullopt;
}

std::size_t api_monitor::clear(const principal& who) {
  std::lock_guard lock(mu_);
  const std::size_t before = ring_.size();
  std::erase_if(ring_, [&who](const auto& e) { return e->status != "active" && who.may_access(e->owner); });
  return before - ring_.size();
}

int api_monitor::remove(const principal& who, std::string_view id) {
  std::lock_guard lock(mu_);
  for (auto it = ring_.begin(); it != ring_.end(); ++it) {
    if ((*it)->id != id || !who.may_access((*it)->owner)) continue;
    if ((*it)->status == "active") return 2;
    ring_.erase(it);
    return 0;
  }
  return 1;
}

namespace {

/// Forwards everything to the real writer and tells the monitor what went out.
class monitor_writer final : public response_writer {
 public:
  monitor_writer(response_writer& inner, api_monitor& m, api_monitor::entry& e) : inner_(inner), m_(m), e_(e) {}
  asio::awaitable<bool> send(int status, std::string content_type, std::string body) override {
    m_.on_status(e_, status);
    m_.on_body(e_, body);
    // A whole answer handed to the socket counts as answered, even if its client closed at once.
    const bool ok = co_await inner_.send(status, std::move(content_type), std::move(body));
    co_return ok;
  }
  asio::awaitable<bool> begin_stream() override {
    m_.on_status(e_, 200);
    const bool ok = co_await inner_.begin_stream();
    if (!ok) gone_ = true;
    co_return ok;
  }
  asio::awaitable<bool> write_stream(std::string bytes) override {
    m_.on_stream(e_, bytes);
    const bool ok = co_await inner_.write_stream(std::move(bytes));
    if (!ok) gone_ = true;
    co_return ok;
  }
  asio::awaitable<bool> end_stream() override {
    ended_ = true;
    const bool ok = co_await inner_.end_stream();
    co_return ok;
  }
  bool started() const override { return inner_.started(); }
  void add_header(std::string name, std::string value) override { inner_.add_header(std::move(name), std::move(value)); }
  /// A stream that broke before its end (a write failed).
  bool gone() const { return gone_ && !ended_; }

 private:
  response_writer& inner_;
  api_monitor& m_;
  api_monitor::entry& e_;
  bool gone_ = false;
  bool ended_ = false;
};

/// Ends the entry however the handler leaves: a return, or its frame destroyed when the server
/// cancels it (the client went away), which counts as cancelled.
struct finisher {
  api_monitor& m;
  api_monitor::entry& e;
  const monitor_writer& w;
  bool returned = false;
  ~finisher() { m.finish(e, !returned || w.gone()); }
};

}  // namespace

route_handler monitored(route_handler inner, api_monitor& m) {
  return [inner = std::move(inner), &m](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    std::shared_ptr<api_monitor::entry> e = m.begin(req);
    if (!e) {
      co_await inner(req, out);
      co_return;
    }
    monitor_writer w(out, m, *e);
    finisher done{m, *e, w};
    co_await inner(req, w);
    done.returned = true;
  };
}

namespace {

constexpr std::string_view k_prefix = "/api/inference/monitor";

std::string id_of(const http_request& req) {
  if (req.path.size() <= k_prefix.size() + 1) return {};
  return req.path.substr(k_prefix.size() + 1);
}

asio::awaitable<void> get_monitor(const http_request& req, response_writer& out, api_monitor& m) {
  const std::string id = id_of(req);
  if (id.empty()) {
    std::string body = dump_safe(m.list(req.caller));
    co_await out.send(200, "application/json", std::move(body));
    co_return;
  }
  auto found = m.find(req.caller, id);
  if (!found) {
    const error e = make_error(errc::not_found, "no monitor entry '" + id + "'", "id", "not_found");
    co_await wire::send_error(out, control_surface(), e);
    co_return;
  }
  co_await out.send(200, "application/json", dump_safe(*found));
}

asio::awaitable<void> delete_monitor(const http_request& req, response_writer& out, api_monitor& m) {
  const std::string id = id_of(req);
  if (id.empty()) {
    const std::size_t n = m.clear(req.caller);
    json done = {{"object", "monitor.deleted"}, {"deleted", n}};  // named: no temporaries in a co_await (GCC 12)
    co_await out.send(200, "application/json", dump_safe(done));
    co_return;
  }
  const int r = m.remove(req.caller, id);
  if (r == 0) {
    json done = {{"id", id}, {"deleted", true}};
    co_await out.send(200, "application/json", dump_safe(done));
    co_return;
  }
  const error e = r == 2 ? make_error(errc::conflict, "monitor entry '" + id + "' is still active", "id", "active")
                         : make_error(errc::not_found, "no monitor entry '" + id + "'", "id", "not_found");
  co_await wire::send_error(out, control_surface(), e);
}

}  // namespace

std::vector<route> monitor_routes(api_monitor& m) {
  const surface* s = &control_surface();
  auto bind = [&m](auto fn) {
    return [&m, fn](const http_request& req, response_writer& out) { return fn(req, out, m); };
  };
  return {
      {"GET", "/api/inference/monitor", false, auth_policy::api_key, s, bind(&get_monitor)},
      {"DELETE", "/api/inference/monitor", false, auth_policy::api_key, s, bind(&delete_monitor)},
      {"GET", "/api/inference/monitor/", true, auth_policy::api_key, s, bind(&get_monitor)},
      {"DELETE", "/api/inference/monitor/", true, auth_policy::api_key, s, bind(&delete_monitor)},
  };
}

}  // namespace warden::api::control
