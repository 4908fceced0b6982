// Options of a UDP input (daemon/inputs/udp_listener.h), with their defaults. Header-only and
// in config/ so that the config layer maps the file onto them once and the listener reads them.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_UDP_INPUT_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_UDP_INPUT_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/config/units.h"

namespace logfold {

struct UdpInputOptions {
  std::string address = "127.0.0.1";  // IP literal; "::" or "0.0.0.0" for all
  std::uint16_t port = 0;             // 0: ephemeral (see local_port())
  // An inherited systemd socket to adopt, by FileDescriptorName; address and port are then
  // unused (the socket is already bound).
  std::string socket_name{};  // {}: designated initializers may skip it (-Wextra)
  // The descriptor of that socket, or any already bound datagram socket to use instead of
  // address/port. The listener takes ownership of it. -1: none. Set by the server, never by
  // the file.
  int adopted_fd = -1;
  // Longer datagrams are cut to this size and counted in logfold_truncated_total.
  std::uint64_t max_message_size = 64 * kKiB;
  // SO_RCVBUF request, best effort (the kernel caps it at net.core.rmem_max unless we may
  // use SO_RCVBUFFORCE); the effective size is logged. 0: system default.
  std::uint64_t receive_buffer = 4 * kMiB;
  // CIDR blocks; datagrams from other addresses are refused and counted in
  // logfold_senders_refused_total. Empty: any sender.
  std::vector<std::string> allowed_senders{};
  bool operator==(const UdpInputOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_UDP_INPUT_OPTIONS_H_
