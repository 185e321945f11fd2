// warden::store::provider_store — the external providers configured on the server (issue 28 §3;
// engine/providers.h reads them), so they survive restarts.
//
// Table `providers` (schema version 10, database.cpp), a keyed_json_store (keyed_json_store.h:
// columns, errors, thread-safety): config is the provider's JSON text, its key only sealed
// (store/sealed_secret.h) or as the name of an environment variable, never in clear. Inserting
// an id that exists is errc::invalid_request "a provider with id X exists" (param "id", type code
// "provider_exists").
#pragma once

#include "store/keyed_json_store.h"

namespace warden::store {

class provider_store : public keyed_json_store {
 public:
  explicit provider_store(database& db) : keyed_json_store(db, {"providers", "a provider", "provider_exists"}) {}
};

}  // namespace warden::store
