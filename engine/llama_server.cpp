#include "engine/llama_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/ids.h"
#include "engine/llama_devices.h"
#include "common/json_util.h"
#include "secrets/secret_detect.h"
#include "engine/gguf_info.h"
#include "engine/http_client.h"
#include "engine/load_failure.h"

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
  if (o.embeddings) {  // the embeddings child (llama_server.h): one mean-pooled vector per input
    args.insert(args.end(), {"--embeddings", "--pooling", "mean"});
  }
  if (o.gpu_layers >= 0) args.insert(args.end(), {"--n-gpu-layers", std::to_string(o.gpu_layers)});
  if (!o.rope_scaling.empty()) args.insert(args.end(), {"--rope-scaling", o.rope_scaling});
  if (o.rope_scale > 0) args.insert(args.end(), {"--rope-scale", std::to_string(o.rope_scale)});
  if (o.yarn_orig_ctx > 0) args.insert(args.end(), {"--yarn-orig-ctx", std::to_string(o.yarn_orig_ctx)});
  // The key comes through an inherited pipe (see open_child_pipes()), never the command line.
  args.emplace_back("--api-key-file");
  args.push_back("/proc/self/fd/" + std::to_string(k_api_key_fd));
  // Last, so a flag missing its value cannot take warden's own arguments as its value.
  args.insert(args.end(), o.extra_args.begin(), o.extra_args.end());
  return args;
}

namespace {

constexpr std::string_view k_env_exact[] = {
    "PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
    "HSA_OVERRIDE_GFX_VERSION", "ONEAPI_DEVICE_SELECTOR"};
constexpr std::string_view k_env_prefixes[] = {"LC_", "GGML_", "OMP_"};
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool allowed_name(std::string_view name) {
  if (std::find(std::begin(k_env_exact), std::end(k_env_exact), name) != std::end(k_env_exact)) return true;
  return std::any_of(std::begin(k_env_prefixes), std::end(k_env_prefixes),
                     [&](std::string_view p) { return name.size() > p.size() && starts_with(name, p); });
}

}  // namespace

std::vector<std::string> llama_server_env(const std::vector<std::string>& server_env, const std::string& preload) {
  std::vector<std::string> out;
  for (const auto& kv : server_env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string_view name(kv.data(), eq);
    const std::string_view value(kv.data() + eq + 1, kv.size() - eq - 1);
    if (!allowed_name(name) || secrets::is_secret_variable(name, value)) continue;
    if (std::any_of(out.begin(), out.end(), [&](const std::string& o) { return starts_with(o, kv.substr(0, eq + 1)); })) {
      continue;  // a duplicate name: the first one wins, as getenv() would have it
    }
    out.push_back(kv);
  }
  if (!preload.empty()) out.push_back("LD_PRELOAD=" + preload);
  return out;
}

bool valid_llama_api_key(std::string_view key) {
  if (key.empty() || key.size() > k_max_api_key_bytes || key.front() == '#') return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 127; });
}

result<std::string> read_llama_api_key_file(const std::string& path) {
  const std::string what = "--llama-api-key-file " + path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(errc::invalid_request, "cannot read llama-server's key from " + what + ": it is a directory");
  }
  std::ifstream f(path);
  if (!f.is_open()) {
    return make_error(errc::invalid_request,
                      "cannot read llama-server's key from " + what + ": " + std::strerror(errno));
  }
  std::string key;
  if (!std::getline(f, key)) {
    return make_error(errc::invalid_request, "cannot read llama-server's key from " + what + ": it is empty");
  }
  if (!key.empty() && key.back() == '\r') key.pop_back();
  if (key.empty()) {
    return make_error(errc::invalid_request, what + ": its first line (llama-server's key) is empty");
  }
  if (!valid_llama_api_key(key)) {
    return make_error(errc::invalid_request,
                      what + ": the key on its first line must be 1.." +
                          std::to_string(k_max_api_key_bytes) +
                          " printable ASCII characters without spaces, not starting with '#'");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    spdlog::warn("--llama-api-key-file {} is readable by other users (mode {:o}); chmod 600 it", path,
                 st.st_mode & 0777);
  }
  return key;
}

std::string nodump_preload_path() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const auto lib = exe.parent_path() / k_nodump_preload_name;
  return std::filesystem::is_regular_file(lib, ec) ? lib.string() : "";
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

llama_server::llama_server(llama_server_options opts) : opts_(std::move(opts)) {}

