// Sender allow-lists for network inputs: which source addresses (CIDR blocks) may send.
#ifndef LOGFOLD_DAEMON_RUNTIME_SENDER_ALLOW_LIST_H_
#define LOGFOLD_DAEMON_RUNTIME_SENDER_ALLOW_LIST_H_

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace logfold {

class SenderAllowList {
 public:
  // Empty: everyone may send.
  SenderAllowList() = default;
  // Entries are "address/prefix" or a bare address (a single host), IPv4 or IPv6. Invalid
  // entries must have been refused by CidrError beforehand (they are ignored here).
  explicit SenderAllowList(const std::vector<std::string>& cidrs);

  // Why `cidr` is not a valid entry; "" when it is.
  static std::string CidrError(std::string_view cidr);

  bool empty() const { return blocks_.empty(); }
  // IPv4 senders on a dual-stack socket arrive as ::ffff:a.b.c.d and match IPv4 blocks.
  bool Allows(const sockaddr* addr) const;

 private:
  struct Block {
    std::array<std::uint8_t, 16> net{};  // IPv4 as ::ffff:a.b.c.d
    unsigned prefix = 128;
  };
  std::vector<Block> blocks_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_RUNTIME_SENDER_ALLOW_LIST_H_
