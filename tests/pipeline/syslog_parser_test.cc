// Tests for SyslogParser and the syslog timestamp helpers: RFC 5424 / RFC 3164 / raw / JSON
// lines, hostile input, and the no-allocation property of the syslog hot path.
#include "pipeline/syslog_parser.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/log_record.h"
#include "pipeline/syslog_time.h"

// Counting replacement for the global allocator, so the no-allocation test observes the real
// heap traffic instead of inferring it from capacities.
namespace {
std::atomic<bool> g_count_allocations{false};
std::atomic<std::int64_t> g_allocations{0};
}  // namespace

// All three out of line: once inlined, GCC sees malloc's result reach operator delete (or
// operator new's reach free) and reports a mismatch for what is an intended malloc/free pair.
[[gnu::noinline]] void* operator new(std::size_t size) {
  if (g_count_allocations.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace logfold {
namespace {

using std::string_literals::operator""s;
using std::string_view_literals::operator""sv;

constexpr TimeUs kSecond = 1'000'000;
constexpr TimeUs kHour = 3600 * kSecond;
// 2025-11-22T00:13:30Z: two seconds after the logger examples' timestamp.
constexpr TimeUs kArrival = 1763770410000000;

LogRecord ParseWith(const SyslogParser& parser, std::string_view line, TimeUs arrival = kArrival) {
  LogRecord record;
  const ParseOutcome outcome = parser.Parse(line, arrival, record);
  EXPECT_EQ(outcome, record.outcome);
  EXPECT_EQ(record.arrival_us, arrival);
  return record;
}

LogRecord Parse(std::string_view line, TimeUs arrival = kArrival) {
  return ParseWith(SyslogParser(), line, arrival);
}

LogRecord ParseJson(std::string_view line, std::string field = "message") {
  SyslogParser::Options options;
  options.format = InputFormat::kJson;
  options.json_message_field = std::move(field);
  return ParseWith(SyslogParser(options), line);
}

// ---------------------------------------------------------------------------------------
// RFC 5424

TEST(SyslogParserRfc5424Test, Example1WithBom) {
  const std::string_view line =
      "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - "
      "\xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8";
  const LogRecord r = Parse(line);
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.flavor, SyslogFlavor::kRfc5424);
  EXPECT_EQ(r.raw, line);
  EXPECT_EQ(r.facility, 4);
  EXPECT_EQ(r.severity, 2);
  EXPECT_TRUE(r.has_timestamp);
  EXPECT_EQ(r.timestamp_us, 1065910455003000);
  EXPECT_EQ(r.EventTime(), 1065910455003000);
  EXPECT_EQ(r.hostname, "mymachine.example.com");
  EXPECT_EQ(r.app_name, "su");
  EXPECT_EQ(r.procid, "");
  EXPECT_EQ(r.msgid, "ID47");
  EXPECT_EQ(r.structured_data, "");
  // MSG is kept exactly, BOM included (as rsyslog and go-syslog keep it).
  EXPECT_EQ(r.message, "\xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8");
}

TEST(SyslogParserRfc5424Test, Example2NegativeOffsetAndMicroseconds) {
  const LogRecord r = Parse(
      "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make "
      "the do-nuts.");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.facility, 20);
  EXPECT_EQ(r.severity, 5);
  // 05:14:15.000003 at -07:00 is 12:14:15.000003 UTC.
  EXPECT_EQ(r.timestamp_us, 1061727255000003);
  EXPECT_EQ(r.hostname, "192.0.2.1");
  EXPECT_EQ(r.app_name, "myproc");
  EXPECT_EQ(r.procid, "8710");
  EXPECT_EQ(r.msgid, "");
  EXPECT_EQ(r.message, "%% It's time to make the do-nuts.");
}

TEST(SyslogParserRfc5424Test, Example3StructuredDataAndBom) {
  const LogRecord r = Parse(
      "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 "
      "iut=\"3\" eventSource=\"Application\" eventID=\"1011\"] \xEF\xBB\xBF"
      "An application event log entry...");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.app_name, "evntslog");
  EXPECT_EQ(r.msgid, "ID47");
  EXPECT_EQ(r.structured_data,
            "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"]");
  EXPECT_EQ(r.message,
            "\xEF\xBB\xBF"
            "An application event log entry...");
}

TEST(SyslogParserRfc5424Test, Example4TwoSdElementsNoMessage) {
  const LogRecord r = Parse(
      "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 "
      "iut=\"3\" eventSource=\"Application\" eventID=\"1011\"][examplePriority@32473 "
      "class=\"high\"]");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.structured_data,
            "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"]"
            "[examplePriority@32473 class=\"high\"]");
  EXPECT_EQ(r.message, "");
}

TEST(SyslogParserRfc5424Test, StructuredDataEscapesKeptVerbatim) {
  const std::string_view sd = R"([ex@1 a="q\"uote" b="back\\" c="br\]acket" d=""])";
  const LogRecord r = Parse("<14>1 - host app - - "s + std::string(sd) + " msg");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.structured_data, sd);
  EXPECT_EQ(r.message, "msg");
}

TEST(SyslogParserRfc5424Test, UnescapedBracketInsideQuotesIsTolerated) {
  const LogRecord r = Parse(R"(<14>1 - host app - - [ex@1 a="x]y"] msg)");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.structured_data, R"([ex@1 a="x]y"])");
  EXPECT_EQ(r.message, "msg");
}

TEST(SyslogParserRfc5424Test, LoggerUtilLinuxLine) {
  const LogRecord r = Parse(
      "<13>1 2026-11-22T00:13:28.123456+00:00 myhost root 1234 - [timeQuality tzKnown=\"1\" "
      "isSynced=\"0\"] hello");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.flavor, SyslogFlavor::kRfc5424);
  EXPECT_EQ(r.facility, 1);
  EXPECT_EQ(r.severity, 5);
  EXPECT_EQ(r.timestamp_us, 1795306408123456);
  EXPECT_EQ(r.hostname, "myhost");
  EXPECT_EQ(r.app_name, "root");
  EXPECT_EQ(r.procid, "1234");
  EXPECT_EQ(r.msgid, "");
  EXPECT_EQ(r.structured_data, "[timeQuality tzKnown=\"1\" isSynced=\"0\"]");
  EXPECT_EQ(r.message, "hello");
}

TEST(SyslogParserRfc5424Test, AllNilValues) {
  const LogRecord r = Parse("<0>1 - - - - - -");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.flavor, SyslogFlavor::kRfc5424);
  EXPECT_EQ(r.facility, 0);
  EXPECT_EQ(r.severity, 0);
  EXPECT_FALSE(r.has_timestamp);
  EXPECT_EQ(r.EventTime(), kArrival);
  EXPECT_EQ(r.hostname, "");
  EXPECT_EQ(r.app_name, "");
  EXPECT_EQ(r.procid, "");
  EXPECT_EQ(r.msgid, "");
  EXPECT_EQ(r.structured_data, "");
  EXPECT_EQ(r.message, "");
}

TEST(SyslogParserRfc5424Test, MessageKeepsInnerSpacing) {
  const LogRecord r = Parse("<191>12 - h a p m -   two  spaces ");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.facility, 23);
  EXPECT_EQ(r.severity, 7);
  EXPECT_EQ(r.message, "  two  spaces ");
}

struct TimestampCase {
  std::string_view text;
  TimeUs expected_us;
};

class Rfc5424TimestampTest : public testing::TestWithParam<TimestampCase> {};

TEST_P(Rfc5424TimestampTest, ConvertsToUtcMicroseconds) {
  const LogRecord r = Parse("<13>1 "s + std::string(GetParam().text) + " h a - - - m");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk) << GetParam().text;
  EXPECT_TRUE(r.has_timestamp);
  EXPECT_EQ(r.timestamp_us, GetParam().expected_us) << GetParam().text;
}

constexpr TimeUs kBase = 1065910455000000;  // 2003-10-11T22:14:15Z

