#include "engine/model_host.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>

#include "engine/gguf_info.h"

namespace warden::engine {

namespace {

using clock = std::chrono::steady_clock;

/// The flags llama_server_args() sets (and their long/short spellings): reference §5.2's
/// deny-list, so llama_extra_args cannot undo warden's own choices (key, host, port, alias, …).
// Also refused: other sources of the model (a URL, a Hugging Face repo or token, a Docker repo:
// a load names a library model; `warden pull` fetches), files llama-server would write where the
// caller says (--log-file, --slot-save-path: a load request must not overwrite a file), TLS on the
// child (warden talks plain HTTP to it) and --props (clients could change its settings).
constexpr std::array<std::string_view, 46> k_managed = {
    "-m",          "--model",          "--alias",          "-a",             "--host",          "--port",
    "--jinja",     "--no-jinja",       "-c",               "--ctx-size",     "--parallel",      "-np",
    "--api-key",   "--api-key-file",   "--embeddings",     "--embedding",    "--pooling",       "--kv-unified",
    "-kvu",        "--no-context-shift", "--context-shift", "--path",        "--api-prefix",    "--model-url",
    "-mu",         "-hf",              "-hfr",             "--hf-repo",      "-hff",            "--hf-file",
    "-hft",        "--hf-token",       "-hfd",             "-hfrd",          "--hf-repo-draft", "-hfv",
    "-hfrv",       "--hf-repo-v",      "-hffv",            "--hf-file-v",    "-dr",             "--docker-repo",
    "--log-file",  "--slot-save-path", "--ssl-key-file",   "--ssl-cert-file"};

bool same_spec(const model_spec& a, const model_spec& b) {
  return a.model_path == b.model_path && a.model_id == b.model_id && a.ctx_tokens == b.ctx_tokens &&
         a.parallel_slots == b.parallel_slots && a.extra_args == b.extra_args && a.gpu_layers == b.gpu_layers &&
         a.rope_scaling == b.rope_scaling && a.rope_scale == b.rope_scale && a.yarn_orig_ctx == b.yarn_orig_ctx;
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock::now().time_since_epoch()).count();
}

}  // namespace

/// Requests in flight, shared with the leases (which may outlive a load or the host itself).
struct lease_book {
  std::atomic<std::size_t> held{0};
  std::atomic<std::int64_t> last_ms{0};  ///< when a lease was last taken or released
};

struct model_host::command {
  enum class kind { load, unload } type = kind::load;
  model_spec spec;
  progress_fn progress;
  std::promise<result<void>> outcome;
};

bool is_managed_flag(std::string_view arg) {
  const std::string_view name = arg.substr(0, arg.find('='));
  return std::find(k_managed.begin(), k_managed.end(), name) != k_managed.end();
}

std::string check_extra_args(const std::vector<std::string>& args) {
  if (args.size() > 64) return "llama_extra_args: at most 64 entries";
  for (const auto& a : args) {
    if (a.empty() || a.size() > 256) return "llama_extra_args: each entry must be 1..256 bytes";
    if (a.find_first_of(std::string_view("\0\n\r", 3)) != std::string::npos) {
      return "llama_extra_args: an entry contains a NUL or a line break";
    }
    if (is_managed_flag(a)) {
      return "llama_extra_args: " + a.substr(0, a.find('=')) +
             " is set by warden itself or not allowed (the model and where it comes from, host, port, key, TLS, "
             "context, slots, template mode, files llama-server would write); use the load request's own field "
             "where there is one";
    }
    if (a[0] == '-' && a.find_first_of(" \t") != std::string::npos) {
      return "llama_extra_args: '" + a + "' holds a space: each entry is one argument, so write a flag and its "
             "value as two entries ([\"--threads\", \"4\"])";
    }
  }
  return "";
}

std::vector<std::string> without_flag(const std::vector<std::string>& args, std::string_view flag) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag) {
      if (i + 1 < args.size() && !args[i + 1].starts_with('-')) ++i;  // its value
      continue;
    }
    if (args[i].starts_with(std::string(flag) + "=")) continue;
    out.push_back(args[i]);
  }
  return out;
}

const char* to_string(host_phase p) noexcept {
  switch (p) {
    case host_phase::unloaded: return "unloaded";
    case host_phase::loading: return "loading";
    case host_phase::draining: return "draining";
    case host_phase::ready: return "ready";
    case host_phase::restarting: return "restarting";
    case host_phase::failed: return "failed";
  }
  return "failed";
}

