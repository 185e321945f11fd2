#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <signal.h>
#include <sys/stat.h>

#include "engine/gguf_info.h"
#include "engine/http_client.h"
#include "engine/llama_server.h"

namespace warden::engine {
namespace {

namespace asio = boost::asio;

// Live (non-zombie) processes whose process group is `pgid`.
int live_in_group(pid_t pgid) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "stat");
    std::string stat;
    std::getline(f, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != 'Z' && state != 'X') ++n;
  }
  return n;
}

TEST(LlamaServerArgs, WholeVector) {
  llama_server_options o{"/bin/llama-server", "/m/x.gguf", "x", 2048, 3, 10, ""};
  const std::vector<std::string> want = {"-m", "/m/x.gguf", "--alias", "x", "--host", "127.0.0.1", "--port",
                                         "4321", "--jinja", "--no-context-shift", "-c", "2048", "--parallel", "3",
                                         "--kv-unified", "--api-key-file", "/proc/self/fd/3"};
  EXPECT_EQ(llama_server_args(o, 4321), want);
  o.parallel_slots = 1;
  const auto one = llama_server_args(o, 4321);
  EXPECT_EQ(std::find(one.begin(), one.end(), "--kv-unified"), one.end());
  o.api_key = "secret-key";
  for (const auto& a : llama_server_args(o, 4321)) EXPECT_EQ(a.find("secret-key"), std::string::npos);
}

// Planted secrets: none reaches llama-server, whether or not its name is on the allow-list.
TEST(LlamaServerEnv, AllowListMinusSecrets) {
  const std::vector<std::string> server_env = {
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "HOME=/home/u",
      "LANG=sk_SK.UTF-8",
      "LC_ALL=C.UTF-8",
      "TZ=Asia/Tokyo",
      "TMPDIR=/tmp",
      "LD_LIBRARY_PATH=/opt/cuda/lib64",
      "CUDA_VISIBLE_DEVICES=0,1",
      "HIP_VISIBLE_DEVICES=1",
      "GGML_VK_VISIBLE_DEVICES=0",
      "OMP_NUM_THREADS=4",
      // not on the allow-list
      "OPENAI_API_KEY=sk-planted-1",
      "HF_TOKEN=hf_planted2",
      "AWS_SECRET_ACCESS_KEY=planted3",
      "DB_PASSWORD=planted4",
      "LLAMA_API_KEY=planted5",
      "LLAMA_ARG_HOST=0.0.0.0",
      "LD_PRELOAD=/tmp/evil.so",
      "SSH_AUTH_SOCK=/tmp/ssh-agent",
      "TERM=xterm",
      "USER=u",
      // on the allow-list by name, but secret by name or value
      "GGML_API_KEY=planted6",
      "LC_SECRET=planted7",
      "GGML_AUTH=planted8",
      "OMP_PASSWORD=planted9",
      "TMPDIR=https://user:planted10@example.com/x",  // a duplicate too
      "LANGUAGE=ghp_planted11AbCdEfGhIjKlMnOpQrStUvWx",  // a token format (secrets/secret_detect.h)
      "LD_LIBRARY_PATH=/lib:sk-planted12",
      "HOME=Server=db;Password=planted13",
      "TZ=-----BEGIN PRIVATE KEY-----planted14",
      "=nameless",
      "NOEQUALS",
  };
  const std::vector<std::string> want = {
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "HOME=/home/u",
      "LANG=sk_SK.UTF-8",
      "LC_ALL=C.UTF-8",
      "TZ=Asia/Tokyo",
      "TMPDIR=/tmp",
      "LD_LIBRARY_PATH=/opt/cuda/lib64",
      "CUDA_VISIBLE_DEVICES=0,1",
      "HIP_VISIBLE_DEVICES=1",
      "GGML_VK_VISIBLE_DEVICES=0",
      "OMP_NUM_THREADS=4",
  };
  EXPECT_EQ(llama_server_env(server_env), want);
  auto with_preload = want;
  with_preload.emplace_back("LD_PRELOAD=/opt/warden/libwarden_nodump.so");
  EXPECT_EQ(llama_server_env(server_env, "/opt/warden/libwarden_nodump.so"), with_preload);
  for (const auto& e : llama_server_env(server_env)) EXPECT_EQ(e.find("planted"), std::string::npos) << e;
  // the first of two entries of one name wins (getenv's choice), unless it is a secret
  EXPECT_EQ(llama_server_env({"TMPDIR=/a", "TMPDIR=/b"}), std::vector<std::string>{"TMPDIR=/a"});
  EXPECT_EQ(llama_server_env({"TMPDIR=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "TMPDIR=/b"}), std::vector<std::string>{"TMPDIR=/b"});
  EXPECT_TRUE(llama_server_env({}).empty());
}

TEST(LlamaApiKey, ValidKeys) {
  EXPECT_TRUE(valid_llama_api_key("0123456789abcdef"));
  EXPECT_TRUE(valid_llama_api_key("a-b_c.d~e!f"));
  EXPECT_FALSE(valid_llama_api_key(""));
  EXPECT_FALSE(valid_llama_api_key("#comment"));  // llama-server would skip the line: no key at all
  EXPECT_FALSE(valid_llama_api_key("two words"));
  EXPECT_FALSE(valid_llama_api_key("tab\there"));
  EXPECT_FALSE(valid_llama_api_key("caf\xc3\xa9"));
  EXPECT_TRUE(valid_llama_api_key(std::string(k_max_api_key_bytes, 'k')));
  EXPECT_FALSE(valid_llama_api_key(std::string(k_max_api_key_bytes + 1, 'k')));
}

TEST(LlamaApiKey, ReadsTheFirstLineOfTheFile) {
  const std::string dir = ::testing::TempDir();
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    ::chmod(path.c_str(), 0600);
    return path;
  };
  auto k = read_llama_api_key_file(write("key1", "s3cret-key\nsecond line\n"));
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(*k, "s3cret-key");
  k = read_llama_api_key_file(write("key2", "crlf-key\r\n"));
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, "crlf-key");
  k = read_llama_api_key_file(write("key3", "no-newline"));
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, "no-newline");
  for (const auto& [name, text, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"empty", "", "it is empty"},
           {"blank-line", "\nkey-on-line-two\n", "is empty"},
           {"comment", "#not-a-key\n", "printable ASCII"},
           {"spaces", "has spaces\n", "printable ASCII"}}) {
    const std::string path = write(name, text);
    k = read_llama_api_key_file(path);
    ASSERT_FALSE(k.ok()) << name;
    EXPECT_EQ(k.error().code, errc::invalid_request);
    EXPECT_NE(k.error().message.find(why), std::string::npos) << k.error().message;
    EXPECT_NE(k.error().message.find("--llama-api-key-file " + path), std::string::npos) << k.error().message;
    EXPECT_EQ(k.error().message.find("key-on-line-two"), std::string::npos) << "the message quotes the file";
  }
  k = read_llama_api_key_file(dir + "/does-not-exist");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("No such file"), std::string::npos) << k.error().message;
  k = read_llama_api_key_file(dir);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("directory"), std::string::npos) << k.error().message;
}

