#include "engine/model_pull.h"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/ids.h"

namespace warden::engine {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_keep_finished = 20;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

bool hf_part_ok(std::string_view s) {
  return !s.empty() && s.size() <= 96 && s != "." && s != ".." &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; });
}

/// "owner/repo[@rev]:path" → the hub's resolve URL and the file's base name.
result<std::pair<std::string, std::string>> hub_url(const std::string& spec, const std::string& endpoint) {
  const auto colon = spec.find(':');
  const auto bad = [&] {
    return make_error(errc::invalid_request, "hf must look like \"owner/repo:file.gguf\" (or owner/repo@revision:file.gguf)",
                      "hf", "invalid_source");
  };
  if (colon == std::string::npos) return bad();
  std::string repo = spec.substr(0, colon);
  const std::string file = spec.substr(colon + 1);
  std::string rev = "main";
  if (const auto at = repo.find('@'); at != std::string::npos) {
    rev = repo.substr(at + 1);
    repo.resize(at);
  }
  const auto slash = repo.find('/');
  if (slash == std::string::npos || !hf_part_ok(repo.substr(0, slash)) || !hf_part_ok(repo.substr(slash + 1)) ||
      !hf_part_ok(rev) || file.empty() || file.size() > 512 || file.find("..") != std::string::npos ||
      file.front() == '/' || file.find_first_of("?#% \\") != std::string::npos) {
    return bad();
  }
  const auto base = file.substr(file.find_last_of('/') + 1);
  return std::make_pair(endpoint + "/" + repo + "/resolve/" + rev + "/" + file, base);
}

std::string url_file_name(const std::string& url) {
  std::string path = url.substr(0, url.find_first_of("?#"));
  return path.substr(path.find_last_of('/') + 1);
}

std::string file_sha256(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 20);
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (f.gcount() > 0) EVP_DigestUpdate(ctx, buf.data(), static_cast<std::size_t>(f.gcount()));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx, md, &n);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  char two[3];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(two, sizeof two, "%02x", md[i]);
    hex += two;
  }
  return hex;
}

std::uint64_t free_bytes(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return UINT64_MAX;
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

}  // namespace

bool valid_model_file_name(std::string_view name) {
  if (name.size() < 6 || name.size() > 200 || name.front() == '.' || !name.ends_with(".gguf")) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+';
  });
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_content_range(std::string_view v) {
  if (!v.starts_with("bytes ")) return std::nullopt;
  v.remove_prefix(6);
  const auto dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
  try {
    const std::uint64_t first = std::stoull(std::string(v.substr(0, dash)));
    const std::string_view total = v.substr(slash + 1);
    return std::make_pair(first, total == "*" ? 0 : std::stoull(std::string(total)));
  } catch (...) {
    return std::nullopt;
  }
}

std::string etag_sha256(std::string_view v) {
  if (v.starts_with("W/")) v.remove_prefix(2);
  while (!v.empty() && (v.front() == '"' || v.front() == ' ')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '"' || v.back() == ' ' || v.back() == '\r' || v.back() == '\n')) v.remove_suffix(1);
  return is_hex64(v) ? lower(std::string(v)) : "";
}

result<pull_target> resolve_pull(const pull_request& r, const std::string& hf_endpoint) {
  if (r.url.empty() == r.hf.empty()) {
    return make_error(errc::invalid_request, "give one of url or hf", r.url.empty() ? "url" : "hf", "invalid_source");
  }
  pull_target t;
  std::string base;
  if (!r.hf.empty()) {
    auto hub = hub_url(r.hf, hf_endpoint);
    if (!hub) return hub.error();
    t.url = hub->first;
    base = hub->second;
  } else {
    if (!(r.url.starts_with("http://") || r.url.starts_with("https://")) || r.url.size() > 4096 ||
        r.url.find_first_of(" \r\n") != std::string::npos) {
      return make_error(errc::invalid_request, "url must be an http:// or https:// URL", "url", "invalid_source");
    }
    t.url = r.url;
    base = url_file_name(r.url);
  }
  t.name = r.name.empty() ? base : r.name;
  if (!valid_model_file_name(t.name)) {
    return make_error(errc::invalid_request,
                      "the model's file name '" + t.name + "' must end in .gguf and use only letters, digits, '.', '_', "
                      "'-' and '+' (not starting with '.'); pass name",
                      "name", "invalid_name");
  }
  if (!r.sha256.empty() && !is_hex64(r.sha256)) {
    return make_error(errc::invalid_request, "sha256 must be 64 hex digits", "sha256", "invalid_value");
  }
  t.sha256 = lower(r.sha256);
  return t;
}

