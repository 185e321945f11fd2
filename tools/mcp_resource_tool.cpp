// read_mcp_resource (mcp_manager.h; issue 26): reads a resource of an MCP server (resources/read).
#include "tools/mcp_manager.h"

namespace warden::tools {

namespace asio = boost::asio;

namespace {

json read_params(const std::string& uri) { return json{{"uri", uri}}; }

std::string string_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// resources/read's contents as text: text parts as they are, a blob as "[blob: mime, N bytes]".
std::string contents_text(const json& r) {
  std::string out;
  const json contents = r.value("contents", json::array());
  for (const auto& c : contents) {
    if (!c.is_object()) continue;
    if (!out.empty()) out += "\n";
    if (c.contains("text") && c["text"].is_string()) {
      out += c["text"].get<std::string>();
    } else {
      out += "[blob: " + string_of(c, "mimeType") + ", " + std::to_string(string_of(c, "blob").size() / 4 * 3) + " bytes]";
    }
  }
  return out.empty() ? std::string("(empty resource)") : out;
}

class resource_tool final : public tool {
 public:
  resource_tool(mcp_manager& mgr, std::vector<std::string> servers, std::vector<std::string> trusted, std::string listing)
      : mgr_(mgr), trusted_(std::move(trusted)) {
    info_.name = "read_mcp_resource";
    info_.label = "MCP resource";
    info_.description = "Reads a resource (a document, a record) that an MCP server offers, by its URI." + listing;
    info_.parameters = json{{"type", "object"},
                            {"properties",
                             {{"server", {{"type", "string"}, {"enum", servers}, {"description", "the MCP server's id"}}},
                              {"uri", {{"type", "string"}, {"description", "the resource's URI"}}}}},
                            {"required", {"server", "uri"}}};
  }

  const tool_info& info() const override { return info_; }
  std::optional<std::string> unavailable(isolation) const override { return std::nullopt; }
  std::string status_text(const json& args) const override { return "Reading " + string_of(args, "uri"); }

  /// Always safe for a server the user trusts; asks otherwise (a resource may be anything).
  tool_traits traits_for_call(const json& args) const override {
    tool_traits t = info_.traits;
    const std::string server = string_of(args, "server");
    t.read_only = std::find(trusted_.begin(), trusted_.end(), server) != trusted_.end();
    return t;
  }

  asio::awaitable<tool_result> run(const json& args, tool_context&) override {
    const std::string server = string_of(args, "server");
    const std::string uri = string_of(args, "uri");
    if (server.empty() || uri.empty()) co_return error_result("read_mcp_resource needs a 'server' and a 'uri'.");
    auto sess = co_await mgr_.session_for(server);
    if (!sess) co_return error_result(sess.error().message);
    const auto cfg = mgr_.config_of(server);
    const auto timeout = std::chrono::milliseconds(cfg ? cfg->timeout_ms : 60000);
    auto r = co_await (*sess)->request("resources/read", read_params(uri), timeout);
    if (!r) co_return error_result(r.error().message);
    std::string text = contents_text(*r);
    if (text.size() > k_max_result_chars) text = text.substr(0, k_max_result_chars) + "\n[cut]";
    co_return ok_result(std::move(text));
  }

 private:
  mcp_manager& mgr_;
  std::vector<std::string> trusted_;
  tool_info info_;
};

}  // namespace

std::shared_ptr<tool> make_resource_tool(mcp_manager& mgr, std::vector<std::string> servers, std::vector<std::string> trusted,
                                         std::string listing) {
  return std::make_shared<resource_tool>(mgr, std::move(servers), std::move(trusted), std::move(listing));
}

}  // namespace warden::tools
