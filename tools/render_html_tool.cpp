#include "tools/builtins.h"
#include "tools/program.h"
#include "common/utf8.h"

namespace warden::tools {

namespace {

/// Rendering happens in the client (reference §4.9); the server only acknowledges.
class render_html_tool : public tool {
 public:
  render_html_tool() {
    info_ = {"render_html", "HTML preview",
             "Show the user a self-contained HTML page (with inline CSS and JavaScript) rendered in the "
             "chat. Use it once per answer, for a visual result.",
             {{"type", "object"},
              {"properties",
               {{"code", {{"type", "string"}, {"description", "The complete HTML document."}}},
                {"title", {{"type", "string"}, {"description", "A short title for the preview."}}}}},
              {"required", {"code"}}},
             {.runs_code = false, .reads_network = false, .writes_files = false, .once_per_answer = true,
              .code = code_language::html, .code_argument = "code"}};
  }
  const tool_info& info() const override { return info_; }
  std::optional<std::string> unavailable(isolation) const override { return std::nullopt; }

  boost::asio::awaitable<tool_result> run(const json& args, tool_context&) override {
    std::string err;
    auto code = string_arg(args, "code", err);
    if (!code || code->empty()) co_return error_result("Error: render_html requires a non-empty code string.");
    std::string title = "HTML preview";
    if (auto t = args.find("title"); t != args.end() && t->is_string() && !t->get<std::string>().empty()) {
      title = std::string(utf8_prefix(to_valid_utf8(t->get<std::string>()), 120));
    }
    co_return ok_result("Rendered \"" + title + "\" for the user (" + std::to_string(utf8_length(to_valid_utf8(*code))) +
                        " characters of HTML).");
  }

 private:
  tool_info info_;
};

}  // namespace

std::unique_ptr<tool> make_render_html_tool() { return std::make_unique<render_html_tool>(); }

}  // namespace warden::tools
