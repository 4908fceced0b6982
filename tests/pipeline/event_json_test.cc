// Event NDJSON tests: every event kind parses back as JSON with the documented fields, string
// escaping (quotes, control characters, NUL, invalid UTF-8), RFC 3339 times and hex ids.
#include "pipeline/event_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/event.h"
#include "pipeline/log_record.h"
#include "tests/support/base64.h"

namespace logfold {
namespace {

using nlohmann::json;

constexpr TimeUs kT0 = 1'709'251'200'000'000;  // 2024-03-01T00:00:00Z

bool IsHex16(const json& v) {
  static const std::regex re("^[0-9a-f]{16}$");
  return v.is_string() && std::regex_match(v.get<std::string>(), re);
}

bool IsRfc3339Us(const json& v) {
  static const std::regex re(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$)");
  return v.is_string() && std::regex_match(v.get<std::string>(), re);
}

LogRecord MakeRecord(std::string message, std::string host = "web01", std::string app = "sshd") {
  LogRecord r;
  r.raw = "<38>Mar  1 00:00:00 " + host + " " + app + ": " + message;
  r.flavor = SyslogFlavor::kRfc3164;
  r.facility = 4;
  r.severity = 6;
  r.has_timestamp = true;
  r.timestamp_us = kT0;
  r.arrival_us = kT0 + 250'000;
  r.hostname = std::move(host);
  r.app_name = std::move(app);
  r.procid = "123";
  r.message = std::move(message);
  return r;
}

// Serialises one event; it must be exactly one line, ending in '\n', that parses as an object.
json Serialise(const Event& e) {
  std::string out;
  AppendEventJson(e, out);
  EXPECT_FALSE(out.empty());
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find('\n'), out.size() - 1) << out;
  json j = json::parse(out);  // throws (failing the test) on invalid JSON or UTF-8
  EXPECT_TRUE(j.is_object());
  return j;
}

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(s, out);
  return out;
}

std::string JsonTime(TimeUs us) {
  std::string out;
  AppendJsonTime(us, out);
  return out;
}

TEST(EventJsonTest, FirstEvent) {
  const LogRecord r = MakeRecord("Accepted password for alice from 10.0.0.1 port 22 ssh2");
  Event e;
  e.kind = EventKind::kFirst;
  e.group_id = 0x0123456789abcdefULL;
  e.fingerprint = 0xfedcba9876543210ULL;
  e.record = &r;
  e.template_text = "not written for first events";
  e.count_total = 1;
  json j = Serialise(e);
  EXPECT_EQ(j["kind"], "first");
  EXPECT_EQ(j["group_id"], "0123456789abcdef");
  EXPECT_TRUE(IsHex16(j["group_id"]));
  EXPECT_EQ(j["fingerprint"], "fedcba9876543210");
  EXPECT_EQ(j["time"], "2024-03-01T00:00:00.000000Z");
  EXPECT_EQ(j["received"], "2024-03-01T00:00:00.250000Z");
  EXPECT_EQ(j["host"], "web01");
  EXPECT_EQ(j["app"], "sshd");
  EXPECT_EQ(j["procid"], "123");
  EXPECT_EQ(j["facility"], 4);
  EXPECT_EQ(j["severity"], 6);
  EXPECT_EQ(j["format"], "rfc3164");
  EXPECT_EQ(j["message"], r.message);
  EXPECT_FALSE(j.contains("msgid"));  // empty header fields are left out
  EXPECT_FALSE(j.contains("tag"));    // the tag is the app
  EXPECT_FALSE(j.contains("parse_error"));
  EXPECT_FALSE(j.contains("count"));
  EXPECT_FALSE(j.contains("cluster_id"));
}

