// Integration test with a real, private rsyslogd forwarding to `logfold serve` with omfwd:
// TCP octet-counted (the README snippet), TCP LF framing and UDP, with each of rsyslog's
// built-in forwarding templates (SyslogProtocol23, Forward, TraditionalForward).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/rsyslogd.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::MetricSum;
using daemon_test::TcpClient;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using rsyslog_test::Rsyslogd;
using rsyslog_test::RsyslogdPath;
using std::chrono::milliseconds;

constexpr int kLines = 2000;
constexpr int kUdpChunk = 100;  // lines fed per step when forwarding over UDP

// ------------------------------------------------------------------ the corpus

// One generated syslog line as the test feeds it to rsyslog, and what it carries.
struct Origin {
  std::string host;
  std::string tag;  // TAG without "[PID]" (3164) or APP-NAME (5424)
  std::string procid;
  std::string msgid;            // 5424 only; empty: "-"
  std::string structured_data;  // 5424 only; empty: "-"
  int facility = 0;
  int severity = 0;
  bool rfc5424 = false;
  int minute = 0, second = 0, millis = 0;
  std::string msg;
  std::string line;  // the line as written to rsyslog, without its LF
};

// Small deterministic generator (std::mt19937 output is specified by the standard; the
// distributions are not, so values are taken with modulo).
class Gen {
 public:
  explicit Gen(std::uint32_t seed) : rng_(seed) {}
  std::uint32_t Below(std::uint32_t n) { return static_cast<std::uint32_t>(rng_() % n); }
  std::string Num(std::uint32_t lo, std::uint32_t hi) {
    return std::to_string(lo + Below(hi - lo));
  }
  std::string Ip() { return "10." + Num(0, 4) + "." + Num(0, 256) + "." + Num(1, 255); }
  std::string Port() { return Num(1024, 65535); }
  std::string User() {
    static constexpr const char* kUsers[] = {"alice", "bob", "carol", "dave", "erin", "root"};
    return kUsers[Below(6)];
  }
  std::string Hex(int digits) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < digits; ++i) s += kHex[Below(16)];
    return s;
  }
  std::string Uptime() { return Num(1000, 99999) + "." + Num(100000, 999999); }

 private:
  std::mt19937 rng_;
};

struct Template {
  const char* tag;
  int facility, severity;
  bool rfc5424;
  bool has_pid;
  std::string (*msg)(Gen&);
  const char* msgid = nullptr;  // 5424 only
  bool structured = false;      // 5424 only: add an SD-ELEMENT
};