std::vector<std::string> llama_server::request_headers() const {
  if (opts_.api_key.empty()) return {};
  return {"Authorization: Bearer " + opts_.api_key};
}

llama_server::~llama_server() { stop(); }

upstream_state llama_server::state() const { return status_.state(); }

std::string llama_server::status_message() const { return status_.message(); }

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

void llama_server::set_state(upstream_state s, std::string message) { status_.set(s, std::move(message)); }

namespace {

std::string upper_first(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

/// "was killed by signal N" or "exited with code N", for a waitpid() status.
std::string exit_description(int status) {
  return WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                             : "exited with code " + std::to_string(WEXITSTATUS(status));
}

/// Logs what the GGUF header says about the model (a warning when it cannot be read, or when
/// the model has no chat template). Returns whether the model carries its own chat template
/// (true when the header cannot be read: llama-server then decides).
bool log_model_info(const std::string& model_id, const std::string& model_path) {
  auto info = read_gguf_info(model_path);
  if (info) {
    spdlog::info("model {}: GGUF v{}, architecture {}, {} chat template, native context {} tokens",
                 model_id, info->version, info->architecture, info->has_chat_template ? "own" : "no",
                 info->context_length);
    if (!info->has_chat_template) {
      spdlog::warn("model {} carries no chat template; llama-server falls back to ChatML", model_id);
    }
    return info->has_chat_template;
  }
  spdlog::warn("{}; leaving it to llama-server", info.error().message);
  return true;
}

/// The pipes a child is started with; all O_CLOEXEC.
struct child_pipes {
  int output_read;   ///< warden reads the child's stdout and stderr here
  int output_write;  ///< the child's stdout and stderr
  int key_read;      ///< holds the key (its write end is already closed); the child's k_api_key_fd
};

void close_child_pipes(const child_pipes& p) {
  ::close(p.key_read);
  ::close(p.output_read);
  ::close(p.output_write);
}

/// The output pipe, and the key pipe with `key` and a newline written into it.
result<child_pipes> open_child_pipes(const std::string& key) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    return make_error(errc::internal, std::string("pipe: ") + std::strerror(errno));
  }
  // The key: written whole into a pipe whose write end is closed before fork, so the child reads
  // it to EOF from fd k_api_key_fd (`--api-key-file /proc/self/fd/3`) and it never touches the
  // disk, the command line or the environment. It fits the pipe's buffer (k_max_api_key_bytes).
  int keyfd[2];
  if (::pipe2(keyfd, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return make_error(errc::internal, "pipe: " + why);
  }
  const std::string line = key + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(keyfd[1], line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(keyfd[1]);
  const child_pipes pipes{pipefd[0], pipefd[1], keyfd[0]};
  if (done < line.size()) {
    close_child_pipes(pipes);
    return make_error(errc::internal, "cannot hand llama-server its key through a pipe");
  }
  return pipes;
}

/// nodump_preload_path(), or "" with a warning when it is missing or LD_PRELOAD cannot carry it.
std::string usable_nodump_preload() {
  std::string preload = nodump_preload_path();
  if (preload.empty()) {
    spdlog::warn("{} not found next to the warden binary: llama-server stays dumpable, so a process of "
                 "the same user can read its memory (its API key included)",
                 k_nodump_preload_name);
  } else if (preload.find_first_of(" :") != std::string::npos) {
    spdlog::warn("cannot preload {}: its path has a space or ':', which LD_PRELOAD cannot carry; "
                 "llama-server stays dumpable",
                 preload);
    preload.clear();
  }
  return preload;
}

/// Pointers to `strings` (which must outlive them), then nullptr: an argv or envp for execve.
std::vector<char*> exec_vector(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

/// In the forked child: its own process group, death with the parent, stdout and stderr into
/// the output pipe, stdin from /dev/null, the key pipe as k_api_key_fd and no other fd above
/// it, then execve. Async-signal-safe calls only (it runs between fork and exec).
[[noreturn]] void exec_child(pid_t parent, const child_pipes& pipes, char* const argv[], char* const envp[]) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // parent died before prctl
  // Out of the way of the dup2s below first (it could be any low number).
  const int key_read = ::fcntl(pipes.key_read, F_DUPFD, k_api_key_fd + 10);
  if (key_read < 0) ::_exit(127);
  ::dup2(pipes.output_write, STDOUT_FILENO);
  ::dup2(pipes.output_write, STDERR_FILENO);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  if (::dup2(key_read, k_api_key_fd) != k_api_key_fd) ::_exit(127);  // dup2 clears FD_CLOEXEC
  ::close_range(k_api_key_fd + 1, ~0U, 0);
  ::execve(argv[0], argv, envp);
  ::_exit(127);
}

}  // namespace

std::string llama_server::name() const {
  if (!opts_.label.empty()) return opts_.label;
  return opts_.embeddings ? "llama-server for embeddings" : "llama-server";
}

result<void> llama_server::fail(error e) {
  set_state(upstream_state::failed, e.message);
  return e;
}

result<void> llama_server::start() {
  if (auto checked = check_launch_inputs(); !checked) return checked;
  auto port = pick_free_port();
  if (!port) return fail(port.error());
  port_.store(*port);
  if (auto spawned = spawn_child(*port); !spawned) return spawned;
  if (auto healthy = wait_until_healthy(); !healthy) return healthy;
  if (auto keyed = verify_api_key(); !keyed) return keyed;
  read_caps();
  set_state(upstream_state::ready, "ready");
  spdlog::info("{} ready at {} (model {})", name(), base_url(), opts_.model_id);
  return {};
}

result<void> llama_server::check_launch_inputs() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(opts_.binary, ec)) {
    return fail(make_error(errc::upstream_unavailable,
                           "llama-server not found at " + opts_.binary +
                               "; run `make setup` (builds it) or pass --llama-server PATH"));
  }
  if (!fs::is_regular_file(opts_.model_path, ec)) {
    return fail(make_error(errc::upstream_unavailable,
                           "model file not found: " + opts_.model_path +
                               " (run `make setup` for the default model, or pass --model PATH)"));
  }
  has_chat_template_ = log_model_info(opts_.model_id, opts_.model_path);
  if (opts_.api_key.empty()) opts_.api_key = ids::random_hex(16);
  if (!valid_llama_api_key(opts_.api_key)) {
    return fail(make_error(errc::internal, "llama-server's key is not valid (see valid_llama_api_key)"));
  }
  return {};
}

