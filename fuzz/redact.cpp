// Fuzzes the redactor of the audit log and the environment scrubber's detector
// (secrets/redact.h redact_secrets, secrets/find_secrets.h find_secrets, secrets/secret_detect.h
// is_secret_variable), on free text and on the input read as a NAME=value variable.
// Invariants (redact.h): findings lie within the text; valid UTF-8 stays valid UTF-8 and valid
// JSON stays valid JSON; text without findings comes back unchanged.
#include "common/json_util.h"
#include "common/utf8.h"
#include "fuzz/fuzz_support.h"
#include "secrets/find_secrets.h"
#include "secrets/redact.h"
#include "secrets/secret_detect.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  const std::string_view text = fuzz::as_text(data, size);
  const auto spans = secrets::find_secrets(text);
  for (const auto& s : spans) fuzz::check(s.begin <= s.end && s.end <= text.size(), "a finding lies within the text");
  const std::string redacted = secrets::redact_secrets(text);
  if (spans.empty()) fuzz::check(redacted == text, "text without findings is kept");
  if (is_valid_utf8(text)) fuzz::check(is_valid_utf8(redacted), "valid UTF-8 stays valid UTF-8");
  if (parse_json(text)) fuzz::check(parse_json(redacted).has_value(), "valid JSON stays valid JSON");
  const std::size_t eq = text.find('=');
  if (eq != std::string_view::npos) (void)secrets::is_secret_variable(text.substr(0, eq), text.substr(eq + 1));
  return 0;
}
