// Tests for the RFC 5424 event encoder: every header field, the logfold structured data
// element of first and summary events, SD value escaping and line-break handling.
#include "daemon/outputs/syslog_event_encoder.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "daemon/outputs/loss_counter.h"

namespace logfold {
namespace {

constexpr TimeUs kLeapDayUs = 1709210096789012;  // 2024-02-29T12:34:56.789012Z

// The parts of an RFC 5424 message, split the way a receiver would: six space-separated
// header fields, then one SD element (this encoder emits exactly one), then MSG.
struct Parsed {
  std::string pri, version, timestamp, hostname, app_name, procid, msgid, sd, msg;
  bool has_msg = false;
};

Parsed Parse(std::string_view s) {
  Parsed p;
  EXPECT_EQ(s.front(), '<');
  const std::size_t gt = s.find('>');
  p.pri = std::string(s.substr(1, gt - 1));
  s.remove_prefix(gt + 1);
  std::string* fields[] = {&p.version, &p.timestamp, &p.hostname, &p.app_name, &p.procid, &p.msgid};
  for (std::string* f : fields) {
    const std::size_t sp = s.find(' ');
    *f = std::string(s.substr(0, sp));
    s.remove_prefix(sp + 1);
  }
  EXPECT_EQ(s.front(), '[');
  // The element ends at the first ']' not preceded by a backslash escape.
  std::size_t i = 1;
  for (; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == ']') {
      break;
    }
  }
  p.sd = std::string(s.substr(0, i + 1));
  s.remove_prefix(i + 1);
  if (!s.empty()) {
    EXPECT_EQ(s.front(), ' ');
    p.has_msg = true;
    p.msg = std::string(s.substr(1));
  }
  return p;
}

LogRecord SampleRecord() {
  LogRecord r;
  r.flavor = SyslogFlavor::kRfc5424;
  r.facility = 4;  // auth
  r.severity = 3;  // err
  r.has_timestamp = true;
  r.timestamp_us = kLeapDayUs;
  r.arrival_us = kLeapDayUs + 5'000'000;
  r.hostname = "web-1.example.com";
  r.app_name = "sshd";
  r.procid = "4242";
  r.message = "Failed password for root from 10.0.0.7 port 2201";
  return r;
}

TEST(SyslogEventEncoderTest, FirstEventFieldByField) {
  const LogRecord record = SampleRecord();
  Event e;
  e.kind = EventKind::kFirst;
  e.group_id = 0x1f;
  e.fingerprint = 0xdeadbeef00c0ffee;
  e.record = &record;
  e.template_text = "Failed password for <*> from <*> port <*>";
  e.count = 1;
  e.count_total = 1;
  std::string out;
  AppendEventSyslog(e, "logfold", out);

  EXPECT_EQ(out,
            "<35>1 2024-02-29T12:34:56.789012Z web-1.example.com sshd 4242 first "
            "[logfold@32473 group=\"000000000000001f\" fp=\"deadbeef00c0ffee\"] "
            "Failed password for root from 10.0.0.7 port 2201");
  const Parsed p = Parse(out);
  EXPECT_EQ(p.pri, "35");  // 4 * 8 + 3
  EXPECT_EQ(p.version, "1");
  EXPECT_EQ(p.timestamp, "2024-02-29T12:34:56.789012Z");
  EXPECT_EQ(p.hostname, "web-1.example.com");
  EXPECT_EQ(p.app_name, "sshd");
  EXPECT_EQ(p.procid, "4242");
  EXPECT_EQ(p.msgid, "first");
  EXPECT_EQ(p.sd, "[logfold@32473 group=\"000000000000001f\" fp=\"deadbeef00c0ffee\"]");
  EXPECT_EQ(p.msg, record.message);  // the original line, not the template
}

// APP-NAME is the program name; a 3164 tag that says more is not lost: it rides in the SD
// element. A tag without a program name ("/USR/SBIN/CRON") gets the output's APP-NAME.
TEST(SyslogEventEncoderTest, TagLongerThanAppRidesInTheElement) {
  LogRecord record = SampleRecord();
  record.app_name = "postfix";
  record.tag = "postfix/smtpd";
  Event e;
  e.kind = EventKind::kFirst;
  e.group_id = 2;
  e.fingerprint = 3;
  e.record = &record;
  std::string out;
  AppendEventSyslog(e, "logfold", out);
  Parsed p = Parse(out);
  EXPECT_EQ(p.app_name, "postfix");
  EXPECT_EQ(p.sd,
            "[logfold@32473 group=\"0000000000000002\" fp=\"0000000000000003\" "
            "tag=\"postfix/smtpd\"]");

  // In a summary the tag comes after count, which readers find before the first ']'.
  record.tag = "postfix/sm]tpd";
  e.kind = EventKind::kSummary;
  e.count = 7;
  e.count_total = 8;
  out.clear();
  AppendEventSyslog(e, "logfold", out);
  EXPECT_NE(out.find(" reason=\"idle\" tag=\"postfix/sm\\]tpd\"]"), std::string::npos) << out;
  EXPECT_LT(out.find(" count=\"7\""), out.find(']')) << out;
  EXPECT_EQ(TallyEvents(out, SinkEncoding::kSyslog5424).lines, 7u) << out;

  e.kind = EventKind::kFirst;
  record.app_name.clear();
  record.tag = "/USR/SBIN/CRON";
  out.clear();
  AppendEventSyslog(e, "relay-app", out);
  p = Parse(out);
  EXPECT_EQ(p.app_name, "relay-app");
  EXPECT_NE(p.sd.find(" tag=\"/USR/SBIN/CRON\"]"), std::string::npos) << p.sd;
}

// An event of a Kafka input's line carries its event_id (the same after a replay).
TEST(SyslogEventEncoderTest, EventWithAnOriginCarriesItsId) {
  const LogRecord record = SampleRecord();
  Event e;
  e.kind = EventKind::kFirst;
  e.group_id = 0x1f;
  e.fingerprint = 0xdeadbeef00c0ffee;
  e.record = &record;
  e.origin = {0xab, 42};
  std::string out;
  AppendEventSyslog(e, "logfold", out);
  EXPECT_EQ(Parse(out).sd,
            "[logfold@32473 group=\"000000000000001f\" fp=\"deadbeef00c0ffee\" "
            "id=\"00000000000000ab-42-f\"]");
}

TEST(SyslogEventEncoderTest, FirstEventUsesArrivalTimeWithoutHeaderTimestamp) {
  LogRecord record = SampleRecord();
  record.has_timestamp = false;
  record.arrival_us = 0;
  Event e;
  e.record = &record;
  std::string out;
  AppendEventSyslog(e, "logfold", out);
  EXPECT_EQ(Parse(out).timestamp, "1970-01-01T00:00:00.000000Z");
}

TEST(SyslogEventEncoderTest, SummaryEventFieldByField) {
  LogRecord first = SampleRecord();
  LogRecord last = SampleRecord();
  last.message = "Failed password for admin from 10.0.0.9 port 4000";
  Event e;
  e.kind = EventKind::kSummary;
  e.reason = SummaryReason::kIdle;
  e.closed = true;
  e.group_id = 7;
  e.fingerprint = 0x0123456789abcdef;
  e.record = &first;
  e.last_record = &last;
  e.template_text = "Failed password for <*> from <*> port <*>";
  e.count = 41;
  e.count_total = 42;
  e.first_seen_us = kLeapDayUs;
  e.last_seen_us = kLeapDayUs + 61'000'001;
  std::string out;
  AppendEventSyslog(e, "logfold", out);

  const Parsed p = Parse(out);
  EXPECT_EQ(p.pri, "35");
  EXPECT_EQ(p.version, "1");
  EXPECT_EQ(p.timestamp, "2024-02-29T12:35:57.789013Z");  // last_seen
  EXPECT_EQ(p.hostname, "web-1.example.com");
  EXPECT_EQ(p.app_name, "sshd");
  EXPECT_EQ(p.procid, "4242");
  EXPECT_EQ(p.msgid, "summary");
  EXPECT_EQ(p.sd,
            "[logfold@32473 group=\"0000000000000007\" fp=\"0123456789abcdef\" count=\"41\" "
            "total=\"42\" first=\"2024-02-29T12:34:56.789012Z\" "
            "last=\"2024-02-29T12:35:57.789013Z\" reason=\"idle\"]");
  EXPECT_EQ(p.msg, "Failed password for <*> from <*> port <*>");  // the template
}

TEST(SyslogEventEncoderTest, SummaryReasons) {
  const LogRecord record = SampleRecord();
  const std::pair<SummaryReason, std::string> cases[] = {
      {SummaryReason::kIdle, "reason=\"idle\"]"},
      {SummaryReason::kMaxHold, "reason=\"max_hold\"]"},
      {SummaryReason::kEvicted, "reason=\"evicted\"]"},
      {SummaryReason::kShutdown, "reason=\"shutdown\"]"},
  };
  for (const auto& [reason, suffix] : cases) {
    Event e;
    e.kind = EventKind::kSummary;
    e.reason = reason;
    e.record = &record;
    std::string out;
    AppendEventSyslog(e, "logfold", out);
    const std::string sd = Parse(out).sd;
    EXPECT_TRUE(sd.ends_with(suffix)) << sd;
  }
}

TEST(SyslogEventEncoderTest, DefaultsForMissingHeaderFields) {
  LogRecord record;  // raw line: no PRI, host, app or procid
  record.arrival_us = kLeapDayUs;
  record.message = "plain line";
  Event e;
  e.kind = EventKind::kFirst;
  e.record = &record;
  std::string out;
  AppendEventSyslog(e, "relay-app", out);
  const Parsed p = Parse(out);
  EXPECT_EQ(p.pri, "13");  // user.notice
  EXPECT_EQ(p.hostname, "-");
  EXPECT_EQ(p.app_name, "relay-app");
  EXPECT_EQ(p.procid, "-");
  EXPECT_EQ(p.msg, "plain line");
}

TEST(SyslogEventEncoderTest, OutOfRangePriorityFallsBackToDefault) {
  LogRecord record = SampleRecord();
  record.facility = 24;
  record.severity = 9;
  Event e;
  e.record = &record;
  std::string out;
  AppendEventSyslog(e, "logfold", out);
  EXPECT_EQ(Parse(out).pri, "13");
}

TEST(SyslogEventEncoderTest, AnnotateIsEncodedLikeFirst) {
  const LogRecord record = SampleRecord();
  Event e;
  e.kind = EventKind::kAnnotate;
  e.group_id = 3;
  e.fingerprint = 4;
  e.record = &record;
  e.template_text = "ignored";
  std::string out;
  AppendEventSyslog(e, "logfold", out);
  const Parsed p = Parse(out);
  EXPECT_EQ(p.msgid, "annotate");
  EXPECT_EQ(p.timestamp, "2024-02-29T12:34:56.789012Z");
  EXPECT_EQ(p.sd, "[logfold@32473 group=\"0000000000000003\" fp=\"0000000000000004\"]");
  EXPECT_EQ(p.msg, record.message);
}

TEST(SyslogEventEncoderTest, LineBreaksInMessageBecomeSpaces) {
  LogRecord record = SampleRecord();
  record.message = "line one\nline two\r\nline three";
  Event e;
  e.record = &record;
  std::string out;
  AppendEventSyslog(e, "logfold", out);
  EXPECT_EQ(out.find('\n'), std::string::npos);
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_EQ(Parse(out).msg, "line one line two  line three");

  Event summary;
  summary.kind = EventKind::kSummary;
  summary.record = &record;
  summary.template_text = "a\nb <*>";
  out.clear();
  AppendEventSyslog(summary, "logfold", out);
  EXPECT_EQ(Parse(out).msg, "a b <*>");
}

// Issue #21: bytes that are not UTF-8 reach the syslog output exactly as received (RFC 5424
// MSG-ANY is octets), never replaced by U+FFFD.
TEST(SyslogEventEncoderTest, NonUtf8MessageBytesAreForwardedExactly) {
  LogRecord record = SampleRecord();
  record.message = "raw \xff\xfe\xc3\x28 bytes \xed\xa0\x80 end";
  Event e;
  e.record = &record;
  std::string out;
  AppendEventSyslog(e, "logfold", out);
  EXPECT_EQ(Parse(out).msg, record.message);
  EXPECT_EQ(out.find("\xEF\xBF\xBD"), std::string::npos) << "no U+FFFD";
}

TEST(SyslogEventEncoderTest, EmptyMessageIsOmitted) {
  LogRecord record = SampleRecord();
  record.message.clear();
  Event e;
  e.record = &record;
  std::string out;
  AppendEventSyslog(e, "logfold", out);
  EXPECT_TRUE(out.ends_with("fp=\"0000000000000000\"]")) << out;
  EXPECT_FALSE(Parse(out).has_msg);
}

TEST(SyslogEventEncoderTest, HeaderFieldsNeverCarrySpacesOrControls) {
  LogRecord record = SampleRecord();
  record.hostname = "evil host\n<13>1";
  record.app_name = std::string(60, 'a') + "\t";
  record.procid = "1 2";
  Event e;
  e.record = &record;
  std::string out;
  AppendEventSyslog(e, "logfold", out);
  const Parsed p = Parse(out);
  EXPECT_EQ(p.hostname, "evil_host_<13>1");
  EXPECT_EQ(p.app_name, std::string(48, 'a'));  // RFC 5424 limit, tab cut off
  EXPECT_EQ(p.procid, "1_2");
  EXPECT_EQ(p.msgid, "first");
  for (char c : out.substr(0, out.find('['))) {
    EXPECT_TRUE(c == ' ' || (c >= 33 && c <= 126)) << static_cast<int>(c);
  }
}

TEST(SyslogEventEncoderTest, ParamValueEscaping) {
  std::string out;
  AppendSyslogParamValue(R"(say "hi" \ [x] done)", out);
  EXPECT_EQ(out, R"(say \"hi\" \\ [x\] done)");

  out.clear();
  AppendSyslogParamValue(
      "a\nb\rc\td\x7f"
      "e",
      out);
  EXPECT_EQ(out, "a b c d e");

  out.clear();
  AppendSyslogParamValue("caf\xc3\xa9", out);  // UTF-8 passes through
  EXPECT_EQ(out, "caf\xc3\xa9");
}

TEST(SyslogEventEncoderTest, Timestamps) {
  std::string out;
  AppendSyslogTime(0, out);
  EXPECT_EQ(out, "1970-01-01T00:00:00.000000Z");
  out.clear();
  AppendSyslogTime(-1, out);
  EXPECT_EQ(out, "1969-12-31T23:59:59.999999Z");
  out.clear();
  AppendSyslogTime(kLeapDayUs, out);
  EXPECT_EQ(out, "2024-02-29T12:34:56.789012Z");
  out.clear();
  AppendSyslogTime(1700000000'000000, out);
  EXPECT_EQ(out, "2023-11-14T22:13:20.000000Z");
  out.clear();
  AppendSyslogTime(253402300799'999999, out);  // the last representable instant
  EXPECT_EQ(out, "9999-12-31T23:59:59.999999Z");
  out.clear();
  AppendSyslogTime(253402300800'000000, out);
  EXPECT_EQ(out, "-");
}

TEST(SyslogEventEncoderTest, AppendsWithoutTouchingExistingContent) {
  const LogRecord record = SampleRecord();
  Event e;
  e.record = &record;
  std::string out = "previous record\n";
  AppendEventSyslog(e, "logfold", out);
  EXPECT_TRUE(out.starts_with("previous record\n<35>1 "));
  // No trailing newline: the caller separates records.
  EXPECT_TRUE(out.ends_with(record.message)) << out;
}

}  // namespace
}  // namespace logfold