// A "llama-server" that reports what it got: the key arrives on fd 3 (the --api-key-file it is
// told to read), not in its arguments or environment, and warden's planted secrets stay behind.
TEST(LlamaServer, ChildGetsTheKeyOnFd3AndAMinimalEnvironment) {
  const std::string script = ::testing::TempDir() + "/env-llama-server.sh";
  {
    std::ofstream f(script);
    f << "#!/bin/sh\n"
         "for a in \"$@\"; do case \"$a\" in /proc/self/fd/*) echo \"key:$(cat \"$a\")\";; esac; done\n"
         "echo \"args:$*\"\n"
         "env | sed 's/^/env:/'\n"
         "for n in 4 5 6 7 8 9; do [ -e /proc/$$/fd/$n ] && echo \"open fd:$n\"; done\n"
         "exit 3\n";
  }
  ::chmod(script.c_str(), 0755);
  const std::string model = ::testing::TempDir() + "/m.gguf";
  { std::ofstream(model) << "GGUF"; }
  const std::vector<std::pair<const char*, const char*>> planted = {
      {"OPENAI_API_KEY", "sk-planted-a"}, {"GITHUB_TOKEN", "planted-b"}, {"LLAMA_API_KEY", "planted-c"},
      {"GGML_SECRET", "planted-d"},       {"MY_VAR", "planted-e"}};
  for (const auto& [n, v] : planted) ::setenv(n, v, 1);
  llama_server s({script, model, "env-model", 512, 1, 20, "unit-test-key-0123"});
  auto r = s.start();
  for (const auto& [n, v] : planted) ::unsetenv(n);
  ASSERT_FALSE(r.ok());
  const std::string out = s.output_tail(k_output_tail_lines);
  EXPECT_NE(out.find("key:unit-test-key-0123\n"), std::string::npos) << out;
  EXPECT_NE(out.find("args:-m " + model), std::string::npos) << out;
  EXPECT_NE(out.find("--api-key-file /proc/self/fd/3"), std::string::npos) << out;
  EXPECT_EQ(out.find("unit-test-key-0123", out.find("key:unit-test-key-0123") + 5), std::string::npos)
      << "the key appears more than once:\n" << out;
  EXPECT_EQ(out.find("planted"), std::string::npos) << out;
  EXPECT_EQ(out.find("env:LLAMA_"), std::string::npos) << out;
  EXPECT_EQ(out.find("open fd:"), std::string::npos) << out;  // nothing else inherited
}