// Twenty kinds of line across apps, facilities and severities; the numbers, addresses and
// names in them vary so that lines of one kind fold into one group per host.
const std::vector<Template>& Templates() {
  static const std::vector<Template> t = {
      {"sshd", 10, 6, false, true,
       [](Gen& g) {
         return "Accepted publickey for " + g.User() + " from " + g.Ip() + " port " + g.Port() +
                " ssh2";
       }},
      {"sshd", 10, 4, false, true,
       [](Gen& g) {
         return "Failed password for invalid user " + g.User() + " from " + g.Ip() + " port " +
                g.Port() + " ssh2";
       }},
      {"sshd", 4, 6, false, true,
       [](Gen& g) {
         return "Connection closed by " + g.Ip() + " port " + g.Port() + " [preauth]";
       }},
      {"nginx", 23, 3, false, true,
       [](Gen& g) {
         return "upstream timed out (110: Connection timed out) while reading response header "
                "from upstream, client: " +
                g.Ip() + ", request: \"GET /api/v1/items/" + g.Num(1, 99999) + " HTTP/1.1\"";
       }},
      {"nginx", 23, 4, false, true,
       [](Gen& g) {
         return "*" + g.Num(1, 999999) +
                " open() \"/var/www/html/favicon.ico\" failed (2: No such file or directory), "
                "client: " +
                g.Ip();
       }},
      {"kernel", 0, 4, false, false,
       [](Gen& g) {
         return "[" + g.Uptime() + "] TCP: request_sock_TCP: Possible SYN flooding on port " +
                g.Port() + ". Sending cookies.";
       }},
      {"kernel", 0, 6, false, false,
       [](Gen& g) { return "[" + g.Uptime() + "] eth0: renamed from veth" + g.Hex(7); }},
      {"CRON", 9, 6, false, true,
       [](Gen& g) {
         return "(" + g.User() + ") CMD (/usr/local/bin/backup.sh --job " + g.Num(1, 500) + ")";
       }},
      {"postfix/smtpd", 2, 6, false, true,
       [](Gen& g) { return "connect from unknown[" + g.Ip() + "]"; }},
      {"postfix/smtpd", 2, 5, false, true,
       [](Gen& g) {
         return "disconnect from unknown[" + g.Ip() + "] ehlo=1 mail=1 rcpt=0/" + g.Num(1, 9) +
                " commands=2/" + g.Num(3, 12);
       }},
      {"systemd-logind", 4, 6, false, true,
       [](Gen& g) { return "New session " + g.Num(1, 99999) + " of user " + g.User() + "."; }},
      {"dhclient", 3, 6, false, true,
       [](Gen& g) { return "DHCPACK of " + g.Ip() + " from " + g.Ip(); }},
      {"kernel", 0, 2, false, false,
       [](Gen& g) {
         return "[" + g.Uptime() + "] EXT4-fs error (device sda" + g.Num(1, 9) +
                "): ext4_lookup:1855: inode #" + g.Num(2, 9999999) +
                ": comm find: deleted inode referenced: " + g.Num(2, 9999999);
       }},
      {"haproxy", 18, 6, false, true,
       [](Gen& g) {
         return g.Ip() + ":" + g.Port() + " fe_https be_app/app" + g.Num(1, 9) + " 0/0/1/" +
                g.Num(1, 900) + "/" + g.Num(1, 900) + " 200 " + g.Num(100, 99999) +
                " \"GET /health HTTP/1.1\"";
       }},
      {"postgres", 16, 4, true, true,
       [](Gen& g) {
         return "checkpoint complete: wrote " + g.Num(1, 9999) + " buffers (" + g.Num(0, 99) + "." +
                g.Num(0, 9) + "%); 0 WAL file(s) added";
       }},
      {"postgres", 16, 3, true, true,
       [](Gen& g) {
         return "could not receive data from client: Connection reset by peer host=" + g.Ip() +
                " port=" + g.Port();
       }},
      {"billing-api", 17, 6, true, true,
       [](Gen& g) {
         return "request " + g.Hex(8) + "-" + g.Hex(4) + "-4" + g.Hex(3) + "-8" + g.Hex(3) + "-" +
                g.Hex(12) + " completed in " + g.Num(1, 5000) + " ms status=200";
       },
       "REQ", true},
      {"billing-api", 17, 3, true, true,
       [](Gen& g) {
         return "payment " + g.Num(100000, 999999) + " declined by gateway code=" + g.Num(1, 99);
       },
       "PAY"},
      {"worker", 19, 7, true, true,
       [](Gen& g) {
         return "job " + g.Num(1, 999999) + " picked up by worker-" + g.Num(1, 16) + " after " +
                g.Num(1, 999) + " ms";
       }},
      {"worker", 19, 5, true, true,
       [](Gen& g) {
         return "queue depth " + g.Num(0, 10000) + " above threshold " + g.Num(100, 1000) +
                " on shard " + g.Num(0, 32);
       }},
  };
  return t;
}

std::string Two(int v) { return (v < 10 ? "0" : "") + std::to_string(v); }

