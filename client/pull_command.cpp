#include "client/pull_command.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>

#include "client/chat_client.h"
#include "client/command_support.h"
#include "common/json_util.h"
#include "common/sse.h"

namespace warden::client {

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted.store(true); }

std::string mb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  return buf;
}

/// "[#####-----]  42%  41.2 MB / 98.4 MB  12.3 MB/s  5 s left", or without a total "41.2 MB  12.3 MB/s".
std::string bar(const json& p) {
  const double done = p.value("downloaded_bytes", 0.0), total = p.value("total_bytes", 0.0),
               rate = p.value("bytes_per_s", 0.0);
  char buf[160];
  if (total <= 0) {
    std::snprintf(buf, sizeof buf, "%s  %s/s", mb(done).c_str(), mb(rate).c_str());
    return buf;
  }
  const int width = 30;
  const int filled = static_cast<int>(width * done / total);
  std::string b(static_cast<std::size_t>(std::max(0, std::min(width, filled))), '#');
  b.resize(width, '-');
  const double left = rate > 0 ? (total - done) / rate : 0;
  std::snprintf(buf, sizeof buf, "[%s] %3d%%  %s / %s  %s/s  %s", b.c_str(), static_cast<int>(100 * done / total),
                mb(done).c_str(), mb(total).c_str(), mb(rate).c_str(),
                rate > 0 ? (std::to_string(static_cast<long long>(left)) + " s left").c_str() : "");
  return buf;
}

}  // namespace

int run_pull(const pull_options& o) {
  auto key = find_api_key(o.api_key, o.api_key_file, "warden pull");
  if (!key) return 2;
  json body = {{"stream", true}};
  const bool is_url = o.source.starts_with("http://") || o.source.starts_with("https://");
  body[is_url ? "url" : "hf"] = o.source;
  if (!o.name.empty()) body["name"] = o.name;
  if (!o.sha256.empty()) body["sha256"] = o.sha256;
  const http_api api(o.url, *key, 5000, 0);
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  std::signal(SIGINT, on_sigint);
  sse::parser parser;
  std::string id;
  int rc = 1;
  auto last_line = std::chrono::steady_clock::now() - std::chrono::seconds(10);
  auto on_bytes = [&](std::string_view bytes) {
    for (auto& e : parser.feed(bytes)) {
      auto j = parse_json(e.data);
      if (!j || !j->is_object()) continue;
      if (id.empty()) id = j->value("id", "");
      if (e.name == "progress") {
        if (tty) {
          std::printf("\r\033[K%s", bar(*j).c_str());
        } else if (std::chrono::steady_clock::now() - last_line >= std::chrono::seconds(2)) {
          std::printf("%s\n", bar(*j).c_str());
          last_line = std::chrono::steady_clock::now();
        }
      } else if (e.name == "done") {
        std::printf("%s%s\npulled %s (%s, sha256 %s)\n", tty ? "\r\033[K" : "", bar(*j).c_str(),
                    j->value("model", "").c_str(), mb(j->value("downloaded_bytes", 0.0)).c_str(),
                    j->value("sha256", json("-")).is_string() ? j->value("sha256", "").c_str() : "-");
        rc = 0;
      } else if (e.name == "error") {
        std::printf("%s", tty ? "\n" : "");
        const json err = j->value("error", json::object());
        std::fprintf(stderr, "warden pull: %s\n", err.value("message", std::string("the pull failed")).c_str());
      }
      std::fflush(stdout);
    }
  };
  const http_reply r = api.stream("/api/models/pull", body, on_bytes, g_interrupted);
  if (g_interrupted.load()) {
    if (!id.empty()) (void)api.del("/api/models/pulls/" + id);
    std::fprintf(stderr, "%swarden pull: cancelled; pull again to resume\n", tty ? "\n" : "");
    return 130;
  }
  if (!r.ok()) {
    std::fprintf(stderr, "warden pull: %s\n", r.error_text().c_str());
    return 1;
  }
  return rc;
}

}  // namespace warden::client