INSTANTIATE_TEST_SUITE_P(
    Fractions, Rfc5424TimestampTest,
    testing::Values(TimestampCase{"2003-10-11T22:14:15Z", kBase},
                    TimestampCase{"2003-10-11T22:14:15.003Z", kBase + 3000},
                    TimestampCase{"2003-10-11T22:14:15.1Z", kBase + 100000},
                    TimestampCase{"2003-10-11T22:14:15.123456Z", kBase + 123456},
                    TimestampCase{"2003-10-11T22:14:15.1234567Z", kBase + 123456},
                    TimestampCase{"2003-10-11T22:14:15.999999999Z", kBase + 999999},
                    TimestampCase{"2003-10-11t22:14:15z", kBase},
                    TimestampCase{"2003-10-11T22:14:15", kBase},  // no zone: UTC
                    TimestampCase{"2003-10-11T22:14:15+00:00", kBase},
                    TimestampCase{"2003-10-11T22:14:15-00:00", kBase},
                    TimestampCase{"2003-10-12T03:44:15+05:30", kBase},
                    TimestampCase{"2003-10-11T12:14:15.5-10:00", kBase + 500000},
                    TimestampCase{"2004-02-29T00:00:00Z", 1078012800000000},
                    TimestampCase{"1970-01-01T00:00:00Z", 0},
                    TimestampCase{"1969-12-31T23:59:59.5Z", -500000}));

class Rfc5424BadTimestampTest : public testing::TestWithParam<std::string_view> {};

TEST_P(Rfc5424BadTimestampTest, IsBadTimestampWithRestAsMessage) {
  const std::string rest = "1 "s + std::string(GetParam()) + " host app - - - msg";
  const LogRecord r = Parse("<13>" + rest);
  EXPECT_EQ(r.outcome, ParseOutcome::kBadTimestamp) << GetParam();
  EXPECT_EQ(r.flavor, SyslogFlavor::kRfc5424);
  EXPECT_EQ(r.facility, 1);
  EXPECT_EQ(r.severity, 5);
  EXPECT_FALSE(r.has_timestamp);
  EXPECT_EQ(r.message, rest);
}

INSTANTIATE_TEST_SUITE_P(Malformed, Rfc5424BadTimestampTest,
                         testing::Values("2003-13-11T22:14:15Z", "2003-00-11T22:14:15Z",
                                         "2003-02-29T22:14:15Z", "2003-04-31T22:14:15Z",
                                         "2003-10-11T24:00:00Z", "2003-10-11T22:60:15Z",
                                         "2003-10-11T22:14:61Z", "2003-10-11T22:14:15.Z",
                                         "2003-10-11T22:14:15+0700", "2003-10-11T22:14:15+24:00",
                                         "2003-10-11T22:14:15+07:60", "2003-10-11X22:14:15Z",
                                         "2003-10-11T22:14Z", "2003-10-11", "2003-1-11T22:14:15Z",
                                         "2003-10-11T22:14:15ZZ", "2003-10-11T22:14:15+07"));

struct FieldLengthCase {
  std::string_view name;
  std::size_t max;
  int index;  // 0 hostname, 1 app, 2 procid, 3 msgid
};

class Rfc5424FieldLengthTest : public testing::TestWithParam<FieldLengthCase> {};

std::string LineWithField(int index, const std::string& value) {
  std::string fields[4] = {"-", "-", "-", "-"};
  fields[index] = value;
  return "<13>1 - " + fields[0] + " " + fields[1] + " " + fields[2] + " " + fields[3] + " - m";
}

TEST_P(Rfc5424FieldLengthTest, LimitIsInclusive) {
  const FieldLengthCase& c = GetParam();
  const std::string at_limit(c.max, 'x');
  const LogRecord ok = Parse(LineWithField(c.index, at_limit));
  EXPECT_EQ(ok.outcome, ParseOutcome::kOk) << c.name;
  const std::string* fields[4] = {&ok.hostname, &ok.app_name, &ok.procid, &ok.msgid};
  EXPECT_EQ(*fields[c.index], at_limit) << c.name;
  EXPECT_EQ(ok.message, "m");

  const std::string line = LineWithField(c.index, std::string(c.max + 1, 'x'));
  const LogRecord bad = Parse(line);
  EXPECT_EQ(bad.outcome, ParseOutcome::kBadHeader) << c.name;
  EXPECT_EQ(bad.flavor, SyslogFlavor::kRfc5424);
  EXPECT_EQ(bad.message, std::string_view(line).substr(4));
}

INSTANTIATE_TEST_SUITE_P(Limits, Rfc5424FieldLengthTest,
                         testing::Values(FieldLengthCase{"hostname", 255, 0},
                                         FieldLengthCase{"app_name", 48, 1},
                                         FieldLengthCase{"procid", 128, 2},
                                         FieldLengthCase{"msgid", 32, 3}));

TEST(SyslogParserRfc5424Test, NonPrintableHeaderFieldIsBadHeader) {
  const LogRecord r = Parse("<13>1 - ho\xC3\xA9st app - - - m");
  EXPECT_EQ(r.outcome, ParseOutcome::kBadHeader);
  EXPECT_EQ(r.message, "1 - ho\xC3\xA9st app - - - m");
}

TEST(SyslogParserRfc5424Test, DoubleSpaceBetweenFieldsIsBadHeader) {
  const LogRecord r = Parse("<13>1 -  host app - - - m");
  EXPECT_EQ(r.outcome, ParseOutcome::kBadHeader);
  EXPECT_EQ(r.message, "1 -  host app - - - m");
}

TEST(SyslogParserRfc5424Test, HeaderOnlyLines) {
  {
    const LogRecord r = Parse("<13>1");
    EXPECT_EQ(r.flavor, SyslogFlavor::kRfc5424);
    EXPECT_EQ(r.outcome, ParseOutcome::kBadHeader);
    EXPECT_EQ(r.message, "1");
    EXPECT_EQ(r.severity, 5);
  }
  {
    const LogRecord r = Parse("<13>1 -");
    EXPECT_EQ(r.flavor, SyslogFlavor::kRfc5424);
    EXPECT_EQ(r.outcome, ParseOutcome::kBadHeader);
    EXPECT_EQ(r.message, "1 -");
    EXPECT_FALSE(r.has_timestamp);
  }
  {
    const LogRecord r = Parse("<13>1 2003-10-11T22:14:15Z host");
    EXPECT_EQ(r.outcome, ParseOutcome::kBadHeader);
    EXPECT_EQ(r.message, "1 2003-10-11T22:14:15Z host");
    EXPECT_TRUE(r.has_timestamp);  // what did parse is kept
    EXPECT_EQ(r.hostname, "host");
  }
  {
    // Everything up to MSGID is there: only the mandatory STRUCTURED-DATA is missing.
    const LogRecord r = Parse("<13>1 - host app 12 ID");
    EXPECT_EQ(r.outcome, ParseOutcome::kBadStructuredData);
    EXPECT_EQ(r.hostname, "host");
    EXPECT_EQ(r.app_name, "app");
    EXPECT_EQ(r.procid, "12");
    EXPECT_EQ(r.msgid, "ID");
    EXPECT_EQ(r.message, "");
  }
}

class BadStructuredDataTest : public testing::TestWithParam<std::string_view> {};

