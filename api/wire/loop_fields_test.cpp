// take_loop_fields: website_policy and rag_scope (issue 25).
#include "api/wire/loop_fields.h"

#include <gtest/gtest.h>

namespace warden::api::wire {
namespace {

const std::vector<std::string> k_known = {"python", "web_search", "search_knowledge_base"};

std::optional<error> take(json body, agent::loop_options& o) { return take_loop_fields(body, o, k_known); }

TEST(LoopFields, WebsitePolicyIsNormalisedAndTakenOutOfTheBody) {
  agent::loop_options o;
  json body = {{"website_policy", {{"allowedDomains", {"*.Docs.Example.COM."}}, {"blocked_domains", {"ads.example"}}}}};
  ASSERT_FALSE(take_loop_fields(body, o, k_known));
  ASSERT_TRUE(o.website_policy);
  EXPECT_EQ(o.website_policy->allowed_domains, std::vector<std::string>{"docs.example.com"});
  EXPECT_EQ(o.website_policy->blocked_domains, std::vector<std::string>{"ads.example"});
  EXPECT_FALSE(body.contains("website_policy"));  // the upstream never sees it
  for (const json& bad : {json("x"), json{{"allowedDomains", "a.com"}}, json{{"allowedDomains", {"http://a.com"}}},
                          json{{"blockedDomains", {1}}}}) {
    agent::loop_options p;
    auto e = take({{"website_policy", bad}}, p);
    ASSERT_TRUE(e) << bad.dump();
    EXPECT_EQ(e->code, errc::invalid_request);
    EXPECT_EQ(e->param.rfind("website_policy", 0), 0u) << e->param;
  }
}

TEST(LoopFields, RagScopeNeedsAKnowledgeBaseAndChecksEachField) {
  agent::loop_options o;
  ASSERT_FALSE(take({{"rag_scope", {{"kb_id", "kb_a"}, {"kb_ids", {"kb_b", "kb_a"}}, {"default_top_k", 3},
                                    {"mode", "lexical"}, {"autoinject", false}, {"autoinject_min_score", 0.5}}}},
                    o));
  ASSERT_TRUE(o.rag);
  EXPECT_EQ(o.rag->kb_ids, (std::vector<std::string>{"kb_a", "kb_b"}));
  EXPECT_EQ(o.rag->default_top_k, 3);
  EXPECT_EQ(o.rag->mode, "lexical");
  EXPECT_FALSE(o.rag->autoinject);
  EXPECT_DOUBLE_EQ(o.rag->autoinject_min_score, 0.5);
  const std::vector<std::pair<json, std::string>> bad = {
      {json::object(), "rag_scope.kb_id"},
      {{{"kb_id", "../x"}}, "rag_scope.kb_id"},
      {{{"kb_ids", "kb_a"}}, "rag_scope.kb_ids"},
      {{{"kb_id", "kb_a"}, {"default_top_k", 9}}, "rag_scope.default_top_k"},
      {{{"kb_id", "kb_a"}, {"mode", "dense"}}, "rag_scope.mode"},
      {{{"kb_id", "kb_a"}, {"autoinject", "yes"}}, "rag_scope.autoinject"},
      {{{"kb_id", "kb_a"}, {"autoinject_min_score", 2}}, "rag_scope.autoinject_min_score"},
  };
  for (const auto& [scope, param] : bad) {
    agent::loop_options p;
    auto e = take({{"rag_scope", scope}}, p);
    ASSERT_TRUE(e) << scope.dump();
    EXPECT_EQ(e->param, param) << scope.dump();
  }
}

TEST(LoopFields, TheKnowledgeBaseToolIsOfferedOnlyWithARagScope) {
  // loop_options::selected drops needs_knowledge_base tools without a rag_scope (agent/gate.cpp);
  // the names a request may enable include it (the registry's).
  agent::loop_options o;
  ASSERT_FALSE(take({{"enable_tools", true}, {"enabled_tools", {"search_knowledge_base"}}}, o));
  EXPECT_FALSE(o.rag);
  EXPECT_EQ(o.enabled_tools, std::vector<std::string>{"search_knowledge_base"});
}

}  // namespace
}  // namespace warden::api::wire
