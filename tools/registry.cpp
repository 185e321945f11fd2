#include <algorithm>

#include "tools/tool.h"

namespace warden::tools {

std::string tool::status_text(const json&) const { return "Running " + info().label; }

void registry::add(std::unique_ptr<tool> t) { tools_.push_back(std::move(t)); }

tool* registry::find(std::string_view name) const {
  for (const auto& t : tools_) {
    if (t->info().name == name) return t.get();
  }
  return nullptr;
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
  return out;
}

}  // namespace warden::tools
