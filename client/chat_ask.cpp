// `warden chat`, the questions put to the person (chat_session.h): a card awaiting an answer,
// an MCP server's request for input (a form, or a URL to visit), and the approvals inbox.
#include <chrono>

#include "client/chat_session.h"

namespace warden::client {

namespace {

constexpr std::size_t k_card_lines = 24;
constexpr std::size_t k_message_lines = 12;

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The message of an error body (error.message), else the reply's error text.
std::string refusal_text(const http_reply& r) {
  if (auto j = parse_json(r.body); j && j->is_object() && (*j)["error"].is_object() && (*j)["error"]["message"].is_string()) {
    return (*j)["error"]["message"].get<std::string>();
  }
  return r.error_text();
}

/// How a default value is offered: "Enter for red", "Enter for yes".
std::string default_text(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.is_string() ? v.get<std::string>() : dump_safe(v);
}

}  // namespace

// --- cards ---------------------------------------------------------------------------------------

void chat_session::show_card(const tool_start_event& e) {
  std::string card = io_.look.bold(io_.look.yellow("» " + one_line(e.tool.empty() ? "tool" : e.tool, 40))) + "\n";
  card += indent(format_arguments(e.tool, e.arguments, k_card_lines), "    ") + "\n";
  if (e.risk) {
    const std::string risk = format_risk(*e.risk);
    if (!risk.empty()) card += "  " + (e.risk->level == "high" ? io_.look.red(risk) : io_.look.dim(risk)) + "\n";
  }
  write_info(card);
}

std::optional<decision> chat_session::prompt_card() {
  const std::string prompt = mark_prompt_escapes("  " + io_.look.bold("allow?") + " " + std::string(k_answer_choices) + " ");
  for (;;) {
    const auto in = io_.editor->read_line(prompt, false);
    if (in.st == line_editor::status::interrupted) return std::nullopt;
    if (in.st == line_editor::status::eof) {
      write_info("\n");
      return decision::deny;
    }
    if (const auto d = parse_answer(in.text)) return d;
    write_info("  answer y (allow once), a (always in this chat), A (always), or n (deny)\n");
  }
}

void chat_session::send_decision(const std::string& approval_id, decision d, const std::string& session_id) {
  const http_reply r = api_.post_json("/api/inference/tool-confirm", confirm_body(approval_id, d, session_id));
  if (r.status == 404) {
    write_info(io_.look.dim("  (this call was already decided, or its run ended)") + "\n");
    return;
  }
  if (!r.ok()) {
    error("could not send the answer: " + r.error_text());
    return;
  }
  if (d == decision::allow_session || d == decision::allow_always) {
    auto body = parse_json(r.body);
    std::string id;
    if (body && body->is_object() && (*body)["rule"].is_object() && (*body)["rule"]["id"].is_string()) {
      id = (*body)["rule"]["id"].get<std::string>();
    }
    if (body && body->is_object() && (*body)["note"].is_string()) {  // allowed once: nothing remembered
      write_info(io_.look.dim("  " + one_line((*body)["note"].get<std::string>(), 300)) + "\n");
      return;
    }
    const char* scope = d == decision::allow_session ? "for this chat" : "for every session";
    write_info(io_.look.dim("  remembered " + std::string(scope) + (id.empty() ? "" : " as " + one_line(id, 40)) +
                            " (/rules lists it)") + "\n");
  }
}

// --- an MCP server's request for input -------------------------------------------------------------

void chat_session::show_elicitation(const elicitation_event& e) {
  const std::string server = one_line(e.server.empty() ? "an MCP server" : e.server, 40);
  const bool url = e.mode == "url";
  std::string text = io_.look.bold(io_.look.yellow("? " + server + (url ? " asks you to visit a page" : " asks"))) +
                     io_.look.dim(" (" + one_line(e.tool, 60) + ")") + "\n";
  if (!e.message.empty()) text += indent(brief_result(e.message, k_message_lines), "    ") + "\n";
  if (url) {
    text += "    " + io_.look.cyan(one_line(e.url, 400)) + "\n";
    text += io_.look.dim("  (warden chat does not open it: open it yourself if you trust it, then answer)") + "\n";
  } else {
    text += io_.look.dim("  Enter skips a field that is not required; Ctrl-C cancels") + "\n";
  }
  write_info(text);
}

chat_session::asked chat_session::ask_field(const elicitation_field& f, json& content) {
  if (!f.description.empty()) write_info(io_.look.dim("  " + one_line(f.description, 200)) + "\n");
  if (!f.choices.empty()) {
    std::string list;
    for (std::size_t i = 0; i < f.choices.size(); ++i) {
      const std::string& shown = f.choice_labels.empty() ? f.choices[i] : f.choice_labels[i];
      list += "    " + std::to_string(i + 1) + ") " + one_line(shown, 80) + "\n";
    }
    write_info(list);
  }
  const std::string when_empty = f.default_value ? "(Enter for " + one_line(default_text(*f.default_value), 40) + ")"
                                 : f.required    ? "(required)"
                                                 : "(Enter to skip)";
  const std::string prompt = mark_prompt_escapes("  " + io_.look.bold(one_line(field_label(f), 60)) + " · " +
                                                 one_line(field_hint(f), 60) + " " + io_.look.dim(when_empty) + ": ");
  for (;;) {
    const auto in = io_.editor->read_line(prompt, false);
    if (in.st == line_editor::status::interrupted) return asked::interrupted;
    if (in.st == line_editor::status::eof) {
      write_info("\n");
      return asked::eof;
    }
    if (in.text.find_first_not_of(" \t") == std::string::npos) {
      if (f.default_value) content[f.name] = *f.default_value;
      if (f.default_value || !f.required) return asked::ok;
      write_info("  " + io_.look.yellow("this field is required") + "\n");
      continue;
    }
    std::string why;
    if (auto v = parse_field_value(f, in.text, why)) {
      content[f.name] = std::move(*v);
      return asked::ok;
    }
    write_info("  " + io_.look.yellow(one_line(why, 200)) + "\n");
  }
}

chat_session::asked chat_session::ask_send(bool url_mode, elicit_decision& d) {
  const std::string_view choices = url_mode ? k_url_choices : k_send_choices;
  const std::string prompt = mark_prompt_escapes("  " + io_.look.bold(std::string(choices)) + " ");
  for (;;) {
    const auto in = io_.editor->read_line(prompt, false);
    if (in.st == line_editor::status::interrupted) return asked::interrupted;
    if (in.st == line_editor::status::eof) {
      write_info("\n");
      return asked::eof;
    }
    if (const auto got = parse_elicit_answer(in.text)) {
      d = *got;
      return asked::ok;
    }
    write_info(url_mode ? "  answer y (done), d (decline) or c (cancel)\n" : "  answer y (send), d (decline) or c (cancel)\n");
  }
}

bool chat_session::send_elicitation(const elicitation_event& e, elicit_decision d, const json& content,
                                    const std::string& session_id, std::string& field) {
  field.clear();
  const http_reply r = api_.post_json("/api/inference/tool-confirm", elicit_confirm_body(e.approval_id, d, content, session_id));
  if (r.status == 404) {
    write_info(io_.look.dim("  (this question was already answered, or its call ended)") + "\n");
    return true;
  }
  if (r.status == 400 && d == elicit_decision::accept) {
    write_info("  " + io_.look.red("not sent: " + one_line(refusal_text(r), 300)) + "\n");
    field = error_field(r.body);
    return false;
  }
  if (!r.ok()) {
    error("could not send the answer: " + r.error_text());
    return true;
  }
  const char* said = d == elicit_decision::accept ? "  sent" : d == elicit_decision::decline ? "  declined" : "  cancelled";
  write_info(io_.look.dim(said) + "\n");
  return true;
}

bool chat_session::answer_elicitation(const elicitation_event& e, const std::string& session_id) {
  const bool url_mode = e.mode == "url";
  const std::vector<elicitation_field> fields = url_mode ? std::vector<elicitation_field>{} : form_fields(e.schema);
  std::vector<const elicitation_field*> to_ask;
  for (const auto& f : fields) to_ask.push_back(&f);
  json content = json::object();
  std::string field;
  auto give_up = [&](asked how) {  // Ctrl-C cancels, the end of input declines
    const elicit_decision d = how == asked::interrupted ? elicit_decision::cancel : elicit_decision::decline;
    send_elicitation(e, d, json::object(), session_id, field);
    return how != asked::interrupted;
  };
  for (;;) {
    for (const elicitation_field* f : to_ask) {
      if (const asked a = ask_field(*f, content); a != asked::ok) return give_up(a);
    }
    if (!to_ask.empty()) write_info(io_.look.dim("  answer: " + one_line(dump_safe(content), 300)) + "\n");
    elicit_decision d = elicit_decision::decline;
    if (const asked a = ask_send(url_mode, d); a != asked::ok) return give_up(a);
    if (send_elicitation(e, d, content, session_id, field)) return true;
    // refused: ask the field the server named again, or the whole form
    to_ask.clear();
    for (const auto& f : fields) {
      if (f.name == field) to_ask.push_back(&f);
    }
    if (to_ask.empty()) {
      content = json::object();
      for (const auto& f : fields) to_ask.push_back(&f);
    } else {
      content.erase(field);
    }
  }
}

// --- the approvals inbox ---------------------------------------------------------------------------

bool chat_session::answer_inbox_item(const inbox_item& item) {
  if (item.kind == "elicitation") {
    show_elicitation(item.question);
    return answer_elicitation(item.question, item.session_id);
  }
  show_card(item.card);
  const auto d = prompt_card();
  if (!d) return false;
  send_decision(item.card.approval_id, *d, item.session_id);
  return true;
}

int chat_session::inbox(const std::string& session) {
  const http_reply r = api_.get("/api/inference/approvals" + (session.empty() ? std::string() : "?session_id=" + url_encode(session)));
  const auto items = r.ok() ? parse_inbox(r.body) : std::nullopt;
  if (!items) {
    error("could not read the inbox: " + (r.ok() ? std::string("unexpected answer") : r.error_text()));
    return 1;
  }
  const std::string where = session.empty() ? "" : " in session " + one_line(session, 64);
  if (items->empty()) {
    note("nothing is waiting for an answer" + where);
    return 0;
  }
  note(std::to_string(items->size()) + (items->size() == 1 ? " question waits" : " questions wait") + where + ":");
  const std::int64_t now = unix_ms_now();
  for (std::size_t i = 0; i < items->size(); ++i) note("  " + std::to_string(i + 1) + ". " + inbox_line((*items)[i], now));
  if (io_.editor == nullptr) {
    note("(stdin is not a terminal: nothing was answered)");
    return 0;
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    std::string counter = std::to_string(i + 1);
    counter += "/";
    counter += std::to_string(items->size());
    note(io_.look.dim("[" + counter + "]"));
    if (!answer_inbox_item((*items)[i])) {
      note(io_.look.yellow("stopped") + io_.look.dim(" (what was not answered keeps waiting)"));
      return 130;
    }
  }
  return 0;
}

}  // namespace warden::client
