// `warden kb`: the knowledge bases of a running warden from the command line (issue 25), over
// the control API (docs/api/control.md "Knowledge bases"):
//   warden kb list [KB]              the knowledge bases, or one's documents
//   warden kb create NAME            a new knowledge base; prints its id
//   warden kb add KB FILE... | --fetch URL   upload files (sent as content_base64) or a page
//   warden kb rm KB [DOC]            delete a document, or the knowledge base with everything in it
//   warden kb search KB QUERY        the best chunks
// The key: --api-key, --api-key-file, WARDEN_API_KEY or WARDEN_API_KEY_FILE, as `warden chat`.
// Exit status: 0 done, 1 the server refused or could not be reached (its message printed), 2 a
// bad argument or an unreadable file.
// Thread-safety: run it once, from the main thread.
#pragma once

#include <string>
#include <vector>

namespace warden::client {

struct kb_options {
  std::string url = "http://127.0.0.1:8888";
  std::string api_key;
  std::string api_key_file;
  std::string action;              ///< list | create | add | rm | search
  std::vector<std::string> args;   ///< the action's words
  std::string fetch_url;           ///< add --fetch
};

int run_kb(const kb_options& o);

}  // namespace warden::client
