// RELP end to end with real, private rsyslogd instances: rsyslog's omrelp → logfold's relp
// input (every line rsyslog took is accounted for in logfold's events), and the whole chain
// omrelp → logfold relp input → logfold relp output → rsyslog's imrelp with the downstream
// rsyslogd killed (SIGKILL) and restarted mid-stream; and what the relp output's records carry.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/clickhouse_server.h"  // PickFreePort
#include "tests/support/daemon_process.h"
#include "tests/support/rsyslogd.h"

namespace logfold {
namespace {

using clickhouse_test::PickFreePort;
using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::MetricSum;
using daemon_test::TcpClient;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using rsyslog_test::Rsyslogd;
using rsyslog_test::RsyslogdPath;
using std::chrono::milliseconds;

bool HaveRelpModules() {
  return rsyslog_test::HaveRsyslogModule("omrelp") && rsyslog_test::HaveRsyslogModule("imrelp");
}

// The upstream rsyslogd: lines arrive on imtcp (an ephemeral port, see imtcp_port()) and
// leave with omrelp to logfold's relp input on `relp_port`.
std::string UpstreamConfig(const Rsyslogd& r, std::uint16_t relp_port) {
  return r.ImtcpInput("fwd") +
         "module(load=\"omrelp\")\n"
         "ruleset(name=\"fwd\") {\n"
         "  action(type=\"omrelp\" target=\"127.0.0.1\" port=\"" +
         std::to_string(relp_port) + "\")\n}\n";
}

// `n` RFC 3164 lines, twelve kinds of message on four hosts with varying numbers, so that
// they fold into a few dozen groups. Line i carries "seq=i" nowhere: folding must not depend
// on it; the accounting is by counts.
// With `hosts` > 4 the hosts are "host-N" and the groups many: a steady stream of events.
std::vector<std::string> MakeLines(int n, int hosts = 4) {
  static constexpr const char* kHosts[] = {"web-01", "web-02", "db-01", "mail-01"};
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) {
    const int kind = i % 12;
    const std::string host =
        hosts <= 4 ? kHosts[(i / 12) % 4] : "host-" + std::to_string((i / 12) % hosts);
    const std::string v = std::to_string(1000 + (i * 7919) % 9000);
    std::string msg;
    switch (kind % 4) {
      case 0:
        msg = "sshd[" + v + "]: Accepted publickey for user" + std::to_string(kind) +
              " from 10.0." + std::to_string(i % 250) + ".7 port " + v + " ssh2";
        break;
      case 1:
        msg = "nginx[" + v + "]: upstream timed out kind " + std::to_string(kind) +
              " while reading response header, request: \"GET /api/items/" + v + "\"";
        break;
      case 2:
        msg = "kernel: [" + v + ".123456] eth" + std::to_string(kind) + ": link up, speed " + v;
        break;
      default:
        msg = "CRON[" + v + "]: (root) CMD (/usr/local/bin/job-" + std::to_string(kind) +
              " --run " + v + ")";
        break;
    }
    lines.push_back("<" + std::to_string(8 + kind % 8) + ">May  1 12:00:" +
                    (i % 60 < 10 ? "0" : "") + std::to_string(i % 60) + " " + host + " " + msg);
  }
  return lines;
}

// True when something listens on 127.0.0.1:`port` or [::]:`port` / 0.0.0.0:`port` (TCP),
// from /proc/net/tcp{,6}: no connection is made, so the server logs nothing.
bool TcpListening(std::uint16_t port) {
  char hex[8];
  std::snprintf(hex, sizeof hex, ":%04X", port);
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::istringstream in(daemon_test::ReadFile(table));
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state == "0A" && local.size() > 5 && local.ends_with(hex)) return true;
    }
  }
  return false;
}

