#include "secrets/redact.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>

#include "common/json_util.h"
#include "secrets/secret_detect.h"

namespace warden::secrets {
namespace {

using namespace std::string_literals;

struct row {
  const char* what;
  std::string in, out;
};

// Tokens built at run time, so this file holds no literal that looks like a live credential.
const std::string k_openai = "sk-proj-" + std::string("Ab3dE5gH7jK9mN1pQ3sT5vX7zB9");
const std::string k_github = "ghp_" + std::string("aB3dE5gH7jK9mN1pQ3sT5vX7zB9cD1fG3hJ5");
const std::string k_aws = "AKIA" + std::string("IOSFODNN7EXAMPLE");
const std::string k_jwt = "eyJhbGciOiJIUzI1NiJ9." + std::string("eyJzdWIiOiIxMjM0NTY3ODkwIn0.") + "dBjftJeZ4CVPmB92K27uhbUJU1p1r";
const std::string k_hf = "hf_" + std::string("aB3dE5gH7jK9mN1pQ3sT5vX7zB9cD1fG3h");

std::vector<row> rows() {
  return {
      // 1. values of secret names
      {"env assignment in a command", "export OPENAI_API_KEY=abc123 && python x.py",
       "export OPENAI_API_KEY=[REDACTED] && python x.py"},
      {"inline env before a program", "DB_PASSWORD=hunter2 ./migrate --up", "DB_PASSWORD=[REDACTED] ./migrate --up"},
      {"quoted value with a space", "DB_PASSWORD=\"a b\" ./run", "DB_PASSWORD=\"[REDACTED]\" ./run"},
      {"single-quoted value", "export GH_TOKEN='x y z'; gh pr list", "export GH_TOKEN='[REDACTED]'; gh pr list"},
      {"value ends at a pipe", "STRIPE_KEY=abc|grep x", "STRIPE_KEY=[REDACTED]|grep x"},
      {"--name=value", "deploy --api-key=xyz123 --region eu", "deploy --api-key=[REDACTED] --region eu"},
      {"--name value", "login --password hunter2 --user bob", "login --password [REDACTED] --user bob"},
      {"--name followed by another flag", "run --token --verbose", "run --token --verbose"},
      {"header with a bearer scheme", "curl -H 'Authorization: Bearer abc.def' https://x.io",
       "curl -H 'Authorization: Bearer [REDACTED]' https://x.io"},
      {"YAML-style pair", "password: hunter2\nuser: bob", "password: [REDACTED]\nuser: bob"},
      {"python keyword argument", "client = OpenAI(api_key=\"abc\", timeout=3)",
       "client = OpenAI(api_key=\"[REDACTED]\", timeout=3)"},
      {"python assignment with spaces", "secret = 'hunter2'\nx = 1", "secret = '[REDACTED]'\nx = 1"},
      {"python environ store", "os.environ[\"DB_PASS\"] = \"hunter2\"", "os.environ[\"DB_PASS\"] = \"[REDACTED]\""},
      {"python dict", "d = {'password': 'p w', 'user': 'bob'}", "d = {'password': '[REDACTED]', 'user': 'bob'}"},
      {"go short assignment", "token := \"abc\"", "token := \"[REDACTED]\""},
      {"php array arrow", "['password' => 'abc']", "['password' => '[REDACTED]']"},
      {"connection string Pwd", "Server=db;Uid=app;Pwd=s3cret;", "Server=db;Uid=app;Pwd=[REDACTED];"},
      {"URL credential parameter", "GET https://api.x.io/v?access_token=abc&page=2",
       "GET https://api.x.io/v?access_token=[REDACTED]&page=2"},
      {"signature parameter only in a query", "https://b.s3.io/o?sig=abc123 and sig=plain",
       "https://b.s3.io/o?sig=[REDACTED] and sig=plain"},
      {"risk reason quoting a URL password", "escapes the workspace with .. (https://admin:Hunter2Secret@example.com/a/../b)",
       "escapes the workspace with .. (https://admin:[REDACTED]@example.com/a/../b)"},
      {"python bytes literal", "secret = b'Hunter2Secret'", "secret = b'[REDACTED]'"},
      {"python f-string", "api_key = f'Hunter2{x}'", "api_key = f'[REDACTED]'"},
      {"python raw string", "API_KEY = r'Hunter2Secret'", "API_KEY = r'[REDACTED]'"},
      {"python raw bytes", "token = rb\"Hunter2Secret\"", "token = rb\"[REDACTED]\""},
      {"python annotation", "token: str = 'Hunter2SecretTok'\nx: int = 1", "token: str = '[REDACTED]'\nx: int = 1"},
      {"python optional annotation", "api_key: Optional[str] = \"Hunter2\"", "api_key: Optional[str] = \"[REDACTED]\""},
      {"adjacent shell quotes", "PASSWORD='a'\"Hunter2Secret\" ./run", "PASSWORD='[REDACTED]'\"[REDACTED]\" ./run"},
      {"quoted then bare shell word", "TOKEN='ab'Hunter2 ls", "TOKEN='[REDACTED]'[REDACTED] ls"},
      {"a bare value ends at an outer quote", "curl -H 'Authorization: Bearer abc' -H 'X: y' u",
       "curl -H 'Authorization: Bearer [REDACTED]' -H 'X: y' u"},
      {"bash ANSI-C quoting", "PASSWORD=$'Hunter2Secret' ./run", "PASSWORD=$'[REDACTED]' ./run"},
      {"bearer after a tab", "Authorization: Bearer\tHunter2Secret", "Authorization: Bearer\t[REDACTED]"},
      {"python dict, newline before the colon", "{'PASSWORD'\n: 'Hunter2Secret'}", "{'PASSWORD'\n: '[REDACTED]'}"},
      {"curl -u", "curl -u admin:Hunter2Secret https://x.io", "curl -u admin:[REDACTED] https://x.io"},
      {"curl --user quoted", "curl --user 'admin:Hunter2 Secret' x", "curl --user 'admin:[REDACTED]' x"},
      {"-u without a colon is kept", "git push -u origin main && sort -u f", "git push -u origin main && sort -u f"},
      {"mysql -pPASS", "mysql -uroot -pHunter2Secret db", "mysql -uroot -p[REDACTED] db"},
      {"mysql --password=", "mysqldump --password=Hunter2Secret db", "mysqldump --password=[REDACTED] db"},
      {"-p of other commands is kept", "mkdir -p /a && ssh -p22 h && docker run -p 8080:80 img",
       "mkdir -p /a && ssh -p22 h && docker run -p 8080:80 img"},
      {"sshpass -p", "sshpass -p Hunter2Secret ssh host", "sshpass -p [REDACTED] ssh host"},
      {"docker login -p", "docker login -u bob -p Hunter2Secret reg.io", "docker login -u bob -p [REDACTED] reg.io"},
      {"docker login --password", "docker login --password Hunter2Secret", "docker login --password [REDACTED]"},
      {"spaced env-style assignment", "PGPASSWORD = Hunter2Secret psql", "PGPASSWORD = [REDACTED] psql"},
      {"spaced code assignment is kept", "API_KEY = os.environ.get('X')", "API_KEY = os.environ.get('X')"},
      {"netrc on one line", "machine h.io login bob password Hunter2Secret", "machine h.io login bob password [REDACTED]"},
      {"netrc on its own line", "machine h.io\n  login bob\n  password Hunter2Secret\n",
       "machine h.io\n  login bob\n  password [REDACTED]\n"},
      {"password in prose is kept", "the password was rotated", "the password was rotated"},
      {"environ setdefault", "os.environ.setdefault('OPENAI_API_KEY','Hunter2Secret')",
       "os.environ.setdefault('OPENAI_API_KEY','[REDACTED]')"},
      {"environ store, single quotes", "os.environ['X_TOKEN'] = 'Hunter2Secret'", "os.environ['X_TOKEN'] = '[REDACTED]'"},
      {"a list of names is kept", "fields = ['api_key', 'name']", "fields = ['api_key', 'name']"},
      // 2. values flagged whatever their name
      {"OpenAI key in python code", "client = OpenAI(key=\"" + k_openai + "\")",
       "client = OpenAI(key=\"[REDACTED]\")"},
      {"GitHub token in a URL", "git clone https://x:" + k_github + "@github.com/o/r",
       "git clone https://x:[REDACTED]@github.com/o/r"},
      {"AWS key id alone", "echo " + k_aws + " > id", "echo [REDACTED] > id"},
      {"JWT in a header", "curl -H 'X-Auth-Info: " + k_jwt + "' https://x.io",
       "curl -H 'X-Auth-Info: [REDACTED]' https://x.io"},
      {"JWT in prose", "the token is " + k_jwt + ".", "the token is [REDACTED]."},
      {"Hugging Face token under an innocent name", "LOGIN=" + k_hf, "LOGIN=[REDACTED]"},
      {"URL password", "psql postgres://app:s3cret@db:5432/x", "psql postgres://app:[REDACTED]@db:5432/x"},
      {"DSN key as the URL user", "SENTRY=https://abcdef0123456789abcdef0123456789@o1.ingest.sentry.io/1",
       "SENTRY=https://[REDACTED]@o1.ingest.sentry.io/1"},
      {"webhook path", "post https://hooks.slack.com/services/T00/B00/XXYYZZ now",
       "post https://hooks.slack.com/[REDACTED] now"},
      {"webhook marker in the path", "https://discord.com/api/webhooks/123/abcDEF?wait=1",
       "https://discord.com/api/webhooks/[REDACTED]?wait=1"},
      {"private key block", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\nok",
       "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\nok"},
      {"private key block without END", "pem=-----BEGIN PRIVATE KEY-----\nMIIEow",
       "pem=-----BEGIN PRIVATE KEY-----[REDACTED]"},
      // harmless look-alikes are kept
      {"sk-learn", "pip install sk-learn scikit-learn hf_transfer", "pip install sk-learn scikit-learn hf_transfer"},
      {"the shell's PWD", "PWD=/x OLDPWD=/y ls", "PWD=/x OLDPWD=/y ls"},
      {"harmless names", "x=1 LANG=C.UTF-8 MAX_LEN=10 python -c 'print(1)'",
       "x=1 LANG=C.UTF-8 MAX_LEN=10 python -c 'print(1)'"},
      {"comparisons are not assignments", "if token == expected and key != other: pass",
       "if token == expected and key != other: pass"},
      {"reading a secret is not a secret", "token = os.environ[\"GITHUB_TOKEN\"]",
       "token = os.environ[\"GITHUB_TOKEN\"]"},
      {"URL without password", "git clone https://git@github.com/o/r.git https://x.io:8080/a",
       "git clone https://git@github.com/o/r.git https://x.io:8080/a"},
      {"a name merely containing a marker (accepted over-redaction)", "TOKENIZERS_PARALLELISM=false python t.py",
       "TOKENIZERS_PARALLELISM=[REDACTED] python t.py"},
      {"already redacted", "API_KEY=[REDACTED] x", "API_KEY=[REDACTED] x"},
      {"empty", "", ""},
  };
}

TEST(Redact, Rows) {
  for (const auto& r : rows()) EXPECT_EQ(redact_secrets(r.in), r.out) << r.what << "\n  in: " << r.in;
}

TEST(Redact, IsIdempotent) {
  for (const auto& r : rows()) EXPECT_EQ(redact_secrets(r.out), r.out) << r.what;
}

struct json_row {
  const char* what;
  std::string in, out;
};

std::vector<json_row> json_rows() {
  return {
      {"secret key, string value", R"j({"api_key": "abc", "n": 1})j", R"j({"api_key": "[REDACTED]", "n": 1})j"},
      {"secret key, number value kept", R"j({"api_key":1234,"pin_code":[1,2]})j", R"j({"api_key":1234,"pin_code":[1,2]})j"},
      {"nested env object", R"j({"env":{"OPENAI_API_KEY":"k1","HOME":"/h"}})j",
       R"j({"env":{"OPENAI_API_KEY":"[REDACTED]","HOME":"/h"}})j"},
      {"header object", R"j({"headers":{"Authorization":"Bearer abc"}})j",
       R"j({"headers":{"Authorization":"[REDACTED]"}})j"},
      {"escaped quotes around a shell value", R"j({"command":"export GH_TOKEN=\"ab c\" && gh pr list"})j",
       R"j({"command":"export GH_TOKEN=\"[REDACTED]\" && gh pr list"})j"},
      {"value ends before an escaped newline", R"j({"code":"PASSWORD=abc\nprint(1)"})j",
       R"j({"code":"PASSWORD=[REDACTED]\nprint(1)"})j"},
      {"python code with escaped quotes", R"j({"code":"import os\nos.environ[\"DB_PASS\"] = \"hunter2\"\nprint(1)"})j",
       R"j({"code":"import os\nos.environ[\"DB_PASS\"] = \"[REDACTED]\"\nprint(1)"})j"},
      {"doubly encoded JSON", R"j({"body":"{\"api_key\": \"abc\"}"})j", R"j({"body":"{\"api_key\": \"[REDACTED]\"}"})j"},
      {"unicode escapes as quotes", R"j({"command":"KEY=\u0022abc\u0022 run"})j",
       R"j({"command":"KEY=\u0022[REDACTED]\u0022 run"})j"},
      {"a single quote never spans strings", R"j({"a":"TOKEN='x","b":"y'"})j", R"j({"a":"TOKEN='[REDACTED]","b":"y'"})j"},
      {"non-ASCII kept", R"j({"cmd":"PASSWORD=héllo wörld"})j", R"j({"cmd":"PASSWORD=[REDACTED] wörld"})j"},
      {"token in a string", "{\"code\":\"requests.get(u, auth=('x', '" + k_github + "'))\"}",
       R"j({"code":"requests.get(u, auth=('x', '[REDACTED]'))"})j"},
      {"private key in a string", R"j({"k":"-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----"})j",
       R"j({"k":"-----BEGIN EC PRIVATE KEY-----[REDACTED]-----END EC PRIVATE KEY-----"})j"},
      {"private key without END stops at the string's end", R"j({"k":"-----BEGIN PRIVATE KEY-----\nMHcC","n":1})j",
       R"j({"k":"-----BEGIN PRIVATE KEY-----[REDACTED]","n":1})j"},
      {"secret key, array value", R"j({"api_key":["Hunter2","x"],"n":[1]})j", R"j({"api_key":["[REDACTED]","[REDACTED]"],"n":[1]})j"},
      {"secret key, object value", R"j({"password":{"a":"Hunter2","b":[2,"c"]},"ok":"y"})j",
       R"j({"password":{"[REDACTED]":"[REDACTED]","[REDACTED]":[2,"[REDACTED]"]},"ok":"y"})j"},
      {"nothing to hide", R"j({"command":"ls -la /tmp","timeout":5})j", R"j({"command":"ls -la /tmp","timeout":5})j"},
  };
}