// A "llama-server" that answers everyone (it ignored the key file): start() must not trust it.
TEST(LlamaServer, RefusesAChildThatServesWithoutItsKey) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
  const std::string script = ::testing::TempDir() + "/open-llama-server.sh";
  {
    std::ofstream f(script);
    f << "#!/bin/sh\n"
         "while [ $# -gt 0 ]; do [ \"$1\" = --port ] && port=$2; shift; done\n"
         "exec /usr/bin/python3 -c '\n"
         "import http.server, sys\n"
         "class H(http.server.BaseHTTPRequestHandler):\n"
         "    def do_GET(self):\n"
         "        self.send_response(200); self.send_header(\"Content-Length\", \"2\"); self.end_headers()\n"
         "        self.wfile.write(b\"{}\")\n"
         "http.server.HTTPServer((\"127.0.0.1\", int(sys.argv[1])), H).serve_forever()\n"
         "' \"$port\"\n";
  }
  ::chmod(script.c_str(), 0755);
  const std::string model = ::testing::TempDir() + "/m.gguf";
  { std::ofstream(model) << "GGUF"; }
  llama_server s({script, model, "open-model", 512, 1, 20, ""});
  auto r = s.start();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("did not take its API key (GET /v1/models: 200 without it"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(s.state(), upstream_state::failed);
  const pid_t pid = s.pid();
  ASSERT_GT(pid, 0);
  EXPECT_EQ(live_in_group(pid), 0) << "the child was not stopped";
}

TEST(NodumpPreload, FoundOnlyNextToTheBinary) {
  // engine_test lives in build/engine/, the preload in build/app/ (next to warden): not found.
  EXPECT_EQ(nodump_preload_path(), "");
}

TEST(PickFreePort, GivesAnUnprivilegedPort) {
  auto p = pick_free_port();
  ASSERT_TRUE(p.ok());
  EXPECT_GT(*p, 1024);
  EXPECT_LT(*p, 65536);
}

TEST(LlamaServer, MissingBinaryFailsWithActionableMessage) {
  llama_server s({"/nonexistent/llama-server", "/nonexistent/m.gguf", "m", 512, 1, 5, ""});
  auto r = s.start();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, errc::upstream_unavailable);
  EXPECT_NE(r.error().message.find("make setup"), std::string::npos);
  EXPECT_EQ(s.state(), upstream_state::failed);
}

/// Options for a "llama-server" that is this shell script (in the test temp dir) with a dummy model.
llama_server_options scripted_server(const std::string& file, const std::string& body, const std::string& id, int timeout_s) {
  const std::string script = ::testing::TempDir() + "/" + file;
  {
    std::ofstream f(script);
    f << "#!/bin/sh\n" << body;
  }
  ::chmod(script.c_str(), 0755);
  const std::string model = ::testing::TempDir() + "/m.gguf";
  { std::ofstream(model) << "GGUF"; }
  return {script, model, id, 512, 1, timeout_s, ""};
}

