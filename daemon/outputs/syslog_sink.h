// Syslog sink: forwards RFC 5424 records (SinkEncoding::kSyslog5424, one per line in each
// batch) over TCP with RFC 6587 octet-counting or newline framing, or over UDP (RFC 5426).
#ifndef LOGFOLD_DAEMON_SYSLOG_SINK_H_
#define LOGFOLD_DAEMON_SYSLOG_SINK_H_

#include <memory>
#include <string>

#include "daemon/config/options/sink_options.h"
#include "daemon/config/options/syslog_sink_options.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

// TCP: the buffer stores the wire form, and delivery is at-least-once as for the tcp sink.
// UDP: one datagram per record; a datagram the kernel refuses (too big, no buffer space,
// unreachable) is dropped and counted in logfold_sink_dropped_records_total and
// logfold_sink_discarded_bytes_total. Failing to resolve or open the socket is retried with
// backoff instead, keeping the buffer.
// nullptr and `error` when the TLS files of a syslog over TLS cannot be loaded.
std::unique_ptr<Sink> MakeSyslogSink(const SinkOptions& sink, const SyslogSinkOptions& syslog,
                                     Metrics& metrics, std::string& error);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_SYSLOG_SINK_H_