// The downstream rsyslogd: imrelp on `port`, each message written as received (%rawmsg%) to
// `file`. Direct queues: imrelp acknowledges a message only after omfile has written it, so
// a SIGKILL loses nothing rsyslog acknowledged.
std::string DownstreamConfig(std::uint16_t port, const std::string& file) {
  return "main_queue(queue.type=\"Direct\")\n"
         "module(load=\"imrelp\")\n"
         "template(name=\"raw\" type=\"string\" string=\"%rawmsg%\\n\")\n"
         "input(type=\"imrelp\" address=\"127.0.0.1\" port=\"" +
         std::to_string(port) +
         "\" ruleset=\"out\")\n"
         "ruleset(name=\"out\" queue.type=\"Direct\") {\n"
         "  action(type=\"omfile\" file=\"" +
         file + "\" template=\"raw\")\n}\n";
}

// What the downstream file holds: each distinct RFC 5424 record logfold sent (a resent one is
// byte-identical: its group id, and for a summary its counts and times, make it unique), and
// how many copies beyond the first arrived.
struct Delivered {
  std::uint64_t lines = 0;  // first events count 1, summaries their count
  std::uint64_t events = 0;
  std::uint64_t duplicates = 0;
  std::vector<std::string> unreadable;
};

Delivered ReadDelivered(const std::string& text) {
  Delivered d;
  std::set<std::string> seen;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (!seen.insert(line).second) {
      ++d.duplicates;
      continue;
    }
    ++d.events;
    // "<PRI>1 TS HOST APP PROCID KIND [logfold@32473 group=.. fp=.. count="N" ...] MSG"
    std::istringstream fields(line);
    std::string pri, ts, host, app, procid, kind;
    fields >> pri >> ts >> host >> app >> procid >> kind;
    if (kind == "first") {
      d.lines += 1;
    } else if (kind == "summary") {
      const std::size_t at = line.find(" count=\"");
      if (at == std::string::npos) {
        d.unreadable.push_back(line);
        continue;
      }
      d.lines += std::strtoull(line.c_str() + at + 8, nullptr, 10);
    } else {
      d.unreadable.push_back(line);
    }
  }
  return d;
}

class RelpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::setenv("TZ", "UTC", 1); }

  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    if (RsyslogdPath().empty()) GTEST_SKIP() << "rsyslogd not installed (Debian package rsyslog)";
    if (!HaveRelpModules()) GTEST_SKIP() << "omrelp/imrelp missing (Debian package rsyslog-relp)";
  }

  void TearDown() override {
    if (HasFailure()) {
      std::fprintf(stderr, "--- logfold stderr ---\n%s\n%s\n%s\n", daemon_.Stderr().c_str(),
                   upstream_.Diagnostics().c_str(), downstream_.Diagnostics().c_str());
    }
  }

  // Feeds `lines` to the upstream rsyslogd's imtcp.
  void Feed(const std::vector<std::string>& lines) {
    TcpClient feed(upstream_.imtcp_port());
    ASSERT_TRUE(feed.connected());
    std::string all;
    for (const std::string& l : lines) all += l + "\n";
    ASSERT_TRUE(feed.Send(all));
    feed.Close();
  }

  double Received() const {
    return MetricSum(daemon_.Metrics(), "logfold_received_total", {"input=\"relp-in\""});
  }

  // Starts the downstream rsyslogd (see DownstreamConfig) and waits until it listens.
  void StartDownstream(std::uint16_t port, const std::string& file) {
    std::string error;
    ASSERT_TRUE(downstream_.Start(DownstreamConfig(port, file), error, [&] {
      return TcpListening(port);
    })) << error;
  }

  TempDir dir_;
  DaemonProcess daemon_{dir_};
  Rsyslogd upstream_{dir_, "upstream"};
  Rsyslogd downstream_{dir_, "downstream"};
};

