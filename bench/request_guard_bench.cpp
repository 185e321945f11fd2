// Cost of issue 8's request checks, measured in the same process against baselines:
//   - parse_chat_request() (which reads the body with the duplicate-key check) against a plain
//     nlohmann parse of the same body, for a small chat and a 256-message ~300 KB conversation;
//   - the Host + Origin + Content-Type guard of one request, against that plain parse of the small
//     body (the least work any request does).
// Reports the median per call of each and the ratios. Target: the checked parse within 2x of the
// plain parse (it also validates every field), the guard a small fraction of the small parse.
// Usage: request_guard_bench [iterations]   (default 2000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/openai/chat_request.h"
#include "http/request_guard.h"

using namespace warden;

template <class F>
double median_ns(int iterations, F&& f) {
  std::vector<double> ns;
  ns.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ns.begin(), ns.begin() + static_cast<long>(ns.size() / 2), ns.end());
  return ns[ns.size() / 2];
}

std::string conversation(int messages) {
  json body = {{"model", "m"}, {"stream", true}, {"max_tokens", 100}, {"temperature", 0.7}};
  json msgs = json::array();
  msgs.push_back({{"role", "system"}, {"content", "You are a helpful assistant."}});
  for (int i = 0; i < messages; ++i) {
    msgs.push_back({{"role", i % 2 ? "assistant" : "user"},
                    {"content", std::string(1100, static_cast<char>('a' + i % 26))}});
  }
  body["messages"] = msgs;
  return body.dump();
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::max(10, std::atoi(argv[1])) : 2000;
  volatile std::size_t sink = 0;
  std::printf("request_guard_bench: %d iterations each, median per call\n", iterations);
  for (int messages : {1, 256}) {
    const std::string text = conversation(messages);
    const double plain = median_ns(iterations, [&] { sink = sink + json::parse(text).size(); });
    const double checked = median_ns(iterations, [&] { sink = sink + api::openai::parse_chat_request(text)->body.size(); });
    std::printf("  body %7zu bytes: plain parse %9.1f us, parse_chat_request %9.1f us, ratio %.2f\n", text.size(),
                plain / 1000, checked / 1000, checked / plain);
  }
  const std::string small = conversation(1);
  const double plain_small = median_ns(iterations, [&] { sink = sink + json::parse(small).size(); });
  const auto policy = http::make_guard_policy("127.0.0.1", 8888, {"warden.lan"}, {"http://localhost:3000"});
  http_request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.headers = {{"host", "127.0.0.1:8888"},         {"user-agent", "OpenAI/Python 3.57.0"},
                 {"content-type", "application/json"}, {"origin", "http://localhost:3000"},
                 {"authorization", "Bearer x"},       {"accept", "application/json"}};
  const double guard = median_ns(iterations * 10, [&] {
    bool ok = !http::check_host(req, policy) && !http::check_origin(req, policy).refused &&
              !http::check_json_content_type(req);
    sink = sink + (ok ? 1u : 0u);
  });
  std::printf("  guard (Host+Origin+Content-Type): %.0f ns, %.3f of a plain parse of the small body\n", guard,
              guard / plain_small);
  return sink == 0 ? 1 : 0;
}