TEST_P(BadStructuredDataTest, KeepsHeaderAndRestAsMessage) {
  const std::string line =
      "<165>1 2003-10-11T22:14:15.003Z host app 42 ID7 "s + std::string(GetParam());
  const LogRecord r = Parse(line);
  EXPECT_EQ(r.outcome, ParseOutcome::kBadStructuredData) << GetParam();
  EXPECT_EQ(r.flavor, SyslogFlavor::kRfc5424);
  EXPECT_EQ(r.timestamp_us, 1065910455003000);
  EXPECT_EQ(r.hostname, "host");
  EXPECT_EQ(r.app_name, "app");
  EXPECT_EQ(r.procid, "42");
  EXPECT_EQ(r.msgid, "ID7");
  EXPECT_EQ(r.structured_data, "");
  EXPECT_EQ(r.message, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Malformed, BadStructuredDataTest,
                         testing::Values(R"([id@1 a="b)", R"([id@1 a="b")", R"([id@1 a="b\"])",
                                         R"([id@1 a="b\)", "[", "[]", "[id@1", "[id@1 ",
                                         R"([id@1 a=b])", R"([id@1 ="b"])", R"([id@1 a="b"]x msg)",
                                         "-x msg", "x msg", R"([id@1 a = "b"])", R"([id"1 a="b"])",
                                         R"([a23456789012345678901234567890123 a="b"])",
                                         R"([id@1  a="b"])"));

TEST(SyslogParserRfc5424Test, SdNameOf32CharsIsAccepted) {
  const LogRecord r = Parse(R"(<13>1 - h a - - [a2345678901234567890123456789012 x="y"])");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.structured_data, R"([a2345678901234567890123456789012 x="y"])");
}

// ---------------------------------------------------------------------------------------
// RFC 3164

TEST(SyslogParserRfc3164Test, LoggerLineWithHostname) {
  const LogRecord r = Parse("<13>Nov 22 00:13:28 myhost root: hello");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.flavor, SyslogFlavor::kRfc3164);
  EXPECT_EQ(r.facility, 1);
  EXPECT_EQ(r.severity, 5);
  EXPECT_TRUE(r.has_timestamp);
  EXPECT_EQ(r.timestamp_us, kArrival - 2 * kSecond);
  EXPECT_EQ(r.hostname, "myhost");
  EXPECT_EQ(r.app_name, "root");
  EXPECT_EQ(r.procid, "");
  EXPECT_EQ(r.message, "hello");
}

TEST(SyslogParserRfc3164Test, RfcExampleWithPid) {
  const LogRecord r =
      Parse("<34>Oct 11 22:14:15 mymachine su[4321]: 'su root' failed for lonvick on /dev/pts/8",
            1065910455000000 + kHour);
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.facility, 4);
  EXPECT_EQ(r.severity, 2);
  EXPECT_EQ(r.timestamp_us, 1065910455000000);
  EXPECT_EQ(r.hostname, "mymachine");
  EXPECT_EQ(r.app_name, "su");
  EXPECT_EQ(r.procid, "4321");
  EXPECT_EQ(r.message, "'su root' failed for lonvick on /dev/pts/8");
}

TEST(SyslogParserRfc3164Test, SpacePaddedAndUnpaddedDay) {
  const TimeUs arrival = 1740787200000000;  // 2025-03-01T00:00:00Z
  const TimeUs expected = arrival + 12 * kHour + 34 * 60 * kSecond + 56 * kSecond;
  for (std::string_view line :
       {"<13>Mar  1 12:34:56 host app: x"sv, "<13>Mar 01 12:34:56 host app: x"sv,
        "<13>Mar 1 12:34:56 host app: x"sv, "<13>MAR  1 12:34:56 host app: x"sv}) {
    const LogRecord r = Parse(line, arrival);
    EXPECT_EQ(r.outcome, ParseOutcome::kOk) << line;
    EXPECT_EQ(r.timestamp_us, expected) << line;
    EXPECT_EQ(r.hostname, "host") << line;
    EXPECT_EQ(r.app_name, "app") << line;
    EXPECT_EQ(r.message, "x") << line;
  }
}

TEST(SyslogParserRfc3164Test, FractionalBsdSeconds) {
  const LogRecord r = Parse("<13>Nov 22 00:13:28.250 host app: x");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.timestamp_us, kArrival - 2 * kSecond + 250000);
}

TEST(SyslogParserRfc3164Test, YearInferredBackwardAcrossNewYear) {
  // Arrives 2025-01-01T00:00:01Z; the line was written two seconds earlier, in 2024.
  const LogRecord r = Parse("<13>Dec 31 23:59:59 host app: x", 1735689601000000);
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.timestamp_us, 1735689599000000);
}

TEST(SyslogParserRfc3164Test, YearInferredForwardAcrossNewYear) {
  // Sender clock slightly ahead: arrives 2024-12-31T23:59:59Z stamped Jan 1, i.e. 2025.
  const LogRecord r = Parse("<13>Jan  1 00:00:01 host app: x", 1735689599000000);
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.timestamp_us, 1735689601000000);
}

TEST(SyslogParserRfc3164Test, YearInferredSameYearMidYear) {
  const TimeUs arrival = 1749945600000000;  // 2025-06-15T00:00:00Z
  const LogRecord r = Parse("<13>Jun 14 00:00:00 host app: x", arrival);
  EXPECT_EQ(r.timestamp_us, arrival - 24 * kHour);
}

TEST(SyslogParserRfc3164Test, Feb29PicksTheLeapCandidate) {
  const TimeUs feb29_2024_noon = 1709208000000000;
  // Arrival on 2024-03-01: 2024 itself is leap.
  EXPECT_EQ(Parse("<13>Feb 29 12:00:00 h a: x", 1709251200000000).timestamp_us, feb29_2024_noon);
  // Arrival on 2025-03-01: 2025 and 2026 are skipped, 2024 is the only candidate.
  const LogRecord r = Parse("<13>Feb 29 12:00:00 h a: x", 1740787200000000);
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.timestamp_us, feb29_2024_noon);
  // Arrival on 2027-06-01: only 2028 of 2026..2028 has a Feb 29.
  EXPECT_EQ(Parse("<13>Feb 29 12:00:00 h a: x", 1811808000000000).timestamp_us, 1835438400000000);
}

TEST(SyslogParserRfc3164Test, Feb29WithNoLeapCandidateIsBadTimestamp) {
  // Arrival in 2101: 2100, 2101 and 2102 are all common years.
  const LogRecord r = Parse("<13>Feb 29 12:00:00 h a: x", 4147027200000000);
  EXPECT_EQ(r.outcome, ParseOutcome::kBadTimestamp);
  EXPECT_EQ(r.flavor, SyslogFlavor::kRfc3164);
  EXPECT_FALSE(r.has_timestamp);
  EXPECT_EQ(r.message, "Feb 29 12:00:00 h a: x");
}

TEST(SyslogParserRfc3164Test, ImpossibleDatesAreBadTimestamp) {
  for (std::string_view line : {"<13>Feb 30 12:00:00 h a: x"sv, "<13>Apr 31 12:00:00 h a: x"sv,
                                "<13>Jan 32 12:00:00 h a: x"sv, "<13>Jan 00 12:00:00 h a: x"sv,
                                "<13>Jan  1 24:00:00 h a: x"sv, "<13>Jan  1 12:60:00 h a: x"sv,
                                "<13>Jan  1 12:00:00x h a: x"sv, "<13>Jan  1 12:00 h a: x"sv}) {
    const LogRecord r = Parse(line);
    EXPECT_EQ(r.outcome, ParseOutcome::kBadTimestamp) << line;
    EXPECT_EQ(r.message, line.substr(4)) << line;
  }
}

TEST(SyslogParserRfc3164Test, Rfc3339TimestampRsyslogStyle) {
  const LogRecord r = Parse("<13>2026-11-22T00:13:28.123456+00:00 myhost app[12]: msg");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.flavor, SyslogFlavor::kRfc3164);
  EXPECT_EQ(r.timestamp_us, 1795306408123456);
  EXPECT_EQ(r.hostname, "myhost");
  EXPECT_EQ(r.app_name, "app");
  EXPECT_EQ(r.procid, "12");
  EXPECT_EQ(r.message, "msg");
}

TEST(SyslogParserRfc3164Test, MissingHostnameLoggerToLocalSocket) {
  {
    const LogRecord r = Parse("<13>Nov 22 00:13:28 root: hello");
    EXPECT_EQ(r.outcome, ParseOutcome::kOk);
    EXPECT_EQ(r.hostname, "");
    EXPECT_EQ(r.app_name, "root");
    EXPECT_EQ(r.message, "hello");
  }
  {
    const LogRecord r = Parse("<30>Nov 22 00:13:28 systemd[1]: Started Session 4.");
    EXPECT_EQ(r.outcome, ParseOutcome::kOk);
    EXPECT_EQ(r.hostname, "");
    EXPECT_EQ(r.app_name, "systemd");
    EXPECT_EQ(r.procid, "1");
    EXPECT_EQ(r.message, "Started Session 4.");
  }
}

