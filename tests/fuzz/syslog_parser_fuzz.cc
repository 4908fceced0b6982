// Fuzz target: SyslogParser in syslog mode (RFC 5424 / RFC 3164 detected per line) and raw
// mode. Never crashes, never loses the line (raw keeps it; the message is a suffix of it), keeps
// every header field inside the line and within its RFC limits, and parses the same into a
// reused record as into a fresh one.
#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline/log_record.h"
#include "pipeline/syslog_parser.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/log_record_equal.h"

namespace {

using logfold::LogRecord;
using logfold::ParseOutcome;
using logfold::SyslogFlavor;

bool IsSuffix(std::string_view s, std::string_view of) {
  return s.size() <= of.size() && of.substr(of.size() - s.size()) == s;
}

bool IsPrintUsAscii(std::string_view s) {
  for (char c : s) {
    if (c < 33 || c > 126) return false;
  }
  return true;
}

// The line minus one trailing LF, then one CR: what the parser documents it strips.
std::string_view Stripped(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

void CheckSyslog(std::string_view line, logfold::TimeUs arrival, const LogRecord& r) {
  const std::string_view raw = Stripped(line);
  FUZZ_CHECK(r.raw == raw, "raw is the line without its terminator");
  FUZZ_CHECK(r.arrival_us == arrival, "arrival is kept");
  FUZZ_CHECK(static_cast<int>(r.outcome) < static_cast<int>(ParseOutcome::kCount_),
             "outcome in range");
  FUZZ_CHECK(IsSuffix(r.message, raw), "the message is a suffix of the line");
  FUZZ_CHECK(r.json_fields.empty(), "no JSON fields in syslog mode");
  if (raw.empty()) {
    FUZZ_CHECK(r.outcome == ParseOutcome::kEmpty, "an empty line is kEmpty");
    return;
  }
  if (r.flavor == SyslogFlavor::kNone) {
    FUZZ_CHECK(r.outcome == ParseOutcome::kNoHeader || r.outcome == ParseOutcome::kBadPri,
               "no flavor only without a valid PRI");
    FUZZ_CHECK(r.message == raw, "a line without a header is kept whole as the message");
    FUZZ_CHECK(r.facility == -1 && r.severity == -1 && !r.has_timestamp, "no header fields");
    FUZZ_CHECK(r.hostname.empty() && r.app_name.empty() && r.tag.empty() && r.procid.empty(),
               "no header fields");
    return;
  }
  FUZZ_CHECK(r.flavor == SyslogFlavor::kRfc3164 || r.flavor == SyslogFlavor::kRfc5424,
             "syslog flavor");
  // Without PRI only a line that starts with a timestamp is a header (rsyslog's <13>).
  FUZZ_CHECK(
      raw[0] == '<' || (r.flavor == SyslogFlavor::kRfc3164 && r.facility == 1 && r.severity == 5),
      "a syslog header starts with PRI, or is RFC 3164 with the assumed PRI 13");
  FUZZ_CHECK(r.facility >= 0 && r.facility <= 23 && r.severity >= 0 && r.severity <= 7,
             "PRI 0..191");
  FUZZ_CHECK(r.outcome != ParseOutcome::kNoHeader && r.outcome != ParseOutcome::kBadPri &&
                 r.outcome != ParseOutcome::kBadJson &&
                 r.outcome != ParseOutcome::kMissingMessageField,
             "syslog outcome");
  FUZZ_CHECK(raw.find(r.hostname) != std::string_view::npos &&
                 raw.find(r.app_name) != std::string_view::npos &&
                 raw.find(r.procid) != std::string_view::npos &&
                 raw.find(r.msgid) != std::string_view::npos &&
                 raw.find(r.structured_data) != std::string_view::npos,
             "header fields are taken from the line");
  // RFC 5424's limits; an RFC 3164 tag (and so its app) may be up to 255 bytes.
  FUZZ_CHECK(r.hostname.size() <= 255 &&
                 r.app_name.size() <= (r.flavor == SyslogFlavor::kRfc5424 ? 48u : 255u) &&
                 r.procid.size() <= (r.flavor == SyslogFlavor::kRfc5424 ? 128u : 255u) &&
                 r.msgid.size() <= 32,
             "field limits");
  FUZZ_CHECK(IsPrintUsAscii(r.hostname) && IsPrintUsAscii(r.app_name) && IsPrintUsAscii(r.procid) &&
                 IsPrintUsAscii(r.msgid),
             "header fields are printable US-ASCII");
  // A tag is kept only where the program name stops short of it, at a '/'.
  if (!r.tag.empty()) {
    FUZZ_CHECK(r.flavor == SyslogFlavor::kRfc3164 && raw.find(r.tag) != std::string_view::npos &&
                   r.tag.starts_with(r.app_name) && r.tag.size() > r.app_name.size() &&
                   r.tag[r.app_name.size()] == '/' && r.app_name.find('/') == std::string::npos,
               "tag: the program name runs to the tag's first '/'");
  }
  if (r.flavor == SyslogFlavor::kRfc3164) {
    FUZZ_CHECK(r.msgid.empty() && r.structured_data.empty(), "RFC 3164 has no MSGID or SD");
  }
  if (!r.structured_data.empty()) {
    FUZZ_CHECK(r.structured_data.front() == '[' && r.structured_data.back() == ']',
               "SD is whole elements");
  }
  if (r.outcome != ParseOutcome::kOk) {
    // On a header error nothing after PRI is lost: the message is all of it, or (SD errors)
    // the text from SD on, the fields before SD being kept.
    const std::string_view after_pri = raw[0] == '<' ? raw.substr(raw.find('>') + 1) : raw;
    FUZZ_CHECK(r.outcome == ParseOutcome::kBadStructuredData || r.message == after_pri,
               "a header error keeps all text after PRI as the message");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  // Arrival is the reference for RFC 3164's missing year: the epoch (replay's clock), late
  // 2023, and a New Year's Eve second, where the inferred year flips.
  constexpr logfold::TimeUs kArrivals[] = {0, 1'700'000'000'000'000, 1'704'067'199'000'000};

  const logfold::SyslogParser syslog;
  LogRecord fresh;
  // A record that held another line before, with every field set, as workers reuse them.
  static const LogRecord kUsed = [] {
    LogRecord r;
    logfold::SyslogParser(logfold::SyslogParser::Options{logfold::InputFormat::kJson, "message"})
        .Parse(R"({"message":"m","host":"h","app":"a","severity":3,"time":"2024-01-01T00:00:00Z"})",
               5, r);
    return r;
  }();
  LogRecord reused = kUsed;
  for (const logfold::TimeUs arrival : kArrivals) {
    fresh = LogRecord();
    FUZZ_CHECK(syslog.Parse(line, arrival, fresh) == fresh.outcome, "Parse returns the outcome");
    CheckSyslog(line, arrival, fresh);
    syslog.Parse(line, arrival, reused);
    FUZZ_CHECK(logfold::LogRecordsEqual(fresh, reused), "a reused record parses like a fresh one");
  }

  const logfold::SyslogParser raw_parser(
      logfold::SyslogParser::Options{logfold::InputFormat::kRaw});
  raw_parser.Parse(line, 7, fresh);
  FUZZ_CHECK(fresh.raw == Stripped(line) && fresh.message == fresh.raw,
             "raw mode: the message is the whole line");
  FUZZ_CHECK(fresh.outcome == (fresh.raw.empty() ? ParseOutcome::kEmpty : ParseOutcome::kOk),
             "raw mode: always ok unless empty");
  return 0;
}
