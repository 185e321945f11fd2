// The supervise part of a run (spawn.h): output, exit, timeout, cancel, kill, drain, reap.
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <tuple>

#include "sandbox/spawn.h"

namespace warden::sandbox::detail {

namespace {

namespace asio = boost::asio;
using clock = std::chrono::steady_clock;

/// What one wait saw. Every member is looked at, not only the first to complete.
struct woken {
  bool got_read = false;
  boost::system::error_code read_ec;
  std::size_t n = 0;
  bool exit_ready = false;
  bool timer_fired = false;
};

/// The loop of one run, on the caller's executor.
class supervisor {
 public:
  supervisor(asio::any_io_executor ex, spawned_child& child, const run_request& req, run_callbacks& cb)
      : child_(child), req_(req), cb_(cb), out_(ex, child.plan.out_read.release()), timer_(ex) {
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child.state->pid, 0));
    if (pidfd >= 0) exit_fd_.emplace(ex, pidfd);
    started_ = clock::now();
    deadline_ = req.timeout.count() > 0 ? started_ + req.timeout : clock::time_point::max();
    last_output_ = started_;
  }

  asio::awaitable<run_result> run();

 private:
  clock::time_point next_wake() const;
  asio::awaitable<woken> wait();
  asio::awaitable<void> take_output(std::size_t n);
  asio::awaitable<bool> on_timer(clock::time_point now);
  asio::awaitable<void> take_what_is_in_the_pipe();

  spawned_child& child_;
  const run_request& req_;
  run_callbacks& cb_;
  asio::posix::stream_descriptor out_;
  std::optional<asio::posix::stream_descriptor> exit_fd_;  ///< the pidfd; polled without one
  asio::steady_timer timer_;
  clock::time_point started_, deadline_, last_output_;
  std::optional<clock::time_point> exited_at_;
  bool eof_ = false;
  int status_ = 0;
  run_result res_;
  std::array<char, 16384> buf_{};
};

/// The next moment something has to happen without the child's help.
clock::time_point supervisor::next_wake() const {
  auto wake = res_.timed_out ? clock::time_point::max() : deadline_;
  if (cb_.on_idle && cb_.idle_interval.count() > 0) wake = std::min(wake, last_output_ + cb_.idle_interval);
  if (exited_at_) wake = std::min(wake, *exited_at_ + k_drain_grace);
  if (!exit_fd_ && !exited_at_) wake = std::min(wake, clock::now() + std::chrono::milliseconds(20));
  return wake;
}

/// Waits for output, the exit, or the timer. Every result of the group is looked at, not only the
/// first: a read that completed while the exit wait won still carries bytes that were taken out of
/// the pipe (asio's `a || b` would drop them: output lost on a loaded machine).
asio::awaitable<woken> supervisor::wait() {
  namespace exp = asio::experimental;
  const auto wait_read = asio::posix::descriptor_base::wait_read;
  auto happened = [](const boost::system::error_code& e) { return e != asio::error::operation_aborted; };
  woken w;
  if (!eof_ && !exited_at_ && exit_fd_) {
    auto [order, re, rn, ee, te] =
        co_await exp::make_parallel_group(out_.async_read_some(asio::buffer(buf_), asio::deferred),
                                          exit_fd_->async_wait(wait_read, asio::deferred),
                                          timer_.async_wait(asio::deferred))
            .async_wait(exp::wait_for_one(), asio::use_awaitable);
    std::tie(w.got_read, w.read_ec, w.n, w.exit_ready, w.timer_fired) =
        std::tuple(happened(re), re, rn, happened(ee), happened(te));
  } else if (!eof_) {
    auto [order, re, rn, te] =
        co_await exp::make_parallel_group(out_.async_read_some(asio::buffer(buf_), asio::deferred),
                                          timer_.async_wait(asio::deferred))
            .async_wait(exp::wait_for_one(), asio::use_awaitable);
    std::tie(w.got_read, w.read_ec, w.n, w.timer_fired) = std::tuple(happened(re), re, rn, happened(te));
  } else if (exit_fd_) {
    auto [order, ee, te] = co_await exp::make_parallel_group(exit_fd_->async_wait(wait_read, asio::deferred),
                                                             timer_.async_wait(asio::deferred))
                               .async_wait(exp::wait_for_one(), asio::use_awaitable);
    std::tie(w.exit_ready, w.timer_fired) = std::tuple(happened(ee), happened(te));
  } else {
    auto [e] = co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    w.timer_fired = happened(e);
  }
  co_return w;
}

