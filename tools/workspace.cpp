#include "tools/workspace.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sandbox/runner.h"

namespace warden::tools {

result<std::string> ensure_workspace(const std::string& root, const std::string& session_id, isolation mode) {
  if (!valid_session_id(session_id)) return make_error(errc::invalid_request, "invalid session_id", "session_id");
  const bool jailed = mode == isolation::sandboxed;
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

}  // namespace warden::tools
