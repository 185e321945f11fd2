// model_pull — downloads a GGUF into the model library (issue 27 "Pull"): from a URL, or from the
// Hugging Face hub as "owner/repo[@revision]:file.gguf" (→ <hf_endpoint>/owner/repo/resolve/
// <revision or main>/file.gguf, the hub's file URL).
//
// A pull writes <models_dir>/.<name>.part (a dot file: engine/model_library.h never lists it),
// resumes an existing one with an HTTP Range request (a 206 answer appends; a 200 starts again),
// refuses a body that does not start with the GGUF magic, checks the free space of models_dir
// against the size the server announces before writing, verifies the SHA-256 (the request's
// `sha256`, else the hub's: its X-Linked-Etag / ETag header carries the file's SHA-256 for LFS
// files), and only then renames the file to <models_dir>/<name>. A checksum mismatch deletes the
// partial file; an interrupted transfer keeps it for the next pull of the same name to resume.
// A pull whose destination is a loaded model, or is being pulled already, is refused (conflict).
// libcurl does the transfer (redirects followed, HTTP(S) only) on a thread of the pull's own.
//
// Errors (as error values): invalid_request (bad source or name: type_code invalid_source /
// invalid_name), conflict ("model_in_use" / "pull_in_progress"), insufficient_storage
// ("insufficient_storage"), upstream_error ("checksum_mismatch", "not_gguf", "download_failed" with
// the HTTP status or curl's reason), cancelled ("cancelled").
// Thread-safety: pull_manager's methods are safe from any thread; its destructor cancels and joins
// every pull.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"

namespace warden::engine {

struct pull_request {
  std::string url;     ///< http(s) URL of the file; or
  std::string hf;      ///< "owner/repo[@revision]:path/file.gguf"
  std::string name;    ///< the library file name ("x.gguf"); "" = the URL's last segment
  std::string sha256;  ///< expected digest (64 hex digits); "" = the source's, if it gives one
};

/// Where a pull reads and writes: the URL and the library file name. Errors: invalid_request.
struct pull_target {
  std::string url;
  std::string name;    ///< "<id>.gguf"
  std::string sha256;  ///< lower-case; "" when not given
};
result<pull_target> resolve_pull(const pull_request& r, const std::string& hf_endpoint);
/// A library file name: 1..200 of [A-Za-z0-9._+-], ending in ".gguf", not starting with '.'. Pure.
bool valid_model_file_name(std::string_view name);
/// The first byte of "Content-Range: bytes <first>-<last>/<total>" and the total (0 = "*"). Pure.
std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_content_range(std::string_view value);
/// The SHA-256 in an ETag / X-Linked-Etag value (quotes and W/ removed) when it is 64 hex digits. Pure.
std::string etag_sha256(std::string_view value);

enum class pull_state { running, done, failed, cancelled };
const char* to_string(pull_state s) noexcept;

struct pull_status {
  std::string id;
  std::string model;  ///< the model id it becomes (name without .gguf)
  std::string url;
  pull_state state = pull_state::running;
  std::uint64_t downloaded_bytes = 0;  ///< of the whole file (a resumed part included)
  std::uint64_t total_bytes = 0;       ///< 0 while unknown
  double bytes_per_s = 0;
  bool resumed = false;                ///< it continued a partial file
  std::string sha256;                  ///< the file's, once done
  std::optional<error> failure;
};

class pull_manager {
 public:
  /// `in_use(path)`: true when that library file is loaded (a pull never overwrites it).
  pull_manager(std::string models_dir, std::string hf_endpoint, std::function<bool(const std::string&)> in_use);
  ~pull_manager();
  pull_manager(const pull_manager&) = delete;
  pull_manager& operator=(const pull_manager&) = delete;

  /// Starts a pull in the background; its id. Errors: resolve_pull's, conflict.
  result<std::string> start(const pull_request& r);
  std::optional<pull_status> get(const std::string& id) const;
  /// The pulls still running, then the last finished ones (at most 20 kept).
  std::vector<pull_status> list() const;
  /// Cancels a running pull (its partial file stays for a resume). False when unknown or over.
  bool cancel(const std::string& id);

 private:
  struct job;
  void run(const std::shared_ptr<job>& j);
  /// After the transfer: verify, rename, and set the outcome.
  void finish(job& j, const std::string& curl_error);
  void forget_old_locked();

  std::string dir_;
  std::string hf_endpoint_;
  std::function<bool(const std::string&)> in_use_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<job>> jobs_;
  std::vector<std::string> order_;  ///< ids, oldest first
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

}  // namespace warden::engine
