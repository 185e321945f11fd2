#include "http/head_screen.h"

#include <cctype>

#include "common/ids.h"

namespace warden::http {

namespace bhttp = boost::beast::http;

namespace {

struct framing_refusal {
  int status;
  error what;
};

/// Requests whose body warden will not read, judged from the head:
///   - any Transfer-Encoding (RFC 9112 §6.1): a coding other than chunked has no knowable length
///     (400, request smuggling); chunked is refused with 411 Length Required (RFC 9110 §15.5.12):
///     its trailer fields escape the header limit (Beast keeps them in the message and throws on
///     one over 64 KiB), and every client warden serves sends Content-Length;
///   - a body on GET, HEAD or OPTIONS (no route takes one; it would be buffered unauthenticated).
///     On another method but POST and PUT the route is looked up first (a PUT on a POST path is
///     405), then a body is refused the same way (unexpected_body).
std::optional<framing_refusal> framing_error(const beast_request& head, bool body_done) {
  if (head.find(bhttp::field::transfer_encoding) != head.end()) {
    if (!head.chunked()) {
      return framing_refusal{400, make_error(errc::invalid_request,
                                             "unsupported Transfer-Encoding; send the body with Content-Length")};
    }
    return framing_refusal{411, make_error(errc::invalid_request,
                                           "chunked request bodies are not accepted; send the body with Content-Length",
                                           "", "length_required")};
  }
  const auto m = head.method();
  if (!body_done && (m == bhttp::verb::get || m == bhttp::verb::head || m == bhttp::verb::options)) {
    return framing_refusal{400, unexpected_body(head.method_string())};
  }
  return std::nullopt;
}

}  // namespace

error unexpected_body(std::string_view method) {
  return make_error(errc::invalid_request, std::string(method.substr(0, 20)) + " takes no request body", "",
                    "unexpected_body");
}

http_request request_head(const beast_request& msg, const std::string& remote) {
  http_request req;
  req.method = std::string(msg.method_string());
  const std::string_view target = msg.target();
  const auto q = target.find('?');
  req.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) req.query = std::string(target.substr(q + 1));
  for (const auto& f : msg) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    req.headers.emplace_back(std::move(name), std::string(f.value()));
  }
  req.remote = remote;
  req.request_id = ids::new_id(ids::kind::request);
  return req;
}

head_verdict judge_head(const beast_request& head, bool body_done, const router& routes, const std::string& remote) {
  head_verdict v;
  if (auto framing = framing_error(head, body_done)) {
    const std::string_view target = head.target();
    v.req.path = std::string(target.substr(0, target.find('?')));
    v.status = framing->status;
    v.refused = std::move(framing->what);
    v.framing = true;
    return v;
  }
  v.req = request_head(head, remote);
  v.refused = routes.screen(v.req);
  if (!v.refused && !body_done && v.req.method != "POST" && v.req.method != "PUT") v.refused = unexpected_body(v.req.method);
  if (v.refused) {
    v.status = http_status(v.refused->code);
    v.headers = routes.error_headers(v.req, *v.refused);
  }
  return v;
}

}  // namespace warden::http
