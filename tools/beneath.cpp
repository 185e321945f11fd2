#include "tools/beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace warden::tools {

namespace {

using sv = std::string_view;
constexpr std::size_t k_max_path_bytes = 4096;  // PATH_MAX
constexpr std::size_t k_max_path_parts = 64;

/// Closes its descriptor when it goes.
struct fd_closer {
  int fd = -1;
  explicit fd_closer(int f) : fd(f) {}
  fd_closer(const fd_closer&) = delete;
  fd_closer& operator=(const fd_closer&) = delete;
  ~fd_closer() {
    if (fd >= 0) ::close(fd);
  }
};

error refused(sv rel, const std::string& why) {
  return make_error(errc::invalid_request, "path '" + std::string(rel.substr(0, 300)) + "' " + why);
}

error io_failed(sv rel, const char* what) {
  return make_error(errc::internal, std::string(what) + " '" + std::string(rel.substr(0, 300)) + "' failed: " +
                                        std::strerror(errno));
}

/// One component opened under `dir`: openat2 beneath with no symlinks, or (no openat2) openat
/// with O_NOFOLLOW. -1 with errno.
int open_component(int dir, const std::string& name, int flags, mode_t mode = 0) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
  how.mode = (flags & O_CREAT) != 0 ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const long r = ::syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how);
  if (r >= 0 || errno != ENOSYS) return static_cast<int>(r);
  return ::openat(dir, name.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, mode);
}

/// Why opening the component `name` under `dir` failed, for the model (a symlink opened as a
/// folder says ENOTDIR: it is named as the link it is).
error open_error(sv rel, const std::string& name, int dir) {
  int why = errno;
  struct stat st {};
  if (why == ENOTDIR && ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) why = ELOOP;
  errno = why;
  switch (why) {
    case ELOOP: return refused(rel, "goes through a symbolic link ('" + name + "'), which edit_file does not follow");
    case EXDEV: return refused(rel, "leaves the workspace");
    case ENOTDIR: return refused(rel, "goes through '" + name + "', which is not a folder");
    case ENOENT: return refused(rel, "names a folder that does not exist ('" + name + "')");
    case EACCES:
    case EPERM: return refused(rel, "cannot be opened: permission denied");
    default: return io_failed(rel, "opening");
  }
}

/// The components of a relative path; an error for an empty or absolute path, a NUL, or `..`.
result<std::vector<std::string>> components(sv rel) {
  if (rel.empty()) return refused(rel, "is empty; give a path relative to the workspace");
  if (rel.front() == '/') return refused(rel, "is absolute; give a path relative to the workspace");
  if (rel.size() > k_max_path_bytes) {
    return refused(rel, "is " + std::to_string(rel.size()) + " bytes long; at most 4096 are allowed");
  }
  for (char c : rel) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') return refused(rel, "holds a control character (a NUL, a newline, …)");
  }
  if (rel.back() == '/') return refused(rel, "ends with '/', which names a folder, not a file");
  std::vector<std::string> parts;
  for (std::size_t p = 0; p <= rel.size();) {
    std::size_t slash = rel.find('/', p);
    if (slash == sv::npos) slash = rel.size();
    const sv part = rel.substr(p, slash - p);
    if (part == "..") return refused(rel, "climbs out with '..'; give a path inside the workspace");
    if (!part.empty() && part != ".") parts.emplace_back(part);
    p = slash + 1;
  }
  if (parts.empty()) return refused(rel, "names the workspace itself, not a file");
  if (parts.size() > k_max_path_parts) return refused(rel, "has more than 64 parts");
  return parts;
}

/// The parent folder of the path's last component, opened (O_PATH) beneath `dir`; missing
/// folders are created when `create`, else a missing one is nullopt.
result<std::optional<int>> open_parent(int dir, sv rel, const std::vector<std::string>& parts, bool create) {
  int cur = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
  if (cur < 0) return io_failed(rel, "opening the workspace for");
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    fd_closer holder(cur);
    int next = open_component(cur, parts[i], O_PATH | O_DIRECTORY);
    if (next < 0 && errno == ENOENT && create) {
      if (::mkdirat(cur, parts[i].c_str(), 0755) != 0 && errno != EEXIST) return io_failed(rel, "creating a folder of");
      next = open_component(cur, parts[i], O_PATH | O_DIRECTORY);
    }
    if (next < 0 && errno == ENOENT && !create) return std::optional<int>();
    if (next < 0) return open_error(rel, parts[i], cur);
    cur = next;
  }
  return std::optional<int>(cur);
}

