#include "common/metrics.h"

#include <gtest/gtest.h>

#include <thread>

namespace warden::metrics {
namespace {

TEST(Metrics, CountersHistogramsAndGaugesInTheTextFormat) {
  registry r;
  r.describe("t_requests_total", "counter", "Requests.");
  r.describe("t_seconds", "histogram", "Durations.");
  r.add("t_requests_total", {{"route", "/v1/chat/completions"}, {"status", "200"}});
  r.add("t_requests_total", {{"route", "/v1/chat/completions"}, {"status", "200"}}, 2);
  r.observe("t_seconds", {{"route", "/x"}}, 0.02);
  r.observe("t_seconds", {{"route", "/x"}}, 3);
  r.gauge("t_up", "Up.", [] { return std::vector<std::pair<labels, double>>{{{{"engine", "chat"}}, 1}}; });
  const std::string out = r.render();
  EXPECT_NE(out.find("# TYPE t_requests_total counter\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_requests_total{route=\"/v1/chat/completions\",status=\"200\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_seconds_bucket{route=\"/x\",le=\"0.01\"} 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_seconds_bucket{route=\"/x\",le=\"0.025\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_seconds_bucket{route=\"/x\",le=\"5\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_seconds_bucket{route=\"/x\",le=\"+Inf\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_seconds_count{route=\"/x\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_seconds_sum{route=\"/x\"} 3.02\n"), std::string::npos) << out;
  EXPECT_NE(out.find("# TYPE t_up gauge\nt_up{engine=\"chat\"} 1\n"), std::string::npos) << out;
}

TEST(Metrics, LabelValuesAreEscapedAndSeriesAreCapped) {
  EXPECT_EQ(render_labels({{"a", "x\"y\\z\nw"}}), "{a=\"x\\\"y\\\\z\\nw\"}");
  registry r;
  for (std::size_t i = 0; i < k_max_series + 50; ++i) r.add("t_total", {{"k", std::to_string(i)}});
  const std::string out = r.render();
  EXPECT_NE(out.find("t_total{overflow=\"true\"} 50\n"), std::string::npos);
  EXPECT_EQ(out.find("k=\"" + std::to_string(k_max_series) + "\""), std::string::npos);
}

TEST(Metrics, ConcurrentAddsAreAllCounted) {
  registry r;
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) ts.emplace_back([&r] { for (int i = 0; i < 1000; ++i) r.add("t_total", {}); });
  for (auto& t : ts) t.join();
  EXPECT_NE(r.render().find("t_total 4000\n"), std::string::npos);
}

}  // namespace
}  // namespace warden::metrics
