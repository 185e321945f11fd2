// server — the HTTP/1.1 listener (Boost.Beast on asio coroutines). With head_screen.cpp (the
// judgement of a request head, head_screen.h) the only TUs that include Beast, so the rest of the
// code compiles fast.
//
// Each connection runs one coroutine on its own strand: read a request (header limit
// `k_max_header_bytes`, the head within `header_timeout_s` of the read starting, idle time
// between keep-alive requests included; body limit `max_body_bytes` → 413, the body within
// `k_read_timeout_s`),
// hand it to the router, repeat while keep-alive. While a handler runs, a second read watches
// the socket: EOF or reset means the client went away, and the handler is cancelled at once
// (for a stream that aborts the upstream request). Bytes of a pipelined next request seen by
// the watch are kept for the next read. Streams go out as chunked transfer encoding, one chunk
// per write, TCP_NODELAY on, so a token reaches the client as soon as it is written; to an
// HTTP/1.0 request (no chunked encoding) as an identity body that ends when warden closes the
// connection.
// Before any body is read, the head is judged (head_screen.h judge_head): Transfer-Encoding (400 unless chunked; chunked →
// 411, send Content-Length), a body on GET/HEAD/OPTIONS (400), then router::screen (Host, Origin,
// route — a known path's other method is 405 with Allow, a PUT or PATCH too —, key, Content-Type),
// then a body on any method but POST and PUT (400). A refused request with a body pending is answered with
// `Connection: close`, and what the client still sends is read and dropped (2 s, 64 MiB at most)
// so the close does not reset the connection before the answer is read.
// Budgets (issue 23, part 2), so that idle or slow clients cannot stop warden serving:
//   - open connections: at most `max_connections` general ones. Past that, up to
//     `k_reserved_connections` more are served one request each, with a head timeout of
//     `k_reserved_header_timeout_s`, and only on `reserved_paths` (/health, tool-confirm, the
//     approvals inbox, cancel: app/serve.cpp); any other request there gets 503 with
//     `Retry-After: 1` and `Connection: close`. Past both, a new connection is closed at once.
//   - request bodies: the Content-Length of every body being read or held by a running handler
//     counts against `max_pending_body_bytes`; a request that would pass it gets 503 with
//     `Retry-After: 1` before its body is read.
// A handler that throws gets a 500 envelope (or an in-band error once streaming), never a crash.
// Thread-safety: listen()/start() once from the main thread; everything else runs on the
// io_context.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "http/router.h"

namespace warden::http {

/// Largest request head (request line + headers).
inline constexpr std::uint32_t k_max_header_bytes = 64 * 1024;
/// A request body must arrive within this long of its head.
inline constexpr int k_read_timeout_s = 120;
/// Connections past max_connections served for reserved_paths only, one request each.
inline constexpr std::size_t k_reserved_connections = 64;
/// The head timeout of such a connection.
inline constexpr int k_reserved_header_timeout_s = 2;

struct server_options {
  std::string host = "127.0.0.1";
  int port = 8888;                     ///< 0 = any free port
  std::uint64_t max_body_bytes = 32u << 20;
  /// A request head (request line and headers) must arrive within this many seconds of the read
  /// starting; an idle keep-alive connection is closed after it (--header-timeout).
  int header_timeout_s = 10;
  /// General connections open at once (--max-connections); 0 = derived from the open-file
  /// limit (RLIMIT_NOFILE's soft value less a reserve for everything else, at least 64).
  std::size_t max_connections = 0;
  /// Bytes of request bodies being read or held by running handlers (--max-pending-body).
  std::uint64_t max_pending_body_bytes = 256u << 20;
  /// Paths served past max_connections (exact match on the path, any method the route takes).
  std::vector<std::string> reserved_paths;
};

/// Raises the soft open-file limit (RLIMIT_NOFILE) to the hard one; returns the soft limit in
/// force afterwards. Called once at start-up, before anything opens files.
std::uint64_t raise_open_file_limit() noexcept;

/// The connection cap for `max_connections` = 0: the soft open-file limit less 192 (128 for the
/// database, the upstream's sockets and sandbox pipes, and the k_reserved_connections), at
/// least 64.
std::size_t default_max_connections() noexcept;

/// True when binding `host` exposes warden to this machine only: a 127.0.0.0/8 or ::1 literal,
/// or a name that resolves to loopback addresses only ("localhost"). 0.0.0.0, :: and any other
/// address or name are network exposure (issue 8: then an API key is required).
bool binds_loopback_only(const std::string& host);

/// What the server holds right now (server::stats; the soak's leak check, `GET /api/debug/counts`).
struct server_stats {
  std::uint64_t connections_open = 0;    ///< accepted and not yet closed, both lanes
  std::uint64_t handlers_running = 0;    ///< requests whose route handler has not returned
  std::uint64_t pending_body_bytes = 0;  ///< Content-Length of bodies being read or held (--max-pending-body)
};

class server {
 public:
  server(boost::asio::io_context& ioc, server_options opts, router& r);
  ~server();

  /// Binds and listens; returns the bound port. Errors: errc::invalid_request naming the
  /// address (a --host that does not resolve, a port that cannot be bound).
  result<int> listen();
  /// Starts accepting (after listen()).
  void start();
  /// Stops accepting new connections.
  void stop();
  /// The counts now. Thread-safe (atomic reads; the three are not one snapshot).
  server_stats stats() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace warden::http
