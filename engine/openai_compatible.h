// openai_compatible — an existing OpenAI-compatible server (llama-server started elsewhere, vLLM,
// another gateway) at a base URL such as http://host:8080/v1.
//
// start() probes GET <base>/models once: when it answers, the public model id is the configured
// one or else the first listed model, and the state is ready. When it does not answer, start()
// still succeeds with state failed and a message; warden keeps serving and answers 503 until a
// later probe succeeds. A prober thread repeats the probe every `k_probe_interval_ms`.
// Thread-safety: all public methods are safe from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "engine/upstream.h"
#include "engine/upstream_status.h"

namespace warden::engine {

/// How often the upstream's /models is probed (health and model id).
inline constexpr long k_probe_interval_ms = 5000;

class openai_compatible final : public upstream {
 public:
  openai_compatible(std::string base_url, std::string api_key, std::string model_id);

  result<void> start() override;
  void stop() override;
  ~openai_compatible() override { stop(); }
  upstream_state state() const override { return status_.state(); }
  std::string status_message() const override;
  std::string model_id() const override;
  std::string url_for(std::string_view api_path) const override;
  std::vector<std::string> request_headers() const override;
  bool is_local() const override { return false; }

  /// Probes the upstream again (blocking, up to `timeout_ms`); updates state (after start():
  /// the machine in upstream_status.h does not go from stopped to ready).
  void refresh(long timeout_ms);

 private:
  std::string base_url_;
  std::string api_key_;
  mutable std::mutex mu_;  ///< model_id_; held across a probe's state change
  std::string model_id_;
  upstream_status status_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread prober_;
};

}  // namespace warden::engine
