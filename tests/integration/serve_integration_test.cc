// Integration tests of `logfold serve` as a real process: the util-linux logger, shutdown
// drain, accounting, backpressure, hostile input, config errors, SIGHUP reload and /metrics.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/base64.h"
#include "tests/support/daemon_process.h"
#include "tests/support/late_collector.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::HttpGet;
using daemon_test::Json;
using daemon_test::LateCollector;
using daemon_test::LinesAccounted;
using daemon_test::TcpClient;
using daemon_test::TempDir;
using daemon_test::UdpClient;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;

// Under a sanitizer the daemon's RSS is mostly shadow memory and quarantine, not its own.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
// ThreadSanitizer slows the daemon several times over: deadlines for bulk transfers scale.
#if defined(__SANITIZE_THREAD__)
constexpr int kSlowdown = 4;
#else
constexpr int kSlowdown = 1;
#endif

std::string Rfc5424(int pri, const std::string& host, const std::string& app,
                    const std::string& msg) {
  return "<" + std::to_string(pri) + ">1 2024-05-01T12:00:00.000Z " + host + " " + app + " - - - " +
         msg;
}

std::string Rfc3164(int pri, const std::string& host, const std::string& app, int pid,
                    const std::string& msg) {
  return "<" + std::to_string(pri) + ">May  1 12:00:00 " + host + " " + app + "[" +
         std::to_string(pid) + "]: " + msg;
}

bool HostIs(const Json& e, std::string_view host) { return e.value("host", "") == host; }

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }

  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "--- daemon stderr ---\n%s\n", daemon_.Stderr().c_str());
  }

  std::string EventsPath() const { return dir_ / "events.ndjson"; }

  Json BaseConfig() const { return daemon_test::LoopbackConfig(EventsPath()); }

  std::string WriteConfig(const Json& config, const std::string& name = "logfold.json") const {
    const std::string path = dir_ / name;
    daemon_test::WriteFile(path, config.dump(2));
    return path;
  }

  // Starts the daemon on `config`; false (with the log in the failure) if it did not come up.
  bool StartDaemon(const Json& config) {
    config_path_ = WriteConfig(config);
    if (!daemon_.Start(config_path_)) {
      ADD_FAILURE() << "logfold serve did not start";
      return false;
    }
    return true;
  }

  std::uint16_t UdpPort() const { return daemon_.InputPort("udp-in", "udp"); }
  std::uint16_t TcpPort() const { return daemon_.InputPort("tcp-in", "tcp"); }

  // Every line of an NDJSON file, each of which must be a JSON object.
  static std::vector<Json> ReadEvents(const std::string& path) {
    std::vector<Json> events;
    std::string error;
    EXPECT_TRUE(daemon_test::ParseNdjson(daemon_test::ReadFile(path), events, error))
        << path << ": " << error;
    return events;
  }
  std::vector<Json> Events() const { return ReadEvents(EventsPath()); }

  // For polling while the daemon runs: the complete lines written so far (a line still being
  // written is left out), without asserting; the final checks use ReadEvents.
  static std::vector<Json> PeekEvents(const std::string& path) {
    std::string text = daemon_test::ReadFile(path);
    text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    std::vector<Json> events;
    std::string error;
    daemon_test::ParseNdjson(text, events, error);
    return events;
  }

  // SIGTERM, then the daemon must drain and exit 0 within the deadline.
  void TerminateAndExpectCleanExit() {
    ASSERT_TRUE(daemon_.Signal(SIGTERM));
    const std::optional<int> code = daemon_.WaitExit(milliseconds(30000));
    ASSERT_TRUE(code.has_value()) << "daemon did not exit within 30 s of SIGTERM (killed)";
    EXPECT_EQ(*code, 0);
  }

  TempDir dir_;
  DaemonProcess daemon_{dir_};
  std::string config_path_;
};

// ------------------------------------------------------------------ 1. the real logger

TEST_F(ServeTest, LoggerNearDuplicatesFoldIntoOneFirstAndAShutdownSummary) {
  if (!daemon_test::HaveProgram("logger")) GTEST_SKIP() << "util-linux logger not installed";
  ASSERT_TRUE(StartDaemon(BaseConfig()));
  const std::string udp = std::to_string(UdpPort()), tcp = std::to_string(TcpPort());
  ASSERT_NE(udp, "0");
  ASSERT_NE(tcp, "0");
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);

  auto logger = [&](std::vector<std::string> transport, const std::string& message) {
    std::vector<std::string> argv = {"logger", "-n", "127.0.0.1", "-t", "diskmon"};
    argv.insert(argv.end(), transport.begin(), transport.end());
    argv.push_back(message);
    const daemon_test::CommandResult r = daemon_test::RunCommand(argv, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  };
  logger({"-P", udp, "--udp"}, "disk /dev/sda1 is 91% full");
  // The first line must open the group before the others arrive on other transports.
  ASSERT_TRUE(WaitUntil([&] { return !PeekEvents(EventsPath()).empty(); }, milliseconds(10000)));
  logger({"-P", tcp, "--tcp", "--octet-count"}, "disk /dev/sda1 is 92% full");
  logger({"-P", tcp, "--tcp"}, "disk /dev/sda1 is 93% full");  // newline framing
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_lines_processed_total", {}, 3));
  const std::string metrics = daemon_.Metrics();
  EXPECT_EQ(daemon_test::MetricSum(metrics, "logfold_received_total", {"input=\"udp-in\""}), 1);
  EXPECT_EQ(daemon_test::MetricSum(metrics, "logfold_received_total", {"input=\"tcp-in\""}), 2);
  EXPECT_EQ(daemon_test::MetricSum(metrics, "logfold_parse_total", {"outcome=\"ok\""}), 3);

  std::vector<Json> events = PeekEvents(EventsPath());
  ASSERT_EQ(events.size(), 1u) << "near-duplicates must not produce more `first` events";
  const Json first = events[0];
  EXPECT_EQ(first["kind"], "first");
  EXPECT_EQ(first["host"], host);
  EXPECT_EQ(first["app"], "diskmon");
  EXPECT_EQ(first["message"], "disk /dev/sda1 is 91% full");
  EXPECT_EQ(first["format"], "rfc5424");
  EXPECT_EQ(first["facility"], 1);  // logger's default priority user.notice
  EXPECT_EQ(first["severity"], 5);

  TerminateAndExpectCleanExit();
  events = Events();
  ASSERT_EQ(events.size(), 2u);
  const Json& summary = events[1];
  EXPECT_EQ(summary["kind"], "summary");
  EXPECT_EQ(summary["group_id"], first["group_id"]);
  EXPECT_EQ(summary["count"], 2);
  EXPECT_EQ(summary["count_total"], 3);
  EXPECT_EQ(summary["template"], "disk /dev/sda1 is <*> full");
  EXPECT_EQ(summary["reason"], "shutdown");
  EXPECT_EQ(summary["closed"], true);
  EXPECT_EQ(summary["host"], host);
  EXPECT_EQ(summary["app"], "diskmon");
  EXPECT_EQ(LinesAccounted(events), 3u);
}

