#include "http/server.h"

#include "common/ids.h"
#include "common/metrics.h"
#include "http/head_screen.h"

#include <boost/asio/as_tuple.hpp>
#include <sys/resource.h>
#include <malloc.h>
#include <sys/socket.h>

#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>


namespace warden::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using namespace asio::experimental::awaitable_operators;

namespace {

/// The `route` label of a request's metrics: at most three path segments, and a segment holding a
/// digit or longer than 40 characters (an id, a model name) as "{id}" ("/v1" stays), so the label
/// set stays small; "other" for a path no route answered (404).
std::string route_label(std::string_view path, int status) {
  if (status == 404) return "other";
  std::string out;
  std::size_t segments = 0;
  std::size_t at = 1;
  while (at <= path.size() && segments < 3) {
    std::size_t end = path.find('/', at);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view seg = path.substr(at, end - at);
    if (seg.empty()) break;
    const bool id = seg.size() > 40 || (segments > 0 && seg.find_first_of("0123456789") != std::string_view::npos);
    out += "/" + (id ? std::string("{id}") : std::string(seg));
    ++segments;
    at = end + 1;
  }
  return out.empty() ? "/" : out;
}

/// Counts a finished request (status 499: the client left first) and its duration (0 for one
/// refused at its head, before any body was read).
void record_request(const std::string& method, std::string_view path, int status, double ms) {
  static std::once_flag described;
  auto& m = metrics::global();
  std::call_once(described, [&m] {
    m.describe("warden_http_requests_total", "counter", "HTTP requests answered, by route, method and status.");
    m.describe("warden_http_request_duration_seconds", "histogram",
               "Time from a request's body read to its handler's return, by route (a stream: its whole length).");
  });
  const std::string route = route_label(path, status);
  m.add("warden_http_requests_total", {{"route", route}, {"method", method}, {"status", std::to_string(status)}});
  m.observe("warden_http_request_duration_seconds", {{"route", route}}, ms / 1000.0);
}


constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);
/// Pause after a failed accept (e.g. out of file descriptors) before trying again.
constexpr int k_accept_backoff_ms = 250;

/// How long, and how many bytes at most, a refused request's body is read and dropped before
/// the connection is closed (see discard_input).
constexpr int k_discard_ms = 2000;
constexpr std::uint64_t k_discard_max_bytes = 64u << 20;

/// The server's shared counts. Owned jointly by the server and every connection, since a
/// connection's coroutine frame can outlive the server (the io_context destroys the frames it
/// still holds after the server is gone, and their holds give their counts back then).
struct shared_counts {
  std::atomic<std::uint64_t> open_general{0};   ///< general connections open now
  std::atomic<std::uint64_t> open_reserved{0};  ///< reserved-lane connections open now
  std::atomic<std::uint64_t> pending_body{0};   ///< Content-Length of bodies read or held now
  std::atomic<std::uint64_t> handlers_running{0};  ///< route handlers started and not returned
};

/// Gives `n` back to one of the shared counts when destroyed (the taker added it: try_take).
class count_hold {
 public:
  using member = std::atomic<std::uint64_t> shared_counts::*;
  count_hold(std::shared_ptr<shared_counts> counts, member which, std::uint64_t n)
      : counts_(std::move(counts)), which_(which), n_(n) {}
  count_hold(const count_hold&) = delete;
  count_hold& operator=(const count_hold&) = delete;
  ~count_hold() { ((*counts_).*which_).fetch_sub(n_); }

 private:
  std::shared_ptr<shared_counts> counts_;
  member which_;
  std::uint64_t n_;
};

/// Adds `n` to `count` unless that would pass `limit`; true when added.
bool try_take(std::atomic<std::uint64_t>& count, std::uint64_t n, std::uint64_t limit) {
  std::uint64_t now = count.load();
  do {
    if (now + n > limit) return false;
  } while (!count.compare_exchange_weak(now, now + n));
  return true;
}

