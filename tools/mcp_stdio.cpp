// The stdio transport (mcp_transports.h).
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <cerrno>
#include <mutex>
#include <thread>

#include "tools/mcp_transports.h"

namespace warden::tools::mcp {

namespace {

constexpr std::size_t k_max_line = 16u << 20;
constexpr std::size_t k_stderr_tail = 4096;
/// Messages waiting for a server that does not read its input, at most (then send() fails).
constexpr std::size_t k_max_queued_bytes = 64u << 20;

class stdio_transport final : public transport {
 public:
  stdio_transport(std::unique_ptr<sandbox::service_process> p, std::string label) : proc_(std::move(p)), label_(std::move(label)) {
    const int fl = ::fcntl(proc_->stdin_fd(), F_GETFL);
    ::fcntl(proc_->stdin_fd(), F_SETFL, fl | O_NONBLOCK);
  }
  ~stdio_transport() override { close(); }

  void start(message_fn on_message, closed_fn on_closed) override {
    on_message_ = std::move(on_message);
    on_closed_ = std::move(on_closed);
    err_reader_ = std::thread([this] {
      in_transport_thread = true;
      read_stderr();
    });
    reader_ = std::thread([this] {
      in_transport_thread = true;
      read_stdout();
    });
    writer_ = std::thread([this] {
      in_transport_thread = true;
      write_loop();
    });
  }

  /// Queues the line for the writer thread: never blocks the caller (an io thread).
  result<void> send(const json& msg) override {
    std::string line = msg.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::lock_guard lk(queue_mu_);
    if (closing_.load() || write_failed_) {
      return make_error(errc::upstream_unavailable, "could not write to the MCP server " + label_ + ": it has exited");
    }
    if (queued_bytes_ + line.size() > k_max_queued_bytes) {
      return make_error(errc::upstream_unavailable, "the MCP server " + label_ + " does not read its input");
    }
    queued_bytes_ += line.size();
    queue_.push_back(std::move(line));
    queue_cv_.notify_one();
    return {};
  }

  void close() override {
    if (closing_.exchange(true)) return;
    {
      std::lock_guard lk(queue_mu_);
      queue_cv_.notify_all();
    }
    proc_->kill();
    join(writer_);
    join(reader_);
    join(err_reader_);
  }

  std::string diagnostics() const override {
    std::lock_guard lk(err_mu_);
    return err_tail_;
  }

 private:
  static void join(std::thread& t) {
    if (!t.joinable()) return;
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();  // the last owner let go on this very thread
    } else {
      t.join();
    }
  }

  /// Writes queued lines in order; a server that stops reading holds only this thread.
  void write_loop() {
    while (true) {
      std::string line;
      {
        std::unique_lock lk(queue_mu_);
        queue_cv_.wait(lk, [&] { return closing_.load() || !queue_.empty(); });
        if (closing_.load()) return;
        line = std::move(queue_.front());
        queue_.pop_front();
        queued_bytes_ -= line.size();
      }
      if (!write_all(line)) {
        std::lock_guard lk(queue_mu_);
        write_failed_ = true;
        return;
      }
    }
  }

  bool write_all(const std::string& line) {
    std::size_t off = 0;
    while (off < line.size() && !closing_.load()) {
      const ssize_t n = ::write(proc_->stdin_fd(), line.data() + off, line.size() - off);
      if (n > 0) {
        off += static_cast<std::size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        pollfd p{proc_->stdin_fd(), POLLOUT, 0};
        ::poll(&p, 1, 100);
      } else {
        return false;  // EPIPE: it exited (the reader reports that)
      }
    }
    return off == line.size();
  }

  void read_stdout() {
    std::string buf;
    char chunk[65536];
    std::string why;
    while (true) {
      const ssize_t n = ::read(proc_->stdout_fd(), chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      buf.append(chunk, static_cast<std::size_t>(n));
      std::size_t start = 0;
      for (std::size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
        deliver(std::string_view(buf).substr(start, nl - start));
      }
      buf.erase(0, start);
      if (buf.size() > k_max_line) {
        why = "the MCP server " + label_ + " wrote a line over 16 MiB";
        proc_->kill();
        break;
      }
    }
    if (why.empty()) why = exit_message();
    if (!closing_.load() && on_closed_) on_closed_(why);
  }

  void deliver(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) return;
    json m = json::parse(line, nullptr, false);
    if (m.is_object()) m.erase(k_related_request);  // only the HTTP transport may say that
    if (m.is_discarded()) {
      spdlog::debug("MCP {}: ignored a stdout line that is not JSON: {}", label_, std::string(line.substr(0, 200)));
      return;
    }
    if (m.is_array()) {  // a batch (2025-03-26) from an older server
      for (auto& one : m) {
        if (one.is_object()) one.erase(k_related_request);
        on_message_(std::move(one));
      }
      return;
    }
    on_message_(std::move(m));
  }

  std::string exit_message() {
    std::optional<int> status;
    for (int i = 0; i < 100 && !status; ++i) {  // the pipe closed: the exit follows within ms
      status = proc_->exited();
      if (!status) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::string msg = "the MCP server " + label_ + " exited";
    if (status && *status >= 0) msg += " (status " + std::to_string(*status) + ")";
    std::string tail = diagnostics();
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
    if (!tail.empty()) msg += ": " + tail.substr(tail.size() > 600 ? tail.size() - 600 : 0);
    return msg;
  }

  void read_stderr() {
    char chunk[4096];
    while (true) {
      const ssize_t n = ::read(proc_->stderr_fd(), chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      std::lock_guard lk(err_mu_);
      err_tail_.append(chunk, static_cast<std::size_t>(n));
      if (err_tail_.size() > k_stderr_tail) err_tail_.erase(0, err_tail_.size() - k_stderr_tail);
    }
  }

  std::unique_ptr<sandbox::service_process> proc_;
  std::string label_;
  message_fn on_message_;
  closed_fn on_closed_;
  std::thread reader_, err_reader_, writer_;
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  bool write_failed_ = false;
  mutable std::mutex err_mu_;
  std::string err_tail_;
  std::atomic<bool> closing_{false};
};

}  // namespace

std::unique_ptr<transport> make_stdio_transport(std::unique_ptr<sandbox::service_process> proc, std::string label) {
  return std::make_unique<stdio_transport>(std::move(proc), std::move(label));
}

}  // namespace warden::tools::mcp
