#include "engine/openai_compatible.h"

#include <spdlog/spdlog.h>

#include "common/json_util.h"
#include "engine/http_client.h"

namespace warden::engine {

openai_compatible::openai_compatible(std::string base_url, std::string api_key, std::string model_id)
    : base_url_(std::move(base_url)), api_key_(std::move(api_key)), model_id_(std::move(model_id)) {}

std::string openai_compatible::status_message() const { return status_.message(); }

std::string openai_compatible::model_id() const {
  std::lock_guard lock(mu_);
  return model_id_;
}

std::string openai_compatible::url_for(std::string_view api_path) const {
  return base_url_ + "/" + std::string(api_path);
}

std::vector<std::string> openai_compatible::request_headers() const {
  if (api_key_.empty()) return {};
  return {"Authorization: Bearer " + api_key_};
}

result<void> openai_compatible::start() {
  status_.set(upstream_state::starting, "");
  refresh(5000);
  prober_ = std::thread([this] {
    std::unique_lock lock(stop_mu_);
    while (!stop_cv_.wait_for(lock, std::chrono::milliseconds(k_probe_interval_ms),
                              [this] { return stopping_; })) {
      lock.unlock();
      refresh(2000);
      lock.lock();
    }
  });
  return {};
}

void openai_compatible::stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (prober_.joinable()) prober_.join();
}

void openai_compatible::refresh(long timeout_ms) {
  const auto reply = http_client::get_blocking(url_for("models"), request_headers(), timeout_ms);
  if (!reply && reply.error().type_code == k_local_shortage) {
    // warden could not even try (out of file descriptors): that says nothing about the upstream,
    // so its state stays as the last real probe left it.
    spdlog::warn("upstream probe skipped: {}", reply.error().message);
    return;
  }
  std::lock_guard lock(mu_);
  if (reply && reply->status == 200) {
    if (status_.state() != upstream_state::ready) spdlog::info("upstream {} is reachable", base_url_);
    if (model_id_.empty()) {
      auto j = parse_json(reply->body);
      if (j && j->is_object() && (*j)["data"].is_array() && !(*j)["data"].empty() &&
          (*j)["data"][0].is_object() && (*j)["data"][0]["id"].is_string()) {
        model_id_ = (*j)["data"][0]["id"].get<std::string>();
      }
    }
    if (model_id_.empty()) {
      status_.set(upstream_state::failed, "upstream " + base_url_ + " lists no model; pass --model-id");
      return;
    }
    status_.set(upstream_state::ready, "ready");
    return;
  }
  std::string message = !reply ? "upstream " + base_url_ + " is unreachable"
                               : "upstream " + base_url_ + "/models answered HTTP " + std::to_string(reply->status);
  const auto moved = status_.set(upstream_state::failed, message);
  if (moved.from != upstream_state::failed) spdlog::warn("{}", message);
}

}  // namespace warden::engine
