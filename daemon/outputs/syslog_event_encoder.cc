// RFC 5424 encoding of engine events for syslog forwarding.
#include "daemon/outputs/syslog_event_encoder.h"

#include <charconv>
#include <cstdint>
#include <cstdio>

#include "pipeline/event_json.h"

namespace logfold {
namespace {

constexpr int kUserFacility = 1;
constexpr int kNoticeSeverity = 5;
// RFC 5424 section 6 field limits.
constexpr std::size_t kMaxHostname = 255;
constexpr std::size_t kMaxAppName = 48;
constexpr std::size_t kMaxProcId = 128;

// Header fields must be PRINTUSASCII: a space or control character from a hostile or
// broken sender would otherwise shift or forge the fields after it.
void AppendHeaderField(std::string_view value, std::size_t max_len, std::string& out) {
  if (value.empty()) {
    out += '-';
    return;
  }
  for (char c : value.substr(0, max_len)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 33 && u <= 126) ? c : '_';
  }
}

void AppendUint(std::uint64_t v, std::string& out) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// ` name="` ... each Append*Param writes its value and the closing quote.
void BeginParam(std::string_view name, std::string& out) {
  out += ' ';
  out += name;
  out += "=\"";
}

void AppendParam(std::string_view name, std::string_view value, std::string& out) {
  BeginParam(name, out);
  AppendSyslogParamValue(value, out);
  out += '"';
}

void AppendUintParam(std::string_view name, std::uint64_t value, std::string& out) {
  BeginParam(name, out);
  AppendUint(value, out);
  out += '"';
}

void AppendHexParam(std::string_view name, std::uint64_t value, std::string& out) {
  BeginParam(name, out);
  AppendHex64(value, out);  // the same 16 hex digits as the JSON events
  out += '"';
}

void AppendTimeParam(std::string_view name, TimeUs us, std::string& out) {
  BeginParam(name, out);
  AppendSyslogTime(us, out);
  out += '"';
}

}  // namespace

void AppendSyslogParamValue(std::string_view value, std::string& out) {
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || c == ']') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      // Keeps the record on one line for newline framing and readable for humans.
      out += ' ';
    } else {
      out += c;
    }
  }
}

void AppendSyslogTime(TimeUs us, std::string& out) {
  constexpr std::int64_t kUsPerDay = 86'400'000'000;
  std::int64_t days = us / kUsPerDay;
  std::int64_t rem = us % kUsPerDay;
  if (rem < 0) {
    rem += kUsPerDay;
    --days;
  }
  // Civil date from days since 1970-01-01 (H. Hinnant's algorithm), valid for any year.
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const std::int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 0 || year > 9999) {
    out += '-';
    return;
  }
  const std::int64_t secs = rem / 1'000'000;
  char buf[40];
  const int n = std::snprintf(
      buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%06lldZ",
      static_cast<long long>(year), static_cast<long long>(month), static_cast<long long>(day),
      static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
      static_cast<long long>(secs % 60), static_cast<long long>(rem % 1'000'000));
  out.append(buf, static_cast<std::size_t>(n));
}

void AppendEventSyslog(const Event& event, std::string_view app_name, std::string& out) {
  const LogRecord* record = event.record;
  const int facility = record != nullptr && record->facility >= 0 && record->facility <= 23
                           ? record->facility
                           : kUserFacility;
  const int severity = record != nullptr && record->severity >= 0 && record->severity <= 7
                           ? record->severity
                           : kNoticeSeverity;
  const bool summary = event.kind == EventKind::kSummary;

  out += '<';
  AppendUint(static_cast<std::uint64_t>(facility * 8 + severity), out);
  out += ">1 ";
  if (summary) {
    AppendSyslogTime(event.last_seen_us, out);
  } else {
    AppendSyslogTime(record != nullptr ? record->EventTime() : event.first_seen_us, out);
  }
  out += ' ';
  AppendHeaderField(record != nullptr ? std::string_view(record->hostname) : "", kMaxHostname, out);
  out += ' ';
  const std::string_view app = record != nullptr && !record->app_name.empty()
                                   ? std::string_view(record->app_name)
                                   : app_name;
  AppendHeaderField(app, kMaxAppName, out);
  out += ' ';
  AppendHeaderField(record != nullptr ? std::string_view(record->procid) : "", kMaxProcId, out);
  out += ' ';
  out += EventKindName(event.kind);

  out += " [";
  out += kSyslogSdId;
  AppendHexParam("group", event.group_id, out);
  AppendHexParam("fp", event.fingerprint, out);
  if (event.origin.stream != 0) {
    // The NDJSON outputs' event_id (pipeline/event_json.h): the same after a Kafka replay.
    char id[48];
    const int n = std::snprintf(
        id, sizeof id, "%016llx-%lld-%c", static_cast<unsigned long long>(event.origin.stream),
        static_cast<long long>(event.origin.position), EventKindName(event.kind)[0]);
    AppendParam("id", std::string_view(id, static_cast<std::size_t>(n)), out);
  }
  if (summary) {
    AppendUintParam("count", event.count, out);
    AppendUintParam("total", event.count_total, out);
    AppendTimeParam("first", event.first_seen_us, out);
    AppendTimeParam("last", event.last_seen_us, out);
    AppendParam("reason", SummaryReasonName(event.reason), out);
  }
  // APP-NAME is the program name; an RFC 3164 tag that says more ("postfix/smtpd") rides here,
  // last: it is the one sender-chosen value, and readers of `count` (loss_counter.cc) take the
  // first ']' for the element's end.
  if (record != nullptr && !record->tag.empty()) AppendParam("tag", record->tag, out);
  out += ']';

  const std::string_view message =
      summary ? event.template_text
              : (record != nullptr ? std::string_view(record->message) : std::string_view());
  if (message.empty()) return;
  out += ' ';
  // Records are '\n'-separated in batches and newline framing ends a frame at '\n', so line
  // breaks inside a message become spaces; every other byte is forwarded as received.
  for (char c : message) out += (c == '\n' || c == '\r') ? ' ' : c;
}

}  // namespace logfold
