// Long-lived services (runner.h service_request, service_process): an MCP stdio server's jail.
#include <sys/wait.h>

#include "sandbox/runner.h"
#include "sandbox/spawn.h"

namespace warden::sandbox {

struct service_process::impl {
  detail::spawned_child child;
};

service_process::service_process(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
service_process::~service_process() = default;  // child_guard kills and reaps, then the plan's cleanup

int service_process::stdin_fd() const noexcept { return impl_->child.plan.in_write.get(); }
int service_process::stdout_fd() const noexcept { return impl_->child.plan.out_read.get(); }
int service_process::stderr_fd() const noexcept { return impl_->child.plan.err_read.get(); }

int service_process::pid() const noexcept {
  std::lock_guard lk(impl_->child.state->mu);
  return impl_->child.state->pid;
}

void service_process::kill() { impl_->child.state->kill_group(); }

std::optional<int> service_process::exited() {
  int status = 0;
  auto& st = *impl_->child.state;
  {
    std::lock_guard lk(st.mu);
    if (st.reaped) return -1;  // reaped elsewhere: the status is gone
  }
  if (!st.try_reap(status)) return std::nullopt;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

result<std::unique_ptr<service_process>> sandbox::start_service(const service_request& req) {
  if (req.argv.empty()) return make_error(errc::internal, "nothing to run");
  if (req.mode == isolation::sandboxed) {
    const sandbox_status st = status();
    if (!st.available) return make_error(errc::internal, unavailable_message(st));
  }
  auto plan = detail::prepare_service(req, policy_);
  if (!plan) return std::move(plan).error();
  auto child = detail::fork_plan(std::move(*plan));
  if (!child) return std::move(child).error();
  auto p = std::make_unique<service_process::impl>(service_process::impl{std::move(*child)});
  return std::make_unique<service_process>(std::move(p));
}

}  // namespace warden::sandbox
