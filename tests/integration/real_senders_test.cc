// `logfold serve` fed by real senders over loopback (issue #21): lines that start with digits
// on syslog and raw TCP inputs, Python's logging.handlers.SysLogHandler over UDP and TCP, and
// a multi-line UDP datagram; every record checked field by field in annotate mode. Also what
// a user sees on the command line: --version, a failed bind, explain --config.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::TcpClient;
using daemon_test::TempDir;
using daemon_test::UdpClient;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;

class RealSendersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    Json config = daemon_test::LoopbackConfig(EventsPath());
    config["inputs"].push_back(
        {{"name", "raw-in"}, {"type", "tcp"}, {"port", 0}, {"format", "raw"}});
    config["engine"]["mode"] = "annotate";
    config["workers"]["threads"] = 1;  // one worker: events in arrival order
    const std::string path = dir_ / "logfold.json";
    daemon_test::WriteFile(path, config.dump(2));
    ASSERT_TRUE(daemon_.Start(path)) << daemon_.Stderr();
  }

  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "--- daemon stderr ---\n%s\n", daemon_.Stderr().c_str());
  }

  std::string EventsPath() const { return dir_ / "events.ndjson"; }

  // Waits for `n` complete annotate events and returns them in order.
  std::vector<Json> WaitForEvents(std::size_t n) {
    std::vector<Json> events;
    WaitUntil(
        [&] {
          std::string text = daemon_test::ReadFile(EventsPath());
          const std::size_t end = text.rfind('\n');
          text.resize(end == std::string::npos ? 0 : end + 1);
          events.clear();
          std::string error;
          daemon_test::ParseNdjson(text, events, error);
          return events.size() >= n;
        },
        milliseconds(10000));
    return events;
  }

  double Metric(std::string_view name, std::string_view label) {
    return daemon_test::MetricSum(daemon_.Metrics(), name, {label});
  }

  TempDir dir_;
  DaemonProcess daemon_{dir_};
};

// Issue #21: under the default framing a TCP line starting with digits was read as an
// octet count, swallowed the next message and corrupted the one after, uncounted.
TEST_F(RealSendersTest, LinesStartingWithDigitsStayLinesOnSyslogAndRawInputs) {
  const std::string stream =
      "42 items processed\n<13>Nov 22 00:13:28 h app: second message\n"
      "<13>Nov 22 00:13:29 h app: third message\n";
  {
    TcpClient syslog(daemon_.InputPort("tcp-in", "tcp"));
    ASSERT_TRUE(syslog.Send(stream));
  }
  const std::vector<Json> first = WaitForEvents(3);
  {
    TcpClient raw(daemon_.InputPort("raw-in", "tcp"));
    ASSERT_TRUE(raw.Send(stream));
  }
  const std::vector<Json> events = WaitForEvents(6);
  ASSERT_EQ(events.size(), 6u);
  const std::vector<std::string> syslog_want = {"42 items processed", "second message",
                                                "third message"};
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(events[i].value("message", ""), syslog_want[i]);
  const std::vector<std::string> raw_want = {"42 items processed",
                                             "<13>Nov 22 00:13:28 h app: second message",
                                             "<13>Nov 22 00:13:29 h app: third message"};
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(events[3 + i].value("message", ""), raw_want[i]);
  // The syslog input tried the count, found no '<' after it and counted that; the raw input
  // reads lines by default and had nothing to count.
  EXPECT_EQ(Metric("logfold_framing_errors_total", "input=\"tcp-in\""), 1);
  EXPECT_EQ(Metric("logfold_framing_errors_total", "input=\"raw-in\""), 0);
}

