#include "tools/program.h"

#include "common/utf8.h"

namespace warden::tools {

namespace asio = boost::asio;

sandbox::isolation to_sandbox(isolation mode) noexcept {
  return mode == isolation::bypass ? sandbox::isolation::bypass : sandbox::isolation::sandboxed;
}

std::optional<std::string> program_unavailable(sandbox::sandbox& sb, isolation mode) {
  if (mode == isolation::bypass) return std::nullopt;
  const auto st = sb.status();
  if (st.available) return std::nullopt;
  return sandbox::unavailable_message(st);
}

std::optional<std::string> string_arg(const json& args, const char* key, std::string& err) {
  if (!args.is_object()) {
    err = "Error: the arguments must be a JSON object with a string field '" + std::string(key) + "'.";
    return std::nullopt;
  }
  auto it = args.find(key);
  if (it == args.end() || !it->is_string()) {
    err = "Error: missing required string argument '" + std::string(key) + "'.";
    return std::nullopt;
  }
  return it->get<std::string>();
}

std::string cap_for_model(std::string_view text, std::size_t max_chars, std::optional<std::uint64_t> total_bytes) {
  const std::size_t chars = utf8_length(text);
  const bool head_only = total_bytes.has_value();
  if (chars <= max_chars && !head_only) return std::string(text);
  std::string out(utf8_prefix(text, max_chars));
  out += "\n... (truncated to " + std::to_string(std::min(chars, max_chars)) + " chars for the model; ";
  if (head_only) {
    out += std::to_string(*total_bytes) + " bytes total)";
  } else {
    out += std::to_string(chars) + " chars total)";
  }
  return out;
}

tool_result format_run(const sandbox::run_result& r, std::chrono::milliseconds timeout) {
  if (auto why = sandbox::not_started_reason(r)) {
    tool_result t{"Execution error: " + *why, true, std::nullopt, r.output_bytes};
    t.not_run = std::move(why);
    return t;
  }
  std::string output = to_valid_utf8(r.output);
  const std::optional<std::uint64_t> total =
      r.output_bytes > r.output.size() ? std::optional<std::uint64_t>(r.output_bytes) : std::nullopt;
  const std::string body = cap_for_model(output, k_max_result_chars, total);
  const std::optional<int> status = r.term_signal != 0 ? std::optional<int>(128 + r.term_signal)
                                                       : (r.exit_code >= 0 ? std::optional<int>(r.exit_code) : std::nullopt);
  // the kernel's memory kill says only "signal 9": the model and the person are told why
  const std::string memory_note =
      r.memory_killed ? "\n(the call reached its memory limit of " + std::to_string(r.memory_limit_bytes >> 20) +
                            " MiB, --call-memory: the kernel killed its largest process)"
                      : std::string();
  auto made = [&](std::string text, bool is_error) {
    return tool_result{std::move(text) + memory_note, is_error, status, r.output_bytes};
  };
  if (r.cancelled) return made("Execution cancelled." + (body.empty() ? "" : "\n" + body), true);
  if (r.timed_out) {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
    return made("Execution timed out after " + std::to_string(s) + " seconds." + (body.empty() ? "" : "\n" + body), true);
  }
  if (r.term_signal != 0) {
    return made("Exit code " + std::to_string(128 + r.term_signal) + " (killed by signal " +
                    std::to_string(r.term_signal) + "):\n" + (body.empty() ? "(no output)" : body),
                true);
  }
  if (r.exit_code != 0) {
    return made("Exit code " + std::to_string(r.exit_code) + ":\n" + (body.empty() ? "(no output)" : body), true);
  }
  return made(body.empty() ? "(no output)" : body, false);
}

namespace {

/// Live output: valid UTF-8 only (an incomplete sequence waits for its next bytes), capped.
struct live_output {
  explicit live_output(tool_context& c) : ctx(c) {}  // not aggregate-initialized: see loop_context.h
  tool_context& ctx;
  std::string carry;
  std::size_t chars = 0;
  bool capped = false;

  asio::awaitable<void> take(std::string_view bytes) {
    if (!ctx.on_output || capped) co_return;
    carry.append(bytes);
    const std::size_t hold = incomplete_utf8_tail(carry);
    std::string text = to_valid_utf8(std::string_view(carry).substr(0, carry.size() - hold));
    carry.erase(0, carry.size() - hold);
    const std::size_t n = utf8_length(text);
    if (chars + n > k_max_live_chars) {
      text = std::string(utf8_prefix(text, k_max_live_chars - chars)) + "\n... (further live output not streamed)";
      capped = true;
    }
    chars += n;
    if (!text.empty()) co_await ctx.on_output(std::move(text));
  }
};

}  // namespace

asio::awaitable<tool_result> run_program(sandbox::sandbox& sb, std::vector<std::string> argv, tool_context& ctx) {
  sandbox::run_request req;
  req.argv = std::move(argv);
  req.workdir = ctx.workspace;
  req.mode = to_sandbox(ctx.mode);
  req.timeout = ctx.timeout;
  live_output live(ctx);
  sandbox::run_callbacks cb;
  cb.idle_interval = ctx.idle_interval;
  cb.on_idle = ctx.on_idle;
  cb.on_output = [&live](std::string_view bytes) -> asio::awaitable<void> { co_await live.take(bytes); };
  auto r = co_await sb.run(std::move(req), ctx.cancel, std::move(cb));
  co_return format_run(r, ctx.timeout);
}

}  // namespace warden::tools
