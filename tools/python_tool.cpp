#include <fcntl.h>
#include <unistd.h>

#include "common/ids.h"
#include "tools/builtins.h"
#include "tools/program.h"

namespace warden::tools {

namespace {

/// Writes `code` to a new file; O_EXCL|O_NOFOLLOW: the workspace belongs to the model's code,
/// which could plant a symlink under this name, and warden must never write through one.
bool write_new_file(const std::string& path, const std::string& code) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  std::size_t off = 0;
  while (ok && off < code.size()) {
    const ssize_t n = ::write(fd, code.data() + off, code.size() - off);
    if (n <= 0) ok = false;
    else off += static_cast<std::size_t>(n);
  }
  if (fd >= 0) ::close(fd);
  if (!ok && fd >= 0) ::unlink(path.c_str());
  return ok;
}

/// -I: no user site-packages, no PYTHON* variables, and neither the script's folder nor the
/// cwd on sys.path, so nothing planted in the workspace (a .pth, a json.py) runs inside an
/// approved call. Code that wants its own modules says so: sys.path.insert(0, ".").
std::vector<std::string> python_argv(const std::string& script) { return {"/usr/bin/python3", "-I", "-u", script}; }

/// The program file could not be written: nothing ran.
tool_result not_written() {
  tool_result r = error_result("Execution error: could not write the program to the workspace.");
  r.not_run = "could not write the program to the workspace";
  return r;
}

class python_tool : public tool {
 public:
  explicit python_tool(sandbox::sandbox& sb) : sb_(sb) {
    info_ = {"python", "Python",
             "Run Python 3 code in a sandboxed working folder and return its printed output (stdout and "
             "stderr). Files written with relative paths persist for this conversation. There is no "
             "network access. Print what you want to see.",
             {{"type", "object"},
              {"properties", {{"code", {{"type", "string"}, {"description", "The Python source to run."}}}}},
              {"required", {"code"}}},
             {.runs_code = true, .reads_network = false, .writes_files = true, .once_per_answer = false,
              .code = code_language::python, .code_argument = "code"}};
  }
  const tool_info& info() const override { return info_; }
  std::optional<std::string> unavailable(isolation mode) const override { return program_unavailable(sb_, mode); }

  boost::asio::awaitable<tool_result> run(const json& args, tool_context& ctx) override {
    std::string err;
    auto code = string_arg(args, "code", err);
    if (!code) co_return error_result(err);
    const std::string script_name = ".warden_run_" + ids::new_id(ids::kind::script) + ".py";
    const std::string script_path = ctx.workspace + "/" + script_name;
    if (!write_new_file(script_path, *code)) co_return not_written();
    if (ctx.mode == isolation::sandboxed) sandbox::hand_over(script_path);
    auto r = co_await run_program(sb_, python_argv(script_name), ctx);
    ::unlink(script_path.c_str());
    co_return r;
  }

 private:
  sandbox::sandbox& sb_;
  tool_info info_;
};

}  // namespace

std::unique_ptr<tool> make_python_tool(sandbox::sandbox& sb) { return std::make_unique<python_tool>(sb); }

}  // namespace warden::tools