std::vector<Origin> MakeCorpus(int lines, std::uint32_t seed) {
  static constexpr const char* kHosts[] = {"web-01", "web-02", "db-01", "mail-01"};
  Gen g(seed);
  std::vector<Origin> out;
  for (int i = 0; i < lines; ++i) {
    const Template& t = Templates()[g.Below(static_cast<std::uint32_t>(Templates().size()))];
    Origin o;
    o.host = kHosts[g.Below(4)];
    o.tag = t.tag;
    o.procid = t.has_pid ? g.Num(2, 32768) : "";
    o.facility = t.facility;
    o.severity = t.severity;
    o.rfc5424 = t.rfc5424;
    const int ms = i * 250;  // 12:00:00.000 + 250 ms per line, all within the hour
    o.minute = ms / 60000;
    o.second = ms / 1000 % 60;
    o.millis = t.rfc5424 ? ms % 1000 : 0;
    o.msg = t.msg(g);
    const std::string pri = "<" + std::to_string(t.facility * 8 + t.severity) + ">";
    if (t.rfc5424) {
      o.msgid = t.msgid != nullptr ? t.msgid : "";
      if (t.structured) o.structured_data = "[req@32473 shard=\"" + g.Num(0, 8) + "\"]";
      char millis[8];
      std::snprintf(millis, sizeof millis, "%03d", o.millis);
      o.line = pri + "1 2024-05-01T12:" + Two(o.minute) + ":" + Two(o.second) + "." + millis +
               "Z " + o.host + " " + o.tag + " " + (o.procid.empty() ? "-" : o.procid) + " " +
               (o.msgid.empty() ? "-" : o.msgid) + " " +
               (o.structured_data.empty() ? "-" : o.structured_data) + " " + o.msg;
    } else {
      o.line = pri + "May  1 12:" + Two(o.minute) + ":" + Two(o.second) + " " + o.host + " " +
               o.tag + (o.procid.empty() ? "" : "[" + o.procid + "]") + ": " + o.msg;
    }
    out.push_back(std::move(o));
  }
  return out;
}

// ------------------------------------------------------------------ what arrives

enum class Transport { kTcpOctetCounted, kTcpNewline, kUdp };

struct Case {
  const char* name;
  Transport transport;
  const char* rsyslog_template;
};

// Names the case in test output (and in the test names CTest discovers).
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

bool Rfc5424Template(const Case& c) {
  return std::string_view(c.rsyslog_template) == "RSYSLOG_SyslogProtocol23Format";
}

bool Traditional(const Case& c) {
  return std::string_view(c.rsyslog_template) == "RSYSLOG_TraditionalForwardFormat";
}

// The record fields logfold should report for `o` after the hop through rsyslog.
struct Expected {
  std::string host, app, tag, procid, msgid, structured_data, format, message, time_suffix;
  int facility = 0, severity = 0;
};

Expected ExpectedAfterHop(const Origin& o, const Case& c) {
  Expected e;
  e.host = o.host;
  e.procid = o.procid;
  e.facility = o.facility;
  e.severity = o.severity;
  e.message = o.msg;
  if (Rfc5424Template(c)) {
    e.format = "rfc5424";
    e.msgid = o.msgid;
    e.structured_data = o.structured_data;
    // rsyslog's APP-NAME of a 3164 line is its programname, which by default
    // (parser.permitSlashInProgramName off) ends at a '/': postfix/smtpd becomes postfix,
    // and the rest of the tag is not sent.
    e.app = o.rfc5424 ? o.tag : o.tag.substr(0, o.tag.find('/'));
    // rsyslog keeps the space after a 3164 "TAG:" in MSG, and RFC 5424 keeps MSG verbatim.
    if (!o.rfc5424) e.message = " " + o.msg;
  } else {
    // RSYSLOG_ForwardFormat: "<PRI>TIMESTAMP HOSTNAME TAG MSG"; a 5424 line's TAG is
    // "APP[PROCID]" without a colon; structured data and MSGID are not carried. logfold's
    // app is the tag's program name, as rsyslog's, and the whole tag stays in `tag`.
    e.format = "rfc3164";
    e.app = o.tag.substr(0, o.tag.find('/'));
    if (e.app != o.tag) e.tag = o.tag;
  }
  // rsyslog writes RFC 3339 timestamps (date-rfc3339); a 3164 line's year is inferred by
  // rsyslog, so only the rest is compared; TZ=UTC makes its local time UTC.
  // RSYSLOG_TraditionalForwardFormat writes a BSD stamp: seconds only.
  char frac[24];
  std::snprintf(frac, sizeof frac, ".%03d000Z", Traditional(c) ? 0 : o.millis);
  e.time_suffix = "-05-01T12:" + Two(o.minute) + ":" + Two(o.second) + frac;
  return e;
}

