#include "engine/llama_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "engine/gguf_info.h"
#include "engine/http_client.h"

#include <fstream>

extern char** environ;

namespace warden::engine {

const char* to_string(upstream_state s) noexcept {
  switch (s) {
    case upstream_state::stopped: return "stopped";
    case upstream_state::starting: return "starting";
    case upstream_state::ready: return "ready";
    case upstream_state::failed: return "failed";
  }
  return "failed";
}

std::vector<std::string> llama_server_args(const llama_server_options& o, int port) {
  std::vector<std::string> args = {"-m", o.model_path, "--alias", o.model_id, "--host", "127.0.0.1",
                                    "--port", std::to_string(port), "--jinja", "--no-context-shift", "-c",
                                    std::to_string(o.ctx_tokens), "--parallel", std::to_string(o.parallel_slots)};
  // One shared KV cache, so a single request can use the whole context (reference §5.2).
  if (o.parallel_slots > 1) args.emplace_back("--kv-unified");
  return args;
}

result<int> pick_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(errc::internal, std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return make_error(errc::internal, "cannot find a free loopback port: " + why);
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

namespace {
std::string random_hex(std::size_t bytes) {
  std::string out;
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  static constexpr char k_hex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < bytes; ++i) {
    const auto b = static_cast<unsigned char>(urandom.get());
    out += k_hex[b >> 4];
    out += k_hex[b & 15];
  }
  return out;
}
}  // namespace

llama_server::llama_server(llama_server_options opts) : opts_(std::move(opts)) {}

std::vector<std::string> llama_server::request_headers() const {
  if (opts_.api_key.empty()) return {};
  return {"Authorization: Bearer " + opts_.api_key};
}

llama_server::~llama_server() { stop(); }

upstream_state llama_server::state() const { return state_.load(); }

std::string llama_server::status_message() const {
  std::lock_guard lock(mu_);
  return message_;
}

std::string llama_server::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_.load());
}

std::string llama_server::url_for(std::string_view api_path) const {
  return base_url() + "/v1/" + std::string(api_path);
}

std::string llama_server::output_tail(std::size_t lines) const {
  std::lock_guard lock(mu_);
  if (tail_.empty()) return "  (it printed nothing)\n";
  std::string out;
  const std::size_t first = tail_.size() > lines ? tail_.size() - lines : 0;
  for (std::size_t i = first; i < tail_.size(); ++i) {
    out += "  | ";
    out += tail_[i];
    out += '\n';
  }
  return out;
}

void llama_server::set_state(upstream_state s, std::string message) {
  {
    std::lock_guard lock(mu_);
    message_ = std::move(message);
  }
  state_.store(s);
}