class beast_writer final : public response_writer {
 public:
  /// Every response carries `request-id: <request_id>` (a fresh id when "" is given).
  beast_writer(beast::tcp_stream& stream, bool keep_alive, unsigned version, bool head_only, std::string request_id)
      : stream_(stream), keep_alive_(keep_alive), version_(version), head_only_(head_only),
        request_id_(request_id.empty() ? ids::new_id(ids::kind::request) : std::move(request_id)) {}
  const std::string& request_id() const { return request_id_; }

  asio::awaitable<bool> send(int status, std::string content_type, std::string body) override {
    if (started_) co_return false;
    started_ = true;
    status_ = status;
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(status), version_};
    res.set(bhttp::field::server, "warden");
    if (!content_type.empty()) res.set(bhttp::field::content_type, content_type);
    res.set("request-id", request_id_);
    for (const auto& [k, v] : extra_) res.insert(k, v);
    res.keep_alive(keep_alive_);
    if (head_only_) {  // HEAD: the headers a GET would get, no body
      bhttp::response<bhttp::empty_body> head{res.result(), version_};
      for (const auto& f : res) head.insert(f.name_string(), f.value());
      head.keep_alive(keep_alive_);
      head.content_length(body.size());
      bhttp::response_serializer<bhttp::empty_body> sr{head};
      auto [ec, n] = co_await bhttp::async_write_header(stream_, sr, use_nothrow);
      if (ec) gone_ = true;
      co_return !ec;
    }
    res.body() = std::move(body);
    res.prepare_payload();
    auto [ec, n] = co_await bhttp::async_write(stream_, res, use_nothrow);
    if (ec) gone_ = true;
    co_return !ec;
  }

  asio::awaitable<bool> begin_stream() override {
    if (started_) co_return false;
    started_ = true;
    streaming_ = true;
    status_ = 200;
    bhttp::response<bhttp::empty_body> res{bhttp::status::ok, version_};
    res.set(bhttp::field::server, "warden");
    res.set(bhttp::field::content_type, "text/event-stream");
    res.set(bhttp::field::cache_control, "no-cache");
    res.set("X-Accel-Buffering", "no");
    res.set("request-id", request_id_);
    for (const auto& [k, v] : extra_) res.insert(k, v);
    // HTTP/1.0 has no chunked encoding: the body is sent as it is and ends when the connection closes.
    if (version_ < 11) keep_alive_ = false;
    res.keep_alive(keep_alive_);
    res.chunked(version_ >= 11);
    bhttp::response_serializer<bhttp::empty_body> sr{res};
    auto [ec, n] = co_await bhttp::async_write_header(stream_, sr, use_nothrow);
    if (ec) gone_ = true;
    co_return !ec;
  }

  asio::awaitable<bool> write_stream(std::string bytes) override {
    if (gone_ || !streaming_) co_return false;
    if (version_ < 11) {  // identity body (begin_stream)
      auto [ec, n] = co_await asio::async_write(stream_.socket(), asio::buffer(bytes), use_nothrow);
      if (ec) gone_ = true;
      co_return !ec;
    }
    auto [ec, n] = co_await asio::async_write(stream_.socket(), bhttp::make_chunk(asio::buffer(bytes)),
                                              use_nothrow);
    if (ec) gone_ = true;
    co_return !ec;
  }

  asio::awaitable<bool> end_stream() override {
    if (gone_ || !streaming_ || ended_) co_return false;
    ended_ = true;
    if (version_ < 11) co_return true;  // the connection's close ends the body
    auto [ec, n] = co_await asio::async_write(stream_.socket(), bhttp::make_chunk_last(), use_nothrow);
    if (ec) gone_ = true;
    co_return !ec;
  }

  bool started() const override { return started_; }
  void add_header(std::string name, std::string value) override {
    if (!started_) extra_.emplace_back(std::move(name), std::move(value));
  }
  bool complete() const { return started_ && !gone_ && (!streaming_ || ended_); }
  /// The whole answer was handed to the socket (a body sent, or a stream's end begun), whether or
  /// not its write then completed: a client that read it and closed at once can make the handler's
  /// last write end as cancelled.
  bool answered() const { return started_ && (!streaming_ || ended_); }
  /// False once the response says the connection closes after it (an HTTP/1.0 stream).
  bool keep_alive() const { return keep_alive_; }
  int status() const { return status_; }

 private:
  beast::tcp_stream& stream_;
  bool keep_alive_;
  unsigned version_;
  bool head_only_;
  bool started_ = false;
  bool streaming_ = false;
  bool ended_ = false;
  bool gone_ = false;
  int status_ = 0;
  std::vector<std::pair<std::string, std::string>> extra_;  ///< headers added by the router
  std::string request_id_;
};

}  // namespace