// Checks the record fields of a `first` event or a summary sample against the origins whose
// delivered message is its message. Returns the index of the matching origin, or -1.
int MatchRecord(const Json& r, const std::multimap<std::string, int>& by_message,
                const std::vector<Origin>& corpus, const Case& c, std::string& why) {
  // RSYSLOG_SyslogProtocol23Format ends every octet-counted frame in LF; logfold must not
  // keep it in the message (checked exactly: the message must equal the fed one).
  const std::string message = r.value("message", "");
  const auto [lo, hi] = by_message.equal_range(message);
  if (lo == hi) {
    why = "no fed line has this message: " + r.dump();
    return -1;
  }
  for (auto it = lo; it != hi; ++it) {
    const Expected e = ExpectedAfterHop(corpus[static_cast<std::size_t>(it->second)], c);
    const std::string time = r.value("time", "");
    if (r.value("host", "") == e.host && r.value("app", "") == e.app &&
        r.value("tag", "") == e.tag && r.value("procid", "") == e.procid &&
        r.value("msgid", "") == e.msgid && r.value("structured_data", "") == e.structured_data &&
        r.value("facility", -1) == e.facility && r.value("severity", -1) == e.severity &&
        r.value("format", "") == e.format && !r.contains("parse_error") &&
        time.ends_with(e.time_suffix)) {
      return it->second;
    }
    why = "header fields differ from the fed line \"" +
          corpus[static_cast<std::size_t>(it->second)].line + "\": " + r.dump();
  }
  return -1;
}

// Drops reported by the kernel for the UDP socket bound to 127.0.0.1:port (the last column
// of /proc/net/udp), or 0 when it is not listed.
std::uint64_t KernelUdpDrops(std::uint16_t port) {
  std::ifstream in("/proc/net/udp");
  std::string line;
  char local[32];
  std::snprintf(local, sizeof local, "0100007F:%04X", port);
  while (std::getline(in, line)) {
    if (line.find(local) == std::string::npos) continue;
    return std::strtoull(line.substr(line.find_last_of(' ') + 1).c_str(), nullptr, 10);
  }
  return 0;
}

// ------------------------------------------------------------------ a private rsyslogd

// The omfwd action of the README's "Forwarding to logfold" rsyslog snippet, with its port
// replaced; empty if the README has no such snippet.
std::string ReadmeOmfwdAction(std::uint16_t port) {
  const std::string readme =
      daemon_test::ReadFile(std::filesystem::path(LOGFOLD_SOURCE_DIR) / "README.md");
  const std::size_t begin = readme.find("action(type=\"omfwd\"");
  if (begin == std::string::npos) return "";
  const std::size_t end = readme.find(")\n", begin);
  if (end == std::string::npos) return "";
  std::string action = readme.substr(begin, end + 1 - begin);
  const std::size_t p = action.find("port=\"5514\"");
  if (p == std::string::npos) return "";
  action.replace(p, 11, "port=\"" + std::to_string(port) + "\"");
  return action;
}

// The config of the private rsyslogd: imtcp on an ephemeral loopback port whose lines go
// through `forward_action`.
std::string ForwardConfig(const Rsyslogd& rsyslog, const std::string& forward_action) {
  return rsyslog.ImtcpInput("fwd") + "ruleset(name=\"fwd\") {\n" + forward_action + "\n}\n";
}

// ------------------------------------------------------------------ the test

// What both suites share: a logfold and a private rsyslogd in one directory, both logs
// printed when a test fails.
class RsyslogPeerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // rsyslogd reads 3164 timestamps (no zone) as local time; make that UTC.
    ::setenv("TZ", "UTC", 1);
  }

  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    if (RsyslogdPath().empty()) GTEST_SKIP() << "rsyslogd not installed (Debian package rsyslog)";
  }

  void TearDown() override {
    if (HasFailure()) {
      std::fprintf(stderr, "--- logfold stderr ---\n%s\n--- rsyslogd ---\n%s\n",
                   daemon_.Stderr().c_str(), rsyslog_.Diagnostics().c_str());
    }
  }

  TempDir dir_;
  DaemonProcess daemon_{dir_};
  Rsyslogd rsyslog_{dir_, "rsyslog"};
};