TEST_F(RelpTest, OmrelpToRelpInputAccountsForEveryLine) {
  constexpr int kLines = 3000;
  const std::string events_path = dir_ / "events.ndjson";
  Json config = daemon_test::LoopbackConfig(events_path);
  config["inputs"] = Json::array({{{"name", "relp-in"}, {"type", "relp"}, {"port", 0}}});
  daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
  ASSERT_TRUE(daemon_.Start(dir_ / "logfold.json")) << "logfold serve did not start";
  const std::uint16_t relp_port = daemon_.InputPort("relp-in", "relp");
  ASSERT_NE(relp_port, 0);

  std::string error;
  ASSERT_TRUE(upstream_.Start(UpstreamConfig(upstream_, relp_port), error)) << error;
  Feed(MakeLines(kLines));
  ASSERT_TRUE(
      WaitUntil([&] { return Received() >= kLines; }, milliseconds(30000), milliseconds(20)))
      << "logfold received " << Received() << " of " << kLines << " lines within 30 s";
  EXPECT_EQ(MetricSum(daemon_.Metrics(), "logfold_connections_open", {"proto=\"relp\""}), 1)
      << "rsyslogd's one RELP session";
  // rsyslogd ends its RELP session on SIGTERM; nothing more arrives after that.
  const std::optional<int> rsyslog_code = upstream_.Stop();
  ASSERT_TRUE(rsyslog_code.has_value());
  EXPECT_EQ(*rsyslog_code, 0);

  const std::string metrics = daemon_.Metrics();
  EXPECT_EQ(MetricSum(metrics, "logfold_received_total", {"input=\"relp-in\""}), kLines)
      << "each line once (RELP resends only what was not acknowledged)";
  EXPECT_GT(MetricSum(metrics, "logfold_received_bytes_total", {"input=\"relp-in\""}),
            kLines * 40.0);
  EXPECT_EQ(MetricSum(metrics, "logfold_dropped_total", {"input=\"relp-in\""}), 0);
  // rsyslogd closed its session on SIGTERM; the gauge reads the kernel's table.
  EXPECT_TRUE(WaitUntil(
      [&] {
        return MetricSum(daemon_.Metrics(), "logfold_connections_open", {"proto=\"relp\""}) == 0;
      },
      milliseconds(10000)));
  ASSERT_TRUE(
      daemon_.WaitMetricAtLeast("logfold_lines_processed_total", {}, kLines, milliseconds(30000)));
  EXPECT_EQ(MetricSum(daemon_.Metrics(), "logfold_parse_total", {"outcome=\"ok\""}), kLines);

  ASSERT_TRUE(daemon_.Signal(SIGTERM));
  const std::optional<int> code = daemon_.WaitExit(milliseconds(30000));
  ASSERT_TRUE(code.has_value()) << "logfold did not exit within 30 s of SIGTERM";
  EXPECT_EQ(*code, 0);
  std::vector<Json> events;
  ASSERT_TRUE(daemon_test::ParseNdjson(daemon_test::ReadFile(events_path), events, error)) << error;
  EXPECT_EQ(daemon_test::LinesAccounted(events), static_cast<std::uint64_t>(kLines));
  std::set<std::string> hosts;
  for (const Json& e : events) hosts.insert(e.value("host", ""));
  EXPECT_EQ(hosts, (std::set<std::string>{"db-01", "mail-01", "web-01", "web-02"}));
  EXPECT_LT(events.size(), 400u) << "near-duplicates fold";
}

