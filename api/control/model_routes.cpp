#include "api/control/model_routes.h"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <regex>

#include "api/control/extensions.h"
#include "api/control/routes.h"
#include "common/json_util.h"
#include "engine/http_client.h"
#include "engine/llama_devices.h"

namespace warden::api::control {

namespace {

namespace asio = boost::asio;
using engine::host_phase;
using engine::host_status;
using engine::library_model;
using engine::model_host;
using engine::model_spec;

constexpr std::string_view k_models_prefix = "/api/models/";
constexpr int k_min_ctx = 256;
constexpr int k_max_ctx = 16777216;  // 16 Mi tokens: past any model's trained context
constexpr int k_max_slots = 64;
constexpr std::chrono::milliseconds k_progress_poll{100};
constexpr std::chrono::milliseconds k_keepalive{5000};
constexpr std::chrono::milliseconds k_pull_poll{250};

asio::awaitable<void> fail(response_writer& out, error e) { co_await wire::send_error(out, control_surface(), e); }

error admin_only() {
  return make_error(errc::forbidden, "only the single user or an admin key may load, unload or delete models", "",
                    "admin_only");
}
error no_local_model() {
  return make_error(errc::upstream_unavailable,
                    "warden serves a remote --upstream: there is no local model to load, unload or inspect");
}
error model_not_found(const std::string& id) {
  return make_error(errc::not_found, "no model with id '" + id + "' in the library (GET /api/models lists them)", "model",
                    "model_not_found");
}

json status_error_json(const std::optional<error>& e) {
  if (!e) return nullptr;
  return {{"message", e->message}, {"code", e->type_code.empty() ? nullptr : json(e->type_code)}};
}

/// The llama-server binary's backend and devices (--list-devices, cached) and, from the child's
/// log, how many layers it offloaded ("31/31"; null on a CPU build).
void add_devices(json& j, const model_deps& deps) {
  if (deps.llama_server_binary.empty()) return;
  const engine::llama_devices d = engine::probe_llama_devices(deps.llama_server_binary);
  j["backend"] = d.backend;
  for (const auto& dev : d.devices) {
    j["devices"].push_back({{"name", dev.name}, {"description", dev.description}, {"total_mib", dev.total_mib},
                            {"free_mib", dev.free_mib}});
  }
  if (deps.chat) {
    const std::string offload = deps.chat->caps().gpu_offload;
    if (!offload.empty()) j["gpu_offload"] = offload;
  }
}

}  // namespace

std::optional<std::int64_t> slot_context(const host_status& s) {
  if (s.base_url.empty() || s.phase != host_phase::ready) return std::nullopt;
  const auto props = engine::http_client::get_blocking(s.base_url + "/props", s.headers, 2000);
  if (!props || props->status != 200) return std::nullopt;
  auto p = parse_json(props->body);
  if (!p || !p->is_object()) return std::nullopt;
  const json dgs = p->value("default_generation_settings", json::object());
  if (!dgs.is_object() || !dgs.contains("n_ctx") || !dgs["n_ctx"].is_number_integer()) return std::nullopt;
  return dgs["n_ctx"].get<std::int64_t>();
}

std::vector<engine::model_host*> model_deps::hosts() const {
  std::vector<engine::model_host*> out;
  if (chat) out.push_back(chat);
  for (const named_host& r : replicas) out.push_back(r.host);
  if (embeddings) out.push_back(embeddings);
  return out;
}

namespace {

/// GET <base>/props and /slots of the child (blocking): per-slot context, slots, build.
void add_props(json& j, const host_status& s) {
  if (s.base_url.empty()) return;
  const auto props = engine::http_client::get_blocking(s.base_url + "/props", s.headers, 2000);
  if (props && props->status == 200) {
    auto p = parse_json(props->body);
    if (p && p->is_object()) {
      const json dgs = p->value("default_generation_settings", json::object());
      if (dgs.is_object() && dgs.contains("n_ctx")) j["n_ctx_slot"] = dgs["n_ctx"];
      if (p->contains("total_slots")) j["slots_total"] = (*p)["total_slots"];
      if (p->contains("build_info")) j["llama_cpp_build"] = (*p)["build_info"];
    }
  }
  const auto slots = engine::http_client::get_blocking(s.base_url + "/slots", s.headers, 2000);
  if (slots && slots->status == 200) {
    auto arr = parse_json(slots->body);
    if (arr && arr->is_array()) {
      int busy = 0;
      for (const auto& slot : *arr) busy += slot.is_object() && slot.value("is_processing", false) ? 1 : 0;
      j["slots_busy"] = busy;
    }
  }
}

/// Status's "replicas": each chat child (`chat` is the first's status, already read).
json replicas_json(const model_deps& deps, const host_status& chat) {
  auto one = [](const std::string& name, const host_status& s) {
    return json{{"name", name},
                {"state", engine::to_string(s.phase)},
                {"model", s.spec ? json(s.spec->model_id) : json(nullptr)},
                {"context_length", s.spec ? json(s.spec->ctx_tokens) : json(nullptr)},
                {"message", s.message},
                {"restarts", s.restarts},
                {"last_failure", status_error_json(s.last_failure)},
                {"in_flight", s.in_flight}};
  };
  json out = json::array({one("chat", chat)});  // its status was read already
  for (const named_host& r : deps.replicas) out.push_back(one(r.name, r.host->status()));
  return out;
}

json status_json(const model_deps& deps) {
  const host_status s = deps.chat->status();
  const bool has_model = s.spec && (s.phase != host_phase::unloaded || s.loads_on_use);
  json j = {{"model", has_model ? json(s.spec->model_id) : json(nullptr)},
            {"state", engine::to_string(s.phase)},
            {"message", s.message},
            {"context_length", s.spec ? json(s.spec->ctx_tokens) : json(nullptr)},
            {"parallel", s.spec ? json(s.spec->parallel_slots) : json(nullptr)},
            {"n_ctx_slot", nullptr},
            {"slots_total", nullptr},
            {"slots_busy", nullptr},
            {"llama_cpp_build", nullptr},
            {"backend", nullptr},
            {"devices", json::array()},
            {"gpu_offload", nullptr},
            {"restarts", s.restarts},
            {"last_failure", status_error_json(s.last_failure)},
            {"warnings", s.warnings},
            {"in_flight", s.in_flight},
            {"loads_on_use", s.loads_on_use},
            {"embeddings", nullptr}};
  add_props(j, s);
  add_devices(j, deps);
  if (j["n_ctx_slot"].is_number_integer() && s.spec && j["n_ctx_slot"].get<long long>() < s.spec->ctx_tokens) {
    j["warnings"].push_back("llama-server caps each slot at " + std::to_string(j["n_ctx_slot"].get<long long>()) +
                            " tokens (the model's training context), below the " +
                            std::to_string(s.spec->ctx_tokens) +
                            " asked; load with rope_scaling \"yarn\" and yarn_orig_ctx to extend it");
  }
  if (s.spec && deps.library) {
    if (auto m = deps.library->find(s.spec->model_id)) j["capabilities"] = model_json(*m, true)["capabilities"];
  }
  if (deps.embeddings) {
    const host_status e = deps.embeddings->status();
    j["embeddings"] = {{"state", engine::to_string(e.phase)},
                       {"model", e.spec ? json(e.spec->model_id) : json(nullptr)},
                       {"message", e.message},
                       {"restarts", e.restarts}};
  }
  if (!deps.replicas.empty()) j["replicas"] = replicas_json(deps, s);
  return j;
}

bool loaded(const model_deps& deps, const library_model& m) {
  for (const model_host* h : deps.hosts()) {
    const host_status s = h->status();
    if ((s.phase == host_phase::ready || s.phase == host_phase::restarting) && s.spec && s.spec->model_id == m.id) {
      return true;
    }
  }
  return false;
}

bool in_use(const model_deps& deps, const library_model& m) {
  for (const model_host* h : deps.hosts()) {
    if (h->path_in_use() == m.path) return true;
    const host_status s = h->status();
    if (s.loads_on_use && s.spec && s.spec->model_path == m.path) return true;
  }
  return false;
}

/// The integer field `name` of `body` in [lo, hi], or `fallback` when absent.
result<int> int_field(const json& body, const char* name, int lo, int hi, int fallback) {
  if (!body.contains(name) || body[name].is_null()) return fallback;
  const json& v = body[name];
  if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi) {
    return make_error(errc::invalid_request,
                      std::string(name) + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi),
                      name, "invalid_value");
  }
  return static_cast<int>(v.get<long long>());
}