// ------------------------------------------------------------------ 2. SIGTERM drains open groups

TEST_F(ServeTest, SigtermClosesEveryOpenGroupAndAccountsForEveryLine) {
  ASSERT_TRUE(StartDaemon(BaseConfig()));
  constexpr int kLines = 500;
  std::string batch;
  for (int i = 0; i < kLines; ++i) {
    const std::string host = "node-" + std::to_string(i % 3);
    batch +=
        Rfc5424(30, host, "sshd",
                "Accepted publickey for deploy from 10.0." + std::to_string(i % 250) + "." +
                    std::to_string(i % 97 + 1) + " port " + std::to_string(40000 + i) + " ssh2") +
        "\n";
  }
  // One write, smaller than one read of the listener (64 KiB), and SIGTERM right after it
  // without waiting for the daemon: the lines are in its socket before the signal, so the
  // shutdown must take them in. The 60 s window means only the shutdown closes the groups.
  ASSERT_LT(batch.size(), 64u * 1024);
  TcpClient client(TcpPort());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(batch));
  ASSERT_TRUE(daemon_.Signal(SIGTERM));
  EXPECT_TRUE(client.WaitPeerClose()) << "daemon must close the connection when it drains";
  const std::optional<int> code = daemon_.WaitExit(milliseconds(30000));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);

  const std::vector<Json> events = Events();
  EXPECT_EQ(LinesAccounted(events), static_cast<std::uint64_t>(kLines));
  std::size_t firsts = 0, summaries = 0;
  std::map<std::string, std::uint64_t> per_host;
  for (const Json& e : events) {
    if (e["kind"] == "first") {
      ++firsts;
      ++per_host[e["host"]];
    } else {
      ASSERT_EQ(e["kind"], "summary");
      ++summaries;
      per_host[e["host"]] += e["count"].get<std::uint64_t>();
      EXPECT_EQ(e["reason"], "shutdown");
      EXPECT_EQ(e["closed"], true);
      // One summary per group: it stands for everything after the first line.
      EXPECT_EQ(e["count_total"].get<std::uint64_t>(), e["count"].get<std::uint64_t>() + 1);
    }
  }
  // Three scopes (hosts), one masked shape: three groups, every one of them closed.
  EXPECT_EQ(firsts, 3u);
  EXPECT_EQ(summaries, firsts);
  EXPECT_EQ(per_host["node-0"], 167u);
  EXPECT_EQ(per_host["node-1"], 167u);
  EXPECT_EQ(per_host["node-2"], 166u);
  EXPECT_NE(daemon_.Stderr().find("logfold stopped"), std::string::npos);
}

// Group ids end up as keys in log stores that outlive one daemon run, so two runs that see the
// same line must not hand out the same id (`logfold replay` numbers groups reproducibly).
TEST_F(ServeTest, GroupIdsDoNotRepeatAcrossDaemonRuns) {
  const std::string line = Rfc5424(30, "node-1", "sshd", "session opened for user deploy") + "\n";
  auto run_once = [&](DaemonProcess& daemon, const std::string& events_path) -> std::string {
    Json config = BaseConfig();
    config["outputs"][0]["path"] = events_path;
    const std::string path = WriteConfig(config, events_path + ".json");
    if (!daemon.Start(path)) return "daemon did not start";
    TcpClient client(daemon.InputPort("tcp-in", "tcp"));
    if (!client.connected() || !client.Send(line)) return "cannot send";
    if (!WaitUntil([&] { return !PeekEvents(events_path).empty(); }, milliseconds(10000)))
      return "no event";
    const std::vector<Json> events = PeekEvents(events_path);
    daemon.Signal(SIGTERM);
    if (daemon.WaitExit(milliseconds(30000)) != std::optional<int>(0)) return "unclean exit";
    return events[0].value("group_id", "missing");
  };
  const std::string a = run_once(daemon_, dir_ / "run-a.ndjson");
  DaemonProcess second{dir_};
  const std::string b = run_once(second, dir_ / "run-b.ndjson");
  ASSERT_EQ(a.size(), 16u) << a;
  ASSERT_EQ(b.size(), 16u) << b;
  EXPECT_NE(a, b);
}

// ------------------------------------------------------------------ 3. accounting

