#include "sandbox/env_scrub.h"

#include <algorithm>
#include <cctype>

namespace warden::sandbox {
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
                                             "COOKIE",  "SESSION",  "WEBHOOK", "DSN",    "SERVICE_ACCOUNT", "SIGNING"};
/// Name endings that mark a secret (warden adds these to the reference list: `STRIPE_KEY`,
/// `MASTER_PW`, `GITLAB_PAT`, `APP_KEY`).
constexpr std::string_view k_suffixes[] = {"KEY", "_PW", "_PAT", "_PIN", "_OTP"};
constexpr std::string_view k_kept[] = {"AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_V1_DISABLED"};
constexpr std::string_view k_value_fields[] = {"password=", "pwd=", "accountkey=", "accesskey="};
constexpr std::string_view k_moved[] = {"HOME", "TMPDIR", "TEMP", "TMP", "USERPROFILE", "APPDATA", "LOCALAPPDATA"};

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
  // URLs of services that put the secret in the path (webhooks).
  auto p = v.find("://");
  while (p != std::string_view::npos) {
    std::string_view rest = v.substr(p + 3);
    const auto end = rest.find_first_of("/?# \t");
    std::string_view authority = rest.substr(0, end);
    if (authority.rfind('@') != std::string_view::npos) return true;
    const std::string low = lower(rest);
    if (low.find("hooks.") != std::string::npos || low.find("/webhooks/") != std::string::npos ||
        low.find("/hooks/") != std::string::npos) {
      return true;
    }
    p = v.find("://", p + 3);
  }
  return false;
}

}  // namespace

bool is_secret_variable(std::string_view name, std::string_view value) {
  const std::string n = upper(name);
  if (std::find(std::begin(k_kept), std::end(k_kept), n) != std::end(k_kept)) return false;
  if (std::find(std::begin(k_exact), std::end(k_exact), n) != std::end(k_exact)) return true;
  for (auto p : k_prefixes) {
    if (n.rfind(p, 0) == 0) return true;
  }
  if (n.rfind("XDG_", 0) == 0 && n.size() > 9 && n.compare(n.size() - 5, 5, "_HOME") == 0) return true;
  for (auto s : k_substrings) {
    if (n.find(s) != std::string::npos) return true;
  }
  for (auto s : k_suffixes) {
    if (n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0) return true;
  }
  if (n.find("_KEY_") != std::string::npos) return true;
  if (url_with_userinfo(value)) return true;
  const std::string v = lower(value);
  for (auto f : k_value_fields) {
    if (v.find(f) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> bypass_env(const std::vector<std::string>& server_env, const std::string& workspace) {
  std::vector<std::string> out;
  bool has_mpl = false;
  for (const auto& kv : server_env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string_view name(kv.data(), eq);
    const std::string_view value(kv.data() + eq + 1, kv.size() - eq - 1);
    if (is_secret_variable(name, value)) continue;
    if (std::find(std::begin(k_moved), std::end(k_moved), name) != std::end(k_moved)) continue;
    if (name == "MPLBACKEND") has_mpl = true;
    out.push_back(kv);
  }
  for (auto m : {"HOME", "TMPDIR", "TEMP", "TMP"}) out.push_back(std::string(m) + "=" + workspace);
  if (!has_mpl) out.push_back("MPLBACKEND=Agg");
  return out;
}

}  // namespace warden::sandbox