// Python's SysLogHandler: no timestamp, no hostname, a NUL after every record; over TCP
// three records must arrive as three events.
TEST_F(RealSendersTest, PythonSysLogHandlerOverUdpAndTcp) {
  if (std::system("command -v python3 >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  const std::string udp = std::to_string(daemon_.InputPort("udp-in", "udp"));
  const std::string tcp = std::to_string(daemon_.InputPort("tcp-in", "tcp"));
  const std::string script =
      "import logging, logging.handlers, socket, sys\n"
      "kind = socket.SOCK_DGRAM if sys.argv[1] == 'udp' else socket.SOCK_STREAM\n"
      "h = logging.handlers.SysLogHandler(address=('127.0.0.1', int(sys.argv[2])), "
      "socktype=kind)\n"
      "h.setFormatter(logging.Formatter('%(name)s[%(process)d]: %(message)s'))\n"
      "log = logging.getLogger('payments')\n"
      "log.addHandler(h)\n"
      "log.setLevel(logging.INFO)\n"
      "for i in range(3): log.warning('charge %d declined', i)\n"
      "if sys.argv[1] == 'udp': log.error('multi\\nline')\n"
      "h.close()\n";
  for (const std::string& args : {"udp " + udp, "tcp " + tcp}) {
    const daemon_test::CommandResult r =
        daemon_test::RunCommand({"python3", "-c", script, args.substr(0, 3), args.substr(4)}, dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // 4 over UDP (the last a two-line record), 3 over TCP.
  const std::vector<Json> events = WaitForEvents(7);
  ASSERT_EQ(events.size(), 7u);
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Json& e = events[i];
    SCOPED_TRACE(e.dump());
    EXPECT_EQ(e.value("app", ""), "payments");
    EXPECT_FALSE(e.value("procid", "").empty());
    EXPECT_FALSE(e.contains("host"));
    EXPECT_FALSE(e.contains("parse_error"));
    EXPECT_EQ(e.value("format", ""), "rfc3164");
    const bool multi_line = i == 3;
    // user facility (1); WARNING is severity 4, ERROR 3.
    EXPECT_EQ(e.value("severity", -1), multi_line ? 3 : 4);
    EXPECT_EQ(e.value("facility", -1), 1);
    const std::size_t n = i < 3 ? i : i - 4;
    EXPECT_EQ(e.value("message", ""),
              multi_line ? "multi\nline" : "charge " + std::to_string(n) + " declined");
  }
  EXPECT_EQ(Metric("logfold_framing_errors_total", "input=\"tcp-in\""), 0);
}

// Issue #21: a failed bind said only "bind: Address already in use".
TEST(ServeStartupTest, FailedBindNamesTheInputAndTheAddress) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const int busy = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(busy, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(busy, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(busy, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(busy, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  const Json config = {
      {"inputs", Json::array({{{"name", "syslog-tcp"}, {"type", "tcp"}, {"port", port}}})},
      {"outputs", Json::array({{{"name", "o"}, {"type", "stdout"}}})}};
  const std::string path = dir / "logfold.json";
  daemon_test::WriteFile(path, config.dump());
  const daemon_test::CommandResult r =
      daemon_test::RunCommand({LOGFOLD_BINARY, "serve", "--config", path}, dir);
  ::close(busy);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("input \"syslog-tcp\" (tcp 127.0.0.1:" + std::to_string(port) +
                       "): bind: Address already in use"),
            std::string::npos)
      << r.err;
}

// A unix socket input that cannot bind names its socket path and type.
TEST(ServeStartupTest, FailedUnixBindNamesTheInputAndThePath) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string socket_path = dir / "no-such-dir" / "log.sock";
  const Json config = {{"inputs", Json::array({{{"name", "local"},
                                                {"type", "unix"},
                                                {"socket_type", "stream"},
                                                {"path", socket_path}}})},
                       {"outputs", Json::array({{{"name", "o"}, {"type", "stdout"}}})}};
  const std::string path = dir / "logfold.json";
  daemon_test::WriteFile(path, config.dump());
  const daemon_test::CommandResult r =
      daemon_test::RunCommand({LOGFOLD_BINARY, "serve", "--config", path}, dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("input \"local\" (unix stream " + socket_path + "): "), std::string::npos)
      << r.err;
}

TEST(ServeStartupTest, VersionIsPrinted) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const daemon_test::CommandResult r = daemon_test::RunCommand({LOGFOLD_BINARY, "--version"}, dir);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.out.starts_with("logfold ")) << r.out;
  EXPECT_TRUE(r.out.ends_with("\n")) << r.out;
  EXPECT_GT(r.out.size(), std::string("logfold \n").size());
}

// Issue #21: custom scope and protected words could not be explained.
TEST(ServeStartupTest, ExplainUsesTheEngineSettingsOfAConfigFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const Json config = {{"inputs", Json::array({{{"name", "u"}, {"type", "udp"}, {"port", 0}}})},
                       {"engine", {{"protected_words", Json::array({"alice"})}}},
                       {"outputs", Json::array({{{"name", "o"}, {"type", "stdout"}}})}};
  const std::string path = dir / "logfold.json";
  daemon_test::WriteFile(path, config.dump());
  const std::vector<std::string> lines = {"login for alice ok", "login for bob ok"};
  const daemon_test::CommandResult plain =
      daemon_test::RunCommand({LOGFOLD_BINARY, "explain", lines[0], lines[1]}, dir);
  EXPECT_EQ(plain.exit_code, 0) << plain.out << plain.err;  // merged with the built-in list
  const daemon_test::CommandResult custom = daemon_test::RunCommand(
      {LOGFOLD_BINARY, "explain", "--config", path, lines[0], lines[1]}, dir);
  EXPECT_EQ(custom.exit_code, 1) << custom.out << custom.err;
  EXPECT_NE(custom.out.find("a protected word differs"), std::string::npos) << custom.out;
}

// Issue #20: explain shows the template match itself: the verdict, its reason, and the
// position that rejected the line or the positions it makes vary.
TEST(ServeStartupTest, ExplainShowsTheTemplateMatchWithPositions) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const daemon_test::CommandResult fits =
      daemon_test::RunCommand({LOGFOLD_BINARY, "explain", "session opened for user alice by cron",
                               "session opened for user bob by cron"},
                              dir);
  EXPECT_EQ(fits.exit_code, 0) << fits.out << fits.err;
  EXPECT_NE(fits.out.find("template match (B against the template of A's group, 7 vs 7 tokens): "
                          "ACCEPT"),
            std::string::npos)
      << fits.out;
  EXPECT_NE(fits.out.find("template position 4 \"alice\" varies"), std::string::npos) << fits.out;
  const daemon_test::CommandResult rejected = daemon_test::RunCommand(
      {LOGFOLD_BINARY, "explain", "Connection accepted from 1.2.3.4 port 22",
       "Connection refused from 1.2.3.4 port 22"},
      dir);
  EXPECT_EQ(rejected.exit_code, 1) << rejected.out << rejected.err;
  EXPECT_NE(rejected.out.find("REJECT — a protected word differs\n  at B token 1 \"refused\""),
            std::string::npos)
      << rejected.out;
}

// Issue #14: a bracketed list is one slot whatever its length, and explain says so.
TEST(ServeStartupTest, ExplainSaysAListSlotDecided) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const daemon_test::CommandResult r = daemon_test::RunCommand(
      {LOGFOLD_BINARY, "explain", "Removed fetcher for partitions Set(orders-0, orders-1)",
       "Removed fetcher for partitions Set(payments-0, payments-2, audit-0)"},
      dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("a list slot decided: 2 item(s) in A, 3 in B"), std::string::npos) << r.out;
}