TEST_F(ServeTest, MixedFormatsFromTcpAndUdpAreAllAccountedFor) {
  ASSERT_TRUE(StartDaemon(BaseConfig()));
  std::map<std::string, std::uint64_t> expected;  // host -> lines delivered
  auto tcp_a_line = [](int i) {
    const std::string host = i % 2 == 0 ? "web-1" : "web-2";
    switch (i % 3) {
      case 0:
        return Rfc5424(134, host, "nginx",
                       "GET /api/items/" + std::to_string(i) + " returned 200 in " +
                           std::to_string(i % 50 + 1) + " ms");
      case 1:
        return Rfc5424(131, host, "nginx",
                       "upstream timed out after " + std::to_string(1000 + i) + " ms");
      default:
        return Rfc5424(134, host, "cron", "job " + std::to_string(i % 40) + " finished");
    }
  };
  auto tcp_b_line = [](int i) {
    const std::string host = i % 2 == 0 ? "db-1" : "db-2";
    if (i % 2 == 0) {
      return Rfc3164(30, host, "postgres", 100 + i % 7,
                     "checkpoint complete: wrote " + std::to_string(i * 3) + " buffers");
    }
    return Rfc3164(27, host, "postgres", 100 + i % 7,
                   "connection from 192.168.1." + std::to_string(i % 200) + " refused");
  };
  auto udp_line = [](int i) {
    if (i % 2 == 0) {
      return Rfc5424(
          14, "edge-1", "haproxy",
          "backend b" + std::to_string(i % 3) + " has " + std::to_string(i % 9) + " servers up");
    }
    return Rfc3164(14, "edge-2", "keepalived", 900,
                   "VRRP advert " + std::to_string(i) + " from 10.9.0." + std::to_string(i % 9));
  };

  constexpr int kTcpA = 1200, kTcpB = 900, kUdp = 1500, kChunk = 100;
  TcpClient a(TcpPort()), b(TcpPort());
  ASSERT_TRUE(a.connected());
  ASSERT_TRUE(b.connected());
  UdpClient udp(UdpPort());
  const std::string udp_labels = "input=\"udp-in\"";
  std::uint64_t udp_sent = 0;
  for (int chunk = 0; chunk * kChunk < std::max({kTcpA, kTcpB, kUdp}); ++chunk) {
    std::string sa, sb;
    for (int i = chunk * kChunk; i < std::min((chunk + 1) * kChunk, kTcpA); ++i) {
      sa += tcp_a_line(i) + "\n";
      ++expected[i % 2 == 0 ? "web-1" : "web-2"];
    }
    for (int i = chunk * kChunk; i < std::min((chunk + 1) * kChunk, kTcpB); ++i) {
      // Octet-counted framing on the second client.
      const std::string line = tcp_b_line(i);
      sb += std::to_string(line.size()) + " " + line;
      ++expected[i % 2 == 0 ? "db-1" : "db-2"];
    }
    ASSERT_TRUE(a.Send(sa));
    ASSERT_TRUE(b.Send(sb));
    for (int i = chunk * kChunk; i < std::min((chunk + 1) * kChunk, kUdp); ++i) {
      ASSERT_TRUE(udp.Send(udp_line(i)));
      ++udp_sent;
    }
    // A modest rate: the next UDP burst only once the daemon has taken this one in, so the
    // kernel's socket buffer never overflows (that loss would be invisible to the daemon).
    ASSERT_TRUE(WaitUntil(
        [&] {
          const std::string m = daemon_.Metrics();
          return daemon_test::MetricSum(m, "logfold_received_total", {udp_labels}) +
                     daemon_test::MetricSum(m, "logfold_dropped_total", {udp_labels}) >=
                 static_cast<double>(udp_sent);
        },
        milliseconds(10000)))
        << "daemon did not take in UDP burst " << chunk;
  }
  a.Close();
  b.Close();
  ASSERT_TRUE(
      daemon_.WaitMetricAtLeast("logfold_received_total", {"input=\"tcp-in\""}, kTcpA + kTcpB));
  std::string m = daemon_.Metrics();
  const double udp_received = daemon_test::MetricSum(m, "logfold_received_total", {udp_labels});
  const double udp_dropped = daemon_test::MetricSum(m, "logfold_dropped_total", {udp_labels});
  EXPECT_EQ(udp_received + udp_dropped, static_cast<double>(udp_sent));
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_received_total", {"input=\"tcp-in\""}),
            kTcpA + kTcpB);
  const double engine_lines = kTcpA + kTcpB + udp_received - udp_dropped;
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_lines_processed_total", {}, engine_lines));
  m = daemon_.Metrics();
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_lines_processed_total"), engine_lines);
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_parse_total", {"outcome=\"ok\""}), engine_lines);
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_parse_total"), engine_lines);

  TerminateAndExpectCleanExit();
  const std::vector<Json> events = Events();
  for (const auto& [host, n] : expected) {
    EXPECT_EQ(LinesAccounted(events, [&](const Json& e) { return HostIs(e, host); }), n) << host;
  }
  // UDP: every line the daemon received and did not drop is in the events.
  const std::uint64_t udp_accounted =
      LinesAccounted(events, [](const Json& e) { return HostIs(e, "edge-1"); }) +
      LinesAccounted(events, [](const Json& e) { return HostIs(e, "edge-2"); });
  EXPECT_EQ(static_cast<double>(udp_accounted), udp_received - udp_dropped);
  EXPECT_EQ(static_cast<double>(LinesAccounted(events)), engine_lines);
  // Both header flavours were recognised, per host.
  for (const Json& e : events) {
    if (e["kind"] != "first") continue;
    const std::string host = e.value("host", "");
    const std::string want = host.starts_with("db-") || host == "edge-2" ? "rfc3164" : "rfc5424";
    EXPECT_EQ(e["format"], want) << e.dump();
    EXPECT_FALSE(e.contains("parse_error")) << e.dump();
  }
}

// ------------------------------------------------------------------ 4. backpressure

// Accepts one connection, and reads from it only once told to, until EOF.
class StallingServer {
 public:
  StallingServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int small = 64 * 1024;  // inherited by the accepted socket: less kernel slack
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in a = daemon_test::Loopback(0);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd_, 4) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port_ = ntohs(a.sin_port);
    }
    thread_ = std::thread([this] { Run(); });
  }
  ~StallingServer() {
    stop_.store(true);
    cv_.notify_all();
    thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }

  std::uint16_t port() const { return port_; }
  bool accepted() const { return accepted_.load(); }
  void StartReading() {
    {
      std::lock_guard lock(mu_);
      reading_ = true;
    }
    cv_.notify_all();
  }
  bool eof() const { return eof_.load(); }
  std::string data() {
    std::lock_guard lock(mu_);
    return data_;
  }

 private:
  void Run() {
    int conn = -1;
    while (!stop_.load() && conn < 0) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    }
    if (conn < 0) return;
    accepted_.store(true);
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return reading_ || stop_.load(); });
    }
    std::vector<char> buf(1 << 16);
    while (!stop_.load()) {
      pollfd p{conn, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::recv(conn, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      std::lock_guard lock(mu_);
      data_.append(buf.data(), static_cast<std::size_t>(n));
    }
    eof_.store(true);
    ::close(conn);
  }

  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false}, accepted_{false}, eof_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool reading_ = false;
  std::string data_;
  std::thread thread_;
};

// Writes a payload through a non-blocking socket and notices when the peer stops taking it.
class Pump {
 public:
  Pump(int fd, const std::string& payload) : fd_(fd), payload_(payload) {}

  // Sends until everything is out (false) or no byte could be written for `stall_after`
  // (true: stalled); gives up at `deadline` (false).
  bool Run(milliseconds stall_after, milliseconds deadline) {
    const auto end = daemon_test::Clock::now() + deadline;
    auto last_progress = daemon_test::Clock::now();
    while (sent_ < payload_.size() && daemon_test::Clock::now() < end) {
      const ssize_t n = ::send(fd_, payload_.data() + sent_, payload_.size() - sent_, MSG_NOSIGNAL);
      if (n > 0) {
        sent_ += static_cast<std::size_t>(n);
        last_progress = daemon_test::Clock::now();
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        ADD_FAILURE() << "send: " << std::strerror(errno);
        return false;
      }
      if (daemon_test::Clock::now() - last_progress >= stall_after) return true;
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, 50);
    }
    return false;
  }
  std::size_t sent() const { return sent_; }
  bool done() const { return sent_ == payload_.size(); }

 private:
  int fd_;
  const std::string& payload_;
  std::size_t sent_ = 0;
};

// One TCP input, annotate mode (exactly one event per line, in order on one connection and
// one worker), a 1024-line queue and a 64 KiB tcp output to `collector_port`.
Json BackpressureConfig(Json config, std::uint16_t collector_port) {
  config["inputs"] = Json::array({{{"name", "tcp-in"}, {"type", "tcp"}, {"port", 0}}});
  config["engine"]["mode"] = "annotate";
  config["workers"] = {{"threads", 1}, {"queue_capacity", 1024}};
  config["outputs"] = Json::array({{{"name", "collector"},
                                    {"type", "tcp"},
                                    {"address", "127.0.0.1"},
                                    {"port", collector_port},
                                    {"buffer", "64KiB"},
                                    {"reconnect_min", "10ms"},
                                    {"reconnect_max", "200ms"}}});
  return config;
}

constexpr int kLoadLines = 200000;

