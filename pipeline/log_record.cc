// Names for the record enums (metrics labels, JSON output), and LogRecordView's copies.
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
  tag.clear();
  procid.clear();
  msgid.clear();
  structured_data.clear();
  message.clear();
  json_fields.clear();
  origin = {};
  scope_salt = 0;
}

LogRecordView LogRecordView::Rebased(std::string_view copy) const {
  LogRecordView v = *this;
  auto move = [&](std::string_view& field) {
    // Every view lies inside raw (or is empty, possibly with a foreign pointer: keep it so).
    if (field.empty()) return;
    field = copy.substr(static_cast<std::size_t>(field.data() - raw.data()), field.size());
  };
  move(v.hostname);
  move(v.app_name);
  move(v.tag);
  move(v.procid);
  move(v.msgid);
  move(v.structured_data);
  move(v.message);
  v.raw = copy.substr(0, raw.size());
  return v;
}

namespace {

// Most header fields are empty in most lines (all of them for raw lines) and were empty in the
// record's previous line too: skip std::string::assign's call for those.
inline void AssignField(std::string& out, std::string_view value) {
  if (value.empty() && out.empty()) return;
  out.assign(value);
}

}  // namespace

void LogRecordView::CopyTo(LogRecord& out) const {
  out.raw.assign(raw);
  out.flavor = flavor;
  out.outcome = outcome;
  out.facility = facility;
  out.severity = severity;
  out.has_timestamp = has_timestamp;
  out.timestamp_us = timestamp_us;
  out.arrival_us = arrival_us;
  AssignField(out.hostname, hostname);
  AssignField(out.app_name, app_name);
  AssignField(out.tag, tag);
  AssignField(out.procid, procid);
  AssignField(out.msgid, msgid);
  AssignField(out.structured_data, structured_data);
  out.message.assign(message);
  out.json_fields.clear();
  out.origin = origin;
  out.scope_salt = scope_salt;
}

}  // namespace logfold
