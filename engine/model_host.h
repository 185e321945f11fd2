// model_host — the upstream that owns warden's llama-server child for one role (chat, or the
// embeddings child) and changes it at run time: load, swap, unload, restart after a crash, idle
// unload, start on first use. It is the registry's entry (engine/upstream_registry.h) for a
// local model; requests see one upstream whose child may change underneath.
//
// Threads: one keeper thread per host does every fork and stop (llama-server's
// PR_SET_PDEATHSIG is tied to the forking thread, so that thread lives as long as the host).
// load()/unload() hand the keeper a command and wait for its outcome; the keeper also polls the
// child every `poll` for a crash and for idleness.
//
// Phases (status().phase) and what requests see (state()):
//   unloaded   → stopped   (no child; after unload(), or before a lazy host's first begin())
//   loading    → starting  (a child is starting: load, swap, first use, reload after idle)
//   draining   → starting  (a swap or unload waits for the requests in flight, up to drain_timeout)
//   ready      → ready     (→ starting the moment the child dies, before the keeper restarts it)
//   restarting → starting (failed once a restart could not start the model)
//   failed     → failed    (a load failed and nothing could be restored)
// chat_service waits while state() is `starting` (set_load_wait), so a request that comes during a
// swap or a crash restart is served by the new child instead of failing.
//
// Swap: requests in flight hold a lease(); a swap first waits until none is held (new requests
// wait for the new model), up to drain_timeout, then stops the old child and starts the new one.
// A failed load restores the model that was loaded before and says so in the error.
// Crash: the child dying while ready is restarted at once; a crash again within 60 s of that
// restart waits 1 s, 2 s, 4 s … up to 60 s first. Requests wait (state() `starting`) through a
// restart and its back-off; once a restart itself fails to start the model, state() is `failed`
// (503 with the reason) while the keeper goes on trying with the back-off.
// Load retries (reference §5.4): a child that fails with type_code "unsupported_flag" is started
// once more without that flag (and its value) when the flag came from llama_extra_args; one that
// fails with "port_in_use" is started once more (on a new free port).
//
// Errors of load(): errc::invalid_request (bad spec: missing or unreadable file → type_code
// "missing_file" / "corrupt_gguf", a managed flag in extra_args, a context the memory cannot hold →
// "out_of_memory" param "ctx"); errc::upstream_unavailable with the child's classified error
// (type_code from engine/load_failure.h); errc::upstream_unavailable when the host stops.
// Thread-safety: every public method is safe from any thread; load()/unload() block (never call
// them from an io thread: use a blocking pool).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.h"
#include "engine/upstream.h"

namespace warden::engine {

struct lease_book;

/// What to load: one GGUF and how llama-server runs it (reference §5.2's load fields).
struct model_spec {
  std::string model_id;    ///< public id (--alias)
  std::string model_path;  ///< the GGUF file
  int ctx_tokens = 4096;   ///< -c
  int parallel_slots = 4;  ///< --parallel
  std::optional<int> gpu_layers;       ///< --n-gpu-layers; none = llama-server's default
  std::string rope_scaling;            ///< --rope-scaling none|linear|yarn; "" = the model's own
  double rope_scale = 0;               ///< --rope-scale; 0 = unset
  int yarn_orig_ctx = 0;               ///< --yarn-orig-ctx; 0 = unset
  std::vector<std::string> extra_args; ///< llama_extra_args, after check_extra_args()
};

/// The flags warden sets itself (llama_server.h's launch line, reference §5.2's deny-list):
/// a llama_extra_args entry naming one of these (or its "=value" form) is refused.
bool is_managed_flag(std::string_view arg);
/// "" when every entry may be passed to llama-server, else the message (names the flag). Entries
/// must be non-empty, at most 64 of 256 bytes each, without NUL or newline. Pure.
std::string check_extra_args(const std::vector<std::string>& args);
/// `args` without `flag` and, when the next entry does not start with '-', its value. Pure.
std::vector<std::string> without_flag(const std::vector<std::string>& args, std::string_view flag);

/// The checks a load makes before it stops anything: the file exists (else invalid_request,
/// type_code "missing_file"), its GGUF header reads ("corrupt_gguf"), check_extra_args()
/// ("managed_flag"). Reads the file's header.
result<void> check_spec(const model_spec& spec);

/// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
std::uint64_t available_memory_bytes();
/// Whether the KV cache of spec.ctx_tokens (gguf_info::kv_cache_bytes) plus the weights (the
/// file's size) fit `available` + `freed` bytes (`freed`: what the model loaded now gives back);
/// else invalid_request, param "ctx", type_code "out_of_memory", saying how many tokens would
/// fit. Unknown numbers (0) pass. Reads the file's header.
result<void> check_memory(const model_spec& spec, std::uint64_t available, std::uint64_t freed);

enum class host_phase { unloaded, loading, draining, ready, restarting, failed };
const char* to_string(host_phase p) noexcept;

struct host_status {
  host_phase phase = host_phase::unloaded;
  std::string message;                ///< what is happening, or why not ready
  std::optional<model_spec> spec;     ///< the model loaded, being loaded, or last loaded
  int restarts = 0;                   ///< crash restarts since start
  std::optional<error> last_failure;  ///< the last load or crash error
  std::vector<std::string> warnings;  ///< from the last load (a dropped flag, …)
  std::string base_url;               ///< http://127.0.0.1:<port> of the child; "" when none
  std::vector<std::string> headers;   ///< the child's request headers (its key)
  std::size_t in_flight = 0;          ///< leases held
  bool loads_on_use = false;          ///< the next request starts the model (lazy, idle-unloaded)
};

class model_host final : public upstream {
 public:
  /// Makes the child for a spec (a llama_server in production, a fake in tests).
  using child_factory = std::function<std::unique_ptr<upstream>(const model_spec&)>;
  /// Load progress for a caller: a line of text per step ("stopping X", "starting Y", …).
  using progress_fn = std::function<void(const std::string&)>;