// A tag that says more than the app ("postfix/smtpd", app "postfix") is carried beside it, in
// the line's own events and in a summary's samples.
TEST(EventJsonTest, TagLongerThanAppIsCarried) {
  LogRecord r = MakeRecord("connect from unknown[10.0.0.1]", "mail01", "postfix");
  r.tag = "postfix/smtpd";
  Event e;
  e.kind = EventKind::kFirst;
  e.record = &r;
  json j = Serialise(e);
  EXPECT_EQ(j["app"], "postfix");
  EXPECT_EQ(j["tag"], "postfix/smtpd");

  e.kind = EventKind::kSummary;
  e.last_record = &r;
  e.template_text = "connect from unknown[<*>]";
  e.count = 1;
  e.count_total = 2;
  j = Serialise(e);
  EXPECT_EQ(j["app"], "postfix");
  ASSERT_TRUE(j["samples"].is_array());
  ASSERT_FALSE(j["samples"].empty());
  for (const json& sample : j["samples"]) EXPECT_EQ(sample["tag"], "postfix/smtpd");
}

TEST(EventJsonTest, SummaryEventWithTwoSamplesAndHost) {
  const LogRecord first = MakeRecord("job 17 done");
  LogRecord last = MakeRecord("job 42 done");
  last.timestamp_us = kT0 + 5'123'456;
  Event e;
  e.kind = EventKind::kSummary;
  e.reason = SummaryReason::kIdle;
  e.closed = true;
  e.group_id = 7;
  e.fingerprint = 0xabcULL;
  e.record = &first;
  e.last_record = &last;
  e.template_text = "job <*> done";
  e.count = 9;
  e.count_total = 10;
  e.first_seen_us = kT0;
  e.last_seen_us = kT0 + 5'123'456;
  e.max_distance = 3;
  json j = Serialise(e);
  EXPECT_EQ(j["kind"], "summary");
  EXPECT_EQ(j["group_id"], "0000000000000007");
  EXPECT_EQ(j["fingerprint"], "0000000000000abc");
  EXPECT_EQ(j["reason"], "idle");
  EXPECT_EQ(j["closed"], true);
  EXPECT_EQ(j["count"], 9);
  EXPECT_EQ(j["count_total"], 10);
  EXPECT_EQ(j["first_seen"], "2024-03-01T00:00:00.000000Z");
  EXPECT_EQ(j["last_seen"], "2024-03-01T00:00:05.123456Z");
  EXPECT_TRUE(IsRfc3339Us(j["first_seen"]));
  EXPECT_TRUE(IsRfc3339Us(j["last_seen"]));
  EXPECT_EQ(j["max_distance"], 3);
  EXPECT_EQ(j["template"], "job <*> done");
  EXPECT_EQ(j["host"], "web01");  // host in scope: a single host, no list
  EXPECT_EQ(j["app"], "sshd");
  EXPECT_FALSE(j.contains("hosts"));
  ASSERT_TRUE(j["samples"].is_array());
  ASSERT_EQ(j["samples"].size(), 2u);
  EXPECT_EQ(j["samples"][0]["message"], "job 17 done");
  EXPECT_EQ(j["samples"][1]["message"], "job 42 done");
  EXPECT_EQ(j["samples"][1]["time"], "2024-03-01T00:00:05.123456Z");
  EXPECT_EQ(j["samples"][0]["host"], "web01");
}

// An event with an origin (a Kafka record) carries an id made of the origin and the kind's
// initial; one without has no event_id at all.
TEST(EventJsonTest, EventIdFromTheOriginOfTheFirstCoveredLine) {
  const LogRecord r = MakeRecord("Accepted password for alice from 10.0.0.1 port 22 ssh2");
  Event e;
  e.kind = EventKind::kFirst;
  e.record = &r;
  e.count_total = 1;
  EXPECT_FALSE(Serialise(e).contains("event_id"));
  e.origin = {0x00000000000000abULL, 12345};
  EXPECT_EQ(Serialise(e)["event_id"], "00000000000000ab-12345-f");
  e.kind = EventKind::kSummary;
  e.count = 3;
  e.origin = {0xfedcba9876543210ULL, 0};
  EXPECT_EQ(Serialise(e)["event_id"], "fedcba9876543210-0-s");
  e.kind = EventKind::kNewValue;
  EXPECT_EQ(Serialise(e)["event_id"], "fedcba9876543210-0-n");
}

