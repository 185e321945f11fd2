// `warden models`, `warden ps`, `warden load`, `warden unload`, `warden rm`: the local models of a
// running warden from the command line, over the control API (docs/api/control.md "Models"):
//   warden models                 the model library: id, size, architecture, context, loaded
//   warden ps                     the loaded model: state, context per slot, slots busy / total
//   warden load MODEL [--ctx N] [--parallel N]   load (swap to) a model, printing its progress
//   warden unload                 stop the model
//   warden rm MODEL               delete a model's file (not while it is loaded)
// The key: --api-key, --api-key-file, WARDEN_API_KEY or WARDEN_API_KEY_FILE, as `warden chat`.
// Exit status: 0 done, 1 the server refused or could not be reached (its message printed), 2 a
// bad argument.
// Thread-safety: run it once, from the main thread.
#pragma once

#include <string>

namespace warden::client {

struct model_options {
  std::string url = "http://127.0.0.1:8888";
  std::string api_key;
  std::string api_key_file;
  std::string action;  ///< models | ps | load | unload | rm
  std::string model;   ///< load, rm
  int ctx = 0;         ///< load --ctx; 0 = the server's default
  int parallel = 0;    ///< load --parallel; 0 = the server's default
};

int run_model_command(const model_options& o);

}  // namespace warden::client