// Line i of the load: "seq=I ..." from loadgen/api, RFC 5424, without its newline.
std::string LoadLine(int i) {
  return Rfc5424(14, "loadgen", "api",
                 "seq=" + std::to_string(i) + " request served in " + std::to_string(i % 997) +
                     " ms status=200");
}

// kLoadLines lines, about 19 MB.
const std::string& LoadPayload() {
  static const std::string payload = [] {
    std::string p;
    for (int i = 0; i < kLoadLines; ++i) p += LoadLine(i) + "\n";
    return p;
  }();
  return payload;
}

// Checks that `received` holds exactly `expected` annotate events, the i-th for line "seq=i"
// (one connection, one worker: order is kept). With `cut_last`, the last event may instead be
// the start of its line: the frame the daemon had half read when it stopped reading, which
// the TCP listener delivers as it stands (as at EOF). The sequence number is read from the
// text, since a full JSON parse of 200k events would dominate the run time; every 500th event
// and a cut one are parsed fully.
void ExpectAnnotateEventsInOrder(std::string_view received, std::size_t expected,
                                 bool cut_last = false) {
  const std::string_view prefix = R"({"kind":"annotate",)";
  const std::string_view message_key = R"("message":"seq=)";
  std::size_t events = 0;
  while (!received.empty()) {
    const std::size_t nl = received.find('\n');
    ASSERT_NE(nl, std::string_view::npos) << "unterminated event at the end";
    const std::string_view line = received.substr(0, nl);
    received.remove_prefix(nl + 1);
    ASSERT_TRUE(line.starts_with(prefix)) << line;
    const std::size_t at = line.find(message_key);
    if (at == std::string_view::npos && cut_last && received.empty()) {
      const Json e = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      ASSERT_TRUE(e.is_object()) << line;
      const std::string whole = LoadLine(static_cast<int>(events));
      const std::string part = e.value("message", "");
      EXPECT_NE(whole.find(part), std::string::npos) << "not a piece of its line: " << line;
      EXPECT_LT(part.size(), whole.size()) << line;
      ++events;
      break;
    }
    ASSERT_NE(at, std::string_view::npos) << line;
    const long seq = std::strtol(line.data() + at + message_key.size(), nullptr, 10);
    ASSERT_EQ(seq, static_cast<long>(events)) << "lost, duplicated or reordered: " << line;
    if (events++ % 500 == 0) {
      const Json e = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      ASSERT_TRUE(e.is_object()) << line;
      EXPECT_EQ(e["message"].get<std::string>().rfind("seq=" + std::to_string(seq) + " ", 0), 0u);
      EXPECT_EQ(e["host"], "loadgen");
    }
  }
  EXPECT_EQ(events, expected);
}

TEST_F(ServeTest, SlowOutputStallsTcpSendersWithBoundedMemoryAndLosesNothing) {
  StallingServer server;
  ASSERT_NE(server.port(), 0);
  ASSERT_TRUE(StartDaemon(BackpressureConfig(BaseConfig(), server.port())));
  // The daemon may hold this much at most while its output is stalled: far less than the
  // events the run produces (checked at the end), so unbounded buffering would show.
  constexpr std::uint64_t kRssBound = 32ull << 20;
  const std::string& payload = LoadPayload();
  TcpClient client(TcpPort());
  ASSERT_TRUE(client.connected());
  ASSERT_EQ(::fcntl(client.fd(), F_SETFL, ::fcntl(client.fd(), F_GETFL) | O_NONBLOCK), 0);
  Pump pump(client.fd(), payload);
  ASSERT_TRUE(pump.Run(milliseconds(1000), milliseconds(30000)))
      << "sent all " << pump.sent() << " bytes without the daemon pushing back";
  ASSERT_TRUE(server.accepted());
  EXPECT_FALSE(pump.done());
  const std::string stalled = daemon_.Metrics();
  EXPECT_GE(daemon_test::MetricSum(stalled, "logfold_output_stalls_total"), 1);
  EXPECT_LE(daemon_test::MetricSum(stalled, "logfold_queue_depth"), 1024);
  EXPECT_LT(daemon_test::MetricSum(stalled, "logfold_received_total"), kLoadLines);
  const std::uint64_t rss = daemon_.RssBytes();
  EXPECT_GT(rss, 0u);
  if (!kSanitized) {
    EXPECT_LT(rss, kRssBound) << "RSS while stalled: " << (rss >> 20) << " MiB";
  }

  server.StartReading();
  EXPECT_FALSE(pump.Run(milliseconds(20000), milliseconds(60000 * kSlowdown)));
  ASSERT_TRUE(pump.done());
  client.Close();
  ASSERT_TRUE(
      daemon_.WaitMetricAtLeast("logfold_received_total", {}, kLoadLines, milliseconds(30000)));
  EXPECT_EQ(daemon_.Metric("logfold_received_total"), kLoadLines);
  EXPECT_EQ(daemon_.Metric("logfold_dropped_total"), 0);
  TerminateAndExpectCleanExit();
  ASSERT_TRUE(WaitUntil([&] { return server.eof(); }, milliseconds(30000)))
      << "the collector connection was not closed after the daemon exited";

  const std::string received = server.data();
  EXPECT_GT(received.size(), 2 * kRssBound) << "the run must produce far more than the bound";
  ExpectAnnotateEventsInOrder(received, kLoadLines);
}

// An output with when_full "drop" that stays full loses its own events (counted) after
// block_timeout, and the other output keeps receiving every event: a dead collector does not
// stall the file.
TEST_F(ServeTest, DroppingOutputThatStaysFullDoesNotStallTheOtherOutput) {
  StallingServer server;
  ASSERT_NE(server.port(), 0);
  Json config = BackpressureConfig(BaseConfig(), server.port());
  config["outputs"][0]["when_full"] = "drop";
  config["outputs"][0]["block_timeout"] = "100ms";
  config["outputs"].push_back({{"name", "events"}, {"type", "file"}, {"path", EventsPath()}});
  ASSERT_TRUE(StartDaemon(config));
  constexpr int kLines = 20000;
  std::string payload;
  for (int i = 0; i < kLines; ++i) payload += LoadLine(i) + "\n";
  TcpClient client(TcpPort());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(payload));
  client.ShutdownWrite();
  // Annotate mode: one event per line in the file, although the collector never reads.
  ASSERT_TRUE(WaitUntil([&] { return PeekEvents(EventsPath()).size() >= kLines; },
                        milliseconds(60000 * kSlowdown)))
      << "the file output stalled behind the full collector";
  EXPECT_GT(daemon_.Metric("logfold_output_dropped_bytes_total"), 0);
  TerminateAndExpectCleanExit();
  EXPECT_EQ(Events().size(), static_cast<std::size_t>(kLines));
}