TEST(EventJsonTest, SummaryOfOneLineGroupHasOneSample) {
  const LogRecord r = MakeRecord("only line");
  Event e;
  e.kind = EventKind::kSummary;
  e.reason = SummaryReason::kShutdown;
  e.record = &r;
  e.last_record = &r;
  e.count_total = 1;
  json j = Serialise(e);
  EXPECT_EQ(j["reason"], "shutdown");
  EXPECT_EQ(j["closed"], false);
  EXPECT_EQ(j["count"], 0);
  ASSERT_EQ(j["samples"].size(), 1u);
  EXPECT_EQ(j["samples"][0]["message"], "only line");
}

TEST(EventJsonTest, SummaryWithHostsListsThemInsteadOfHost) {
  const LogRecord r = MakeRecord("disk full", "db01", "kernel");
  const std::vector<std::string> hosts = {"db01", "db02", "web\"03"};
  Event e;
  e.kind = EventKind::kSummary;
  e.reason = SummaryReason::kMaxHold;
  e.record = &r;
  e.last_record = &r;
  e.hosts = hosts;
  e.hosts_truncated = true;
  e.count = 2;
  e.count_total = 3;
  json j = Serialise(e);
  EXPECT_EQ(j["reason"], "max_hold");
  EXPECT_FALSE(j.contains("host"));
  EXPECT_EQ(j["app"], "kernel");
  EXPECT_EQ(j["hosts"], json::array({"db01", "db02", "web\"03"}));
  EXPECT_EQ(j["hosts_truncated"], true);
}

TEST(EventJsonTest, SummaryReasonsAndKindNames) {
  EXPECT_EQ(SummaryReasonName(SummaryReason::kIdle), "idle");
  EXPECT_EQ(SummaryReasonName(SummaryReason::kMaxHold), "max_hold");
  EXPECT_EQ(SummaryReasonName(SummaryReason::kEvicted), "evicted");
  EXPECT_EQ(SummaryReasonName(SummaryReason::kShutdown), "shutdown");
  EXPECT_EQ(EventKindName(EventKind::kFirst), "first");
  EXPECT_EQ(EventKindName(EventKind::kSummary), "summary");
  EXPECT_EQ(EventKindName(EventKind::kAnnotate), "annotate");
  Event e;
  e.kind = EventKind::kSummary;
  e.reason = SummaryReason::kEvicted;
  EXPECT_EQ(Serialise(e)["reason"], "evicted");
  EXPECT_EQ(Serialise(e)["samples"], json::array());  // no record: no samples
}

TEST(EventJsonTest, AnnotateEvent) {
  const LogRecord r = MakeRecord("job 42 done");
  Event e;
  e.kind = EventKind::kAnnotate;
  e.group_id = 0xdeadbeefULL;
  e.fingerprint = 0x1ULL;
  e.record = &r;
  e.template_text = "job <*> done";
  e.count_total = 5;
  json j = Serialise(e);
  EXPECT_EQ(j["kind"], "annotate");
  EXPECT_EQ(j["group_id"], "00000000deadbeef");
  EXPECT_EQ(j["cluster_id"], j["group_id"]);
  EXPECT_EQ(j["fingerprint"], "0000000000000001");
  EXPECT_EQ(j["template"], "job <*> done");
  EXPECT_EQ(j["count_total"], 5);
  EXPECT_EQ(j["message"], "job 42 done");
  EXPECT_EQ(j["host"], "web01");
}

TEST(EventJsonTest, RecordFieldsOfOtherFlavours) {
  LogRecord r;
  r.flavor = SyslogFlavor::kJson;
  r.outcome = ParseOutcome::kMissingMessageField;
  r.arrival_us = kT0;
  r.msgid = "ID47";
  r.structured_data = "[exampleSDID@32473 iut=\"3\"]";
  r.json_fields = R"({"level":"info","n":3})";
  r.message = "raw \"line\"";
  Event e;
  e.kind = EventKind::kFirst;
  e.record = &r;
  json j = Serialise(e);
  EXPECT_EQ(j["time"], "2024-03-01T00:00:00.000000Z");  // no timestamp: arrival
  EXPECT_FALSE(j.contains("host"));
  EXPECT_FALSE(j.contains("app"));
  EXPECT_FALSE(j.contains("facility"));
  EXPECT_FALSE(j.contains("severity"));
  EXPECT_EQ(j["msgid"], "ID47");
  EXPECT_EQ(j["structured_data"], "[exampleSDID@32473 iut=\"3\"]");
  EXPECT_EQ(j["fields"], json::parse(R"({"level":"info","n":3})"));
  EXPECT_EQ(j["format"], std::string(SyslogFlavorName(SyslogFlavor::kJson)));
  EXPECT_EQ(j["parse_error"], std::string(ParseOutcomeName(ParseOutcome::kMissingMessageField)));
  EXPECT_EQ(j["message"], "raw \"line\"");
}

