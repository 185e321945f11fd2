// secret_detect — whether an environment variable carries a secret (the list of reference
// unsloth-studio.md §4.5, extended). Used for every environment warden hands to another program:
// a `bypass_permissions` tool run (sandbox/env_scrub.h) and llama-server (engine/llama_server.h).
//
// Dropped by name (case-insensitive): the exact names; names starting with a secret prefix
// (AWS_, AZURE_, GOOGLE_, GCP_, GCLOUD_, DYLD_, WARDEN_); names containing a secret substring
// (TOKEN, API_KEY, SECRET, PASS, CRED, CREDENTIAL, BEARER, AUTH — not as part of AUTHOR or
// AUTHORITY, so GIT_AUTHOR_NAME and `--author=` are kept —, JWT, COOKIE, SESSION, WEBHOOK,
// DSN, SIGNATURE, HMAC, SALT, MNEMONIC, …) or ending like one (KEY, KEYS, PWD, _PW, _PAT,
// _PIN, _OTP, BINDPW, ROOTPW);
// variables naming where credentials live.
// Kept despite their names (their values are still checked): AWS_EC2_METADATA_DISABLED,
// AWS_EC2_METADATA_V1_DISABLED, and PWD/OLDPWD (the shell's directories, not passwords).
//
// Dropped by value, whatever the name: any finding of the one detector, secrets/find_secrets.h
// (so every shape the audit log redacts keeps a variable out too: values of secret names inside
// the value, `{"password": "…"}`, credential flags, `Basic <base64>`, a Telegram bot URL,
// Twilio `AC…:token`, Mailgun keys, a value that is a bare 32-hex key, LDAP `-D <dn> -w pw` and
// `bindpw pw`, private key markers, URL passwords, webhooks, and the token formats below);
// and, stricter than redaction because a whole variable is at stake:
// - any URL userinfo `scheme://user[:pass]@host` (a Sentry DSN carries its key as the user);
// - `password=`/`pwd=`/`accountkey=`/`accesskey=` anywhere, even with an empty value
//   (connection strings);
// - a credential parameter in a URL query or fragment (after `?` or `#`, split at `&`/`;`),
//   with a non-empty value: its name, lower-cased, percent-decoded and stripped of
//   punctuation, is sig, pw, pwd, pass, auth or jwt, ends in `key`, `pass`, `pwd` or `pw`
//   (key, api_key, apikey, accesskey, db_pass, …) or contains token, secret, passw,
//   signature, credential, authorization or sessionid (access_token, X-Amz-Signature,
//   client_secret, …).
// The token formats (find_secret_token), anywhere in the value, starting at a word boundary
// (the start of the value or after a character that is not a letter or digit: `Bearer sk-…`,
// `--key=ghp_…`); a private key block `-----BEGIN … PRIVATE KEY` (RSA, EC, OPENSSH,
// ENCRYPTED, PGP …); a JWT `eyJ<header>.<payload>.<signature>`, header and payload of at least
// 10 base64url characters each, the signature possibly empty, not after a base64url character.
//   Prefixes are case-sensitive; the minimum body length after the prefix is
//   in brackets:
//     OpenAI/Anthropic `sk-` (sk-proj-, sk-ant-, …) [20]; Stripe `sk_live_`, `sk_test_`,
//     `rk_live_`, `rk_test_`, `whsec_` [20]; Slack `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`,
//     `xoxe-`, `xapp-` [20]; Hugging Face `hf_` [30]; GitHub `ghp_`, `gho_`, `ghu_`, `ghs_`,
//     `ghr_` [30], `github_pat_` [40]; GitLab `glpat-`, `gldt-`, `glrt-`, `glptt-` [20];
//     npm `npm_` [30]; PyPI `pypi-` [50]; Groq `gsk_` [40]; Perplexity `pplx-` [40];
//     Replicate `r8_` [30]; SendGrid `SG.` [60]; DigitalOcean `dop_v1_`, `doo_v1_`, `dor_v1_`
//     [40]; Shopify `shpat_`, `shpss_`, `shpca_`, `shppa_` [30]; Google API keys `AIza` [35];
//     AWS access key ids `AKIA`, `ASIA` [16 of A-Z0-9]; age `AGE-SECRET-KEY-1` [50 of A-Z0-9];
//     Mailgun `key-` [32 of letters and digits].
//   The body is the run of the format's characters after the prefix (letters and digits;
//   plus `_` for github_pat_, `-` and `_` for sk-/Slack/GitLab/pypi-/AIza, `.` too for SG.).
//   Except for the all-uppercase AWS and age formats, the body must also mix at least two of
//   lowercase, uppercase and digits: real tokens are random, so `sk-learn`, `hf_transfer`,
//   `npm_config_cache` or `sk-some-long-lowercase-name` pass. Twilio `SK…` ids are not
//   matched: `SK` + 32 hex is too close to ordinary identifiers, and the id is not the secret
//   (the detector matches `SK…:secret`, the secret after the colon).
//
// warden strips more than the reference list (the adversarial runs found DB_PASS, STRIPE_KEY,
// a Sentry DSN, webhook URLs, DB_PWD, MY_CREDS, BEARER, token-format values and credential URL
// parameters getting through); over-stripping a harmless variable (INCREDIBLE, `?monkey=1`) is
// the accepted cost.
//
// The detector (secrets/find_secrets.h) uses the parts exposed below: is_secret_name,
// is_credential_parameter_name, find_secret_token and find_private_key_block.
//
// Cost: linear in the value (values may be 128 KiB; no regex, token bodies are scanned for at
// most 128 characters to decide a match; find_secrets.h is linear too). Thread-safety: pure
// functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace warden::secrets {

/// True when the variable must not reach another program.
bool is_secret_variable(std::string_view name, std::string_view value);

/// The name rules alone (case-insensitive): true when is_secret_variable(name, v) holds for
/// every value v. `PWD`, `OLDPWD` and the AWS metadata switches are false.
bool is_secret_name(std::string_view name);

/// The URL query parameter rule on a raw parameter name (percent-encoded as in the URL):
/// `sig`, `pw`, `pwd`, `pass`, `auth`, `jwt`, `…key`, `…pass`, `…pwd`, `…pw`, or containing token, secret, passw,
/// signature, credential, authorization or sessionid, after decoding, lower-casing and keeping
/// only letters and digits.
bool is_credential_parameter_name(std::string_view raw_name);

/// The first well-known token format or JWT (the value rules above) that starts at or after
/// byte `from` of `text`, at a word boundary judged against the byte before it (so `from` may
/// be the middle of a text). Returns its byte span [first, second): the prefix and the whole
/// run of body characters (for a JWT, header, payload and signature with their dots); nullopt
/// when there is none. Linear in the bytes after `from`.
std::optional<std::pair<std::size_t, std::size_t>> find_secret_token(std::string_view text, std::size_t from);

/// The first private key marker `-----BEGIN <label>-----` whose label (at most 64 characters)
/// says PRIVATE KEY, at or after byte `from`: its byte span, from the first dash to just after
/// the label's closing dashes (or after "PRIVATE KEY" when the 64 characters hold no closing
/// dashes); nullopt when there is none. The key material follows the span.
std::optional<std::pair<std::size_t, std::size_t>> find_private_key_block(std::string_view text, std::size_t from);

}  // namespace warden::secrets