/// Checks an open file: a regular file with one link. `what` is "read" or "replaced".
std::optional<error> check_file(int fd, sv rel, struct stat& st) {
  if (::fstat(fd, &st) != 0) return io_failed(rel, "reading the status of");
  if (!S_ISREG(st.st_mode)) return refused(rel, "is not a regular file");
  if (st.st_nlink > 1) return refused(rel, "has other hard links (it may be a file outside the workspace); edit_file does not change it");
  return std::nullopt;
}

file_version version_of(const struct stat& st) {
  return {true, static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino),
          static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec};
}

/// The version `name` under `dir` holds now (none when it is missing or not a plain name).
file_version current_version(int dir, const std::string& name) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
  return version_of(st);
}

std::string temp_name(const std::string& name) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::uint64_t n = rng();
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(n));
  std::string out(1, '.');
  out.append(name, 0, 200);
  out += ".warden-";
  out += suffix;
  return out;
}

result<void> write_all(int fd, sv content, sv rel) {
  for (std::size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_failed(rel, "writing");
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return io_failed(rel, "syncing");
  return {};
}

}  // namespace

result<std::optional<std::string>> read_beneath(int dir_fd, std::string_view rel, std::size_t max_bytes,
                                                file_version* version) {
  if (version) *version = {};
  auto parts = components(rel);
  if (!parts) return parts.error();
  auto parent = open_parent(dir_fd, rel, *parts, false);
  if (!parent) return parent.error();
  if (!parent->has_value()) return std::optional<std::string>();  // a folder on the way is missing
  fd_closer p(**parent);
  const int fd = open_component(p.fd, parts->back(), O_RDONLY | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) return std::optional<std::string>();
  if (fd < 0) return open_error(rel, parts->back(), p.fd);
  fd_closer f(fd);
  struct stat st {};
  if (auto e = check_file(fd, rel, st)) return *e;
  if (version) *version = version_of(st);
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    return refused(rel, "is " + std::to_string(st.st_size) + " bytes; at most " + std::to_string(max_bytes) + " are read");
  }
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_failed(rel, "reading");
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > max_bytes) return refused(rel, "grew past " + std::to_string(max_bytes) + " bytes while it was read");
  }
  return std::optional<std::string>(std::move(out));
}

result<void> write_beneath(int dir_fd, std::string_view rel, std::string_view content, const file_version* expected) {
  auto parts = components(rel);
  if (!parts) return parts.error();
  auto parent = open_parent(dir_fd, rel, *parts, true);
  if (!parent) return parent.error();
  fd_closer p(parent->value_or(-1));
  const std::string& name = parts->back();
  mode_t mode = 0644;
  std::optional<std::pair<uid_t, gid_t>> owner;
  if (const int old = open_component(p.fd, name, O_RDONLY | O_NONBLOCK); old >= 0) {
    fd_closer o(old);
    struct stat st {};
    if (auto e = check_file(old, rel, st)) return *e;
    mode = st.st_mode & 0777;  // never setuid, setgid or sticky: the content is new
    owner = std::pair{st.st_uid, st.st_gid};
  } else if (errno != ENOENT) {
    return open_error(rel, name, p.fd);
  }
  const std::string tmp = temp_name(name);
  const int fd = open_component(p.fd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return io_failed(rel, "creating a temporary file for");
  {
    fd_closer t(fd);
    auto written = write_all(fd, content, rel);
    // The replaced file's owner, where this thread may give it (a root server under bypass);
    // elsewhere the writer's own, as any rewrite by that user would leave it.
    if (written && owner) (void)::fchown(fd, owner->first, owner->second);
    if (written && ::fchmod(fd, mode) != 0) written = io_failed(rel, "setting the permissions of");
    if (!written) {
      ::unlinkat(p.fd, tmp.c_str(), 0);
      return written;
    }
  }
  if (expected && current_version(p.fd, name) != *expected) {
    ::unlinkat(p.fd, tmp.c_str(), 0);
    return refused(rel, "changed after it was read (another program wrote it); nothing was written: read it again");
  }
  if (::renameat(p.fd, tmp.c_str(), p.fd, name.c_str()) != 0) {
    auto e = io_failed(rel, "replacing");
    ::unlinkat(p.fd, tmp.c_str(), 0);
    return e;
  }
  return {};
}

}  // namespace warden::tools
