#include "client/model_command.h"

#include <atomic>
#include <cstdio>

#include "client/chat_client.h"
#include "client/command_support.h"
#include "common/json_util.h"
#include "common/sse.h"

namespace warden::client {

namespace {

constexpr long k_load_timeout_ms = 30L * 60 * 1000;

std::string prog(const model_options& o) { return "warden " + (o.action == "models" ? std::string("models") : o.action); }

std::string megabytes(const json& bytes) {
  if (!bytes.is_number()) return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MB", bytes.get<double>() / 1e6);
  return buf;
}

std::string text(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "-";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

int list(const http_api& api, const model_options& o) {
  auto j = reply_json(api.get("/api/models"), prog(o).c_str());
  if (!j) return 1;
  std::printf("%-40s %8s  %-12s %8s  %s\n", "ID", "SIZE", "ARCH", "CONTEXT", "LOADED");
  for (const auto& m : (*j)["data"]) {
    const std::string unreadable = m.contains("error") ? "  (unreadable: " + text(m, "error") + ")" : "";
    std::printf("%-40s %8s  %-12s %8s  %s%s\n", text(m, "id").c_str(), megabytes(m["size_bytes"]).c_str(),
                text(m, "architecture").c_str(), text(m, "context_length").c_str(),
                m.value("loaded", false) ? "yes" : "", unreadable.c_str());
  }
  if ((*j)["data"].empty()) std::printf("(no models: put GGUF files in --models-dir, or warden pull)\n");
  return 0;
}

int ps(const http_api& api, const model_options& o) {
  auto s = reply_json(api.get("/api/inference/status"), prog(o).c_str());
  if (!s) return 1;
  std::printf("model    %s\nstate    %s\ncontext  %s asked, %s per slot\nslots    %s busy of %s\nbackend  %s, llama.cpp %s\n"
              "restarts %s\n",
              text(*s, "model").c_str(), text(*s, "state").c_str(), text(*s, "context_length").c_str(),
              text(*s, "n_ctx_slot").c_str(), text(*s, "slots_busy").c_str(), text(*s, "slots_total").c_str(),
              text(*s, "backend").c_str(), text(*s, "llama_cpp_build").c_str(), text(*s, "restarts").c_str());
  for (const auto& w : s->value("warnings", json::array())) std::printf("warning  %s\n", w.get<std::string>().c_str());
  if (s->contains("last_failure") && s->at("last_failure").is_object()) {
    std::printf("last failure: %s\n", text(s->at("last_failure"), "message").c_str());
  }
  // --replicas N: the lines above are the first child's; one line per child.
  const json replicas = s->value("replicas", json::array());
  for (const auto& r : replicas.is_array() ? replicas : json::array()) {
    if (!r.is_object()) continue;
    std::printf("replica  %-8s %-10s %s, context %s, restarts %s, %s in flight\n", text(r, "name").c_str(),
                text(r, "state").c_str(), text(r, "model").c_str(), text(r, "context_length").c_str(),
                text(r, "restarts").c_str(), text(r, "in_flight").c_str());
    if (r.contains("last_failure") && r.at("last_failure").is_object()) {
      std::printf("         last failure: %s\n", text(r.at("last_failure"), "message").c_str());
    }
  }
  return 0;
}

int load(const http_api& api, const model_options& o) {
  json body = {{"model", o.model}, {"stream", true}};
  if (o.ctx > 0) body["ctx"] = o.ctx;
  if (o.parallel > 0) body["parallel"] = o.parallel;
  sse::parser parser;
  int rc = 1;
  std::atomic<bool> abort{false};
  auto on_bytes = [&](std::string_view bytes) {
    for (auto& e : parser.feed(bytes)) {
      auto j = parse_json(e.data);
      if (!j || !j->is_object()) continue;
      if (e.name == "progress") {
        std::printf("%s\n", j->value("message", "").c_str());
      } else if (e.name == "done") {
        std::printf("loaded %s (%s tokens per slot)\n", text(*j, "model").c_str(), text(*j, "n_ctx_slot").c_str());
        for (const auto& w : j->value("warnings", json::array())) std::printf("warning: %s\n", w.get<std::string>().c_str());
        rc = 0;
      } else if (e.name == "error") {
        std::fprintf(stderr, "%s: %s\n", prog(o).c_str(), text(j->value("error", json::object()), "message").c_str());
      }
      std::fflush(stdout);
    }
  };
  const http_reply r = api.stream("/api/inference/load", body, on_bytes, abort);
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", prog(o).c_str(), r.error_text().c_str());
    return 1;
  }
  return rc;
}

}  // namespace

int run_model_command(const model_options& o) {
  auto key = find_api_key(o.api_key, o.api_key_file, prog(o).c_str());
  if (!key) return 2;
  if ((o.action == "load" || o.action == "rm") && o.model.empty()) {
    std::fprintf(stderr, "%s: give the model's id (warden models lists them)\n", prog(o).c_str());
    return 2;
  }
  const http_api api(o.url, *key, 5000, k_load_timeout_ms);
  if (o.action == "models") return list(api, o);
  if (o.action == "ps") return ps(api, o);
  if (o.action == "load") return load(api, o);
  if (o.action == "unload") {
    auto s = reply_json(api.post_json("/api/inference/unload", json::object()), prog(o).c_str());
    if (!s) return 1;
    std::printf("unloaded\n");
    return 0;
  }
  auto gone = reply_json(api.del("/api/models/" + o.model), prog(o).c_str());
  if (!gone) return 1;
  std::printf("deleted %s\n", o.model.c_str());
  return 0;
}

}  // namespace warden::client
