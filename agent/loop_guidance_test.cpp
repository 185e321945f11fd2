// agent/loop_guidance.h: the prompt nudge, the intent regex (with unsloth #8907's sign-offs) and
// the re-prompt caps.
#include <gtest/gtest.h>

#include <regex>

#include "agent/loop_guidance.h"

namespace warden::agent {
namespace {

tools::tool_info info(std::string name, tools::tool_traits traits) {
  tools::tool_info i;
  i.name = std::move(name);
  i.traits = traits;
  return i;
}

struct intent_case {
  const char* text;
  bool intent;
};

const intent_case k_intents[] = {
    {"I'll run the code to compute that.", true},
    {"Let me check the files in the workspace.", true},
    {"let me  calculate 17*23 with python", true},
    {"I will now compute the sum.", true},
    {"I'm going to search for it.", true},
    {"Let\xE2\x80\x99s try running it.", true},  // typographic apostrophe, "let's try"
    {"LET ME USE THE TERMINAL", true},
    {"Here's my plan: list the files, then count them.", true},
    {"First step: read the CSV.", true},
    {"Now I'll write the script.", true},
    {"Next, I will open the log.", true},
    // not intents: answers and sign-offs (unsloth #8907)
    {"Let me know if you need anything else.", false},
    {"The answer is 391. Let me know if you have other questions!", false},
    {"I'll be happy to help with anything else.", false},
    {"Let me explain: a list is mutable.", false},
    {"17 * 23 = 391.", false},
    {"", false},
    {"Toilet menu", false},  // "let me" inside words
    {"If you want, I can run it for you.", false},
};

TEST(LoopGuidance, IntentRegexTable) {
  for (const auto& c : k_intents) EXPECT_EQ(announces_intent(c.text), c.intent) << c.text;
}

TEST(LoopGuidance, ALongTurnIsAnAnswerNotAPlan) {
  std::string long_text = "I'll run the code. " + std::string(k_max_intent_chars, 'x');
  EXPECT_FALSE(announces_intent(long_text));
  EXPECT_TRUE(announces_intent(long_text.substr(0, k_max_intent_chars - 1)));
}

TEST(LoopGuidance, PromptNudgeHasTheDateAndOneTipPerFamily) {
  const auto py = info("python", {.runs_code = true});
  const auto term = info("terminal", {.runs_code = true});
  const auto html = info("render_html", {.once_per_answer = true});
  const auto web = info("web_search", {.reads_network = true, .read_only = true});
  const std::string all = tool_prompt_nudge("2026-12-03", {&py, &term, &html, &web}, false);
  EXPECT_EQ(all.rfind("The current date is 2026-12-03.\n", 0), 0u) << all;
  EXPECT_NE(all.find("run it with `python` or `terminal`"), std::string::npos) << all;
  EXPECT_NE(all.find("HTML to `render_html`"), std::string::npos) << all;
  EXPECT_NE(all.find("use `web_search`"), std::string::npos) << all;
  EXPECT_EQ(all.find("full access"), std::string::npos);
  const std::string only_html = tool_prompt_nudge("2026-12-03", {&html}, true);
  EXPECT_EQ(only_html.find("`python`"), std::string::npos);
  EXPECT_NE(only_html.find("You have full access"), std::string::npos);
  EXPECT_TRUE(std::regex_match(utc_date_today(), std::regex(R"(\d{4}-\d{2}-\d{2})")));
}

TEST(LoopGuidance, NudgeJoinsTheSystemMessageOrBecomesOne) {
  std::vector<model::message> msgs(1);
  msgs[0].role = model::role::user;
  msgs[0].content.emplace_back(model::text_part{"hi"});
  add_prompt_nudge(msgs, "N");
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].role, model::role::system);
  EXPECT_EQ(std::get<model::text_part>(msgs[0].content[0]).text, "N");
  std::get<model::text_part>(msgs[0].content[0]).text = "Be brief.";
  add_prompt_nudge(msgs, "N");
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(std::get<model::text_part>(msgs[0].content[0]).text, "Be brief.\n\nN");
}

const std::vector<std::string> k_names = {"python", "terminal"};

TEST(LoopGuidance, ThreeRepromptsBeforeAToolThenOneAfter) {
  reprompt_tracker t;
  for (int i = 0; i < k_reprompts_before_tool; ++i) {
    auto r = t.after_text_turn("I'll run step " + std::to_string(i), k_names);
    ASSERT_TRUE(r) << i;
    EXPECT_NE(r->find("`python` or `terminal`"), std::string::npos) << *r;
  }
  EXPECT_FALSE(t.after_text_turn("I'll run step 9", k_names));
  t.note_tool_ran();
  EXPECT_TRUE(t.after_text_turn("Let me check the output", k_names));
  EXPECT_FALSE(t.after_text_turn("Let me check the output again", k_names));
  EXPECT_EQ(t.sent(), 4);
}

TEST(LoopGuidance, NoRepromptForAnswersAfterADenialOrForARestatement) {
  reprompt_tracker answers;
  EXPECT_FALSE(answers.after_text_turn("The answer is 391. Let me know if you need more.", k_names));
  EXPECT_FALSE(answers.after_text_turn("I'll run it.", {}));  // no tools: nothing to ask for
  reprompt_tracker denied;
  denied.note_denial();
  EXPECT_FALSE(denied.after_text_turn("I'll run it.", k_names));
  reprompt_tracker same;
  EXPECT_TRUE(same.after_text_turn("I'll run the code.", k_names));
  EXPECT_FALSE(same.after_text_turn("  i'll RUN the   code. ", k_names));  // restated after normalising
  EXPECT_TRUE(same.after_text_turn("I'll run different code.", k_names));
}

}  // namespace
}  // namespace warden::agent
