// Options of a RELP output (daemon/outputs/relp_sink.h), with their defaults.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_RELP_SINK_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_RELP_SINK_OPTIONS_H_

#include <cstdint>

#include "daemon/config/options/tcp_sink_options.h"
#include "daemon/config/units.h"

namespace logfold {

struct RelpSinkOptions {
  // The collector's address and port (RELP's conventional port is 2514), and the reconnect
  // backoff range.
  TcpSinkOptions target;
  // Messages sent and not yet acknowledged at most; also the most that a lost connection can
  // make the collector receive twice (they are resent on the next connection).
  std::uint32_t window = 128;
  // No acknowledgement for this long while messages are outstanding: the session is taken as
  // broken, and they are resent on a new connection.
  TimeUs ack_timeout_us = 30 * kSecond;
  bool operator==(const RelpSinkOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_RELP_SINK_OPTIONS_H_
