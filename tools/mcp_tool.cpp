// The MCP tool (mcp_manager.h): one server tool behind warden's gate, called with tools/call.
#include <boost/asio/awaitable.hpp>

#include "tools/mcp_manager.h"

namespace warden::tools {

namespace asio = boost::asio;

namespace {

json cancel_marker() { return json{{"warden", "cancel"}}; }
bool is_cancel_marker(const json& m) { return m.is_object() && m.contains("warden") && m["warden"] == "cancel"; }
json decline_answer() { return json{{"action", "decline"}}; }
json cancelled_params(std::int64_t id, const std::string& why) { return json{{"requestId", id}, {"reason", why}}; }
json call_params(const std::string& name, const json& args) { return json{{"name", name}, {"arguments", args}}; }

std::string progress_line(const json& params) {
  std::string line;
  if (params.contains("message") && params["message"].is_string()) line = params["message"].get<std::string>();
  if (params.contains("progress") && params["progress"].is_number()) {
    std::string n = params["progress"].dump();
    if (params.contains("total") && params["total"].is_number()) n += "/" + params["total"].dump();
    if (line.empty()) {
      line = "progress ";
      line += n;
    } else {
      line += " (";
      line += n;
      line += ")";
    }
  }
  return line + "\n";
}

class mcp_tool final : public tool {
 public:
  mcp_tool(mcp_manager& mgr, std::string server, const std::string& qualified, const mcp::tool_def& def, bool trusted)
      : mgr_(mgr), server_(std::move(server)), tool_(def.name) {
    info_.name = qualified;
    info_.label = server_ + " " + def.name;
    info_.description = "[" + server_ + "] " + (def.description.empty() ? def.title : def.description);
    info_.parameters = def.input_schema;
    info_.traits = mcp::traits_for(def.annotations, trusted);
  }

  const tool_info& info() const override { return info_; }
  std::optional<std::string> unavailable(isolation) const override { return std::nullopt; }
  std::string status_text(const json&) const override { return "Calling " + server_ + ": " + tool_; }

  asio::awaitable<tool_result> run(const json& args, tool_context& ctx) override {
    auto sess = co_await mgr_.session_for(server_);
    if (!sess) co_return error_result(sess.error().message);
    std::shared_ptr<mcp::session> s = *sess;
    const auto cfg = mgr_.config_of(server_);
    const auto quiet_limit = std::chrono::milliseconds(cfg ? cfg->timeout_ms : 60000);
    auto started = s->start_request("tools/call", call_params(tool_, args), true);
    if (!started) co_return error_result(started.error().message);
    const auto [id, box] = *started;
    cancel_token::registration hook;
    if (ctx.cancel) {
      std::weak_ptr<mcp::mailbox> weak = box;
      hook = ctx.cancel->on_cancel([weak] {
        if (auto b = weak.lock()) b->push(cancel_marker());
      });
    }
    co_return co_await follow(s, id, box, ctx, quiet_limit);
  }

 private:
  /// Waits for the call's answer, streaming progress and answering elicitations meanwhile.
  asio::awaitable<tool_result> follow(std::shared_ptr<mcp::session> s, std::int64_t id, std::shared_ptr<mcp::mailbox> box,
                                      tool_context& ctx, std::chrono::milliseconds quiet_limit) {
    using clock = std::chrono::steady_clock;
    const auto begun = clock::now();
    auto last_heard = begun;
    while (true) {
      const auto now = clock::now();
      const bool hard_over = ctx.timeout.count() > 0 && now - begun >= ctx.timeout;
      const bool quiet_over = now - last_heard >= quiet_limit;
      if (hard_over || quiet_over) {
        s->forget(id);
        (void)s->notify("notifications/cancelled", cancelled_params(id, "timed out"));
        const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - begun).count();
        co_return error_result("The MCP tool " + tool_ + " on '" + server_ + "' timed out after " + std::to_string(secs) + " s.");
      }
      auto m = co_await box->next(ctx.idle_interval);
      if (!m) co_return error_result(m.error().message);
      if (!*m) {
        if (ctx.on_idle) co_await ctx.on_idle();
        continue;
      }
      json msg = std::move(**m);
      if (is_cancel_marker(msg)) {
        s->forget(id);
        (void)s->notify("notifications/cancelled", cancelled_params(id, "cancelled by the user"));
        co_return error_result("The MCP tool call was cancelled.");
      }
      last_heard = clock::now();
      const mcp::incoming in = mcp::classify(msg);
      if (in.kind == mcp::message_kind::notification) {
        const std::string line = progress_line(in.params);
        if (ctx.on_output && line.size() > 1) co_await ctx.on_output(line);
        continue;
      }
      if (in.kind == mcp::message_kind::request) {
        co_await answer_elicitation(*s, in, ctx);
        last_heard = clock::now();
        continue;
      }
      if (in.kind == mcp::message_kind::error_response) {
        co_return error_result("The MCP server '" + server_ + "' answered with an error: " + in.error_message);
      }
      const mcp::call_output out = mcp::flatten_result(in.result);
      std::string text = out.text.size() > k_max_result_chars ? out.text.substr(0, k_max_result_chars) + "\n[cut]" : out.text;
      co_return out.is_error ? error_result(std::move(text)) : ok_result(std::move(text));
    }
  }

  asio::awaitable<void> answer_elicitation(mcp::session& s, const mcp::incoming& in, tool_context& ctx) {
    auto req = mcp::parse_elicitation(in.params);
    if (!req) {
      (void)s.respond_error(in.id, mcp::k_invalid_params, req.error().message);
      co_return;
    }
    json answer = decline_answer();
    if (ctx.elicit) {
      json params = in.params;
      params["server"] = server_;
      answer = co_await ctx.elicit(std::move(params));
    }
    (void)s.respond(in.id, std::move(answer));
  }

  mcp_manager& mgr_;
  std::string server_;
  std::string tool_;
  tool_info info_;
};

}  // namespace

std::shared_ptr<tool> make_mcp_tool(mcp_manager& mgr, const std::string& server_id, const std::string& qualified,
                                    const mcp::tool_def& def, bool trusted) {
  return std::make_shared<mcp_tool>(mgr, server_id, qualified, def, trusted);
}

}  // namespace warden::tools
