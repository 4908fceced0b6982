// RFC 5424 encoding of engine events, the records of SinkEncoding::kSyslog5424 batches that
// syslog sinks forward to another syslog server.
#ifndef LOGFOLD_DAEMON_SYSLOG_EVENT_ENCODER_H_
#define LOGFOLD_DAEMON_SYSLOG_EVENT_ENCODER_H_

#include <string>
#include <string_view>

#include "pipeline/event.h"

namespace logfold {

// SD-ID of logfold's structured data element. 32473 is the enterprise number RFC 5612
// reserves for documentation and examples.
inline constexpr std::string_view kSyslogSdId = "logfold@32473";

// Appends `event` to `out` as one RFC 5424 SYSLOG-MSG, with no transport framing and no
// trailing newline: the caller separates records in a batch with '\n' and the sink frames
// them. The record never contains '\n' or '\r'.
//
//   <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [logfold@32473 ...] MSG
//
// Header fields come from event.record (the group's first line for summaries); PRI defaults
// to user.notice (13), APP-NAME to `app_name`, the others to "-". TIMESTAMP is the line's
// event time for first/annotate events and last_seen for summaries. MSGID is "first",
// "summary" or "annotate"; events of a Kafka input's lines carry id="<event_id>" after fp,
// and events whose line had an RFC 3164 tag longer than its app end it with tag="<tag>".
// MSG is the original message (first, annotate) or the group's
// template (summary).
void AppendEventSyslog(const Event& event, std::string_view app_name, std::string& out);

// Appends `value` as the inside of an RFC 5424 PARAM-VALUE (without the quotes): '"', '\'
// and ']' are backslash-escaped, control characters become spaces.
void AppendSyslogParamValue(std::string_view value, std::string& out);

// Appends `us` as an RFC 3339 UTC timestamp with microseconds, "2024-03-01T00:00:00.000123Z",
// or "-" if the year falls outside 0000..9999.
void AppendSyslogTime(TimeUs us, std::string& out);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_SYSLOG_EVENT_ENCODER_H_
