// edit_file {path, old_string, new_string, replace_all?} (reference unsloth-studio.md §4.6,
// issue 25): the text rules are edit_text.h's, the path rules beneath.h's, and a jailed call's
// reading and writing happen on a thread that confined.h keeps inside the workspace, as the
// jail's user. Under bypass, a relative path is under the host workspace and an absolute one is
// taken as written (still without following symlinks), and the result says where it wrote.
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>

#include "common/blocking_pool.h"
#include "common/utf8.h"
#include "sandbox/bwrap.h"
#include "sandbox/runner.h"
#include "sandbox/workspace_quota.h"
#include "tools/beneath.h"
#include "tools/builtins.h"
#include "tools/confined.h"
#include "tools/edit_text.h"

namespace warden::tools {

namespace {

/// What the model sees: what was done, where, and the diff.
std::string receipt(const edit_outcome& o, const std::string& where) {
  std::string head = o.created ? "Created " + where + " (" + std::to_string(o.content.size()) + " bytes)."
                               : "Edited " + where + ": replaced " + std::to_string(o.replacements) +
                                     (o.replacements == 1 ? " occurrence." : " occurrences.");
  return head + "\n" + o.diff;
}

/// The workspace-relative form of a path a model wrote with the jail's view of it.
std::string strip_jail_prefix(std::string path) {
  const std::string inner = std::string(sandbox::k_inner_workspace) + "/";
  if (path.rfind(inner, 0) == 0) path.erase(0, inner.size());
  return path;
}

struct edit_args {
  std::string path;
  text_edit edit;
};

std::optional<edit_args> read_args(const json& args, std::string& why) {
  edit_args a;
  auto str = [&](const char* k, std::string& into, bool non_empty) {
    auto it = args.find(k);
    if (it == args.end() || !it->is_string() || (non_empty && it->get<std::string>().empty())) {
      why = std::string("Error: edit_file requires '") + k + "' as a " + (non_empty ? "non-empty " : "") + "string.";
      return false;
    }
    into = it->get<std::string>();
    return true;
  };
  if (!str("path", a.path, true) || !str("old_string", a.edit.old_string, false) ||
      !str("new_string", a.edit.new_string, false)) {
    return std::nullopt;
  }
  if (auto r = args.find("replace_all"); r != args.end() && !r->is_null()) {
    if (!r->is_boolean()) {
      why = "Error: edit_file's 'replace_all' must be true or false.";
      return std::nullopt;
    }
    a.edit.replace_all = r->get<bool>();
  }
  return a;
}

/// Reads, edits and writes `rel` under the folder `dir` (on the confined thread).
result<edit_outcome> edit_beneath(int dir, const std::string& rel, const text_edit& edit) {
  file_version read{};
  auto current = read_beneath(dir, rel, k_max_edit_bytes, &read);
  if (!current) return current.error();
  std::optional<std::string_view> view;
  if (current->has_value()) view = **current;
  auto done = apply_text_edit(view, edit, rel);
  if (!done) return done.error();
  if (auto w = write_beneath(dir, rel, done->content, &read); !w) return w.error();
  return done;
}

class edit_file_tool : public tool {
 public:
  edit_file_tool(blocking_pool* pool, std::uint64_t quota_bytes) : pool_(pool), quota_bytes_(quota_bytes) {
    info_ = {"edit_file", "file edit",
             "Edit a text file in the workspace: replace old_string, which must occur exactly once (or every "
             "occurrence, with replace_all), with new_string. An empty old_string creates the file. Paths are "
             "relative to the workspace. The result shows the diff.",
             {{"type", "object"},
              {"properties",
               {{"path", {{"type", "string"}, {"description", "The file, relative to the workspace."}}},
                {"old_string", {{"type", "string"}, {"description", "The exact text to replace (empty: create the file)."}}},
                {"new_string", {{"type", "string"}, {"description", "The text to put in its place."}}},
                {"replace_all", {{"type", "boolean"}, {"description", "Replace every occurrence (default false)."}}}}},
              {"required", {"path", "old_string", "new_string"}}},
             {.runs_code = false, .reads_network = false, .writes_files = true, .once_per_answer = false,
              .code = code_language::none, .code_argument = ""}};
  }
  const tool_info& info() const override { return info_; }
  std::optional<std::string> unavailable(isolation) const override { return std::nullopt; }

