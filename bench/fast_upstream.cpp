// A fast scripted OpenAI-compatible upstream for bench/gateway_bench.py: it answers in
// llama-server's shapes (tests/golden/llama_server_completion.json, llama_server_stream.sse) with no
// delay, so that what the benchmark measures is the gateway in front of it, not this server (the
// Python fake upstream of tests/fake/ costs more per request than warden does).
//
//   GET  /v1/models            {"object":"list","data":[{"id":"fast-model",...}]} (warden's probe)
//   POST /v1/chat/completions  non-streaming: one fixed chat.completion with usage;
//                              "stream": true: a role chunk, N content chunks (" sea" each), a
//                              finish chunk (finish_reason "length"), a usage chunk and
//                              `data: [DONE]`, each event written on its own (one HTTP chunk and
//                              one write each, as llama-server sends a token). N is the request's
//                              max_tokens (or max_completion_tokens), else --chunks.
//   anything else              404 with OpenAI's error envelope.
// Keep-alive connections; one io_context run by --threads threads (default 1); requests are read
// asynchronously, answers written synchronously (one send(2) per event).
//
// Usage: fast_upstream [--port P (0: any; prints "PORT <n>")] [--chunks N (32)] [--threads T (1)]
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

struct options {
  unsigned short port = 0;
  long chunks = 32;
  int threads = 1;
};

const char* const k_models =
    R"({"object":"list","data":[{"id":"fast-model","object":"model","created":1796009503,"owned_by":"bench"}]})";

const char* const k_completion =
    R"({"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"The sea is wide."}}],)"
    R"("created":1796009503,"model":"fast-model","system_fingerprint":"b1-bench","object":"chat.completion",)"
    R"("usage":{"completion_tokens":5,"prompt_tokens":12,"total_tokens":17},"id":"chatcmpl-bench",)"
    R"("timings":{"prompt_n":12,"prompt_ms":1.0,"predicted_n":5,"predicted_ms":1.0}})";

const char* const k_not_found =
    R"({"error":{"code":404,"message":"File Not Found","type":"not_found_error"}})";

// One SSE event of llama-server's stream: `choices`, then the fixed fields, then `tail` (e.g. usage).
std::string event(const std::string& choices, const std::string& tail = "") {
  return "data: {\"choices\":" + choices +
         ",\"created\":1796009503,\"id\":\"chatcmpl-bench\",\"model\":\"fast-model\","
         "\"system_fingerprint\":\"b1-bench\",\"object\":\"chat.completion.chunk\"" +
         tail + "}\n\n";
}

// One HTTP/1.1 chunk carrying `data`.
std::string http_chunk(const std::string& data) {
  char size[24];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

struct stream_frames {
  std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n";
  std::string role = http_chunk(event(R"([{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}])"));
  std::string content = http_chunk(event(R"([{"finish_reason":null,"index":0,"delta":{"content":" sea"}}])"));
  std::string finish = http_chunk(event(R"([{"finish_reason":"length","index":0,"delta":{}}])"));
  std::string done = http_chunk("data: [DONE]\n\n") + "0\r\n\r\n";

  static std::string usage(long n) {
    const std::string u = ",\"usage\":{\"completion_tokens\":" + std::to_string(n) +
                          ",\"prompt_tokens\":12,\"total_tokens\":" + std::to_string(n + 12) + "}";
    return http_chunk(event("[]", u));
  }
};

const stream_frames& frames() {
  static const stream_frames f;
  return f;
}

// (stream?, chunks) of a chat request body; a body that is not a JSON object streams nothing.
std::pair<bool, long> read_request(const std::string& body, long default_chunks) {
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return {false, default_chunks};
  const bool stream = j.value("stream", false);
  long n = default_chunks;
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (auto it = j.find(key); it != j.end() && it->is_number_integer()) {
      n = it->get<long>();
      break;
    }
  }
  return {stream, std::max(1L, std::min(n, 1'000'000L))};
}

// Writes are synchronous (one send(2) each, throwing on error): cheaper than an awaited write, and
// a few kilobytes never fill a loopback socket's buffer, so the thread does not wait on a client.
void write(tcp::socket& s, const std::string& bytes) { asio::write(s, asio::buffer(bytes)); }

void send_stream(tcp::socket& s, long chunks) {
  const auto& f = frames();
  write(s, f.head);
  write(s, f.role);
  for (long i = 0; i < chunks; ++i) write(s, f.content);
  write(s, f.finish);
  write(s, stream_frames::usage(chunks));
  write(s, f.done);
}

void send_json(tcp::socket& s, unsigned status, const char* body, bool keep_alive) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(status), 11};
  res.set(bhttp::field::content_type, "application/json");
  res.keep_alive(keep_alive);
  res.body() = body;
  res.prepare_payload();
  bhttp::write(s, res);
}

asio::awaitable<void> serve(tcp::socket s, long default_chunks) {
  beast::flat_buffer buf;
  s.set_option(tcp::no_delay(true));
  try {
    for (;;) {
      bhttp::request<bhttp::string_body> req;
      co_await bhttp::async_read(s, buf, req, asio::use_awaitable);
      const bool keep = req.keep_alive();
      if (req.method() == bhttp::verb::get && req.target() == "/v1/models") {
        send_json(s, 200, k_models, keep);
      } else if (req.method() == bhttp::verb::post && req.target() == "/v1/chat/completions") {
        const auto [stream, chunks] = read_request(req.body(), default_chunks);
        if (stream) {
          send_stream(s, chunks);
        } else {
          send_json(s, 200, k_completion, keep);
        }
      } else {
        send_json(s, 404, k_not_found, keep);
      }
      if (!keep) break;
    }
  } catch (const boost::system::system_error&) {
    // the client went away or sent something that is not HTTP: drop the connection
  }
  boost::system::error_code ignored;
  s.shutdown(tcp::socket::shutdown_both, ignored);
}

asio::awaitable<void> accept(tcp::acceptor& acceptor, long default_chunks) {
  for (;;) {
    tcp::socket s = co_await acceptor.async_accept(asio::use_awaitable);
    asio::co_spawn(acceptor.get_executor(), serve(std::move(s), default_chunks), asio::detached);
  }
}

options parse_args(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long v = std::atol(argv[i + 1]);
    if (flag == "--port") o.port = static_cast<unsigned short>(v);
    else if (flag == "--chunks") o.chunks = std::max(1L, v);
    else if (flag == "--threads") o.threads = static_cast<int>(std::max(1L, v));
    else {
      std::fprintf(stderr, "fast_upstream: unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse_args(argc, argv);
  asio::io_context ioc{o.threads};
  tcp::acceptor acceptor{ioc, tcp::endpoint{asio::ip::make_address("127.0.0.1"), o.port}};
  std::printf("PORT %u\n", static_cast<unsigned>(acceptor.local_endpoint().port()));
  std::fflush(stdout);
  asio::co_spawn(ioc, accept(acceptor, o.chunks), asio::detached);
  asio::signal_set signals{ioc, SIGINT, SIGTERM};
  signals.async_wait([&](const boost::system::error_code&, int) { ioc.stop(); });
  std::vector<std::thread> extra;
  for (int i = 1; i < o.threads; ++i) extra.emplace_back([&] { ioc.run(); });
  ioc.run();
  for (auto& t : extra) t.join();
  return 0;
}
