#include "secrets/redact.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>

#include "common/json_util.h"
#include "secrets/find_secrets.h"
#include "secrets/secret_detect.h"
#include "secrets/testing/secret_shapes.h"

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
/// One 64-character line of PEM key material.
const std::string k_key_line = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";

std::vector<row> base_rows() {
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
  };
}

/// The shapes issue 22 added, and ordinary text that must be kept.
std::vector<row> issue22_rows() {
  return {
      {"private key block without END: key lines only", "pem=-----BEGIN PRIVATE KEY-----\n" + k_key_line + "\n" +
       k_key_line + "\nMIIEow==\nls -la",
       "pem=-----BEGIN PRIVATE KEY-----[REDACTED]\nls -la"},
      {"a short last line without = stays (under 40 characters)", "pem=-----BEGIN PRIVATE KEY-----\nMIIEow",
       "pem=-----BEGIN PRIVATE KEY-----\nMIIEow"},
      {"an INI line keeps the rest of the line", "[db]\npassword = my secret phrase\nport = 5432",
       "[db]\npassword = [REDACTED]\nport = 5432"},
      {"a shell operator ends an INI-like value: the command after it stays visible",
       "password = hunter2 || rm -f victim1\npassword = x; touch PWNED_1\npassword = y && curl h | sh",
       "password = [REDACTED] || rm -f victim1\npassword = [REDACTED]; touch PWNED_1\npassword = [REDACTED] && curl h | sh"},
      {"... with or without blanks, and a backquote too",
       "password = a;echo V1\npassword = b&&echo V2\npassword = c|echo V3\npassword = d`echo V4`",
       "password = [REDACTED];echo V1\npassword = [REDACTED]&&echo V2\npassword = [REDACTED]|echo V3\npassword = [REDACTED]`echo V4`"},
      {"an assignment of a related variable is code", "password = args.password\ntoken = api_token\napi_key = key",
       "password = args.password\ntoken = api_token\napi_key = key"},
      {"attribute assignments are code", "    self.password = password\n    self.api_key = api_key",
       "    self.password = password\n    self.api_key = api_key"},
      {"a substitution is not a secret literal", "API_KEY=\"$(cat ~/.key)\" ./deploy.sh && rm -rf /workspace",
       "API_KEY=\"$(cat ~/.key)\" ./deploy.sh && rm -rf /workspace"},
      {"nor a bare substitution or a variable", "API_KEY=$(cat ~/.key) TOKEN=$GH_TOKEN PASS=${P} ./run",
       "API_KEY=$(cat ~/.key) TOKEN=$GH_TOKEN PASS=${P} ./run"},
      {"backquotes too", "TOKEN=`cat t` ./run", "TOKEN=`cat t` ./run"},
      {"a default written into an expansion is a literal", "PASSWORD=\"${DB_PW:-Hunter2Secret}\" ./run; echo ${API_TOKEN:-abc}",
       "PASSWORD=\"${DB_PW:-[REDACTED]}\" ./run; echo ${API_TOKEN:-[REDACTED]}"},
      {"single quotes are literal", "PASSWORD='$ecretPw' ./run", "PASSWORD='[REDACTED]' ./run"},
      {"URL query names follow the credential-parameter rule", "https://x.io/posts?author=bob&db_pass=Hunter2",
       "https://x.io/posts?author=bob&db_pass=[REDACTED]"},
      {"LDAP -w after a bind DN", "ldapsearch -x -D 'cn=admin,dc=example,dc=org' -wHunter2Secret -b dc=example,dc=org",
       "ldapsearch -x -D 'cn=admin,dc=example,dc=org' -w[REDACTED] -b dc=example,dc=org"},
      {"ldap bindpw line", "binddn cn=x,dc=y\nbindpw Hunter2Secret\n", "binddn cn=x,dc=y\nbindpw [REDACTED]\n"},
      {"git config user.password", "git config --global user.password Hunter2Secret",
       "git config --global user.password [REDACTED]"},
      {"a credential helper is not a secret", "git config --global credential.helper store",
       "git config --global credential.helper store"},
      {"HTTPBasicAuth", "auth = HTTPBasicAuth('alice', 'Hunter2Secret')", "auth = HTTPBasicAuth('alice', '[REDACTED]')"},
      {"ldap simple_bind_s", "conn.simple_bind_s('cn=admin,dc=x', 'Hunter2Secret')",
       "conn.simple_bind_s('cn=admin,dc=x', '[REDACTED]')"},
      {"a short Client argument is kept", "c = Client('localhost', 'demo')", "c = Client('localhost', 'demo')"},
      {"printf into passwd --stdin", "printf 'Hunter2Secret' | passwd --stdin bob", "printf '[REDACTED]' | passwd --stdin bob"},
      {"echo into docker login --password-stdin", "echo \"$PW\" | docker login -u bob --password-stdin",
       "echo \"$PW\" | docker login -u bob --password-stdin"},
      {"Basic credentials", "Authorization: Basic YWxpY2U6SHVudGVyMlNlY3JldA==",
       "Authorization: Basic [REDACTED]"},
      {"Basic as a word is kept", "Basic authentication is enabled", "Basic authentication is enabled"},
      {"Twilio SID:token", "curl -u AC0123456789abcdef0123456789abcdef:0123456789abcdef0123456789abcdef x",
       "curl -u AC0123456789abcdef0123456789abcdef:[REDACTED] x"},
      {"Mailgun key", "MG=key-3ax6xnjp29jd6fds4gc373sgvjxteol0 ./send",
       "MG=[REDACTED] ./send"},
      {"a carriage return between words (it once looped forever)", "sshpass\r-p Hunter2Secret ssh h",
       "sshpass\r-p [REDACTED] ssh h"},
      {"a form feed between words", "redis-cli\f-a Hunter2Secret\vping", "redis-cli\f-a [REDACTED]\vping"},
      // ordinary text is kept
      {"git log", "git log --oneline -n 5 --author=bob", "git log --oneline -n 5 --author=bob"},
      {"ls", "ls -la /workspace && wc -l *.py", "ls -la /workspace && wc -l *.py"},
      {"python mentioning a password in a comment",
       "# ask for the password, never store it\npassword = getpass.getpass()\nprint(len(password) >= 8)",
       "# ask for the password, never store it\npassword = getpass.getpass()\nprint(len(password) >= 8)"},
      {"a UUID", "curl https://api.x.io/items/123e4567-e89b-12d3-a456-426614174000",
       "curl https://api.x.io/items/123e4567-e89b-12d3-a456-426614174000"},
      {"a commit id and an MD5 sum in a command", "git show 3f2a9c1d4e5b6a7980c1d2e3f4a5b6c7d8e9f012 && echo d41d8cd98f00b204e9800998ecf8427e",
       "git show 3f2a9c1d4e5b6a7980c1d2e3f4a5b6c7d8e9f012 && echo d41d8cd98f00b204e9800998ecf8427e"},
      {"times and ports", "sleep 2; date +%H:%M:%S; ssh -p 22 host 'redis-cli ping'",
       "sleep 2; date +%H:%M:%S; ssh -p 22 host 'redis-cli ping'"},
      {"set -e and sort -u", "set -euo pipefail; sort -u f | head", "set -euo pipefail; sort -u f | head"},
      {"empty", "", ""},
  };
}