model_host::model_host(options opts, model_spec initial)
    : opts_(std::move(opts)), target_(std::move(initial)), leases_(std::make_shared<lease_book>()) {
  status_.message = "not started";
  status_.spec = target_;
  keeper_ = std::thread([this] { keeper_loop(); });
}

model_host::~model_host() { stop(); }

result<void> model_host::start() {
  if (opts_.lazy) {
    std::lock_guard lock(mu_);
    status_.loads_on_use = true;
    status_.message = opts_.name + " starts on first use";
    return {};
  }
  model_spec spec;
  {
    std::lock_guard lock(mu_);
    spec = *target_;
  }
  // The start-up model goes to llama-server unchecked: its own words say what is wrong with a
  // file warden cannot read (a GGUF version this reader does not know, say).
  auto loaded = enqueue_load(std::move(spec), nullptr);
  if (!loaded) return loaded.error();
  return {};
}

void model_host::stop() {
  std::shared_ptr<upstream> c;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    c = child_;
  }
  cv_.notify_all();
  if (c) c->stop();  // ends a start() in progress on the keeper
  if (keeper_.joinable()) keeper_.join();
}

std::shared_ptr<upstream> model_host::child() const {
  std::lock_guard lock(mu_);
  return child_;
}

upstream_state model_host::state() const {
  std::lock_guard lock(mu_);
  switch (status_.phase) {
    case host_phase::unloaded: return upstream_state::stopped;
    case host_phase::loading:
    case host_phase::draining: return upstream_state::starting;
    case host_phase::ready:
      return child_ && child_->state() == upstream_state::ready ? upstream_state::ready : upstream_state::starting;
    case host_phase::restarting:  // failed once a restart itself could not start the model
      return restart_failed_ ? upstream_state::failed : upstream_state::starting;
    case host_phase::failed: return upstream_state::failed;
  }
  return upstream_state::failed;
}

std::string model_host::status_message() const {
  std::lock_guard lock(mu_);
  if (status_.phase == host_phase::unloaded && !status_.loads_on_use) {
    return "no model is loaded; load one with POST /api/inference/load (or `warden load`)";
  }
  return status_.message;
}

std::string model_host::model_id() const {
  std::lock_guard lock(mu_);
  if (status_.spec) return status_.spec->model_id;
  return target_ ? target_->model_id : "";
}

std::string model_host::url_for(std::string_view api_path) const {
  auto c = child();
  return c ? c->url_for(api_path) : "http://127.0.0.1:0/v1/" + std::string(api_path);
}

std::vector<std::string> model_host::request_headers() const {
  auto c = child();
  return c ? c->request_headers() : std::vector<std::string>{};
}

model_caps model_host::caps() const {
  auto c = child();
  return c ? c->caps() : model_caps{};
}

void model_host::begin() {
  auto c = std::make_shared<command>();
  {
    std::lock_guard lock(mu_);
    if (stopping_ || !status_.loads_on_use || status_.phase != host_phase::unloaded || !target_) return;
    status_.loads_on_use = false;
    status_.phase = host_phase::loading;
    status_.message = "loading model " + target_->model_id;
    c->spec = *target_;
    commands_.push_back(c);
  }
  cv_.notify_all();
}

std::shared_ptr<void> model_host::lease() {
  auto book = leases_;
  book->held.fetch_add(1);
  book->last_ms.store(now_ms());
  return std::shared_ptr<void>(book.get(), [book](void*) {
    book->last_ms.store(now_ms());
    book->held.fetch_sub(1);
  });
}

result<void> check_spec(const model_spec& spec) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(spec.model_path, ec)) {
    return make_error(errc::invalid_request,
                      "model file not found: " + spec.model_path + " (for model '" + spec.model_id +
                          "'); it was moved or deleted: pull it again or pick another model",
                      "model", "missing_file");
  }
  auto info = read_gguf_info(spec.model_path);
  if (!info) {
    return make_error(errc::invalid_request,
                      "model '" + spec.model_id + "' is not a readable GGUF (" + info.error().message +
                          "); the file is corrupt or truncated: download it again",
                      "model", "corrupt_gguf");
  }
  if (std::string why = check_extra_args(spec.extra_args); !why.empty()) {
    return make_error(errc::invalid_request, why, "llama_extra_args", "managed_flag");
  }
  return {};
}

std::uint64_t available_memory_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

