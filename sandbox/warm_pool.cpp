// Warm jails (warm_pool.h): the stub, the go message, and the pool.
#include "sandbox/warm_pool.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace warden::sandbox::detail {

namespace {

/// bash, reading the message from fd 6 (k_go_fd). `read -d ''` stops at each NUL; a read that
/// hits end of file returns non-zero, which ends the loop (every string ends with a NUL).
constexpr const char* k_stub_script =
    "printf r >&6 || exit 125\n"
    "IFS= read -r -d '' f <&6 || exit 125\n"
    "a=()\n"
    "while IFS= read -r -d '' x <&6; do a+=(\"$x\"); done\n"
    "exec 6<&-\n"
    "[ \"${#a[@]}\" -gt 0 ] || exit 125\n"
    "ulimit -f \"$f\" || exit 125\n"
    "unset f x\n"
    "exec \"${a[@]}\"\n"
    "exit 125\n";

}  // namespace

std::vector<std::string> warm_stub_argv() { return {"/bin/bash", "--noprofile", "--norc", "-c", k_stub_script, "warden-warm"}; }

std::string go_message(const std::vector<std::string>& argv, rlim_t max_file_bytes) {
  std::string m = std::to_string(max_file_bytes / 1024);
  m.push_back('\0');
  for (const auto& a : argv) {
    m.append(a.data(), std::min(a.size(), a.find('\0')));
    m.push_back('\0');
  }
  return m;
}

bool send_go(spawned_child& child, const std::string& message) {
  const int fd = child.plan.go_parent.get();
  if (fd < 0 || has_exited(child)) return false;
  std::size_t off = 0;
  while (off < message.size()) {
    const ssize_t n = ::send(fd, message.data() + off, message.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  child.plan.go_parent.reset();  // end of file: the stub's loop ends
  return true;
}

bool wait_ready(spawned_child& child, std::chrono::milliseconds timeout) {
  const int fd = child.plan.go_parent.get();
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    char c = 0;
    return ::recv(fd, &c, 1, MSG_DONTWAIT) == 1 && c == 'r';
  }
}

bool has_exited(const spawned_child& child) {
  std::lock_guard lk(child.state->mu);
  if (child.state->reaped) return true;
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(child.state->pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == child.state->pid;
}

warm_pool::warm_pool(std::size_t max_jails, std::chrono::seconds idle) : max_jails_(max_jails), idle_(idle) {}

void warm_pool::expire_locked(std::vector<entry>& out) {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = jails_.begin(); it != jails_.end();) {
    if (now - it->second.made > idle_ || has_exited(it->second.jail)) {
      out.push_back(std::move(it->second));
      it = jails_.erase(it);
    } else {
      ++it;
    }
  }
}

std::optional<spawned_child> warm_pool::take(const std::string& workdir) {
  std::vector<entry> dropped;  // killed and reaped after the lock is released
  std::optional<entry> got;
  {
    std::lock_guard lk(mu_);
    expire_locked(dropped);
    auto it = jails_.find(workdir);
    if (it == jails_.end()) return std::nullopt;
    got.emplace(std::move(it->second));
    jails_.erase(it);
  }
  struct stat st {};
  if (::stat(workdir.c_str(), &st) != 0 || st.st_dev != got->dev || st.st_ino != got->ino) return std::nullopt;
  return std::move(got->jail);
}

bool warm_pool::begin_fill(const std::string& workdir) {
  std::lock_guard lk(mu_);
  if (closed_ || max_jails_ == 0 || filling_.count(workdir) || jails_.count(workdir)) return false;
  filling_.insert(workdir);
  return true;
}

void warm_pool::end_fill(const std::string& workdir, std::optional<spawned_child> jail, dev_t dev, ino_t ino) {
  std::vector<entry> dropped;
  std::lock_guard lk(mu_);
  filling_.erase(workdir);
  if (!jail) return;
  if (closed_) {
    dropped.push_back({std::move(*jail), dev, ino, {}});
    return;
  }
  expire_locked(dropped);
  while (jails_.size() >= max_jails_ && !jails_.empty()) {
    auto oldest = std::min_element(jails_.begin(), jails_.end(),
                                   [](const auto& a, const auto& b) { return a.second.made < b.second.made; });
    dropped.push_back(std::move(oldest->second));
    jails_.erase(oldest);
  }
  jails_.emplace(workdir, entry{std::move(*jail), dev, ino, std::chrono::steady_clock::now()});
}

void warm_pool::close() {
  std::map<std::string, entry> dropped;
  std::lock_guard lk(mu_);
  closed_ = true;
  dropped.swap(jails_);
}

std::size_t warm_pool::size() {
  std::vector<entry> dropped;
  std::lock_guard lk(mu_);
  expire_locked(dropped);
  return jails_.size();
}

bool warm_pool::ready(const std::string& workdir) {
  std::vector<entry> dropped;
  std::lock_guard lk(mu_);
  expire_locked(dropped);
  return jails_.count(workdir) > 0;
}

}  // namespace warden::sandbox::detail
