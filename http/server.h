// server — the HTTP/1.1 listener (Boost.Beast on asio coroutines). The only TU that includes
// Beast, so the rest of the code compiles fast.
//
// Each connection runs one coroutine on its own strand: read a request (header limit
// `k_max_header_bytes`, body limit `max_body_bytes` → 413, idle limit `k_read_timeout_s`),
// hand it to the router, repeat while keep-alive. While a handler runs, a second read watches
// the socket: EOF or reset means the client went away, and the handler is cancelled at once
// (for a stream that aborts the upstream request). Bytes of a pipelined next request seen by
// the watch are kept for the next read. Streams go out as chunked transfer encoding, one chunk
// per write, TCP_NODELAY on, so a token reaches the client as soon as it is written; to an
// HTTP/1.0 request (no chunked encoding) as an identity body that ends when warden closes the
// connection.
// Before any body is read, the head is judged: Transfer-Encoding (400 unless chunked; chunked →
// 411, send Content-Length), a body on GET/HEAD/OPTIONS (400), then router::screen (Host, Origin,
// route — a known path's other method is 405 with Allow, a PUT or PATCH too —, key, Content-Type),
// then a body on any method but POST (400). A refused request with a body pending is answered with
// `Connection: close`, and what the client still sends is read and dropped (2 s, 64 MiB at most)
// so the close does not reset the connection before the answer is read.
// A handler that throws gets a 500 envelope (or an in-band error once streaming), never a crash.
// Thread-safety: listen()/start() once from the main thread; everything else runs on the
// io_context.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "http/router.h"

namespace warden::http {

/// Largest request head (request line + headers).
inline constexpr std::uint32_t k_max_header_bytes = 64 * 1024;
/// A connection idle this long between requests (or mid-request) is closed.
inline constexpr int k_read_timeout_s = 120;

struct server_options {
  std::string host = "127.0.0.1";
  int port = 8888;                     ///< 0 = any free port
  std::uint64_t max_body_bytes = 32u << 20;
};

/// True when binding `host` exposes warden to this machine only: a 127.0.0.0/8 or ::1 literal,
/// or a name that resolves to loopback addresses only ("localhost"). 0.0.0.0, :: and any other
/// address or name are network exposure (issue 8: then an API key is required).
bool binds_loopback_only(const std::string& host);

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

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace warden::http