result<void> check_known_fields(const json& body) {
  static const std::vector<std::string> known = {"model",        "ctx",        "parallel",      "gpu_layers",
                                                 "rope_scaling", "rope_scale", "yarn_orig_ctx", "llama_extra_args",
                                                 "stream",       "tensor_split", "device",     "fit"};
  for (const auto& [k, v] : body.items()) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      return make_error(errc::invalid_request, "unknown field '" + k + "' (known: model, ctx, parallel, gpu_layers, "
                        "rope_scaling, rope_scale, yarn_orig_ctx, tensor_split, device, fit, llama_extra_args, stream)", k,
                        "unknown_field");
    }
  }
  return {};
}

/// GPU placement (reference §5.2) as llama-server flags: tensor_split (an array of numbers ≥ 0,
/// or their comma-separated text) → --tensor-split, device ("CUDA0,CUDA1", "none") → --device,
/// fit (true/false or "on"/"off") → --fit.
result<std::vector<std::string>> placement_args(const json& body) {
  std::vector<std::string> args;
  if (auto it = body.find("tensor_split"); it != body.end() && !it->is_null()) {
    static const std::regex split(R"(^\d+(\.\d+)?(,\d+(\.\d+)?){0,15}$)");
    std::string text;
    if (it->is_array() && !it->empty() && it->size() <= 16) {
      for (const auto& n : *it) {
        if (!n.is_number() || n.get<double>() < 0) return make_error(errc::invalid_request, "tensor_split must be up to 16 numbers, each at least 0", "tensor_split", "invalid_value");
        text += (text.empty() ? "" : ",") + dump_safe(n);
      }
    } else if (it->is_string()) {
      text = it->get<std::string>();
    }
    if (!std::regex_match(text, split)) {
      return make_error(errc::invalid_request, "tensor_split must be up to 16 numbers, each at least 0 (e.g. [3, 1] or \"3,1\")", "tensor_split", "invalid_value");
    }
    args.insert(args.end(), {"--tensor-split", text});
  }
  if (auto it = body.find("device"); it != body.end() && !it->is_null()) {
    static const std::regex dev(R"(^[A-Za-z0-9_.:-]{1,64}(,[A-Za-z0-9_.:-]{1,64}){0,15}$)");
    if (!it->is_string() || !std::regex_match(it->get<std::string>(), dev)) {
      return make_error(errc::invalid_request, "device must be llama-server device names, comma-separated (e.g. \"CUDA0\"; `llama-server --list-devices`), or \"none\"", "device", "invalid_value");
    }
    args.insert(args.end(), {"--device", it->get<std::string>()});
  }
  if (auto it = body.find("fit"); it != body.end() && !it->is_null()) {
    if (it->is_boolean()) args.insert(args.end(), {"--fit", it->get<bool>() ? "on" : "off"});
    else if (it->is_string() && (*it == "on" || *it == "off")) args.insert(args.end(), {"--fit", it->get<std::string>()});
    else return make_error(errc::invalid_request, "fit must be true, false, \"on\" or \"off\"", "fit", "invalid_value");
  }
  return args;
}