class RsyslogForwardTest : public RsyslogPeerTest, public ::testing::WithParamInterface<Case> {
 protected:
  std::string EventsPath() const { return dir_ / "events.ndjson"; }

  Json LogfoldConfig() const { return daemon_test::LoopbackConfig(EventsPath()); }

  std::string ForwardAction(const Case& c, std::uint16_t tcp_port, std::uint16_t udp_port) const {
    switch (c.transport) {
      case Transport::kTcpOctetCounted:
        return ReadmeOmfwdAction(tcp_port);
      case Transport::kTcpNewline:
        return "action(type=\"omfwd\" target=\"127.0.0.1\" port=\"" + std::to_string(tcp_port) +
               "\" protocol=\"tcp\" template=\"" + c.rsyslog_template + "\")";
      case Transport::kUdp:
        return "action(type=\"omfwd\" target=\"127.0.0.1\" port=\"" + std::to_string(udp_port) +
               "\" protocol=\"udp\" template=\"" + c.rsyslog_template + "\")";
    }
    return "";
  }
};

TEST_P(RsyslogForwardTest, EveryLineIsAccountedForAndHeadersSurviveTheHop) {
  const Case& c = GetParam();
  const bool udp = c.transport == Transport::kUdp;
  const std::string input = udp ? "udp-in" : "tcp-in";
  const std::string input_label = "input=\"" + input + "\"";

  const std::string config_path = dir_ / "logfold.json";
  daemon_test::WriteFile(config_path, LogfoldConfig().dump(2));
  ASSERT_TRUE(daemon_.Start(config_path)) << "logfold serve did not start";
  const std::uint16_t tcp_port = daemon_.InputPort("tcp-in", "tcp");
  const std::uint16_t udp_port = daemon_.InputPort("udp-in", "udp");
  ASSERT_NE(tcp_port, 0);
  ASSERT_NE(udp_port, 0);

  const std::string action = ForwardAction(c, tcp_port, udp_port);
  ASSERT_FALSE(action.empty()) << "README.md has no rsyslog omfwd snippet with port=\"5514\"";
  ASSERT_NE(action.find(std::string("template=\"") + c.rsyslog_template + "\""), std::string::npos)
      << action;
  std::string error;
  ASSERT_TRUE(rsyslog_.Start(ForwardConfig(rsyslog_, action), error)) << error;

  const std::vector<Origin> corpus = MakeCorpus(kLines, 20240501);
  std::multimap<std::string, int> by_message;
  for (int i = 0; i < kLines; ++i) {
    const Expected e = ExpectedAfterHop(corpus[static_cast<std::size_t>(i)], c);
    by_message.emplace(e.message, i);
  }

  auto received = [&] {
    return MetricSum(daemon_.Metrics(), "logfold_received_total", {input_label});
  };
  // UDP loss, if any: counted by logfold (queue full) or by the kernel (receive buffer).
  auto udp_lost = [&] {
    return MetricSum(daemon_.Metrics(), "logfold_dropped_total", {input_label}) +
           static_cast<double>(KernelUdpDrops(udp_port));
  };

  TcpClient feed(rsyslog_.imtcp_port());
  ASSERT_TRUE(feed.connected());
  // TCP applies backpressure end to end, so the whole corpus goes at once. UDP does not:
  // it is fed in steps, each waiting for logfold to have the previous one, which keeps the
  // burst far below any receive buffer.
  const int step = udp ? kUdpChunk : kLines;
  const auto deadline = daemon_test::Clock::now() + std::chrono::seconds(20);
  for (int sent = 0; sent < kLines;) {
    std::string chunk;
    const int upto = std::min(kLines, sent + step);
    for (; sent < upto; ++sent) chunk += corpus[static_cast<std::size_t>(sent)].line + "\n";
    ASSERT_TRUE(feed.Send(chunk));
    ASSERT_TRUE(
        WaitUntil([&] { return received() + (udp ? udp_lost() : 0) >= sent; },
                  std::chrono::duration_cast<milliseconds>(deadline - daemon_test::Clock::now()),
                  milliseconds(20)))
        << "logfold received " << received() << " of " << sent
        << " lines fed to rsyslog within 20 s";
  }
  feed.Close();

  const std::optional<int> rsyslog_code = rsyslog_.Stop();
  ASSERT_TRUE(rsyslog_code.has_value()) << "rsyslogd did not exit within 15 s of SIGTERM";
  EXPECT_EQ(*rsyslog_code, 0);

  // Received counts at the listener; parse outcomes are counted by the workers a moment
  // later (much later under a sanitizer), so wait until the engine has caught up.
  const double taken_in =
      received() - MetricSum(daemon_.Metrics(), "logfold_dropped_total", {input_label});
  ASSERT_TRUE(
      daemon_.WaitMetricAtLeast("logfold_lines_processed_total", {}, taken_in, milliseconds(30000)))
      << "the workers did not process the " << taken_in << " received lines";
  const std::string metrics = daemon_.Metrics();
  const double got = MetricSum(metrics, "logfold_received_total", {input_label});
  const double lost = udp ? udp_lost() : 0;
  if (udp && got < kLines) {
    // Loopback at this rate should not lose datagrams; if it did, every loss must be counted.
    std::fprintf(stderr, "note: UDP lost %.0f of %d datagrams; checking received + dropped\n",
                 kLines - got, kLines);
    EXPECT_EQ(got + lost, kLines);
  } else {
    EXPECT_EQ(got, kLines) << "every fed line, and nothing else (e.g. rsyslogd's own messages)";
  }
  EXPECT_EQ(MetricSum(metrics, "logfold_received_total"), got) << "nothing on the other input";
  EXPECT_EQ(MetricSum(metrics, "logfold_framing_errors_total"), 0);
  EXPECT_EQ(MetricSum(metrics, "logfold_truncated_total"), 0);
  const double queue_full = MetricSum(metrics, "logfold_dropped_total", {input_label});
  EXPECT_EQ(MetricSum(metrics, "logfold_parse_total", {"outcome=\"ok\""}), got - queue_full)
      << "every forwarded line has a header logfold parses";

  ASSERT_TRUE(daemon_.Signal(SIGTERM));
  const std::optional<int> code = daemon_.WaitExit(milliseconds(30000));
  ASSERT_TRUE(code.has_value()) << "logfold did not exit within 30 s of SIGTERM";
  EXPECT_EQ(*code, 0);

  std::vector<Json> events;
  ASSERT_TRUE(daemon_test::ParseNdjson(daemon_test::ReadFile(EventsPath()), events, error))
      << error;
  // The accounting invariant: firsts + sum of summary counts == lines that reached the engine.
  EXPECT_EQ(daemon_test::LinesAccounted(events), static_cast<std::uint64_t>(got - queue_full));

  int firsts = 0, summaries = 0, trailing_lf = 0;
  std::set<std::string> hosts, apps, tags;
  std::set<int> severities;
  std::map<std::string, std::string> first_host_app;  // group_id -> host/app of its first
  for (const Json& e : events) {
    const std::string kind = e.value("kind", "");
    if (kind == "first") {
      ++firsts;
      EXPECT_GE(MatchRecord(e, by_message, corpus, c, error), 0) << error;
      if (e.value("message", "").ends_with('\n')) ++trailing_lf;
      EXPECT_FALSE(e.value("message", "").ends_with('\n')) << e.dump();
      hosts.insert(e.value("host", ""));
      apps.insert(e.value("app", ""));
      tags.insert(e.value("tag", ""));
      severities.insert(e.value("severity", -1));
      first_host_app[e.value("group_id", "")] = e.value("host", "") + " " + e.value("app", "");
    } else if (kind == "summary") {
      ++summaries;
      // Issue #21: RSYSLOG_SyslogProtocol23Format puts two spaces before MSG; the template
      // must not carry the one the message keeps.
      EXPECT_FALSE(e.value("template", "").starts_with(' ')) << e.dump();
      EXPECT_EQ(e.value("reason", ""), "shutdown") << e.dump();
      EXPECT_EQ(first_host_app[e.value("group_id", "")],
                e.value("host", "") + " " + e.value("app", ""))
          << "summary scope differs from its group's first event: " << e.dump();
      ASSERT_TRUE(e.contains("samples") && e["samples"].is_array()) << e.dump();
      for (const Json& sample : e["samples"]) {
        EXPECT_GE(MatchRecord(sample, by_message, corpus, c, error), 0) << error;
        EXPECT_EQ(sample.value("host", ""), e.value("host", ""));
        EXPECT_EQ(sample.value("app", ""), e.value("app", ""));
      }
    } else {
      ADD_FAILURE() << "unexpected event: " << e.dump();
    }
  }
  // Near-duplicates fold: about one group per kind of line and host (20 x 4), not one per line.
  EXPECT_GE(firsts, 20);
  EXPECT_LE(firsts, 200);
  EXPECT_GE(summaries, 20);
  EXPECT_EQ(hosts, (std::set<std::string>{"db-01", "mail-01", "web-01", "web-02"}));
  EXPECT_EQ(severities, (std::set<int>{2, 3, 4, 5, 6, 7}));
  // The same app whichever template carried the line; only a 3164 hop keeps the whole tag.
  EXPECT_TRUE(apps.contains("postfix"));
  EXPECT_FALSE(apps.contains("postfix/smtpd"));
  const std::set<std::string> want_tags =
      Rfc5424Template(c) ? std::set<std::string>{""} : std::set<std::string>{"", "postfix/smtpd"};
  EXPECT_EQ(tags, want_tags);
  EXPECT_TRUE(apps.contains("billing-api"));
  EXPECT_TRUE(apps.contains("kernel"));
  std::fprintf(stderr,
               "%s: %.0f lines received, %d first events, %d summaries, %d first messages "
               "ending in LF\n",
               c.name, got, firsts, summaries, trailing_lf);
}

