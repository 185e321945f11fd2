#include "tools/builtins.h"
#include "tools/program.h"

namespace warden::tools {

namespace {

/// Single argv strings are limited by the kernel (MAX_ARG_STRLEN = 32 pages).
constexpr std::size_t k_max_arg_bytes = 128 * 1024 - 1;

/// No start-up files.
std::vector<std::string> bash_argv(const std::string& cmd) { return {"/bin/bash", "--noprofile", "--norc", "-c", cmd}; }

class terminal_tool : public tool {
 public:
  explicit terminal_tool(sandbox::sandbox& sb) : sb_(sb) {
    info_ = {"terminal", "command",
             "Run a bash command in the sandboxed working folder and return its output (stdout and "
             "stderr) and exit code. There is no network access.",
             {{"type", "object"},
              {"properties", {{"command", {{"type", "string"}, {"description", "The bash command line."}}}}},
              {"required", {"command"}}},
             {.runs_code = true, .reads_network = false, .writes_files = true, .once_per_answer = false,
              .code = code_language::shell, .code_argument = "command"}};
  }
  const tool_info& info() const override { return info_; }
  std::optional<std::string> unavailable(isolation mode) const override { return program_unavailable(sb_, mode); }

  boost::asio::awaitable<tool_result> run(const json& args, tool_context& ctx) override {
    std::string err;
    auto cmd = string_arg(args, "command", err);
    if (!cmd) co_return error_result(err);
    if (cmd->size() > k_max_arg_bytes) {
      co_return error_result("Error: the command is longer than 128 KiB; write a script file instead.");
    }
    if (cmd->find('\0') != std::string::npos) {
      co_return error_result("Error: the command contains a NUL byte.");
    }
    co_return co_await run_program(sb_, bash_argv(*cmd), ctx);
  }

 private:
  sandbox::sandbox& sb_;
  tool_info info_;
};

}  // namespace

std::unique_ptr<tool> make_terminal_tool(sandbox::sandbox& sb) { return std::make_unique<terminal_tool>(sb); }

}  // namespace warden::tools