// SIGTERM while the output is stalled: the daemon waits for its output rather than exiting
// with events unwritten, and once the collector reads, everything it took in comes out.
// Lines still in the kernel's socket buffers when it stops reading are never taken in (plain
// TCP syslog has no way to hand them back), so the check is against the daemon's own count.
TEST_F(ServeTest, SigtermWhileOutputIsStalledDeliversEverythingTakenIn) {
  StallingServer server;
  ASSERT_NE(server.port(), 0);
  ASSERT_TRUE(StartDaemon(BackpressureConfig(BaseConfig(), server.port())));
  const std::string& payload = LoadPayload();
  TcpClient client(TcpPort());
  ASSERT_TRUE(client.connected());
  ASSERT_EQ(::fcntl(client.fd(), F_SETFL, ::fcntl(client.fd(), F_GETFL) | O_NONBLOCK), 0);
  Pump pump(client.fd(), payload);
  ASSERT_TRUE(pump.Run(milliseconds(1000), milliseconds(30000)));
  ASSERT_TRUE(server.accepted());

  ASSERT_TRUE(daemon_.Signal(SIGTERM));
  ASSERT_TRUE(daemon_.WaitForStderr("draining and shutting down"));
  EXPECT_EQ(::kill(daemon_.pid(), 0), 0) << "exited with its output still blocked";
  server.StartReading();
  const std::optional<int> code = daemon_.WaitExit(milliseconds(30000));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
  ASSERT_TRUE(WaitUntil([&] { return server.eof(); }, milliseconds(30000)));

  // The final stats line is the daemon's own account of the run.
  const std::string log = daemon_.Stderr();
  const std::size_t at = log.rfind("stats: received ");
  ASSERT_NE(at, std::string::npos) << log;
  unsigned long long received = 0, processed = 0, merged = 0, open = 0, events = 0, dropped = 0,
                     queued = 0;
  ASSERT_EQ(std::sscanf(log.c_str() + at,
                        "stats: received %llu, processed %llu, merged %llu, open groups %llu, "
                        "events %llu, dropped %llu, queued %llu",
                        &received, &processed, &merged, &open, &events, &dropped, &queued),
            7)
      << log.substr(at);
  EXPECT_GT(received, 0u);
  EXPECT_EQ(received, processed + dropped);
  EXPECT_EQ(dropped, 0u) << "lines taken in but not processed";
  EXPECT_EQ(events, processed);
  EXPECT_EQ(open, 0u);
  EXPECT_EQ(queued, 0u);
  const std::string lines_out = server.data();
  ExpectAnnotateEventsInOrder(lines_out, events, /*cut_last=*/true);
}

// ------------------------------------------------------------------ 5. hostile input

// Bytes that are not UTF-8, to come out exactly in message_base64.
constexpr std::string_view kGarbage = "\xff\xfe\xc3\x28 garbage \xed\xa0\x80 end";

using test::FromBase64;

TEST_F(ServeTest, HostileInputIsCountedAndNeverStopsAWellBehavedClient) {
  Json config = BaseConfig();
  config["inputs"][0]["max_message_size"] = "1KiB";
  config["inputs"][1]["max_message_size"] = "1KiB";
  ASSERT_TRUE(StartDaemon(config));
  const std::uint16_t tcp_port = TcpPort();
  TcpClient good(tcp_port);
  ASSERT_TRUE(good.connected());
  constexpr int kGood = 300;
  int good_sent = 0;
  auto send_good = [&](int n) {
    std::string s;
    for (int i = 0; i < n; ++i, ++good_sent) {
      s += Rfc5424(13, "good-host", "app",
                   "item " + std::to_string(good_sent) + " stored in " +
                       std::to_string(good_sent % 13) + " ms") +
           "\n";
    }
    ASSERT_TRUE(good.Send(s));
  };

  std::uint64_t hostile_tcp_lines = 0;
  {
    TcpClient evil(tcp_port);
    ASSERT_TRUE(evil.connected());
    send_good(50);
    // A NUL ends a frame (the default nul_terminator), so this is two lines.
    std::string garbage = "\x01\x02 binary";
    garbage += std::string(1, '\0');
    garbage += kGarbage;
    const std::vector<std::string> lines = {
        "<999>bad pri",
        "<13>1 2024-13-45T99:00:00Z host app - - - bad timestamp",
        "<13 unterminated pri",
        std::string(3000, 'x'),  // oversized: cut to 1 KiB
        garbage,
    };
    std::string stream;
    for (const std::string& l : lines) stream += l + "\n";
    ASSERT_TRUE(evil.Send(stream));
    hostile_tcp_lines += lines.size() + 1;
    send_good(50);
  }
  {
    // An absurd octet count first: a framing error, and the connection reads lines from then
    // on, so "5 hello world and more" is one line, not a 5-byte frame and the rest.
    TcpClient absurd(tcp_port);
    ASSERT_TRUE(absurd.connected());
    ASSERT_TRUE(absurd.Send("123456789 this octet count is absurd\n5 hello world and more\n"));
    hostile_tcp_lines += 2;
    send_good(50);
  }
  {
    // Disconnects mid-frame: an octet-counted frame with most of its body missing.
    TcpClient quitter(tcp_port);
    ASSERT_TRUE(quitter.connected());
    ASSERT_TRUE(quitter.Send("500 <13>1 - quitter app - - - half a fra"));
    hostile_tcp_lines += 1;
  }
  send_good(50);
  {
    UdpClient udp(UdpPort());
    ASSERT_TRUE(udp.Send("<999>bad pri over udp"));
    ASSERT_TRUE(udp.Send(std::string(3000, 'y')));
    std::string binary(64, '\0');
    for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 37 + 128);
    ASSERT_TRUE(udp.Send(binary));
  }
  send_good(kGood - good_sent);
  good.Close();

  // The daemon keeps serving: the good client's lines all arrive, the endpoint answers.
  const double udp_lines = 3;  // three datagrams, none with a LF inside
  const double total = kGood + static_cast<double>(hostile_tcp_lines) + udp_lines;
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_lines_processed_total", {}, total));
  const std::string m = daemon_.Metrics();
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_received_total", {"input=\"tcp-in\""}),
            kGood + static_cast<double>(hostile_tcp_lines));
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_received_total", {"input=\"udp-in\""}), udp_lines);
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_truncated_total", {"input=\"tcp-in\""}), 1);
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_truncated_total", {"input=\"udp-in\""}), 1);
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_framing_errors_total", {"input=\"tcp-in\""}), 1);
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_partial_at_close_total", {"input=\"tcp-in\""}), 1);
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_parse_total", {"outcome=\"bad_pri\""}), 3);
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_parse_total", {"outcome=\"bad_timestamp\""}), 1);
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_dropped_total"), 0);
  EXPECT_EQ(daemon_test::MetricSum(m, "logfold_lines_processed_total"), total);

  TerminateAndExpectCleanExit();
  const std::vector<Json> events = Events();  // every line must parse as a JSON object
  EXPECT_EQ(static_cast<double>(LinesAccounted(events)), total);
  EXPECT_EQ(LinesAccounted(events, [](const Json& e) { return HostIs(e, "good-host"); }),
            static_cast<std::uint64_t>(kGood));
  bool saw_truncated = false, saw_garbage = false, saw_partial = false;
  for (const Json& e : events) {
    if (e["kind"] != "first") continue;
    const std::string msg = e.value("message", "");
    if (!msg.empty() && msg.find_first_not_of('x') == std::string::npos) {
      saw_truncated = true;
      EXPECT_EQ(msg.size(), 1024u);
      EXPECT_EQ(e["parse_error"], "no_header");
    }
    if (msg.find("garbage") != std::string::npos) {
      saw_garbage = true;
      EXPECT_NE(msg.find("\xEF\xBF\xBD"), std::string::npos) << "invalid UTF-8 -> U+FFFD";
      // ... and the exact bytes travel too (issue #21).
      EXPECT_EQ(FromBase64(e.value("message_base64", "")), kGarbage) << e.dump();
    }
    if (msg.find("half a fra") != std::string::npos) saw_partial = true;
  }
  EXPECT_TRUE(saw_truncated);
  EXPECT_TRUE(saw_garbage);
  EXPECT_TRUE(saw_partial);
}

