// The OpenAI surface's other model routes: POST /v1/completions (legacy text completions) and
// POST /v1/embeddings (legacy_routes()).
//
// /v1/completions is a passthrough like plain /v1/chat/completions (chat_handler.h): the body is
// validated (400 in OpenAI's envelope before any upstream work), "model" is replaced by the
// served id, and the upstream's answer is forwarded unchanged: non-streaming one
// `text_completion` JSON body; streaming its `data: <chunk>` frames the moment each arrives,
// `: ping` while the upstream is silent, `data: [DONE]` last (a usage-only chunk, choices [],
// only when stream_options.include_usage asks for it). Failures before the first byte get a
// real status (503 upstream not ready or unreachable, 502 upstream broke, 400 upstream refused);
// after it they go in-band (errors.h). A client that disconnects aborts the upstream request.
//
// /v1/embeddings: the body is validated, then the upstream is asked for floats (no
// "encoding_format", no "dimensions"; "model" replaced) at its /v1/embeddings. For warden's own
// llama-server that is a second llama-server child of the same model started with --embeddings
// (engine/upstream_registry.h), begun on the first request, which waits for it to load (503 with its
// message when it cannot); for an OpenAI-compatible upstream, that upstream. The answer is
// rebuilt in OpenAI's shape (embedding_response()): floats as JSON numbers, or with
// encoding_format "base64" the base64 of the vector's little-endian float32 bytes, as OpenAI
// sends them. `dimensions` is accepted only when it equals the model's vector length (there is
// no truncation that keeps the vectors meaningful): 400 otherwise, once the length is known.
//
// Request fields checked (others pass through unchanged, as llama-server takes extras):
//   completions: prompt (required: a string, a non-empty list of strings, a non-empty list of
//     token ids, or a non-empty list of non-empty token-id lists), model (string), stream (bool),
//     stream_options (object, only with stream; include_usage bool), max_tokens (int ≥ 0),
//     temperature [0, 2], top_p [0, 1], min_p [0, 1], presence_penalty and frequency_penalty
//     [-2, 2], repetition_penalty [0, 2], n and best_of [1, 128] (n > 1 not with stream),
//     top_k [-1, 100000], seed (int), logprobs [0, 20], n_probs [0, 100], echo (bool),
//     suffix and user (strings), logit_bias (object), stop (string or list of strings).
//   embeddings: input (required: a non-empty string, a list of 1..2048 non-empty strings, a
//     non-empty list of token ids, or a list of 1..2048 non-empty token-id lists), model and
//     user (strings), encoding_format ("float" or "base64"), dimensions (int ≥ 1).
// Token ids are integers in [0, 2^31 - 1].
// Errors: errc::invalid_request with `param` naming the field (type_code invalid_json,
// invalid_type, invalid_value, missing_required_parameter, unsupported_parameter); the
// upstream's errors as engine/chat_service.h; a malformed embeddings answer → errc::upstream_error.
// Thread-safety: the handlers run one per request on the connection's strand; the parse and
// render functions are pure.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/http_types.h"
#include "common/json_util.h"
#include "common/result.h"
#include "engine/admission_queue.h"
#include "engine/chat_service.h"
#include "engine/upstream_registry.h"

namespace warden::api::openai {

struct legacy_deps {
  engine::chat_service& chat;  ///< /v1/completions; /v1/embeddings too when `embeddings` is null
  /// warden's own embeddings child (its chat_service and the upstream that service talks to);
  /// both null for an OpenAI-compatible upstream. `embeddings_child` is begun on first use.
  engine::chat_service* embeddings = nullptr;
  engine::upstream* embeddings_child = nullptr;
  /// The chat engine's admission queue for /v1/completions (engine/admission_queue.h); null: none.
  std::shared_ptr<engine::admission_queue> admission{};
};

struct completion_request {
  json body;                   ///< the validated body, as it goes upstream (model and stream set there)
  bool stream = false;
  bool include_usage = false;  ///< stream_options.include_usage
};

struct embedding_request {
  json body;                   ///< for the upstream: input (+ user and unknown extras), no format/dimensions
  bool base64 = false;         ///< encoding_format "base64"
  std::optional<std::int64_t> dimensions;
  std::size_t input_count = 0; ///< vectors expected back (1 for a string or one token list)
};

/// Validates a /v1/completions body (fields above).
result<completion_request> parse_completion_request(std::string_view body);

/// Validates a /v1/embeddings body (fields above).
result<embedding_request> parse_embedding_request(std::string_view body);

/// Standard base64 (RFC 4648 §4, with padding) of the floats as little-endian IEEE-754 float32
/// bytes: what OpenAI sends for encoding_format "base64" (numpy.frombuffer(..., "<f4") reads it).
std::string base64_float32(std::span<const float> values);

/// OpenAI's embeddings response from the upstream's answer `upstream` (`data` with one flat
/// numeric `embedding` per input, in any order, `index` optional; `usage` optional):
/// {"object":"list","data":[{"object":"embedding","index":i,"embedding":[…] or "base64"}],
///  "model":model,"usage":{"prompt_tokens":N,"total_tokens":N}}. Errors: errc::upstream_error
/// when the answer does not have that shape or the count differs from req.input_count;
/// errc::invalid_request (param "dimensions") when req.dimensions differs from the length.
result<json> embedding_response(const json& upstream, const embedding_request& req, const std::string& model);

/// Embeds `texts` (1..2048 non-empty strings) with the server's embeddings upstream, as
/// /v1/embeddings does (the embeddings child is begun and awaited first): one float vector per
/// text, in order. Used by the knowledge base (api/control/kb_routes.h, tools/knowledge.h).
/// Errors: the upstream's (engine/chat_service.h), errc::upstream_error for a malformed answer.
boost::asio::awaitable<result<std::vector<std::vector<float>>>> embed_texts(legacy_deps& deps, std::vector<std::string> texts);

boost::asio::awaitable<void> handle_completions(const http_request& req, response_writer& out, legacy_deps& deps);
boost::asio::awaitable<void> handle_embeddings(const http_request& req, response_writer& out, legacy_deps& deps);

/// POST /v1/completions and POST /v1/embeddings (api key, OpenAI's error surface). `deps` must
/// outlive the routes.
std::vector<route> legacy_routes(legacy_deps& deps);

}  // namespace warden::api::openai
