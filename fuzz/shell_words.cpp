// Fuzzes the `auto` classifier's shell side: risk/shell_words.h parse_shell (and, on each
// command it finds, effective_argv, shell_c_payload, program_name) and risk/risk.h
// classify_call for a terminal-like tool whose `command` is the input.
// Invariants: a refusal says why; each redirection has its write flag; the classifier is high
// exactly when it gives reasons, and a hazard is always high.
#include "common/json_util.h"
#include "common/utf8.h"
#include "fuzz/fuzz_support.h"
#include "risk/risk.h"
#include "risk/shell_words.h"

namespace warden::fuzz {
namespace {

void check_parse(std::string_view text) {
  const risk::shell_parse p = risk::parse_shell(text);
  if (!p.ok) {
    check(!p.why.empty(), "a refused command line says why");
    return;
  }
  for (const auto& c : p.commands) {
    check(c.redirects.size() == c.redirect_writes.size(), "each redirection has its write flag");
    std::vector<std::string> wrappers;
    const auto eff = risk::effective_argv(c.argv, &wrappers);  // env -S may split a word into several
    (void)risk::shell_c_payload(eff);
    if (!eff.empty()) (void)risk::program_name(eff.front());
    for (const auto& w : c.argv) (void)risk::is_assignment_word(w);
  }
}

void check_classified(const risk::risk_assessment& a) {
  check((a.level == risk::risk_level::low) == a.reasons.empty(), "reasons are empty exactly when low");
  check(!a.hazard || a.level == risk::risk_level::high, "a hazard is high");
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::check_parse(text);
  const risk::tool_profile terminal{.name = "terminal", .code = risk::code_language::shell, .code_argument = "command"};
  fuzz::check_classified(risk::classify_call(terminal, json{{"command", to_valid_utf8(text)}}));
  return 0;
}