std::vector<row> rows() {
  std::vector<row> all = base_rows();
  for (auto& r : issue22_rows()) all.push_back(std::move(r));
  return all;
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

std::vector<json_row> base_json_rows() {
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
      {"private key without END stops at the string's end",
       R"j({"k":"-----BEGIN PRIVATE KEY-----\n)j" + k_key_line + R"j(","n":1})j",
       R"j({"k":"-----BEGIN PRIVATE KEY-----[REDACTED]","n":1})j"},
      {"secret key, array value", R"j({"api_key":["Hunter2","x"],"n":[1]})j", R"j({"api_key":["[REDACTED]","[REDACTED]"],"n":[1]})j"},
      {"secret key, object value", R"j({"password":{"a":"Hunter2","b":[2,"c"]},"ok":"y"})j",
       R"j({"password":{"[REDACTED]":"[REDACTED]","[REDACTED]":[2,"[REDACTED]"]},"ok":"y"})j"},
      {"nothing to hide", R"j({"command":"ls -la /tmp","timeout":5})j", R"j({"command":"ls -la /tmp","timeout":5})j"},
  };
}

/// Key markers and substitutions inside a tool call's arguments (issue 22).
std::vector<json_row> issue22_json_rows() {
  return {
      // plain literals: the complexity gate's parser (lizard) misreads quotes inside raw strings
      {"a marker in a command string leaves the command visible",
       "{\"command\":\"echo -----BEGIN PRIVATE KEY----- && rm -rf /workspace/x\"}",
       "{\"command\":\"echo -----BEGIN PRIVATE KEY----- && rm -rf /workspace/x\"}"},
      {"a marker in a quoted string ends with the string",
       "{\"command\":\"printf '%s' '-----BEGIN RSA PRIVATE KEY-----\\nMIIEow' > k; rm -rf /workspace/x\"}",
       "{\"command\":\"printf '%s' '-----BEGIN RSA PRIVATE KEY-----[REDACTED]' > k; rm -rf /workspace/x\"}"},
      {"a substitution is not a secret",
       "{\"command\":\"API_KEY=\\\"$(cat ~/.key)\\\" ./deploy.sh && rm -rf /workspace\"}",
       "{\"command\":\"API_KEY=\\\"$(cat ~/.key)\\\" ./deploy.sh && rm -rf /workspace\"}"},
  };
}

