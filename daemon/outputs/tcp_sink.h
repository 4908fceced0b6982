// TCP sinks: NDJSON to a collector, and the TCP transport under RFC 5424 syslog forwarding
// (lazy connect, jittered reconnect backoff, at-least-once resend; see tcp_sink.cc).
#ifndef LOGFOLD_DAEMON_TCP_SINK_H_
#define LOGFOLD_DAEMON_TCP_SINK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "daemon/outputs/buffered_sink.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

// Checks address, port and the reconnect range shared by tcp and syslog sinks.
bool ValidateNetworkTarget(const SinkConfig& config, std::string& error);

// A stream connection to address:port (IPv4 or IPv6, literal or resolved on every connect).
// Registers logfold_sink_{connects,connect_failures,disconnects}_total.
std::unique_ptr<Destination> MakeTcpDestination(const SinkConfig& config, Metrics& metrics);

// NDJSON over TCP, one record per line.
std::unique_ptr<Sink> MakeTcpSink(const SinkConfig& config, Metrics& metrics, std::string& error);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_TCP_SINK_H_
