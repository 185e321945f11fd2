// website_policy — which sites a request lets web_search search and read (reference
// unsloth-studio.md §4.7: the hidden `website_policy` field, `allowedDomains` / `blockedDomains`).
//
// A domain entry is a host name ("example.com", lower-cased, a leading "*." or "." and a trailing
// "." removed): it covers the host itself and every name under it ("docs.example.com"). An IP
// address entry covers only that literal address. A host is refused when a blocked entry covers
// it, or when there are allowed entries and none covers it. Hosts are compared in their ASCII
// form: a name with other characters is refused whenever the policy has any entry (write it in
// its xn-- form).
// Thread-safety: a value type; refusal() is pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden::tools {

struct website_policy {
  std::vector<std::string> allowed_domains;  ///< normalised (normalise_domain); empty = every site
  std::vector<std::string> blocked_domains;  ///< normalised

  bool empty() const { return allowed_domains.empty() && blocked_domains.empty(); }
  /// Why `host` (a URL's host, without brackets or port) is outside the policy; nullopt when it is inside.
  std::optional<std::string> refusal(std::string_view host) const;
};

/// The form an entry is compared in (see above); nullopt when it is not a plausible host name or
/// address (empty, spaces, '/', ':' outside an IPv6 address, over 253 bytes, non-ASCII).
std::optional<std::string> normalise_domain(std::string_view entry);

}  // namespace warden::tools