TEST(EventJsonTest, FirstEventWithoutRecordIsStillValid) {
  Event e;
  json j = Serialise(e);
  EXPECT_EQ(j["kind"], "first");
  EXPECT_EQ(j["group_id"], "0000000000000000");
  EXPECT_FALSE(j.contains("message"));
}

// --- strings ---------------------------------------------------------------------------------

TEST(JsonStringTest, QuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonString(""), "\"\"");
  EXPECT_EQ(JsonString("plain text"), "\"plain text\"");
  EXPECT_EQ(JsonString("say \"hi\""), R"("say \"hi\"")");
  EXPECT_EQ(JsonString("C:\\dir\\"), R"("C:\\dir\\")");
  EXPECT_EQ(JsonString("a\nb\rc\td"), R"("a\nb\rc\td")");
  EXPECT_EQ(JsonString("\x01\x08\x0c\x1f"), R"("\u0001\u0008\u000c\u001f")");
  EXPECT_EQ(JsonString("del\x7f"), "\"del\x7f\"");  // DEL is allowed raw in JSON
  EXPECT_EQ(JsonString("/ stays"), "\"/ stays\"");
}

TEST(JsonStringTest, NulBytesAreEscaped) {
  const std::string s("a\0b\0", 4);
  const std::string out = JsonString(s);
  EXPECT_EQ(out, R"("a\u0000b\u0000")");
  EXPECT_EQ(out.find('\0'), std::string::npos);
  EXPECT_EQ(json::parse(out).get<std::string>(), s);
}

TEST(JsonStringTest, ValidUtf8IsKeptVerbatim) {
  const std::string s = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf";
  EXPECT_EQ(JsonString(s), "\"" + s + "\"");
  EXPECT_EQ(json::parse(JsonString(s)).get<std::string>(), s);
}

