#include "common/metrics.h"

#include <cmath>
#include <cstdio>

namespace warden::metrics {

namespace {

std::string escape(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

/// `{…}` with one more label appended (the histogram's `le`).
std::string with_le(const std::string& set, const std::string& le) {
  const std::string extra = "le=\"" + le + "\"";
  if (set.empty()) return "{" + extra + "}";
  return set.substr(0, set.size() - 1) + "," + extra + "}";
}

}  // namespace

std::string render_labels(const labels& l) {
  if (l.empty()) return "";
  std::string out = "{";
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (i) out += ",";
    out += l[i].first + "=\"" + escape(l[i].second) + "\"";
  }
  return out + "}";
}

void registry::describe(const std::string& name, const std::string& type, const std::string& help) {
  std::lock_guard lock(mu_);
  family& f = families_[name];
  f.type = type;
  f.help = help;
}

std::string registry::key_for(family& f, const labels& l) {
  std::string key = render_labels(l);
  if (f.values.count(key) || f.histograms.count(key)) return key;
  if (series_ >= k_max_series) return render_labels({{"overflow", "true"}});
  ++series_;
  return key;
}

void registry::add(const std::string& name, const labels& l, double v) {
  if (!(v >= 0)) return;
  std::lock_guard lock(mu_);
  family& f = families_[name];
  f.values[key_for(f, l)] += v;
}

void registry::observe(const std::string& name, const labels& l, double seconds) {
  std::lock_guard lock(mu_);
  family& f = families_[name];
  histogram& h = f.histograms[key_for(f, l)];
  for (std::size_t i = 0; i < k_seconds_buckets.size(); ++i) {
    if (seconds <= k_seconds_buckets[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += seconds;
}

void registry::gauge(const std::string& name, const std::string& help, sampler sample) {
  std::lock_guard lock(mu_);
  family& f = families_[name];
  f.type = "gauge";
  f.help = help;
  f.sample = std::move(sample);
}

std::string registry::render() const {
  std::map<std::string, family> copy;
  {
    std::lock_guard lock(mu_);
    copy = families_;
  }
  std::string out;
  for (auto& [name, f] : copy) {
    if (f.sample) {
      for (auto& [l, v] : f.sample()) f.values[render_labels(l)] = v;
    }
    if (f.values.empty() && f.histograms.empty()) continue;
    if (!f.help.empty()) out += "# HELP " + name + " " + f.help + "\n";
    out += "# TYPE " + name + " " + f.type + "\n";
    for (const auto& [set, v] : f.values) out += name + set + " " + number(v) + "\n";
    for (const auto& [set, h] : f.histograms) {
      for (std::size_t i = 0; i < k_seconds_buckets.size(); ++i) {
        out += name + "_bucket" + with_le(set, number(k_seconds_buckets[i])) + " " + std::to_string(h.buckets[i]) + "\n";
      }
      out += name + "_bucket" + with_le(set, "+Inf") + " " + std::to_string(h.count) + "\n";
      out += name + "_sum" + set + " " + number(h.sum) + "\n";
      out += name + "_count" + set + " " + std::to_string(h.count) + "\n";
    }
  }
  return out;
}

registry& global() {
  static registry r;
  return r;
}

}  // namespace warden::metrics
