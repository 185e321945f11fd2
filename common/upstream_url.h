// upstream_url — the base URL warden sends an OpenAI-compatible upstream's requests to
// (`--upstream`), written either way OpenAI-compatible clients accept it.
//
// upstream_base_url(): "http://host:port" or "http://host:port/" (no path) means the server's
// OpenAI API at "/v1", so "/v1" is appended; a URL with a path ("http://host/v1",
// "https://gw/openai/v1", "http://host:8080/api") is kept as written. Trailing slashes are
// dropped either way ("http://h/v1/" → "http://h/v1"). Requests then go to <base>/models,
// <base>/chat/completions, …  "" stays "" (no upstream).
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace warden {

/// The base URL for the `--upstream` value `url` (rules above). `url` is an http(s):// URL
/// (checked by the config table); anything else is returned without its trailing slashes.
std::string upstream_base_url(std::string_view url);

}  // namespace warden