result<std::vector<std::string>> extra_args_field(const json& body) {
  std::vector<std::string> args;
  if (!body.contains("llama_extra_args") || body["llama_extra_args"].is_null()) return args;
  const json& v = body["llama_extra_args"];
  if (!v.is_array()) return make_error(errc::invalid_request, "llama_extra_args must be an array of strings", "llama_extra_args", "invalid_type");
  for (const auto& a : v) {
    if (!a.is_string()) return make_error(errc::invalid_request, "llama_extra_args must be an array of strings", "llama_extra_args", "invalid_type");
    args.push_back(a.get<std::string>());
  }
  if (std::string why = engine::check_extra_args(args); !why.empty()) {
    return make_error(errc::invalid_request, why, "llama_extra_args", "managed_flag");
  }
  return args;
}

/// The load request's spec (the model still to be found in the library).
result<model_spec> parse_load(const json& body, const model_deps& deps) {
  if (auto known = check_known_fields(body); !known) return known.error();
  if (!body.contains("model") || !body["model"].is_string() || body["model"].get<std::string>().empty()) {
    return make_error(errc::invalid_request, "model (a model id from GET /api/models) is required", "model", "missing_field");
  }
  model_spec spec = deps.defaults;
  spec.model_id = body["model"].get<std::string>();
  auto ctx = int_field(body, "ctx", k_min_ctx, k_max_ctx, deps.defaults.ctx_tokens);
  if (!ctx) return ctx.error();
  auto slots = int_field(body, "parallel", 1, k_max_slots, deps.defaults.parallel_slots);
  if (!slots) return slots.error();
  auto gpu = int_field(body, "gpu_layers", 0, 100000, -1);
  if (!gpu) return gpu.error();
  auto yarn = int_field(body, "yarn_orig_ctx", 0, k_max_ctx, 0);
  if (!yarn) return yarn.error();
  spec.ctx_tokens = *ctx;
  spec.parallel_slots = *slots;
  if (*gpu >= 0) spec.gpu_layers = *gpu;
  spec.yarn_orig_ctx = *yarn;
  if (body.contains("rope_scaling") && !body["rope_scaling"].is_null()) {
    const json& r = body["rope_scaling"];
    if (!r.is_string() || (r != "none" && r != "linear" && r != "yarn")) {
      return make_error(errc::invalid_request, "rope_scaling must be \"none\", \"linear\" or \"yarn\"", "rope_scaling", "invalid_value");
    }
    spec.rope_scaling = r.get<std::string>();
  }
  if (body.contains("rope_scale") && !body["rope_scale"].is_null()) {
    const json& r = body["rope_scale"];
    if (!r.is_number() || r.get<double>() <= 0 || r.get<double>() > 64) {
      return make_error(errc::invalid_request, "rope_scale must be a number above 0 and at most 64", "rope_scale", "invalid_value");
    }
    spec.rope_scale = r.get<double>();
  }
  auto extra = extra_args_field(body);
  if (!extra) return extra.error();
  auto placement = placement_args(body);
  if (!placement) return placement.error();
  spec.extra_args = std::move(*placement);
  spec.extra_args.insert(spec.extra_args.end(), extra->begin(), extra->end());
  if (body.contains("stream") && !body["stream"].is_boolean()) {
    return make_error(errc::invalid_request, "stream must be true or false", "stream", "invalid_type");
  }
  return spec;
}

