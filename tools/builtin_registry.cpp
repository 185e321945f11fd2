// make_builtin_registry (tools/builtins.h): the built-in tools, in the reference order.
#include <memory>

#include "tools/builtins.h"
#include "tools/knowledge.h"

namespace warden::tools {

std::unique_ptr<registry> make_builtin_registry(sandbox::sandbox& sb, blocking_pool* pool, web_options web,
                                                knowledge_runtime* knowledge) {
  auto r = std::make_unique<registry>();
  r->add(make_python_tool(sb));
  r->add(make_terminal_tool(sb));
  r->add(make_edit_file_tool(pool, sb.policy().workspace_quota_bytes));
  r->add(make_web_search_tool(std::move(web)));
  r->add(make_render_html_tool());
  if (knowledge != nullptr) r->add(make_kb_search_tool(*knowledge));
  return r;
}

}  // namespace warden::tools