result<void> llama_server::spawn_child(int port) {
  auto opened = open_child_pipes(opts_.api_key);
  if (!opened) return opened.error();
  const child_pipes pipes = *opened;
  std::vector<std::string> args = llama_server_args(opts_, port);
  args.insert(args.begin(), opts_.binary);
  std::vector<char*> argv = exec_vector(args);
  // A minimal environment (no shell secrets), plus the preload that makes the child non-dumpable
  // so a process of the same user can read neither its environment nor its memory.
  const std::string preload = usable_nodump_preload();
  std::vector<std::string> server_env;
  for (char** e = environ; *e != nullptr; ++e) server_env.emplace_back(*e);
  std::vector<std::string> env_strings = llama_server_env(server_env, preload);
  std::vector<char*> envp = exec_vector(env_strings);

  set_state(upstream_state::starting, "loading model " + opts_.model_id);
  if (stopping_.load()) {
    close_child_pipes(pipes);
    return make_error(errc::upstream_unavailable, "stopped before llama-server was started");
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const std::string why = std::strerror(errno);
    close_child_pipes(pipes);
    return make_error(errc::internal, "fork: " + why);
  }
  if (pid == 0) exec_child(parent, pipes, argv.data(), envp.data());
  ::setpgid(pid, pid);  // also from the parent, to avoid a race with stop()
  ::close(pipes.output_write);
  ::close(pipes.key_read);
  // Under stop_mu_: a stop() either ran before (stopping_ set: the child is killed here, and the
  // next stop(), the destructor's at the latest, joins the threads) or runs after and sees them.
  std::lock_guard stop_lock(stop_mu_);
  pid_.store(pid);
  if (stopping_.load()) ::kill(-pid, SIGKILL);
  spdlog::info("starting {} (pid {}) for {} on {}", name(), pid, opts_.model_id, base_url());
  reader_ = std::thread([this, fd = pipes.output_read] { read_output(fd); });
  waiter_ = std::thread([this] { watch_child(); });
  return {};
}

error llama_server::load_failure() {
  // give the reader a moment to collect the last words
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::string why;
  {
    std::lock_guard lock(mu_);
    why = exit_description(exit_status_);
  }
  const engine::load_failure f = classify_load_failure(output_tail(k_output_tail_lines), false);
  std::string advice;  // appended, not " " + s + ".": g++ 12 warns a false -Wrestrict on that here
  if (!f.advice.empty()) {
    advice = " ";
    advice += upper_first(f.advice);
    advice += '.';
  }
  return make_error(errc::upstream_unavailable,
                    name() + " failed to load model " + opts_.model_id + ": it " + why + "." + advice +
                        " Last lines of its output:\n" + output_tail(k_error_quote_lines),
                    f.param, f.kind == load_failure_kind::unknown ? "" : to_string(f.kind));
}