INSTANTIATE_TEST_SUITE_P(
    Omfwd, RsyslogForwardTest,
    ::testing::Values(
        Case{"TcpOctetCountedRfc5424", Transport::kTcpOctetCounted,
             "RSYSLOG_SyslogProtocol23Format"},
        Case{"TcpNewlineForwardFormat", Transport::kTcpNewline, "RSYSLOG_ForwardFormat"},
        Case{"UdpRfc5424", Transport::kUdp, "RSYSLOG_SyslogProtocol23Format"},
        Case{"UdpForwardFormat", Transport::kUdp, "RSYSLOG_ForwardFormat"},
        Case{"TcpNewlineTraditionalForwardFormat", Transport::kTcpNewline,
             "RSYSLOG_TraditionalForwardFormat"},
        Case{"UdpTraditionalForwardFormat", Transport::kUdp, "RSYSLOG_TraditionalForwardFormat"}),
    [](const ::testing::TestParamInfo<Case>& param_info) {
      return std::string(param_info.param.name);
    });

// Issue #21: a line has the same `app` whether it reaches logfold directly or relayed by
// rsyslog with the README's snippet (RSYSLOG_SyslogProtocol23Format), which sends a 3164
// line's programname as APP-NAME. The direct line also keeps its whole tag.
class RsyslogRelaySameAppTest : public RsyslogPeerTest {};

