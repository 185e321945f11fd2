// Server-sent events: framing of outgoing frames and incremental parsing of incoming ones.
//
// Framing (WHATWG "server-sent events"): a frame is `data: <payload>\n\n`; a payload with
// newlines is split over several `data:` lines; a comment is `: <text>\n\n` and is ignored by
// clients (used as keep-alive ping, reference §1.3). OpenAI streams end with `data: [DONE]`.
//
// sse_parser: feed it bytes (`id:` kept per event and as last_event_id()) as they arrive (any split, \n or \r\n line ends); it returns each
// complete event once its blank line arrives. Comments are dropped. Field `event:` is kept.
// A single event larger than `max_event_bytes` is an error (the parser then stays failed).
// Thread-safety: sse_parser is not thread-safe; one per stream.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace warden::sse {

/// `data: <payload>\n\n` (multi-line payloads get one `data:` line per line).
std::string data_frame(std::string_view payload);
/// `: <text>\n\n`
std::string comment_frame(std::string_view text);
/// `data: [DONE]\n\n`
inline std::string done_frame() { return "data: [DONE]\n\n"; }

struct event {
  std::string name;  ///< value of `event:`; "" when absent
  std::string data;  ///< `data:` lines joined with \n
  std::string id;    ///< value of `id:`; "" when absent
};

class parser {
 public:
  explicit parser(std::size_t max_event_bytes = 64u << 20) : max_event_bytes_(max_event_bytes) {}

  /// Appends bytes; returns the events completed by them. Sets failed() on an oversized event.
  std::vector<event> feed(std::string_view bytes);
  /// Events with data but no terminating blank line yet (e.g. at end of stream).
  bool has_partial() const { return !line_.empty() || has_data_; }
  bool failed() const { return failed_; }
  /// The last `id:` of a completed event block, data or not (the Last-Event-ID to resume from).
  const std::string& last_event_id() const { return last_id_; }

 private:
  void on_line(std::string_view line, std::vector<event>& out);

  std::size_t max_event_bytes_;
  std::string line_;
  event current_;
  bool has_data_ = false;
  bool failed_ = false;
  bool last_was_cr_ = false;
  std::string last_id_;
};

}  // namespace warden::sse