struct server::impl {
  asio::io_context& ioc;
  server_options opts;
  router& routes;
  tcp::acceptor acceptor;

  std::shared_ptr<shared_counts> counts = std::make_shared<shared_counts>();
  std::atomic<std::uint64_t>& open_general = counts->open_general;
  std::atomic<std::uint64_t>& open_reserved = counts->open_reserved;
  std::atomic<std::uint64_t>& pending_body = counts->pending_body;
  std::atomic<std::int64_t> last_refusal_log_s{0};
  std::size_t max_connections;

  impl(asio::io_context& io, server_options o, router& r)
      : ioc(io), opts(std::move(o)), routes(r), acceptor(io),
        max_connections(opts.max_connections > 0 ? opts.max_connections : default_max_connections()) {}

  bool reserved_path(const std::string& path) const {
    return std::find(opts.reserved_paths.begin(), opts.reserved_paths.end(), path) != opts.reserved_paths.end();
  }

  /// 503 with Retry-After: 1 and Connection: close, in the path's dialect.
  asio::awaitable<void> answer_busy(beast::tcp_stream& stream, const http_request& req, const std::string& why) {
    stream.expires_never();
    beast_writer w(stream, false, 11, req.method == "HEAD", req.request_id);
    w.add_header("Retry-After", "1");
    const error e = make_error(errc::upstream_unavailable, why + "; retry in a second", "", "server_busy");
    co_await w.send(503, "application/json", routes.surface_for(req.path).error_body(e, w.request_id()));
    spdlog::info("{} {} {} -> 503 ({})", req.remote, req.method, req.path, why);
  }

