// LogRecord: one received log line after parsing; the unit every pipeline stage works on.
// Strings are owned and reused: a parser assigns into an existing record, so a record that is
// recycled per line stops allocating once its buffers have grown.
#ifndef LOGFOLD_PIPELINE_LOG_RECORD_H_
#define LOGFOLD_PIPELINE_LOG_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace logfold {

// Microseconds since the Unix epoch (UTC). The pipeline never reads a clock: every time it
// sees is passed in, so tests and replays control it fully.
using TimeUs = std::int64_t;

// Where a line came from, for inputs that can name the same line again after a restart (a
// Kafka partition and offset). Events carry the origin of the first line they cover, so a
// replay produces the same event ids (pipeline/event_json.h). `stream` 0: no origin.
struct LineOrigin {
  std::uint64_t stream = 0;    // e.g. a hash of topic and partition; never 0 when set
  std::int64_t position = -1;  // e.g. the record's offset in that partition
  bool operator==(const LineOrigin&) const = default;
};

// How a line's bytes are to be interpreted.
enum class InputFormat : std::uint8_t {
  kSyslog,  // RFC 5424 or RFC 3164, detected per line; raw fallback when neither fits
  kRaw,     // the whole line is the message
  kJson,    // one JSON object per line; the message is taken from a configured field
};

// Which header the line carried.
enum class SyslogFlavor : std::uint8_t { kNone, kRfc3164, kRfc5424, kJson };

// Result of parsing; anything but kOk still yields a usable record (the line as raw message).
// Each value has its own counter in the daemon's metrics.
enum class ParseOutcome : std::uint8_t {
  kOk,
  kEmpty,                // empty line (after stripping the frame terminator)
  kNoHeader,             // no syslog header at all: raw message
  kBadPri,               // "<...>" present but not a valid PRI
  kBadTimestamp,         // header present, timestamp unparseable
  kBadHeader,            // other header field malformed (hostname, app, version, ...)
  kBadStructuredData,    // RFC 5424 STRUCTURED-DATA malformed
  kBadJson,              // JSON-lines input that is not a JSON object
  kMissingMessageField,  // JSON object without the configured message field
  kCount_,               // number of outcomes; not an outcome
};

std::string_view ParseOutcomeName(ParseOutcome outcome);
std::string_view SyslogFlavorName(SyslogFlavor flavor);

struct LogRecord {
  std::string raw;  // the line as received, without the frame terminator
  SyslogFlavor flavor = SyslogFlavor::kNone;
  ParseOutcome outcome = ParseOutcome::kOk;
  int facility = -1;  // 0..23 from PRI, -1 when absent
  int severity = -1;  // 0..7 from PRI, -1 when absent
  bool has_timestamp = false;
  TimeUs timestamp_us = 0;  // event time from the header, valid when has_timestamp
  TimeUs arrival_us = 0;    // when the line arrived (set by whoever feeds the pipeline)
  std::string hostname;
  std::string app_name;  // RFC 5424 APP-NAME, or RFC 3164 TAG's program name (see tag)
  // RFC 3164 TAG without [PID], only when it is more than app_name: a tag's program name ends
  // at '/', as rsyslog's programname does, so "postfix/smtpd[9]:" has app_name "postfix" and
  // tag "postfix/smtpd". Empty when the tag is app_name, or there was none.
  std::string tag;
  std::string procid;  // RFC 5424 PROCID, or the PID inside RFC 3164 TAG[PID]
  std::string msgid;
  std::string structured_data;  // RFC 5424 SD verbatim ("" when NILVALUE or absent)
  std::string message;          // MSG (BOM removed), or the whole line in raw mode
  std::string json_fields;      // JSON mode: the object minus the message field, as JSON text
  LineOrigin origin;            // set by inputs that have one (Kafka)
  // Set by an input whose sources must never share a group (a Kafka partition: its groups
  // are summarised when the partition moves to another consumer); mixed into the scope hash.
  // 0: none.
  std::uint32_t scope_salt = 0;

  // Event time: the header's timestamp when present, else arrival.
  TimeUs EventTime() const { return has_timestamp ? timestamp_us : arrival_us; }

  // Resets every field, keeping string capacity.
  void Clear();
};

// A parsed line whose text fields are views into the line's bytes rather than owned
// strings: what the syslog parser finds before anything is copied. The daemon parses on the
// receiving thread, moves the bytes to a worker and copies the fields out there only once.
struct LogRecordView {
  std::string_view raw, hostname, app_name, tag, procid, msgid, structured_data, message;
  SyslogFlavor flavor = SyslogFlavor::kNone;
  ParseOutcome outcome = ParseOutcome::kOk;
  int facility = -1;
  int severity = -1;
  bool has_timestamp = false;
  TimeUs timestamp_us = 0;
  TimeUs arrival_us = 0;
  LineOrigin origin;
  std::uint32_t scope_salt = 0;  // as LogRecord::scope_salt

  // The same fields over `copy`, a copy of the bytes `raw` views (same length).
  LogRecordView Rebased(std::string_view copy) const;
  // Assigns every field of `out` (json_fields cleared), reusing its buffers.
  void CopyTo(LogRecord& out) const;
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_LOG_RECORD_H_