namespace {

std::string header_value(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || lower(std::string(line.substr(0, name.size()))) != name) return "";
  std::string_view v = line.substr(name.size());
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  return std::string(v);
}

}  // namespace

const char* to_string(pull_state s) noexcept {
  switch (s) {
    case pull_state::running: return "running";
    case pull_state::done: return "done";
    case pull_state::failed: return "failed";
    case pull_state::cancelled: return "cancelled";
  }
  return "failed";
}

struct pull_manager::job {
  pull_target target;
  std::string dest, part, models_dir;
  mutable std::mutex mu;
  pull_status st;
  std::atomic<bool> cancel{false};
  // the transfer's state: the pull's own thread only
  std::FILE* out = nullptr;
  std::uint64_t offset = 0;   ///< bytes of the partial file the transfer continues
  std::uint64_t written = 0;  ///< bytes written by this transfer
  long status = 0;
  std::uint64_t content_length = 0;
  std::optional<std::uint64_t> range_first;
  std::uint64_t range_total = 0;
  std::string etag;
  std::optional<error> abort_reason;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  void publish() {
    std::lock_guard lock(mu);
    st.downloaded_bytes = offset + written;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    st.bytes_per_s = secs > 0.2 ? static_cast<double>(written) / secs : 0;
  }
  /// The first body bytes arrived: check the answer, then open the partial file.
  bool open_output(std::string_view first) {
    if (status == 206 && range_first == offset) {
      total(range_total);
    } else if (status == 200) {
      offset = 0;  // the server sends the whole file: start again
      total(content_length);
    } else {
      abort_reason = make_error(errc::upstream_error,
                                "the server answered HTTP " + std::to_string(status) + " for " + target.url, "",
                                "download_failed");
      return false;
    }
    if (offset == 0 && std::string_view("GGUF").substr(0, std::min<std::size_t>(4, first.size())) != first.substr(0, 4)) {
      abort_reason = make_error(errc::upstream_error, target.url + " is not a GGUF file (it does not start with GGUF)", "",
                                "not_gguf");
      return false;
    }
    const std::uint64_t total_now = st.total_bytes;
    if (total_now > offset && total_now - offset > free_bytes(models_dir)) {
      abort_reason = make_error(errc::insufficient_storage,
                                target.name + " needs " + std::to_string((total_now - offset) >> 20) + " MiB more but " +
                                    models_dir + " has " + std::to_string(free_bytes(models_dir) >> 20) + " MiB free",
                                "", "insufficient_storage");
      return false;
    }
    out = std::fopen(part.c_str(), offset > 0 ? "ab" : "wb");
    if (!out) abort_reason = make_error(errc::internal, "cannot write " + part, "", "download_failed");
    std::lock_guard lock(mu);
    st.resumed = offset > 0;
    return out != nullptr;
  }
  void total(std::uint64_t n) {
    std::lock_guard lock(mu);
    st.total_bytes = n;
  }
  static std::size_t on_header(char* buf, std::size_t size, std::size_t n, void* ud) {
    auto* j = static_cast<job*>(ud);
    const std::string_view line(buf, size * n);
    if (line.starts_with("HTTP/")) {  // a new response (after a redirect): its own headers
      const auto sp = line.find(' ');
      j->status = sp == std::string_view::npos ? 0 : std::atol(std::string(line.substr(sp + 1, 3)).c_str());
      j->content_length = 0;
      j->range_first.reset();
      j->range_total = 0;
      return size * n;
    }
    if (auto v = header_value(line, "content-length:"); !v.empty()) j->content_length = std::strtoull(v.c_str(), nullptr, 10);
    if (auto v = header_value(line, "content-range:"); !v.empty()) {
      if (auto cr = parse_content_range(v)) {
        j->range_first = cr->first;
        j->range_total = cr->second;
      }
    }
    // the hub sends the LFS sha256 on its redirect; keep it across the redirect
    if (auto v = header_value(line, "x-linked-etag:"); !v.empty() && !etag_sha256(v).empty()) j->etag = etag_sha256(v);
    if (auto v = header_value(line, "etag:"); !v.empty() && j->etag.empty()) j->etag = etag_sha256(v);
    return size * n;
  }
  static std::size_t on_body(char* buf, std::size_t size, std::size_t n, void* ud) {
    auto* j = static_cast<job*>(ud);
    const std::size_t len = size * n;
    if (!j->out && !j->open_output(std::string_view(buf, len))) return 0;  // aborts the transfer
    if (std::fwrite(buf, 1, len, j->out) != len) {
      j->abort_reason = make_error(errc::insufficient_storage, "cannot write " + j->part + ": the disk is full", "",
                                   "insufficient_storage");
      return 0;
    }
    j->written += len;
    return len;
  }
  static int on_progress(void* ud, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* j = static_cast<job*>(ud);
    j->publish();
    return j->cancel.load() ? 1 : 0;
  }
};

