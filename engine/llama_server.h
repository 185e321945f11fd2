// llama_server — runs llama.cpp's llama-server as a child process and keeps it healthy.
//
// Launch: <binary> -m <gguf> --alias <model id> --host 127.0.0.1 --port <free port> --jinja
//         --no-context-shift -c <ctx> --parallel <slots> [--kv-unified when slots > 1]
//         (+ LLAMA_API_KEY=<random per launch> in its environment, never on the command line)
// (flags from the reference system, unsloth-studio.md §5.2; --alias so the local path is never
// exposed). The per-launch key keeps other local processes from using llama-server directly
// and so bypassing warden's own --api-key; warden sends it on every request. The child gets its own process group and PR_SET_PDEATHSIG=SIGKILL, so it dies with
// warden even on SIGKILL; stop() sends SIGTERM to the group, then SIGKILL after a grace period.
//
// start() polls GET /health every 250 ms until 200 (ready), the child exits, or
// `load_timeout_s` passes (child killed). The error then names the model and quotes the last
// lines of the child's output (the last `k_output_tail_lines` are always kept). If the child
// dies later, state() becomes failed and requests get 503 with that message.
//
// Thread-safety: all public methods are safe from any thread; start() is called once.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "common/config.h"
#include "engine/upstream.h"

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
  std::string api_key;        ///< LLAMA_API_KEY for the child; "" = a random one per launch
};

/// The argument vector (without the binary) for a port; pure, for tests.
std::vector<std::string> llama_server_args(const llama_server_options& o, int port);

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

  /// http://127.0.0.1:<port> of the child (for logs and tests).
  std::string base_url() const;
  pid_t pid() const { return pid_.load(); }
  /// Last lines of the child's output, oldest first.
  std::string output_tail(std::size_t lines) const;

 private:
  void read_output(int fd);
  void watch_child();
  void set_state(upstream_state s, std::string message);

  llama_server_options opts_;
  std::atomic<pid_t> pid_{-1};
  std::atomic<int> port_{0};
  std::atomic<upstream_state> state_{upstream_state::stopped};
  std::atomic<bool> exited_{false};
  std::atomic<bool> stopping_{false};
  int exit_status_ = 0;
  mutable std::mutex mu_;
  std::string message_;
  std::deque<std::string> tail_;
  std::thread reader_;
  std::thread waiter_;
};

}  // namespace warden::engine
