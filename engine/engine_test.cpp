#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
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
                                         "--kv-unified"};
  EXPECT_EQ(llama_server_args(o, 4321), want);
  o.parallel_slots = 1;
  EXPECT_EQ(llama_server_args(o, 4321).back(), "1");
  o.api_key = "secret-key";
  for (const auto& a : llama_server_args(o, 4321)) EXPECT_EQ(a.find("secret-key"), std::string::npos);
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

// A "llama-server" that prints and exits: the error must name the model and quote its output.
TEST(LlamaServer, ChildExitQuotesLastLines) {
  const std::string script = ::testing::TempDir() + "/fake-llama-server.sh";
  {
    std::ofstream f(script);
    f << "#!/bin/sh\necho 'loading model'\necho 'error: unsupported GGUF architecture xyz' >&2\nexit 3\n";
  }
  ::chmod(script.c_str(), 0755);
  const std::string model = ::testing::TempDir() + "/m.gguf";
  { std::ofstream(model) << "GGUF"; }
  llama_server s({script, model, "tiny-model", 512, 1, 20, ""});
  auto r = s.start();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("tiny-model"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("exited with code 3"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("unsupported GGUF architecture xyz"), std::string::npos) << r.error().message;
  EXPECT_EQ(s.state(), upstream_state::failed);
}

// A child that never becomes healthy is killed at the load timeout (with its whole group).
TEST(LlamaServer, LoadTimeoutKillsTheChild) {
  const std::string script = ::testing::TempDir() + "/slow-llama-server.sh";
  {
    std::ofstream f(script);
    f << "#!/bin/sh\necho 'still loading'\nsleep 600 &\nwait\n";
  }
  ::chmod(script.c_str(), 0755);
  const std::string model = ::testing::TempDir() + "/m.gguf";
  { std::ofstream(model) << "GGUF"; }
  llama_server s({script, model, "slow-model", 512, 1, 1, ""});
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
