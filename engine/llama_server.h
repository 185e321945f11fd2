// llama_server — runs llama.cpp's llama-server as a child process and keeps it healthy.
//
// Launch: <binary> -m <gguf> --alias <model id> --host 127.0.0.1 --port <free port> --jinja
//         --no-context-shift -c <ctx> --parallel <slots> [--kv-unified when slots > 1]
//         [--embeddings --pooling mean] [--n-gpu-layers N] [--rope-scaling S] [--rope-scale F]
//         [--yarn-orig-ctx N] --api-key-file /proc/self/fd/3 [extra args: last, so a flag missing
//         its value cannot take one of warden's own arguments]
// (flags from the reference system, unsloth-studio.md §5.2; --alias so the local path is never
// exposed). The per-launch key (random, or --llama-api-key-file) keeps other local processes from
// using llama-server directly and so bypassing warden's own --api-key; warden sends it on every
// request. The key is in neither the child's command line nor its environment: warden writes it
// into a pipe, closes the write end before fork, and the child inherits the read end as fd 3,
// which llama-server reads to EOF as its key file (nothing touches the disk). Once /health is
// 200, start() checks that the key took: GET /v1/models must be 401 without it and 200 with it,
// else the child is stopped and start() fails.
//
// Environment: only `llama_server_env()` of warden's own (an allow-list, secret-looking entries
// dropped) plus LD_PRELOAD=<nodump preload>. The preload (libwarden_nodump.so, built from
// engine/nodump_preload.cpp next to the warden binary, found from /proc/self/exe) calls
// prctl(PR_SET_DUMPABLE, 0) before llama-server's main(), since execve resets dumpability: a
// process of the same (non-root) user then cannot read /proc/<pid>/environ, /proc/<pid>/mem or
// ptrace it. When the preload is missing (or its path has a space or ':', which LD_PRELOAD cannot
// carry) start() logs a warning and starts llama-server dumpable. Between execve and the
// preload's constructor (before main) the child is briefly dumpable; its key is then still in
// the pipe, not in its memory.
//
// The child gets its own process group and PR_SET_PDEATHSIG=SIGKILL, so it dies with warden even
// on SIGKILL; stop() sends SIGTERM to the group, then SIGKILL after a grace period.
//
// start() polls GET /health every 250 ms until 200 (ready), the child exits, or
// `load_timeout_s` passes (child killed). The error then names the model and quotes the last
// lines of the child's output (the last `k_output_tail_lines` are always kept). If the child
// dies later, state() becomes failed and requests get 503 with that message.
//
// Embeddings (options.embeddings): /v1/embeddings needs a llama-server started with
// --embeddings, and that flag is not free for chat: it forces the batch down to the micro-batch
// (2048 → 512 tokens per prompt-processing step) and llama-server documents it as "restrict to
// only support embedding use case". So warden serves embeddings from a second child of the same
// GGUF with --embeddings --pooling mean (one vector per input: the mean of its token vectors,
// n_embd long, L2-normalized by llama-server's default), on its own port and key, started on the
// first /v1/embeddings request (on_demand_upstream in engine/upstream_registry.h). The weights are mmap'ed, so the two
// children share the file's pages. An input longer than the micro-batch (512 tokens) is refused
// by it (chat_service maps that to a 400).
//
// Thread-safety: all public methods are safe from any thread; start() is called once. The free
// functions are pure (read_llama_api_key_file() and nodump_preload_path() read files).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/config.h"
#include "engine/upstream.h"
#include "engine/upstream_status.h"