result<void> check_memory(const model_spec& spec, std::uint64_t available, std::uint64_t freed) {
  auto info = read_gguf_info(spec.model_path);
  if (!info || available == 0) return {};
  const std::uint64_t kv = info->kv_cache_bytes(static_cast<std::uint64_t>(spec.ctx_tokens));
  std::error_code ec;
  const std::uint64_t weights = std::filesystem::file_size(spec.model_path, ec);
  const std::uint64_t have = available + freed;
  if (kv == 0 || kv + weights <= have) return {};
  const auto gib = [](std::uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / (1024.0 * 1024 * 1024));
    return std::string(buf);
  };
  const std::uint64_t per_token = info->kv_cache_bytes(1);
  const std::uint64_t fits = have > weights && per_token > 0 ? (have - weights) / per_token : 0;
  return make_error(errc::invalid_request,
                    "a context of " + std::to_string(spec.ctx_tokens) + " tokens for model '" + spec.model_id +
                        "' needs about " + gib(kv) + " for its KV cache plus " + gib(weights) +
                        " of weights, but about " + gib(have) + " of memory is available; lower ctx (about " +
                        std::to_string(fits) + " tokens fit) or free memory",
                    "ctx", "out_of_memory");
}

result<host_status> model_host::load(model_spec spec, progress_fn progress) {
  if (auto checked = check_spec(spec); !checked) return checked.error();
  std::uint64_t freed = 0;  // what the model loaded now gives back when it is swapped out
  {
    std::lock_guard lock(mu_);
    if (child_ && status_.spec) {
      std::error_code ec;
      const std::uint64_t weights = std::filesystem::file_size(status_.spec->model_path, ec);
      auto info = read_gguf_info(status_.spec->model_path);
      freed = (ec ? 0 : weights) + (info ? info->kv_cache_bytes(static_cast<std::uint64_t>(status_.spec->ctx_tokens)) : 0);
    }
  }
  if (auto fits = check_memory(spec, available_memory_bytes(), freed); !fits) return fits.error();
  return enqueue_load(std::move(spec), std::move(progress));
}

result<host_status> model_host::enqueue_load(model_spec spec, progress_fn progress) {
  auto c = std::make_shared<command>();
  c->type = command::kind::load;
  c->spec = std::move(spec);
  c->progress = std::move(progress);
  return submit(std::move(c));
}

result<host_status> model_host::unload() {
  auto c = std::make_shared<command>();
  c->type = command::kind::unload;
  return submit(std::move(c));
}

result<host_status> model_host::submit(std::shared_ptr<command> c) {
  auto done = c->outcome.get_future();
  {
    std::lock_guard lock(mu_);
    if (stopping_) return make_error(errc::upstream_unavailable, "warden is shutting down");
    commands_.push_back(std::move(c));
  }
  cv_.notify_all();
  auto r = done.get();
  if (!r) return r.error();
  return status();
}

host_status model_host::status() const {
  host_status s;
  std::shared_ptr<upstream> c;
  {
    std::lock_guard lock(mu_);
    s = status_;
    c = child_;
  }
  s.in_flight = leases_->held.load();
  if (c && s.phase == host_phase::ready) {
    const std::string url = c->url_for("x");
    s.base_url = url.substr(0, url.size() - std::string_view("/v1/x").size());
    s.headers = c->request_headers();
    if (c->state() != upstream_state::ready) {
      s.phase = host_phase::restarting;
      s.message = c->status_message();
    }
  }
  return s;
}

std::string model_host::path_in_use() const {
  std::lock_guard lock(mu_);
  if (status_.phase == host_phase::unloaded || status_.phase == host_phase::failed || !status_.spec) return "";
  return status_.spec->model_path;
}

void model_host::set_phase(host_phase p, std::string message) {
  std::lock_guard lock(mu_);
  status_.phase = p;
  status_.message = std::move(message);
}

void model_host::keeper_loop() {
  while (true) {
    std::shared_ptr<command> c;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, opts_.poll, [this] { return stopping_ || !commands_.empty(); });
      if (stopping_) break;
      if (!commands_.empty()) {
        c = commands_.front();
        commands_.pop_front();
      }
    }
    if (c) {
      run_command(*c);
      continue;
    }
    check_child();
    check_idle();
  }
  std::deque<std::shared_ptr<command>> left;
  {
    std::lock_guard lock(mu_);
    left.swap(commands_);
  }
  for (auto& c : left) c->outcome.set_value(make_error(errc::upstream_unavailable, "warden is shutting down"));
  if (auto c = child()) c->stop();
}

