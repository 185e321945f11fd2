// A typed conversation as plain JSON, so the converters' round trips can be compared (the same
// view api/conformance/roundtrip_test.cpp takes: roles and parts; names and extra fields aside).
#pragma once

#include <cstdio>
#include <variant>
#include <vector>

#include "common/json_util.h"
#include "fuzz/fuzz_support.h"
#include "model/conversation.h"

namespace warden::fuzz {

inline json canon_part(const model::content_part& p) {
  if (const auto* t = std::get_if<model::text_part>(&p)) return {{"text", t->text}};
  if (const auto* r = std::get_if<model::reasoning_part>(&p)) return {{"reasoning", r->text}};
  if (const auto* c = std::get_if<model::tool_call_part>(&p)) return {{"call", {c->id, c->name, c->arguments}}};
  if (const auto* res = std::get_if<model::tool_result_part>(&p)) {
    return {{"result", {res->tool_call_id, res->content, res->is_error}}};
  }
  if (const auto* i = std::get_if<model::image_part>(&p)) return {{"image", i->url}};
  return {{"opaque", std::get<model::opaque_part>(p).value}};
}

inline json canon(const std::vector<model::message>& msgs) {
  json out = json::array();
  for (const auto& m : msgs) {
    json parts = json::array();
    for (const auto& p : m.content) parts.push_back(canon_part(p));
    out.push_back({{"role", model::to_string(m.role)}, {"parts", std::move(parts)}});
  }
  return out;
}

/// check(a == b), printing both conversations when they differ.
inline void check_same(const json& a, const json& b, const char* what) {
  if (a == b) return;
  std::fprintf(stderr, "first:  %s\nsecond: %s\n", dump_safe(a).c_str(), dump_safe(b).c_str());
  check(false, what);
}

}  // namespace warden::fuzz