/// One piece of output: counted, its head kept, passed on live.
asio::awaitable<void> supervisor::take_output(std::size_t n) {
  res_.output_bytes += n;
  if (res_.output.size() < req_.keep_output_bytes) {
    res_.output.append(buf_.data(), std::min(n, req_.keep_output_bytes - res_.output.size()));
  }
  if (cb_.on_output) co_await cb_.on_output(std::string_view(buf_.data(), n));
}

/// Something outside the group still holds the pipe. What the program wrote is already in it:
/// take that without waiting (on a loaded machine the grace timer can fire before the read that
/// was ready), up to k_drain_max_bytes.
asio::awaitable<void> supervisor::take_what_is_in_the_pipe() {
  boost::system::error_code rec;
  out_.non_blocking(true, rec);
  for (std::size_t taken = 0; !rec && taken < k_drain_max_bytes;) {
    const std::size_t got = out_.read_some(asio::buffer(buf_), rec);
    if (rec || got == 0) break;
    taken += got;
    co_await take_output(got);
  }
}

/// The timer fired: the deadline (kill the group), the end of the drain grace (take what is in
/// the pipe, then stop: true), or an idle interval (a keep-alive).
asio::awaitable<bool> supervisor::on_timer(clock::time_point now) {
  if (now >= deadline_ && !res_.timed_out && !exited_at_) {
    res_.timed_out = true;
    child_.state->kill_group();
  } else if (exited_at_ && now >= *exited_at_ + k_drain_grace) {
    co_await take_what_is_in_the_pipe();
    co_return true;
  } else if (cb_.on_idle && now >= last_output_ + cb_.idle_interval) {
    last_output_ = now;
    co_await cb_.on_idle();
  }
  co_return false;
}

asio::awaitable<run_result> supervisor::run() {
  while (!eof_ || !exited_at_) {
    timer_.expires_at(next_wake());
    const woken w = co_await wait();
    if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) {
      res_.cancelled = true;
      co_return std::move(res_);  // the guard kills and reaps
    }
    const auto now = clock::now();
    if (w.got_read) {
      if (w.read_ec || w.n == 0) {
        eof_ = true;
      } else {
        last_output_ = now;
        co_await take_output(w.n);
      }
    }
    if (!exited_at_ && (w.exit_ready || !exit_fd_)) {
      if (child_.state->try_reap(status_)) exited_at_ = now;
    }
    if (w.timer_fired) {
      const bool stop = co_await on_timer(now);
      if (stop) break;
    }
  }
  child_.guard.release();  // reaped
  if (WIFEXITED(status_)) {
    res_.exit_code = WEXITSTATUS(status_);
  } else if (WIFSIGNALED(status_)) {
    res_.term_signal = WTERMSIG(status_);
  }
  co_return std::move(res_);
}

/// What the start pipe holds now (its writers are gone once the child is reaped), at most 64 KiB.
std::string read_report(int fd) {
  std::string out;
  if (fd < 0) return out;
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  char buf[4096];
  while (out.size() < 65536) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace

asio::awaitable<run_result> supervise(spawned_child child, run_request req, std::shared_ptr<cancel_token> cancel,
                                      run_callbacks cb) {
  auto reg = cancel ? cancel->on_cancel([st = child.state] { st->kill_group(); }) : cancel_token::registration{};
  supervisor s(co_await asio::this_coro::executor, child, req, cb);
  run_result res = co_await s.run();
  const bool exited = res.exit_code >= 0 && res.term_signal == 0 && !res.cancelled;
  res.started = started_from_report(child.plan.jailed, read_report(child.plan.status_read.get()), exited);
  if (!res.cancelled && cancel && cancel->cancelled() && !res.timed_out) res.cancelled = true;
  if (child.plan.cgroup && child.plan.cgroup->memory_kills() > 0) {  // read before the folder goes
    res.memory_killed = true;
    res.memory_limit_bytes = child.plan.cgroup->memory_limit();
  }
  co_return res;
}

}  // namespace warden::sandbox::detail