// Issue #14: explain shows the evidence for a variable learned from the stream: the lines
// between A and B go first, and B's position has then shown enough distinct words.
TEST(ServeStartupTest, ExplainShowsLearnedVariableEvidence) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::vector<std::string> args = {LOGFOLD_BINARY, "explain"};
  for (const char* v : {"chargen", "echo", "daytime", "discard", "time", "ftp"}) {
    args.push_back(std::string("xinetd: removing ") + v);
  }
  const daemon_test::CommandResult learned = daemon_test::RunCommand(args, dir);
  EXPECT_EQ(learned.exit_code, 0) << learned.out << learned.err;
  EXPECT_NE(learned.out.find("learned variables: at B token 2, otherwise-identical lines of "
                             "this scope have shown 6 distinct words; a variable from 6"),
            std::string::npos)
      << learned.out;
  EXPECT_NE(learned.out.find("decision: MERGE via learned variable"), std::string::npos)
      << learned.out;
  const daemon_test::CommandResult two = daemon_test::RunCommand(
      {LOGFOLD_BINARY, "explain", "xinetd: removing chargen", "xinetd: removing echo"}, dir);
  EXPECT_EQ(two.exit_code, 1) << two.out << two.err;
  EXPECT_NE(two.out.find("have shown 2 distinct words; a variable from 6"), std::string::npos)
      << two.out;
}

// Issue #14: explain shows the evidence beyond the template: the group's slot statistics
// when the lines fold, and the header levels that keep an INFO and a FATAL line apart.
TEST(ServeStartupTest, ExplainShowsSlotStatisticsAndLevels) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const daemon_test::CommandResult fits =
      daemon_test::RunCommand({LOGFOLD_BINARY, "explain", "session opened for user alice by cron",
                               "session opened for user bob by cron"},
                              dir);
  EXPECT_EQ(fits.exit_code, 0) << fits.out << fits.err;
  EXPECT_NE(fits.out.find("token 4: 2 distinct over 2 lines: \"alice\" x1 \"bob\" x1"),
            std::string::npos)
      << fits.out;
  const daemon_test::CommandResult levels = daemon_test::RunCommand(
      {LOGFOLD_BINARY, "explain", "2024-03-01 10:00:00,123 INFO [main] Store - disk sda1 full",
       "2024-03-01 10:00:01,456 FATAL [main] Store - disk sda1 full"},
      dir);
  EXPECT_EQ(levels.exit_code, 1) << levels.out << levels.err;
  EXPECT_NE(levels.out.find("levels: A INFO (severity 6), B FATAL (severity 2): different levels "
                            "never share a group"),
            std::string::npos)
      << levels.out;
}

}  // namespace
}  // namespace logfold