// A "llama-server" that prints and exits: the error must name the model and quote its output.
TEST(LlamaServer, ChildExitQuotesLastLines) {
  llama_server s(scripted_server("fake-llama-server.sh",
                                 "echo 'loading model'\necho 'error: unsupported GGUF architecture xyz' >&2\nexit 3\n",
                                 "tiny-model", 20));
  auto r = s.start();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("tiny-model"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("exited with code 3"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("unsupported GGUF architecture xyz"), std::string::npos) << r.error().message;
  EXPECT_EQ(s.state(), upstream_state::failed);
}

// A child that never becomes healthy is killed at the load timeout (with its whole group).
TEST(LlamaServer, LoadTimeoutKillsTheChild) {
  llama_server s(scripted_server("slow-llama-server.sh", "echo 'still loading'\nsleep 600 &\nwait\n", "slow-model", 1));
  auto r = s.start();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("within 1 s"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("still loading"), std::string::npos) << r.error().message;
  const pid_t pid = s.pid();
  ASSERT_GT(pid, 0);
  EXPECT_EQ(live_in_group(pid), 0) << "a process of the child's group survived";
}

TEST(GgufInfo, RejectsNonGgufAndTruncatedFiles) {
  const std::string dir = ::testing::TempDir();
  { std::ofstream(dir + "/text.gguf") << "hello world, not a model"; }
  auto r = read_gguf_info(dir + "/text.gguf");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a GGUF file"), std::string::npos);
  { std::ofstream(dir + "/short.gguf", std::ios::binary) << "GGUF"; }
  EXPECT_FALSE(read_gguf_info(dir + "/short.gguf").ok());
  EXPECT_FALSE(read_gguf_info(dir + "/missing.gguf").ok());
}

// A minimal GGUF v3 header written by hand: architecture, name, context length, no template.
TEST(GgufInfo, ReadsArchitectureTemplateAndContext) {
  const std::string path = ::testing::TempDir() + "/mini.gguf";
  {
    std::ofstream f(path, std::ios::binary);
    auto u32 = [&](std::uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
    auto u64 = [&](std::uint64_t v) { f.write(reinterpret_cast<const char*>(&v), 8); };
    auto str = [&](const std::string& s) { u64(s.size()); f.write(s.data(), static_cast<std::streamsize>(s.size())); };
    f.write("GGUF", 4);
    u32(3); u64(0); u64(4);
    str("general.architecture"); u32(8); str("gemma3");
    str("tokenizer.ggml.tokens"); u32(9); u32(8); u64(3); str("a"); str("bb"); str("ccc");
    str("general.name"); u32(8); str("Mini");
    str("gemma3.context_length"); u32(4); u32(32768);
  }
  auto r = read_gguf_info(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->architecture, "gemma3");
  EXPECT_EQ(r->name, "Mini");
  EXPECT_EQ(r->context_length, 32768u);
  EXPECT_FALSE(r->has_chat_template);
}

// The shape numbers, quantisation and the KV cache estimate, from a hand-written header with
// the keys in an order where the architecture comes last.
TEST(GgufInfo, ReadsShapeQuantisationAndKvCacheSize) {
  const std::string path = ::testing::TempDir() + "/shape.gguf";
  {
    std::ofstream f(path, std::ios::binary);
    auto u32 = [&](std::uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
    auto u64 = [&](std::uint64_t v) { f.write(reinterpret_cast<const char*>(&v), 8); };
    auto str = [&](const std::string& s) { u64(s.size()); f.write(s.data(), static_cast<std::streamsize>(s.size())); };
    f.write("GGUF", 4);
    u32(3); u64(0); u64(9);
    str("llama.block_count"); u32(4); u32(30);
    str("llama.embedding_length"); u32(4); u32(576);
    str("llama.attention.head_count"); u32(4); u32(9);
    str("llama.attention.head_count_kv"); u32(4); u32(3);
    str("general.file_type"); u32(4); u32(15);
    str("general.size_label"); u32(8); str("135M");
    str("tokenizer.chat_template"); u32(8); str("{% if tools %}{{ tools }}{% endif %}");
    str("llama.context_length"); u32(4); u32(8192);
    str("general.architecture"); u32(8); str("llama");
  }
  auto r = read_gguf_info(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->block_count, 30u);
  EXPECT_EQ(r->head_count_kv, 3u);
  EXPECT_EQ(r->key_length, 64u);  // 576 / 9
  EXPECT_EQ(r->quantization, "Q4_K_M");
  EXPECT_EQ(r->parameters, "135M");
  EXPECT_TRUE(r->has_chat_template);
  EXPECT_TRUE(r->has_tool_template);
  EXPECT_EQ(r->context_length, 8192u);
  // 30 layers × 3 KV heads × (64 + 64) × 2 bytes = 23040 bytes per position
  EXPECT_EQ(r->kv_cache_bytes(1), 23040u);
  EXPECT_EQ(r->kv_cache_bytes(1000), 23040000u);
  EXPECT_EQ(file_type_name(3), "Q4_1");
  EXPECT_EQ(file_type_name(999), "");
}

TEST(HttpClient, RefusedConnectionIsUpstreamUnavailable) {
  http_client client;
  asio::io_context ioc;
  auto port = pick_free_port();
  ASSERT_TRUE(port.ok());
  std::optional<call_event> last;
  asio::co_spawn(ioc, [&]() -> asio::awaitable<void> {
    http_call_request rq;
    rq.url = "http://127.0.0.1:" + std::to_string(*port) + "/v1/chat/completions";
    rq.body = "{}";
    auto call = client.start(rq, co_await asio::this_coro::executor);
    while (true) {
      auto ev = co_await call->next(std::chrono::milliseconds(2000));
      if (ev && ev->type == call_event::kind::end) {
        last = ev;
        break;
      }
    }
  }, asio::detached);
  ioc.run();
  ASSERT_TRUE(last.has_value());
  ASSERT_TRUE(last->failure.has_value());
  EXPECT_EQ(last->failure->code, errc::upstream_unavailable);
}

}  // namespace
}  // namespace warden::engine
