// net_guard — which addresses the fetching tools may connect to (issue 25, reference
// unsloth-studio.md §4.7's SSRF guard): only globally routable unicast addresses, unless the
// server was started with --allow-private-fetch.
//
// Refused, IPv4 (IANA IPv4 Special-Purpose Address Registry, RFC 6890 and successors):
//   0.0.0.0/8 this network · 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 private (RFC 1918) ·
//   100.64.0.0/10 shared/CGNAT (RFC 6598) · 127.0.0.0/8 loopback · 169.254.0.0/16 link-local
//   (cloud metadata 169.254.169.254 lives here) · 192.0.0.0/24 IETF protocol assignments ·
//   192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 documentation · 192.88.99.0/24 6to4 relay
//   anycast (deprecated) · 198.18.0.0/15 benchmarking · 224.0.0.0/4 multicast · 240.0.0.0/4
//   reserved, 255.255.255.255 broadcast included.
// Refused, IPv6 (IANA IPv6 Special-Purpose Address Registry): :: unspecified · ::1 loopback ·
//   ::/96 IPv4-compatible (deprecated) · 64:ff9b:1::/48 local-use NAT64 · 100::/64 discard ·
//   2001::/23 IETF protocol assignments · 2001:db8::/32 and 3fff::/20 documentation ·
//   fc00::/7 unique local (AWS's metadata fd00:ec2::254 lives here) · fe80::/10 link-local ·
//   fec0::/10 site-local (deprecated) · ff00::/8 multicast.
// Judged by the IPv4 address they carry: ::ffff:0:0/96 IPv4-mapped, 64:ff9b::/96 NAT64
//   (RFC 6052), 2002::/16 6to4 (the next 32 bits), 2001::/32 Teredo (the client address, the
//   last 32 bits inverted) — so `[::ffff:127.0.0.1]` is loopback, as it is to the kernel.
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace warden::tools {

/// Why `address` (a literal IPv4 or IPv6 address, without brackets or a zone) may not be
/// fetched from — "loopback", "private", "link-local (cloud metadata lives here)", … — or
/// nullopt when it is globally routable. An unparseable text is refused ("not an IP address").
std::optional<std::string> non_global_reason(std::string_view address);

}  // namespace warden::tools
