// Fuzzes the `auto` classifier's Python side: risk/python_tokens.h lex_python, and risk/risk.h
// classify_call for a python-like tool whose `code` is the input.
// Invariants: a refusal says why; only string tokens can be non-literal; the classifier is high exactly when it gives reasons, and a hazard is
// always high.
#include "common/json_util.h"
#include "common/utf8.h"
#include "fuzz/fuzz_support.h"
#include "risk/python_tokens.h"
#include "risk/risk.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  const std::string_view text = fuzz::as_text(data, size);
  const risk::py_lex_result lexed = risk::lex_python(text);
  if (!lexed.ok) fuzz::check(!lexed.why.empty(), "a refused program says why");
  for (const auto& t : lexed.tokens) {
    if (t.kind != risk::py_token_kind::string) fuzz::check(t.literal, "only strings can be non-literal");
  }
  const risk::tool_profile python{.name = "python", .code = risk::code_language::python, .code_argument = "code"};
  const risk::risk_assessment a = risk::classify_call(python, json{{"code", to_valid_utf8(text)}});
  fuzz::check((a.level == risk::risk_level::low) == a.reasons.empty(), "reasons are empty exactly when low");
  fuzz::check(!a.hazard || a.level == risk::risk_level::high, "a hazard is high");
  return 0;
}
