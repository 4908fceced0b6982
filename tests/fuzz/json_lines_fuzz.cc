// Fuzz target: SyslogParser in JSON-lines mode. Never crashes or throws; a line that is not a
// JSON object is kept whole as the message; an object's message field is taken out (its text,
// or its JSON when not a string) and the rest is carried as JSON text that parses back.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <nlohmann/json.hpp>
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
using Json = nlohmann::json;

std::string_view Stripped(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::string Dump(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

void Check(std::string_view line, const std::string& field, const LogRecord& r) {
  const std::string_view raw = Stripped(line);
  FUZZ_CHECK(r.raw == raw, "raw is the line without its terminator");
  FUZZ_CHECK(r.severity >= -1 && r.severity <= 7 && r.facility == -1, "severity in range");
  switch (r.outcome) {
    case ParseOutcome::kEmpty:
      FUZZ_CHECK(raw.empty(), "only an empty line is kEmpty");
      return;
    case ParseOutcome::kBadJson:
      FUZZ_CHECK(r.flavor == SyslogFlavor::kNone && r.message == raw && r.json_fields.empty(),
                 "a line that is no JSON object is kept whole as the message");
      return;
    case ParseOutcome::kMissingMessageField:
    case ParseOutcome::kOk:
      break;
    default:
      FUZZ_CHECK(false, "JSON outcome");
  }
  FUZZ_CHECK(r.flavor == SyslogFlavor::kJson, "JSON flavor");
  const Json fields = Json::parse(r.json_fields, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(fields.is_object(), "json_fields is a JSON object");
  if (r.outcome == ParseOutcome::kMissingMessageField) {
    FUZZ_CHECK(r.message == raw, "without the message field the line is the message");
    return;
  }
  // For a plain (dot-free) field, redo the documented mapping with nlohmann directly.
  if (field.find('.') != std::string::npos) return;
  Json doc = Json::parse(raw.begin(), raw.end(), nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(doc.is_object(), "an accepted line is an object");
  // With the default field, the common loggers' message fields stand in when it is absent
  // (pipeline/syslog_parser.cc: msg, log, event, in that order).
  std::string taken = field;
  if (field == "message" && !doc.contains(field)) {
    for (const char* alias : {"msg", "log", "event"}) {
      if (doc.contains(alias)) {
        taken = alias;
        break;
      }
    }
  }
  FUZZ_CHECK(doc.contains(taken), "an accepted line holds the field");
  const Json& value = doc[taken];
  FUZZ_CHECK(r.message == (value.is_string() ? value.get<std::string>() : Dump(value)),
             "the message is the field's text, or its JSON when not a string");
  doc.erase(taken);
  FUZZ_CHECK(r.json_fields == Dump(doc), "json_fields is the object without the field");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  // The input's last byte picks the message field (0: "message"); the rest is the line.
  static const std::string kFields[] = {"message", "msg", "log.message", "a.b.c"};
  const std::string& field = kFields[in.ConsumeIntegralInRange<std::size_t>(0, 3)];
  const std::string line = in.ConsumeRemainingBytesAsString();

  const logfold::SyslogParser parser(
      logfold::SyslogParser::Options{logfold::InputFormat::kJson, field});
  LogRecord fresh;
  parser.Parse(line, 11, fresh);
  Check(line, field, fresh);

  LogRecord reused;
  logfold::SyslogParser().Parse("<34>1 2003-10-11T22:14:15.003Z host app 12 ID47 [a b=\"c\"] m", 5,
                                reused);
  parser.Parse(line, 11, reused);
  FUZZ_CHECK(logfold::LogRecordsEqual(fresh, reused), "a reused record parses like a fresh one");
  return 0;
}
