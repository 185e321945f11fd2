// mcp_session — one live connection to an MCP server (issue 26): a transport that moves JSON-RPC
// messages (stdio: a jailed child's pipes, mcp_stdio.cpp; Streamable HTTP: mcp_http.cpp), and the
// session above it that matches responses to requests, routes progress notifications and a
// server's own requests (elicitation/create) to the call they belong to, answers ping, and
// reports notifications/tools/list_changed.
//
// Waiting costs no thread: each request gets a mailbox; the transport's reader thread pushes
// messages into it and wakes the waiting coroutine through its executor (the approvals' pattern,
// agent/approvals.h). A call's mailbox receives, in order: notifications/progress for its
// progressToken, elicitation/create requests (the HTTP transport marks each with the request whose
// response stream carried it, k_related_request; over stdio one goes to the only call in flight,
// and with several in flight it is declined: asking the person of another call would be worse),
// then its response. When the
// connection ends every open mailbox is closed with the reason.
// Thread-safety: every member of session and mailbox may be called from any thread; next() from
// one coroutine at a time.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/json_util.h"
#include "common/result.h"

namespace warden::tools::mcp {

/// The key the HTTP transport adds to a server's request carried by a POST's response stream:
/// the id of the request that POST sent (a transport strips it from anything else it receives).
inline constexpr const char* k_related_request = "_warden_related_request";

/// True on a thread a transport runs (its readers, writer, HTTP exchanges): set by each transport
/// on its threads. A session released last on such a thread must not close its transport there
/// (close() waits for those very threads), so ~session hands the closing to a thread of its own.
inline thread_local bool in_transport_thread = false;

/// Moves whole JSON-RPC messages to and from a server.
class transport {
 public:
  using message_fn = std::function<void(json)>;
  using closed_fn = std::function<void(std::string)>;
  virtual ~transport() = default;
  /// Starts delivering incoming messages (from the transport's own threads) until close().
  virtual void start(message_fn on_message, closed_fn on_closed) = 0;
  /// Sends one message. Blocking for at most a few seconds (stdio: a server that does not read
  /// its input; HTTP: the POST's response headers are read on a thread of the transport).
  virtual result<void> send(const json& msg) = 0;
  /// Stops: the child is killed / the HTTP session deleted. Idempotent.
  virtual void close() = 0;
  /// The last lines the server wrote to stderr (stdio), for error messages; "" otherwise.
  virtual std::string diagnostics() const { return {}; }
  /// The negotiated revision, for the MCP-Protocol-Version header (HTTP).
  virtual void set_protocol_version(const std::string&) {}
};

/// What a request's waiter receives.
class mailbox {
 public:
  void push(json msg);
  void close(std::string why);
  /// The next message; nullopt when `slice` passed first; an error once closed and drained.
  boost::asio::awaitable<result<std::optional<json>>> next(std::chrono::milliseconds slice);

 private:
  std::mutex mu_;
  std::deque<json> queue_;
  std::optional<std::string> closed_;
  std::function<void()> wake_;
};

class session : public std::enable_shared_from_this<session> {
 public:
  explicit session(std::unique_ptr<transport> t);
  ~session();

  /// Starts the transport and runs initialize + notifications/initialized. `elicitation`: the
  /// client declares that capability. Sets protocol_version() and server_info().
  boost::asio::awaitable<result<void>> initialize(bool elicitation, std::chrono::milliseconds timeout);
  /// A request and its mailbox (the response arrives in it); `progress`: with a progressToken.
  result<std::pair<std::int64_t, std::shared_ptr<mailbox>>> start_request(std::string_view method, json params,
                                                                          bool progress);
  /// A request answered within `timeout`: its result, or the error (JSON-RPC errors as
  /// errc::upstream_error with the server's message; errc::upstream_unavailable when the
  /// connection ended; a timeout sends notifications/cancelled).
  boost::asio::awaitable<result<json>> request(std::string_view method, json params, std::chrono::milliseconds timeout);
  /// Ends the mailbox of request `id` (its result is no longer awaited).
  void forget(std::int64_t id);
  result<void> notify(std::string_view method, json params = json::object());
  result<void> respond(const json& id, json result);
  result<void> respond_error(const json& id, int code, std::string_view message);
  void close();

  bool alive() const { return alive_.load(); }
  std::string death() const;
  std::string protocol_version() const;
  json server_info() const;
  json server_capabilities() const;
  std::string diagnostics() const { return transport_->diagnostics(); }
  /// Called (on a transport thread) on notifications/tools/list_changed.
  void on_tools_changed(std::function<void()> f);

 private:
  void dispatch(json msg);
  void closed(std::string why);
  std::unique_ptr<transport> transport_;
  mutable std::mutex mu_;
  std::map<std::int64_t, std::shared_ptr<mailbox>> pending_;
  std::vector<std::int64_t> calls_;  ///< requests with a progressToken, oldest first
  std::int64_t next_id_ = 1;
  std::atomic<bool> alive_{false};
  std::string death_;
  std::string version_;
  json server_info_ = json::object();
  json capabilities_ = json::object();
  std::function<void()> tools_changed_;
};

/// A stdio transport over a started service (sandbox/runner.h service_process).
}  // namespace warden::tools::mcp
