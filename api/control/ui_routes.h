// ui_routes — serves the browser UI (web/assets.h) from warden itself: GET / and GET /ui/….
//
// Open routes (no API key: the files hold no secret; the page asks for the key and sends it on
// its own API calls). The router's Host/Origin checks (http/request_guard.h) still apply, so a
// DNS-rebound name gets 403, and every file carries the headers web::response_headers() gives
// (a strict same-origin CSP; the render_html sandbox page's no-network one). An unknown /ui/
// path is a 404 in the control dialect.
// Thread-safety: the handlers read immutable static data only.
#pragma once

#include <vector>

#include "common/http_types.h"

namespace warden::api::control {

std::vector<route> ui_routes();

}  // namespace warden::api::control
