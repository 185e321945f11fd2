// Named API keys (api_keys.h): the keys file's format and checks, the key ring's resolution, and
// the router handing each request's principal to its handler.
#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "common/testing/recording_writer.h"
#include "common/testing/temp_dir.h"
#include "http/api_keys.h"
#include "http/router.h"
#include "http/testing/route_once.h"

namespace warden::http {
namespace {

const std::string k_alice = "alice-key-0123456789abcdef";
const std::string k_bob = "bob-key-0123456789abcdef00";
const std::string k_ops = "ops-key-0123456789abcdef000";

std::string good_file() {
  return "# name role key\n"
         "alice user " + k_alice + "\n"
         "\n"
         "  bob\tuser\t" + k_bob + "\r\n"
         "   # an indented comment\n"
         "ops admin " + k_ops;  // no final newline
}

TEST(ApiKeysFile, ParsesNamesRolesAndKeysSkippingCommentsAndBlankLines) {
  auto keys = parse_api_keys(good_file(), "keys.txt");
  ASSERT_TRUE(keys) << keys.error().message;
  ASSERT_EQ(keys->size(), 3u);
  EXPECT_EQ((*keys)[0].name, "alice");
  EXPECT_EQ((*keys)[0].role, key_role::user);
  EXPECT_EQ((*keys)[0].key, k_alice);
  EXPECT_EQ((*keys)[1].name, "bob");
  EXPECT_EQ((*keys)[1].key, k_bob);  // tabs separate; the "\r" of a CRLF line is not part of the key
  EXPECT_EQ((*keys)[2].name, "ops");
  EXPECT_EQ((*keys)[2].role, key_role::admin);
}

struct bad_case {
  const char* what;
  std::string text;
  std::string says;  ///< a part of the message
};

TEST(ApiKeysFile, EachBadEntryStopsWithItsLineAndWhatIsWrong) {
  const std::string key = "0123456789abcdef0123";
  const bad_case cases[] = {
      {"two fields", "alice user\n", "line 1: expected three fields"},
      {"four fields", "alice user " + key + " extra\n", "found 4"},
      {"bad name", "# c\nal.ice user " + key + "\n", "line 2: the name must be"},
      {"long name", std::string(65, 'a') + " user " + key + "\n", "the name must be"},
      {"unknown role", "alice root " + key + "\n", "the role of 'alice' must be 'user' or 'admin'"},
      {"short key", "alice user short\n", "the key of 'alice' must be 16 to 512"},
      {"non-ASCII key", "alice user " + key + "\xc3\xa9\n", "printable ASCII"},
      {"duplicate name", "alice user " + key + "\nalice admin " + key + "XX\n", "line 2: the name 'alice' is used twice"},
      {"duplicate key", "alice user " + key + "\nbob admin " + key + "\n", "the key of 'bob' is also the key of 'alice'"},
      {"no key", "# only a comment\n\n", "holds no key"},
  };
  for (const auto& c : cases) {
    auto keys = parse_api_keys(c.text, "/etc/warden/keys");
    ASSERT_FALSE(keys) << c.what;
    EXPECT_EQ(keys.error().code, errc::invalid_request) << c.what;
    EXPECT_NE(keys.error().message.find(c.says), std::string::npos) << c.what << ": " << keys.error().message;
    EXPECT_NE(keys.error().message.find("--api-keys-file /etc/warden/keys"), std::string::npos) << c.what;
    EXPECT_EQ(keys.error().message.find(key), std::string::npos) << c.what << ": a message never quotes a key";
  }
}

std::string write_file(const std::filesystem::path& p, const std::string& text, mode_t mode) {
  std::ofstream(p) << text;
  ::chmod(p.c_str(), mode);
  return p.string();
}

TEST(ApiKeysFile, OnlyAPrivateRegularFileIsRead) {
  warden::testing::temp_dir dir;
  const auto ok = read_api_keys_file(write_file(std::filesystem::path(dir.path) / "private", good_file(), 0600));
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->size(), 3u);
  EXPECT_TRUE(read_api_keys_file(write_file(std::filesystem::path(dir.path) / "owner-only-ro", good_file(), 0400)));
  for (mode_t mode : std::initializer_list<mode_t>{0644, 0640, 0604, 0620, 0602, 0610}) {
    const std::string p = write_file(std::filesystem::path(dir.path) / ("m" + std::to_string(mode)), good_file(), mode);
    auto r = read_api_keys_file(p);
    ASSERT_FALSE(r) << std::oct << mode;
    EXPECT_NE(r.error().message.find("may be read or written by other users"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("chmod 600"), std::string::npos);
  }
  // a file another user owns: that user could add an admin key (only testable where chown works)
  const std::string foreign = write_file(std::filesystem::path(dir.path) / "foreign", good_file(), 0600);
  if (::geteuid() == 0 && ::chown(foreign.c_str(), 65534, 65534) == 0) {
    auto r = read_api_keys_file(foreign);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("belongs to uid 65534, not to warden's user"), std::string::npos) << r.error().message;
    ASSERT_EQ(::chown(foreign.c_str(), 0, 0), 0);
    EXPECT_TRUE(read_api_keys_file(foreign)) << "root's own file is read";
  }
  auto missing = read_api_keys_file((std::filesystem::path(dir.path) / "nope").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot read --api-keys-file"), std::string::npos);
  auto folder = read_api_keys_file(dir.path);
  ASSERT_FALSE(folder);
  EXPECT_NE(folder.error().message.find("not a regular file"), std::string::npos) << folder.error().message;
  auto duplicate = read_api_keys_file(write_file(std::filesystem::path(dir.path) / "dup", good_file() + "\nalice admin " + k_ops + "Z\n", 0600));
  ASSERT_FALSE(duplicate);
  EXPECT_NE(duplicate.error().message.find("used twice"), std::string::npos);
}

TEST(KeyRing, NoKeyOneKeyAndNamedKeys) {
  const key_ring open;
  EXPECT_FALSE(open.required());
  for (std::string_view presented : {"", "anything"}) {
    auto who = open.resolve(presented);
    ASSERT_TRUE(who);
    EXPECT_EQ(who->name, "");
    EXPECT_TRUE(who->admin());  // single user: sees everything, as before named keys
  }
  const key_ring one(std::string("the-one-key"));
  EXPECT_TRUE(one.required());
  EXPECT_FALSE(one.named());
  ASSERT_TRUE(one.resolve("the-one-key"));
  EXPECT_EQ(one.resolve("the-one-key")->name, "");
  EXPECT_TRUE(one.resolve("the-one-key")->admin());
  EXPECT_FALSE(one.resolve("the-one-ke"));
  EXPECT_FALSE(one.resolve("the-one-key!"));
  EXPECT_FALSE(one.resolve(""));

  const key_ring named(*parse_api_keys(good_file(), "f"));
  EXPECT_TRUE(named.named());
  const std::pair<std::string, principal> expect[] = {
      {k_alice, {"alice", key_role::user}}, {k_bob, {"bob", key_role::user}}, {k_ops, {"ops", key_role::admin}}};
  for (const auto& [key, who] : expect) {
    auto got = named.resolve(key);
    ASSERT_TRUE(got) << who.name;
    EXPECT_EQ(got->name, who.name);
    EXPECT_EQ(got->role, who.role);
  }
  EXPECT_FALSE(named.resolve(""));
  EXPECT_FALSE(named.resolve(k_alice.substr(1)));
  EXPECT_FALSE(named.resolve(k_alice + k_bob));
}

TEST(Principal, MayAccessItsOwnOrAllWhenAdmin) {
  const principal alice{"alice", key_role::user}, ops{"ops", key_role::admin}, nobody;
  EXPECT_TRUE(alice.may_access("alice"));
  EXPECT_FALSE(alice.may_access("bob"));
  EXPECT_FALSE(alice.may_access(""));  // the single user's old rows: admins only
  EXPECT_TRUE(ops.may_access("alice"));
  EXPECT_TRUE(ops.may_access(""));
  EXPECT_TRUE(single_user().may_access(""));
  EXPECT_FALSE(nobody.admin());  // the default before the router resolves a key
  EXPECT_FALSE(nobody.may_access("alice"));
}

std::string plain_body(const error& e, std::string_view) { return "err:" + std::to_string(http_status(e.code)); }
std::string plain_inband(const error&) { return "inband"; }
const surface k_plain{"plain", &plain_body, &plain_inband};

/// The router resolves the key to the principal the handler sees.
struct RouterPrincipal : ::testing::Test {
  principal seen;
  int hits = 0;
  router make(key_ring keys) {
    auto record = [this](const http_request& req, response_writer& out) -> boost::asio::awaitable<void> {
      ++hits;
      seen = req.caller;
      co_await out.send(200, "text/plain", "ok");
    };
    std::vector<route> table = {{"GET", "/keyed", false, auth_policy::api_key, &k_plain, record},
                                {"GET", "/open", false, auth_policy::open, &k_plain, record}};
    return router({std::move(keys)}, std::move(table), k_plain);
  }
  warden::testing::recording_writer get(router& r, const std::string& path,
                                        std::vector<std::pair<std::string, std::string>> h = {}) {
    http_request req;
    req.method = "GET";
    req.path = path;
    h.emplace_back("host", "127.0.0.1:8888");
    req.headers = std::move(h);
    req.caller = principal{"forged", key_role::admin};  // whatever came in is replaced
    return testing::route_once(r, req);
  }
};

TEST_F(RouterPrincipal, NamedKeysByBearerOrXApiKey) {
  auto r = make(key_ring(*parse_api_keys(good_file(), "f")));
  EXPECT_EQ(get(r, "/keyed", {{"authorization", "Bearer " + k_alice}}).status, 200);
  EXPECT_EQ(seen.name, "alice");
  EXPECT_FALSE(seen.admin());
  EXPECT_EQ(get(r, "/keyed", {{"x-api-key", k_ops}}).status, 200);
  EXPECT_EQ(seen.name, "ops");
  EXPECT_TRUE(seen.admin());
  // a wrong Bearer token does not hide a right X-Api-Key (as with one key)
  EXPECT_EQ(get(r, "/keyed", {{"authorization", "Bearer nope"}, {"x-api-key", k_bob}}).status, 200);
  EXPECT_EQ(seen.name, "bob");
  EXPECT_EQ(hits, 3);
  auto refused = get(r, "/keyed", {{"authorization", "Bearer not-a-key-of-the-file"}});
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.body, "err:401");
  EXPECT_EQ(get(r, "/keyed").status, 401);
  EXPECT_EQ(hits, 3);
  // an open route needs no key and carries the default principal, never a forged one
  EXPECT_EQ(get(r, "/open", {{"authorization", "Bearer " + k_ops}}).status, 200);
  EXPECT_EQ(seen.name, "");
  EXPECT_FALSE(seen.admin());
}

TEST_F(RouterPrincipal, SingleUserWithOrWithoutTheOneKey) {
  auto none = make(key_ring());
  EXPECT_EQ(get(none, "/keyed").status, 200);
  EXPECT_EQ(seen.name, "");
  EXPECT_TRUE(seen.admin());
  auto one = make(key_ring(std::string("k")));
  EXPECT_EQ(get(one, "/keyed").status, 401);
  EXPECT_EQ(get(one, "/keyed", {{"x-api-key", "k"}}).status, 200);
  EXPECT_EQ(seen.name, "");
  EXPECT_TRUE(seen.admin());
}

}  // namespace
}  // namespace warden::http
