// Model routes of the control surface (issue 27; reference unsloth-studio.md §5): the model
// library and the local model's load / swap / unload / status.
//
//   GET    /api/models           {"object":"list","data":[model]}: the GGUF files of --models-dir
//                                (engine/model_library.h) and the start-up model
//   GET    /api/models/{id}      one model; 404 model_not_found
//   DELETE /api/models/{id}      deletes its file; 409 model_in_use when loaded (chat or
//                                embeddings); admin key
//   POST   /api/inference/load   {model, ctx?, parallel?, gpu_layers?, rope_scaling?, rope_scale?,
//                                yarn_orig_ctx?, llama_extra_args?: [string], stream?: bool}:
//                                loads (swaps to) a library model; admin key. stream:false (default)
//                                answers the status below once loaded; stream:true answers SSE:
//                                `event: progress` {"message","elapsed_ms"} per step, then
//                                `event: done` {status} or `event: error` {"error":{…}}. A failed
//                                load keeps (or restores) the model that was loaded. With
//                                --replicas N every chat child loads it, one after another (the
//                                pool routes around the one loading); progress lines name it.
//   POST   /api/inference/unload stops the model (requests then get 503 until a load); admin key;
//                                every chat child
//   GET    /api/inference/status the status below
//   POST   /api/models/pull      {url | hf: "owner/repo[@rev]:file.gguf", name?, sha256?, stream?: true}
//                                (engine/model_pull.h); admin key. stream (default true): SSE
//                                `event: progress` {pull} at most every 250 ms, then `event: done`
//                                {pull} or `event: error` {"error":{…}}; stream:false answers the
//                                finished pull. A client that goes away does not stop the pull.
//   GET    /api/models/pulls     {"object":"list","data":[pull]}: running pulls first, then the last
//                                finished ones
//   DELETE /api/models/pulls/{id}  cancels a running pull (its partial file stays for a resume);
//                                404 pull_not_found; admin key
// pull: {"id","object":"model.pull","model","url","state": running|done|failed|cancelled,
//   "downloaded_bytes","total_bytes","bytes_per_s","resumed","sha256","error"?}
//
// model: {"id","object":"model","created","owned_by":"warden","loaded","size_bytes","modified_at",
//   "architecture","name","context_length","quantization","parameters","capabilities":{"chat",
//   "tools","vision","embedding"}, "error" (only when its header cannot be read)}
// status: {"model","state": unloaded|loading|draining|ready|restarting|failed,"message",
//   "context_length" (asked -c),"n_ctx_slot" (llama-server's per-slot context, from /props),
//   "slots_total","slots_busy","llama_cpp_build","backend","capabilities","restarts",
//   "last_failure": {"message","code"}|null,"warnings":[…],"in_flight","loads_on_use",
//   "embeddings": {"state","model","message"}|null, and with --replicas N > 1
//   "replicas": [{"name","state","model","context_length","message","restarts","last_failure","in_flight"}]
//   for chat, chat-2, …}
// Errors (OpenAI envelope, control_surface()): 400 invalid_request (fields; a bad spec from
// engine/model_host.h with its type code), 403 admin_only, 404 model_not_found, 409 model_in_use,
// 503 (the load failed: the child's classified error, type code from engine/load_failure.h; or
// warden serves a remote --upstream: no local model to manage).
// Thread-safety: handlers run concurrently; loads are serialised by the host.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/blocking_pool.h"
#include "common/http_types.h"
#include "common/json_util.h"
#include "engine/model_host.h"
#include "engine/model_library.h"
#include "engine/model_pull.h"

namespace warden::api::control {

/// A chat child of --replicas N with its engine name ("chat-2").
struct named_host {
  std::string name;
  engine::model_host* host = nullptr;
};

struct model_deps {
  engine::model_library* library = nullptr;   ///< null: the routes answer 503
  engine::model_host* chat = nullptr;         ///< null for a remote --upstream
  /// The other chat children of --replicas N (chat-2, …; engine/engine_pool.h): a load or an
  /// unload applies to chat, then to each of them in order (a load stops at the first that
  /// fails, and answers its error naming it; the ones before keep the new model); status lists
  /// every chat child under "replicas".
  std::vector<named_host> replicas;
  /// Held by a load or an unload for its whole sequence over the children (and its status read).
  std::shared_ptr<std::mutex> sequence = std::make_shared<std::mutex>();
  engine::model_host* embeddings = nullptr;   ///< the embeddings child, when there is one
  blocking_pool* pool = nullptr;              ///< file work and loads run here
  engine::model_spec defaults;                ///< ctx and slots of the command line
  engine::pull_manager* pulls = nullptr;      ///< null: the pull routes answer 503
  std::string llama_server_binary;            ///< for status's backend and devices; "" = not reported

  /// chat, the replicas, then embeddings: those that are set.
  std::vector<engine::model_host*> hosts() const;
};

/// A pull's status object (SSE progress frames, GET /api/models/pulls). Pure.
json pull_json(const engine::pull_status& s);

/// The model object of GET /api/models (also the extra fields of GET /v1/models). Pure.
json model_json(const engine::library_model& m, bool loaded);

std::vector<route> model_routes(model_deps& deps);

/// The context llama-server gives each slot of the loaded model (its GET /props
/// default_generation_settings.n_ctx, tokens): what GET /v1/models reports as `n_ctx_slot`;
/// nullopt when no child is ready or it did not answer. Blocking (2 s at most).
std::optional<std::int64_t> slot_context(const engine::host_status& s);

}  // namespace warden::api::control