void model_host::run_command(command& c) {
  if (c.type == command::kind::unload) {
    drain(c.progress);
    stop_child(c.progress);
    {
      std::lock_guard lock(mu_);
      status_.phase = host_phase::unloaded;
      status_.loads_on_use = false;
      status_.message = "unloaded";
    }
    c.outcome.set_value({});
    return;
  }
  c.outcome.set_value(do_load(c.spec, c.progress));
}

void model_host::drain(const progress_fn& progress) {
  if (!child()) return;
  set_phase(host_phase::draining, "waiting for the requests in flight to finish");
  const auto deadline = clock::now() + opts_.drain_timeout;
  std::size_t said = 0;
  while (leases_->held.load() > 0 && clock::now() < deadline) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    const std::size_t n = leases_->held.load();
    if (progress && n != said) progress("waiting for " + std::to_string(n) + " request(s) in flight to finish");
    said = n;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (leases_->held.load() > 0) {
    spdlog::warn("{}: {} request(s) still in flight after {} ms; stopping the model under them", opts_.name,
                 leases_->held.load(), opts_.drain_timeout.count());
  }
}

void model_host::stop_child(const progress_fn& progress) {
  std::shared_ptr<upstream> c;
  {
    std::lock_guard lock(mu_);
    c = std::move(child_);
  }
  if (!c) return;
  if (progress) progress("stopping " + c->model_id());
  c->stop();
}

result<void> model_host::do_load(const model_spec& wanted, const progress_fn& progress) {
  std::optional<model_spec> previous;
  {
    std::lock_guard lock(mu_);
    const bool ready = status_.phase == host_phase::ready && child_ && child_->state() == upstream_state::ready;
    if (ready && status_.spec && same_spec(*status_.spec, wanted)) return {};  // already loaded as asked
    if (child_ && status_.spec) previous = status_.spec;
  }
  drain(progress);
  stop_child(progress);
  model_spec spec = wanted;
  {
    std::lock_guard lock(mu_);
    status_.phase = host_phase::loading;
    status_.message = "loading model " + spec.model_id;
    status_.spec = spec;
    status_.warnings.clear();
    status_.loads_on_use = false;
  }
  auto started = start_child(spec, progress);
  if (started) return {};
  error e = started.error();
  {
    std::lock_guard lock(mu_);
    status_.last_failure = e;
  }
  // The model that served before comes back, also when only the settings of the same model failed
  // (a bad flag, a context too large); the same spec again would only fail again.
  if (previous && !same_spec(*previous, wanted)) {
    if (progress) progress("loading the previous model " + previous->model_id + " again");
    set_phase(host_phase::loading, "loading the previous model " + previous->model_id + " again");
    {
      std::lock_guard lock(mu_);
      status_.spec = previous;
    }
    model_spec back = *previous;
    if (start_child(back, progress)) {
      e.message += "\nThe previous model " + previous->model_id + " was loaded again.";
      std::lock_guard lock(mu_);
      status_.last_failure = e;
      return e;
    }
  }
  set_phase(host_phase::failed, e.message);
  return e;
}

result<void> model_host::start_child(model_spec& spec, const progress_fn& progress) {
  auto first = start_child_once(spec, progress);
  if (first) return first;
  const error& e = first.error();
  std::string warning;
  if (e.type_code == "unsupported_flag" && !e.param.empty() &&
      std::any_of(spec.extra_args.begin(), spec.extra_args.end(),
                  [&](const std::string& a) { return a == e.param || a.starts_with(e.param + "="); })) {
    spec.extra_args = without_flag(spec.extra_args, e.param);
    warning = "llama-server does not know " + e.param + "; the model was loaded without it";
  } else if (e.type_code == "port_in_use") {
    warning = "llama-server's port was taken while it started; it was started again on another port";
  } else {
    return first;
  }
  if (progress) progress(warning + " (retrying)");
  auto second = start_child_once(spec, progress);
  if (second) {
    std::lock_guard lock(mu_);
    status_.warnings.push_back(warning);
    status_.spec = spec;
  }
  return second;
}

