#include "engine/external_provider.h"

namespace warden::engine {

boost::asio::awaitable<result<std::unique_ptr<provider_engine>>> resolve_provider(const provider_resolver& resolve,
                                                                                 std::string id, std::string type,
                                                                                 std::string model, std::string owner) {
  if (!resolve) {
    co_return make_error(errc::not_found,
                         "this server has no external providers (they are added with POST /api/providers)",
                         id.empty() ? "provider_type" : "provider_id", "provider_not_found");
  }
  auto got = co_await resolve(std::move(id), std::move(type), std::move(model), std::move(owner));
  co_return std::move(got);
}

}  // namespace warden::engine
