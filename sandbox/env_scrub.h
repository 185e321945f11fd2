// env_scrub — the environment of a `bypass_permissions` run: the server's own, minus every
// secret (the list of reference unsloth-studio.md §4.5), with HOME/TMPDIR/TEMP/TMP moved to the
// workspace and MPLBACKEND defaulted to Agg.
//
// Dropped: the exact names; names starting with a secret prefix (AWS_, AZURE_, GOOGLE_, GCP_,
// GCLOUD_, DYLD_, WARDEN_); names containing a secret substring (TOKEN, API_KEY, SECRET, PASS,
// CREDENTIAL, AUTH, JWT, COOKIE, SESSION, WEBHOOK, DSN, …) or ending like one (KEY, _PW, _PAT);
// any value that carries credentials (any URL userinfo `scheme://user[:pass]@host`, webhook
// URLs, `password=`/`pwd=`/`accountkey=`/`accesskey=` in a connection string); variables naming
// where credentials live. warden strips more than the reference list (the adversarial run found
// DB_PASS, STRIPE_KEY, a Sentry DSN, webhook URLs getting through); over-stripping a harmless
// variable is the accepted cost. Kept despite matching:
// AWS_EC2_METADATA_DISABLED, AWS_EC2_METADATA_V1_DISABLED.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden::sandbox {

/// True when the variable must not reach a tool.
bool is_secret_variable(std::string_view name, std::string_view value);

/// `environ`-style "NAME=value" entries in, the bypass environment out.
std::vector<std::string> bypass_env(const std::vector<std::string>& server_env, const std::string& workspace);

}  // namespace warden::sandbox
