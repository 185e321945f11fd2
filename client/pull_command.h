// `warden pull`: downloads a model into a running warden's library (POST /api/models/pull,
// docs/api/control.md "Models"), drawing a progress bar on a terminal (percent, MB of MB, MB/s,
// time left; one line redrawn) and a line every few seconds otherwise. Ctrl-C cancels the pull
// on the server (DELETE /api/models/pulls/{id}; the partial file stays for a later resume).
//   warden pull https://host/path/model.gguf [--name N] [--sha256 H]
//   warden pull owner/repo:file.gguf            (the Hugging Face hub, or --hf-endpoint's mirror)
// Exit status: 0 done, 1 the server refused or the pull failed (its message printed), 2 a bad
// argument, 130 cancelled.
// Thread-safety: run it once, from the main thread (it installs a SIGINT handler).
#pragma once

#include <string>

namespace warden::client {

struct pull_options {
  std::string url = "http://127.0.0.1:8888";
  std::string api_key;
  std::string api_key_file;
  std::string source;  ///< a URL, or owner/repo[@rev]:file
  std::string name;
  std::string sha256;
};

int run_pull(const pull_options& o);

}  // namespace warden::client
