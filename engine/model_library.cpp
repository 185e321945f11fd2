#include "engine/model_library.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace warden::engine {

namespace fs = std::filesystem;

namespace {

std::int64_t unix_mtime(const fs::path& p) {
  std::error_code ec;
  const auto t = fs::last_write_time(p, ec);
  if (ec) return 0;
  // file_clock → system_clock by the offset between their clocks now (GCC 12's libstdc++ has no
  // clock_cast for file_clock)
  const auto sys = t - fs::file_time_type::clock::now() + std::chrono::system_clock::now();
  return std::chrono::duration_cast<std::chrono::seconds>(sys.time_since_epoch()).count();
}

/// The same path once resolved (a hard link of the same file elsewhere is another model).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  return !a.empty() && !b.empty() && fs::weakly_canonical(a, ea) == fs::weakly_canonical(b, eb) && !ea && !eb;
}

bool is_projector_name(const std::string& name) {
  return name.find("mmproj") != std::string::npos;
}

}  // namespace

model_library::model_library(std::string dir, std::string startup_id, std::string startup_path)
    : dir_(std::move(dir)), startup_id_(std::move(startup_id)), startup_path_(std::move(startup_path)) {}

library_model model_library::describe(const std::string& id, const std::string& path) const {
  library_model m;
  m.id = id;
  m.path = path;
  std::error_code ec;
  m.size_bytes = fs::file_size(path, ec);
  if (ec) m.size_bytes = 0;
  m.modified_at = unix_mtime(path);
  std::lock_guard lock(mu_);
  auto it = cache_.find(path);
  if (it == cache_.end() || it->second.size != m.size_bytes || it->second.mtime != m.modified_at) {
    it = cache_.insert_or_assign(path, cached{m.size_bytes, m.modified_at, read_gguf_info(path)}).first;
  }
  if (it->second.info) m.info = *it->second.info;
  else m.error = it->second.info.error().message;
  return m;
}

std::vector<library_model> model_library::list() const {
  std::vector<library_model> out;
  bool startup_seen = false;
  bool projector = false;
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> files;  // id, path
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    const std::string name = p.filename().string();
    std::error_code fec;
    if (name.starts_with('.') || p.extension() != ".gguf" || !fs::is_regular_file(p, fec)) continue;
    if (is_projector_name(name)) {
      projector = true;
      continue;
    }
    files.emplace_back(p.stem().string(), p.string());
  }
  for (const auto& [stem, path] : files) {
    const bool is_startup = same_file(path, startup_path_);
    startup_seen = startup_seen || is_startup;
    library_model m = describe(is_startup ? startup_id_ : stem, path);
    if (m.info && m.info->architecture == "clip") continue;  // a projector under another name
    m.has_projector = projector;
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [&](const library_model& a, const library_model& b) {
    const bool sa = a.id == startup_id_, sb = b.id == startup_id_;
    return sa != sb ? sa : a.id < b.id;
  });
  if (!startup_seen && !startup_path_.empty()) out.insert(out.begin(), describe(startup_id_, startup_path_));
  // Ids are unique: a file whose stem is the start-up model's id (from another folder) is hidden.
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (out[i].id == startup_id_) out.erase(out.begin() + static_cast<std::ptrdiff_t>(i--));
  }
  return out;
}

std::optional<library_model> model_library::find(std::string_view id) const {
  for (auto& m : list()) {
    if (m.id == id) return m;
  }
  return std::nullopt;
}

result<void> model_library::remove(std::string_view id) const {
  auto m = find(id);
  if (!m) return make_error(errc::not_found, "no model with id '" + std::string(id) + "' (GET /api/models lists them)");
  std::error_code ec;
  if (fs::path(m->path).parent_path() != fs::path(dir_) && !fs::equivalent(fs::path(m->path).parent_path(), dir_, ec)) {
    return make_error(errc::invalid_request,
                      "model '" + m->id + "' is the start-up model's file outside --models-dir; warden does not delete it");
  }
  if (!fs::remove(m->path, ec) || ec) {
    return make_error(errc::internal, "cannot delete model '" + m->id + "': " + (ec ? ec.message() : "gone already"));
  }
  std::lock_guard lock(mu_);
  cache_.erase(m->path);
  return {};
}

}  // namespace warden::engine
