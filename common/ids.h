// warden::ids — random ids and secrets from the kernel.
//
// Every id made here and every generated key comes from the kernel CSPRNG via getrandom(2)
// (blocking only until the pool is first seeded at boot); there is no user-space generator to
// seed, fork or predict. One id is made elsewhere today: the `call_…` id of a forced tool call
// (engine/forced_tool_call.cpp, a thread_local std::mt19937_64; not a secret). Ids are opaque: callers may rely on their length, prefix and alphabet, never on more.
//
//   kind         shape                               random bits
//   approval     22 URL-safe chars, no prefix         132   (the shape approval ids always had)
//   tool_call    "call_"     + 24 URL-safe chars      144
//   completion   "chatcmpl-" + 24 URL-safe chars      144   (OpenAI's prefix for chat completions)
//   response     "resp_"     + 24 URL-safe chars      144   (OpenAI Responses API prefix)
//   message      "msg_"      + 24 URL-safe chars      144
//   script       24 lowercase hex chars               96    (file names of tool scripts)
//   rule         "rule_"     + 16 URL-safe chars      96    (remembered approval rules)
//   request      "req_"      + 24 URL-safe chars      144   (every HTTP request: the `request-id` header)
//   tool_use     "toolu_"    + 24 URL-safe chars      144   (Anthropic tool_use block ids)
//   server_tool_use "srvtoolu_" + 24 URL-safe chars   144   (Anthropic server_tool_use block ids)
//   reasoning_item  "rs_"    + 24 URL-safe chars      144   (Responses API output items: reasoning,
//   function_call_item "fc_" + 24 …                   144    function_call,
//   approval_request "mcpr_" + 24 …                   144    mcp_approval_request,
//   mcp_call        "mcp_"   + 24 …                   144    mcp_call (a warden tool the loop ran),
//   input_item      "item_"  + 24 …                   144    an input item the client sent without id)
//   knowledge_base  "kb_"    + 16 URL-safe chars      96    (knowledge bases, store/knowledge_base.h)
//   document        "doc_"   + 16 …                   96    (their documents)
//   rag_auto_call   "rag_auto_" + 12 lowercase hex    48    (auto-injected searches: reference §2.10's shape)
// URL-safe chars are the base64url alphabet of RFC 4648 §5: [A-Za-z0-9_-].
//
// Errors: only a failing getrandom(2) (no kernel support, a seccomp filter) throws
// std::runtime_error; that is a broken host, not a user error.
// Thread-safety: stateless; every function may be called from any thread.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace warden::ids {

/// Fills `out` with random bytes from getrandom(2), retrying on EINTR and short reads.
void random_bytes(std::span<std::byte> out);

/// random_hex() and random_token() draw their bytes from getrandom(2) 4 KiB at a time into a
/// per-thread buffer (each byte used once, then zeroed): a forked child must not call them before
/// exec, or parent and child could hand out the same bytes.

/// 2*`bytes` lowercase hex characters ([0-9a-f]) encoding `bytes` random bytes.
std::string random_hex(std::size_t bytes);

/// `chars` characters of the base64url alphabet [A-Za-z0-9_-], each carrying 6 uniform bits.
std::string random_token(std::size_t chars);

enum class kind {
  approval, tool_call, completion, response, message, script, rule, request, tool_use, server_tool_use,
  reasoning_item, function_call_item, approval_request, mcp_call, input_item, knowledge_base, document, rag_auto_call
};

/// A fresh id of the given kind (shapes in the table above).
std::string new_id(kind k);

}  // namespace warden::ids
