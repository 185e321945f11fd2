// The API monitor (issue 28 §5; the reference's api_monitor, unsloth-studio.md §6): an in-memory
// ring of the last `capacity` (50) model requests, for a person watching what clients are doing.
//
// monitored() wraps a model route's handler (/v1/chat/completions, /v1/completions,
// /v1/messages, /v1/responses): the request gets an entry when it starts (endpoint, method,
// model, its owner (the caller's key name) and whether a key was presented, stream, the prompt:
// the last user text, redacted and capped), and the entry follows what the handler writes through
// a wrapped response_writer: the HTTP status; the first token's time (the first frame carrying
// text, a tool call or reasoning: a substring test per frame); usage; the stop reason; the reply
// text; an error's message (a refused request, an in-band error frame). The answer is kept as
// written (64 KiB at most unread) and parsed only when the entry is shown or that fills, so a
// request pays no JSON parse for being monitored; only a frame naming "error" is read at once. The frames read are warden's own, in each
// surface's shape (OpenAI chunks, Anthropic events, Responses events): the monitor observes
// them, it never changes them. When the handler returns the entry ends: `error` (a status ≥ 400
// or an error frame), `cancelled` (the client went away), else `done`. A refused request (the
// gate's streaming requirement, a full queue) is thus one `error` entry carrying the refusal's
// message, and no `active` entry is left behind.
//
// Entry (JSON): {id "mon_…", endpoint, method, model, engine ("local", or "provider:<id or type>"
// for an external provider), owner, via_api_key, stream, status
// (active|done|error|cancelled), http_status, started_at / updated_at (unix ms), first_token_ms
// and duration_ms (ms from the start; null until known), usage {prompt_tokens, completion_tokens}
// or null, stop_reason, error, prompt_preview, reply_preview (360 characters)}; GET of one entry
// adds prompt and reply (12,000 characters each, the reference's caps). Every text shown (the
// prompt, the reply, the error) passes through `redact` (secrets/redact.h in the composition
// root) each time it is read, also while the request runs, and before it is cut to its cap.
//
// Routes (API key; scoped: a user key sees and deletes only its own entries, an admin every one):
//   GET    /api/inference/monitor        {object:"monitor", status (generating|ready|idle),
//                                         server_time (unix s), active_model, context_length,
//                                         active_requests, queue {waiting, slots, busy} or null,
//                                         logging_enabled, entries (newest first)}
//   DELETE /api/inference/monitor        removes the caller's finished entries → {deleted: n}
//   GET    /api/inference/monitor/{id}   one entry with prompt and reply; 404 when unknown
//   DELETE /api/inference/monitor/{id}   → {id, deleted: true}; 404 when unknown; 409 while active
// With `enabled` false (--no-api-monitor) nothing is recorded and logging_enabled is false.
// Thread-safety: every method may be called from any thread (one mutex).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/http_types.h"
#include "common/json_util.h"
#include "common/principal.h"

namespace warden::api::control {

/// What the monitor shows of the engine: the served model, its context, whether it is ready,
/// and the admission queue (engine/admission_queue.h) as {waiting, slots, busy} or null.
struct engine_view {
  std::string active_model;
  std::int64_t context_length = 0;  ///< per-slot context in tokens; 0 = unknown
  bool ready = false;
  json queue = nullptr;
};

struct monitor_options {
  std::size_t capacity = 50;       ///< entries kept (the reference's ring)
  std::size_t max_text = 12000;    ///< characters kept of a prompt or a reply (the reference's)
  std::size_t preview = 360;       ///< characters of the previews (the reference's)
  bool enabled = true;
  std::function<std::string(std::string_view)> redact;  ///< null: texts kept as they are
  std::function<engine_view()> engine;                   ///< null: an empty view
};

class api_monitor {
 public:
  struct entry;
  explicit api_monitor(monitor_options o);
  ~api_monitor();

  /// A new active entry for `req` (null when disabled).
  std::shared_ptr<entry> begin(const http_request& req);
  /// What the handler wrote (see above).
  void on_status(entry& e, int status);
  void on_body(entry& e, std::string_view body);
  void on_stream(entry& e, std::string_view bytes);
  /// The handler returned; `client_gone`: a write failed.
  void finish(entry& e, bool client_gone);

  json list(const principal& who) const;
  std::optional<json> find(const principal& who, std::string_view id) const;
  std::size_t clear(const principal& who);
  /// 0 removed, 1 unknown, 2 active.
  int remove(const principal& who, std::string_view id);
  bool enabled() const { return opt_.enabled; }

 private:
  /// Characters kept past a cap so that redaction sees a secret cut there whole.
  static constexpr std::size_t k_redact_margin = 256;
  json to_json(const entry& e, bool full) const;
  /// The first `chars` characters of `text`, redacted: whenever a text is shown (while a request
  /// runs too), never only when it ends.
  std::string shown(std::string_view text, std::size_t chars) const;
  /// Bytes of an answer kept unread before they are read into the entry (digest()).
  static constexpr std::size_t k_raw_batch = 64 * 1024;
  void touch(entry& e);
  /// Reads the entry's unread answer (entry::raw) into its fields; mu_ held.
  void digest(entry& e) const;
  /// `e` with its answer read: `e` itself once it ended (read for good), else a copy in `scratch`.
  const entry& settled(entry& e, entry& scratch) const;
  void take_body(entry& e, std::string_view body) const;
  void take_frame(entry& e, std::string_view frame) const;
  void take_event(entry& e, const json& j) const;
  void add_reply(entry& e, std::string_view text) const;
  monitor_options opt_;
  mutable std::mutex mu_;
  std::deque<std::shared_ptr<entry>> ring_;
};

/// `inner` with its requests recorded in `m` (which must outlive the handler).
route_handler monitored(route_handler inner, api_monitor& m);

/// The four routes above.
std::vector<route> monitor_routes(api_monitor& m);

}  // namespace warden::api::control