/// What a streamed load shares between the keeper's progress calls and the writing coroutine.
struct load_watch {
  std::mutex mu;
  std::vector<std::string> lines;
  std::optional<result<host_status>> outcome;
  json status;  ///< status_json() as the load left it (read in its sequence)
};

asio::awaitable<bool> send_frame(response_writer& out, std::string_view event, const json& data) {
  std::string frame = "event: " + std::string(event) + "\ndata: " + dump_safe(data) + "\n\n";
  co_return co_await out.write_stream(std::move(frame));
}

/// Streams a load that runs on the pool: progress frames, keep-alives, then done or error.
asio::awaitable<void> stream_load(response_writer& out, std::shared_ptr<load_watch> w) {
  if (!co_await out.begin_stream()) co_return;
  const auto t0 = std::chrono::steady_clock::now();
  auto last_sent = t0;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  std::size_t sent = 0;
  while (true) {
    std::vector<std::string> fresh;
    std::optional<result<host_status>> outcome;
    {
      std::lock_guard lock(w->mu);
      fresh.assign(w->lines.begin() + static_cast<std::ptrdiff_t>(sent), w->lines.end());
      sent = w->lines.size();
      outcome = w->outcome;
    }
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    for (const auto& line : fresh) {
      const json data = {{"message", line}, {"elapsed_ms", elapsed.count()}};
      if (!co_await send_frame(out, "progress", data)) co_return;  // the load goes on without the client
      last_sent = std::chrono::steady_clock::now();
    }
    if (outcome) break;
    if (std::chrono::steady_clock::now() - last_sent >= k_keepalive) {
      if (!co_await out.write_stream(": loading\n\n")) co_return;
      last_sent = std::chrono::steady_clock::now();
    }
    timer.expires_after(k_progress_poll);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
  }
  co_return;
}

}  // namespace