result<void> llama_server::start() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(opts_.binary, ec)) {
    auto e = make_error(errc::upstream_unavailable,
                        "llama-server not found at " + opts_.binary +
                            "; run `make setup` (builds it) or pass --llama-server PATH");
    set_state(upstream_state::failed, e.message);
    return e;
  }
  if (!fs::is_regular_file(opts_.model_path, ec)) {
    auto e = make_error(errc::upstream_unavailable,
                        "model file not found: " + opts_.model_path +
                            " (run `make setup` for the default model, or pass --model PATH)");
    set_state(upstream_state::failed, e.message);
    return e;
  }
  if (auto info = read_gguf_info(opts_.model_path)) {
    spdlog::info("model {}: GGUF v{}, architecture {}, {} chat template, native context {} tokens",
                 opts_.model_id, info->version, info->architecture, info->has_chat_template ? "own" : "no",
                 info->context_length);
    if (!info->has_chat_template) {
      spdlog::warn("model {} carries no chat template; llama-server falls back to ChatML", opts_.model_id);
    }
  } else {
    spdlog::warn("{}; leaving it to llama-server", info.error().message);
  }
  if (opts_.api_key.empty()) opts_.api_key = random_hex(16);
  auto port = pick_free_port();
  if (!port) {
    set_state(upstream_state::failed, port.error().message);
    return port.error();
  }
  port_.store(*port);

  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    return make_error(errc::internal, std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<std::string> args = llama_server_args(opts_, *port);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(opts_.binary.c_str()));
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The key goes through the environment (llama-server reads LLAMA_API_KEY): a command line is
  // visible to every local user in `ps`, /proc/<pid>/environ only to the same user.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LLAMA_API_KEY=", 14) != 0) env_strings.emplace_back(*e);
  }
  if (!opts_.api_key.empty()) env_strings.push_back("LLAMA_API_KEY=" + opts_.api_key);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  set_state(upstream_state::starting, "loading model " + opts_.model_id);
  if (stopping_.load()) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return make_error(errc::upstream_unavailable, "stopped before llama-server was started");
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return make_error(errc::internal, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // parent died before prctl
    ::dup2(pipefd[1], STDOUT_FILENO);
    ::dup2(pipefd[1], STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::close_range(3, ~0U, 0);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, to avoid a race with stop()
  ::close(pipefd[1]);
  pid_.store(pid);
  // stop() sets stopping_ before it reads pid_, and we store pid_ before reading stopping_: one
  // of the two sees the other, so a stop() racing with this start() always kills the child.
  if (stopping_.load()) ::kill(-pid, SIGKILL);
  spdlog::info("starting llama-server (pid {}) for {} on {}", pid, opts_.model_id, base_url());
  reader_ = std::thread([this, fd = pipefd[0]] { read_output(fd); });
  waiter_ = std::thread([this] { watch_child(); });

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(opts_.load_timeout_s);
  const std::string health = base_url() + "/health";
  while (true) {
    if (exited_.load() || stopping_.load()) {
      // give the reader a moment to collect the last words
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::string why;
      {
        std::lock_guard lock(mu_);
        const int st = exit_status_;
        why = WIFSIGNALED(st) ? "was killed by signal " + std::to_string(WTERMSIG(st))
                              : "exited with code " + std::to_string(WEXITSTATUS(st));
      }
      auto e = make_error(errc::upstream_unavailable,
                          "llama-server failed to load model " + opts_.model_id + ": it " + why +
                              ". Last lines of its output:\n" + output_tail(k_error_quote_lines));
      set_state(upstream_state::failed, e.message);
      return e;
    }
    auto [status, body] = http_client::get_blocking(health, {}, 1000);
    if (status == 200) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      stop();
      auto e = make_error(errc::upstream_unavailable,
                          "llama-server did not load model " + opts_.model_id + " within " +
                              std::to_string(opts_.load_timeout_s) +
                              " s (--load-timeout); it was stopped. Last lines of its output:\n" +
                              output_tail(k_error_quote_lines));
      set_state(upstream_state::failed, e.message);
      return e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  set_state(upstream_state::ready, "ready");
  spdlog::info("llama-server ready at {} (model {})", base_url(), opts_.model_id);
  return {};
}

void llama_server::read_output(int fd) {
  std::string partial;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    partial.append(buf, static_cast<std::size_t>(n));
    std::size_t pos;
    while ((pos = partial.find('\n')) != std::string::npos) {
      std::string line = partial.substr(0, pos);
      partial.erase(0, pos + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      spdlog::debug("llama-server: {}", line);
      std::lock_guard lock(mu_);
      tail_.push_back(std::move(line));
      if (tail_.size() > k_output_tail_lines) tail_.pop_front();
    }
  }
  if (!partial.empty()) {
    std::lock_guard lock(mu_);
    tail_.push_back(partial);
    if (tail_.size() > k_output_tail_lines) tail_.pop_front();
  }
  ::close(fd);
}

void llama_server::watch_child() {
  const pid_t pid = pid_.load();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  {
    std::lock_guard lock(mu_);
    exit_status_ = status;
  }
  exited_.store(true);
  if (state_.load() == upstream_state::ready && !stopping_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the reader drain
    const std::string why = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exited with code " + std::to_string(WEXITSTATUS(status));
    const std::string msg = "llama-server serving " + opts_.model_id + " " + why +
                            ". Last lines of its output:\n" + output_tail(k_error_quote_lines);
    spdlog::error("{}", msg);
    set_state(upstream_state::failed, msg);
  }
}

void llama_server::stop() {
  const bool was_stopping = stopping_.exchange(true);
  const pid_t pid = pid_.load();
  if (!was_stopping && pid > 0 && !exited_.load()) {
    ::kill(-pid, SIGTERM);
    for (int i = 0; i < 50 && !exited_.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // Also reaches grandchildren that ignored SIGTERM or outlived the leader.
    ::kill(-pid, SIGKILL);
  }
  if (waiter_.joinable()) waiter_.join();
  if (reader_.joinable()) reader_.join();
  if (state_.load() != upstream_state::failed) set_state(upstream_state::stopped, "stopped");
}

}  // namespace warden::engine