pull_manager::pull_manager(std::string models_dir, std::string hf_endpoint, std::function<bool(const std::string&)> in_use)
    : dir_(std::move(models_dir)), hf_endpoint_(std::move(hf_endpoint)), in_use_(std::move(in_use)) {}

pull_manager::~pull_manager() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& [id, j] : jobs_) j->cancel = true;
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
}

result<std::string> pull_manager::start(const pull_request& r) {
  auto target = resolve_pull(r, hf_endpoint_);
  if (!target) return target.error();
  auto j = std::make_shared<job>();
  j->target = *target;
  j->dest = (fs::path(dir_) / target->name).string();
  j->models_dir = dir_;
  j->part = (fs::path(dir_) / ("." + target->name + ".part")).string();
  if (in_use_ && in_use_(j->dest)) {
    return make_error(errc::conflict, "model file " + target->name + " is loaded; unload it (or load another) before pulling over it",
                      "name", "model_in_use");
  }
  std::lock_guard lock(mu_);
  if (stopping_) return make_error(errc::upstream_unavailable, "warden is shutting down");
  for (auto& [id, other] : jobs_) {
    std::lock_guard jl(other->mu);
    if (other->st.state == pull_state::running && other->dest == j->dest) {
      return make_error(errc::conflict, "a pull of " + target->name + " is under way already (" + id + ")", "name",
                        "pull_in_progress");
    }
  }
  j->st.id = "pull_" + ids::random_hex(8);
  j->st.model = target->name.substr(0, target->name.size() - 5);
  j->st.url = target->url;
  jobs_[j->st.id] = j;
  order_.push_back(j->st.id);
  forget_old_locked();
  threads_.emplace_back([this, j] { run(j); });
  return j->st.id;
}

void pull_manager::forget_old_locked() {
  std::size_t finished = 0;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    auto& j = jobs_[*it];
    std::lock_guard jl(j->mu);
    if (j->st.state != pull_state::running && ++finished > k_keep_finished) j->st.id.clear();  // marked
  }
  std::vector<std::string> keep;
  for (auto& id : order_) {
    auto& j = jobs_[id];
    bool gone;
    {
      std::lock_guard jl(j->mu);
      gone = j->st.id.empty();
    }
    if (gone) jobs_.erase(id);
    else keep.push_back(id);
  }
  order_.swap(keep);
}

std::optional<pull_status> pull_manager::get(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  std::lock_guard jl(it->second->mu);
  return it->second->st;
}

std::vector<pull_status> pull_manager::list() const {
  std::lock_guard lock(mu_);
  std::vector<pull_status> out;
  for (const auto& id : order_) {
    const auto& j = jobs_.at(id);
    std::lock_guard jl(j->mu);
    out.push_back(j->st);
  }
  std::stable_partition(out.begin(), out.end(), [](const pull_status& s) { return s.state == pull_state::running; });
  return out;
}

