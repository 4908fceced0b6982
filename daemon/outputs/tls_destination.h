// TLS transport for the tcp and syslog outputs (RFC 5425 when the syslog output frames
// octet-counted): the same lazy connect, reconnect and at-least-once resend as TCP.
#ifndef LOGFOLD_DAEMON_TLS_DESTINATION_H_
#define LOGFOLD_DAEMON_TLS_DESTINATION_H_

#include <memory>
#include <string>

#include "daemon/outputs/buffered_sink.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

// A TLS connection to config.address:config.port verified as config.tls says. nullptr and
// `error` when the TLS files cannot be loaded. Registers the logfold_sink_* connection
// counters like the TCP destination.
std::unique_ptr<Destination> MakeTlsDestination(const SinkConfig& config, Metrics& metrics,
                                                std::string& error);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_TLS_DESTINATION_H_
