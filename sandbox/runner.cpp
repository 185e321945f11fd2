// The `sandbox` object (runner.h): policy, availability, and run() = start, then supervise
// (spawn.h).
#include "sandbox/runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <cerrno>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>

#include "common/blocking_pool.h"
#include "common/metrics.h"
#include "sandbox/bwrap.h"
#include "sandbox/spawn.h"
#include "sandbox/warm_pool.h"

namespace warden::sandbox {

namespace asio = boost::asio;

std::string unavailable_message(const sandbox_status& st) {
  return "the tool sandbox is unavailable: " + st.detail + ". Fix: " + st.fix +
         ". To run tools without it, the request must say so explicitly with bypass_permissions: true.";
}

void hand_over(const std::string& path) {
  // A root server runs the jail as uid 65534 outside too: the workspace must be its own.
  if (::geteuid() == 0) {
    if (::lchown(path.c_str(), k_sandbox_uid, k_sandbox_gid) != 0) {
      // the run then fails inside the jail with a clear permission error
    }
  }
}

std::optional<std::string> not_started_reason(const run_result& r) {
  if (r.failure) return r.failure->message;
  if (r.started || r.cancelled || r.timed_out) return std::nullopt;
  std::string out = r.output.substr(0, 2000);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return "the program was not started: " + (out.empty() ? std::string("no message") : out);
}

std::vector<std::string> sandbox_env(const std::string& home) {
  return {
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "HOME=" + home,
      "TMPDIR=" + home,
      "PYTHONNOUSERSITE=1",
      "LANG=C.UTF-8",
      "TERM=dumb",
      "PYTHONIOENCODING=utf-8",
      "PYTHONUNBUFFERED=1",
      "MPLBACKEND=Agg",
  };
}

namespace {

run_result failed_run(error e) {
  run_result r;
  r.failure = std::move(e);
  return r;
}

run_result cancelled_run() {
  run_result r;
  r.cancelled = true;
  return r;
}

/// A run without the availability check (the probe's own run): start, then supervise.
asio::awaitable<run_result> start_and_supervise(run_request req, const sandbox_policy& policy,
                                                std::shared_ptr<cancel_token> cancel, run_callbacks cb) {
  auto child = detail::start(req, policy);
  if (!child) co_return failed_run(std::move(child).error());
  co_return co_await detail::supervise(std::move(*child), std::move(req), std::move(cancel), std::move(cb));
}

/// The answer of the probe's run.
sandbox_status probe_answer(const run_result& r, const std::string& bwrap) {
  sandbox_status st;
  if (r.failure) {
    st.detail = r.failure->message;
    st.fix = "see the message";
  } else if (r.exit_code != 0) {
    std::string out = r.output;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    st.detail = "bubblewrap could not start a jail (exit " + std::to_string(r.exit_code) + "): " +
                (out.empty() ? "no message" : out);
    st.fix = "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and "
             "user.max_user_namespaces > 0); in a container, run it with user namespaces allowed";
  } else {
    st.available = true;
    st.detail = "bubblewrap at " + bwrap + ": user/pid/net/ipc/uts namespaces, uid 65534, seccomp";
  }
  return st;
}

/// Runs the probe program in the jail, in a folder of its own, on this thread.
sandbox_status probe_jail(const sandbox_policy& policy) {
  char tmpl[] = "/tmp/warden-probe-XXXXXX";
  const char* dir = ::mkdtemp(tmpl);
  if (!dir) {
    return {false, std::string("cannot create a probe folder: ") + std::strerror(errno), "make /tmp writable"};
  }
  hand_over(dir);
  run_request req;
  req.argv = {"/bin/sh", "-c", "test \"$(id -u)\" = 65534 && test -w /workspace && ! test -e /root"};
  req.workdir = dir;
  req.timeout = std::chrono::seconds(20);
  asio::io_context ioc;
  auto fut = asio::co_spawn(ioc, start_and_supervise(std::move(req), policy, nullptr, {}), asio::use_future);
  ioc.run();
  const run_result r = fut.get();
  ::rmdir(dir);
  return probe_answer(r, policy.bwrap_path);
}

}  // namespace

namespace {
/// How long a warm jail may take to be built before it is given up (a cold one would be no
/// faster then); bubblewrap takes ~10 ms here, seconds only on a machine in trouble.
constexpr std::chrono::milliseconds k_warm_ready_timeout{5000};
}  // namespace

sandbox::sandbox(sandbox_policy p, warden::blocking_pool* pool)
    : policy_(std::move(p)), pool_(pool), warm_(std::make_unique<detail::warm_pool>(policy_.warm_jails, policy_.warm_idle)) {
  // Warm jails are built on a thread of their own: waiting for one to be ready (~10 ms) never
  // delays the shared pool's work (cold starts, SQLite). Its jails get SIGKILL when it ends
  // (PR_SET_PDEATHSIG): it lives as long as this object, which outlives its runs.
  if (pool_ && policy_.warm_jails > 0) {
    fill_pool_ = std::make_unique<warden::blocking_pool>(1);
    sweeper_ = std::thread([this] { sweep_idle(); });
  }
}

sandbox::~sandbox() {
  {
    std::lock_guard lk(sweep_mu_);
    closing_ = true;
  }
  sweep_cv_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
  warm_->close();                      // a jail made from here on is dropped, none is started
  if (fill_pool_) fill_pool_->stop();  // waits for the one being made
}

void sandbox::sweep_idle() {
  // A quarter of the idle time between looks: a warm jail goes at most 1.25 × warm_idle after
  // it was made, whether or not anything else happens.
  const auto every = std::max<std::chrono::milliseconds>(policy_.warm_idle / 4, std::chrono::milliseconds(50));
  std::unique_lock lk(sweep_mu_);
  while (!sweep_cv_.wait_for(lk, every, [this] { return closing_; })) {
    lk.unlock();
    warm_->size();  // drops the expired and the dead
    lk.lock();
  }
}

std::size_t sandbox::warm_jails() { return warm_->size(); }

bool sandbox::prewarm(const std::string& workdir) {
  if (policy_.warm_jails == 0 || !status().available) return false;
  if (warm_->begin_fill(workdir)) {
    struct stat st {};
    std::optional<detail::spawned_child> jail;
    if (::stat(workdir.c_str(), &st) == 0) {
      run_request stub;
      stub.argv = detail::warm_stub_argv();
      stub.workdir = workdir;
      auto c = detail::start(stub, policy_, true);
      if (!c) {
        spdlog::warn("warm jail for {} not made ({}); its next call starts cold", workdir, c.error().message);
      } else if (!detail::wait_ready(*c, k_warm_ready_timeout)) {
        spdlog::warn("warm jail for {} not ready within {} ms; its next call starts cold", workdir,
                     k_warm_ready_timeout.count());
      } else {
        jail.emplace(std::move(*c));
      }
    }
    warm_->end_fill(workdir, std::move(jail), st.st_dev, st.st_ino);
  }
  return warm_->ready(workdir);
}

void sandbox::refill(const std::string& workdir) {
  if (!fill_pool_) return;
  fill_pool_->post([this, workdir]() noexcept {
    try {
      prewarm(workdir);
    } catch (...) {  // out of memory: the next call runs cold
    }
  });
}

std::optional<result<detail::spawned_child>> sandbox::take_warm(const run_request& req) {
  if (!fill_pool_ || req.mode != isolation::sandboxed) return std::nullopt;
  // Too long for the stub (warm_pool.h): cold, and the warm jail stays for the next call.
  if (detail::go_message(req.argv, RLIM_INFINITY).size() > detail::k_warm_max_message) return std::nullopt;
  auto jail = warm_->take(req.workdir);
  if (!jail) return std::nullopt;
  // The quota of this moment (spawn.h, as a cold start checks it): the stub lowers the jail's
  // file-size limit to it; a jail made with a lower one is not used.
  auto limit = detail::file_limit_for(req.workdir, policy_);
  if (!limit) return result<detail::spawned_child>(limit.error());
  if (*limit > jail->plan.max_file_bytes) return std::nullopt;
  const std::string go = detail::go_message(req.argv, *limit);
  if (!detail::send_go(*jail, go)) {
    spdlog::warn("warm jail for {} could not take its call (it exited); the call starts cold", req.workdir);
    return std::nullopt;
  }
  jail->plan.max_file_bytes = *limit;
  return result<detail::spawned_child>(std::move(*jail));
}

const sandbox_policy& sandbox::policy() const noexcept { return policy_; }

sandbox_status sandbox::probe() {
  sandbox_status st;
  if (::access(policy_.bwrap_path.c_str(), X_OK) != 0) {
    st.detail = "bubblewrap not found at " + policy_.bwrap_path;
    st.fix = "install it (apt-get install bubblewrap) or pass --bwrap PATH";
  } else {
    st = probe_jail(policy_);
  }
  std::lock_guard lk(mu_);
  status_ = st;
  return st;
}

sandbox_status sandbox::status() {
  {
    std::lock_guard lk(mu_);
    if (status_) return *status_;
  }
  std::lock_guard probing(probe_mu_);  // concurrent first users wait for one probe
  {
    std::lock_guard lk(mu_);
    if (status_) return *status_;
  }
  return probe();
}

namespace {
/// warden_sandbox_start_seconds: from a jailed call's start until its jail's process exists (a
/// cold bubblewrap start, or a warm jail taken); the program's own run is not in it.
void observe_start(std::chrono::steady_clock::time_point asked_at, bool warm) {
  static std::once_flag described;
  std::call_once(described, [] {
    metrics::global().describe("warden_sandbox_start_seconds", "histogram",
                               "Time to start a tool call's jail (bubblewrap), until its process exists; warm: a "
                               "jail started ahead of the call was taken (--warm-jails)");
  });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked_at).count();
  metrics::global().observe("warden_sandbox_start_seconds", {{"warm", warm ? "true" : "false"}}, s);
}
}  // namespace

