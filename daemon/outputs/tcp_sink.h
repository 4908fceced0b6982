// TCP sinks: NDJSON to a collector, and the TCP transport under RFC 5424 syslog forwarding
// (lazy connect, jittered reconnect backoff, at-least-once resend; see tcp_sink.cc).
#ifndef LOGFOLD_DAEMON_TCP_SINK_H_
#define LOGFOLD_DAEMON_TCP_SINK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "daemon/config/options/sink_options.h"
#include "daemon/config/options/tcp_sink_options.h"
#include "daemon/outputs/buffered_sink.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

// A stream connection to address:port (IPv4 or IPv6, literal or resolved on every connect),
// over TLS when target.tls (tls_destination.h). Registers
// logfold_sink_{connects,connect_failures,disconnects}_total for `sink_name`. nullptr and
// `error` when the TLS files cannot be loaded.
std::unique_ptr<Destination> MakeTcpDestination(const std::string& sink_name,
                                                const TcpSinkOptions& target, Metrics& metrics,
                                                std::string& error);

// NDJSON over TCP, one record per line.
// nullptr and `error` when the TLS files cannot be loaded.
std::unique_ptr<Sink> MakeTcpSink(const SinkOptions& sink, const TcpSinkOptions& tcp,
                                  Metrics& metrics, std::string& error);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_TCP_SINK_H_
