// What real senders put on the wire, byte for byte, and the fields logfold must take from it:
// util-linux logger in its modes, Python's SysLogHandler, rsyslog's forwarding templates,
// syslog-ng's drivers, Docker's syslog log driver, Cisco IOS/ASA, Juniper and key=value
// firewalls. Stream transports go through the FrameDecoder as a TCP input would.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/frame_decoder.h"
#include "pipeline/log_record.h"
#include "pipeline/syslog_parser.h"
#include "pipeline/syslog_time.h"

namespace logfold {
namespace {

using std::string_view_literals::operator""sv;

// 2026-11-22T00:13:30Z, two seconds after the senders' stamps.
constexpr TimeUs kArrival = 1795306410000000;

struct Want {
  int pri;                // -1: none
  std::string_view time;  // RFC 3339 (year 2026 for BSD stamps); "" = absent
  std::string_view host;  // "" = absent
  std::string_view app;
  std::string_view procid;
  std::string_view msgid;
  std::string_view message;
  std::string_view tag = {};  // "" = the tag is the app, or none
};

enum class Wire { kDatagram, kStream };

struct Sender {
  std::string_view name;
  Wire wire;
  std::string_view bytes;  // a datagram, or a TCP byte stream (framing included)
  std::vector<Want> records;
};

const std::vector<Sender>& Senders() {
  static const std::vector<Sender> senders = {
      // util-linux logger (2.38): `logger -n HOST` sends RFC 5424 with timeQuality SD.
      {"logger --rfc5424 (udp, default to a server)",
       Wire::kDatagram,
       "<13>1 2026-11-22T00:13:28.123456+00:00 myhost alice 4242 - [timeQuality tzKnown=\"1\" "
       "isSynced=\"1\" syncAccuracy=\"24500\"] disk /dev/sda1 is 91% full",
       {{13, "2026-11-22T00:13:28.123456Z", "myhost", "alice", "4242", "",
         "disk /dev/sda1 is 91% full"}}},
      {"logger --rfc5424=notq,notime --msgid ID47 -p local0.err",
       Wire::kDatagram,
       "<131>1 - myhost alice - ID47 - job failed",
       {{131, "", "myhost", "alice", "", "ID47", "job failed"}}},
      {"logger --rfc3164 -i -t cron (udp)",
       Wire::kDatagram,
       "<13>Nov 22 00:13:28 myhost cron[4242]: job 7 done",
       {{13, "2026-11-22T00:13:28Z", "myhost", "cron", "4242", "", "job 7 done"}}},
      {"logger to the local socket (no hostname)",
       Wire::kDatagram,
       "<13>Nov 22 00:13:28 alice: hello there",
       {{13, "2026-11-22T00:13:28Z", "", "alice", "", "", "hello there"}}},
      {"logger --tcp --octet-count",
       Wire::kStream,
       "61 <13>1 2026-11-22T00:13:28.123456+00:00 myhost alice - - - one"
       "61 <13>1 2026-11-22T00:13:29.123456+00:00 myhost alice - - - two",
       {{13, "2026-11-22T00:13:28.123456Z", "myhost", "alice", "", "", "one"},
        {13, "2026-11-22T00:13:29.123456Z", "myhost", "alice", "", "", "two"}}},
      {"logger --tcp (LF framing)",
       Wire::kStream,
       "<13>1 2026-11-22T00:13:28.123456+00:00 myhost alice - - - one\n"
       "<13>1 2026-11-22T00:13:29.123456+00:00 myhost alice - - - two\n",
       {{13, "2026-11-22T00:13:28.123456Z", "myhost", "alice", "", "", "one"},
        {13, "2026-11-22T00:13:29.123456Z", "myhost", "alice", "", "", "two"}}},

      // Python logging.handlers.SysLogHandler with Formatter('%(name)s[%(process)d]: %(message)s'):
      // no timestamp, no hostname, a NUL at the end of every record.
      {"Python SysLogHandler over UDP",
       Wire::kDatagram,
       "<14>payments[4242]: charge 17 declined\0"sv,
       {{14, "", "", "payments", "4242", "", "charge 17 declined"}}},
      {"Python SysLogHandler over UDP, ident='payments: '",
       Wire::kDatagram,
       "<11>payments: Traceback (most recent call last):\n  File \"x.py\", line 3\nKeyError: 'k'\0"sv,
       {{11, "", "", "payments", "", "",
         "Traceback (most recent call last):\n  File \"x.py\", line 3\nKeyError: 'k'"}}},
      {"Python SysLogHandler over /dev/log (unix datagram, the handler's default address)",
       Wire::kDatagram,
       "<14>payments[4242]: charge 17 declined\0"sv,
       {{14, "", "", "payments", "4242", "", "charge 17 declined"}}},
      {"Python SysLogHandler over TCP (NUL-terminated records)",
       Wire::kStream,
       "<132>payments[4242]: one\0<132>payments[4242]: two\0<132>payments[4242]: three\0"sv,
       {{132, "", "", "payments", "4242", "", "one"},
        {132, "", "", "payments", "4242", "", "two"},
        {132, "", "", "payments", "4242", "", "three"}}},

      // rsyslog's built-in forwarding templates, for a line it received as
      // "<30>Nov 22 00:13:28 web01 nginx[77]: GET / 200".
      {"rsyslog RSYSLOG_TraditionalForwardFormat",
       Wire::kDatagram,
       "<30>Nov 22 00:13:28 web01 nginx[77]: GET / 200",
       {{30, "2026-11-22T00:13:28Z", "web01", "nginx", "77", "", "GET / 200"}}},
      {"rsyslog RSYSLOG_ForwardFormat",
       Wire::kDatagram,
       "<30>2026-11-22T00:13:28.120000+00:00 web01 nginx[77]: GET / 200",
       {{30, "2026-11-22T00:13:28.12Z", "web01", "nginx", "77", "", "GET / 200"}}},
      {"rsyslog RSYSLOG_SyslogProtocol23Format over TCP (octet-counted, LF inside)",
       Wire::kStream,
       "69 <30>1 2026-11-22T00:13:28.120000+00:00 web01 nginx 77 - -  GET / 200\n",
       // MSG kept as sent: rsyslog keeps the SP after the 3164 tag's ':' and writes it.
       {{30, "2026-11-22T00:13:28.12Z", "web01", "nginx", "77", "", " GET / 200"}}},
      // The same for "<22>Nov 22 00:13:28 mx01 postfix/smtpd[991]: connect": the app is the
      // program name either way; only the 3164 template carries the whole tag on.
      {"rsyslog RSYSLOG_TraditionalForwardFormat, a tag with '/'",
       Wire::kDatagram,
       "<22>Nov 22 00:13:28 mx01 postfix/smtpd[991]: connect",
       {{22, "2026-11-22T00:13:28Z", "mx01", "postfix", "991", "", "connect", "postfix/smtpd"}}},
      {"rsyslog RSYSLOG_SyslogProtocol23Format, a tag with '/' (APP-NAME is programname)",
       Wire::kDatagram,
       "<22>1 2026-11-22T00:13:28.120000+00:00 mx01 postfix 991 - -  connect",
       {{22, "2026-11-22T00:13:28.12Z", "mx01", "postfix", "991", "", " connect"}}},

      // syslog-ng 3.38: syslog() driver (RFC 5424, octet-counted over TCP) and network()
      // (BSD), as captured from Debian's syslog-ng: its frames and datagrams end in LF, which
      // the octet count includes (tests/integration/syslog_ng_forward_test.cc runs it).
      {"syslog-ng syslog() driver",
       Wire::kStream,
       "83 <38>1 2026-11-22T00:13:28+00:00 db01 sshd 991 - [meta sequenceId=\"1\"] Accepted "
       "key\n",
       {{38, "2026-11-22T00:13:28Z", "db01", "sshd", "991", "", "Accepted key"}}},
      {"syslog-ng syslog() driver over UDP",
       Wire::kDatagram,
       "<38>1 2026-11-22T00:13:28+00:00 db01 sshd 991 - [meta sequenceId=\"1\"] Accepted key\n",
       {{38, "2026-11-22T00:13:28Z", "db01", "sshd", "991", "", "Accepted key"}}},
      {"syslog-ng network() driver",
       Wire::kStream,
       "<38>Nov 22 00:13:28 db01 sshd[991]: Accepted key\n",
       {{38, "2026-11-22T00:13:28Z", "db01", "sshd", "991", "", "Accepted key"}}},
      {"syslog-ng network() driver over UDP",
       Wire::kDatagram,
       "<38>Nov 22 00:13:28 db01 sshd[991]: Accepted key\n",
       {{38, "2026-11-22T00:13:28Z", "db01", "sshd", "991", "", "Accepted key"}}},

      // Docker's syslog log driver (tag = the 12-character container id by default; PROCID is
      // the daemon's pid; MSGID repeats the tag).
      {"docker syslog-format=rfc5424",
       Wire::kDatagram,
       "<30>1 2026-11-22T00:13:28Z dockerhost 3b8d6f1a2c4e 811 3b8d6f1a2c4e - listening on :8080",
       {{30, "2026-11-22T00:13:28Z", "dockerhost", "3b8d6f1a2c4e", "811", "3b8d6f1a2c4e",
         "listening on :8080"}}},
      {"docker syslog-format=rfc5424micro over TCP (octet-counted)",
       Wire::kStream,
       "95 <30>1 2026-11-22T00:13:28.123456Z dockerhost 3b8d6f1a2c4e 811 3b8d6f1a2c4e - "
       "listening on :8080",
       {{30, "2026-11-22T00:13:28.123456Z", "dockerhost", "3b8d6f1a2c4e", "811", "3b8d6f1a2c4e",
         "listening on :8080"}}},
      {"docker syslog-format=rfc3164",
       Wire::kDatagram,
       "<30>Nov 22 00:13:28 dockerhost 3b8d6f1a2c4e[811]: listening on :8080",
       {{30, "2026-11-22T00:13:28Z", "dockerhost", "3b8d6f1a2c4e", "811", "",
         "listening on :8080"}}},

      // Network devices.
      {"Cisco IOS with sequence number and '*' (clock not synced)",
       Wire::kDatagram,
       "<189>123: *Nov 22 00:13:28.123: %SYS-5-CONFIG_I: Configured from console by vty0",
       {{189, "2026-11-22T00:13:28.123Z", "", "%SYS-5-CONFIG_I", "", "",
         "Configured from console by vty0"}}},
      {"Cisco IOS with sequence number and '.' (clock synced once)",
       Wire::kDatagram,
       "<187>124: .Nov 22 00:13:28: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down",
       {{187, "2026-11-22T00:13:28Z", "", "%LINK-3-UPDOWN", "", "",
         "Interface Gi0/1, changed state to down"}}},
      {"Cisco IOS without sequence number",
       Wire::kDatagram,
       "<189>Nov 22 00:13:28.123: %SYS-5-CONFIG_I: Configured from console",
       {{189, "2026-11-22T00:13:28.123Z", "", "%SYS-5-CONFIG_I", "", "",
         "Configured from console"}}},
      {"Cisco ASA (no timestamp)",
       Wire::kDatagram,
       "<166>%ASA-6-302013: Built outbound TCP connection 7 for outside:10.0.0.1/443",
       {{166, "", "", "%ASA-6-302013", "", "",
         "Built outbound TCP connection 7 for outside:10.0.0.1/443"}}},
      {"Juniper RFC 5424 with structured data",
       Wire::kDatagram,
       "<165>1 2026-11-22T00:13:28.123Z fw01 RT_FLOW - RT_FLOW_SESSION_CREATE "
       "[junos@2636.1.1.1.2.40 source-address=\"10.0.0.1\" source-port=\"5353\"] session "
       "created 10.0.0.1/5353->10.0.0.2/53",
       {{165, "2026-11-22T00:13:28.123Z", "fw01", "RT_FLOW", "", "RT_FLOW_SESSION_CREATE",
         "session created 10.0.0.1/5353->10.0.0.2/53"}}},
      {"FortiGate key=value (no header but the PRI)",
       Wire::kDatagram,
       "<189>date=2026-11-22 time=00:13:28 devname=\"FGT60E\" logid=\"0000000013\" "
       "type=\"traffic\" srcip=10.0.0.1",
       {{189, "", "", "", "", "",
         "date=2026-11-22 time=00:13:28 devname=\"FGT60E\" logid=\"0000000013\" "
         "type=\"traffic\" srcip=10.0.0.1"}}},
      {"key=value after a BSD header",
       Wire::kDatagram,
       "<134>Nov 22 00:13:28 fw02 action=drop src=10.0.0.9 dst=10.0.0.1 proto=tcp",
       {{134, "2026-11-22T00:13:28Z", "fw02", "", "", "",
         "action=drop src=10.0.0.9 dst=10.0.0.1 proto=tcp"}}},

      // RFC 3164 with parts left out, BOM, bytes that are not UTF-8.
      {"RFC 3164 without timestamp",
       Wire::kDatagram,
       "<13>myhost app: no stamp",
       {{13, "", "myhost", "app", "", "", "no stamp"}}},
      {"RFC 3164 without hostname",
       Wire::kDatagram,
       "<13>Nov 22 00:13:28 app[1]: no host",
       {{13, "2026-11-22T00:13:28Z", "", "app", "1", "", "no host"}}},
      {"RFC 5424 with a BOM",
       Wire::kDatagram,
       "<13>1 2026-11-22T00:13:28Z h a - - - \xEF\xBB\xBFunicode \xC3\xA9t\xC3\xA9",
       {{13, "2026-11-22T00:13:28Z", "h", "a", "", "", "\xEF\xBB\xBFunicode \xC3\xA9t\xC3\xA9"}}},
      {"Latin-1 bytes (not UTF-8)",
       Wire::kDatagram,
       "<13>Nov 22 00:13:28 h a: caf\xE9 cr\xE8me",
       {{13, "2026-11-22T00:13:28Z", "h", "a", "", "", "caf\xE9 cr\xE8me"}}},
  };
  return senders;
}

void Check(const Sender& s, std::string_view line, const Want& w) {
  SCOPED_TRACE(std::string(s.name));
  LogRecord r;
  SyslogParser().Parse(line, kArrival, r);
  EXPECT_EQ(r.outcome, ParseOutcome::kOk);
  EXPECT_EQ(r.facility, w.pri < 0 ? -1 : w.pri / 8);
  EXPECT_EQ(r.severity, w.pri < 0 ? -1 : w.pri % 8);
  if (w.time.empty()) {
    EXPECT_FALSE(r.has_timestamp);
  } else {
    EXPECT_TRUE(r.has_timestamp);
    EXPECT_EQ(r.timestamp_us, ParseRfc3339(w.time).value_or(-1));
  }
  EXPECT_EQ(r.hostname, w.host);
  EXPECT_EQ(r.app_name, w.app);
  EXPECT_EQ(r.tag, w.tag);
  EXPECT_EQ(r.procid, w.procid);
  EXPECT_EQ(r.msgid, w.msgid);
  EXPECT_EQ(r.message, w.message);
  EXPECT_EQ(r.raw, line.substr(0, line.find_last_not_of(std::string_view("\0\n", 2)) + 1));
}

TEST(SenderConformanceTest, EverySenderYieldsItsFields) {
  for (const Sender& s : Senders()) {
    std::vector<std::string> lines;
    if (s.wire == Wire::kDatagram) {
      // As the UDP input does: the datagram is one message, trailing LF/CR/NUL dropped.
      std::string_view d = s.bytes;
      while (!d.empty() && (d.back() == '\n' || d.back() == '\r' || d.back() == '\0')) {
        d.remove_suffix(1);
      }
      lines.emplace_back(d);
    } else {
      FrameDecoder decoder;  // a TCP input's defaults
      decoder.Feed(s.bytes, [&](std::string_view m) { lines.emplace_back(m); });
      decoder.Finish([&](std::string_view m) { lines.emplace_back(m); });
      EXPECT_EQ(decoder.counters().framing_errors, 0u) << s.name;
    }
    ASSERT_EQ(lines.size(), s.records.size()) << s.name;
    for (std::size_t i = 0; i < lines.size(); ++i) Check(s, lines[i], s.records[i]);
  }
}

}  // namespace
}  // namespace logfold
