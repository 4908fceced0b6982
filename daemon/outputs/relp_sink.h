// RELP sink: forwards RFC 5424 records (SinkEncoding::kSyslog5424) to a RELP collector such
// as rsyslog's imrelp, releasing each from the buffer only once the collector acknowledged it.
#ifndef LOGFOLD_DAEMON_RELP_SINK_H_
#define LOGFOLD_DAEMON_RELP_SINK_H_

#include <memory>

#include "daemon/config/options/relp_sink_options.h"
#include "daemon/config/options/sink_options.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

// Delivery is at-least-once up to the collector's RELP acknowledgement ("rsp 200"): a record
// counts as delivered, and leaves the buffer, only then. When the session breaks (the
// collector closes or resets it, answers with an error, or acknowledges nothing for
// ack_timeout), every record not yet acknowledged is sent again on the next connection, in
// order; so a collector that dies loses nothing, and receives at most `window` records twice
// per broken session (those it had taken but not yet acknowledged). Registers
// logfold_sink_acknowledged_events_total and the connection counters for `sink.name`.
std::unique_ptr<Sink> MakeRelpSink(const SinkOptions& sink, const RelpSinkOptions& relp,
                                   Metrics& metrics);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_RELP_SINK_H_
