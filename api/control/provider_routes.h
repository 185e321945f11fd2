// External providers configured on the server (issue 28 §3; reference unsloth-studio.md §1.5):
// the /api/providers routes, and the resolver the surfaces use to route a request that names one
// (api/wire/provider_fields.h → engine/external_provider.h).
//
//   GET    /api/providers            {object:"list", data:[provider]}
//   POST   /api/providers            {id?, name?, provider_type, base_url, api_key? | api_key_env?,
//                                     models?: [string], enabled?: bool} → 201 provider
//   GET    /api/providers/{id}       provider; 404 provider_not_found
//   PUT    /api/providers/{id}       changes the fields it sends: name, base_url, api_key, api_key_env,
//                                     models, enabled → the provider
//   DELETE /api/providers/{id}       {id, deleted: true}
// provider (JSON): {id, object:"provider", name, provider_type, base_url, api_key_env (or null),
// api_key_set (bool), models, enabled, created_at, updated_at (unix ms)}: the key itself is never
// shown, logged or put in the audit log or the monitor. A key sent as `api_key` is stored sealed
// (store/sealed_secret.h); `api_key_env` names an environment variable of the warden process,
// read when a request uses the provider.
// Validation (400, param naming the field): provider_type one of provider_types(); base_url an
// http(s) URL without user info, query or fragment (at most 2,048 characters; checked before any
// key is opened); id [A-Za-z0-9_.-]{1,64} (default "<type>-<8 hex>"); name at most 200
// characters; api_key at most 4,096 characters, printable ASCII ("" drops the key); api_key_env
// [A-Za-z_][A-Za-z0-9_]{0,127} ending in _KEY or _TOKEN, not WARDEN_* (so it cannot send the
// server's other settings anywhere); not both api_key and api_key_env; a PUT that changes the
// base_url of a provider with a key must send the key again (a key goes only where it was given
// for). An id that exists → 400 provider_exists.
// Who: every key may list and use the providers; only the single user or an admin key may add,
// change or remove one (403 admin_only): a provider makes warden send requests, with a key of
// the server's, to the URL it names.
// Resolution (provider_resolver()): by id, else the first enabled provider of the type (id order);
// none → 404 provider_not_found (param provider_id / provider_type); disabled → 400
// provider_disabled; api_key_env not set → 400 provider_key_missing; no model (neither
// external_model nor the request's model) → 400 (param external_model).
// Thread-safety: handlers run concurrently; the store serializes; blocking calls run on `pool`.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/blocking_pool.h"
#include "common/http_types.h"
#include "engine/external_provider.h"
#include "engine/http_client.h"
#include "store/provider_store.h"

namespace warden::api::control {

struct provider_deps {
  store::provider_store* store = nullptr;  ///< null: the routes answer 503
  blocking_pool* pool = nullptr;
  std::string seal_key;                    ///< store/sealed_secret.h's key (32 bytes)
  engine::http_client* client = nullptr;
  std::chrono::milliseconds ping{15000};   ///< keep-alive interval of the provider's streams
};

std::vector<route> provider_routes(provider_deps& deps);

/// The surfaces' resolver over `deps` (which must outlive it).
engine::provider_resolver provider_resolver(provider_deps& deps);

}  // namespace warden::api::control
