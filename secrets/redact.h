// redact_secrets — hides the secrets in free text before it is stored (the audit log's tool
// arguments and reasons, store/call_records.h). What it hides is what the one detector finds
// (secrets/find_secrets.h: the rules, the JSON mode, what is and is not covered), the same
// detector the environment scrubber uses (secrets/secret_detect.h), so what warden keeps out of
// a tool's environment it also keeps out of its database.
//
// Each finding is replaced by `[REDACTED]` (overlapping and touching findings by one);
// everything else is kept byte for byte. Valid JSON stays valid JSON and valid UTF-8 stays
// valid UTF-8. A `[REDACTED]` already there counts as one whole value, so redacting ordinary
// text twice changes nothing more (text where rules overlap, such as a key block whose END
// marker is also a secret value, may lose a little more the second time).
//
// Cost: linear in the text (find_secrets.h). Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace warden::secrets {

/// What replaces each secret.
inline constexpr std::string_view k_redacted = "[REDACTED]";

/// `text` with its secrets replaced by k_redacted (rules above). Never throws except
/// std::bad_alloc.
std::string redact_secrets(std::string_view text);

}  // namespace warden::secrets