TEST_F(RelpTest, ChainSurvivesDownstreamKilledAndRestarted) {
  constexpr int kPhase = 2000;  // lines fed before, during and after the downstream outage
  constexpr int kWindow = 128;
  const std::string delivered_path = dir_ / "downstream.log";
  const std::uint16_t downstream_port = PickFreePort();
  ASSERT_NE(downstream_port, 0);
  std::string error;
  ASSERT_NO_FATAL_FAILURE(StartDownstream(downstream_port, delivered_path));

  Json config = daemon_test::LoopbackConfig(dir_ / "unused.ndjson");
  config["inputs"] = Json::array({{{"name", "relp-in"}, {"type", "relp"}, {"port", 0}}});
  // Short windows, so that summaries flow all along and some are in flight at the kill.
  config["engine"] = {{"window", "300ms"}, {"max_hold", "1s"}};
  // A small buffer: during the outage it fills, the workers wait, and the RELP input holds
  // its acknowledgements back (backpressure to rsyslog) instead of dropping.
  config["outputs"] = Json::array({{{"name", "relp-out"},
                                    {"type", "relp"},
                                    {"address", "127.0.0.1"},
                                    {"port", downstream_port},
                                    {"buffer", "64KiB"},
                                    {"window", kWindow},
                                    {"reconnect_min", "50ms"},
                                    {"reconnect_max", "300ms"}}});
  daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
  ASSERT_TRUE(daemon_.Start(dir_ / "logfold.json")) << "logfold serve did not start";
  const std::uint16_t relp_port = daemon_.InputPort("relp-in", "relp");
  ASSERT_NE(relp_port, 0);
  ASSERT_TRUE(upstream_.Start(UpstreamConfig(upstream_, relp_port), error)) << error;

  const std::vector<std::string> lines = MakeLines(3 * kPhase, 100);
  auto phase = [&](int i) {
    return std::vector<std::string>(lines.begin() + i * kPhase, lines.begin() + (i + 1) * kPhase);
  };
  auto acknowledged = [&] {
    return MetricSum(daemon_.Metrics(), "logfold_sink_acknowledged_events_total",
                     {"sink=\"relp-out\""});
  };

  // 1. Events flow; the downstream rsyslogd is killed as soon as it has written some.
  Feed(phase(0));
  ASSERT_TRUE(
      WaitUntil([&] { return acknowledged() >= 100; }, milliseconds(30000), milliseconds(5)))
      << "no events acknowledged downstream within 30 s";
  downstream_.Kill();
  const double acked_at_kill = acknowledged();

  // 2. Lines keep coming while the collector is dead; logfold retries the connection.
  Feed(phase(1));
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_sink_connect_failures_total",
                                        {"sink=\"relp-out\""}, 3, milliseconds(30000)))
      << "logfold did not retry the dead collector";

  // 3. The collector comes back on the same port; the rest of the lines follow.
  ASSERT_NO_FATAL_FAILURE(StartDownstream(downstream_port, delivered_path));
  Feed(phase(2));
  ASSERT_TRUE(
      WaitUntil([&] { return Received() >= 3 * kPhase; }, milliseconds(60000), milliseconds(20)))
      << "logfold received " << Received() << " of " << 3 * kPhase << " lines within 60 s";
  ASSERT_TRUE(upstream_.Stop().has_value());
  const std::string before_stop = daemon_.Metrics();
  const double resent =
      MetricSum(before_stop, "logfold_sink_resent_bytes_total", {"sink=\"relp-out\""});
  EXPECT_GE(MetricSum(before_stop, "logfold_sink_disconnects_total", {"sink=\"relp-out\""}), 1);

  // logfold's shutdown closes every group and waits for the collector to acknowledge all.
  ASSERT_TRUE(daemon_.Signal(SIGTERM));
  const std::optional<int> code = daemon_.WaitExit(milliseconds(60000));
  ASSERT_TRUE(code.has_value()) << "logfold did not exit within 60 s of SIGTERM";
  EXPECT_EQ(*code, 0);
  EXPECT_NE(daemon_.Stderr().find("lost events 0, lost lines 0"), std::string::npos)
      << "no event may be counted lost";
  ASSERT_TRUE(downstream_.Stop().has_value());

  const Delivered d = ReadDelivered(daemon_test::ReadFile(delivered_path));
  EXPECT_TRUE(d.unreadable.empty()) << d.unreadable.front();
  // The accounting invariant across both hops and the outage: every line rsyslog took.
  EXPECT_EQ(d.lines, static_cast<std::uint64_t>(3 * kPhase));
  // Resends duplicate at most one window per broken session (here: the one the kill broke).
  EXPECT_LE(d.duplicates, static_cast<std::uint64_t>(kWindow));
  std::fprintf(stderr,
               "chain: %llu lines in %llu distinct events downstream, %llu duplicates, %.0f "
               "acknowledged before the kill, %.0f bytes resent after it\n",
               static_cast<unsigned long long>(d.lines), static_cast<unsigned long long>(d.events),
               static_cast<unsigned long long>(d.duplicates), acked_at_kill, resent);
}