TEST(Redact, JsonRowsStayValidJson) {
  for (const auto& r : json_rows()) {
    ASSERT_TRUE(parse_json(r.in).has_value()) << r.what;
    const std::string got = redact_secrets(r.in);
    EXPECT_EQ(got, r.out) << r.what;
    EXPECT_TRUE(parse_json(got).has_value()) << r.what << ": " << got;
    EXPECT_TRUE(is_valid_utf8(got)) << r.what;
  }
}

TEST(Redact, KeepsBytesThatAreNotSecrets) {
  const std::string odd = "{\"a\":\"x\0y\\\"z\"}\0 \xff\xfe end"s;
  EXPECT_EQ(redact_secrets(odd), odd);
  const std::string trailing = "KEY=\\";  // a lone backslash at the end
  EXPECT_EQ(redact_secrets(trailing), "KEY=[REDACTED]");
}

/// Random JSON strings built from fragments that stress the rules: whatever the mix, the result
/// parses and is valid UTF-8, and so does redacting it again.
TEST(Redact, RandomJsonStaysValid) {
  const std::vector<std::string> parts = {
      "TOKEN=", "API_KEY:", " ", "\"", "'", "`", "\\", "\n", "\\u00e9", "é", "\\u0022", "=", ":", "--password ",
      k_openai, k_jwt.substr(0, 30), "-----BEGIN PRIVATE KEY-----", "-----END", "https://", "u:p@h/", "hooks.",
      "/webhooks/", "?sig=", "&", ";", "Bearer ", "x", "€", "\t", "{\"api_key\": \"v\"}"};
  std::mt19937 rng(12345);
  for (int n = 0; n < 3000; ++n) {
    std::string s;
    const int len = static_cast<int>(rng() % 12);
    for (int i = 0; i < len; ++i) s += parts[rng() % parts.size()];
    const std::string doc = dump_safe(json{{"password", s}, {"command", s}, {"list", json::array({s, 1})}});
    const std::string got = redact_secrets(doc);
    ASSERT_TRUE(parse_json(got).has_value()) << doc << "\n->\n" << got;
    ASSERT_TRUE(is_valid_utf8(got)) << doc;
    ASSERT_TRUE(parse_json(redact_secrets(got)).has_value()) << got;
  }
}