TEST(JsonStringTest, InvalidUtf8BytesBecomeReplacementCharacters) {
  const std::string kFffd = "\xef\xbf\xbd";
  struct Case {
    std::string in;
    std::string want;  // decoded
  };
  const std::vector<Case> cases = {
      {"a\xffz", "a" + kFffd + "z"},                        // never valid
      {"\x80", kFffd},                                      // lone continuation
      {"\xc0\xaf", kFffd + kFffd},                          // overlong '/'
      {"\xe0\x80\xaf", kFffd + kFffd + kFffd},              // overlong, 3 bytes
      {"\xed\xa0\x80", kFffd + kFffd + kFffd},              // UTF-16 surrogate
      {"\xf4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},  // above U+10FFFF
      {"\xf5\x80\x80\x80", kFffd + kFffd + kFffd + kFffd},  // invalid lead byte
      {"end\xe2\x82", "end" + kFffd + kFffd},               // truncated at the end
      {"\xe2\x82Z", kFffd + kFffd + "Z"},                   // truncated in the middle
      {"\xc3\xa9\xc3", "\xc3\xa9" + kFffd},                 // valid then truncated
  };
  for (const Case& c : cases) {
    const std::string out = JsonString(c.in);
    json parsed;
    ASSERT_NO_THROW(parsed = json::parse(out)) << out;
    EXPECT_EQ(parsed.get<std::string>(), c.want) << out;
  }
}

// Long text is written in pieces (a stack buffer of a few hundred bytes): a character, an
// escape or an invalid sequence at any offset around a piece's end comes out as in one piece.
TEST(JsonStringTest, LongTextIsTheSameAtEveryOffset) {
  const std::string kFffd = "\xef\xbf\xbd";
  for (std::size_t k = 490; k < 530; ++k) {
    const std::string pad(k, 'a');
    const std::string tail(700, 'b');
    EXPECT_EQ(JsonString(pad + "\xf0\x9d\x84\x9e\"" + tail),
              "\"" + pad + "\xf0\x9d\x84\x9e\\\"" + tail + "\"")
        << k;
    EXPECT_EQ(JsonString(pad + "\xe2\x82\\" + tail + "\x01"),
              "\"" + pad + kFffd + kFffd + "\\\\" + tail + "\\u0001\"")
        << k;
  }
}

TEST(JsonStringTest, RandomTextWithQuotesAndControlsRoundTrips) {
  // Bytes needing an escape at every offset within and across the eight-byte blocks the
  // writer skips over.
  std::mt19937 rng(7);
  const std::string specials = "\"\\\n\x01\t";
  for (int round = 0; round < 2000; ++round) {
    std::string s(rng() % 40, 'x');
    for (char& c : s) {
      c = rng() % 6 == 0 ? specials[rng() % specials.size()] : static_cast<char>(32 + rng() % 95);
    }
    const std::string out = JsonString(s);
    json parsed;
    ASSERT_NO_THROW(parsed = json::parse(out)) << out;
    ASSERT_EQ(parsed.get<std::string>(), s) << out;
  }
}

TEST(JsonStringTest, EveryByteValueYieldsValidJson) {
  std::string all;
  for (int round = 0; round < 3; ++round) {
    for (int c = 0; c < 256; ++c) all += static_cast<char>((c * 73 + round * 11) & 0xff);
  }
  const std::string out = JsonString(all);
  EXPECT_TRUE(json::accept(out));
}

TEST(EventJsonTest, HostileRecordStillSerialisesToValidJson) {
  LogRecord r =
      MakeRecord(std::string("bad \xff\xfe utf8, nul \0 here, \"quote\" \\ \x1b[31m", 40));
  r.hostname = "h\xc3";
  r.app_name = std::string("a\0p", 3);
  const std::vector<std::string> hosts = {"x\xff", std::string("\0", 1)};
  for (EventKind kind : {EventKind::kFirst, EventKind::kSummary, EventKind::kAnnotate}) {
    Event e;
    e.kind = kind;
    e.record = &r;
    e.last_record = &r;
    e.template_text = r.message;
    e.hosts = hosts;
    json j = Serialise(e);
    EXPECT_EQ(j["kind"], std::string(EventKindName(kind)));
    if (kind == EventKind::kSummary) {
      EXPECT_EQ(j["samples"][0]["app"], std::string("a\0p", 3));
      EXPECT_EQ(j["hosts"][0], "x\xef\xbf\xbd");
    } else {
      EXPECT_EQ(j["host"], "h\xef\xbf\xbd");
      const std::string msg = j["message"].get<std::string>();
      EXPECT_THAT(msg, ::testing::HasSubstr("bad \xef\xbf\xbd\xef\xbf\xbd utf8"));
      EXPECT_THAT(msg, ::testing::HasSubstr(std::string("nul \0 here", 10)));
    }
  }
}

using test::FromBase64;

// An event is written in pieces of a few KB: fields of every size around those pieces, escapes
// and invalid bytes included, come out whole and in order, and a long json_fields is kept.
TEST(EventJsonTest, LongFieldsAreWrittenWholeAtEverySize) {
  for (std::size_t size : {0u, 1u, 511u, 512u, 513u, 1023u, 1024u, 1025u, 3000u, 4096u, 9000u}) {
    std::string message(size, 'm');
    for (std::size_t k = 0; k < size; k += 7) message[k] = "\"\\\x01\xff"[k % 4];
    LogRecord r =
        MakeRecord(message, "h" + std::string(size, 'h'), "a" + std::string(size / 2, 'a'));
    r.json_fields = "{\"k\":\"" + std::string(size, 'v') + "\"}";
    const std::string value(size, 's'), tmpl(size, 't');
    const SlotValueCount top{value, 2};
    const SlotSummary slot{3, 1, 1, std::span<const SlotValueCount>(&top, 1)};
    for (EventKind kind : {EventKind::kFirst, EventKind::kSummary, EventKind::kNewValue}) {
      Event e;
      e.kind = kind;
      e.record = &r;
      e.template_text = tmpl;
      e.slots = std::span<const SlotSummary>(&slot, 1);
      const json j = Serialise(e);
      const json& rec = kind == EventKind::kSummary ? j["samples"][0] : j;
      EXPECT_EQ(rec["app"], r.app_name) << size;
      EXPECT_EQ(rec["fields"]["k"], std::string(size, 'v')) << size;
      if (kind != EventKind::kSummary) {
        EXPECT_EQ(rec["host"], r.hostname) << size;
        const bool utf8 = message.find('\xff') == std::string::npos;
        EXPECT_EQ(FromBase64(rec.value("message_base64", std::string())),
                  utf8 ? std::string() : message)
            << size;
      }
      if (kind != EventKind::kFirst) {
        EXPECT_EQ(j["template"], e.template_text) << size;
        EXPECT_EQ(j["slots"][0]["top"][0]["value"], value) << size;
      }
    }
  }
}

// Issue #21: bytes that are not UTF-8 were replaced by U+FFFD and lost. "message_base64"
// carries them exactly; a UTF-8 message has no such field.
TEST(EventJsonTest, NonUtf8MessageTravelsExactlyAsBase64) {
  for (const std::string& message :
       {std::string("latin-1 caf\xe9"), std::string("\xff"), std::string("ab\xc3"),
        std::string("\xfe\xff\x00xyz", 6), std::string("1234\x80")}) {
    const LogRecord r = MakeRecord(message);
    for (EventKind kind : {EventKind::kFirst, EventKind::kAnnotate}) {
      Event e;
      e.kind = kind;
      e.record = &r;
      const json j = Serialise(e);
      ASSERT_TRUE(j.contains("message_base64")) << message;
      EXPECT_EQ(FromBase64(j["message_base64"].get<std::string>()), message);
    }
  }
  const LogRecord utf8 = MakeRecord("caf\xc3\xa9 \xe2\x82\xac");
  Event e;
  e.kind = EventKind::kFirst;
  e.record = &utf8;
  EXPECT_FALSE(Serialise(e).contains("message_base64"));
}

TEST(EventJsonTest, AppendsWithoutClearingTheBuffer) {
  const LogRecord r = MakeRecord("one");
  Event e;
  e.record = &r;
  std::string out = "previous\n";
  AppendEventJson(e, out);
  AppendEventJson(e, out);
  EXPECT_EQ(out.rfind("previous\n", 0), 0u);
  std::vector<std::string> lines;
  std::size_t pos = 9;
  while (pos < out.size()) {
    const std::size_t nl = out.find('\n', pos);
    ASSERT_NE(nl, std::string::npos);
    lines.push_back(out.substr(pos, nl - pos));
    pos = nl + 1;
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], lines[1]);
  EXPECT_EQ(json::parse(lines[0])["message"], "one");
}

