// net_guard: the special-purpose ranges of IPv4 and IPv6 are refused, with their reason, and
// the IPv6 forms that carry an IPv4 address are judged by it; public addresses pass.
#include <gtest/gtest.h>

#include "tools/net_guard.h"

namespace warden::tools {
namespace {

TEST(NetGuard, GloballyRoutableAddressesPass) {
  for (const char* a : {"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.0", "172.15.255.255",
                        "172.32.0.0", "192.169.0.1", "198.17.255.255", "198.20.0.0", "223.255.255.255",
                        "2606:4700:4700::1111", "2a00:1450:4001:82a::200e", "::ffff:8.8.8.8", "64:ff9b::808:808",
                        "2002:808:808::1", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"}) {
    EXPECT_EQ(non_global_reason(a), std::nullopt) << a;
  }
}

TEST(NetGuard, SpecialPurposeAddressesAreRefusedWithTheirReason) {
  const std::pair<const char*, const char*> rows[] = {
      {"127.0.0.1", "loopback"},
      {"127.255.255.254", "loopback"},
      {"0.0.0.0", "this network"},
      {"10.1.2.3", "private"},
      {"172.16.0.1", "private"},
      {"172.31.255.255", "private"},
      {"192.168.1.1", "private"},
      {"100.64.0.1", "CGNAT"},
      {"100.127.255.255", "CGNAT"},
      {"169.254.169.254", "link-local"},
      {"192.0.0.1", "IETF"},
      {"192.0.2.1", "documentation"},
      {"198.51.100.7", "documentation"},
      {"203.0.113.9", "documentation"},
      {"198.18.0.1", "benchmarking"},
      {"198.19.255.255", "benchmarking"},
      {"192.88.99.1", "6to4 relay"},
      {"224.0.0.1", "multicast"},
      {"239.255.255.250", "multicast"},
      {"240.0.0.1", "reserved"},
      {"255.255.255.255", "reserved"},
      {"::", "unspecified"},
      {"::1", "loopback"},
      {"::127.0.0.1", "IPv4-compatible"},
      {"::ffff:127.0.0.1", "IPv4-mapped form of a loopback"},
      {"::ffff:7f00:1", "IPv4-mapped form of a loopback"},
      {"::ffff:169.254.169.254", "IPv4-mapped form of a link-local"},
      {"::ffff:10.0.0.1", "IPv4-mapped form of a private"},
      {"64:ff9b::127.0.0.1", "NAT64 form of a loopback"},
      {"64:ff9b::a00:1", "NAT64 form of a private"},
      {"64:ff9b:1::1", "local-use NAT64"},
      {"2002:7f00:1::1", "6to4 form of a loopback"},
      {"2002:c0a8:101::", "6to4 form of a private"},
      {"2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo form of a loopback"},  // client 127.0.0.1
      {"100::1", "discard"},
      {"2001:db8::1", "documentation"},
      {"3fff::1", "documentation"},
      {"2001:10::1", "IETF protocol"},
      {"fd00:ec2::254", "unique local"},
      {"fc00::1", "unique local"},
      {"fe80::1", "link-local"},
      {"febf::1", "link-local"},
      {"fec0::1", "site-local"},
      {"ff02::1", "multicast"},
      {"4000::1", "not global unicast"},
      {"::2", "IPv4-compatible"},
  };
  for (const auto& [addr, why] : rows) {
    auto got = non_global_reason(addr);
    ASSERT_TRUE(got.has_value()) << addr;
    EXPECT_NE(got->find(why), std::string::npos) << addr << ": " << *got;
  }
}

TEST(NetGuard, TextThatIsNotAnAddressIsRefused) {
  for (const char* a : {"", "localhost", "127.1", "0x7f.0.0.1", "2130706433", "[::1]", "fe80::1%eth0", "1.2.3.4.5",
                        "::ffff:127.0.0.1 "}) {
    EXPECT_EQ(non_global_reason(a), std::optional<std::string>("not an IP address")) << a;
  }
}

}  // namespace
}  // namespace warden::tools