TEST(Redact, LinearOnHostileInput) {
  const std::vector<std::string> units = {"a=", "TOKEN=\"", "sk-", "eyJ", "://", "-----BEGIN PRIVATE KEY-----",
                                          "--password ", "x:", "\\\"", "@", "-u ", "mysql -p", "password ",
                                          "('API_KEY',", "TOKEN: str = ", "TOKEN='a'", "$'", "'\n", "TOKEN = x "};
  for (const auto& u : units) {
    std::string big;
    while (big.size() < (1u << 20)) big += u;
    const auto t0 = std::chrono::steady_clock::now();
    const std::string got = redact_secrets(big);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    // Linear: under 0.5 s per MiB in a Release build; a quadratic scan would take hours.
    EXPECT_LT(ms.count(), 20000) << u;
    EXPECT_FALSE(got.empty());
  }
}

TEST(SecretDetect, FindSecretTokenSpans) {
  const std::string text = "a " + k_openai + " b " + k_jwt + " c sk-learn";
  auto t = find_secret_token(text, 0);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(text.substr(t->first, t->second - t->first), k_openai);
  t = find_secret_token(text, t->second);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(text.substr(t->first, t->second - t->first), k_jwt);
  EXPECT_FALSE(find_secret_token(text, t->second).has_value());
  EXPECT_FALSE(find_secret_token("x" + k_openai, 1).has_value());  // not at a word boundary
  const std::string pk = "x -----BEGIN OPENSSH PRIVATE KEY-----\nabc";
  auto b = find_private_key_block(pk, 0);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(pk.substr(b->first, b->second - b->first), "-----BEGIN OPENSSH PRIVATE KEY-----");
  EXPECT_TRUE(is_secret_name("db_password"));
  EXPECT_FALSE(is_secret_name("PWD"));
  EXPECT_TRUE(is_credential_parameter_name("X-Amz-Signature"));
  EXPECT_FALSE(is_credential_parameter_name("page"));
}

}  // namespace
}  // namespace warden::secrets