result<void> llama_server::wait_until_healthy() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(opts_.load_timeout_s);
  const std::string health = base_url() + "/health";
  while (true) {
    if (exited_.load() || stopping_.load()) return fail(load_failure());
    const auto reply = http_client::get_blocking(health, {}, 1000);
    if (reply && reply->status == 200) return {};
    if (std::chrono::steady_clock::now() >= deadline) {
      stop();
      return fail(make_error(errc::upstream_unavailable,
                             name() + " did not load model " + opts_.model_id + " within " +
                                 std::to_string(opts_.load_timeout_s) +
                                 " s (--load-timeout); it was stopped. Last lines of its output:\n" +
                                 output_tail(k_error_quote_lines),
                             "", to_string(load_failure_kind::timed_out)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

result<void> llama_server::verify_api_key() {
  // Fail closed if the key did not take (a llama-server without --api-key-file, or a key file
  // emptied by someone else): it would serve anyone on this machine.
  const auto without_key = http_client::get_blocking(base_url() + "/v1/models", {}, 5000);
  const auto with_key = http_client::get_blocking(base_url() + "/v1/models", request_headers(), 5000);
  const auto status = [](const result<http_reply>& r) { return r ? std::to_string(r->status) : std::string("unreachable"); };
  if (without_key && without_key->status == 401 && with_key && with_key->status == 200) return {};
  if (stopping_.load()) {  // a shutdown while we asked
    return make_error(errc::upstream_unavailable, "stopped before llama-server was ready");
  }
  stop();
  return fail(make_error(errc::upstream_unavailable,
                         name() + " for " + opts_.model_id + " did not take its API key (GET /v1/models: " +
                             status(without_key) + " without it, " + status(with_key) +
                             " with it; want 401 and 200); it was stopped. Last lines of its output:\n" +
                             output_tail(k_error_quote_lines)));
}

void llama_server::read_caps() {
  model_caps caps{.native_tool_calls = false, .chatml_fallback = !has_chat_template_};
  const auto props = http_client::get_blocking(base_url() + "/props", request_headers(), 5000);
  std::optional<json> body = props && props->status == 200 ? parse_json(props->body) : std::nullopt;
  if (body && body->is_object()) {
    const json tc = body->value("chat_template_caps", json::object());
    caps.native_tool_calls = tc.is_object() && tc.value("supports_tool_calls", false) == true;
  } else {
    spdlog::warn("{}: GET /props did not answer; tool_choice \"required\" will be forced by warden", name());
  }
  {
    std::lock_guard lock(mu_);
    caps.gpu_offload = offload_;
  }
  spdlog::info("{}: chat template {} tool calls{}{}", name(), caps.native_tool_calls ? "renders" : "does not render",
               caps.chatml_fallback ? "; ChatML fallback, <|im_end|> added as a stop string" : "",
               caps.gpu_offload.empty() ? "" : "; offloaded " + caps.gpu_offload + " layers to the GPU");
  std::lock_guard lock(mu_);
  caps_ = caps;
}

model_caps llama_server::caps() const {
  std::lock_guard lock(mu_);
  return caps_;
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
      std::string offload = line.find("layers to GPU") != std::string::npos ? parse_offload(line) : std::string();
      std::lock_guard lock(mu_);
      if (!offload.empty()) offload_ = std::move(offload);
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
  if (status_.state() == upstream_state::ready && !stopping_.load()) {
    const std::string why = exit_description(status);
    // failed at once (requests stop going to it), then the message again with its last words
    set_state(upstream_state::failed, name() + " serving " + opts_.model_id + " " + why);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the reader drain
    const std::string msg = name() + " serving " + opts_.model_id + " " + why +
                            ". Last lines of its output:\n" + output_tail(k_error_quote_lines);
    spdlog::error("{}", msg);
    set_state(upstream_state::failed, msg);
  }
}

void llama_server::stop() {
  std::lock_guard stop_lock(stop_mu_);  // a second caller waits, then finds nothing left to do
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
  set_state(upstream_state::stopped, "stopped");  // refused when failed: the failure stays visible
}

}  // namespace warden::engine