  boost::asio::awaitable<tool_result> run(const json& args, tool_context& ctx) override {
    std::string why;
    auto a = read_args(args, why);
    if (!a) co_return error_result(why);
    const bool bypass = ctx.mode == isolation::bypass;
    const bool absolute = !a->path.empty() && a->path.front() == '/';
    std::string folder = ctx.workspace, rel = a->path;
    if (bypass && absolute) {
      folder = "/";
      rel = a->path.substr(1);
    } else if (!bypass) {
      rel = strip_jail_prefix(a->path);
    }
    if (!bypass && !rel.empty() && rel.front() == '/') {
      co_return error_result("Error: edit_file paths are relative to the workspace; '" + a->path.substr(0, 300) +
                             "' is absolute.");
    }
    const bool as_jail_user = !bypass && ::geteuid() == 0;
    if (as_jail_user) sandbox::hand_over(ctx.workspace);  // the jail's user owns its workspace
    const bool in_workspace = !(bypass && absolute);
    auto work = [this, folder, rel, edit = a->edit, as_jail_user, in_workspace]() {
      // One edit at a time per folder: two edits of one file would otherwise both read it, and
      // the second rename would drop the first's change while both said they had made it.
      const std::shared_ptr<std::mutex> lock = folder_lock(folder);
      std::lock_guard<std::mutex> one_at_a_time(*lock);
      // The session's disk quota, as before a program runs (sandbox/workspace_quota.h).
      if (in_workspace && quota_bytes_ > 0) {
        if (auto over = sandbox::quota_refusal(sandbox::measure_workspace(folder), quota_bytes_)) {
          return result<edit_outcome>(make_error(errc::invalid_request, *over));
        }
      }
      std::optional<result<edit_outcome>> done;
      auto confined = run_confined(folder, as_jail_user, [&](int dir) { done = edit_beneath(dir, rel, edit); });
      if (!confined) return result<edit_outcome>(confined.error());
      if (!done) return result<edit_outcome>(make_error(errc::internal, "the edit did not run"));
      return std::move(*done);
    };
    result<edit_outcome> done = make_error(errc::internal, "the edit did not run");
    if (pool_) {
      done = co_await pool_->run_blocking(std::move(work));
    } else {
      done = work();
    }
    if (!done) co_return error_result("Error: " + done.error().message);
    const std::string where = std::string(utf8_prefix(!bypass || absolute ? a->path : ctx.workspace + "/" + rel, 300));
    co_return ok_result(receipt(*done, where));
  }

 private:
  std::shared_ptr<std::mutex> folder_lock(const std::string& folder) {
    std::lock_guard<std::mutex> g(locks_mu_);
    for (auto it = locks_.begin(); it != locks_.end();) {  // forget the folders no edit holds
      it = it->second.expired() ? locks_.erase(it) : std::next(it);
    }
    auto& weak = locks_[folder];
    auto lock = weak.lock();
    if (!lock) {
      lock = std::make_shared<std::mutex>();
      weak = lock;
    }
    return lock;
  }

  tool_info info_;
  blocking_pool* pool_;
  std::uint64_t quota_bytes_;  ///< the session workspace's disk quota (0: none)
  std::mutex locks_mu_;
  std::map<std::string, std::weak_ptr<std::mutex>> locks_;  ///< folder → the lock its edits share
};

}  // namespace

std::unique_ptr<tool> make_edit_file_tool(blocking_pool* pool, std::uint64_t quota_bytes) {
  return std::make_unique<edit_file_tool>(pool, quota_bytes);
}

}  // namespace warden::tools