TEST_F(RsyslogRelaySameAppTest, DirectAndRelayedLinesHaveTheSameApp) {
  const std::string events_path = dir_ / "events.ndjson";
  const std::string config_path = dir_ / "logfold.json";
  daemon_test::WriteFile(config_path, daemon_test::LoopbackConfig(events_path).dump(2));
  ASSERT_TRUE(daemon_.Start(config_path)) << "logfold serve did not start";
  const std::uint16_t tcp_port = daemon_.InputPort("tcp-in", "tcp");
  ASSERT_NE(tcp_port, 0);
  const std::string action = ReadmeOmfwdAction(tcp_port);
  ASSERT_NE(action.find("template=\"RSYSLOG_SyslogProtocol23Format\""), std::string::npos)
      << "README.md's rsyslog snippet: " << action;
  std::string error;
  ASSERT_TRUE(rsyslog_.Start(ForwardConfig(rsyslog_, action), error)) << error;

  struct Line {
    std::string tag_and_pid;       // as the sender writes it
    std::string app, tag, procid;  // what both events must say (tag: the direct one only)
    std::string msg;
  };
  const Line lines[] = {
      {"postfix/smtpd[123]", "postfix", "postfix/smtpd", "123", "connect from unknown[192.0.2.7]"},
      // rsyslog's programname of a tag that starts with '/' is empty: APP-NAME "-".
      {"/USR/SBIN/CRON[4242]", "", "/USR/SBIN/CRON", "4242", "(root) CMD (run-parts hourly)"},
      {"sshd[77]", "sshd", "", "77", "Accepted publickey for alice from 192.0.2.8 port 5022"},
  };
  // One host per path, so each line makes a group (and a first event) per path.
  auto wire = [](const std::string& host, const Line& l) {
    return "<22>May  1 12:00:00 " + host + " " + l.tag_and_pid + ": " + l.msg + "\n";
  };
  std::string direct, relayed;
  for (const Line& l : lines) {
    direct += wire("direct-mx", l);
    relayed += wire("relayed-mx", l);
  }
  TcpClient to_logfold(tcp_port);
  ASSERT_TRUE(to_logfold.connected());
  ASSERT_TRUE(to_logfold.Send(direct));  // LF framing: logfold's auto framing takes it
  TcpClient to_rsyslog(rsyslog_.imtcp_port());
  ASSERT_TRUE(to_rsyslog.connected());
  ASSERT_TRUE(to_rsyslog.Send(relayed));

  constexpr std::size_t kWant = 2 * std::size(lines);
  std::map<std::string, Json> firsts;  // host + " " + message -> first event
  const bool all = WaitUntil(
      [&] {
        std::vector<Json> events;
        std::string text = daemon_test::ReadFile(events_path);
        text.erase(text.find_last_of('\n') + 1);  // a line still being written
        if (!daemon_test::ParseNdjson(text, events, error)) return false;
        firsts.clear();
        for (const Json& e : events) {
          if (e.value("kind", "") != "first") continue;
          std::string message = e.value("message", "");
          // rsyslog keeps the SP after the tag's ':' in MSG (see config/README.md).
          if (message.starts_with(' ')) message.erase(0, 1);
          firsts[e.value("host", "") + " " + message] = e;
        }
        return firsts.size() >= kWant;
      },
      milliseconds(20000));
  ASSERT_TRUE(all) << "first events after 20 s: " << firsts.size() << " of " << kWant << "; "
                   << error;
  EXPECT_EQ(firsts.size(), kWant);

  for (const Line& l : lines) {
    SCOPED_TRACE(l.tag_and_pid);
    ASSERT_TRUE(firsts.contains("direct-mx " + l.msg));
    ASSERT_TRUE(firsts.contains("relayed-mx " + l.msg));
    const Json& d = firsts["direct-mx " + l.msg];
    const Json& r = firsts["relayed-mx " + l.msg];
    EXPECT_EQ(d.value("format", ""), "rfc3164") << d.dump();
    EXPECT_EQ(r.value("format", ""), "rfc5424") << r.dump();
    EXPECT_EQ(d.value("app", ""), r.value("app", "")) << d.dump() << "\n" << r.dump();
    EXPECT_EQ(d.value("app", ""), l.app) << d.dump();
    EXPECT_EQ(d.contains("app"), !l.app.empty()) << d.dump();
    EXPECT_EQ(r.contains("app"), !l.app.empty()) << r.dump();
    EXPECT_EQ(d.value("procid", ""), l.procid) << d.dump();
    EXPECT_EQ(r.value("procid", ""), l.procid) << r.dump();
    // Nothing of the tag is lost on the direct path; rsyslog does not send it on.
    EXPECT_EQ(d.value("tag", ""), l.tag) << d.dump();
    EXPECT_FALSE(r.contains("tag")) << r.dump();
  }
}

}  // namespace
}  // namespace logfold
