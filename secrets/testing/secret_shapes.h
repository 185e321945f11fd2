// Test support (header-only, for *_test.cpp files only): the secret shapes of issue 22 as table
// rows, shared by the detector's own tests (secrets/) and the audit log's (store/): the 20
// command and code shapes redaction must hide (8 it caught before, 12 it missed) and the 10
// environment values the scrubber must drop.
// The secrets are made up and built at run time, so no file holds a literal that looks like a
// live credential; only their shapes are real.
#pragma once

#include <string>
#include <vector>

namespace warden::secrets::testing {

struct shape_row {
  const char* what;
  std::string in;      ///< as a tool call's command or code
  std::string out;     ///< what redaction leaves
  std::string secret;  ///< a part of `in` that must not survive
};

inline const std::string k_pw = std::string("Hunter2") + "Secret";
inline const std::string k_github_token = "ghp_" + std::string("aB3dE5gH7jK9mN1pQ3sT5vX7zB9cD1fG3hJ5");
inline const std::string k_jwt_token =
    "eyJhbGciOiJIUzI1NiJ9." + std::string("eyJzdWIiOiIxMjM0NTY3ODkwIn0.") + "dBjftJeZ4CVPmB92K27uhbUJU1p1r";
inline const std::string k_telegram_token = "123456789:" + std::string("AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw");
inline const std::string k_twilio_sid = "AC" + std::string("0123456789abcdef0123456789abcdef");
inline const std::string k_twilio_token = "f3b1c2d4e5f60718" + std::string("293a4b5c6d7e8f90");
inline const std::string k_mailgun_key = "key-" + std::string("3ax6xnjp29jd6fds4gc373sgvjxteol0");
inline const std::string k_hex32_key = "0123456789abcdef" + std::string("0123456789abcdef");
inline const std::string k_aws_secret = "wJalrXUtnFEMI/K7MDENG/" + std::string("bPxRfiCYEXAMPLEKEY");
/// "alice:Hunter2Secret" in base64.
inline const std::string k_basic = "YWxpY2U6SHVudGVy" + std::string("MlNlY3JldA==");

/// The 20 redaction shapes: each `in` is redacted to `out`.
inline std::vector<shape_row> twenty_shapes() {
  const std::string& pw = k_pw;
  return {
      // the 8 shapes caught before issue 22
      {"env assignment", "export OPENAI_API_KEY=" + pw + " && python x.py",
       "export OPENAI_API_KEY=[REDACTED] && python x.py", pw},
      {"bearer header", "curl -H 'Authorization: Bearer " + pw + "' https://x.io",
       "curl -H 'Authorization: Bearer [REDACTED]' https://x.io", pw},
      {"URL password", "psql postgres://app:" + pw + "@db:5432/x", "psql postgres://app:[REDACTED]@db:5432/x", pw},
      {"mysql -pPASS", "mysql -uroot -p" + pw + " db", "mysql -uroot -p[REDACTED] db", pw},
      {"token in a clone URL", "git clone https://x:" + k_github_token + "@github.com/o/r",
       "git clone https://x:[REDACTED]@github.com/o/r", k_github_token},
      {"--password flag", "login --password " + pw + " --user bob", "login --password [REDACTED] --user bob", pw},
      {"JWT in a header", "curl -H 'X-Auth-Info: " + k_jwt_token + "' https://x.io",
       "curl -H 'X-Auth-Info: [REDACTED]' https://x.io", k_jwt_token},
      {"private key block", "cat > k <<'EOF'\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + pw +
                                "\n-----END RSA PRIVATE KEY-----\nEOF\nchmod 600 k",
       "cat > k <<'EOF'\n-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\nEOF\nchmod 600 k", pw},
      // the 12 shapes issue 22 found missed
      {"aws configure set", "aws configure set aws_secret_access_key " + k_aws_secret,
       "aws configure set aws_secret_access_key [REDACTED]", k_aws_secret},
      {"Telegram bot token in a URL path",
       "curl -s https://api.telegram.org/bot" + k_telegram_token + "/sendMessage -d chat_id=1 -d text=hi",
       "curl -s https://api.telegram.org/bot[REDACTED]/sendMessage -d chat_id=1 -d text=hi", k_telegram_token},
      {"redis-cli -a", "redis-cli -h db -a " + pw + " ping", "redis-cli -h db -a [REDACTED] ping", pw},
      {"smbclient -U user%pw", "smbclient //srv/share -U alice%" + pw + " -c ls",
       "smbclient //srv/share -U alice%[REDACTED] -c ls", pw},
      {"echo pw | sudo -S", "echo " + pw + " | sudo -S apt-get update", "echo [REDACTED] | sudo -S apt-get update", pw},
      {".pgpass line", "echo 'db.example.com:5432:app:alice:" + pw + "' >> ~/.pgpass && chmod 600 ~/.pgpass",
       "echo 'db.example.com:5432:app:alice:[REDACTED]' >> ~/.pgpass && chmod 600 ~/.pgpass", pw},
      {"ssh-keygen -N", "ssh-keygen -t ed25519 -N '" + pw + "' -f id_ed25519",
       "ssh-keygen -t ed25519 -N '[REDACTED]' -f id_ed25519", pw},
      {"az login -p", "az login -u alice@example.com -p " + pw, "az login -u alice@example.com -p [REDACTED]", pw},
      {"INI password = x", "cat > app.ini <<EOF\n[db]\nhost = db.example.com\npassword = " + pw + "\nEOF",
       "cat > app.ini <<EOF\n[db]\nhost = db.example.com\npassword = [REDACTED]\nEOF", pw},
      {"python auth tuple", "requests.get(url, auth=('alice', '" + pw + "'))",
       "requests.get(url, auth=('alice', '[REDACTED]'))", pw},
      {"Twilio Client(sid, token)", "client = Client('" + k_twilio_sid + "', '" + k_twilio_token + "')",
       "client = Client('" + k_twilio_sid + "', '[REDACTED]')", k_twilio_token},
      {"environment fallback", "password = os.environ.get('DB_PASSWORD') or '" + pw + "'",
       "password = os.environ.get('DB_PASSWORD') or '[REDACTED]'", pw},
  };
}

struct env_row {
  const char* what;
  std::string name, value;
};

/// The 10 environment values the scrubber must drop (names that say nothing): 8 shapes issue
/// 22 found getting through, and 2 it caught already.
inline std::vector<env_row> ten_env_shapes() {
  return {
      {"JSON with a password", "APP_CONFIG", R"({"user":"app","password":")" + k_pw + "\"}"},
      {"Basic credentials", "HTTP_HEADER", "Basic " + k_basic},
      {"Telegram bot URL", "NOTIFY_URL", "https://api.telegram.org/bot" + k_telegram_token + "/sendMessage"},
      {"Mailgun key", "MG", k_mailgun_key},
      {"a bare 32-hex key", "DD", k_hex32_key},
      {"LDAP bind flags", "LDAP_OPTS", "-x -D cn=admin,dc=example,dc=org -w " + k_pw},
      {"LDAP bindpw line", "NSLCD", "binddn cn=admin,dc=example,dc=org\nbindpw " + k_pw},
      {"Twilio account:token", "TW", k_twilio_sid + ":" + k_twilio_token},
      {"URL password (caught before)", "DATABASE_URL_X", "postgres://app:" + k_pw + "@db/x"},
      {"token format (caught before)", "NOTE", "deploy with " + k_github_token},
  };
}

}  // namespace warden::secrets::testing
