// secret_detect — whether an environment variable carries a secret (the list of reference
// unsloth-studio.md §4.5, extended). Used for every environment warden hands to another program:
// a `bypass_permissions` tool run (sandbox/env_scrub.h) and llama-server (engine/llama_server.h).
//
// Dropped by name (case-insensitive): the exact names; names starting with a secret prefix
// (AWS_, AZURE_, GOOGLE_, GCP_, GCLOUD_, DYLD_, WARDEN_); names containing a secret substring
// (TOKEN, API_KEY, SECRET, PASS, CRED, CREDENTIAL, BEARER, AUTH, JWT, COOKIE, SESSION, WEBHOOK,
// DSN, SIGNATURE, HMAC, SALT, MNEMONIC, …) or ending like one (KEY, KEYS, PWD, _PW, _PAT);
// variables naming where credentials live.
// Kept despite their names (their values are still checked): AWS_EC2_METADATA_DISABLED,
// AWS_EC2_METADATA_V1_DISABLED, and PWD/OLDPWD (the shell's directories, not passwords).
//
// Dropped by value, whatever the name:
// - any URL userinfo `scheme://user[:pass]@host` (a Sentry DSN carries its key as the user) and
//   webhook URLs;
// - `password=`/`pwd=`/`accountkey=`/`accesskey=` anywhere (connection strings);
// - a credential parameter in a URL query or fragment (after `?` or `#`, split at `&`/`;`),
//   with a non-empty value: its name, lower-cased, percent-decoded and stripped of
//   punctuation, is sig, pw, pwd, pass, auth or jwt, ends in `key` (key, api_key, apikey,
//   accesskey, …) or contains token, secret, passw, signature, credential, authorization or
//   sessionid (access_token, X-Amz-Signature, client_secret, …);
// - a private key block: `-----BEGIN … PRIVATE KEY` (RSA, EC, OPENSSH, ENCRYPTED, PGP …);
// - a JWT: `eyJ<header>.<payload>.<signature>`, header and payload of at least 10 base64url
//   characters each, the signature possibly empty; it must not follow a base64url character;
// - a well-known token format anywhere in the value, starting at a word boundary (the start of
//   the value or after a character that is not a letter or digit: `Bearer sk-…`,
//   `--key=ghp_…`). Prefixes are case-sensitive; the minimum body length after the prefix is
//   in brackets:
//     OpenAI/Anthropic `sk-` (sk-proj-, sk-ant-, …) [20]; Stripe `sk_live_`, `sk_test_`,
//     `rk_live_`, `rk_test_`, `whsec_` [20]; Slack `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`,
//     `xoxe-`, `xapp-` [20]; Hugging Face `hf_` [30]; GitHub `ghp_`, `gho_`, `ghu_`, `ghs_`,
//     `ghr_` [30], `github_pat_` [40]; GitLab `glpat-`, `gldt-`, `glrt-`, `glptt-` [20];
//     npm `npm_` [30]; PyPI `pypi-` [50]; Groq `gsk_` [40]; Perplexity `pplx-` [40];
//     Replicate `r8_` [30]; SendGrid `SG.` [60]; DigitalOcean `dop_v1_`, `doo_v1_`, `dor_v1_`
//     [40]; Shopify `shpat_`, `shpss_`, `shpca_`, `shppa_` [30]; Google API keys `AIza` [35];
//     AWS access key ids `AKIA`, `ASIA` [16 of A-Z0-9]; age `AGE-SECRET-KEY-1` [50 of A-Z0-9].
//   The body is the run of the format's characters after the prefix (letters and digits;
//   plus `_` for github_pat_, `-` and `_` for sk-/Slack/GitLab/pypi-/AIza, `.` too for SG.).
//   Except for the all-uppercase AWS and age formats, the body must also mix at least two of
//   lowercase, uppercase and digits: real tokens are random, so `sk-learn`, `hf_transfer`,
//   `npm_config_cache` or `sk-some-long-lowercase-name` pass. Twilio `SK…` ids are not
//   matched: `SK` + 32 hex is too close to ordinary identifiers, and the id is not the secret.
//
// warden strips more than the reference list (the adversarial runs found DB_PASS, STRIPE_KEY,
// a Sentry DSN, webhook URLs, DB_PWD, MY_CREDS, BEARER, token-format values and credential URL
// parameters getting through); over-stripping a harmless variable (INCREDIBLE, `?monkey=1`) is
// the accepted cost.
//
// Cost: linear in the value (values may be 128 KiB; no regex, token bodies are scanned for at
// most 128 characters). Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace warden {

/// True when the variable must not reach another program.
bool is_secret_variable(std::string_view name, std::string_view value);

}  // namespace warden