// ------------------------------------------------------------------ 6. configuration errors

TEST_F(ServeTest, CheckConfigReportsEachErrorWithItsPathAndServeRefusesABadFile) {
  Json bad = BaseConfig();
  bad["inputs"][1]["port"] = 70000;
  bad["engine"]["windw"] = "10s";
  bad["engine"]["max_distance"] = "4";
  const std::string bad_path = WriteConfig(bad, "bad.json");
  const daemon_test::CommandResult check =
      daemon_test::RunCommand({LOGFOLD_BINARY, "check-config", bad_path}, dir_);
  EXPECT_EQ(check.exit_code, 1);
  const std::vector<std::string> reasons = {
      "inputs[1].port: must be between 0 and 65535, got 70000\n",
      "engine.windw: unknown key; did you mean \"window\"?\n",
      "engine.max_distance: expected an integer, got string\n"};
  for (const std::string& r : reasons) EXPECT_NE(check.err.find(r), std::string::npos) << r;
  EXPECT_TRUE(check.err.starts_with(bad_path + ": invalid config\n")) << check.err;
  EXPECT_EQ(check.out, "");

  // Each error alone, to be sure each is detected by itself.
  const std::vector<std::pair<std::function<void(Json&)>, std::string>> singles = {
      {[](Json& c) { c["inputs"][0]["port"] = 65536; },
       "inputs[0].port: must be between 0 and 65535, got 65536\n"},
      {[](Json& c) { c["engine"]["windoww"] = "1s"; },
       "engine.windoww: unknown key; did you mean \"window\"?\n"},
      {[](Json& c) { c["workers"]["threads"] = true; },
       "workers.threads: expected an integer, got boolean\n"},
  };
  for (const auto& [mutate, text] : singles) {
    Json c = BaseConfig();
    mutate(c);
    const std::string path = WriteConfig(c, "single.json");
    const daemon_test::CommandResult r =
        daemon_test::RunCommand({LOGFOLD_BINARY, "check-config", path}, dir_);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.err, path + ": invalid config\n" + text);
  }

  // serve refuses the bad file: exit 1, the errors on stderr.
  const daemon_test::CommandResult serve = daemon_test::RunCommand(
      {LOGFOLD_BINARY, "serve", "--config", bad_path}, dir_, milliseconds(10000));
  EXPECT_EQ(serve.exit_code, 1);
  EXPECT_NE(serve.err.find("invalid config " + bad_path), std::string::npos) << serve.err;
  for (const std::string& r : reasons) EXPECT_NE(serve.err.find(r), std::string::npos) << r;
  EXPECT_EQ(daemon_test::ReadFile(EventsPath()), "");
}

TEST_F(ServeTest, PrintedDefaultConfigPassesCheckAndServes) {
  const daemon_test::CommandResult printed =
      daemon_test::RunCommand({LOGFOLD_BINARY, "check-config", "--print"}, dir_);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  const std::string printed_path = dir_ / "printed.json";
  daemon_test::WriteFile(printed_path, printed.out);
  const daemon_test::CommandResult check =
      daemon_test::RunCommand({LOGFOLD_BINARY, "check-config", printed_path}, dir_);
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.out, printed_path + ": ok\n");
  // Printing the printed file gives the same text back (a fixed point).
  const daemon_test::CommandResult reprinted =
      daemon_test::RunCommand({LOGFOLD_BINARY, "check-config", printed_path, "--print"}, dir_);
  EXPECT_EQ(reprinted.out, printed.out);

  // Serve it. Only the fixed ports are changed to 0, so that the test cannot collide with a
  // logfold already running on this host; everything else is the printed default.
  Json config = Json::parse(printed.out);
  ASSERT_TRUE(config.contains("inputs") && config["inputs"].is_array());
  for (Json& in : config["inputs"]) in["port"] = 0;
  config["metrics"]["port"] = 0;
  ASSERT_TRUE(StartDaemon(config));
  UdpClient udp(daemon_.InputPort("udp-local", "udp"));
  ASSERT_TRUE(udp.Send(Rfc5424(13, "h", "a", "hello from the default config")));
  ASSERT_TRUE(WaitUntil(
      [&] { return daemon_.Stdout().find("hello from the default config") != std::string::npos; },
      milliseconds(10000)));
  TerminateAndExpectCleanExit();
  std::vector<Json> events;
  std::string error;
  ASSERT_TRUE(daemon_test::ParseNdjson(daemon_.Stdout(), events, error)) << error;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["kind"], "first");
}

// ------------------------------------------------------------------ 7. SIGHUP reload

