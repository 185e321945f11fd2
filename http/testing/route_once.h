// Test support (header-only, for *_test.cpp files only): one request through a router, to the end.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <exception>

#include "common/http_types.h"
#include "common/testing/recording_writer.h"
#include "http/router.h"

namespace warden::http::testing {

/// Routes `req` through `r` on an io_context of its own and runs it until the handler returns;
/// what the handler wrote. An exception from the handler is rethrown.
inline warden::testing::recording_writer route_once(router& r, http_request req) {
  boost::asio::io_context ioc;
  warden::testing::recording_writer w;
  boost::asio::co_spawn(ioc, r.route(req, w), [](std::exception_ptr p) {
    if (p) std::rethrow_exception(p);
  });
  ioc.run();
  return w;
}

}  // namespace warden::http::testing