json pull_json(const engine::pull_status& s) {
  json j = {{"id", s.id},
            {"object", "model.pull"},
            {"model", s.model},
            {"url", s.url},
            {"state", engine::to_string(s.state)},
            {"downloaded_bytes", s.downloaded_bytes},
            {"total_bytes", s.total_bytes},
            {"bytes_per_s", static_cast<std::uint64_t>(s.bytes_per_s)},
            {"resumed", s.resumed},
            {"sha256", s.sha256.empty() ? json(nullptr) : json(s.sha256)}};
  if (s.state == engine::pull_state::done) j["size_bytes"] = s.downloaded_bytes;
  if (s.failure) j["error"] = {{"message", s.failure->message}, {"code", s.failure->type_code}};
  return j;
}

json model_json(const library_model& m, bool is_loaded) {
  json j = {{"id", m.id},           {"object", "model"},          {"created", m.modified_at},
            {"owned_by", "warden"}, {"loaded", is_loaded},        {"size_bytes", m.size_bytes},
            {"modified_at", m.modified_at}};
  const bool chat = m.info && m.info->has_chat_template;
  j["architecture"] = m.info ? json(m.info->architecture) : json(nullptr);
  j["name"] = m.info && !m.info->name.empty() ? json(m.info->name) : json(nullptr);
  j["context_length"] = m.info && m.info->context_length > 0 ? json(m.info->context_length) : json(nullptr);
  j["quantization"] = m.info && !m.info->quantization.empty() ? json(m.info->quantization) : json(nullptr);
  j["parameters"] = m.info && !m.info->parameters.empty() ? json(m.info->parameters) : json(nullptr);
  // tools: the template renders tools (llama-server then parses calls itself); warden forces and
  // heals calls for any chat model either way (docs/api/openai.md)
  j["capabilities"] = {{"chat", chat && !m.info->embedding_model},
                       {"tools", m.info && m.info->has_tool_template},
                       {"vision", m.has_projector},
                       {"embedding", m.info.has_value()}};
  if (!m.error.empty()) j["error"] = m.error;
  return j;
}