  struct options {
    child_factory make_child;
    std::string name = "llama-server";    ///< how messages name the child
    bool lazy = false;                    ///< no child until the first begin()
    std::chrono::milliseconds drain_timeout{30000};
    std::chrono::seconds idle_unload{0};  ///< 0 = never
    std::chrono::milliseconds poll{100};  ///< crash and idle checks
    std::chrono::milliseconds backoff_first{1000};
    std::chrono::milliseconds backoff_max{60000};
    std::chrono::seconds healthy_after{60};  ///< a crash later than this restarts at once
  };

  model_host(options opts, model_spec initial);
  ~model_host() override;
  model_host(const model_host&) = delete;
  model_host& operator=(const model_host&) = delete;

  /// upstream: loads `initial` and waits (lazy: returns at once).
  result<void> start() override;
  void stop() override;
  upstream_state state() const override;
  std::string status_message() const override;
  std::string model_id() const override;
  std::string url_for(std::string_view api_path) const override;
  std::vector<std::string> request_headers() const override;
  bool is_local() const override { return true; }
  model_caps caps() const override;
  void begin() override;
  std::shared_ptr<void> lease() override;

  /// Loads `spec` (a swap when another model is loaded; no-op when the same spec is ready);
  /// blocks until it is ready or failed. `progress` (optional) is called on the keeper thread.
  result<host_status> load(model_spec spec, progress_fn progress = nullptr);
  /// Drains, stops the child; the host stays unloaded until load() (requests: 503). Blocks.
  result<host_status> unload();
  host_status status() const;
  /// The path of the model loaded or loading (for "is this file in use"); "" when unloaded.
  std::string path_in_use() const;

 private:
  struct command;
  /// load() without check_spec(): hands the keeper the command and waits for it.
  result<host_status> enqueue_load(model_spec spec, progress_fn progress);
  /// Hands a command to the keeper thread and waits for its outcome; then the status.
  result<host_status> submit(std::shared_ptr<command> c);
  void keeper_loop();
  void run_command(command& c);
  result<void> do_load(const model_spec& spec, const progress_fn& progress);
  /// start_child_once, and once more where the class comment says; `spec` loses a dropped flag.
  result<void> start_child(model_spec& spec, const progress_fn& progress);
  result<void> start_child_once(const model_spec& spec, const progress_fn& progress);
  void drain(const progress_fn& progress);
  void stop_child(const progress_fn& progress);
  void check_child();
  void restart_after_crash();
  void check_idle();
  void set_phase(host_phase p, std::string message);
  std::shared_ptr<upstream> child() const;

  options opts_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<command>> commands_;
  bool stopping_ = false;
  host_status status_;
  std::optional<model_spec> target_;  ///< what begin() loads when loads_on_use
  std::shared_ptr<upstream> child_;
  std::shared_ptr<lease_book> leases_;  ///< requests in flight (model_host.cpp)
  std::chrono::steady_clock::time_point last_use_;
  std::chrono::steady_clock::time_point ready_since_;
  std::chrono::milliseconds next_backoff_{0};
  int crash_streak_ = 0;         ///< crashes since the last start that stayed up healthy_after
  bool restart_failed_ = false;  ///< the last restart could not start the model: requests get 503
  std::chrono::steady_clock::time_point retry_at_;
  std::thread keeper_;
};

}  // namespace warden::engine
