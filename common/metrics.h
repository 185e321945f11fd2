// metrics — counters, histograms and sampled gauges in the Prometheus text format (issue 28 §4;
// format 0.0.4: https://prometheus.io/docs/instrumenting/exposition_formats/). No C++ Prometheus
// client is packaged for Debian 12, and the text format is small: this is its writer.
//
// Series are created on first use. A family's TYPE and HELP come from describe() (a family never
// described is written as `untyped`). Histograms have fixed upper bounds (k_seconds_buckets, in
// seconds), written cumulatively with `le`, then _sum and _count. A registry holds at most
// k_max_series series; past that, new label sets of a family count under the one label set
// {overflow="true"} (a client cannot grow memory by inventing label values).
// Label values are escaped (\\, \", \n); names must be [a-zA-Z_:][a-zA-Z0-9_:]* (the caller's).
// Thread-safety: every method may be called from any thread (one mutex; a sample takes it once).
#pragma once

#include <array>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace warden::metrics {

using labels = std::vector<std::pair<std::string, std::string>>;

/// Upper bounds of the duration histograms, seconds (Prometheus client defaults, plus 30 and 120:
/// a model's answer takes seconds).
inline constexpr std::array<double, 13> k_seconds_buckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                             1,     2.5,  5,     10,   30,  120};
inline constexpr std::size_t k_max_series = 2000;

class registry {
 public:
  void describe(const std::string& name, const std::string& type, const std::string& help);
  /// Adds `v` (≥ 0) to a counter.
  void add(const std::string& name, const labels& l, double v = 1);
  /// Records one observation of a histogram (seconds).
  void observe(const std::string& name, const labels& l, double seconds);
  /// A gauge family read at render time: `sample` returns its series (called without the lock).
  using sampler = std::function<std::vector<std::pair<labels, double>>()>;
  void gauge(const std::string& name, const std::string& help, sampler sample);
  /// Every family, in name order.
  std::string render() const;

 private:
  struct histogram {
    std::array<std::uint64_t, k_seconds_buckets.size()> buckets{};
    std::uint64_t count = 0;
    double sum = 0;
  };
  struct family {
    std::string type = "untyped";
    std::string help;
    std::map<std::string, double> values;         ///< rendered label set → counter value
    std::map<std::string, histogram> histograms;  ///< rendered label set → histogram
    sampler sample;
  };
  std::string key_for(family& f, const labels& l);  ///< the label set, or the overflow one
  mutable std::mutex mu_;
  std::map<std::string, family> families_;
  std::size_t series_ = 0;
};

/// `{a="x",b="y"}` with escaped values; "" for no labels. Pure.
std::string render_labels(const labels& l);

/// The process's registry.
registry& global();

}  // namespace warden::metrics
