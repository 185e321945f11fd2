// Walks every row of config_table(): each row must write its own field (and no other), reject
// bad values with a message naming its flag and variable, and show its default as --help does.
// Complements common_test.cpp (ConfigTable.*), which checks a few rows in depth.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/config.h"

namespace warden {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

struct expectation {
  std::function<std::string(const config&)> read;  ///< the row's field as text (as --help shows it)
  std::string good;                                  ///< a valid raw value, not the default
  std::string want;                                  ///< read() after applying `good`
  std::vector<std::string> bad = {};                 ///< key-specific invalid values (beyond the type's)
};

std::string str(int v) { return std::to_string(v); }

// One entry per config field. A flag that is off reads "" (--help shows no default for it).
const std::map<std::string, expectation>& expectations() {
  static const std::map<std::string, expectation> m = {
      {"host", {[](const config& c) { return c.host; }, "0.0.0.0", "0.0.0.0", {""}}},
      {"port", {[](const config& c) { return str(c.port); }, "9001", "9001"}},
      {"model", {[](const config& c) { return c.model_path; }, "/m/x.gguf", "/m/x.gguf"}},
      {"model_id", {[](const config& c) { return c.model_id; }, "my-model", "my-model"}},
      {"upstream", {[](const config& c) { return c.upstream_url; }, "https://h:1/v1", "https://h:1/v1"}},
      {"upstream_api_key", {[](const config& c) { return c.upstream_api_key; }, "uk", "uk"}},
      {"ctx", {[](const config& c) { return str(c.ctx_tokens); }, "4096", "4096"}},
      {"parallel", {[](const config& c) { return str(c.parallel_slots); }, "7", "7"}},
      {"queue_max", {[](const config& c) { return str(c.queue_max); }, "80", "80"}},
      {"queue_per_key", {[](const config& c) { return str(c.queue_per_key); }, "9", "9"}},
      {"queue_timeout_s", {[](const config& c) { return str(c.queue_timeout_s); }, "30", "30"}},
      {"upstream_slots", {[](const config& c) { return str(c.upstream_slots); }, "3", "3"}},
      {"upstreams_file", {[](const config& c) { return c.upstreams_file; }, "/u.txt", "/u.txt"}},
      {"replicas", {[](const config& c) { return str(c.replicas); }, "2", "2"}},
      {"engine_head_timeout_s", {[](const config& c) { return str(c.engine_head_timeout_s); }, "30", "30"}},
      {"metrics_key", {[](const config& c) { return c.metrics_key; }, "mk", "mk"}},
      {"no_queue", {[](const config& c) { return std::string(c.no_queue ? "true" : ""); }, "1", "true"}},
      {"no_api_monitor", {[](const config& c) { return std::string(c.no_api_monitor ? "true" : ""); }, "1", "true"}},
      {"api_key", {[](const config& c) { return c.api_key; }, "k1", "k1"}},
      {"api_keys_file", {[](const config& c) { return c.api_keys_file; }, "/keys", "/keys"}},
      {"llama_server", {[](const config& c) { return c.llama_server_path; }, "/bin/ls", "/bin/ls"}},
      {"home", {[](const config& c) { return c.home; }, "/h", "/h"}},
      {"load_timeout_s", {[](const config& c) { return str(c.load_timeout_s); }, "61", "61"}},
      {"models_dir", {[](const config& c) { return c.models_dir; }, "/m", "/m"}},
      {"hf_endpoint", {[](const config& c) { return c.hf_endpoint; }, "http://127.0.0.1:9/", "http://127.0.0.1:9/"}},
      {"auto_swap", {[](const config& c) { return std::string(c.auto_swap ? "true" : ""); }, "1", "true"}},
      {"idle_unload_s", {[](const config& c) { return str(c.idle_unload_s); }, "300", "300"}},
      {"sse_ping_interval_ms", {[](const config& c) { return str(c.sse_ping_interval_ms); }, "250", "250"}},
      {"max_body_bytes", {[](const config& c) { return std::to_string(c.max_body_bytes); }, "4294967296", "4294967296"}},
      {"header_timeout_s", {[](const config& c) { return str(c.header_timeout_s); }, "30", "30"}},
      {"max_connections", {[](const config& c) { return str(c.max_connections); }, "500", "500"}},
      {"max_pending_body_bytes",
       {[](const config& c) { return std::to_string(c.max_pending_body_bytes); }, "1048576", "1048576"}},
      {"io_threads", {[](const config& c) { return str(c.io_threads); }, "3", "3"}},
      {"approval_timeout_s", {[](const config& c) { return str(c.approval_timeout_s); }, "90", "90"}},
      {"workspaces", {[](const config& c) { return c.workspaces_dir; }, "/w", "/w"}},
      {"bwrap", {[](const config& c) { return c.bwrap_path; }, "/opt/bwrap", "/opt/bwrap"}},
      {"call_memory_mib", {[](const config& c) { return str(c.call_memory_mib); }, "512", "512"}},
      {"warm_jails", {[](const config& c) { return str(c.warm_jails); }, "0", "0"}},
      {"workspace_quota_mib", {[](const config& c) { return str(c.workspace_quota_mib); }, "64", "64"}},
      {"responses_quota_mib", {[](const config& c) { return str(c.responses_quota_mib); }, "0", "0"}},
      {"responses_session_quota_mib", {[](const config& c) { return str(c.responses_session_quota_mib); }, "12", "12"}},
      {"background_runs", {[](const config& c) { return str(c.background_runs); }, "3", "3"}},
      {"session_background_runs", {[](const config& c) { return str(c.session_background_runs); }, "2", "2"}},
      {"responses_ttl_s", {[](const config& c) { return std::to_string(c.responses_ttl_s); }, "86400", "86400"}},
      {"allowed_hosts",
       {[](const config& c) { return join(c.allowed_hosts); }, " Box.LAN, b:80 ,,[::1]:9", "box.lan,b:80,[::1]:9",
        {"http://x", "a/b", "x:0", "ok, bad host"}}},
      {"allowed_origins",
       {[](const config& c) { return join(c.allowed_origins); }, "HTTP://App:3000,https://b", "http://app:3000,https://b",
        {"null", "*", "app:3000", "http://x/path"}}},
      {"insecure_no_auth", {[](const config& c) { return std::string(c.insecure_no_auth ? "true" : ""); }, "yes", "true"}},
      {"no_heal_tool_calls", {[](const config& c) { return std::string(c.no_heal_tool_calls ? "true" : ""); }, "1", "true"}},
      {"no_tool_prompt_nudge", {[](const config& c) { return std::string(c.no_tool_prompt_nudge ? "true" : ""); }, "1", "true"}},
      {"no_tool_error_nudge", {[](const config& c) { return std::string(c.no_tool_error_nudge ? "true" : ""); }, "1", "true"}},
      {"no_act_reprompts", {[](const config& c) { return std::string(c.no_act_reprompts ? "true" : ""); }, "1", "true"}},
      {"search_backend",
       {[](const config& c) { return c.search_backend; }, "searxng:http://127.0.0.1:8080", "searxng:http://127.0.0.1:8080",
        {"google", "searxng", "searxng:ftp://x", "duckduckgo:x"}}},
      {"allow_private_fetch", {[](const config& c) { return std::string(c.allow_private_fetch ? "true" : ""); }, "1", "true"}},
      {"mcp_config", {[](const config& c) { return c.mcp_config_file; }, "/etc/warden/mcp.json", "/etc/warden/mcp.json"}},
      {"max_permission", {[](const config& c) { return c.max_permission; }, "auto", "auto"}},
      {"llama_api_key_file", {[](const config& c) { return c.llama_api_key_file; }, "/k", "/k"}},
      {"log_level", {[](const config& c) { return c.log_level; }, "warn", "warn"}},
      {"api_key_file", {[](const config& c) { return c.api_key_file; }, "/run/k", "/run/k"}},
      {"upstream_api_key_file", {[](const config& c) { return c.upstream_api_key_file; }, "/run/u", "/run/u"}},
  };
  return m;
}

/// Every field read through every expectation: a snapshot to compare whole configs.
std::map<std::string, std::string> snapshot(const config& c) {
  std::map<std::string, std::string> out;
  for (const auto& [key, e] : expectations()) out[key] = e.read(c);
  return out;
}

/// Invalid values every row of a type must refuse.
std::vector<std::string> bad_values_of(const option_spec& s) {
  switch (s.type) {
    case option_type::integer:
      return {"abc", "", "12x", " 5", "5 ", "1e3", "0x10", std::to_string(s.min_value - 1),
              std::to_string(s.max_value + 1), "99999999999999999999999"};
    case option_type::url: return {"ftp://x", "localhost:8080", "HTTP//x"};
    case option_type::level: return {"loud", "INFO", "warning"};
    case option_type::permission: return {"everything", "FULL", "bypass"};
    case option_type::flag: return {"maybe", "2", "yess"};
    case option_type::list:
    case option_type::path:
    case option_type::string: return {};  // key-specific values only (expectation::bad)
  }
  return {};
}

TEST(ConfigRows, TableAndExpectationsNameTheSameKeysOnce) {
  std::set<std::string> keys, flags, envs;
  for (const auto& s : config_table()) {
    EXPECT_TRUE(keys.insert(s.key).second) << "duplicate key " << s.key;
    EXPECT_TRUE(flags.insert(s.flag).second) << "duplicate flag " << s.flag;
    EXPECT_TRUE(envs.insert(s.env).second) << "duplicate variable " << s.env;
    EXPECT_TRUE(expectations().count(s.key)) << "table row without an expectation: " << s.key;
  }
  for (const auto& [key, e] : expectations()) EXPECT_TRUE(keys.count(key)) << "expectation without a row: " << key;
}

TEST(ConfigRows, EveryRowWritesItsOwnFieldAndNoOther) {
  const auto defaults = snapshot(config{});
  for (const auto& s : config_table()) {
    const auto it = expectations().find(s.key);
    ASSERT_NE(it, expectations().end()) << s.key;
    const expectation& e = it->second;
    ASSERT_NE(e.want, defaults.at(s.key)) << s.key << ": the test value must differ from the default";
    config c;
    const auto r = apply_option(c, s, e.good);
    ASSERT_TRUE(r.ok()) << s.key << "=" << e.good << ": " << r.error().message;
    auto want = defaults;
    want[s.key] = e.want;
    EXPECT_EQ(snapshot(c), want) << s.key << "=" << e.good;
  }
}

TEST(ConfigRows, IntegerRowsAcceptTheirWholeRange) {
  for (const auto& s : config_table()) {
    if (s.type != option_type::integer) continue;
    const auto& e = expectations().at(s.key);
    for (std::int64_t v : {s.min_value, s.max_value}) {
      config c;
      ASSERT_TRUE(apply_option(c, s, std::to_string(v)).ok()) << s.key << "=" << v;
      EXPECT_EQ(e.read(c), std::to_string(v)) << s.key;
    }
  }
}

TEST(ConfigRows, BadValuesAreRefusedNamingFlagAndVariableAndLeaveTheConfigAlone) {
  const auto defaults = snapshot(config{});
  std::size_t checked = 0;
  for (const auto& s : config_table()) {
    auto bad = bad_values_of(s);
    const auto& extra = expectations().at(s.key).bad;
    bad.insert(bad.end(), extra.begin(), extra.end());
    if (s.type == option_type::integer || s.type == option_type::url || s.type == option_type::level ||
        s.type == option_type::permission || s.type == option_type::flag || s.type == option_type::list) {
      EXPECT_FALSE(bad.empty()) << s.key << ": a type with invalid values needs some here";
    }
    for (const auto& v : bad) {
      config c;
      const auto r = apply_option(c, s, v);
      ASSERT_FALSE(r.ok()) << s.key << "='" << v << "' was accepted";
      EXPECT_EQ(r.error().code, errc::invalid_request) << s.key;
      EXPECT_EQ(r.error().param, s.key) << s.key;
      EXPECT_NE(r.error().message.find(s.flag), std::string::npos) << r.error().message;
      EXPECT_NE(r.error().message.find(s.env), std::string::npos) << r.error().message;
      EXPECT_EQ(snapshot(c), defaults) << s.key << "='" << v << "' changed the config";
      ++checked;
    }
  }
  EXPECT_GT(checked, 50u);
}

TEST(ConfigRows, EveryDefaultIsAValueItsOwnRowAccepts) {
  for (const auto& s : config_table()) {
    if (*s.default_value == '\0') continue;  // none: derived by finalize(), or a flag that is off
    config c;
    const auto r = apply_option(c, s, s.default_value);
    EXPECT_TRUE(r.ok()) << s.key << " default '" << s.default_value << "': " << r.error().message;
  }
}

TEST(ConfigRows, MarkdownTableHasOneLinePerRowInHelpOrder) {
  const std::string md = markdown_table();
  std::vector<std::string> lines;
  for (std::size_t at = 0, nl; (nl = md.find('\n', at)) != std::string::npos; at = nl + 1) {
    lines.push_back(md.substr(at, nl - at));
  }
  ASSERT_EQ(lines.size(), config_table().size() + 2);
  EXPECT_EQ(lines[0], "| flag | env | default | meaning |");
  EXPECT_EQ(lines[1], "|---|---|---|---|");
  std::size_t i = 2;
  for (const auto& s : config_table()) {
    const std::string& line = lines[i++];
    EXPECT_EQ(line.rfind(std::string("| `") + s.flag + "` | `" + s.env + "` | ", 0), 0u) << line;
    const std::string def = default_text(s);
    if (!def.empty()) {
      EXPECT_NE(line.find("`" + def + "`"), std::string::npos) << line;
    } else {
      EXPECT_NE(line.find(s.type == option_type::flag ? "| off |" : "| — |"), std::string::npos) << line;
    }
  }
  EXPECT_NE(md.find("| `--port` | `WARDEN_PORT` | `8888` | Port to bind (0 = any free port) |"), std::string::npos);
  EXPECT_NE(md.find("| `--ctx` | `WARDEN_CTX` | `8192` tokens |"), std::string::npos);
}

TEST(ConfigFinalize, ApiKeyAndApiKeysFileAreExclusive) {
  config both;
  both.api_key = "k";
  both.api_keys_file = "/etc/warden/keys";
  auto r = finalize(both, "/home/u");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().param, "api_keys_file");
  EXPECT_NE(r.error().message.find("--api-key and --api-keys-file are exclusive"), std::string::npos);
  config file_only;
  file_only.api_keys_file = "/etc/warden/keys";
  EXPECT_TRUE(finalize(file_only, "/home/u").ok());
}

TEST(ConfigRows, DefaultTextMatchesADefaultConfig) {
  const config d{};
  for (const auto& s : config_table()) {
    EXPECT_EQ(default_text(s), expectations().at(s.key).read(d)) << s.key;
  }
}

}  // namespace
}  // namespace warden
