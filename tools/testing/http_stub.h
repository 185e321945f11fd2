// http_stub — a tiny HTTP/1.1 server for the fetch tests: one thread, loopback (IPv4 or IPv6),
// one request per connection, answers from a table of path → canned response; counts requests.
// Test-only; not a model of a real server beyond what the fetcher reads (status line, headers,
// body, Connection: close).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace warden::tools::testing {

struct stub_response {
  int status = 200;
  std::string headers;  ///< extra header lines, each ending in \r\n
  std::string body;
};

class http_stub {
 public:
  explicit http_stub(bool ipv6 = false) {
    fd_ = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket");
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ipv6) {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_loopback;
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("bind");
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("bind");
    }
    ::listen(fd_, 16);
    sockaddr_storage got{};
    socklen_t len = sizeof got;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&got), &len);
    port_ = ntohs(ipv6 ? reinterpret_cast<sockaddr_in6*>(&got)->sin6_port : reinterpret_cast<sockaddr_in*>(&got)->sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~http_stub() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  http_stub(const http_stub&) = delete;
  http_stub& operator=(const http_stub&) = delete;

  int port() const { return port_; }
  void route(const std::string& path, stub_response r) {
    std::lock_guard lk(mu_);
    routes_[path] = std::move(r);
  }
  int hits(const std::string& path) {
    std::lock_guard lk(mu_);
    return counts_[path];
  }
  /// The last request's head (request line and headers) for `path`.
  std::string last_request(const std::string& path) {
    std::lock_guard lk(mu_);
    return heads_[path];
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      answer(c);
      ::close(c);
    }
  }
  void answer(int c) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos && req.size() < 65536) {
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, 2000) <= 0) return;
      ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) return;
      req.append(buf, static_cast<std::size_t>(n));
    }
    const auto sp1 = req.find(' ');
    const auto sp2 = req.find(' ', sp1 + 1);
    std::string path = req.substr(sp1 + 1, sp2 - sp1 - 1);
    stub_response r{404, "", "not found"};
    {
      std::lock_guard lk(mu_);
      ++counts_[path];
      heads_[path] = req.substr(0, req.find("\r\n\r\n"));
      if (auto it = routes_.find(path); it != routes_.end()) r = it->second;
    }
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " X\r\nContent-Length: " + std::to_string(r.body.size()) +
                      "\r\nConnection: close\r\n" + r.headers + "\r\n" + r.body;
    std::size_t off = 0;
    while (off < out.size()) {
      ssize_t n = ::send(c, out.data() + off, out.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::map<std::string, stub_response> routes_;
  std::map<std::string, int> counts_;
  std::map<std::string, std::string> heads_;
  std::thread thread_;
};

}  // namespace warden::tools::testing
