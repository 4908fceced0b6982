// SyslogParser: turns one framed line into a LogRecord (RFC 5424, RFC 3164, raw, JSON lines).
// Never throws and never rejects: a line it cannot parse becomes a raw message with a reason.
#ifndef LOGFOLD_PIPELINE_SYSLOG_PARSER_H_
#define LOGFOLD_PIPELINE_SYSLOG_PARSER_H_

#include <string>
#include <string_view>

#include "pipeline/log_record.h"

namespace logfold {

class SyslogParser {
 public:
  struct Options {
    InputFormat format = InputFormat::kSyslog;
    // JSON mode: the field holding the message (a dotted path such as "log.message" is
    // followed into nested objects).
    std::string json_message_field = "message";
    bool operator==(const Options&) const = default;
  };

  SyslogParser() = default;
  explicit SyslogParser(Options options) : options_(std::move(options)) {}

  // Parses `line` (without its frame terminator) into `out`, overwriting every field but
  // reusing its buffers. `arrival_us` is stored as out.arrival_us and is the reference time
  // for inferring the year of RFC 3164 timestamps. Returns out.outcome.
  ParseOutcome Parse(std::string_view line, TimeUs arrival_us, LogRecord& out) const;

  // The same parse without copying: every text field of `out` views `line`. Returns false
  // (and leaves `out` alone) in JSON mode, whose fields are not slices of the line; use
  // Parse there. Parse == ParseView followed by LogRecordView::CopyTo.
  bool ParseView(std::string_view line, TimeUs arrival_us, LogRecordView& out) const;

  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_SYSLOG_PARSER_H_