result<void> model_host::start_child_once(const model_spec& spec, const progress_fn& progress) {
  std::shared_ptr<upstream> c = opts_.make_child(spec);
  {
    std::lock_guard lock(mu_);
    if (stopping_) return make_error(errc::upstream_unavailable, "warden is shutting down");
    child_ = c;
  }
  if (progress) progress("starting " + opts_.name + " for " + spec.model_id);
  auto started = c->start();
  std::lock_guard lock(mu_);
  if (!started) {
    if (child_ == c) child_.reset();
    return started;
  }
  status_.phase = host_phase::ready;
  status_.message = "ready";
  ready_since_ = clock::now();
  crash_streak_ = 0;
  restart_failed_ = false;
  leases_->last_ms.store(now_ms());
  return {};
}

void model_host::check_child() {
  std::shared_ptr<upstream> c;
  host_phase phase;
  {
    std::lock_guard lock(mu_);
    c = child_;
    phase = status_.phase;
  }
  if (phase == host_phase::restarting && !c && clock::now() >= retry_at_) {
    restart_after_crash();
    return;
  }
  if (phase != host_phase::ready || !c || c->state() != upstream_state::failed) return;
  const std::string why = c->status_message();
  spdlog::error("{}: {}; restarting it", opts_.name, why);
  c->stop();
  std::unique_lock lock(mu_);
  if (child_ == c) child_.reset();
  status_.restarts += 1;
  status_.last_failure = make_error(errc::upstream_unavailable, why, "", "crashed");
  // The first crash restarts at once; a crash again within healthy_after of that restart waits
  // backoff_first, then twice as long each time, up to backoff_max.
  if (clock::now() - ready_since_ >= opts_.healthy_after) crash_streak_ = 0;
  next_backoff_ = crash_streak_ == 0 ? std::chrono::milliseconds(0)
                                     : std::min(opts_.backoff_max,
                                                std::chrono::milliseconds(opts_.backoff_first.count() << std::min(crash_streak_ - 1, 6)));
  crash_streak_ += 1;
  restart_failed_ = false;
  retry_at_ = clock::now() + next_backoff_;
  status_.phase = host_phase::restarting;
  status_.message = why + "\nwarden restarts it" +
                    (next_backoff_.count() > 0 ? " in " + std::to_string(next_backoff_.count() / 1000) + " s" : "") +
                    " (restart " + std::to_string(status_.restarts) + ")";
  if (next_backoff_.count() == 0) {
    lock.unlock();
    restart_after_crash();
  }
}

void model_host::restart_after_crash() {
  model_spec spec;
  {
    std::lock_guard lock(mu_);
    if (!status_.spec) return;
    spec = *status_.spec;
  }
  auto c = std::shared_ptr<upstream>(opts_.make_child(spec));
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    child_ = c;  // state() is `starting` while it starts
  }
  spdlog::info("{}: restarting for {}", opts_.name, spec.model_id);
  auto started = c->start();
  std::lock_guard lock(mu_);
  if (started) {
    status_.phase = host_phase::ready;
    status_.message = "ready";
    ready_since_ = clock::now();
    restart_failed_ = false;
    spdlog::info("{}: restarted for {}", opts_.name, spec.model_id);
    return;
  }
  if (child_ == c) child_.reset();
  status_.last_failure = started.error();
  restart_failed_ = true;
  next_backoff_ = std::min(opts_.backoff_max, next_backoff_ == std::chrono::milliseconds(0) ? opts_.backoff_first
                                                                                              : next_backoff_ * 2);
  retry_at_ = clock::now() + next_backoff_;
  status_.message = started.error().message + "\nwarden tries again in " +
                    std::to_string(next_backoff_.count() / 1000) + " s";
}

void model_host::check_idle() {
  if (opts_.idle_unload.count() <= 0 || leases_->held.load() > 0) return;
  {
    std::lock_guard lock(mu_);
    if (status_.phase != host_phase::ready || !child_) return;
  }
  const std::int64_t idle_ms = now_ms() - leases_->last_ms.load();
  if (idle_ms < std::chrono::duration_cast<std::chrono::milliseconds>(opts_.idle_unload).count()) return;
  spdlog::info("{}: unloading after {} s without requests", opts_.name, opts_.idle_unload.count());
  stop_child(nullptr);
  std::lock_guard lock(mu_);
  status_.phase = host_phase::unloaded;
  status_.loads_on_use = true;
  target_ = status_.spec;
  status_.message = "unloaded after " + std::to_string(opts_.idle_unload.count()) +
                    " s without requests; the next request loads it again";
}

}  // namespace warden::engine