TEST(SyslogParserRfc3164Test, TagForms) {
  struct Case {
    std::string_view line;
    std::string_view app;
    std::string_view pid;
    std::string_view message;
    std::string_view tag = {};  // "": the tag is the app
  };
  const Case cases[] = {
      {"<13>Nov 22 00:13:28 h kernel: [ 1.0] usb", "kernel", "", "[ 1.0] usb"},
      // The program name ends at '/' (rsyslog's programname); the whole name is the tag.
      {"<13>Nov 22 00:13:28 h postfix/smtpd[991]: connect", "postfix", "991", "connect",
       "postfix/smtpd"},
      {"<13>Nov 22 00:13:28 h /USR/SBIN/CRON[77]: (root) CMD", "", "77", "(root) CMD",
       "/USR/SBIN/CRON"},
      {"<13>Nov 22 00:13:28 h a/b/c: x", "a", "", "x", "a/b/c"},
      {"<13>Nov 22 00:13:28 h app[1/2]: x", "app", "1/2", "x"},
      {"<13>Nov 22 00:13:28 h sshd[5] no colon", "sshd", "5", "no colon"},
      {"<13>Nov 22 00:13:28 h app:", "app", "", ""},
      {"<13>Nov 22 00:13:28 h app[]: x", "app", "", "x"},
      // rsyslog's reading: the tag runs to the first ':' or SP, colon or not.
      {"<13>Nov 22 00:13:28 h just some words", "just", "", "some words"},
      {"<13>Nov 22 00:13:28 h app:glued", "app", "", "glued"},
      {"<13>Nov 22 00:13:28 h app[12: x", "app", "", "x"},
      {"<13>Nov 22 00:13:28 h sshd(pam_unix)[12750]: x", "sshd(pam_unix)", "12750", "x"},
      {"<13>Nov 22 00:13:28 h %ASA-6-302013: Built", "%ASA-6-302013", "", "Built"},
      {"<13>Nov 22 00:13:28 h", "", "", ""},
  };
  for (const Case& c : cases) {
    const LogRecord r = Parse(c.line);
    EXPECT_EQ(r.outcome, ParseOutcome::kOk) << c.line;
    EXPECT_EQ(r.hostname, "h") << c.line;
    EXPECT_EQ(r.app_name, c.app) << c.line;
    EXPECT_EQ(r.tag, c.tag) << c.line;
    EXPECT_EQ(r.procid, c.pid) << c.line;
    EXPECT_EQ(r.message, c.message) << c.line;
  }
}

// The tag is an RFC 3164 notion: an RFC 5424 APP-NAME is a field of its own and kept whole,
// as rsyslog relays it.
TEST(SyslogParserRfc5424Test, AppNameWithSlashIsKeptWhole) {
  const LogRecord r = Parse("<13>1 2026-01-01T00:00:00Z h postfix/smtpd 9 - - connect");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.app_name, "postfix/smtpd");
  EXPECT_EQ(r.tag, "");
}

TEST(SyslogParserRfc3164Test, TagLengthLimit) {
  const std::string tag255(255, 't');
  const LogRecord ok = Parse("<13>Nov 22 00:13:28 h " + tag255 + ": x");
  EXPECT_EQ(ok.app_name, tag255);
  EXPECT_EQ(ok.message, "x");
  const std::string tag256(256, 't');
  const LogRecord long_tag = Parse("<13>Nov 22 00:13:28 h " + tag256 + ": x");
  EXPECT_EQ(long_tag.outcome, ParseOutcome::kOk);
  EXPECT_EQ(long_tag.app_name, "");
  EXPECT_EQ(long_tag.message, tag256 + ": x");
}

TEST(SyslogParserRfc3164Test, HostnameTooLongOrNonAsciiIsNoHostname) {
  // Neither a hostname nor a tag (too long for both): every byte stays in the message.
  const std::string text = std::string(256, 'h') + " app: x";
  const LogRecord r = Parse("<13>Nov 22 00:13:28 " + text);
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.flavor, SyslogFlavor::kRfc3164);
  EXPECT_TRUE(r.has_timestamp);
  EXPECT_EQ(r.hostname, "");
  EXPECT_EQ(r.app_name, "");
  EXPECT_EQ(r.message, text);

  const LogRecord utf8 = Parse("<13>Nov 22 00:13:28 h\xC3\xA9llo world");
  EXPECT_EQ(utf8.outcome, ParseOutcome::kOk);
  EXPECT_EQ(utf8.hostname, "");
  EXPECT_EQ(utf8.app_name, "");
  EXPECT_EQ(utf8.message, "h\xC3\xA9llo world");
}

TEST(SyslogParserRfc3164Test, HeaderEndingAfterTimestampHasAbsentFields) {
  for (std::string_view line : {"<13>Nov 22 00:13:28"sv, "<13>Nov 22 00:13:28 "sv}) {
    const LogRecord r = Parse(line);
    EXPECT_EQ(r.outcome, ParseOutcome::kOk) << line;
    EXPECT_EQ(r.flavor, SyslogFlavor::kRfc3164);
    EXPECT_TRUE(r.has_timestamp);
    EXPECT_EQ(r.hostname, "");
    EXPECT_EQ(r.app_name, "");
    EXPECT_EQ(r.message, "");
  }
}

TEST(SyslogParserRfc3164Test, ExtraSpaceAfterTimestampEndsTheHeaderAsInRsyslog) {
  // rsyslog takes one SP after each header field; a second one means no hostname and an
  // empty tag, and the text after it is the message.
  const LogRecord r = Parse("<13>Nov 22 00:13:28  host  app: x");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.hostname, "");
  EXPECT_EQ(r.app_name, "");
  EXPECT_EQ(r.message, "host  app: x");
}

// ---------------------------------------------------------------------------------------
// Neither header, bad PRI, no header

TEST(SyslogParserFallbackTest, ValidPriThenNoTimestampReadsHostAndTagAsRsyslog) {
  struct Case {
    std::string_view line, host, app, message;
  };
  const Case cases[] = {
      {"<13>hello world", "hello", "world", ""},
      {"<13>12 disks found", "12", "disks", "found"},
      {"<13>", "", "", ""},
      {"<13>0 - h a - - - x", "0", "-", "h a - - - x"},
      {"<13>1 garbage here", "1", "garbage", "here"},
      {"<13>myapp[12]: started", "", "myapp", "started"},
  };
  for (const Case& c : cases) {
    const LogRecord r = Parse(c.line);
    EXPECT_EQ(r.outcome, ParseOutcome::kOk) << c.line;
    EXPECT_EQ(r.flavor, SyslogFlavor::kRfc3164) << c.line;
    EXPECT_FALSE(r.has_timestamp) << c.line;
    EXPECT_EQ(r.facility, 1) << c.line;
    EXPECT_EQ(r.severity, 5) << c.line;
    EXPECT_EQ(r.hostname, c.host) << c.line;
    EXPECT_EQ(r.app_name, c.app) << c.line;
    EXPECT_EQ(r.message, c.message) << c.line;
    EXPECT_EQ(r.raw, c.line);
  }
}

TEST(SyslogParserFallbackTest, BadPriKeepsWholeLine) {
  for (std::string_view line :
       {"<999>Nov 22 00:13:28 h a: x"sv, "<abc>x"sv, "<13"sv, "<13 x"sv, "<>x"sv, "<"sv, "<192>x"sv,
        "<01>x"sv, "<00>x"sv, "<1000>x"sv, "<-1>x"sv, "< 13>x"sv, "<1a>x"sv}) {
    const LogRecord r = Parse(line);
    EXPECT_EQ(r.outcome, ParseOutcome::kBadPri) << line;
    EXPECT_EQ(r.flavor, SyslogFlavor::kNone) << line;
    EXPECT_EQ(r.facility, -1) << line;
    EXPECT_EQ(r.severity, -1) << line;
    EXPECT_EQ(r.message, line) << line;
  }
}

TEST(SyslogParserFallbackTest, PriBoundaries) {
  const LogRecord zero = Parse("<0>Nov 22 00:13:28 h a: x");
  EXPECT_EQ(zero.outcome, ParseOutcome::kOk);
  EXPECT_EQ(zero.facility, 0);
  EXPECT_EQ(zero.severity, 0);
  const LogRecord max = Parse("<191>Nov 22 00:13:28 h a: x");
  EXPECT_EQ(max.outcome, ParseOutcome::kOk);
  EXPECT_EQ(max.facility, 23);
  EXPECT_EQ(max.severity, 7);
}

