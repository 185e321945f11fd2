// approval_registry — pending "may this tool call run?" questions (DESIGN.md §6; reference
// unsloth-studio.md §3.4–§3.5).
//
// The loop opens a ticket (a fresh id of 22 URL-safe characters, 132 random bits: common/ids.h) *before* it
// sends `tool_start{awaiting_confirmation:true, approval_id}`, then waits on it. A person
// answers through `resolve()` (POST /api/inference/tool-confirm):
//   - unknown id, an id already decided, or a `session_id` that differs from the ticket's → false
//     (the endpoint answers 404); when the request sends no session_id the scope is not checked;
//   - the first decision wins and never flips; a decision that arrives before the loop starts
//     waiting is kept;
//   - each ticket is independent of every other, in the same session or not.
// A ticket resolves itself as `timed_out` when `timeout` passes after it was opened, and as
// `cancelled` through ticket::cancel() (the request's cancel token); both mean deny. Destroying
// the ticket removes it (later resolves → false).
// Waiting costs no thread: wait() parks the coroutine on a timer that resolve() cancels through
// the waiter's executor. wait() also honours asio cancellation (client gone): it throws
// operation_aborted.
// The inbox (issue 10): every ticket carries what the person is asked about (approval_info:
// session, owner, tool, call id, arguments, risk, created/expires in Unix ms), so any client can
// list the pending ones (list()) and answer them (the registry does not filter by owner: the
// control routes do, api/control/approvals_routes.h); listeners (subscribe()) hear of each new ticket and
// of each settled or withdrawn one (a ticket destroyed undecided: the stream went away). A
// listener runs on the thread that opened/settled/destroyed the ticket, outside the registry's
// lock; it must be quick and must not call back into the registry's subscribe/unsubscribe.
// Thread-safety: open/resolve/pending/list/find/subscribe and ticket::cancel from any thread;
// wait() from the ticket owner's coroutine only.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "agent/loop_events.h"
#include "common/json_util.h"

namespace warden::agent {

enum class approval_decision { allow, deny };
enum class approval_outcome { allowed, denied, timed_out, cancelled };
/// "allowed", "denied", "expired", "cancelled".
const char* to_string(approval_outcome o) noexcept;

/// What a person is asked about (the inbox's row).
struct approval_info {
  std::string approval_id;   ///< set by open()
  std::string session_id;
  std::string owner;         ///< the API key name of the request that asked ("" = single user)
  std::string tool;
  std::string call_id;
  json arguments = json::object();
  std::optional<risk_note> risk;
  std::int64_t created_unix_ms = 0;  ///< set by open()
  std::int64_t expires_unix_ms = 0;  ///< set by open(): created + timeout
  /// "tool_call" (may this call run?) or "elicitation" (an MCP server asks the person for input
  /// during call `call_id`; issue 26): then `elicitation` holds the server's request
  /// ({server, message, mode, requestedSchema | url}) and the answer is resolve_elicitation()'s.
  std::string kind = "tool_call";
  json elicitation = json::object();
};

/// A change in the inbox: a new question, or one that was answered, expired, cancelled or
/// withdrawn (outcome "withdrawn": its stream went away before anyone answered).
struct approval_event {
  bool settled = false;
  approval_info info;
  std::string outcome;  ///< "" for a new question
};

class approval_registry {
 public:
  struct slot;

  class ticket {
   public:
    ticket(approval_registry& reg, std::shared_ptr<slot> s) : reg_(reg), slot_(std::move(s)) {}
    ~ticket();
    ticket(const ticket&) = delete;
    ticket& operator=(const ticket&) = delete;

    const std::string& id() const;
    /// The outcome once known; nullopt when `slice` passed first (send a keep-alive, call again).
    boost::asio::awaitable<std::optional<approval_outcome>> wait(std::chrono::milliseconds slice);
    /// Resolves as cancelled unless already decided; thread-safe.
    void cancel();
    /// The same as a function that stays safe to call after the ticket is gone (for
    /// cancel_token hooks, which may run late on another thread).
    std::function<void()> canceller() const;
    /// An elicitation's answer once decided ({action, content?}); {} otherwise.
    json answer() const;

   private:
    approval_registry& reg_;
    std::shared_ptr<slot> slot_;
  };

  explicit approval_registry(std::chrono::milliseconds timeout) : timeout_(timeout) {}

  /// Registers a pending approval owned by the caller; `ex` is the waiter's executor (strand).
  std::unique_ptr<ticket> open(approval_info info, boost::asio::any_io_executor ex);
  /// The same with only a session (tests).
  std::unique_ptr<ticket> open(std::string session_id, boost::asio::any_io_executor ex);
  /// A pending, undecided question; nullopt for unknown, decided or wrong-session ids (the same
  /// scope rule as resolve()).
  std::optional<approval_info> find(std::string_view approval_id, std::optional<std::string_view> session_id) const;
  /// The pending, undecided questions, oldest first; only `session_id`'s when it is not "".
  std::vector<approval_info> list(std::string_view session_id = "") const;
  using listener = std::function<void(const approval_event&)>;
  std::uint64_t subscribe(listener l);
  void unsubscribe(std::uint64_t id);
  /// Records a person's decision; false for unknown, decided or wrong-session ids.
  bool resolve(std::string_view approval_id, approval_decision d, std::optional<std::string_view> session_id);
  /// Answers an elicitation: `action` "accept" (outcome allowed, with `content`), "decline" or
  /// "cancel" (outcome denied; the answer says which). The same rules as resolve().
  bool resolve_elicitation(std::string_view approval_id, const std::string& action, json content,
                           std::optional<std::string_view> session_id);
  /// Whether any inbox listener is subscribed now (someone may answer outside the stream).
  bool has_listeners() const;
  /// Whether one is subscribed now, or the last one left less than `within` ago (a reloaded
  /// page's inbox, about to subscribe again).
  bool had_listeners(std::chrono::milliseconds within) const;
  std::size_t pending() const;
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  bool settle(const std::shared_ptr<slot>& s, approval_outcome o, json answer = json::object());
  void notify(const approval_event& ev);
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<slot>> slots_;
  mutable std::mutex listeners_mu_;
  std::vector<std::pair<std::uint64_t, std::shared_ptr<listener>>> listeners_;
  std::chrono::steady_clock::time_point last_unsubscribed_{};  ///< guarded by listeners_mu_
  std::uint64_t next_listener_ = 1;
  std::chrono::milliseconds timeout_;
};

}  // namespace warden::agent
