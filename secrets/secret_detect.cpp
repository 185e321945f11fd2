#include "secrets/secret_detect.h"

#include "secrets/find_secrets.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <string>

namespace warden::secrets {
namespace {

constexpr std::string_view k_exact[] = {
    "HF_TOKEN", "HF_HUB_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_TOKEN", "HUGGINGFACEHUB_API_TOKEN",
    "WANDB_API_KEY", "GH_TOKEN", "GITHUB_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY",
    "GOOGLE_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "REPLICATE_API_TOKEN", "COHERE_API_KEY",
    "MISTRAL_API_KEY", "NGC_API_KEY", "KAGGLE_KEY", "MYSQL_PWD", "LD_PRELOAD", "SSH_AUTH_SOCK", "SSH_AGENT_PID",
    "GPG_AGENT_INFO", "GNUPGHOME", "KUBECONFIG", "DOCKER_HOST",
    // where credentials live
    "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_XET_CACHE", "TRANSFORMERS_CACHE", "HF_DATASETS_CACHE",
    "HF_ASSETS_CACHE", "NETRC", "PGPASSFILE", "BOTO_CONFIG", "PIP_CONFIG_FILE", "CLOUDSDK_CONFIG",
    "KAGGLE_CONFIG_DIR", "DOCKER_CONFIG", "WANDB_DIR", "WANDB_CONFIG_DIR", "WANDB_CACHE_DIR",
    "NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG", "YARN_RC_FILENAME", "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM", "CARGO_HOME", "RCLONE_CONFIG", "GIT_ASKPASS", "SSH_ASKPASS", "BASH_ENV", "HOMEDRIVE",
    "HOMEPATH", "TF_CLI_CONFIG_FILE", "GOOGLE_APPLICATION_CREDENTIALS", "PGPASSFILE", "AWS_SHARED_CREDENTIALS_FILE",
    // warden's own settings (its API keys among them)
};
constexpr std::string_view k_prefixes[] = {"AWS_", "AZURE_", "GOOGLE_", "GCP_", "GCLOUD_", "DYLD_", "WARDEN_"};
constexpr std::string_view k_substrings[] = {"TOKEN",   "API_KEY", "APIKEY",     "SECRET", "PASS",   "CREDENTIAL",
                                             "PRIVATE_KEY", "PRIVKEY", "AUTH", "CONNSTR", "CONNECTIONSTRING", "JWT",
                                             "COOKIE",  "SESSION",  "WEBHOOK", "DSN",    "SERVICE_ACCOUNT", "SIGNING",
                                             "CRED",    "BEARER",   "SIGNATURE", "HMAC",  "SALT",   "MNEMONIC",
                                             "SEED_PHRASE", "ENCRYPTION_KEY", "MASTER_KEY"};
/// Name endings that mark a secret (warden adds these to the reference list: `STRIPE_KEY`,
/// `MASTER_PW`, `GITLAB_PAT`, `APP_KEY`, `DB_PWD`).
constexpr std::string_view k_suffixes[] = {"KEY", "KEYS", "PWD", "_PW", "_PAT", "_PIN", "_OTP", "BINDPW", "ROOTPW"};
/// LDAP's `bindpw` and `rootpw` (ldap.conf, slapd.conf) are in the endings too.
/// Names the name rules spare (their values are still checked).
constexpr std::string_view k_kept[] = {"AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_V1_DISABLED", "PWD", "OLDPWD"};
constexpr std::string_view k_value_fields[] = {"password=", "pwd=", "accountkey=", "accesskey="};

std::string upper(std::string_view s) {
  std::string u(s);
  for (auto& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}
std::string lower(std::string_view s) {
  std::string u(s);
  for (auto& c : u) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return u;
}

bool url_with_userinfo(std::string_view v) {
  // scheme://user[:pass]@host — any userinfo (a Sentry DSN carries its key as the user), and
  // URLs of services that put the secret in the path (webhooks). Each authority ends at the
  // next "://" at the latest, so the scan is linear; the webhook markers are looked for once,
  // after the first "://".
  const auto first = v.find("://");
  if (first == std::string_view::npos) return false;
  for (auto p = first; p != std::string_view::npos; p = v.find("://", p + 3)) {
    const std::string_view rest = v.substr(p + 3);
    if (rest.substr(0, rest.find_first_of("/?# \t")).find('@') != std::string_view::npos) return true;
  }
  const std::string low = lower(v.substr(first + 3));
  return low.find("hooks.") != std::string::npos || low.find("/webhooks/") != std::string::npos ||
         low.find("/hooks/") != std::string::npos;
}

// ASCII character classes (locale-independent).
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
constexpr bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool is_alnum(char c) { return is_digit(c) || is_lower(c) || is_upper(c); }
constexpr bool is_word(char c) { return is_alnum(c) || c == '_'; }
constexpr bool is_b64url(char c) { return is_word(c) || c == '-'; }
constexpr bool is_b64url_dot(char c) { return is_b64url(c) || c == '.'; }
constexpr bool is_upper_alnum(char c) { return is_upper(c) || is_digit(c); }

/// A well-known token format: `prefix` then at least `min_body` characters accepted by `body`;
/// with `mixed`, the body also mixes two of lowercase, uppercase and digits (random, not a word).
struct token_format {
  std::string_view prefix;
  bool (*body)(char);
  std::size_t min_body;
  bool mixed;
};
constexpr token_format k_token_formats[] = {
    {"sk-", is_b64url, 20, true},  // OpenAI sk-/sk-proj-/sk-svcacct-, Anthropic sk-ant-
    {"sk_live_", is_alnum, 20, true}, {"sk_test_", is_alnum, 20, true},  // Stripe secret
    {"rk_live_", is_alnum, 20, true}, {"rk_test_", is_alnum, 20, true},  // Stripe restricted
    {"whsec_", is_alnum, 20, true},                                      // Stripe webhook signing
    {"xoxb-", is_b64url, 20, true},   {"xoxp-", is_b64url, 20, true},   {"xoxa-", is_b64url, 20, true},
    {"xoxr-", is_b64url, 20, true},   {"xoxs-", is_b64url, 20, true},   {"xoxe-", is_b64url, 20, true},
    {"xapp-", is_b64url, 20, true},                                      // Slack
    {"hf_", is_alnum, 30, true},                                         // Hugging Face (34 letters)
    {"ghp_", is_alnum, 30, true},     {"gho_", is_alnum, 30, true},     {"ghu_", is_alnum, 30, true},
    {"ghs_", is_alnum, 30, true},     {"ghr_", is_alnum, 30, true},     // GitHub (36)
    {"github_pat_", is_word, 40, true},                                  // GitHub fine-grained (82)
    {"glpat-", is_b64url, 20, true},  {"gldt-", is_b64url, 20, true},   {"glrt-", is_b64url, 20, true},
    {"glptt-", is_b64url, 20, true},                                     // GitLab
    {"npm_", is_alnum, 30, true},                                        // npm (36)
    {"pypi-", is_b64url, 50, true},                                      // PyPI macaroon
    {"gsk_", is_alnum, 40, true},                                        // Groq (52)
    {"pplx-", is_alnum, 40, true},                                       // Perplexity (48)
    {"r8_", is_alnum, 30, true},                                         // Replicate (37)
    {"SG.", is_b64url_dot, 60, true},                                    // SendGrid (22.43)
    {"dop_v1_", is_alnum, 40, true},  {"doo_v1_", is_alnum, 40, true},  {"dor_v1_", is_alnum, 40, true},  // DO (64)
    {"shpat_", is_alnum, 30, true},   {"shpss_", is_alnum, 30, true},   {"shpca_", is_alnum, 30, true},
    {"shppa_", is_alnum, 30, true},                                      // Shopify (32 hex)
    {"AIza", is_b64url, 35, false},                                      // Google API key (35)
    {"AKIA", is_upper_alnum, 16, false}, {"ASIA", is_upper_alnum, 16, false},  // AWS access key id
    {"AGE-SECRET-KEY-1", is_upper_alnum, 50, false},                     // age identity (58)
    {"key-", is_alnum, 32, true},                                        // Mailgun (32)
};
/// Token bodies are scanned this far at most: enough for every threshold, and it keeps the
/// scan linear when a hostile value repeats a prefix.
constexpr std::size_t k_max_body_scan = 128;
/// The first characters of the prefixes above and of a JWT (`eyJ`): other positions are skipped.
constexpr auto k_token_starts = [] {
  std::array<bool, 256> t{};
  for (const auto& f : k_token_formats) t[static_cast<unsigned char>(f.prefix[0])] = true;
  t['e'] = true;
  return t;
}();

/// Bit 1 lowercase, 2 uppercase, 4 digit, 0 anything else.
constexpr unsigned char_class(char c) { return is_lower(c) ? 1u : is_upper(c) ? 2u : is_digit(c) ? 4u : 0u; }

bool body_matches(std::string_view body, const token_format& f) {
  const std::size_t n = std::min(body.size(), k_max_body_scan);
  std::size_t len = 0;
  unsigned classes = 0;
  for (; len < n && f.body(body[len]); ++len) classes |= char_class(body[len]);
  return len >= f.min_body && (!f.mixed || std::popcount(classes) >= 2);
}

std::size_t run_length(std::string_view s, bool (*accept)(char)) {
  std::size_t n = 0;
  while (n < s.size() && accept(s[n])) ++n;
  return n;
}

/// The length of a token of a well-known format at the beginning of `s` (not empty): its prefix
/// and the whole run of body characters; 0 when none starts there.
std::size_t token_length_at(std::string_view s) {
  for (const auto& f : k_token_formats) {
    if (f.prefix[0] != s[0] || !s.starts_with(f.prefix)) continue;
    const std::string_view body = s.substr(f.prefix.size());
    if (body_matches(body, f)) return f.prefix.size() + run_length(body, f.body);
  }
  return 0;
}

/// The length of a JWT `eyJ<header>.<payload>.<signature>` at the beginning of `s`; 0 when none.
/// The caller starts only after a non-base64url character, so each run is scanned at most twice.
std::size_t jwt_length_at(std::string_view s) {
  if (!s.starts_with("eyJ")) return 0;
  const std::size_t header = run_length(s, is_b64url);
  if (header < 10 || header >= s.size() || s[header] != '.') return 0;
  const std::size_t payload = run_length(s.substr(header + 1), is_b64url);
  const std::size_t dot = header + 1 + payload;
  if (payload < 10 || dot >= s.size() || s[dot] != '.') return 0;
  return dot + 1 + run_length(s.substr(dot + 1), is_b64url);
}

constexpr int hex_value(char c) {
  return is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
}

/// A query parameter name percent-decoded, lower-cased, only its letters and digits kept:
/// `X-Amz-Signature` and `api%5Fkey` become `xamzsignature` and `apikey`.
std::string parameter_name(std::string_view raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '%' && i + 2 < raw.size() && hex_value(raw[i + 1]) >= 0 && hex_value(raw[i + 2]) >= 0) {
      c = static_cast<char>(hex_value(raw[i + 1]) * 16 + hex_value(raw[i + 2]));
      i += 2;
    }
    if (is_alnum(c)) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

constexpr std::string_view k_param_exact[] = {"sig", "pw", "pwd", "pass", "auth", "jwt"};
constexpr std::string_view k_param_substrings[] = {"token",      "secret",        "passw",    "signature",
                                                   "credential", "authorization", "sessionid"};

/// `name=value` (value non-empty) whose name says the value is a credential.
bool credential_parameter(std::string_view param) {
  const auto eq = param.find('=');
  if (eq == std::string_view::npos || eq + 1 == param.size()) return false;
  return is_credential_parameter_name(param.substr(0, eq));
}

/// A credential parameter in a URL query or fragment: the parameters after a `?` or `#`, split
/// at `&` and `;`, up to whitespace, a quote or an angle bracket.
bool credential_query_parameter(std::string_view v) {
  constexpr std::string_view k_delimiters = "?#&; \t\r\n\"'<>";
  bool in_query = false;
  std::size_t i = 0;
  while (i < v.size()) {
    const std::size_t end = std::min(v.find_first_of(k_delimiters, i), v.size());
    if (in_query && credential_parameter(v.substr(i, end - i))) return true;
    if (end == v.size()) break;
    const char c = v[end];
    in_query = c == '?' || c == '#' || ((c == '&' || c == ';') && in_query);
    i = end + 1;
  }
  return false;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// AUTH in an upper-cased name, except as part of AUTHOR, AUTHORS or AUTHORITY (a commit's
/// author, `--author=`, a certificate authority): AUTHORIZATION and AUTHORIZE still count.
bool has_auth(const std::string& n) {
  for (auto p = n.find("AUTH"); p != std::string::npos; p = n.find("AUTH", p + 1)) {
    if (n.compare(p, 6, "AUTHOR") != 0 || n.compare(p, 8, "AUTHORIZ") == 0) return true;
  }
  return false;
}

/// The name rules, on the upper-cased name.
bool secret_name(const std::string& n) {
  if (std::find(std::begin(k_kept), std::end(k_kept), n) != std::end(k_kept)) return false;
  if (std::find(std::begin(k_exact), std::end(k_exact), n) != std::end(k_exact)) return true;
  for (auto p : k_prefixes) {
    if (n.rfind(p, 0) == 0) return true;
  }
  if (n.rfind("XDG_", 0) == 0 && n.size() > 9 && ends_with(n, "_HOME")) return true;
  for (auto s : k_substrings) {
    if (s == "AUTH" ? has_auth(n) : n.find(s) != std::string::npos) return true;
  }
  for (auto s : k_suffixes) {
    if (ends_with(n, s)) return true;
  }
  return n.find("_KEY_") != std::string::npos;
}

/// The value rules: the detector's findings (find_secrets.h), and what only an environment
/// value is judged by: any URL userinfo and `password=`-style fields even when empty, and a
/// credential parameter in a URL query or fragment.
bool secret_value(std::string_view value) {
  if (!find_secrets(value).empty() || url_with_userinfo(value)) return true;
  const std::string v = lower(value);
  for (auto f : k_value_fields) {
    if (v.find(f) != std::string::npos) return true;
  }
  return credential_query_parameter(value);
}

}  // namespace

bool is_secret_variable(std::string_view name, std::string_view value) {
  return secret_name(upper(name)) || secret_value(value);
}

bool is_secret_name(std::string_view name) { return secret_name(upper(name)); }

bool is_credential_parameter_name(std::string_view raw_name) {
  const std::string n = parameter_name(raw_name);
  if (std::find(std::begin(k_param_exact), std::end(k_param_exact), n) != std::end(k_param_exact)) return true;
  for (std::string_view end : {"key", "pass", "pwd", "pw"}) {
    if (n.ends_with(end)) return true;
  }
  return std::any_of(std::begin(k_param_substrings), std::end(k_param_substrings),
                     [&](std::string_view s) { return n.find(s) != std::string::npos; });
}

std::optional<std::pair<std::size_t, std::size_t>> find_secret_token(std::string_view text, std::size_t from) {
  for (std::size_t i = from; i < text.size(); ++i) {
    const char before = i == 0 ? ' ' : text[i - 1];
    if (is_alnum(before) || !k_token_starts[static_cast<unsigned char>(text[i])]) continue;
    if (const std::size_t n = token_length_at(text.substr(i)); n > 0) return std::pair{i, i + n};
    if (is_b64url(before)) continue;
    if (const std::size_t n = jwt_length_at(text.substr(i)); n > 0) return std::pair{i, i + n};
  }
  return std::nullopt;
}

std::optional<std::pair<std::size_t, std::size_t>> find_private_key_block(std::string_view text, std::size_t from) {
  constexpr std::string_view begin = "-----BEGIN ", dashes = "-----", what = "PRIVATE KEY";
  for (auto p = text.find(begin, from); p != std::string_view::npos; p = text.find(begin, p + 1)) {
    const std::size_t label_at = p + begin.size();
    const std::string_view label = text.substr(label_at, 64);
    const std::size_t close = label.find(dashes);
    const std::size_t key = label.substr(0, close).find(what);
    if (key == std::string_view::npos) continue;
    const std::size_t end = close != std::string_view::npos ? close + dashes.size() : key + what.size();
    return std::pair{p, label_at + end};
  }
  return std::nullopt;
}

}  // namespace warden::secrets
