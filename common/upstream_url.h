// upstream_url — the base URL warden sends an OpenAI-compatible upstream's requests to
// (`--upstream`), written either way OpenAI-compatible clients accept it.
//
// upstream_base_url(): "http://host:port" or "http://host:port/" (no path) means the server's
// OpenAI API at "/v1", so "/v1" is appended; a URL with a path ("http://host/v1",
// "https://gw/openai/v1", "http://host:8080/api") is kept as written. Trailing slashes are
// dropped either way ("http://h/v1/" → "http://h/v1"). Requests then go to <base>/models,
// <base>/chat/completions, …  "" stays "" (no upstream).
// Thread-safety: a pure function.
//
// parse_upstreams(): the text of an --upstreams-file, the engines of a pool (engine/engine_pool.h):
// one engine per line, "URL [model=ID] [slots=N] [key_env=VAR]"; blank lines and lines whose
// first non-blank is '#' are skipped. URL is http(s)://… (url_problem(); its base URL as above);
// model= is the public model id it serves (1–256 printable characters; default: the first its
// /models lists); slots= how many requests it serves at once (1–4096; the admission queue's
// slots, 0 = unknown); key_env= names the environment variable holding its Bearer key
// ([A-Z_][A-Z0-9_]*, not WARDEN_*: warden's own secrets never go to an engine; read when warden
// starts). Each option at most once a line.
// Errors: errc::invalid_request naming the line number and what is wrong.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace warden {

/// The base URL for the `--upstream` value `url` (rules above). `url` is an http(s):// URL
/// (checked by the config table); anything else is returned without its trailing slashes.
std::string upstream_base_url(std::string_view url);

/// What is wrong with `url` as an engine's base URL, or "" when nothing is: http(s)://host[:port]
/// [/path] with a host, a port of 1–65535, no user:password@ (a credential in a URL would be shown
/// wherever the URL is: give keys through key_env= or --upstream-api-key), no ?query or #fragment,
/// no blanks or control characters, at most 2048 bytes. Pure.
std::string url_problem(std::string_view url);

/// One engine line of an --upstreams-file.
struct upstream_entry {
  std::string url;       ///< base URL (upstream_base_url)
  std::string model_id;  ///< "" = the first model it lists
  int slots = 0;         ///< 0 = unknown
  std::string key_env;   ///< "" = no key
};

/// The entries of an --upstreams-file's text (rules above). Pure.
result<std::vector<upstream_entry>> parse_upstreams(std::string_view text);
/// parse_upstreams() of the file at `path`; errc::invalid_request when it cannot be read.
result<std::vector<upstream_entry>> read_upstreams_file(const std::string& path);

}  // namespace warden
