#include "api/control/ui_routes.h"

#include "api/control/routes.h"
#include "common/error.h"
#include "web/assets.h"

namespace warden::api::control {

namespace asio = boost::asio;

namespace {

asio::awaitable<void> serve_asset(const http_request& req, response_writer& out) {
  const web::asset* a = web::find_asset(req.path);
  if (!a) {
    co_return co_await wire::send_error(
        out, control_surface(), make_error(errc::not_found, "no such file in the web UI: " + req.path.substr(0, 200), "", "not_found"));
  }
  for (auto& [name, value] : web::response_headers(a->path)) out.add_header(std::move(name), std::move(value));
  co_await out.send(200, std::string(a->content_type), std::string(a->body));
  co_return;
}

}  // namespace

std::vector<route> ui_routes() {
  const surface* s = &control_surface();
  return {
      {"GET", "/", false, auth_policy::open, s, &serve_asset},
      {"GET", "/ui", false, auth_policy::open, s, &serve_asset},
      {"GET", "/ui/", true, auth_policy::open, s, &serve_asset},
  };
}

}  // namespace warden::api::control
