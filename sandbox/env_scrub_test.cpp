#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "sandbox/env_scrub.h"

namespace warden::sandbox {
namespace {

struct row {
  const char* name;
  const char* value;
  bool secret;
};

// Every name and value rule of env_scrub.h, with look-alikes that must get through. The tokens
// are made up; only their shapes are real.
const row k_rows[] = {
    // value formats found by the adversarial run
    {"NOTE", "sk-Abc123Def456Ghi789Jkl012Mno345Pqr678Stu901Vwx", true},      // OpenAI legacy
    {"NOTE", "sk-proj-Abc123Def456Ghi789Jkl012Mno345_Pqr-678", true},        // OpenAI project
    {"HDR", "Bearer sk-ant-api03-Abc123Def456Ghi789Jkl012Mno", true},        // Anthropic, mid-value
    {"PAY", "sk_live_51Abc123Def456Ghi789Jkl012", true},                     // Stripe
    {"PAY", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", true},                       // Stripe
    {"PAY", "rk_live_51Abc123Def456Ghi789Jkl012", true},                     // Stripe restricted
    {"CHATBOT", "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", true},  // Slack bot
    {"CHATBOT", "xoxp-1234567890-1234567890-1234567890123-abcdef0123456789", true},  // Slack user
    {"CHATBOT", "xapp-1-A0123456789-1234567890123-abcdef0123456789", true},  // Slack app
    {"HUB", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", true},                  // Hugging Face
    {"GH", "ghp_0123456789abcdefABCDEF0123456789abcd", true},                // GitHub classic
    {"GH", "gho_0123456789abcdefABCDEF0123456789abcd", true},
    {"GH", "ghu_0123456789abcdefABCDEF0123456789abcd", true},
    {"GH", "ghs_0123456789abcdefABCDEF0123456789abcd", true},
    {"GH", "ghr_0123456789abcdefABCDEF0123456789abcd", true},
    {"GH", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789", true},
    {"ARGS", "--verbose --key=ghp_0123456789abcdefABCDEF0123456789abcd", true},  // after '='
    {"CLOUD", "AKIAIOSFODNN7EXAMPLE", true},                                 // AWS key id
    {"CLOUD", "ASIAIOSFODNN7EXAMPLE", true},                                 // AWS temporary key id
    {"CLOUD", "id=AKIAIOSFODNN7EXAMPLE;region=eu-west-1", true},
    {"GL", "glpat-Ab12Cd34Ef56Gh78Ij90", true},                              // GitLab
    {"URL", "https://api.example.com/v1/models?api_key=abc123", true},
    {"URL", "https://api.example.com/v1/models?page=2&token=abc123", true},
    {"URL", "https://graph.example.com/me?access_token=EAAB123", true},
    {"URL", "https://api.example.com/q?apikey=abc123", true},
    {"URL", "https://maps.googleapis.com/maps/api/js?key=abc123&callback=init", true},
    {"URL", "https://api.example.com/q?secret=abc123", true},
    {"URL", "https://api.example.com/q?user=bob&password=hunter2", true},
    {"URL", "https://acct.blob.core.windows.net/c/b.bin?sv=2022-11-02&se=2030-01-01&sig=abc%3D", true},
    {"URL", "https://example.com/share?signature=abc123", true},
    {"DB_PWD", "x", true},
    {"MY_CREDS", "x", true},
    {"BEARER", "x", true},
    {"SLACK_BEARER_HEADER", "x", true},
    {"dbpwd", "x", true},
    // further distinctive formats
    {"MAPS", "AIzaSyA-1234567890abcdefghijklmnopqrstu", true},                 // Google API key
    {"GIT_CREDS_FILE", "/x", true},                                            // contains CRED
    {"ID", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     true},                                                                    // JWT
    {"ID", "Authorization: Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.", true},  // unsigned JWT
    {"KEYFILE_DATA", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", true},
    {"PEM", "-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA", true},
    {"PEM", "-----BEGIN ENCRYPTED PRIVATE KEY-----", true},
    {"PEM", "-----BEGIN PGP PRIVATE KEY BLOCK-----", true},
    {"NPMRC", "//registry.npmjs.org/:_authToken=npm_AbCdEf0123456789AbCdEf0123456789AbCd", true},
    {"UPLOAD", "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTBhYgACKlsz", true},
    {"LLM", "gsk_AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789AbCd", true},  // Groq
    {"LLM", "pplx-AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789", true},     // Perplexity
    {"LLM", "r8_AbCdEf0123456789AbCdEf0123456789AbCdE", true},                  // Replicate
    {"MAIL", "SG.AbCdEf0123456789AbCdEf.AbCdEf0123456789AbCdEf0123456789AbCdEf01234", true},  // SendGrid
    {"DO", "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true},
    {"SHOP", "shpat_0123456789abcdef0123456789abcdef", true},
    {"HOOKSIG", "whsec_AbCdEf0123456789AbCdEf0123456789", true},              // Stripe webhook
    {"GL", "gldt-Ab12Cd34Ef56Gh78Ij90", true},
    {"GL", "glrt-Ab12Cd34Ef56Gh78Ij90", true},
    {"AGE", "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS", true},
    {"CB", "https://app.example.com/cb#access_token=abc123&state=x", true},     // fragment
    {"URL", "https://bucket.s3.amazonaws.com/o?X-Amz-Credential=AKIA%2F&X-Amz-Signature=ab12", true},
    {"URL", "https://login.example.com/t?client_id=a&client_secret=b", true},
    {"URL", "http://localhost:8080/x?Api%5FKey=abc123", true},                 // percent-encoded name
    {"AWS_EC2_METADATA_DISABLED", "ghp_0123456789abcdefABCDEF0123456789abcd", true},  // kept name, secret value
    // look-alikes that must get through
    {"PATH", "/usr/local/bin:/usr/bin:/bin", false},
    {"LANG", "en_US.UTF-8", false},
    {"HOME", "/home/x", false},
    // found by the second adversarial run
    {"ENCRYPTION_KEYS", "k1,k2", true},
    {"STRIPE_SIGNATURE", "t=1,v1=abc", true},
    {"HMAC_SALT", "x", true},
    {"WALLET_MNEMONIC", "abandon ability able", true},
    {"MNEMONIC", "abandon ability able", true},
    {"KEYBOARD_LAYOUT", "us", false},
    {"EDITOR", "vim", false},
    {"SHELL", "/bin/bash", false},
    {"TERM", "xterm-256color", false},
    {"USER", "root", false},
    {"DISPLAY", ":0", false},
    {"TZ", "Europe/Berlin", false},
    {"PWD", "/home/x/ws", false},
    {"OLDPWD", "/home/x", false},
    {"PKG", "sk-learn", false},
    {"PKGS", "scikit-learn sk-learn-extra hf_transfer npm_config_cache", false},
    {"PROJECT", "sk-some-long-lowercase-project-name", false},  // no random mix
    {"CACHE", "hf_home_dir", false},
    {"HF_HUB_ENABLE_HF_TRANSFER", "1", false},
    {"TASK", "task-AbCdEf0123456789AbCdEf0123", false},      // sk- not at a word boundary
    {"NOTE", "ghp_short", false},
    {"NOTE", "xoxb-test", false},
    {"NOTE", "AKIASHORT", false},
    {"NOTE", "hf_AbCdEfGh", false},                          // too short
    {"NOTE", "eyJhbGciOiJIUzI1NiJ9", false},                  // base64 JSON, no dots
    {"CERT", "-----BEGIN CERTIFICATE-----", false},
    {"PUB", "-----BEGIN PUBLIC KEY-----", false},
    {"URL", "https://pypi.org/simple/?page=2&sort=asc#top", false},
    {"URL", "https://example.org/search?q=token&lang=en", false},  // "token" as a value
    {"URL", "https://example.org/posts?author=bob", false},
    {"URL", "https://example.org/q?token=", false},                // empty value
    {"URL", "https://example.org/docs/api_key.html", false},       // no query
    {"LS_COLORS", "rs=0:di=01;34:ln=01;36:*.tar=01;31", false},
    {"PYTHONPATH", "/opt/lib/python3.12/site-packages", false},
};

TEST(EnvScrubPatterns, SecretsTable) {
  EXPECT_GE(std::size(k_rows), 40u);
  for (const auto& r : k_rows) {
    EXPECT_EQ(is_secret_variable(r.name, r.value), r.secret) << r.name << "=" << r.value;
  }
}

TEST(EnvScrubPatterns, BypassEnvDropsAPlantedTokenValueAndKeepsHarmlessOnes) {
  const auto env = bypass_env(
      {"PATH=/usr/bin", "NOTES=deploy with ghp_0123456789abcdefABCDEF0123456789abcd", "EDITOR=vim", "PKG=sk-learn"},
      "/ws");
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "EDITOR=vim", "PKG=sk-learn", "HOME=/ws", "TMPDIR=/ws",
                                           "TEMP=/ws", "TMP=/ws", "MPLBACKEND=Agg"}));
}

// Repeated near-matches, 128 KiB each: decided correctly (the scan is linear, so this takes
// milliseconds; a quadratic scan would run into ctest's timeout).
TEST(EnvScrubPatterns, HostileValuesOf128KiBAreNotMistakenForSecrets) {
  const std::size_t size = 128 * 1024;
  const std::vector<std::string> units = {"sk-", ".eyJ", "eyJ-", "://", "?a", "?key", "#a=", "-----BEGIN ", "%", "AKIA-", "a&"};
  for (const auto& u : units) {
    std::string v;
    while (v.size() < size) v += u;
    EXPECT_FALSE(is_secret_variable("HOSTILE", v)) << u;
  }
}

}  // namespace
}  // namespace warden::sandbox
