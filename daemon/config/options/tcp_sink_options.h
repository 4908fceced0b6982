// Options of a TCP output (daemon/outputs/tcp_sink.h), which are also the transport of a
// syslog output: where to connect and how to back off between attempts.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_TCP_SINK_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_TCP_SINK_OPTIONS_H_

#include <cstdint>
#include <string>

#include "daemon/config/options/tls_options.h"
#include "daemon/config/units.h"

namespace logfold {

struct TcpSinkOptions {
  std::string address;  // host name or IP literal, resolved on every connect
  std::uint16_t port = 0;
  TimeUs reconnect_min_us = 100 * kMillisecond;
  TimeUs reconnect_max_us = 30 * kSecond;
  bool tls = false;  // a "tls" block was given: TLS (RFC 5425 for syslog)
  TlsClientConfig tls_options{};
  bool operator==(const TcpSinkOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_TCP_SINK_OPTIONS_H_
