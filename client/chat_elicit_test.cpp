// Answering an MCP server's request for input, and the approvals inbox: the pure part
// (client/chat_elicit.h).
#include "client/chat_elicit.h"

#include <gtest/gtest.h>

namespace warden::client {
namespace {

const json k_schema = json::parse(R"({"type":"object","properties":{
  "name":{"type":"string","title":"Name"},
  "age":{"type":"integer","minimum":0},
  "color":{"type":"string","enum":["red","green"],"enumNames":["Red","Green"]},
  "subscribe":{"type":"boolean","description":"Send me news","default":false},
  "code":{"type":"string","minLength":2,"maxLength":4},
  "ratio":{"type":"number","minimum":0,"maximum":1},
  "mail":{"type":"string","format":"email"},
  "junk":7},
  "required":["name","code","name","ghost"]})");

elicitation_field field(const std::string& name) {
  for (auto& f : form_fields(k_schema)) {
    if (f.name == name) return f;
  }
  ADD_FAILURE() << "no field " << name;
  return {};
}

TEST(ChatElicit, FieldsRequiredFirstThenByName) {
  const auto fields = form_fields(k_schema);
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f.name + (f.required ? "*" : ""));
  EXPECT_EQ(names, (std::vector<std::string>{"name*", "code*", "age", "color", "mail", "ratio", "subscribe"}));
  EXPECT_TRUE(form_fields(json::array()).empty());
  EXPECT_TRUE(form_fields(json::parse(R"({"type":"object"})")).empty());
  const auto color = field("color");
  EXPECT_EQ(color.choices, (std::vector<std::string>{"red", "green"}));
  EXPECT_EQ(color.choice_labels, (std::vector<std::string>{"Red", "Green"}));
  EXPECT_EQ(field("subscribe").default_value, json(false));
  EXPECT_EQ(field("subscribe").description, "Send me news");
}

