// model_library — the GGUF files warden can load: every `*.gguf` directly in --models-dir (not
// starting with '.': a pull's partial file is `.<name>.gguf.part`, engine/model_pull.h), minus
// vision projectors (their GGUF architecture is "clip"; a model with one next to it says so),
// plus the start-up model (--model) when it lies elsewhere. A model's id is its file name without
// ".gguf"; the start-up model's is its --model-id.
//
// Metadata comes from each file's GGUF header (engine/gguf_info.h), read again only when the
// file's size or modification time changed. An unreadable header still lists the file, with the
// reason in `error` (loading it then fails with "corrupt_gguf").
// Thread-safety: every method is safe from any thread (one lock around the cache); list() and
// find() read the folder (blocking file work: call them from a blocking pool, not an io thread).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/gguf_info.h"

namespace warden::engine {

struct library_model {
  std::string id;                 ///< public id
  std::string path;               ///< the GGUF file (never sent to clients)
  std::uint64_t size_bytes = 0;
  std::int64_t modified_at = 0;   ///< Unix seconds
  std::optional<gguf_info> info;  ///< nullopt when the header cannot be read
  std::string error;              ///< why it cannot be read; "" when info is set
  bool has_projector = false;     ///< a vision projector (mmproj*.gguf) lies in the same folder
};

class model_library {
 public:
  /// `dir` may not exist yet (the library is then empty but for the start-up model).
  /// `startup_id`/`startup_path`: the start-up model ("" = none, e.g. a remote upstream).
  model_library(std::string dir, std::string startup_id, std::string startup_path);

  /// Every model, sorted by id; the start-up model first.
  std::vector<library_model> list() const;
  std::optional<library_model> find(std::string_view id) const;
  /// Deletes the model's file. Errors: not_found (unknown id), invalid_request (the start-up
  /// model outside the folder: warden did not put it there), internal (the delete failed).
  result<void> remove(std::string_view id) const;
  const std::string& dir() const { return dir_; }

 private:
  library_model describe(const std::string& id, const std::string& path) const;

  std::string dir_;
  std::string startup_id_;
  std::string startup_path_;
  struct cached {
    std::uint64_t size;
    std::int64_t mtime;
    result<gguf_info> info;
  };
  mutable std::mutex mu_;
  mutable std::map<std::string, cached> cache_;  ///< by path
};

}  // namespace warden::engine
