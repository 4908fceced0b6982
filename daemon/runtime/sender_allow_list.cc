// SenderAllowList: CIDR blocks held as IPv6 (IPv4 mapped) and matched by prefix.
#include "daemon/runtime/sender_allow_list.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>
#include <optional>

namespace logfold {

namespace {

struct Parsed {
  std::array<std::uint8_t, 16> net{};
  unsigned prefix = 0;
};

std::array<std::uint8_t, 16> Mapped(const in_addr& v4) {
  std::array<std::uint8_t, 16> out{};
  out[10] = 0xff;
  out[11] = 0xff;
  std::memcpy(out.data() + 12, &v4, 4);
  return out;
}

std::optional<Parsed> Parse(std::string_view cidr, std::string* error) {
  const std::size_t slash = cidr.find('/');
  const std::string address(cidr.substr(0, slash));
  Parsed p;
  unsigned max_prefix = 0;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    p.net = Mapped(v4);
    max_prefix = 32;
  } else if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    std::memcpy(p.net.data(), &v6, 16);
    max_prefix = 128;
  } else {
    if (error) *error = "not an IP address or CIDR block (e.g. \"10.0.0.0/8\", \"::1\")";
    return std::nullopt;
  }
  unsigned prefix = max_prefix;
  if (slash != std::string_view::npos) {
    const std::string_view digits = cidr.substr(slash + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
        prefix > max_prefix) {
      if (error) *error = "prefix length must be 0.." + std::to_string(max_prefix);
      return std::nullopt;
    }
  }
  p.prefix = max_prefix == 32 ? prefix + 96 : prefix;
  return p;
}

bool PrefixEqual(const std::array<std::uint8_t, 16>& a, const std::uint8_t* b, unsigned bits) {
  const unsigned bytes = bits / 8;
  if (std::memcmp(a.data(), b, bytes) != 0) return false;
  const unsigned rest = bits % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
  return (a[bytes] & mask) == (b[bytes] & mask);
}

}  // namespace

SenderAllowList::SenderAllowList(const std::vector<std::string>& cidrs) {
  for (const std::string& c : cidrs) {
    if (auto p = Parse(c, nullptr)) blocks_.push_back(Block{p->net, p->prefix});
  }
}

std::string SenderAllowList::CidrError(std::string_view cidr) {
  std::string error;
  Parse(cidr, &error);
  return error;
}

bool SenderAllowList::Allows(const sockaddr* addr) const {
  if (blocks_.empty()) return true;
  std::array<std::uint8_t, 16> bytes{};
  if (addr->sa_family == AF_INET) {
    bytes = Mapped(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr);
  } else if (addr->sa_family == AF_INET6) {
    std::memcpy(bytes.data(), &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, 16);
  } else {
    return false;
  }
  for (const Block& b : blocks_) {
    if (PrefixEqual(b.net, bytes.data(), b.prefix)) return true;
  }
  return false;
}

}  // namespace logfold