namespace warden::engine {

/// Lines of child output kept for error messages (reference §5.4 keeps 50).
inline constexpr std::size_t k_output_tail_lines = 50;
/// Lines quoted in an error message.
inline constexpr std::size_t k_error_quote_lines = 12;

struct llama_server_options {
  std::string binary;        ///< path to llama-server
  std::string model_path;    ///< GGUF file
  std::string model_id;      ///< --alias
  int ctx_tokens = 4096;
  int parallel_slots = 4;
  int load_timeout_s = 600;
  std::string api_key;        ///< the child's key (valid_llama_api_key); "" = a random one per launch
  bool embeddings = false;    ///< the embeddings child: --embeddings --pooling mean; logs say so
  /// How logs and errors name the child; "" = "llama-server" ("llama-server for embeddings").
  /// With --replicas N > 1 each chat child is named after its engine: "llama-server chat-2".
  std::string label{};
  int gpu_layers = -1;        ///< --n-gpu-layers; -1 = not passed (llama-server's default)
  std::string rope_scaling{};  ///< --rope-scaling; "" = not passed
  double rope_scale = 0;      ///< --rope-scale; 0 = not passed
  int yarn_orig_ctx = 0;      ///< --yarn-orig-ctx; 0 = not passed
  /// More arguments, after all of warden's own (a load's llama_extra_args,
  /// checked against the managed flags by engine/model_host.h's check_extra_args).
  std::vector<std::string> extra_args{};
};

/// The fd number the child reads its key from (`--api-key-file /proc/self/fd/<this>`).
inline constexpr int k_api_key_fd = 3;
/// Longest key accepted (it must fit the pipe's buffer, written before fork).
inline constexpr std::size_t k_max_api_key_bytes = 1024;
/// File name of the non-dumpable preload, in the warden binary's directory.
inline constexpr const char* k_nodump_preload_name = "libwarden_nodump.so";

/// The argument vector (without the binary) for a port; pure, for tests.
std::vector<std::string> llama_server_args(const llama_server_options& o, int port);

/// llama-server's environment from warden's ("NAME=value" entries): only the allow-list below,
/// minus any entry secrets/secret_detect.h calls secret (by name or value: token formats,
/// credential URLs, PEM blocks, …), then LD_PRELOAD=`preload` when
/// that is not empty. Allowed: PATH, HOME, LANG, LANGUAGE, LC_*, TZ, TMPDIR, LD_LIBRARY_PATH
/// (llama.cpp built with shared GPU runtimes), OMP_* (ggml's OpenMP threads), GGML_* (ggml's
/// own switches, e.g. GGML_VK_VISIBLE_DEVICES), and GPU selection: CUDA_VISIBLE_DEVICES,
/// CUDA_DEVICE_ORDER, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL,
/// HSA_OVERRIDE_GFX_VERSION, ONEAPI_DEVICE_SELECTOR. Never LLAMA_* (LLAMA_API_KEY, LLAMA_ARG_*
/// would override warden's flags) or the user's own LD_PRELOAD. Pure.
std::vector<std::string> llama_server_env(const std::vector<std::string>& server_env,
                                          const std::string& preload = "");

/// True when `key` can be llama-server's key: 1..k_max_api_key_bytes printable ASCII characters
/// without spaces, not starting with '#' (llama-server skips such lines of a key file, which
/// would leave it without any key). Pure.
bool valid_llama_api_key(std::string_view key);

/// The first line of `path` (a trailing '\r' removed) as llama-server's key. Errors
/// (errc::invalid_request): unreadable, empty first line, or not valid_llama_api_key; the
/// message names the file, never the key. Logs a warning when the file is readable by group or
/// others.
result<std::string> read_llama_api_key_file(const std::string& path);

/// <directory of /proc/self/exe>/k_nodump_preload_name when that is a regular file, else "".
std::string nodump_preload_path();

/// A free TCP port on 127.0.0.1 (bound then released).
result<int> pick_free_port();

class llama_server final : public upstream {
 public:
  explicit llama_server(llama_server_options opts);
  ~llama_server() override;

  result<void> start() override;
  void stop() override;
  upstream_state state() const override;
  std::string status_message() const override;
  std::string model_id() const override { return opts_.model_id; }
  std::string url_for(std::string_view api_path) const override;
  std::vector<std::string> request_headers() const override;
  bool is_local() const override { return true; }
  /// Read from GET /props and the GGUF header when the child became ready; before that (and
  /// when /props did not answer) native_tool_calls is false: warden then forces `required`
  /// itself, which works on any model.
  model_caps caps() const override;

  /// http://127.0.0.1:<port> of the child (for logs and tests).
  std::string base_url() const;
  pid_t pid() const { return pid_.load(); }
  /// Last lines of the child's output, oldest first.
  std::string output_tail(std::size_t lines) const;

 private:
  // The steps of start(), in order. Each returns its error; state() becomes failed through fail(),
  // except for pipe and fork errors and a stop() that raced with start().
  result<void> check_launch_inputs();  ///< binary, model file, key; logs the model's GGUF info
  result<void> spawn_child(int port);  ///< pipes, fork + exec, reader and waiter threads
  result<void> wait_until_healthy();   ///< GET /health until 200, exit, stop or load_timeout_s
  result<void> verify_api_key();       ///< GET /v1/models: 401 without the key, 200 with it
  void read_caps();                    ///< GET /props → caps_ (best effort; logged)
  /// The error for a child that exited (or was stopped) while loading, quoting its output.
  error load_failure();
  /// Sets state failed with e's message; returns e.
  result<void> fail(error e);
  /// "llama-server", or "llama-server for embeddings": how logs and errors name this child.
  std::string name() const;
  void read_output(int fd);
  void watch_child();
  /// A move of status_ (refused when the machine in upstream_status.h does not allow it).
  void set_state(upstream_state s, std::string message);

  llama_server_options opts_;
  std::atomic<pid_t> pid_{-1};
  std::atomic<int> port_{0};
  upstream_status status_;
  std::atomic<bool> exited_{false};
  std::atomic<bool> stopping_{false};
  int exit_status_ = 0;
  bool has_chat_template_ = true;  ///< from the GGUF header (check_launch_inputs)
  mutable std::mutex mu_;  ///< exit_status_, tail_, offload_ and caps_
  model_caps caps_{.native_tool_calls = false, .chatml_fallback = false};
  std::deque<std::string> tail_;
  std::string offload_;  ///< the last "offloaded N/M layers to GPU" of the output (llama_devices.h)
  /// One stop() at a time, and the hand-off of reader_/waiter_ in spawn_child(): model_host::stop()
  /// and its keeper thread may both stop one child at once, and two joins of one std::thread
  /// (undefined) hung warden's shutdown with --replicas (a breaker run, issue 28).
  std::mutex stop_mu_;
  std::thread reader_;
  std::thread waiter_;
};

}  // namespace warden::engine
