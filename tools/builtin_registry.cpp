// make_builtin_registry (tools/builtins.h): the built-in tools, in the reference order.
#include <memory>

#include "tools/builtins.h"

namespace warden::tools {

std::unique_ptr<registry> make_builtin_registry(sandbox::sandbox& sb, blocking_pool* pool) {
  auto r = std::make_unique<registry>();
  r->add(make_python_tool(sb));
  r->add(make_terminal_tool(sb));
  r->add(make_edit_file_tool(pool, sb.policy().workspace_quota_bytes));
  r->add(make_render_html_tool());
  return r;
}

}  // namespace warden::tools