// Issue #21: the relp output, like the syslog output it shares its encoding with, forwards a
// message's bytes as received (not UTF-8 here: never U+FFFD) and a tag longer than the app in
// its element, as the downstream rsyslogd's %rawmsg% shows.
TEST_F(RelpTest, OutputKeepsNonUtf8BytesAndTheTag) {
  const std::string delivered_path = dir_ / "downstream.log";
  const std::uint16_t downstream_port = PickFreePort();
  ASSERT_NE(downstream_port, 0);
  ASSERT_NO_FATAL_FAILURE(StartDownstream(downstream_port, delivered_path));
  Json config = daemon_test::LoopbackConfig(dir_ / "unused.ndjson");
  config["outputs"] = Json::array({{{"name", "relp-out"},
                                    {"type", "relp"},
                                    {"address", "127.0.0.1"},
                                    {"port", downstream_port}}});
  daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
  ASSERT_TRUE(daemon_.Start(dir_ / "logfold.json")) << "logfold serve did not start";
  constexpr std::string_view kMessage = "caf\xe9 \x80 \xc0\xaf from a legacy sender";
  {
    TcpClient client(daemon_.InputPort("tcp-in", "tcp"));
    ASSERT_TRUE(client.Send(
        "<13>Nov 25 12:00:00 old-host legacy/worker[7]: " + std::string(kMessage) + "\n"));
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        return daemon_test::ReadFile(delivered_path).find("legacy sender") != std::string::npos;
      },
      milliseconds(20000)))
      << daemon_test::ReadFile(delivered_path);
  const std::string delivered = daemon_test::ReadFile(delivered_path);
  EXPECT_NE(delivered.find(" old-host legacy 7 first [logfold@32473 "), std::string::npos)
      << delivered;
  EXPECT_NE(delivered.find(" tag=\"legacy/worker\"] " + std::string(kMessage) + "\n"),
            std::string::npos)
      << delivered;
  EXPECT_EQ(delivered.find("\xEF\xBF\xBD"), std::string::npos) << "no U+FFFD";
}

// A collector that never answers: SIGTERM still ends within workers.shutdown_timeout, and what
// could not be acknowledged is counted as lost in lines and events, not silently dropped.
TEST_F(RelpTest, DeadCollectorAtShutdownCountsLostLinesAndEvents) {
  constexpr int kLines = 500;
  const std::uint16_t dead_port = PickFreePort();  // nothing listens there
  ASSERT_NE(dead_port, 0);
  Json config = daemon_test::LoopbackConfig(dir_ / "unused.ndjson");
  config["workers"] = {{"threads", 2}, {"shutdown_timeout", "2s"}};
  config["outputs"] = Json::array({{{"name", "relp-out"},
                                    {"type", "relp"},
                                    {"address", "127.0.0.1"},
                                    {"port", dead_port},
                                    {"reconnect_max", "200ms"}}});
  daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
  ASSERT_TRUE(daemon_.Start(dir_ / "logfold.json")) << "logfold serve did not start";
  TcpClient feed(daemon_.InputPort("tcp-in", "tcp"));
  ASSERT_TRUE(feed.connected());
  std::string all;
  for (const std::string& l : MakeLines(kLines)) all += l + "\n";
  ASSERT_TRUE(feed.Send(all));
  feed.Close();
  ASSERT_TRUE(
      daemon_.WaitMetricAtLeast("logfold_lines_processed_total", {}, kLines, milliseconds(30000)));
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_sink_connect_failures_total",
                                        {"sink=\"relp-out\""}, 1, milliseconds(10000)));

  const auto start = daemon_test::Clock::now();
  ASSERT_TRUE(daemon_.Signal(SIGTERM));
  const std::optional<int> code = daemon_.WaitExit(milliseconds(30000));
  ASSERT_TRUE(code.has_value()) << "logfold did not exit within 30 s of SIGTERM";
  EXPECT_EQ(*code, 0);
  EXPECT_LT(daemon_test::Clock::now() - start, std::chrono::seconds(6))
      << "shutdown_timeout is 2 s";
  // The final counters: every line is in a lost event (first events count 1, summaries their
  // count), none acknowledged.
  const std::string log = daemon_.Stderr();
  const std::size_t at = log.find("lost lines ");
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_EQ(std::strtoull(log.c_str() + at + 11, nullptr, 10),
            static_cast<unsigned long long>(kLines))
      << log;
  const std::size_t events_at = log.find("lost events ");
  ASSERT_NE(events_at, std::string::npos);
  EXPECT_GT(std::strtoull(log.c_str() + events_at + 12, nullptr, 10), 0u);
}

}  // namespace
}  // namespace logfold
