#include <algorithm>

#include "tools/tool.h"

namespace warden::tools {

std::string tool::status_text(const json&) const { return "Running " + info().label; }
tool_traits tool::traits_for_call(const json&) const { return info().traits; }

void registry::add(std::unique_ptr<tool> t) { tools_.push_back(std::move(t)); }

tool* registry::find(std::string_view name) const {
  for (const auto& t : tools_) {
    if (t->info().name == name) return t.get();
  }
  std::lock_guard lk(dynamic_mu_);
  for (const auto& t : dynamic_) {
    if (t->info().name == name) return t.get();
  }
  return nullptr;
}

void registry::set_dynamic(std::vector<std::shared_ptr<tool>> ts) {
  std::lock_guard lk(dynamic_mu_);
  for (auto& old : dynamic_) {
    const bool kept = std::find(ts.begin(), ts.end(), old) != ts.end();
    const bool retired = std::find(retired_.begin(), retired_.end(), old) != retired_.end();
    if (!kept && !retired) retired_.push_back(old);
  }
  dynamic_ = std::move(ts);
}

std::vector<tool*> registry::select_dynamic(const std::optional<std::vector<std::string>>& names) const {
  std::vector<tool*> out;
  std::lock_guard lk(dynamic_mu_);
  for (const auto& t : dynamic_) {
    if (!names || std::find(names->begin(), names->end(), t->info().name) != names->end()) out.push_back(t.get());
  }
  return out;
}

bool registry::is_dynamic(std::string_view name) const {
  std::lock_guard lk(dynamic_mu_);
  return std::any_of(dynamic_.begin(), dynamic_.end(), [name](const auto& t) { return t->info().name == name; });
}

std::vector<tool*> registry::all() const {
  std::vector<tool*> out;
  for (const auto& t : tools_) out.push_back(t.get());
  return out;
}

std::vector<tool*> registry::select(const std::optional<std::vector<std::string>>& names) const {
  std::vector<tool*> out;
  for (const auto& t : tools_) {
    if (!names || std::find(names->begin(), names->end(), t->info().name) != names->end()) out.push_back(t.get());
  }
  return out;
}

std::vector<std::string> registry::names() const {
  std::vector<std::string> out;
  for (const auto& t : tools_) out.push_back(t->info().name);
  std::lock_guard lk(dynamic_mu_);
  for (const auto& t : dynamic_) out.push_back(t->info().name);
  return out;
}

}  // namespace warden::tools