TEST(SyslogParserFallbackTest, NoHeader) {
  for (std::string_view line :
       {"plain text"sv, " <13>1 - h a - - - x"sv, "\xEF\xBB\xBF<13>x"sv, "x"sv}) {
    const LogRecord r = Parse(line);
    EXPECT_EQ(r.outcome, ParseOutcome::kNoHeader) << line;
    EXPECT_EQ(r.flavor, SyslogFlavor::kNone);
    EXPECT_EQ(r.facility, -1);
    EXPECT_EQ(r.message, line);
    EXPECT_FALSE(r.has_timestamp);
  }
}

TEST(SyslogParserFallbackTest, EmptyLine) {
  for (std::string_view line : {""sv, "\r"sv}) {
    const LogRecord r = Parse(line);
    EXPECT_EQ(r.outcome, ParseOutcome::kEmpty);
    EXPECT_EQ(r.flavor, SyslogFlavor::kNone);
    EXPECT_EQ(r.raw, "");
    EXPECT_EQ(r.message, "");
  }
}

// ---------------------------------------------------------------------------------------
// Hostile input

TEST(SyslogParserHostileTest, CrlfStripsOneCarriageReturn) {
  const LogRecord r = Parse("<13>1 - host app - - - hi\r");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.raw, "<13>1 - host app - - - hi");
  EXPECT_EQ(r.message, "hi");
  EXPECT_EQ(Parse("<13>Nov 22 00:13:28 h a: x\r\r").message, "x\r");
  EXPECT_EQ(Parse("no header\r").message, "no header");
}

TEST(SyslogParserHostileTest, NulBytesAreKept) {
  const std::string_view line = "<13>Nov 22 00:13:28 host app: a\0b\0"sv;
  const LogRecord r = Parse(line);
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.raw, line);
  EXPECT_EQ(r.message, "a\0b\0"sv);

  const LogRecord in_host = Parse("<13>Nov 22 00:13:28 ho\0st app: a"sv);
  EXPECT_EQ(in_host.outcome, ParseOutcome::kOk);
  EXPECT_EQ(in_host.hostname, "");
  EXPECT_EQ(in_host.message, "ho\0st app: a"sv);

  const LogRecord in_5424 = Parse("<13>1 - h a - - - \0x\0"sv);
  EXPECT_EQ(in_5424.outcome, ParseOutcome::kOk);
  EXPECT_EQ(in_5424.message, "\0x\0"sv);

  const LogRecord in_pri = Parse("<1\0>x"sv);
  EXPECT_EQ(in_pri.outcome, ParseOutcome::kBadPri);
  EXPECT_EQ(in_pri.message, "<1\0>x"sv);
}

TEST(SyslogParserHostileTest, InvalidUtf8IsKeptVerbatim) {
  const std::string_view bytes = "\xFF\xFE\xC3(\xED\xA0\x80 bad \xF8\x88\x80\x80\x80";
  const LogRecord r = Parse("<13>1 - h a - - - "s + std::string(bytes));
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.message, bytes);
  const LogRecord bsd = Parse("<13>Nov 22 00:13:28 h a: "s + std::string(bytes));
  EXPECT_EQ(bsd.message, bytes);
  // A lone BOM prefix that is cut short is not a BOM and stays.
  EXPECT_EQ(Parse("<13>1 - h a - - - \xEF\xBB").message, "\xEF\xBB");
}

TEST(SyslogParserHostileTest, OneMebibyteLineIsKeptWhole) {
  const std::string payload(1 << 20, 'x');
  {
    const LogRecord r = Parse("<13>1 - host app - - - " + payload);
    EXPECT_EQ(r.outcome, ParseOutcome::kOk);
    EXPECT_EQ(r.message.size(), payload.size());
    EXPECT_EQ(r.message, payload);
  }
  {
    const LogRecord r = Parse("<13>Nov 22 00:13:28 host app: " + payload);
    EXPECT_EQ(r.outcome, ParseOutcome::kOk);
    EXPECT_EQ(r.message, payload);
  }
  {
    const LogRecord r = Parse(payload);
    EXPECT_EQ(r.outcome, ParseOutcome::kNoHeader);
    EXPECT_EQ(r.message, payload);
    EXPECT_EQ(r.raw.size(), payload.size());
  }
  {
    // One giant token where the hostname would be: neither hostname nor tag.
    const LogRecord r = Parse("<13>Nov 22 00:13:28 " + payload);
    EXPECT_EQ(r.outcome, ParseOutcome::kOk);
    EXPECT_EQ(r.hostname, "");
    EXPECT_EQ(r.message, payload);
  }
  {
    // An SD value that never closes.
    const std::string line = "<13>1 - h a - - [id x=\"" + payload;
    const LogRecord r = Parse(line);
    EXPECT_EQ(r.outcome, ParseOutcome::kBadStructuredData);
    EXPECT_EQ(r.message, "[id x=\"" + payload);
  }
}

TEST(SyslogParserHostileTest, ReusedRecordIsFullyOverwritten) {
  const SyslogParser parser;
  LogRecord r;
  parser.Parse("<165>1 2003-10-11T22:14:15.003Z host app 1 ID [a@1 b=\"c\"] \xEF\xBB\xBFmsg", 7, r);
  ASSERT_EQ(r.outcome, ParseOutcome::kOk);
  parser.Parse("just text", 9, r);
  EXPECT_EQ(r.outcome, ParseOutcome::kNoHeader);
  EXPECT_EQ(r.flavor, SyslogFlavor::kNone);
  EXPECT_EQ(r.facility, -1);
  EXPECT_EQ(r.severity, -1);
  EXPECT_FALSE(r.has_timestamp);
  EXPECT_EQ(r.arrival_us, 9);
  EXPECT_EQ(r.hostname, "");
  EXPECT_EQ(r.app_name, "");
  EXPECT_EQ(r.procid, "");
  EXPECT_EQ(r.msgid, "");
  EXPECT_EQ(r.structured_data, "");
  EXPECT_EQ(r.raw, "just text");
  EXPECT_EQ(r.message, "just text");
}

// Every prefix and many byte mutations of real lines: no crash (run under ASan/UBSan in CI),
// raw is the line, and the message is a piece of the line, never invented text.
TEST(SyslogParserHostileTest, PrefixesAndMutationsKeepInvariants) {
  const std::string_view seeds[] = {
      "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 "
      "iut=\"3\" x=\"a\\\"b\\]c\"][p@1 class=\"high\"] \xEF\xBB\xBF"
      "An entry",
      "<34>Oct 11 22:14:15 mymachine su[4321]: 'su root' failed",
      "<13>2026-11-22T00:13:28.123456+00:00 myhost app[12]: msg",
      "<13>Feb 29 12:00:00 root: x",
  };
  const SyslogParser parser;
  LogRecord r;
  std::uint32_t rng = 12345;
  const char alphabet[] = {'<', '>', '[', ']', '"', '\\', ' ', ':', '-', '0', '9', 'T', 'Z', '\0'};
  for (std::string_view seed : seeds) {
    for (std::size_t n = 0; n <= seed.size(); ++n) {
      const std::string_view prefix = seed.substr(0, n);
      parser.Parse(prefix, kArrival, r);
      ASSERT_EQ(r.raw, prefix);
      ASSERT_NE(prefix.find(r.message), std::string_view::npos) << prefix;
      if (r.outcome != ParseOutcome::kOk && r.outcome != ParseOutcome::kBadStructuredData) {
        // Failures keep all text after the PRI at least.
        const std::size_t gt = prefix.find('>');
        ASSERT_TRUE(r.message == prefix ||
                    (gt != std::string_view::npos && r.message == prefix.substr(gt + 1)))
            << prefix;
      }
    }
    std::string mutated;
    for (int i = 0; i < 2000; ++i) {
      mutated.assign(seed);
      for (int k = 0; k < 3; ++k) {
        rng = rng * 1664525u + 1013904223u;
        const std::size_t at = (rng >> 8) % mutated.size();
        mutated[at] = alphabet[(rng >> 24) % sizeof(alphabet)];
      }
      parser.Parse(mutated, kArrival, r);
      ASSERT_EQ(r.raw, mutated);
      ASSERT_NE(std::string_view(mutated).find(r.message), std::string_view::npos) << mutated;
    }
  }
}