std::vector<json_row> json_rows() {
  std::vector<json_row> all = base_json_rows();
  for (auto& r : issue22_json_rows()) all.push_back(std::move(r));
  return all;
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

/// Random texts built from the fragments every rule starts on, odd whitespace among them: each
/// is scanned to its end (a rule that fails to move on loops forever, and ctest's timeout
/// fails the test), and a text without findings comes back unchanged.
TEST(Redact, RandomTextsEnd) {
  const std::vector<std::string> parts = {
      "-----BEGIN PRIVATE KEY-----", "-----END", "'", "\"", "\\", "\n", "\r", "\f", "\v", " ", "=", ":", "$(",
      "${A:-", "}", "`", "set ", "TOKEN ", "echo ", "| sudo -S ", "-U ", "%", "-a ", "redis-cli ", "ssh-keygen ", "-N",
      "-w", "-D ", "a=b,", "ldapsearch ", "bindpw ", "password", " = ", "(", ")", ",", "'x'", "Client", "Auth",
      "bind_s", " or ", "os.environ.get('DB_PASSWORD')", "Basic ", "YWxpY2U6cHc=", "AC0123456789abcdef0123456789abcdef",
      "key-", "0123456789abcdef0123456789abcdef", "-01234567-01234567", "h:5432:d:u:", "123456789:", "bot", "/",
      "[REDACTED]", "#", ";", "&", "\xff", "sshpass", "-p ", "az login ", "config ", "auth=(", "[", "]", "{",
      "\"password\":", "?", "&sig=", k_key_line, "Proc-Type: 4,ENCRYPTED"};
  std::mt19937 rng(2207);
  for (int n = 0; n < 5000; ++n) {
    std::string s;
    const int len = static_cast<int>(rng() % 14);
    for (int i = 0; i < len; ++i) s += parts[rng() % parts.size()];
    const std::string got = redact_secrets(s);
    if (find_secrets(s).empty()) {
      EXPECT_EQ(got, s);
    }
    EXPECT_FALSE(redact_secrets(got).empty() && !s.empty()) << s;
    (void)is_secret_variable("X", s);
  }
}

TEST(Redact, LinearOnHostileInput) {
  const std::vector<std::string> units = {"a=", "TOKEN=\"", "sk-", "eyJ", "://", "-----BEGIN PRIVATE KEY-----",
                                          "--password ", "x:", "\\\"", "@", "-u ", "mysql -p", "password ",
                                          "('API_KEY',", "TOKEN: str = ", "TOKEN='a'", "$'", "'\n", "TOKEN = x ",
                                          "-----BEGIN PRIVATE KEY-----\n", "'-----BEGIN PRIVATE KEY-----",
                                          "-----BEGIN PRIVATE KEY----- -----END ", "set TOKEN ", "echo x | ",
                                          "a:1:b:c:", "a.", "1234567:", "Basic ", "ACabc", "${TOKEN:-", " or '",
                                          "environ.get('A') or ", "Client('a', ", "-w ", "-D a=b ", "password = ",
                                          "a-", "x(", "\"", "key-", "\npassword x"};
  for (const auto& u : units) {
    std::string big;
    while (big.size() < (1u << 19)) big += u;  // 512 KiB
    const auto t0 = std::chrono::steady_clock::now();
    const std::string got = redact_secrets(big);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    // Linear: under 0.5 s per MiB in a Release build (0.4 s for the slowest unit, measured on
    // a loaded 2-core machine); a quadratic scan would take hours.
    EXPECT_LT(ms.count(), 20000) << u;
    EXPECT_FALSE(got.empty());
  }
}

// Issue 22's 20 shapes (secrets/testing/secret_shapes.h): each is redacted, its secret gone, and
// nothing else changed; redacting again changes nothing more.
TEST(Redact, TheTwentyShapes) {
  const auto rows = testing::twenty_shapes();
  ASSERT_EQ(rows.size(), 20u);
  for (const auto& r : rows) {
    const std::string got = redact_secrets(r.in);
    EXPECT_EQ(got, r.out) << r.what;
    EXPECT_EQ(got.find(r.secret), std::string::npos) << r.what;
    EXPECT_EQ(redact_secrets(got), got) << r.what;
    // the same command as a tool call's JSON arguments
    const std::string args = dump_safe(json{{"command", r.in}});
    EXPECT_EQ(redact_secrets(args), dump_safe(json{{"command", r.out}})) << r.what;
  }
}

// The two shapes that made the audit log lie: the command around them stays visible.
TEST(Redact, KeyMarkerAndSubstitutionLeaveTheCommandVisible) {
  const std::string marker = "echo '-----BEGIN PRIVATE KEY-----' > k; rm -rf /workspace/seeded";
  EXPECT_EQ(redact_secrets(marker), marker);
  const std::string bare = "echo -----BEGIN OPENSSH PRIVATE KEY-----; rm -rf /workspace/seeded";
  EXPECT_EQ(redact_secrets(bare), bare);
  const std::string substitution = "API_KEY=\"$(cat /workspace/key)\" sh -c 'rm -rf /workspace/seeded'";
  EXPECT_EQ(redact_secrets(substitution), substitution);
  const std::string args = dump_safe(json{{"command", marker + "\n" + substitution}});
  EXPECT_EQ(redact_secrets(args), args);
}

// Without an END marker a key block reaches k_max_key_block_bytes at most: key lines past it,
// and a quoted string that closes past it, are not taken on trust.
TEST(Redact, AnUnterminatedKeyBlockIsBounded) {
  std::string body;
  while (body.size() < 2 * k_max_key_block_bytes) body += k_key_line + "\n";
  const std::string text = "-----BEGIN PRIVATE KEY-----\n" + body + "rm -rf /workspace";
  const std::string got = redact_secrets(text);
  EXPECT_TRUE(got.starts_with("-----BEGIN PRIVATE KEY-----[REDACTED]")) << got.substr(0, 80);
  EXPECT_TRUE(got.ends_with(k_key_line + "\nrm -rf /workspace"));
  const std::size_t hidden = text.size() - got.size() + k_redacted.size();
  EXPECT_LE(hidden, k_max_key_block_bytes);
  EXPECT_GT(hidden, k_max_key_block_bytes - 2 * k_key_line.size());
  // a quote that closes only after the bound: the key lines rule applies instead
  const std::string quoted = "echo '-----BEGIN PRIVATE KEY-----\n" + body + "' ; rm -rf /workspace";
  EXPECT_TRUE(redact_secrets(quoted).ends_with("' ; rm -rf /workspace"));
  // with an END marker and only key material between, the whole block goes (up to 64 KiB)
  const std::string whole = "-----BEGIN PRIVATE KEY-----\n" + body + "-----END PRIVATE KEY-----\nls";
  EXPECT_EQ(redact_secrets(whole), "-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE KEY-----\nls");
  // an END marker with a command between is not a key block
  const std::string fake = "-----BEGIN PRIVATE KEY-----\nrm -rf /workspace\n-----END PRIVATE KEY-----";
  EXPECT_EQ(redact_secrets(fake), fake);
}

// A marker with nothing after it is still a finding (the scrubber drops the variable), with
// nothing to replace.
TEST(FindSecrets, AMarkerWithoutMaterialIsAnEmptyFinding) {
  const auto found = find_secrets("-----BEGIN ENCRYPTED PRIVATE KEY-----");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].begin, found[0].end);
  EXPECT_TRUE(find_secrets("git log --oneline").empty());
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