  // Waits until the peer closes or resets. Pipelined bytes go into `buf` and watching stops
  // (it then just waits to be cancelled).
  static asio::awaitable<void> watch_peer(beast::tcp_stream& stream, beast::flat_buffer& buf) {
    // A small read buffer in the coroutine frame: a parked stream holds no heap buffer (issues
    // 3 and 23's memory targets). Pipelined bytes past its size stay in the socket for the next
    // request's read. Not async_wait(wait_read): cancelling a wait and then reading the same
    // socket can miss the peer's EOF under epoll, leaving the connection in CLOSE-WAIT.
    std::array<char, 32> tmp{};
    auto [ec, n] = co_await stream.socket().async_read_some(asio::buffer(tmp), use_nothrow);
    if (!ec) {
      asio::buffer_copy(buf.prepare(n), asio::buffer(tmp.data(), n));
      buf.commit(n);
      asio::steady_timer forever(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
      co_await forever.async_wait(use_nothrow);
    }
  }

  asio::awaitable<void> run_handler(http_request& req, beast_writer& w) {
    bool failed = false;
    try {
      co_await routes.route(req, w);
    } catch (const boost::system::system_error& e) {
      if (e.code() == asio::error::operation_aborted) throw;  // cancelled by the peer watch
      spdlog::error("handler for {} {} failed: {}", req.method, req.path, e.what());
      failed = true;
    } catch (const std::exception& e) {
      spdlog::error("handler for {} {} failed: {}", req.method, req.path, e.what());
      failed = true;
    }
    if (failed) co_await report_internal(w, routes.surface_for(req.path));
  }

  static asio::awaitable<void> report_internal(beast_writer& w, const surface& dialect) {
    const error e = make_error(errc::internal, "internal server error; see the server log");
    if (!w.started()) {
      co_await w.send(500, "application/json", dialect.error_body(e, w.request_id()));
    } else {
      if (co_await w.write_stream(dialect.inband_error(e))) co_await w.end_stream();
    }
  }

  using request_parser = bhttp::request_parser<bhttp::string_body>;

  /// What a connection does after a request.
  enum class next_step {
    read_next,        ///< keep-alive: read the next request
    close,            ///< close it
    drain_and_close,  ///< a refused body is still arriving: drop it before closing
  };

  static std::string remote_address(beast::tcp_stream& stream) {
    boost::system::error_code ignored;
    const auto ep = stream.socket().remote_endpoint(ignored);
    return ep.address().to_string() + ":" + std::to_string(ep.port());
  }

  static bool peer_went_away(const boost::system::error_code& ec) {
    return ec == bhttp::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
           ec == beast::error::timeout;
  }

  /// One connection: requests in turn while keep-alive. A `reserved` one (past max_connections)
  /// serves one request, on a reserved path only. The accept loop took its place in the count.
  asio::awaitable<void> session(tcp::socket socket, bool reserved) {
    count_hold held(counts, reserved ? &shared_counts::open_reserved : &shared_counts::open_general, 1);
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buf;
    boost::system::error_code ignored;
    stream.socket().set_option(tcp::no_delay(true), ignored);
    const std::string remote = remote_address(stream);
    const int header_timeout_s = reserved ? k_reserved_header_timeout_s : opts.header_timeout_s;
    next_step next = next_step::read_next;
    while (next == next_step::read_next) {
      // Heap-allocated so it can be freed before the handler runs (a parked stream keeps
      // only what it needs).
      auto parser_ptr = std::make_unique<request_parser>();
      parser_ptr->header_limit(k_max_header_bytes);
      parser_ptr->body_limit(opts.max_body_bytes);
      stream.expires_after(std::chrono::seconds(header_timeout_s));
      auto [ec, n] = co_await bhttp::async_read_header(stream, buf, *parser_ptr, use_nothrow);
      next = co_await serve_request(stream, buf, parser_ptr, ec, remote, reserved);
      if (reserved && next == next_step::read_next) next = next_step::close;
    }
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    if (next == next_step::drain_and_close) co_await discard_input(stream);
    stream.socket().close(ignored);
  }

  // Screens the head, takes the body's share of the pending-body budget (`body_held`) and reads
  // the body into `parser`, filling `req` from the head. nullopt when the handler is to run;
  // else the request was answered (or the peer left) and what the connection does next.
  asio::awaitable<std::optional<next_step>> take_request(beast::tcp_stream& stream, beast::flat_buffer& buf,
                                                         request_parser& parser, boost::system::error_code ec,
                                                         const std::string& remote, bool reserved, http_request& req,
                                                         std::optional<count_hold>& body_held) {
    if (!ec) {
      const std::optional<next_step> refused = co_await screen_head(stream, parser, remote, req);
      if (refused) co_return *refused;
      if (reserved && !reserved_path(req.path)) {
        co_await answer_busy(stream, req, "warden has " + std::to_string(max_connections) +
                                              " connections open, its limit (--max-connections)");
        co_return parser.is_done() ? next_step::close : next_step::drain_and_close;
      }
      const std::uint64_t declared = parser.content_length().value_or(0);
      if (!try_take(pending_body, declared, opts.max_pending_body_bytes)) {
        co_await answer_busy(stream, req, "request bodies of " + std::to_string(pending_body.load()) +
                                              " bytes are being received or handled, near the limit of " +
                                              std::to_string(opts.max_pending_body_bytes) + " (--max-pending-body)");
        co_return parser.is_done() ? next_step::close : next_step::drain_and_close;
      }
      body_held.emplace(counts, &shared_counts::pending_body, declared);
      if (!parser.is_done()) {
        stream.expires_after(std::chrono::seconds(k_read_timeout_s));
        ec = co_await read_body(stream, buf, parser);
      }
    }
    if (peer_went_away(ec)) {
      spdlog::debug("{} closed: {}", remote, ec.message());
      co_return next_step::close;
    }
    if (ec) {
      // A body over the limit can be refused while the head is read (Content-Length): the path
      // still picks the error dialect.
      if (req.path.empty() && !parser.get().target().empty()) {
        const std::string_view target = parser.get().target();
        req.path = std::string(target.substr(0, target.find('?')));
      }
      co_await answer_malformed(stream, ec, req.path, req.request_id, remote);
      co_return next_step::drain_and_close;
    }
    co_return std::nullopt;
  }

  /// After a request of `body_bytes`: a large body's parse leaves hundreds of MiB of freed heap
  /// that glibc keeps (a 14 MB Responses body left RSS at ~525 MB); malloc_trim returns it to
  /// the system. A few ms for such a heap, paid only after a body of k_trim_after_body_bytes.
  static void give_back_memory(std::size_t body_bytes) {
    if (body_bytes >= k_trim_after_body_bytes) ::malloc_trim(0);
  }
  static constexpr std::size_t k_trim_after_body_bytes = 4u << 20;

  // A request whose head was read (or failed with `ec`): screen the head, read the body, run
  // the handler while watching the peer. `parser_ptr` is freed before the handler runs. The
  // steps before the handler are take_request's, so that their temporaries are not part of
  // this frame, which a parked stream keeps.
  asio::awaitable<next_step> serve_request(beast::tcp_stream& stream, beast::flat_buffer& buf,
                                           std::unique_ptr<request_parser>& parser_ptr,
                                           boost::system::error_code ec, const std::string& remote, bool reserved) {
    http_request req;
    std::optional<count_hold> body_held;  // this request's share of max_pending_body_bytes
    const std::optional<next_step> refused =
        co_await take_request(stream, buf, *parser_ptr, ec, remote, reserved, req, body_held);
    if (refused) co_return *refused;
    stream.expires_never();
    auto& msg = parser_ptr->get();
    req.body = std::move(msg.body());
    const bool keep_alive = msg.keep_alive();
    beast_writer w(stream, keep_alive, msg.version(), req.method == "HEAD", req.request_id);
    parser_ptr.reset();
    buf.shrink_to_fit();
    const auto t0 = std::chrono::steady_clock::now();
    counts->handlers_running.fetch_add(1);
    std::optional<count_hold> running(std::in_place, counts, &shared_counts::handlers_running, 1);
    const std::size_t body_bytes = req.body.size();
    auto outcome = co_await (run_handler(req, w) || watch_peer(stream, buf));
    running.reset();
    give_back_memory(body_bytes);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (outcome.index() == 1) {
      // A client that read the whole answer and closed at once can be seen closing before the
      // handler returned: that request was answered, not cancelled.
      record_request(req.method, req.path, w.answered() ? w.status() : 499, ms);
      if (w.answered()) {
        spdlog::info("{} {} {} -> {} in {:.1f} ms (client closed)", remote, req.method, req.path, w.status(), ms);
      } else {
        spdlog::info("{} {} {}: client disconnected after {:.1f} ms; request cancelled", remote, req.method,
                     req.path, ms);
      }
      co_return next_step::close;
    }
    record_request(req.method, req.path, w.status(), ms);
    spdlog::info("{} {} {} -> {} in {:.1f} ms", remote, req.method, req.path, w.status(), ms);
    if (!w.complete() || !w.keep_alive()) co_return next_step::close;
    // The peer may have closed while the handler ran, with the EOF already consumed by the
    // cancelled peer watch: then no new readiness edge would wake the next read, and the
    // connection would sit in CLOSE-WAIT until the idle timeout. Peek once, without blocking —
    // unless the watch already took a pipelined request's bytes, which are answered first.
    char probe = 0;
    if (buf.size() == 0 && ::recv(stream.socket().native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
      spdlog::debug("{} closed after the response", remote);
      co_return next_step::close;
    }
    co_return next_step::read_next;
  }

  // The head is screened (Host, Origin, route, key, Content-Type: router::screen) before any
  // body is read or 100-continue promised, so nobody refused makes warden buffer one. Fills
  // `req` from the head; a refused request is answered here, and what follows it returned.
  asio::awaitable<std::optional<next_step>> screen_head(beast::tcp_stream& stream, request_parser& parser,
                                                        const std::string& remote, http_request& req) {
    const auto& head = parser.get();
    head_verdict verdict = judge_head(head, parser.is_done(), routes, remote);
    if (verdict.framing) {
      stream.expires_never();
      beast_writer w(stream, false, 11, false, "");
      co_await w.send(verdict.status, "application/json",
                      routes.surface_for(verdict.req.path).error_body(*verdict.refused, w.request_id()));
      spdlog::info("{} {} {} -> {} ({})", remote, std::string(head.method_string()), std::string(head.target().substr(0, 200)),
                   verdict.status, verdict.refused->message);
      record_request(std::string(head.method_string()), "", verdict.status, 0);
      co_return next_step::drain_and_close;
    }
    req = std::move(verdict.req);
    if (verdict.refused) {
      stream.expires_never();
      const bool body_pending = !parser.is_done();
      const bool keep = !body_pending && parser.get().keep_alive();
      beast_writer w(stream, keep, parser.get().version(), req.method == "HEAD", req.request_id);
      for (auto& [name, value] : verdict.headers) w.add_header(std::move(name), std::move(value));
      co_await w.send(verdict.status, "application/json",
                      routes.surface_for(req.path).error_body(*verdict.refused, req.request_id));
      spdlog::info("{} {} {} -> {} (refused before the body)", remote, req.method, req.path, w.status());
      record_request(req.method, req.path, w.status(), 0);
      if (keep && w.complete()) co_return next_step::read_next;
      co_return body_pending ? next_step::drain_and_close : next_step::close;
    }
    co_return std::nullopt;
  }

  static asio::awaitable<boost::system::error_code> read_body(beast::tcp_stream& stream, beast::flat_buffer& buf,
                                                              request_parser& parser) {
    // Clients that send `Expect: 100-continue` wait for this before sending the body.
    if (beast::iequals(parser.get()[bhttp::field::expect], "100-continue")) {
      bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, parser.get().version()};
      co_await bhttp::async_write(stream, cont, use_nothrow);
    }
    auto [ec, n] = co_await bhttp::async_read(stream, buf, parser, use_nothrow);
    co_return ec;
  }

  // Malformed or oversized request: answer in the path's dialect (the caller then closes).
  asio::awaitable<void> answer_malformed(beast::tcp_stream& stream, boost::system::error_code ec,
                                         const std::string& path, const std::string& request_id,
                                         const std::string& remote) {
    stream.expires_never();
    const bool too_big = ec == bhttp::error::body_limit;
    const error e = too_big ? make_error(errc::payload_too_large,
                                         "request body is larger than " +
                                             std::to_string(opts.max_body_bytes) + " bytes")
                            : make_error(errc::invalid_request, "malformed HTTP request: " + ec.message());
    beast_writer w(stream, false, 11, false, request_id);
    co_await w.send(http_status(e.code), "application/json", routes.surface_for(path).error_body(e, w.request_id()));
    spdlog::info("{} bad request: {}", remote, ec.message());
  }

  // After answering a request whose body was not read: read and drop what the client still
  // sends (bounded in time and bytes), so closing does not reset the connection before the
  // client has read the answer (closing with unread data sends RST).
  static asio::awaitable<void> discard_input(beast::tcp_stream& stream) {
    std::array<char, 4096> tmp{};
    std::uint64_t total = 0;
    stream.expires_after(std::chrono::milliseconds(k_discard_ms));
    while (total < k_discard_max_bytes) {
      auto [ec, n] = co_await stream.async_read_some(asio::buffer(tmp), use_nothrow);
      if (ec) break;
      total += n;
    }
    stream.expires_never();
  }

  /// Past both lanes: closed at once (logged at most once a second).
  template <class Socket>
  void refuse_connection(Socket& sock) {
    boost::system::error_code ignored;
    sock.close(ignored);
    const auto now_s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    std::int64_t last = last_refusal_log_s.load();
    if (now_s != last && last_refusal_log_s.compare_exchange_strong(last, now_s)) {
      spdlog::warn("{} connections open (--max-connections) and {} reserved ones: closing new connections",
                   max_connections, k_reserved_connections);
    }
  }

  asio::awaitable<void> accept_loop() {
    while (acceptor.is_open()) {
      auto [ec, sock] = co_await acceptor.async_accept(asio::make_strand(ioc), use_nothrow);
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
        // Out of file descriptors (EMFILE/ENFILE) or another transient failure: the pending
        // connection stays in the backlog, so retrying at once would spin. Back off and log
        // once per back-off rather than per attempt.
        spdlog::warn("accept failed: {}; retrying in {} ms", ec.message(), k_accept_backoff_ms);
        asio::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(k_accept_backoff_ms));
        co_await pause.async_wait(use_nothrow);
        continue;
      }
      // Counted here, on the accept loop's one thread, and given back when the session ends.
      bool reserved = false;
      if (!try_take(open_general, 1, max_connections)) {
        if (!try_take(open_reserved, 1, k_reserved_connections)) {
          refuse_connection(sock);
          continue;
        }
        reserved = true;
      }
      auto ex = sock.get_executor();
      asio::co_spawn(ex, session(std::move(sock), reserved), [](std::exception_ptr p) {
        if (!p) return;
        try {
          std::rethrow_exception(p);
        } catch (const std::exception& e) {
          spdlog::warn("connection ended: {}", e.what());
        }
      });
    }
  }
};