TEST(ChatElicit, LabelsAndHints) {
  struct row {
    const char* name;
    const char* label;
    const char* hint;
  };
  const row rows[] = {
      {"name", "Name", "text"},
      {"age", "age", "whole number, at least 0"},
      {"color", "color", "choose 1-2"},
      {"subscribe", "subscribe", "y/n"},
      {"code", "code", "text, 2 to 4 characters"},
      {"ratio", "ratio", "number, 0 to 1"},
      {"mail", "mail", "email"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    const auto f = field(r.name);
    EXPECT_EQ(field_label(f), r.label);
    EXPECT_EQ(field_hint(f), r.hint);
  }
}

TEST(ChatElicit, TypedValues) {
  struct row {
    const char* field;
    const char* typed;
    const char* value;  ///< JSON; nullptr: refused
    const char* error;
  };
  const row rows[] = {
      {"name", "  Ada Lovelace ", R"("  Ada Lovelace ")", ""},
      {"age", " 36 ", "36", ""},
      {"age", "-1", nullptr, "must be at least 0"},
      {"age", "3.5", nullptr, "type a whole number"},
      {"age", "abc", nullptr, "type a whole number"},
      {"age", "99999999999999999999", nullptr, "type a whole number"},
      {"ratio", "0.25", "0.25", ""},
      {"ratio", "1", "1", ""},
      {"ratio", "1.5", nullptr, "must be 0 to 1"},
      {"ratio", "nan", nullptr, "type a number"},
      {"ratio", "0x1", nullptr, "type a number"},
      {"subscribe", "Y", "true", ""},
      {"subscribe", "no", "false", ""},
      {"subscribe", "True", "true", ""},
      {"subscribe", "maybe", nullptr, "type y or n"},
      {"color", "2", R"("green")", ""},
      {"color", "red", R"("red")", ""},
      {"color", "3", nullptr, "type a number from 1 to 2"},
      {"color", "Red", nullptr, "type a number from 1 to 2"},
      {"code", "abc", R"("abc")", ""},
      {"code", "äöü", R"("äöü")", ""},  // characters, not bytes
      {"code", "a", nullptr, "must be 2 to 4 characters (this is 1)"},
      {"code", "abcde", nullptr, "must be 2 to 4 characters (this is 5)"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(r.field) + " <- " + r.typed);
    std::string error;
    const auto v = parse_field_value(field(r.field), r.typed, error);
    if (r.value == nullptr) {
      EXPECT_FALSE(v.has_value());
    } else {
      ASSERT_TRUE(v.has_value());
      EXPECT_EQ(*v, json::parse(r.value));
    }
    EXPECT_EQ(error, r.error);
  }
}

TEST(ChatElicit, AnswersAndBodies) {
  EXPECT_EQ(parse_elicit_answer(" y "), elicit_decision::accept);
  EXPECT_EQ(parse_elicit_answer("YES"), elicit_decision::accept);
  EXPECT_EQ(parse_elicit_answer("d"), elicit_decision::decline);
  EXPECT_EQ(parse_elicit_answer("n"), elicit_decision::decline);
  EXPECT_EQ(parse_elicit_answer("Decline"), elicit_decision::decline);
  EXPECT_EQ(parse_elicit_answer("c"), elicit_decision::cancel);
  EXPECT_EQ(parse_elicit_answer("cancel"), elicit_decision::cancel);
  EXPECT_FALSE(parse_elicit_answer("").has_value());
  EXPECT_FALSE(parse_elicit_answer("a").has_value());
  EXPECT_EQ(elicit_confirm_body("ap", elicit_decision::accept, json::parse(R"({"name":"Ada"})"), "s1"),
            json::parse(R"({"approval_id":"ap","decision":"accept","session_id":"s1","content":{"name":"Ada"}})"));
  EXPECT_EQ(elicit_confirm_body("ap", elicit_decision::accept, json(), "s1")["content"], json::object());
  EXPECT_EQ(elicit_confirm_body("ap", elicit_decision::decline, json::parse(R"({"x":1})"), "s1"),
            json::parse(R"({"approval_id":"ap","decision":"decline","session_id":"s1"})"));
  EXPECT_EQ(elicit_confirm_body("ap", elicit_decision::cancel, json::object(), "s1")["decision"], "cancel");
  EXPECT_EQ(error_field(R"({"error":{"message":"'age' is below the minimum","param":"content.age"}})"), "age");
  EXPECT_EQ(error_field(R"({"error":{"message":"x","param":"decision"}})"), "");
  EXPECT_EQ(error_field(R"({"error":{"message":"x","param":null}})"), "");
  EXPECT_EQ(error_field("not json"), "");
}

TEST(ChatInbox, ItemsAndLines) {
  const auto items = parse_inbox(R"J({"object":"list","data":[
    {"approval_id":"a1","session_id":"s1","owner":"","tool":"python","tool_call_id":"c1",
     "arguments":{"code":"print(1)"},"risk":{"level":"low","reasons":[]},"created_at_ms":1000,
     "expires_at_ms":61000,"kind":"tool_call"},
    {"approval_id":"a2","session_id":"s2","tool":"fake__ask","tool_call_id":"c2","arguments":{"question":"Who?"},
     "risk":null,"expires_at_ms":10500,"kind":"elicitation",
     "elicitation":{"server":"fake","message":"Who are you?","mode":"form",
       "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}},
    {"approval_id":"a3","session_id":"s2","tool":"fake__ask_url","kind":"elicitation",
     "elicitation":{"server":"fake","message":"Sign in\nnow","mode":"url","url":"https://example.com/"}},
    {"session_id":"no-id"}, 5]})J");
  ASSERT_TRUE(items.has_value());
  ASSERT_EQ(items->size(), 3u);
  const auto& call = (*items)[0];
  EXPECT_EQ(call.kind, "tool_call");
  EXPECT_TRUE(call.card.awaiting);
  EXPECT_EQ(call.card.approval_id, "a1");
  EXPECT_EQ(call.card.arguments, json::parse(R"J({"code":"print(1)"})J"));
  ASSERT_TRUE(call.card.risk.has_value());
  EXPECT_EQ(call.card.risk->level, "low");
  const auto& form = (*items)[1];
  EXPECT_EQ(form.question.approval_id, "a2");
  EXPECT_EQ(form.question.server, "fake");
  EXPECT_EQ(form.question.schema["properties"]["name"]["type"], "string");
  EXPECT_EQ((*items)[2].question.mode, "url");
  EXPECT_EQ((*items)[2].question.url, "https://example.com/");

  EXPECT_EQ(inbox_line(call, 1000), "python · print(1) · session s1 · expires in 60 s");
  EXPECT_EQ(inbox_line(form, 1000), "fake asks: Who are you? (fake__ask) · session s2 · expires in 10 s");
  EXPECT_EQ(inbox_line((*items)[2], 1000), "fake asks: Sign in\\nnow (fake__ask_url, a URL) · session s2");
  EXPECT_EQ(inbox_line(call, 99000), "python · print(1) · session s1 · expires in 0 s");

  EXPECT_TRUE(parse_inbox(R"({"data":[]})")->empty());
  EXPECT_FALSE(parse_inbox(R"({"error":{}})").has_value());
  EXPECT_FALSE(parse_inbox("<html>").has_value());
}

}  // namespace
}  // namespace warden::client