TEST(SyslogParserHostileTest, ExtremeArrivalTimesDoNotOverflow) {
  for (TimeUs arrival : {std::numeric_limits<TimeUs>::min(), TimeUs{-1}, TimeUs{0},
                         std::numeric_limits<TimeUs>::max()}) {
    const LogRecord r = Parse("<13>Dec 31 23:59:59 h a: x", arrival);
    EXPECT_EQ(r.outcome, ParseOutcome::kOk);
    EXPECT_TRUE(r.has_timestamp);
  }
  // At arrival 0 (1970-01-01) the Dec 31 line is the previous second.
  EXPECT_EQ(Parse("<13>Dec 31 23:59:59 h a: x", 0).timestamp_us, -kSecond);
}

// ---------------------------------------------------------------------------------------
// Raw mode

TEST(SyslogParserRawTest, WholeLineIsMessage) {
  SyslogParser::Options options;
  options.format = InputFormat::kRaw;
  const SyslogParser parser(options);
  const LogRecord r = ParseWith(parser, "<13>1 - host app - - - hi");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.flavor, SyslogFlavor::kNone);
  EXPECT_EQ(r.facility, -1);
  EXPECT_EQ(r.hostname, "");
  EXPECT_EQ(r.message, "<13>1 - host app - - - hi");
  EXPECT_EQ(ParseWith(parser, "").outcome, ParseOutcome::kEmpty);
  EXPECT_EQ(ParseWith(parser, "x\r").message, "x");
}

// ---------------------------------------------------------------------------------------
// JSON mode

TEST(SyslogParserJsonTest, TopLevelMessageAndRemainingFields) {
  const LogRecord r = ParseJson(R"({"message":"disk full","level":"warn","n":3})");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.flavor, SyslogFlavor::kJson);
  EXPECT_EQ(r.message, "disk full");
  EXPECT_EQ(r.json_fields, R"({"level":"warn","n":3})");
  EXPECT_EQ(r.raw, R"({"message":"disk full","level":"warn","n":3})");
}

TEST(SyslogParserJsonTest, NestedFieldPath) {
  const LogRecord r =
      ParseJson(R"({"log":{"message":"hi \"there\"","file":"a.c"},"k":1})", "log.message");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.message, "hi \"there\"");
  EXPECT_EQ(r.json_fields, R"({"k":1,"log":{"file":"a.c"}})");
}

TEST(SyslogParserJsonTest, NestedFieldPathPrunesEmptiedParents) {
  const LogRecord r = ParseJson(R"({"a":{"b":{"c":"deep"}},"z":0})", "a.b.c");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.message, "deep");
  EXPECT_EQ(r.json_fields, R"({"z":0})");
}

TEST(SyslogParserJsonTest, LiteralDottedKeyWinsOverPath) {
  const LogRecord r =
      ParseJson(R"({"log.message":"flat","log":{"message":"nested"}})", "log.message");
  EXPECT_EQ(r.message, "flat");
  EXPECT_EQ(r.json_fields, R"({"log":{"message":"nested"}})");
}

TEST(SyslogParserJsonTest, NonStringMessageIsDumped) {
  EXPECT_EQ(ParseJson(R"({"message":{"b":[1,2],"a":null}})").message, R"({"a":null,"b":[1,2]})");
  EXPECT_EQ(ParseJson(R"({"message":42})").message, "42");
  EXPECT_EQ(ParseJson(R"({"message":null})").message, "null");
  EXPECT_EQ(ParseJson(R"({"message":true})").outcome, ParseOutcome::kOk);
}

TEST(SyslogParserJsonTest, MissingMessageField) {
  const std::string_view line = R"({"msg":"wrong key","log":{"other":1}})";
  for (const char* field : {"log.message", "msg.x", "log.other.deeper"}) {
    const LogRecord r = ParseJson(line, field);
    EXPECT_EQ(r.outcome, ParseOutcome::kMissingMessageField) << field;
    EXPECT_EQ(r.flavor, SyslogFlavor::kJson);
    EXPECT_EQ(r.message, line);
    EXPECT_EQ(r.json_fields, R"({"log":{"other":1},"msg":"wrong key"})");
  }
}

TEST(SyslogParserJsonTest, NotAnObjectOrInvalidIsBadJson) {
  for (std::string_view line : {"[1,2,3]"sv, "\"just a string\""sv, "42"sv, "null"sv,
                                "{\"message\":"sv, "{bad}"sv, "<13>1 - h a - - - not json"sv,
                                "{\"message\":\"x\"} trailing"sv, "{\"message\":\"\xFF\"}"sv}) {
    const LogRecord r = ParseJson(line);
    EXPECT_EQ(r.outcome, ParseOutcome::kBadJson) << line;
    EXPECT_EQ(r.flavor, SyslogFlavor::kNone);
    EXPECT_EQ(r.message, line);
    EXPECT_EQ(r.json_fields, "");
  }
  EXPECT_EQ(ParseJson("").outcome, ParseOutcome::kEmpty);
}

std::string NestedJson(int depth) {
  return "{\"message\":\"m\",\"x\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

TEST(SyslogParserJsonTest, ModeratelyNestedInputIsParsed) {
  const LogRecord r = ParseJson(NestedJson(100));
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.message, "m");
  EXPECT_EQ(r.json_fields, "{\"x\":" + std::string(100, '[') + std::string(100, ']') + "}");
  // Brackets inside strings do not count as nesting.
  const std::string in_string = "{\"message\":\"" + std::string(1000, '[') + "\\\"\"}";
  EXPECT_EQ(ParseJson(in_string).message, std::string(1000, '[') + "\"");
}

TEST(SyslogParserJsonTest, DeeplyNestedInputIsRefusedNotCrashed) {
  // Deep enough to overflow the stack in nlohmann's recursive dump() if it got that far.
  const std::string deep = NestedJson(100000);
  const LogRecord r = ParseJson(deep);
  EXPECT_EQ(r.outcome, ParseOutcome::kBadJson);
  EXPECT_EQ(r.message, deep);
}

TEST(SyslogParserJsonTest, WellKnownFieldsAreMapped) {
  const LogRecord r =
      ParseJson(R"({"message":"m","host":"web-1","program":"nginx","severity":"err",)"
                R"("@timestamp":"2003-10-11T22:14:15.003Z"})");
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.hostname, "web-1");
  EXPECT_EQ(r.app_name, "nginx");
  EXPECT_EQ(r.severity, 3);
  EXPECT_EQ(r.facility, -1);
  EXPECT_TRUE(r.has_timestamp);
  EXPECT_EQ(r.timestamp_us, 1065910455003000);
  // Mapped fields stay in json_fields: they are data, not the message.
  EXPECT_EQ(r.json_fields,
            R"({"@timestamp":"2003-10-11T22:14:15.003Z","host":"web-1","program":"nginx",)"
            R"("severity":"err"})");
}

TEST(SyslogParserJsonTest, WellKnownFieldVariants) {
  const LogRecord a = ParseJson(
      R"({"message":"m","hostname":"h2","app_name":"a2","severity":4,"time":"2003-10-11T22:14:15Z"})");
  EXPECT_EQ(a.hostname, "h2");
  EXPECT_EQ(a.app_name, "a2");
  EXPECT_EQ(a.severity, 4);
  EXPECT_EQ(a.timestamp_us, kBase);

  const LogRecord b = ParseJson(R"({"message":"m","app":"a3","severity":"WARNING"})");
  EXPECT_EQ(b.app_name, "a3");
  EXPECT_EQ(b.severity, 4);
  EXPECT_FALSE(b.has_timestamp);

  EXPECT_EQ(ParseJson(R"({"message":"m","severity":"info"})").severity, 6);
  EXPECT_EQ(ParseJson(R"({"message":"m","severity":"debug"})").severity, 7);
  EXPECT_EQ(ParseJson(R"({"message":"m","severity":"emerg"})").severity, 0);
  EXPECT_EQ(ParseJson(R"({"message":"m","severity":0})").severity, 0);
  // Out of range, unknown names and wrong types leave severity unset.
  EXPECT_EQ(ParseJson(R"({"message":"m","severity":8})").severity, -1);
  EXPECT_EQ(ParseJson(R"({"message":"m","severity":"loud"})").severity, -1);
  EXPECT_EQ(ParseJson(R"({"message":"m","severity":[3]})").severity, -1);
  // Non-string host and unparseable time are ignored.
  const LogRecord c = ParseJson(R"({"message":"m","host":{"name":"x"},"timestamp":"yesterday"})");
  EXPECT_EQ(c.outcome, ParseOutcome::kOk);
  EXPECT_EQ(c.hostname, "");
  EXPECT_FALSE(c.has_timestamp);
}

