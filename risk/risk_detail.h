// risk_detail — the pieces of risk/risk.h shared by its source files (risk.cpp,
// risk_shell.cpp, risk_python.cpp). Not for use outside the classifier.
// Thread-safety: pure functions; a `findings` belongs to one classification.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden::risk::risk_detail {

/// Recursion limit across python -c → exec("…") → sh -c … payloads; deeper is high.
inline constexpr int k_max_depth = 6;

/// What a reason says about a call (risk.h's risk_assessment::hazard):
///   hazard   a named danger ("runs rm (destructive)", "writes /etc/x outside the workspace");
///   unknown  only that something is not known to be safe ("perl is not known to be safe").
enum class reason_kind { hazard, unknown };

/// Reasons collected so far, in order, without duplicates; `hazard` is set when any reason was
/// added as reason_kind::hazard (also when the same text was added once as unknown).
struct findings {
  std::vector<std::string> reasons;
  bool hazard = false;
  void add(std::string reason, reason_kind kind = reason_kind::hazard);
};

/// A reason when `word` names a sensitive path (reference §3.6: /etc/shadow, ~/.ssh,
/// .aws/credentials, /proc/*/environ, `..` escapes, …); nullopt otherwise.
std::optional<std::string> sensitive_path(std::string_view word);

/// Whether `path` is absolute (or starts with ~) and lies outside /workspace and /tmp
/// (component-wise); /dev/null, /dev/stdout, /dev/stderr, /dev/tty and /dev/fd/N are allowed.
bool outside_writable(std::string_view path);

/// `word` cut to at most 60 bytes for a reason.
std::string shorten(std::string_view word);

/// Terminal rules over a whole command line.
void check_shell(std::string_view command, findings& out, int depth);

/// Python rules over a piece of code.
void check_python(std::string_view code, findings& out, int depth);

}  // namespace warden::risk::risk_detail