TEST_F(ServeTest, SighupAppliesValidConfigKeepsOpenGroupsAndReopensTheOutputFile) {
  Json config = BaseConfig();
  ASSERT_TRUE(StartDaemon(config));
  TcpClient client(TcpPort());
  ASSERT_TRUE(client.connected());
  int sent = 0;
  auto send = [&](const std::string& app, int n) {
    std::string s;
    for (int i = 0; i < n; ++i, ++sent) {
      s += Rfc5424(
               13, "reload-host", app,
               "batch " + std::to_string(sent) + " flushed " + std::to_string(sent * 7) + " rows") +
           "\n";
    }
    ASSERT_TRUE(client.Send(s));
  };
  auto processed = [&](int n) {
    return daemon_.WaitMetricAtLeast("logfold_lines_processed_total", {}, n);
  };
  auto summary_of = [](const std::vector<Json>& events, const std::string& app) -> Json {
    for (const Json& e : events) {
      if (e["kind"] == "summary" && e["app"] == app) return e;
    }
    return Json();
  };

  // Group "before" opens under the 60 s window.
  send("before", 5);
  ASSERT_TRUE(processed(5));

  // An invalid file is refused and changes nothing.
  Json invalid = config;
  invalid["engine"]["window"] = "1 fortnight";
  WriteConfig(invalid);
  ASSERT_TRUE(daemon_.Signal(SIGHUP));
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_reload_failures_total", {}, 1));
  EXPECT_EQ(daemon_.Metric("logfold_reload_failures_total"), 1);
  EXPECT_EQ(daemon_.Metric("logfold_reloads_total"), 0);
  EXPECT_NE(daemon_.Stderr().find("reload refused"), std::string::npos);
  EXPECT_EQ(::kill(daemon_.pid(), 0), 0);

  // A valid file with a 1 s window is applied; the open group survives and now closes idle.
  config["engine"]["window"] = "1s";
  WriteConfig(config);
  ASSERT_TRUE(daemon_.Signal(SIGHUP));
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_reloads_total", {}, 1));
  ASSERT_TRUE(WaitUntil([&] { return !summary_of(PeekEvents(EventsPath()), "before").is_null(); },
                        milliseconds(10000)))
      << "the group opened before the reload never closed";
  Json s = summary_of(PeekEvents(EventsPath()), "before");
  EXPECT_EQ(s["reason"], "idle");
  EXPECT_EQ(s["count"], 4);
  EXPECT_EQ(s["count_total"], 5);
  EXPECT_EQ(daemon_.Metric("logfold_reload_failures_total"), 1);

  // logrotate: move the file away; lines before the HUP still go to the moved file, lines
  // after it to a new file at the configured path.
  const std::string rotated = dir_ / "events.ndjson.1";
  ASSERT_EQ(std::rename(EventsPath().c_str(), rotated.c_str()), 0);
  send("rotating", 3);
  ASSERT_TRUE(processed(8));
  // Written (not just queued) before the HUP: a sink writes what it holds only after a reopen.
  ASSERT_TRUE(WaitUntil(
      [&] {
        const std::vector<Json> moved = PeekEvents(rotated);
        return std::any_of(moved.begin(), moved.end(), [](const Json& e) {
          return e["kind"] == "first" && e["app"] == "rotating";
        });
      },
      milliseconds(10000)));
  ASSERT_TRUE(daemon_.Signal(SIGHUP));
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_reloads_total", {}, 2));
  send("after", 4);
  ASSERT_TRUE(processed(12));
  // The "rotating" group may close before or after the HUP, so its summary is in either file.
  ASSERT_TRUE(WaitUntil(
      [&] {
        const std::vector<Json> now = PeekEvents(EventsPath());
        const bool rotating_closed = !summary_of(now, "rotating").is_null() ||
                                     !summary_of(PeekEvents(rotated), "rotating").is_null();
        return rotating_closed && !summary_of(now, "after").is_null();
      },
      milliseconds(10000)));
  EXPECT_EQ(::kill(daemon_.pid(), 0), 0) << "summaries came from the idle window, not exit";
  s = summary_of(PeekEvents(EventsPath()), "after");
  EXPECT_EQ(s["reason"], "idle");
  EXPECT_EQ(s["count"], 3);

  client.Close();
  TerminateAndExpectCleanExit();
  const std::vector<Json> old_events = ReadEvents(rotated);
  const std::vector<Json> new_events = ReadEvents(EventsPath());
  auto firsts = [](const std::vector<Json>& events, const std::string& app) {
    return std::count_if(events.begin(), events.end(),
                         [&](const Json& e) { return e["kind"] == "first" && e["app"] == app; });
  };
  EXPECT_EQ(firsts(old_events, "before"), 1);
  EXPECT_EQ(firsts(old_events, "rotating"), 1) << "written before the HUP: the moved file";
  EXPECT_EQ(firsts(new_events, "after"), 1) << "written after the HUP: the new file";
  EXPECT_EQ(firsts(new_events, "before") + firsts(new_events, "rotating"), 0);
  EXPECT_EQ(LinesAccounted(old_events) + LinesAccounted(new_events),
            static_cast<std::uint64_t>(sent));
}

// Regression tests (found by tests/soak): a reload that changed an output stopped the old
// sinks on the event loop, so with the collector down it held inputs, signals and /metrics
// for up to 30 s and then discarded the events the old sink held; a worker blocked on the
// old, full sink stalled it indefinitely. Now unchanged outputs keep their sinks and
// replaced ones drain on their own thread, to the old destination.
class ReloadOutputsTest : public ServeTest {
 protected:
  static constexpr int kLines = 1000;  // ~400 KB of events: far more than the 64 KiB buffer

  // Annotate mode (one event per line), a file output and a 64 KiB tcp output to the
  // collector, which is down; sends kLines lines "seq=I", so that the collector sink fills
  // and a worker blocks on it. Returns the config it started with.
  Json StartWithCollectorSinkFull() {
    Json config = BaseConfig();
    config["engine"]["mode"] = "annotate";
    config["outputs"].push_back({{"name", "collector"},
                                 {"type", "tcp"},
                                 {"address", "127.0.0.1"},
                                 {"port", collector_.port()},
                                 {"buffer", "64KiB"},
                                 {"reconnect_min", "10ms"},
                                 {"reconnect_max", "100ms"}});
    EXPECT_NE(collector_.port(), 0);
    if (!StartDaemon(config)) return config;
    client_ = std::make_unique<TcpClient>(TcpPort());
    std::string payload;
    for (int i = 0; i < kLines; ++i) {
      payload += Rfc5424(13, "late-host", "late-app",
                         "seq=" + std::to_string(i) + " pad " + std::string(200, 'p')) +
                 "\n";
    }
    EXPECT_TRUE(client_->Send(payload));
    EXPECT_TRUE(daemon_.WaitMetricAtLeast("logfold_sink_buffered_bytes", {"sink=\"collector\""},
                                          60 * 1024));
    EXPECT_TRUE(daemon_.WaitMetricAtLeast("logfold_output_stalls_total", {}, 1));
    return config;
  }

  // SIGHUP with `config`; true if the daemon applied it within 5 s.
  bool ReloadPromptly(const Json& config, int reloads_so_far) {
    WriteConfig(config);
    const auto hup = daemon_test::Clock::now();
    return daemon_.Signal(SIGHUP) &&
           daemon_.WaitMetricAtLeast("logfold_reloads_total", {}, reloads_so_far + 1,
                                     milliseconds(5000)) &&
           daemon_test::Clock::now() - hup < milliseconds(5000);
  }

  LateCollector collector_;
  std::unique_ptr<TcpClient> client_;
};