// Issue #21: level, ts and msg of common loggers were ignored.
TEST(SyslogParserJsonTest, CommonLoggerFieldsAreRecognised) {
  struct Case {
    std::string_view logger, line;
    int severity;
    std::string_view time, host, app, procid, message;
  };
  const Case cases[] = {
      {"pino",
       R"({"level":30,"time":1795306408123,"pid":4242,"hostname":"web-1","msg":"request done"})", 6,
       "2026-11-22T00:13:28.123Z", "web-1", "", "4242", "request done"},
      {"bunyan",
       R"({"name":"api","hostname":"web-1","pid":7,"level":50,"msg":"boom",)"
       R"("time":"2026-11-22T00:13:28.123Z","v":0})",
       3, "2026-11-22T00:13:28.123Z", "web-1", "api", "7", "boom"},
      {"zap", R"({"level":"warn","ts":1795306408.5,"caller":"main.go:12","msg":"slow"})", 4,
       "2026-11-22T00:13:28.5Z", "", "", "", "slow"},
      {"logrus", R"({"level":"error","msg":"db down","time":"2026-11-22T00:13:28Z"})", 3,
       "2026-11-22T00:13:28Z", "", "", "", "db down"},
      {"structlog",
       R"({"event":"user logged in","level":"info","timestamp":"2026-11-22T00:13:28Z"})", 6,
       "2026-11-22T00:13:28Z", "", "", "", "user logged in"},
      {"docker json-file",
       R"({"log":"listening on :8080\n","stream":"stdout","time":"2026-11-22T00:13:28.123456789Z"})",
       -1, "2026-11-22T00:13:28.123456Z", "", "", "", "listening on :8080"},
  };
  for (const Case& c : cases) {
    const LogRecord r = ParseJson(c.line);
    EXPECT_EQ(r.outcome, ParseOutcome::kOk) << c.logger;
    EXPECT_EQ(r.severity, c.severity) << c.logger;
    EXPECT_TRUE(r.has_timestamp) << c.logger;
    EXPECT_EQ(r.timestamp_us, ParseRfc3339(c.time).value_or(-1)) << c.logger;
    EXPECT_EQ(r.hostname, c.host) << c.logger;
    EXPECT_EQ(r.app_name, c.app) << c.logger;
    EXPECT_EQ(r.procid, c.procid) << c.logger;
    EXPECT_EQ(r.message, c.message) << c.logger;
  }
  // A configured message field gets no fallback.
  EXPECT_EQ(ParseJson(R"({"msg":"m"})", "text").outcome, ParseOutcome::kMissingMessageField);
  // "message" wins over "msg" when both are there.
  EXPECT_EQ(ParseJson(R"({"msg":"a","message":"b"})").message, "b");
}

// ---------------------------------------------------------------------------------------
// No allocation on the syslog and raw hot paths

TEST(SyslogParserAllocationTest, WarmRecordReusesItsBuffers) {
  const SyslogParser parser;
  LogRecord r;
  const std::string_view line =
      "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 77 ID47 [exampleSDID@32473 "
      "iut=\"3\" eventSource=\"Application\"] \xEF\xBB\xBF"
      "An application event log entry that is long enough not to fit in SSO";
  parser.Parse(line, kArrival, r);
  ASSERT_EQ(r.outcome, ParseOutcome::kOk);
  const std::size_t message_capacity = r.message.capacity();
  const char* message_data = r.message.data();
  const char* raw_data = r.raw.data();
  const char* sd_data = r.structured_data.data();
  for (int i = 0; i < 100; ++i) {
    parser.Parse(line, kArrival + i, r);
    ASSERT_EQ(r.message.capacity(), message_capacity);
    ASSERT_EQ(r.message.data(), message_data);
    ASSERT_EQ(r.raw.data(), raw_data);
    ASSERT_EQ(r.structured_data.data(), sd_data);
  }
}

TEST(SyslogParserAllocationTest, NoHeapAllocationAfterWarmUp) {
  const std::string_view lines[] = {
      "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 77 ID47 [exampleSDID@32473 "
      "iut=\"3\" eventSource=\"Application\"] \xEF\xBB\xBF"
      "An application event log entry that is long enough not to fit in SSO",
      "<34>Oct 11 22:14:15 mymachine.example.com su_with_a_long_tag_name[4321]: 'su root' "
      "failed for lonvick on /dev/pts/8",
      "<13>2026-11-22T00:13:28.123456+00:00 myhost app[12]: message text that is fairly long",
      "plain line without any header that is long enough to need the heap",
      "<999>bad pri line that is long enough to need the heap as well",
      "<13>1 - host app - - [broken sd that is long enough to need the heap",
  };
  SyslogParser::Options raw_options;
  raw_options.format = InputFormat::kRaw;
  const SyslogParser parsers[] = {SyslogParser(), SyslogParser(raw_options)};
  LogRecord r;
  for (const SyslogParser& parser : parsers) {
    for (std::string_view line : lines) parser.Parse(line, kArrival, r);
  }

  g_allocations.store(0);
  g_count_allocations.store(true);
  for (int round = 0; round < 50; ++round) {
    for (const SyslogParser& parser : parsers) {
      for (std::string_view line : lines) parser.Parse(line, kArrival, r);
    }
  }
  g_count_allocations.store(false);
  EXPECT_EQ(g_allocations.load(), 0);

  // The counter is live: the same check sees the allocation of a cold record.
  g_count_allocations.store(true);
  {
    LogRecord cold;
    parsers[0].Parse(lines[0], kArrival, cold);
  }
  g_count_allocations.store(false);
  EXPECT_GT(g_allocations.load(), 0);
}

// ---------------------------------------------------------------------------------------
// Time helpers

TEST(SyslogTimeTest, CalendarBasics) {
  EXPECT_TRUE(IsLeapYear(2000));
  EXPECT_TRUE(IsLeapYear(2024));
  EXPECT_FALSE(IsLeapYear(1900));
  EXPECT_FALSE(IsLeapYear(2023));
  EXPECT_EQ(DaysInMonth(2024, 2), 29);
  EXPECT_EQ(DaysInMonth(2023, 2), 28);
  EXPECT_EQ(DaysInMonth(2023, 13), 0);
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
  EXPECT_EQ(YearOfTime(0), 1970);
  EXPECT_EQ(YearOfTime(-1), 1969);
  EXPECT_EQ(YearOfTime(1735689599000000), 2024);
  EXPECT_EQ(YearOfTime(1735689600000000), 2025);
}

// The year rule by its definition: of the date in the arrival's year and the years either
// side, the latest not more than 31 days after the arrival (else any that exists, for Feb 29).
std::optional<TimeUs> ResolveByTryingEveryYear(const BsdTimestamp& ts, TimeUs ref) {
  constexpr TimeUs kMaxAhead = 31LL * 86400 * 1'000'000;
  const std::int64_t ref_year = YearOfTime(ref);
  auto at = [&](std::int64_t year) {
    return (DaysFromCivil(year, ts.month, ts.day) * 86400 + ts.hour * 3600 + ts.minute * 60 +
            ts.second) *
               1'000'000 +
           ts.micros;
  };
  std::optional<TimeUs> best;
  for (std::int64_t year = ref_year - 1; year <= ref_year + 1; ++year) {
    if (ts.day > DaysInMonth(year, ts.month)) continue;
    if (at(year) - ref <= kMaxAhead && (!best || at(year) > *best)) best = at(year);
  }
  for (std::int64_t year = ref_year + 1; year >= ref_year - 1 && !best; --year) {
    if (ts.day <= DaysInMonth(year, ts.month)) best = at(year);
  }
  return best;
}