std::uint64_t raise_open_file_limit() noexcept {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  if (lim.rlim_cur < lim.rlim_max) {
    rlimit raised = lim;
    raised.rlim_cur = lim.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
  }
  return lim.rlim_cur == RLIM_INFINITY ? std::uint64_t{1} << 20 : static_cast<std::uint64_t>(lim.rlim_cur);
}

std::size_t default_max_connections() noexcept {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1024;
  const std::uint64_t soft = lim.rlim_cur == RLIM_INFINITY ? std::uint64_t{1} << 20 : lim.rlim_cur;
  constexpr std::uint64_t k_reserve = 128 + k_reserved_connections;
  return static_cast<std::size_t>(std::max<std::uint64_t>(64, soft > k_reserve ? soft - k_reserve : 0));
}

bool binds_loopback_only(const std::string& host) {
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(host, ec);
  if (!ec) return addr.is_loopback();
  asio::io_context ioc;
  tcp::resolver res(ioc);
  const auto results = res.resolve(host, "", ec);
  if (ec || results.empty()) return false;
  for (const auto& r : results) {
    if (!r.endpoint().address().is_loopback()) return false;
  }
  return true;
}

server::server(asio::io_context& ioc, server_options opts, router& r)
    : impl_(std::make_unique<impl>(ioc, std::move(opts), r)) {}