asio::awaitable<run_result> sandbox::run(run_request req, std::shared_ptr<cancel_token> cancel, run_callbacks cb) {
  if (req.argv.empty()) co_return failed_run(make_error(errc::internal, "nothing to run"));
  if (cancel && cancel->cancelled()) co_return cancelled_run();
  const auto asked_at = std::chrono::steady_clock::now();
  // Blocking: the first status() probes, prepare touches the file system, fork copies the
  // page tables. On the pool when there is one.
  auto start = [this, req]() -> result<detail::spawned_child> {
    if (req.mode == isolation::sandboxed) {
      const sandbox_status st = status();
      if (!st.available) return make_error(errc::internal, unavailable_message(st));
    }
    if (auto warm = take_warm(req)) return std::move(*warm);
    return detail::start(req, policy_);
  };
  std::optional<result<detail::spawned_child>> child;
  if (!pool_) {
    child.emplace(start());
  } else {
    try {
      child.emplace(co_await pool_->run_blocking(std::move(start)));
    } catch (const std::exception& e) {  // the pool is stopped (shutdown)
      co_return failed_run(make_error(errc::internal, std::string("could not start the tool process: ") + e.what()));
    }
  }
  if (!*child) co_return failed_run(std::move(*child).error());
  const std::string workdir = req.workdir;
  const bool jailed = req.mode == isolation::sandboxed;
  const bool warm = (*child)->plan.warm;
  if (jailed) observe_start(asked_at, warm);
  run_result r = co_await detail::supervise(std::move(**child), std::move(req), std::move(cancel), std::move(cb));
  r.warm = warm;
  if (jailed) refill(workdir);  // the next call in this workspace finds its jail started
  co_return r;
}

}  // namespace warden::sandbox
