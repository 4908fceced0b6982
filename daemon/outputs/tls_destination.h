// TLS transport for the tcp and syslog outputs (RFC 5425 when the syslog output frames
// octet-counted): the same lazy connect, reconnect and at-least-once resend as TCP.
#ifndef LOGFOLD_DAEMON_TLS_DESTINATION_H_
#define LOGFOLD_DAEMON_TLS_DESTINATION_H_

#include <memory>
#include <string>

#include "daemon/config/options/tcp_sink_options.h"
#include "daemon/outputs/buffered_sink.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"
#include "daemon/runtime/tls_options.h"

namespace logfold {

// The runtime form of an output's "tls" block (every field; defaults are the config's).
TlsClientOptions ClientTlsOptions(const TlsClientConfig& t);

// A TLS connection to target.address:target.port verified as target.tls_options say.
// nullptr and `error` when the TLS files cannot be loaded. Registers the logfold_sink_*
// connection counters like the TCP destination.
std::unique_ptr<Destination> MakeTlsDestination(const std::string& sink_name,
                                                const TcpSinkOptions& target, Metrics& metrics,
                                                std::string& error);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_TLS_DESTINATION_H_
