// program — what python and terminal share: running one program through the sandbox with the
// call's live output, and the text the model sees of it (reference unsloth-studio.md §4.1–§4.4).
//
// run_program(): runs `argv` in ctx.workspace under ctx.mode; merged stdout/stderr goes to
// ctx.on_output live (valid UTF-8 only: an incomplete sequence waits for its next bytes; at most
// k_max_live_chars, then one notice) and into the result (format_run).
// format_run(): "(no output)" when empty; "Exit code N:\n…" on a non-zero exit;
// "Execution timed out after N seconds." / "Execution cancelled." (+ output so far); capped at
// k_max_result_chars with a truncation notice (cap_for_model); a program that was never started
// (a spawn failure, the quota, a jail that could not start: sandbox::not_started_reason) is
// "Execution error: …" with tool_result::not_run set.
// Thread-safety: pure functions and a coroutine per call.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sandbox/runner.h"
#include "tools/tool.h"

namespace warden::tools {

boost::asio::awaitable<tool_result> run_program(sandbox::sandbox& sb, std::vector<std::string> argv, tool_context& ctx);

/// `text` capped at `max_chars` characters with "... (truncated to N chars for the model;
/// M chars total)" appended; unchanged when short enough. `total_bytes` is given when `text` is
/// only the head of a longer output: the notice then always appears and names the byte total.
std::string cap_for_model(std::string_view text, std::size_t max_chars = k_max_result_chars,
                          std::optional<std::uint64_t> total_bytes = std::nullopt);

/// A finished run as the model sees it (pure; table-tested).
tool_result format_run(const sandbox::run_result& r, std::chrono::milliseconds timeout);

/// The sandbox isolation for a tool isolation.
sandbox::isolation to_sandbox(isolation mode) noexcept;

/// The reason a program cannot run in `mode` (the sandbox is unavailable), or nullopt.
std::optional<std::string> program_unavailable(sandbox::sandbox& sb, isolation mode);

/// The string argument `key`, or nullopt with the model-facing error in `err`.
std::optional<std::string> string_arg(const json& args, const char* key, std::string& err);

}  // namespace warden::tools
