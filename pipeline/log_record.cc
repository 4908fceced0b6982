// Names for the record enums, used in metrics labels and JSON output.
#include "pipeline/log_record.h"

namespace logfold {

std::string_view ParseOutcomeName(ParseOutcome outcome) {
  switch (outcome) {
    case ParseOutcome::kOk:
      return "ok";
    case ParseOutcome::kEmpty:
      return "empty";
    case ParseOutcome::kNoHeader:
      return "no_header";
    case ParseOutcome::kBadPri:
      return "bad_pri";
    case ParseOutcome::kBadTimestamp:
      return "bad_timestamp";
    case ParseOutcome::kBadHeader:
      return "bad_header";
    case ParseOutcome::kBadStructuredData:
      return "bad_structured_data";
    case ParseOutcome::kBadJson:
      return "bad_json";
    case ParseOutcome::kMissingMessageField:
      return "missing_message_field";
    case ParseOutcome::kCount_:
      break;
  }
  return "unknown";
}

std::string_view SyslogFlavorName(SyslogFlavor flavor) {
  switch (flavor) {
    case SyslogFlavor::kNone:
      return "raw";
    case SyslogFlavor::kRfc3164:
      return "rfc3164";
    case SyslogFlavor::kRfc5424:
      return "rfc5424";
    case SyslogFlavor::kJson:
      return "json";
  }
  return "raw";
}

void LogRecord::Clear() {
  raw.clear();
  flavor = SyslogFlavor::kNone;
  outcome = ParseOutcome::kOk;
  facility = -1;
  severity = -1;
  has_timestamp = false;
  timestamp_us = 0;
  arrival_us = 0;
  hostname.clear();
  app_name.clear();
  procid.clear();
  msgid.clear();
  structured_data.clear();
  message.clear();
  json_fields.clear();
}

}  // namespace logfold