bool pull_manager::cancel(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return false;
  std::lock_guard jl(it->second->mu);
  if (it->second->st.state != pull_state::running) return false;
  it->second->cancel = true;
  return true;
}

void pull_manager::run(const std::shared_ptr<job>& jp) {
  job& j = *jp;
  std::error_code ec;
  j.offset = fs::exists(j.part, ec) ? fs::file_size(j.part, ec) : 0;
  if (ec) j.offset = 0;
  CURL* c = curl_easy_init();
  curl_easy_setopt(c, CURLOPT_URL, j.target.url.c_str());
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 15000L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);   // a stalled server: give up after 60 s
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "warden-pull");
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &job::on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &j);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &job::on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &j);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &job::on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &j);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  const std::string range = std::to_string(j.offset) + "-";
  if (j.offset > 0) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  char why[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, why);
  spdlog::info("pull {}: {} → {}{}", j.st.id, j.target.url, j.dest, j.offset > 0 ? " (resuming at " + std::to_string(j.offset) + " bytes)" : "");
  const CURLcode rc = curl_easy_perform(c);
  curl_easy_cleanup(c);
  if (j.out) std::fclose(j.out);
  j.out = nullptr;
  j.publish();
  finish(j, rc == CURLE_OK ? std::string() : std::string(why[0] ? why : curl_easy_strerror(rc)));
}

void pull_manager::finish(job& j, const std::string& curl_error) {
  const auto fail = [&](error e, pull_state state = pull_state::failed) {
    spdlog::warn("pull {}: {}", j.st.id, e.message);
    std::lock_guard lock(j.mu);
    j.st.state = state;
    j.st.failure = std::move(e);
  };
  std::error_code ec;
  if (j.cancel.load()) return fail(make_error(errc::cancelled, "the pull was cancelled; pull again to resume", "", "cancelled"),
                                   pull_state::cancelled);
  if (j.abort_reason) {
    if (j.abort_reason->type_code == "not_gguf") fs::remove(j.part, ec);
    return fail(*j.abort_reason);
  }
  const bool already_whole = j.status == 416 && j.offset > 0;  // the partial file was complete
  if (!curl_error.empty() || (j.status != 200 && j.status != 206 && !already_whole)) {
    return fail(make_error(errc::upstream_error,
                           "the download of " + j.target.name + " was interrupted (" +
                               (curl_error.empty() ? "HTTP " + std::to_string(j.status) : curl_error) +
                               "); pull it again to resume",
                           "", "download_failed"));
  }
  const std::string sha = file_sha256(j.part);
  const std::string want = !j.target.sha256.empty() ? j.target.sha256 : j.etag;
  if (!want.empty() && sha != want) {
    fs::remove(j.part, ec);
    return fail(make_error(errc::upstream_error,
                           "checksum mismatch for " + j.target.name + ": expected sha256 " + want + ", got " + sha +
                               "; the file was deleted",
                           "sha256", "checksum_mismatch"));
  }
  if (in_use_ && in_use_(j.dest)) {
    return fail(make_error(errc::conflict, j.target.name + " was loaded meanwhile; the download stays as " + j.part,
                           "name", "model_in_use"));
  }
  fs::rename(j.part, j.dest, ec);
  if (ec) return fail(make_error(errc::internal, "cannot move " + j.part + " to " + j.dest + ": " + ec.message()));
  std::lock_guard lock(j.mu);
  j.st.state = pull_state::done;
  j.st.sha256 = sha;
  j.st.downloaded_bytes = fs::file_size(j.dest, ec);
  if (j.st.total_bytes == 0) j.st.total_bytes = j.st.downloaded_bytes;
  spdlog::info("pull {}: {} done ({} bytes, sha256 {}{})", j.st.id, j.dest, j.st.downloaded_bytes, sha,
               want.empty() ? ", not checked: the source gave none" : ", checked");
}

}  // namespace warden::engine
