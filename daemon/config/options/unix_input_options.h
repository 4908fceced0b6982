// Options of a local syslog socket input (daemon/inputs/unix_listener.h), with their
// defaults. Header-only and in config/ so that the config layer maps the file onto them once.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_UNIX_INPUT_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_UNIX_INPUT_OPTIONS_H_

#include <cstdint>
#include <string>

#include "daemon/config/units.h"

namespace logfold {

enum class UnixSocketType : std::uint8_t { kDatagram, kStream };

struct UnixInputOptions {
  std::string path;  // the socket file; a stale socket there is replaced
  // datagram: one message per datagram; stream: messages end at LF or NUL.
  UnixSocketType socket_type = UnixSocketType::kDatagram;
  std::uint32_t mode = 0666;  // permissions of the socket file (/dev/log's)
  std::uint64_t max_message_size = 64 * kKiB;
  bool operator==(const UnixInputOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_UNIX_INPUT_OPTIONS_H_