TEST_F(ReloadOutputsTest, ChangingAnOutputWhileItsCollectorIsDownNeitherStallsNorLosesEvents) {
  Json config = StartWithCollectorSinkFull();
  ASSERT_FALSE(HasFailure());
  TcpClient& client = *client_;
  LateCollector& collector = collector_;

  config["outputs"][1]["reconnect_max"] = "200ms";  // the collector output changes
  ASSERT_TRUE(ReloadPromptly(config, 0))
      << "the reload did not complete while the collector was down";

  config["outputs"][1]["reconnect_max"] = "200ms";  // the collector output changes
  WriteConfig(config);
  const auto hup = daemon_test::Clock::now();
  ASSERT_TRUE(daemon_.Signal(SIGHUP));
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_reloads_total", {}, 1, milliseconds(5000)))
      << "the reload did not complete while the collector was down";
  EXPECT_LT(daemon_test::Clock::now() - hup, milliseconds(5000));
  // The replaced sink's gauge is taken over, not duplicated.
  const std::string metrics = daemon_.Metrics();
  std::size_t series = 0;
  for (std::size_t at = 0; (at = metrics.find("logfold_sink_buffered_bytes{sink=\"collector\"}",
                                              at)) != std::string::npos;
       ++at) {
    ++series;
  }
  EXPECT_EQ(series, 1u);

  // The collector comes back: every event arrives, those the old sink held included.
  ASSERT_TRUE(collector.Listen());
  auto seqs_received = [&] {
    std::vector<bool> seen(kLines, false);
    const std::string data = collector.data();
    for (std::size_t at = 0; (at = data.find("\"message\":\"seq=", at)) != std::string::npos;) {
      at += 15;
      const long seq = std::strtol(data.c_str() + at, nullptr, 10);
      if (seq >= 0 && seq < kLines) seen[static_cast<std::size_t>(seq)] = true;
    }
    return static_cast<int>(std::count(seen.begin(), seen.end(), true));
  };
  EXPECT_TRUE(WaitUntil([&] { return seqs_received() == kLines; }, milliseconds(20000)))
      << seqs_received() << " of " << kLines << " events reached the collector";

  // A reload that changes only the file output leaves the collector's connection alone.
  const double connects = daemon_.Metric("logfold_sink_connects_total", {"sink=\"collector\""});
  config["outputs"][0]["fsync"] = "always";
  ASSERT_TRUE(ReloadPromptly(config, 1));
  ASSERT_TRUE(client.Send(Rfc5424(13, "late-host", "late-app", "seq=1 after") + "\n"));
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_events_total", {}, kLines + 1));
  EXPECT_TRUE(WaitUntil([&] { return collector.data().find("seq=1 after") != std::string::npos; },
                        milliseconds(10000)));
  EXPECT_EQ(daemon_.Metric("logfold_sink_connects_total", {"sink=\"collector\""}), connects);
  EXPECT_EQ(daemon_.Metric("logfold_reload_failures_total"), 0);

  client.Close();
  TerminateAndExpectCleanExit();
  EXPECT_EQ(LinesAccounted(Events()), static_cast<std::uint64_t>(kLines + 1));
}

TEST_F(ReloadOutputsTest, RemovingAFullOutputFreesTheWorkerBlockedOnIt) {
  Json config = StartWithCollectorSinkFull();
  ASSERT_FALSE(HasFailure());
  config["outputs"].erase(1);
  ASSERT_TRUE(ReloadPromptly(config, 0));
  // The worker gives up the batch it could not hand to the removed output (counted) and
  // goes on: every line reaches the file.
  EXPECT_TRUE(daemon_.WaitMetricAtLeast("logfold_output_discarded_bytes_total", {}, 1));
  EXPECT_TRUE(daemon_.WaitMetricAtLeast("logfold_events_total", {}, kLines));
  // The removed sink drains what it holds once its collector is back, and the daemon exits.
  ASSERT_TRUE(collector_.Listen());
  EXPECT_TRUE(WaitUntil([&] { return collector_.data().find("seq=0 ") != std::string::npos; },
                        milliseconds(10000)));
  client_->Close();
  TerminateAndExpectCleanExit();
  EXPECT_EQ(LinesAccounted(Events()), static_cast<std::uint64_t>(kLines));
}

// ------------------------------------------------------------------ 8. metrics endpoint

TEST_F(ServeTest, MetricsEndpointServesPrometheusTextAnd404sOtherPaths) {
  ASSERT_TRUE(StartDaemon(BaseConfig()));
  const std::uint16_t port = daemon_.MetricsPort();
  ASSERT_NE(port, 0);
  TcpClient client(TcpPort());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(Rfc5424(13, "m-host", "m-app", "metrics probe 1") + "\n" +
                          Rfc5424(13, "m-host", "m-app", "metrics probe 2") + "\n" +
                          "<999>not a pri\n"));
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_lines_processed_total", {}, 3));

  const daemon_test::HttpResponse r = HttpGet(port, "/metrics");
  ASSERT_EQ(r.status, 200);
  for (const char* name : {"logfold_received_total", "logfold_parse_total", "logfold_events_total",
                           "logfold_queue_depth", "logfold_groups_open"}) {
    EXPECT_NE(r.body.find(std::string("# TYPE ") + name + " "), std::string::npos) << name;
  }
  EXPECT_NE(r.body.find("# TYPE logfold_received_total counter"), std::string::npos);
  EXPECT_NE(r.body.find("# TYPE logfold_queue_depth gauge"), std::string::npos);
  // Every sample line is "name{labels} value" or "name value" with a numeric value.
  std::size_t samples = 0;
  std::size_t pos = 0;
  while (pos < r.body.size()) {
    const std::size_t nl = r.body.find('\n', pos);
    ASSERT_NE(nl, std::string::npos) << "unterminated last line";
    const std::string line = r.body.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.starts_with("#")) continue;
    ++samples;
    ASSERT_TRUE(line.starts_with("logfold_")) << line;
    const std::size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    char* end = nullptr;
    std::strtod(line.c_str() + space + 1, &end);
    EXPECT_EQ(*end, '\0') << line;
  }
  EXPECT_GT(samples, 10u);
  using daemon_test::MetricSum;
  EXPECT_EQ(MetricSum(r.body, "logfold_received_total", {"input=\"tcp-in\""}), 3);
  EXPECT_EQ(MetricSum(r.body, "logfold_received_total", {"input=\"udp-in\""}), 0);
  EXPECT_EQ(MetricSum(r.body, "logfold_parse_total", {"outcome=\"ok\""}), 2);
  EXPECT_EQ(MetricSum(r.body, "logfold_parse_total", {"outcome=\"bad_pri\""}), 1);
  EXPECT_EQ(MetricSum(r.body, "logfold_events_total", {"kind=\"first\""}), 2);
  EXPECT_EQ(MetricSum(r.body, "logfold_events_total", {"kind=\"summary\""}), 0);
  EXPECT_EQ(MetricSum(r.body, "logfold_groups_open"), 2);
  EXPECT_EQ(MetricSum(r.body, "logfold_queue_depth"), 0);

  const daemon_test::HttpResponse nope = HttpGet(port, "/nope");
  EXPECT_EQ(nope.status, 404);
  EXPECT_EQ(nope.body.find("logfold_received_total"), std::string::npos);
  TerminateAndExpectCleanExit();
}

}  // namespace
}  // namespace logfold
