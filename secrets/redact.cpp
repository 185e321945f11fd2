#include "secrets/redact.h"

#include <algorithm>
#include <vector>

#include "secrets/find_secrets.h"

namespace warden::secrets {
namespace {

/// `text` with the union of the non-empty `spans` replaced.
std::string apply(std::string_view text, std::vector<secret_span>& spans) {
  std::sort(spans.begin(), spans.end(), [](const secret_span& a, const secret_span& b) { return a.begin < b.begin; });
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0, i = 0;
  while (i < spans.size()) {
    const std::size_t b = std::max(spans[i].begin, pos);
    std::size_t e = spans[i].end;
    for (++i; i < spans.size() && spans[i].begin <= e; ++i) e = std::max(e, spans[i].end);
    if (e <= b) continue;
    out.append(text.substr(pos, b - pos));
    out.append(k_redacted);
    pos = e;
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace

std::string redact_secrets(std::string_view text) {
  std::vector<secret_span> spans = find_secrets(text);
  if (spans.empty()) return std::string(text);
  return apply(text, spans);
}

}  // namespace warden::secrets
