#include "tools/net_guard.h"

#include <arpa/inet.h>

#include <array>
#include <cstdint>

namespace warden::tools {

namespace {

using v6_bytes = std::array<std::uint8_t, 16>;

struct v4_range {
  std::uint32_t net;
  int bits;
  const char* why;
};

constexpr std::uint32_t v4(unsigned a, unsigned b, unsigned c, unsigned d) { return (a << 24) | (b << 16) | (c << 8) | d; }

// IANA IPv4 Special-Purpose Address Registry (net_guard.h)
constexpr std::array<v4_range, 15> k_v4 = {{
    {v4(0, 0, 0, 0), 8, "this network (0.0.0.0/8)"},
    {v4(10, 0, 0, 0), 8, "private (10.0.0.0/8)"},
    {v4(100, 64, 0, 0), 10, "shared address space (CGNAT, 100.64.0.0/10)"},
    {v4(127, 0, 0, 0), 8, "loopback"},
    {v4(169, 254, 0, 0), 16, "link-local (169.254.0.0/16, where cloud metadata lives)"},
    {v4(172, 16, 0, 0), 12, "private (172.16.0.0/12)"},
    {v4(192, 0, 0, 0), 24, "IETF protocol assignments (192.0.0.0/24)"},
    {v4(192, 0, 2, 0), 24, "documentation (192.0.2.0/24)"},
    {v4(192, 88, 99, 0), 24, "6to4 relay anycast (192.88.99.0/24)"},
    {v4(192, 168, 0, 0), 16, "private (192.168.0.0/16)"},
    {v4(198, 18, 0, 0), 15, "benchmarking (198.18.0.0/15)"},
    {v4(198, 51, 100, 0), 24, "documentation (198.51.100.0/24)"},
    {v4(203, 0, 113, 0), 24, "documentation (203.0.113.0/24)"},
    {v4(224, 0, 0, 0), 4, "multicast"},
    {v4(240, 0, 0, 0), 4, "reserved (240.0.0.0/4, broadcast included)"},
}};

std::optional<std::string> judge_v4(std::uint32_t a) {
  for (const auto& r : k_v4) {
    const std::uint32_t mask = r.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - r.bits);
    if ((a & mask) == r.net) return std::string(r.why);
  }
  return std::nullopt;
}

struct v6_range {
  v6_bytes net;
  int bits;
  const char* why;
};

bool in_prefix(const v6_bytes& a, const v6_bytes& net, int bits) {
  for (int i = 0; i < bits; ++i) {
    const int byte = i / 8, bit = 7 - i % 8;
    if (((a[static_cast<std::size_t>(byte)] >> bit) & 1) != ((net[static_cast<std::size_t>(byte)] >> bit) & 1)) {
      return false;
    }
  }
  return true;
}

constexpr v6_bytes v6(std::uint16_t h0, std::uint16_t h1 = 0, std::uint16_t h2 = 0, std::uint16_t h7 = 0) {
  return {static_cast<std::uint8_t>(h0 >> 8), static_cast<std::uint8_t>(h0 & 0xff), static_cast<std::uint8_t>(h1 >> 8),
          static_cast<std::uint8_t>(h1 & 0xff), static_cast<std::uint8_t>(h2 >> 8), static_cast<std::uint8_t>(h2 & 0xff),
          0, 0, 0, 0, 0, 0, 0, 0, static_cast<std::uint8_t>(h7 >> 8), static_cast<std::uint8_t>(h7 & 0xff)};
}

// IANA IPv6 Special-Purpose Address Registry (net_guard.h); checked after the forms that carry
// an IPv4 address, and before the global-unicast test.
const std::array<v6_range, 12> k_v6 = {{
    {v6(0), 128, "unspecified (::)"},
    {v6(0, 0, 0, 1), 128, "loopback (::1)"},
    {v6(0), 96, "IPv4-compatible (::/96, deprecated)"},
    {v6(0x64, 0xff9b, 1), 48, "local-use NAT64 (64:ff9b:1::/48)"},
    {v6(0x100), 64, "discard-only (100::/64)"},
    {v6(0x2001, 0xdb8), 32, "documentation (2001:db8::/32)"},
    {v6(0x2001), 23, "IETF protocol assignments (2001::/23)"},
    {v6(0x3fff), 20, "documentation (3fff::/20)"},
    {v6(0xfc00), 7, "unique local (fc00::/7, where cloud metadata such as fd00:ec2::254 lives)"},
    {v6(0xfe80), 10, "link-local (fe80::/10)"},
    {v6(0xfec0), 10, "site-local (fec0::/10, deprecated)"},
    {v6(0xff00), 8, "multicast"},
}};

std::uint32_t v4_at(const v6_bytes& a, std::size_t at) {
  return (std::uint32_t{a[at]} << 24) | (std::uint32_t{a[at + 1]} << 16) | (std::uint32_t{a[at + 2]} << 8) | a[at + 3];
}

/// The IPv4 address an IPv6 form carries, with the form's name; nullopt for other addresses.
std::optional<std::pair<std::uint32_t, const char*>> carried_v4(const v6_bytes& a) {
  if (in_prefix(a, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0}, 96)) return std::pair{v4_at(a, 12), "IPv4-mapped"};
  if (in_prefix(a, v6(0x64, 0xff9b), 96)) return std::pair{v4_at(a, 12), "NAT64"};
  if (in_prefix(a, v6(0x2002), 16)) return std::pair{v4_at(a, 2), "6to4"};
  if (in_prefix(a, v6(0x2001), 32)) return std::pair{~v4_at(a, 12), "Teredo"};
  return std::nullopt;
}

std::optional<std::string> judge_v6(const v6_bytes& a) {
  if (auto c = carried_v4(a)) {
    if (auto why = judge_v4(c->first)) return std::string(c->second) + " form of a " + *why + " address";
    return std::nullopt;
  }
  for (const auto& r : k_v6) {
    if (in_prefix(a, r.net, r.bits)) return std::string(r.why);
  }
  if (!in_prefix(a, v6(0x2000), 3)) return std::string("not global unicast (outside 2000::/3)");
  return std::nullopt;
}

}  // namespace

std::optional<std::string> non_global_reason(std::string_view address) {
  if (address.size() > 64 || address.empty()) return std::string("not an IP address");
  const std::string text(address);
  in_addr a4{};
  if (::inet_pton(AF_INET, text.c_str(), &a4) == 1) return judge_v4(ntohl(a4.s_addr));
  v6_bytes a6{};
  if (::inet_pton(AF_INET6, text.c_str(), a6.data()) == 1) return judge_v6(a6);
  return std::string("not an IP address");
}

}  // namespace warden::tools