// The Kafka outputs key records by a field read back from the event's JSON: the top-level
// field's raw value, not the same words inside a message or another field's value.
TEST(EventJsonTest, StringFieldIsReadFromTheEventNotFromTheMessage) {
  LogRecord r = MakeRecord(R"(user set "host":"evil" and "group_id":"x")", "web\\01\"q");
  Event e;
  e.kind = EventKind::kFirst;
  e.group_id = 0x0123456789abcdefULL;
  e.record = &r;
  std::string out;
  AppendEventJson(e, out);
  EXPECT_EQ(EventJsonStringField(out, "group_id"), "0123456789abcdef");
  // Escapes kept as written: a key only needs to be stable.
  EXPECT_EQ(EventJsonStringField(out, "host"), R"(web\\01\"q)");
  EXPECT_EQ(EventJsonStringField(out, "msgid"), "");
  EXPECT_EQ(EventJsonStringField(out, "kind"), "first");
  EXPECT_EQ(EventJsonStringField(R"({"a":"unterminated)", "a"), "unterminated");
  EXPECT_EQ(EventJsonStringField("", "host"), "");
}

// --- times and hex ---------------------------------------------------------------------------

TEST(JsonTimeTest, EpochAndFractions) {
  EXPECT_EQ(JsonTime(0), "\"1970-01-01T00:00:00.000000Z\"");
  EXPECT_EQ(JsonTime(1), "\"1970-01-01T00:00:00.000001Z\"");
  EXPECT_EQ(JsonTime(kT0 + 123), "\"2024-03-01T00:00:00.000123Z\"");
  EXPECT_EQ(JsonTime(kT0 + 999'999), "\"2024-03-01T00:00:00.999999Z\"");
  EXPECT_EQ(JsonTime(kT0 - 1), "\"2024-02-29T23:59:59.999999Z\"");  // leap day
  EXPECT_EQ(JsonTime(253'402'300'799'999'999), "\"9999-12-31T23:59:59.999999Z\"");
}

TEST(JsonTimeTest, ASecondSeenBeforeIsFormattedAgainAfterAnother) {
  // The date and time of day are kept per second: each change of second must redo them.
  EXPECT_EQ(JsonTime(kT0 + 5), "\"2024-03-01T00:00:00.000005Z\"");
  EXPECT_EQ(JsonTime(kT0 + 86'400'000'000 + 7), "\"2024-03-02T00:00:00.000007Z\"");
  EXPECT_EQ(JsonTime(kT0 + 9), "\"2024-03-01T00:00:00.000009Z\"");
  EXPECT_EQ(JsonTime(kT0 - 1'000'000 + 9), "\"2024-02-29T23:59:59.000009Z\"");
  EXPECT_EQ(JsonTime(kT0 - 1'000'000 + 10), "\"2024-02-29T23:59:59.000010Z\"");
}

TEST(JsonTimeTest, ATimeWrittenAgainIsTheSame) {
  // The last time is kept whole (an event's time and received time are often one): a time
  // of the same second, or one that was the last but one, is still formatted afresh.
  EXPECT_EQ(JsonTime(kT0 + 123'456), "\"2024-03-01T00:00:00.123456Z\"");
  EXPECT_EQ(JsonTime(kT0 + 123'456), "\"2024-03-01T00:00:00.123456Z\"");
  EXPECT_EQ(JsonTime(kT0 + 987'654), "\"2024-03-01T00:00:00.987654Z\"");
  EXPECT_EQ(JsonTime(kT0 + 123'456), "\"2024-03-01T00:00:00.123456Z\"");
  EXPECT_EQ(JsonTime(kT0 + 10'000), "\"2024-03-01T00:00:00.010000Z\"");
  EXPECT_EQ(JsonTime(kT0 + 999'999), "\"2024-03-01T00:00:00.999999Z\"");
}

TEST(JsonTimeTest, NegativeTimesRoundTowardsThePast) {
  EXPECT_EQ(JsonTime(-1), "\"1969-12-31T23:59:59.999999Z\"");
  EXPECT_EQ(JsonTime(-1'000'000), "\"1969-12-31T23:59:59.000000Z\"");
  EXPECT_EQ(JsonTime(-1'500'000), "\"1969-12-31T23:59:58.500000Z\"");
  EXPECT_EQ(JsonTime(-86'400'000'000), "\"1969-12-31T00:00:00.000000Z\"");
  EXPECT_EQ(JsonTime(-62'135'596'800'000'000), "\"0001-01-01T00:00:00.000000Z\"");
}

TEST(JsonTimeTest, ExtremeValuesStayQuotedStrings) {
  for (TimeUs t : {std::numeric_limits<TimeUs>::max(), std::numeric_limits<TimeUs>::min()}) {
    const std::string out = JsonTime(t);
    ASSERT_GE(out.size(), 2u);
    EXPECT_EQ(out.front(), '"');
    EXPECT_EQ(out.back(), '"');
    EXPECT_TRUE(json::accept(out)) << out;
  }
}

TEST(Hex64Test, SixteenLowercaseDigits) {
  std::string out;
  AppendHex64(0, out);
  EXPECT_EQ(out, "0000000000000000");
  out.clear();
  AppendHex64(0xdeadbeefULL, out);
  EXPECT_EQ(out, "00000000deadbeef");
  out.clear();
  AppendHex64(~0ULL, out);
  EXPECT_EQ(out, "ffffffffffffffff");
  AppendHex64(0x0123456789ABCDEFULL, out);  // appends
  EXPECT_EQ(out, "ffffffffffffffff0123456789abcdef");
}

}  // namespace
}  // namespace logfold
