// Options of a syslog output (daemon/outputs/syslog_sink.h), with their defaults.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_SYSLOG_SINK_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_SYSLOG_SINK_OPTIONS_H_

#include <cstdint>
#include <string>

#include "daemon/config/options/tcp_sink_options.h"

namespace logfold {

enum class SyslogProtocol : std::uint8_t { kTcp, kUdp };
enum class SyslogFraming : std::uint8_t { kOctetCounted, kNewline };

struct SyslogSinkOptions {
  // The relay's address and port; the reconnect range applies over tcp only.
  TcpSinkOptions target;
  SyslogProtocol protocol = SyslogProtocol::kTcp;
  SyslogFraming framing = SyslogFraming::kOctetCounted;  // over tcp
  std::string app_name = "logfold";  // APP-NAME for events whose record has none
  bool operator==(const SyslogSinkOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_SYSLOG_SINK_OPTIONS_H_
