#include "tools/tool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "tools/text_util.h"

namespace warden::tools {

namespace asio = boost::asio;

json tool_def::openai_spec() const {
  return {{"type", "function"},
          {"function", {{"name", name}, {"description", description}, {"parameters", parameters}}}};
}

const std::vector<tool_def>& builtin_tools() {
  static const std::vector<tool_def> tools = {
      {"python", "Python", true,
       "Run Python 3 code in a sandboxed working folder and return its printed output (stdout and "
       "stderr). Files written with relative paths persist for this conversation. There is no "
       "network access. Print what you want to see.",
       {{"type", "object"},
        {"properties", {{"code", {{"type", "string"}, {"description", "The Python source to run."}}}}},
        {"required", {"code"}}}},
      {"terminal", "command", true,
       "Run a bash command in the sandboxed working folder and return its output (stdout and "
       "stderr) and exit code. There is no network access.",
       {{"type", "object"},
        {"properties", {{"command", {{"type", "string"}, {"description", "The bash command line."}}}}},
        {"required", {"command"}}}},
      {"render_html", "HTML preview", false,
       "Show the user a self-contained HTML page (with inline CSS and JavaScript) rendered in the "
       "chat. Use it once per answer, for a visual result.",
       {{"type", "object"},
        {"properties",
         {{"code", {{"type", "string"}, {"description", "The complete HTML document."}}},
          {"title", {{"type", "string"}, {"description", "A short title for the preview."}}}}},
        {"required", {"code"}}}},
  };
  return tools;
}

const tool_def* find_tool(std::string_view name) {
  for (const auto& t : builtin_tools()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

bool is_code_tool(std::string_view name) { return name == "python" || name == "terminal"; }

bool valid_session_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

result<std::string> ensure_workspace(const std::string& root, const std::string& session_id,
                                     sandbox::isolation mode) {
  if (!valid_session_id(session_id)) {
    return make_error(errc::invalid_request, "invalid session_id", "session_id");
  }
  const bool jailed = mode == sandbox::isolation::sandboxed;
  const std::string parent = jailed ? root : root + "/" + k_host_workspaces;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) return make_error(errc::internal, "cannot create the workspace folder " + parent + ": " + ec.message());
  ::chmod(root.c_str(), 0700);
  ::chmod(parent.c_str(), 0700);
  const std::string dir = parent + "/" + session_id;
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return make_error(errc::internal, "cannot create the workspace " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return make_error(errc::internal, "the workspace " + dir + " is not a folder");
  }
  if (jailed) sandbox::hand_over(dir);  // the sandbox user works in it
  return dir;
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
  if (r.failure) return {"Execution error: " + r.failure->message, true};
  std::string output = to_valid_utf8(r.output);
  const std::optional<std::uint64_t> total =
      r.output_bytes > r.output.size() ? std::optional<std::uint64_t>(r.output_bytes) : std::nullopt;
  std::string body = cap_for_model(output, k_max_result_chars, total);
  if (r.cancelled) return {"Execution cancelled." + (body.empty() ? "" : "\n" + body), true};
  if (r.timed_out) {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
    return {"Execution timed out after " + std::to_string(s) + " seconds." + (body.empty() ? "" : "\n" + body), true};
  }
  if (r.term_signal != 0) {
    return {"Exit code " + std::to_string(128 + r.term_signal) + " (killed by signal " +
                std::to_string(r.term_signal) + "):\n" + (body.empty() ? "(no output)" : body),
            true};
  }
  if (r.exit_code != 0) {
    return {"Exit code " + std::to_string(r.exit_code) + ":\n" + (body.empty() ? "(no output)" : body), true};
  }
  return {body.empty() ? "(no output)" : body, false};
}

namespace {

std::string random_hex(std::size_t n) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += k_hex[rng() & 15];
  return s;
}

/// The string argument `key`, or an error text for the model.
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

/// Single argv strings are limited by the kernel (MAX_ARG_STRLEN = 32 pages).
constexpr std::size_t k_max_arg_bytes = 128 * 1024 - 1;

}  // namespace

asio::awaitable<tool_result> execute(const tool_def& tool, const json& args, tool_context& ctx) {
  std::string err;
  sandbox::run_request req;
  req.workdir = ctx.workspace;
  req.mode = ctx.mode;
  req.timeout = ctx.timeout;
  std::string script_path;
  if (tool.name == "python") {
    auto code = string_arg(args, "code", err);
    if (!code) co_return tool_result{err, true};
    const std::string script_name = ".warden_run_" + random_hex(12) + ".py";
    script_path = ctx.workspace + "/" + script_name;
    {
      // O_EXCL|O_NOFOLLOW: the workspace belongs to the model's code, which could plant a
      // symlink under this name; warden must never write through one.
      const int fd = ::open(script_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      bool ok = fd >= 0;
      std::size_t off = 0;
      while (ok && off < code->size()) {
        const ssize_t n = ::write(fd, code->data() + off, code->size() - off);
        if (n <= 0) ok = false;
        else off += static_cast<std::size_t>(n);
      }
      if (fd >= 0) ::close(fd);
      if (!ok) {
        if (fd >= 0) ::unlink(script_path.c_str());
        co_return tool_result{"Execution error: could not write the program to the workspace.", true};
      }
    }
    if (ctx.mode == sandbox::isolation::sandboxed) sandbox::hand_over(script_path);
    // -I: no user site-packages, no PYTHON* variables, and neither the script's folder nor the
    // cwd on sys.path, so nothing planted in the workspace (a .pth, a json.py) runs inside an
    // approved call. Code that wants its own modules says so: sys.path.insert(0, ".").
    req.argv = {"/usr/bin/python3", "-I", "-u", script_name};
  } else if (tool.name == "terminal") {
    auto cmd = string_arg(args, "command", err);
    if (!cmd) co_return tool_result{err, true};
    if (cmd->size() > k_max_arg_bytes) {
      co_return tool_result{"Error: the command is longer than 128 KiB; write a script file instead.", true};
    }
    if (cmd->find('\0') != std::string::npos) co_return tool_result{"Error: the command contains a NUL byte.", true};
    req.argv = {"/bin/bash", "--noprofile", "--norc", "-c", *cmd};  // no start-up files
  } else if (tool.name == "render_html") {
    // Rendering happens in the client (reference §4.9); the server only acknowledges.
    auto code = string_arg(args, "code", err);
    if (!code || code->empty()) co_return tool_result{"Error: render_html requires a non-empty code string.", true};
    std::string title = "HTML preview";
    if (auto t = args.find("title"); t != args.end() && t->is_string() && !t->get<std::string>().empty()) {
      title = std::string(utf8_prefix(to_valid_utf8(t->get<std::string>()), 120));
    }
    co_return tool_result{"Rendered \"" + title + "\" for the user (" + std::to_string(utf8_length(to_valid_utf8(*code))) +
                              " characters of HTML).",
                          false};
  } else {
    co_return tool_result{"Unknown tool: " + tool.name, true};
  }

  // Live output: valid UTF-8 only (an incomplete sequence waits for its next bytes), capped.
  std::string carry;
  std::size_t live_chars = 0;
  bool live_capped = false;
  sandbox::run_callbacks cb;
  cb.idle_interval = ctx.idle_interval;
  cb.on_idle = ctx.on_idle;
  cb.on_output = [&](std::string_view bytes) -> asio::awaitable<void> {
    if (!ctx.on_output || live_capped) co_return;
    carry.append(bytes);
    const std::size_t hold = incomplete_utf8_tail(carry);
    std::string text = to_valid_utf8(std::string_view(carry).substr(0, carry.size() - hold));
    carry.erase(0, carry.size() - hold);
    const std::size_t n = utf8_length(text);
    if (live_chars + n > k_max_live_chars) {
      text = std::string(utf8_prefix(text, k_max_live_chars - live_chars)) + "\n... (further live output not streamed)";
      live_capped = true;
    }
    live_chars += n;
    if (!text.empty()) co_await ctx.on_output(std::move(text));
  };
  auto r = co_await sandbox::run(std::move(req), ctx.cancel, std::move(cb));
  if (!script_path.empty()) ::unlink(script_path.c_str());
  co_return format_run(r, ctx.timeout);
}

}  // namespace warden::tools