// ResolveBsdTimestamp tries next year only for January dates and stops at the first year
// that fits; it must agree with the definition everywhere, New Year and leap days included.
TEST(SyslogTimeTest, BsdYearResolutionMatchesItsDefinition) {
  std::mt19937_64 rng(20261123);
  const TimeUs first = DaysFromCivil(1999, 1, 1) * 86400LL * 1'000'000;
  const TimeUs span = 30LL * 366 * 86400 * 1'000'000;  // 1999..2028: several leap years
  for (int i = 0; i < 200000; ++i) {
    BsdTimestamp ts;
    ts.month = static_cast<int>(rng() % 12) + 1;
    ts.day = static_cast<int>(rng() % 31) + 1;
    ts.hour = static_cast<int>(rng() % 24);
    ts.minute = static_cast<int>(rng() % 60);
    ts.second = static_cast<int>(rng() % 61);
    ts.micros = static_cast<int>(rng() % 1'000'000);
    // Half the references within a few weeks of a New Year, where the years interact.
    TimeUs ref = first + static_cast<TimeUs>(rng() % static_cast<std::uint64_t>(span));
    if (i % 2 == 0) {
      const std::int64_t year = YearOfTime(ref);
      const TimeUs new_year = DaysFromCivil(year, 1, 1) * 86400LL * 1'000'000;
      ref = new_year + static_cast<TimeUs>(rng() % (70ULL * 86400 * 1'000'000)) -
            35LL * 86400 * 1'000'000;
    }
    ASSERT_EQ(ResolveBsdTimestamp(ts, ref), ResolveByTryingEveryYear(ts, ref))
        << ts.month << "/" << ts.day << " " << ts.hour << ":" << ts.minute << ":" << ts.second
        << "." << ts.micros << " ref " << ref;
  }
}

TEST(SyslogTimeTest, BsdTimestampLengthAndFields) {
  BsdTimestamp ts;
  EXPECT_EQ(ParseBsdTimestamp("Mar  1 01:02:03 rest", ts), 15u);
  EXPECT_EQ(ts.month, 3);
  EXPECT_EQ(ts.day, 1);
  EXPECT_EQ(ts.hour, 1);
  EXPECT_EQ(ts.minute, 2);
  EXPECT_EQ(ts.second, 3);
  EXPECT_EQ(ts.micros, 0);
  EXPECT_EQ(ParseBsdTimestamp("Dec 9 23:59:59.5", ts), 16u);
  EXPECT_EQ(ts.day, 9);
  EXPECT_EQ(ts.micros, 500000);
  EXPECT_EQ(ParseBsdTimestamp("Dec 9 23:59:5", ts), 0u);
  EXPECT_EQ(ParseBsdTimestamp("Dex  9 23:59:59", ts), 0u);
}

}  // namespace
// A date months ahead of the arrival in the same year is last year's or this year's, never
// next year's: "Mar  1" read on 2026-11-22 is 2026-03-01, not 2027-03-01 (the nearer one).
TEST(SyslogParserRfc3164Test, YearOfADateMonthsBeforeArrivalIsTheArrivalYear) {
  constexpr TimeUs kNov22_2026 = 1795305600LL * kSecond;  // 2026-11-22T00:00:00Z
  constexpr TimeUs kMar1_2026 = 1772323201LL * kSecond;   // 2026-03-01T00:00:01Z
  const LogRecord r = Parse("<38>Mar  1 00:00:01 web01 sshd[123]: hello", kNov22_2026);
  ASSERT_TRUE(r.has_timestamp);
  EXPECT_EQ(r.timestamp_us, kMar1_2026);
  // Two weeks ahead (a fast sender clock) still resolves to the arrival year.
  const LogRecord ahead = Parse("<38>Dec  6 00:00:00 web01 sshd[123]: hello", kNov22_2026);
  EXPECT_EQ(ahead.timestamp_us, kNov22_2026 + 14LL * 24 * kHour);
}

// Octet-counted frames may include the sender's line end (rsyslog's
// RSYSLOG_SyslogProtocol23Format ends in '\n'); it is not part of the message.
TEST(SyslogParserTest, TrailingLineEndInsideAFrameIsNotPartOfTheMessage) {
  EXPECT_EQ(Parse("<13>1 2026-11-22T00:00:00Z h app - - - hello\n").message, "hello");
  EXPECT_EQ(Parse("<13>1 2026-11-22T00:00:00Z h app - - - hello\r\n").message, "hello");
  EXPECT_EQ(Parse("<13>Nov 22 00:00:00 h app: hello\n").message, "hello");
  // Only one terminator goes: an empty last line inside the message stays.
  EXPECT_EQ(Parse("<13>1 2026-11-22T00:00:00Z h app - - - two\n\n").message, "two\n");
}

// ParseView is Parse without the copies: the daemon parses views on its receiving thread,
// moves the bytes to a worker (Rebased) and copies the fields there (CopyTo). Every field
// must come out exactly as Parse gives it, for clean and broken lines alike.
TEST(SyslogParserViewTest, ViewRebasedAndCopiedEqualsParse) {
  const std::string_view lines[] = {
      "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 77 ID47 [exampleSDID@32473 "
      "iut=\"3\" eventSource=\"Application\"] \xEF\xBB\xBF"
      "An application event log entry",
      "<34>Oct 11 22:14:15 mymachine.example.com su[4321]: 'su root' failed on /dev/pts/8\r\n",
      "<13>2026-11-22T00:13:28.123456+00:00 myhost app[12]: message text",
      "<13>Oct 11 22:14:15 h postfix/smtpd[9]: connect from unknown",
      "<13>1 - host app - - [broken sd",
      "<13>1 2026-11-22T00:00:00Z host",
      "<13>Oct 11 22:14:15",
      "<999>bad pri",
      "plain line without any header",
      "<13>1 - - - - - -",
      "",
      "\n",
  };
  SyslogParser::Options raw_options;
  raw_options.format = InputFormat::kRaw;
  for (const SyslogParser& parser : {SyslogParser(), SyslogParser(raw_options)}) {
    for (std::string_view line : lines) {
      SCOPED_TRACE(std::string(line));
      LogRecord want;
      parser.Parse(line, kArrival, want);
      LogRecordView view;
      ASSERT_TRUE(parser.ParseView(line, kArrival, view));
      // Moved to another buffer, as a worker batch does; the original is then overwritten.
      std::string original(line), copy(view.raw);
      view = LogRecordView{};
      ASSERT_TRUE(parser.ParseView(original, kArrival, view));
      const LogRecordView moved = view.Rebased(copy);
      original.assign(original.size(), '#');
      LogRecord got;
      got.json_fields = "stale";
      got.hostname = "stale";
      got.tag = "stale";
      moved.CopyTo(got);
      EXPECT_EQ(got.raw, want.raw);
      EXPECT_EQ(got.flavor, want.flavor);
      EXPECT_EQ(got.outcome, want.outcome);
      EXPECT_EQ(got.facility, want.facility);
      EXPECT_EQ(got.severity, want.severity);
      EXPECT_EQ(got.has_timestamp, want.has_timestamp);
      EXPECT_EQ(got.timestamp_us, want.timestamp_us);
      EXPECT_EQ(got.arrival_us, want.arrival_us);
      EXPECT_EQ(got.hostname, want.hostname);
      EXPECT_EQ(got.app_name, want.app_name);
      EXPECT_EQ(got.tag, want.tag);
      EXPECT_EQ(got.procid, want.procid);
      EXPECT_EQ(got.msgid, want.msgid);
      EXPECT_EQ(got.structured_data, want.structured_data);
      EXPECT_EQ(got.message, want.message);
      EXPECT_EQ(got.json_fields, "");
    }
  }
}

TEST(SyslogParserViewTest, JsonLinesHaveNoViewAndStillParse) {
  SyslogParser::Options options;
  options.format = InputFormat::kJson;
  const SyslogParser parser(options);
  LogRecordView view;
  EXPECT_FALSE(parser.ParseView(R"({"message":"a \"quoted\" word"})", kArrival, view));
  LogRecord r;
  EXPECT_EQ(parser.Parse(R"({"message":"a \"quoted\" word"})", kArrival, r), ParseOutcome::kOk);
  EXPECT_EQ(r.message, "a \"quoted\" word");
}

}  // namespace logfold
