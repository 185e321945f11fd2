#include "http/api_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "common/permission_mode.h"

namespace warden::http {

namespace {

bool blank(char c) { return c == ' ' || c == '\t'; }

/// The blank-separated fields of a line.
std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !blank(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool printable_key(std::string_view key) {
  return std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 127; });
}

error bad_entry(std::string_view source, std::size_t line_no, const std::string& what) {
  return make_error(errc::invalid_request, "--api-keys-file " + std::string(source) + " line " +
                                               std::to_string(line_no) + ": " + what,
                    "api_keys_file");
}

/// One entry from the fields of line `line_no`; the error names what is wrong with it.
result<named_key> parse_entry(const std::vector<std::string_view>& f, std::string_view source, std::size_t line_no) {
  if (f.size() != 3) {
    return bad_entry(source, line_no, "expected three fields 'NAME ROLE KEY' separated by blanks, found " +
                                          std::to_string(f.size()));
  }
  named_key k;
  if (!valid_session_id(f[0])) {
    return bad_entry(source, line_no, "the name must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'");
  }
  k.name = f[0];
  if (f[1] == "user") k.role = key_role::user;
  else if (f[1] == "admin") k.role = key_role::admin;
  else return bad_entry(source, line_no, "the role of '" + k.name + "' must be 'user' or 'admin'");
  if (f[2].size() < k_min_api_key_bytes || f[2].size() > k_max_api_key_bytes || !printable_key(f[2])) {
    return bad_entry(source, line_no, "the key of '" + k.name + "' must be " + std::to_string(k_min_api_key_bytes) +
                                          " to " + std::to_string(k_max_api_key_bytes) +
                                          " printable ASCII characters without blanks");
  }
  k.key = f[2];
  return k;
}

/// Checks the entry against those before it (names and keys are unique).
std::optional<error> check_unique(const std::vector<named_key>& before, const named_key& k, std::string_view source,
                                  std::size_t line_no) {
  for (const auto& o : before) {
    if (o.name == k.name) return bad_entry(source, line_no, "the name '" + k.name + "' is used twice");
    if (equal_constant_time(o.key, k.key)) {
      return bad_entry(source, line_no, "the key of '" + k.name + "' is also the key of '" + o.name + "'");
    }
  }
  return std::nullopt;
}

}  // namespace

bool equal_constant_time(std::string_view a, std::string_view b) noexcept {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const char ca = i < a.size() ? a[i] : 0;
    const char cb = i < b.size() ? b[i] : 0;
    diff = static_cast<unsigned char>(diff | (ca ^ cb));
  }
  return diff == 0;
}

result<std::vector<named_key>> parse_api_keys(std::string_view text, std::string_view source) {
  std::vector<named_key> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto f = fields_of(line);
    if (f.empty() || f.front().front() == '#') continue;
    auto k = parse_entry(f, source, line_no);
    if (!k) return k.error();
    if (auto e = check_unique(out, *k, source, line_no)) return *e;
    out.push_back(std::move(*k));
  }
  if (out.empty()) {
    return make_error(errc::invalid_request,
                      "--api-keys-file " + std::string(source) + " holds no key (lines 'NAME ROLE KEY')",
                      "api_keys_file");
  }
  return out;
}

result<std::vector<named_key>> read_api_keys_file(const std::string& path) {
  const std::string what = "--api-keys-file " + path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return make_error(errc::invalid_request, "cannot read " + what + ": " + std::strerror(errno), "api_keys_file");
  struct stat st {};
  std::string text;
  std::optional<error> refused;
  if (::fstat(fd, &st) != 0) {
    refused = make_error(errc::invalid_request, "cannot read " + what + ": " + std::strerror(errno), "api_keys_file");
  } else if (!S_ISREG(st.st_mode)) {
    refused = make_error(errc::invalid_request, what + " is not a regular file", "api_keys_file");
  } else if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    refused = make_error(errc::invalid_request,
                         what + " may be read or written by other users (mode " + mode +
                             "); it holds API keys: chmod 600 it",
                         "api_keys_file");
  } else if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    // whoever owns the file can give themselves an admin key at the next start
    refused = make_error(errc::invalid_request,
                         what + " belongs to uid " + std::to_string(st.st_uid) + ", not to warden's user (uid " +
                             std::to_string(::geteuid()) + ") or root; whoever owns it could add keys: chown it",
                         "api_keys_file");
  } else if (static_cast<std::size_t>(st.st_size) > k_max_api_keys_file_bytes) {
    refused = make_error(errc::invalid_request, what + " is larger than 1 MiB", "api_keys_file");
  } else {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  if (refused) return *refused;
  return parse_api_keys(text, path);
}

key_ring::key_ring(std::string api_key) {
  if (!api_key.empty()) keys_.push_back(named_key{"", key_role::admin, std::move(api_key)});
}

key_ring::key_ring(std::vector<named_key> keys) : keys_(std::move(keys)), named_(true) {}

std::optional<principal> key_ring::resolve(std::string_view presented) const {
  if (keys_.empty()) return single_user();
  // Every key is compared, whatever matched before: the time depends on the keys' lengths only.
  const named_key* match = nullptr;
  for (const auto& k : keys_) {
    const bool eq = equal_constant_time(presented, k.key);
    if (eq && !match) match = &k;
  }
  if (!match || presented.empty()) return std::nullopt;
  return principal{match->name, match->role};
}

}  // namespace warden::http