server::~server() = default;

server_stats server::stats() const {
  const shared_counts& c = *impl_->counts;
  return {c.open_general.load() + c.open_reserved.load(), c.handlers_running.load(), c.pending_body.load()};
}

result<int> server::listen() {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(impl_->opts.host, ec);
  if (ec) {
    // A host name such as "localhost": resolve it.
    tcp::resolver res(impl_->ioc);
    auto r = res.resolve(impl_->opts.host, std::to_string(impl_->opts.port), ec);
    if (ec || r.empty()) {
      return make_error(errc::invalid_request, "invalid value for --host (WARDEN_HOST): cannot resolve '" +
                                                   impl_->opts.host + "': " + ec.message(),
                        "host");
    }
    addr = r.begin()->endpoint().address();
  }
  tcp::endpoint ep(addr, static_cast<unsigned short>(impl_->opts.port));
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(4096, ec);
  if (ec) {
    return make_error(errc::invalid_request, "cannot listen on " + impl_->opts.host + ":" +
                                                 std::to_string(impl_->opts.port) + ": " + ec.message() +
                                                 " (is another server using this port? choose another with --port)",
                      "port");
  }
  return static_cast<int>(a.local_endpoint().port());
}

void server::start() {
  asio::co_spawn(impl_->ioc, impl_->accept_loop(), asio::detached);
}

void server::stop() {
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
}

}  // namespace warden::http