namespace {

asio::awaitable<void> list_models(response_writer& out, model_deps& deps) {
  auto listed = [&deps] {
    json data = json::array();
    for (const auto& m : deps.library->list()) data.push_back(model_json(m, loaded(deps, m)));
    return json{{"object", "list"}, {"data", std::move(data)}};
  };
  json body = co_await deps.pool->run_blocking(listed);
  co_await out.send(200, "application/json", dump_safe(body));
}

asio::awaitable<void> one_model(const http_request& req, response_writer& out, model_deps& deps) {
  const std::string id = req.path.substr(k_models_prefix.size());
  auto look = [&deps, id] { return deps.library->find(id); };
  std::optional<library_model> m = co_await deps.pool->run_blocking(look);
  if (!m) co_return co_await fail(out, model_not_found(id));
  if (req.method == "GET" || req.method == "HEAD") {
    co_await out.send(200, "application/json", dump_safe(model_json(*m, loaded(deps, *m))));
    co_return;
  }
  if (!req.caller.admin()) co_return co_await fail(out, admin_only());
  if (in_use(deps, *m)) {
    error busy = make_error(errc::conflict, "model '" + id + "' is loaded; unload it (or load another) first", "",
                            "model_in_use");
    co_return co_await fail(out, std::move(busy));
  }
  auto rm = [&deps, id] { return deps.library->remove(id); };
  result<void> removed = co_await deps.pool->run_blocking(rm);
  if (!removed) co_return co_await fail(out, removed.error());
  std::string gone = dump_safe(json{{"id", id}, {"object", "model"}, {"deleted", true}});
  co_await out.send(200, "application/json", std::move(gone));
}

/// `e` with the engine it came from in front of its message ("chat-2: …").
error named_failure(const std::string& name, error e) {
  e.message = name + ": " + e.message;
  return e;
}

/// Loads `spec` into chat, then into each replica (with replicas, each progress line names its
/// child); the first failure ends it (model_deps::replicas). A failure is logged.
/// chat, then the replicas, each with its engine name.
std::vector<named_host> chat_children(const model_deps& deps) {
  std::vector<named_host> out{{"chat", deps.chat}};
  out.insert(out.end(), deps.replicas.begin(), deps.replicas.end());
  return out;
}

result<host_status> load_every_child(model_deps& deps, const model_spec& spec, const model_host::progress_fn& progress) {
  const bool named = !deps.replicas.empty();  // a single child's lines and errors stay as they were
  result<host_status> r = make_error(errc::internal, "no chat child");
  for (const named_host& c : chat_children(deps)) {
    auto line = [&progress, &c, named](const std::string& l) { progress(named ? c.name + ": " + l : l); };
    r = c.host->load(spec, line);
    if (!r) {
      if (named) r = named_failure(c.name, r.error());
      break;
    }
  }
  if (!r) spdlog::warn("loading model {} failed: {}", spec.model_id, r.error().message);
  return r;
}

/// Unloads chat, then each replica; the first failure is the answer (named with replicas).
result<host_status> unload_every_child(model_deps& deps) {
  const bool named = !deps.replicas.empty();
  std::optional<error> first;
  result<host_status> last = make_error(errc::internal, "no chat child");
  for (const named_host& c : chat_children(deps)) {
    last = c.host->unload();
    if (!last && !first) first = named ? named_failure(c.name, last.error()) : last.error();
  }
  if (first) return *first;
  return last;
}

asio::awaitable<void> load(const http_request& req, response_writer& out, model_deps& deps) {
  if (!req.caller.admin()) co_return co_await fail(out, admin_only());
  auto body = parse_control_object(req.body);
  if (!body) co_return co_await fail(out, body.error());
  auto spec = parse_load(*body, deps);
  if (!spec) co_return co_await fail(out, spec.error());
  const std::string id = spec->model_id;
  auto look = [&deps, id] { return deps.library->find(id); };
  std::optional<library_model> m = co_await deps.pool->run_blocking(look);
  if (!m) co_return co_await fail(out, model_not_found(id));
  spec->model_path = m->path;
  const bool stream = body->value("stream", false);
  auto w = std::make_shared<load_watch>();
  auto run = [&deps, w, s = std::move(*spec)] {
    auto progress = [w](const std::string& line) {
      std::lock_guard lock(w->mu);
      w->lines.push_back(line);
    };
    // One load or unload at a time across the children, and the status read before the next
    // one starts: two loads would otherwise interleave child by child (a breaker run).
    std::lock_guard sequence(*deps.sequence);
    auto r = load_every_child(deps, s, progress);
    json after = r ? status_json(deps) : json();
    std::lock_guard lock(w->mu);
    w->outcome = std::move(r);
    w->status = std::move(after);
  };
  if (!deps.pool->post(std::move(run))) {
    error down = make_error(errc::upstream_unavailable, "warden is shutting down");
    co_return co_await fail(out, std::move(down));
  }
  if (stream) co_await stream_load(out, w);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (true) {
    {
      std::lock_guard lock(w->mu);
      if (w->outcome) break;
    }
    timer.expires_after(k_progress_poll);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
  }
  std::optional<error> failed;
  {
    std::lock_guard lock(w->mu);
    if (!*w->outcome) failed = w->outcome->error();
  }
  json done;
  {
    std::lock_guard lock(w->mu);
    done = w->status;
  }
  if (stream) {
    const bool ok = !failed;
    json frame = ok ? done : json::parse(control_surface().error_body(*failed, req.request_id));
    std::string_view event = ok ? "done" : "error";
    co_await send_frame(out, event, frame);
    co_await out.end_stream();
    co_return;
  }
  if (failed) co_return co_await fail(out, *failed);
  co_await out.send(200, "application/json", dump_safe(done));
}

asio::awaitable<void> unload(const http_request& req, response_writer& out, model_deps& deps) {
  if (!req.caller.admin()) co_return co_await fail(out, admin_only());
  auto run = [&deps]() -> result<json> {
    std::lock_guard sequence(*deps.sequence);  // as load's
    result<host_status> r = unload_every_child(deps);
    if (!r) return r.error();
    return status_json(deps);
  };
  result<json> done = co_await deps.pool->run_blocking(run);
  if (!done) co_return co_await fail(out, done.error());
  co_await out.send(200, "application/json", dump_safe(*done));
}

asio::awaitable<void> status(response_writer& out, model_deps& deps) {
  auto run = [&deps] { return status_json(deps); };
  json done = co_await deps.pool->run_blocking(run);
  co_await out.send(200, "application/json", dump_safe(done));
}

error pulls_unavailable() {
  return make_error(errc::upstream_unavailable, "model pulls are not available on this server");
}

/// The pull request body: {url | hf, name?, sha256?, stream?}.
result<engine::pull_request> parse_pull(const json& body) {
  for (const auto& [k, v] : body.items()) {
    if (k != "url" && k != "hf" && k != "name" && k != "sha256" && k != "stream") {
      return make_error(errc::invalid_request, "unknown field '" + k + "' (known: url, hf, name, sha256, stream)", k,
                        "unknown_field");
    }
    if (k == "stream" ? !v.is_boolean() : !v.is_string()) {
      return make_error(errc::invalid_request, k + (k == "stream" ? " must be true or false" : " must be a string"), k,
                        "invalid_type");
    }
  }
  engine::pull_request r;
  r.url = body.value("url", "");
  r.hf = body.value("hf", "");
  r.name = body.value("name", "");
  r.sha256 = body.value("sha256", "");
  return r;
}

asio::awaitable<void> stream_pull(response_writer& out, model_deps& deps, const std::string& id,
                                  const std::string& request_id) {
  if (!co_await out.begin_stream()) co_return;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (true) {
    std::optional<engine::pull_status> s = deps.pulls->get(id);
    if (!s) co_return;
    if (s->state == engine::pull_state::running) {
      if (!co_await send_frame(out, "progress", pull_json(*s))) co_return;  // the pull goes on
    } else {
      const bool ok = s->state == engine::pull_state::done;
      json frame = ok ? pull_json(*s) : json::parse(control_surface().error_body(*s->failure, request_id));
      std::string_view event = ok ? "done" : "error";
      co_await send_frame(out, event, frame);
      co_await out.end_stream();
      co_return;
    }
    timer.expires_after(k_pull_poll);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
  }
}

asio::awaitable<void> pull(const http_request& req, response_writer& out, model_deps& deps) {
  if (!req.caller.admin()) co_return co_await fail(out, admin_only());
  auto body = parse_control_object(req.body);
  if (!body) co_return co_await fail(out, body.error());
  auto parsed = parse_pull(*body);
  if (!parsed) co_return co_await fail(out, parsed.error());
  auto started = deps.pulls->start(*parsed);
  if (!started) co_return co_await fail(out, started.error());
  const std::string id = *started;
  if (body->value("stream", true)) co_return co_await stream_pull(out, deps, id, req.request_id);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (true) {
    std::optional<engine::pull_status> s = deps.pulls->get(id);
    if (s && s->state != engine::pull_state::running) {
      if (s->state != engine::pull_state::done) co_return co_await fail(out, *s->failure);
      std::string text = dump_safe(pull_json(*s));
      co_await out.send(200, "application/json", std::move(text));
      co_return;
    }
    timer.expires_after(k_pull_poll);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
  }
}

asio::awaitable<void> pulls(const http_request& req, response_writer& out, model_deps& deps) {
  if (req.path == "/api/models/pulls") {
    json data = json::array();
    for (const auto& s : deps.pulls->list()) data.push_back(pull_json(s));
    std::string text = dump_safe(json{{"object", "list"}, {"data", std::move(data)}});
    co_await out.send(200, "application/json", std::move(text));
    co_return;
  }
  if (!req.caller.admin()) co_return co_await fail(out, admin_only());
  const std::string id = req.path.substr(std::string_view("/api/models/pulls/").size());
  if (!deps.pulls->get(id)) {
    error e = make_error(errc::not_found, "no pull with id '" + id + "'", "id", "pull_not_found");
    co_return co_await fail(out, std::move(e));
  }
  const bool cancelled = deps.pulls->cancel(id);
  std::string text = dump_safe(json{{"id", id}, {"cancelled", cancelled}});
  co_await out.send(200, "application/json", std::move(text));
}

route_handler bind(model_deps& deps, int which) {
  return [&deps, which](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    if (which >= 5) {
      if (deps.pulls == nullptr) co_return co_await fail(out, pulls_unavailable());
      if (which == 5) co_return co_await pull(req, out, deps);
      co_return co_await pulls(req, out, deps);
    }
    if (deps.library == nullptr || deps.pool == nullptr) co_return co_await fail(out, no_local_model());
    if (which == 0) co_return co_await list_models(out, deps);
    if (which == 1) co_return co_await one_model(req, out, deps);
    if (deps.chat == nullptr) co_return co_await fail(out, no_local_model());
    if (which == 2) co_return co_await load(req, out, deps);
    if (which == 3) co_return co_await unload(req, out, deps);
    co_await status(out, deps);
  };
}

}  // namespace

std::vector<route> model_routes(model_deps& deps) {
  const surface* s = &control_surface();
  return {
      // the pull routes first: /api/models/ below is a prefix
      {"POST", "/api/models/pull", false, auth_policy::api_key, s, bind(deps, 5)},
      {"GET", "/api/models/pulls", false, auth_policy::api_key, s, bind(deps, 6)},
      {"DELETE", "/api/models/pulls/", true, auth_policy::api_key, s, bind(deps, 6)},
      {"GET", "/api/models", false, auth_policy::api_key, s, bind(deps, 0)},
      {"GET", "/api/models/", true, auth_policy::api_key, s, bind(deps, 1)},
      {"DELETE", "/api/models/", true, auth_policy::api_key, s, bind(deps, 1)},
      {"POST", "/api/inference/load", false, auth_policy::api_key, s, bind(deps, 2)},
      {"POST", "/api/inference/unload", false, auth_policy::api_key, s, bind(deps, 3)},
      {"GET", "/api/inference/status", false, auth_policy::api_key, s, bind(deps, 4)},
  };
}

}  // namespace warden::api::control
