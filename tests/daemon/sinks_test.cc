// Tests for the output sinks against real destinations: files in a temporary directory,
// pipes, and TCP/UDP servers on loopback run by the test itself.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/outputs/sink.h"
#include "daemon/outputs/stream_sink.h"
#include "daemon/outputs/syslog_event_encoder.h"
#include "daemon/runtime/metrics.h"

namespace logfold {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

Clock::time_point In(Clock::duration d) { return Clock::now() + d; }

// Re-checks `pred` every few milliseconds until it holds or `timeout` passes.
template <typename Pred>
bool WaitUntil(Pred pred, Clock::duration timeout = 10s) {
  const auto deadline = Clock::now() + timeout;
  while (!pred()) {
    if (Clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// One NDJSON record carrying a sequence number, padded to about `size` bytes.
std::string Record(int seq, std::size_t size = 100) {
  std::string r = "{\"seq\":" + std::to_string(seq) + ",\"pad\":\"";
  if (r.size() + 3 < size) r.append(size - r.size() - 3, 'x');
  r += "\"}\n";
  return r;
}

// Sequence numbers of the complete lines in `data`; a trailing partial line (a connection
// that broke mid-record) is ignored.
std::vector<int> Seqs(std::string_view data) {
  std::vector<int> seqs;
  std::size_t nl;
  while ((nl = data.find('\n')) != std::string_view::npos) {
    std::string_view line = data.substr(0, nl);
    data.remove_prefix(nl + 1);
    constexpr std::string_view kPrefix = "{\"seq\":";
    EXPECT_TRUE(line.starts_with(kPrefix)) << line;
    int seq = -1;
    std::from_chars(line.data() + kPrefix.size(), line.data() + line.size(), seq);
    seqs.push_back(seq);
  }
  return seqs;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/logfold_sinks_test_XXXXXX";
    const char* dir = ::mkdtemp(pattern);
    EXPECT_NE(dir, nullptr);
    path_ = dir != nullptr ? dir : "/tmp";
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// A TCP collector on loopback: accepts connections and, while reading is on, appends what
// each one sends to its own buffer.
class TestTcpServer {
 public:
  struct Options {
    int family = AF_INET;
    std::uint16_t port = 0;  // 0: ephemeral
    int rcvbuf = 0;          // >0: SO_RCVBUF for accepted connections
    bool reading = true;
  };

  explicit TestTcpServer(Options options) : options_(options), reading_(options.reading) {
    listen_fd_ = ::socket(options.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) return;
    const int on = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (options.rcvbuf > 0) {
      ::setsockopt(listen_fd_, SOL_SOCKET, SO_RCVBUF, &options.rcvbuf, sizeof options.rcvbuf);
    }
    sockaddr_storage addr{};
    socklen_t len;
    if (options.family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      a->sin6_family = AF_INET6;
      a->sin6_addr = in6addr_loopback;
      a->sin6_port = htons(options.port);
      len = sizeof *a;
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      a->sin_family = AF_INET;
      a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a->sin_port = htons(options.port);
      len = sizeof *a;
    }
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, 16) != 0) {
      ::close(listen_fd_);
      listen_fd_ = -1;
      return;
    }
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(options.family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    thread_ = std::thread([this] { Run(); });
  }

  ~TestTcpServer() { Close(); }

  bool ok() const { return listen_fd_ >= 0; }
  std::uint16_t port() const { return port_; }
  void SetReading(bool on) { reading_ = on; }

  // Stops the server. With `reset`, connections are aborted (RST), as by a crash.
  void Close(bool reset = false) {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
    std::lock_guard lock(mu_);
    for (Conn& c : conns_) {
      if (c.fd < 0) continue;
      if (reset) {
        const linger l{1, 0};
        ::setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
      }
      ::close(c.fd);
      c.fd = -1;
    }
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
  }

  // Bytes received, one string per accepted connection, in accept order.
  std::vector<std::string> Received() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const Conn& c : conns_) out.push_back(c.data);
    return out;
  }

  std::size_t connection_count() const {
    std::lock_guard lock(mu_);
    return conns_.size();
  }

  // Bytes waiting unread in the first connection's receive queue.
  int FirstConnectionQueued() const {
    std::lock_guard lock(mu_);
    int queued = 0;
    if (!conns_.empty() && conns_[0].fd >= 0) ::ioctl(conns_[0].fd, FIONREAD, &queued);
    return queued;
  }

 private:
  struct Conn {
    int fd = -1;
    std::string data;
  };

  void Run() {
    std::vector<char> buf(1 << 16);
    while (!stop_) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      {
        std::lock_guard lock(mu_);
        if (reading_) {
          for (const Conn& c : conns_) {
            if (c.fd >= 0) fds.push_back({c.fd, POLLIN, 0});
          }
        }
      }
      if (::poll(fds.data(), fds.size(), 10) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          std::lock_guard lock(mu_);
          conns_.push_back({fd, ""});
        }
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        const ssize_t n = ::recv(fds[i].fd, buf.data(), buf.size(), MSG_DONTWAIT);
        std::lock_guard lock(mu_);
        for (Conn& c : conns_) {
          if (c.fd != fds[i].fd) continue;
          if (n > 0) {
            c.data.append(buf.data(), static_cast<std::size_t>(n));
          } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            ::close(c.fd);
            c.fd = -1;
          }
        }
      }
    }
  }

  Options options_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> reading_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<Conn> conns_;
  std::thread thread_;
};

// A loopback port with nothing listening on it.
std::uint16_t UnusedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

OutputConfig TcpConfig(std::uint16_t port, std::string address = "127.0.0.1") {
  OutputConfig c;
  c.sink.name = "collector";
  c.type = OutputType::kTcp;
  c.tcp.address = std::move(address);
  c.tcp.port = port;
  c.tcp.reconnect_min_us = 10'000;
  c.tcp.reconnect_max_us = 100'000;
  return c;
}

constexpr std::string_view kLabels = R"(sink="collector")";

// ---------------------------------------------------------------------------------------
// Factory and configuration errors

TEST(SinkFactoryTest, FileInMissingDirectoryIsAnError) {
  Metrics metrics;
  OutputConfig c;
  c.sink.name = "out";
  c.type = OutputType::kFile;
  c.file.path = "/nonexistent-logfold-dir/sub/events.ndjson";
  std::string error;
  EXPECT_EQ(MakeSink(c, metrics, error), nullptr);
  EXPECT_NE(error.find("/nonexistent-logfold-dir/sub/events.ndjson"), std::string::npos) << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

TEST(SinkFactoryTest, BuildsEveryType) {
  Metrics metrics;
  TempDir dir;
  std::string error;
  OutputConfig file;
  file.sink.name = "f";
  file.type = OutputType::kFile;
  file.file.path = dir.File("out.ndjson");
  auto f = MakeSink(file, metrics, error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->name(), "f");
  EXPECT_EQ(f->encoding(), SinkEncoding::kNdjson);

  OutputConfig syslog;
  syslog.sink.name = "relay";
  syslog.type = OutputType::kSyslog;
  syslog.syslog.target.address = "127.0.0.1";
  syslog.syslog.target.port = UnusedPort();
  auto s = MakeSink(syslog, metrics, error);
  ASSERT_NE(s, nullptr) << error;
  EXPECT_EQ(s->encoding(), SinkEncoding::kSyslog5424);
  EXPECT_TRUE(s->Stop(In(5s)));  // nothing buffered, nothing to deliver
  EXPECT_TRUE(f->Stop(In(5s)));

  const std::string text = metrics.RenderPrometheus();
  EXPECT_NE(text.find("logfold_sink_buffered_bytes{sink=\"f\"} 0"), std::string::npos) << text;
  EXPECT_NE(text.find("logfold_sink_bytes_total{sink=\"relay\"} 0"), std::string::npos);
}

// ---------------------------------------------------------------------------------------
// File sink

TEST(FileSinkTest, WritesExactlyWhatWasSubmitted) {
  for (const auto& [fsync, policy] :
       {std::pair{"never", FsyncPolicy::kNever}, std::pair{"interval", FsyncPolicy::kInterval},
        std::pair{"always", FsyncPolicy::kAlways}}) {
    Metrics metrics;
    TempDir dir;
    const std::string path = dir.File("events.ndjson");
    {
      std::ofstream existing(path);
      existing << "{\"earlier\":true}\n";
    }
    OutputConfig c;
    c.sink.name = "file";
    c.type = OutputType::kFile;
    c.file.path = path;
    c.file.fsync = policy;
    c.file.fsync_interval_us = 1'000;
    std::string error;
    auto sink = MakeSink(c, metrics, error);
    ASSERT_NE(sink, nullptr) << error;

    std::string expected = "{\"earlier\":true}\n";
    std::string batch;
    for (int i = 0; i < 3000; ++i) {
      batch += Record(i, 50 + i % 200);
      if (i % 37 == 0) {
        ASSERT_TRUE(sink->Submit(batch, In(10s)));
        expected += batch;
        batch.clear();
      }
    }
    // One batch larger than a buffer block.
    std::string big;
    for (int i = 0; i < 2000; ++i) big += Record(100000 + i);
    ASSERT_TRUE(sink->Submit(batch + big, In(10s)));
    expected += batch + big;

    EXPECT_TRUE(sink->Stop(In(10s))) << fsync;
    EXPECT_EQ(ReadFile(path), expected) << fsync;
    EXPECT_EQ(sink->buffered_bytes(), 0u);
    EXPECT_EQ(metrics.Value("logfold_sink_bytes_total", R"(sink="file")"),
              expected.size() - std::string("{\"earlier\":true}\n").size());
    EXPECT_EQ(metrics.Value("logfold_sink_errors_total", R"(sink="file")"), 0u);

    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    struct stat created {};
    const std::string fresh = dir.File("fresh.ndjson");
    c.file.path = fresh;
    auto fresh_sink = MakeSink(c, metrics, error);
    ASSERT_NE(fresh_sink, nullptr);
    fresh_sink->Stop(In(1s));
    ASSERT_EQ(::stat(fresh.c_str(), &created), 0);
    EXPECT_EQ(created.st_mode & 0777 & ~0640u, 0u) << std::oct << created.st_mode;
  }
}

TEST(FileSinkTest, ReopenAfterRenameStartsNewFile) {
  Metrics metrics;
  TempDir dir;
  const std::string path = dir.File("events.ndjson");
  const std::string rotated = dir.File("events.ndjson.1");
  OutputConfig c;
  c.sink.name = "file";
  c.type = OutputType::kFile;
  c.file.path = path;
  std::string error;
  auto sink = MakeSink(c, metrics, error);
  ASSERT_NE(sink, nullptr) << error;

  std::string before;
  for (int i = 0; i < 100; ++i) before += Record(i);
  ASSERT_TRUE(sink->Submit(before, In(10s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));

  // logrotate: move the file away, then HUP.
  ASSERT_EQ(std::rename(path.c_str(), rotated.c_str()), 0);
  sink->Reopen();
  std::string after;
  for (int i = 100; i < 200; ++i) after += Record(i);
  ASSERT_TRUE(sink->Submit(after, In(10s)));
  EXPECT_TRUE(sink->Stop(In(10s)));

  EXPECT_EQ(ReadFile(rotated), before);
  EXPECT_EQ(ReadFile(path), after);
}

TEST(FileSinkTest, RotationUnderLoadLosesNothing) {
  Metrics metrics;
  TempDir dir;
  const std::string path = dir.File("events.ndjson");
  const std::string rotated = dir.File("events.ndjson.1");
  OutputConfig c;
  c.sink.name = "file";
  c.type = OutputType::kFile;
  c.file.path = path;
  c.sink.buffer = 16 << 10;
  std::string error;
  auto sink = MakeSink(c, metrics, error);
  ASSERT_NE(sink, nullptr) << error;

  std::string all;
  for (int i = 0; i < 5000; ++i) {
    const std::string r = Record(i);
    ASSERT_TRUE(sink->Submit(r, In(10s)));
    all += r;
    if (i == 2500) {
      ASSERT_EQ(std::rename(path.c_str(), rotated.c_str()), 0);
      sink->Reopen();
    }
  }
  const std::string last = Record(5000);
  ASSERT_TRUE(sink->Submit(last, In(10s)));
  all += last;
  EXPECT_TRUE(sink->Stop(In(10s)));

  const std::string old_part = ReadFile(rotated);
  const std::string new_part = ReadFile(path);
  EXPECT_EQ(old_part + new_part, all);
  EXPECT_FALSE(new_part.empty());
  EXPECT_TRUE(new_part.ends_with(last));  // data submitted after Reopen is in the new file
}

// ---------------------------------------------------------------------------------------
// Stdout sink (on a pipe standing in for fd 1)

TEST(StdoutSinkTest, WritesEverythingToThePipe) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  std::string got;
  std::thread reader([&] {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  });
  Metrics metrics;
  SinkOptions c;
  c.name = "stdout";
  c.buffer = 32 << 10;
  auto sink = MakeStdoutSink(c, metrics, fds[1]);
  std::string expected;
  for (int i = 0; i < 3000; ++i) {  // several pipe capacities' worth
    const std::string r = Record(i);
    ASSERT_TRUE(sink->Submit(r, In(10s)));
    expected += r;
  }
  EXPECT_TRUE(sink->Stop(In(10s)));
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(metrics.Value("logfold_sink_bytes_total", R"(sink="stdout")"), expected.size());
}

TEST(StdoutSinkTest, ClosedReaderIsCountedNotFatal) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ::close(fds[0]);
  Metrics metrics;
  SinkOptions c;
  c.name = "stdout";
  auto sink = MakeStdoutSink(c, metrics, fds[1]);
  std::uint64_t total = 0;
  for (int i = 0; i < 10; ++i) {
    const std::string r = Record(i);
    ASSERT_TRUE(sink->Submit(r, In(10s)));
    total += r.size();
  }
  EXPECT_TRUE(sink->Stop(In(10s)));
  ::close(fds[1]);
  EXPECT_GE(metrics.Value("logfold_sink_errors_total", R"(sink="stdout")"), 1u);
  EXPECT_EQ(metrics.Value("logfold_sink_discarded_bytes_total", R"(sink="stdout")"), total);
  EXPECT_EQ(metrics.Value("logfold_sink_bytes_total", R"(sink="stdout")"), 0u);
}

// ---------------------------------------------------------------------------------------
// TCP sink

void ExpectInOrderDelivery(int family, const std::string& address) {
  TestTcpServer server({.family = family});
  if (!server.ok()) GTEST_SKIP() << "no loopback for family " << family;
  Metrics metrics;
  std::string error;
  auto sink = MakeSink(TcpConfig(server.port(), address), metrics, error);
  ASSERT_NE(sink, nullptr) << error;
  std::string batch;
  for (int i = 0; i < 5000; ++i) {
    batch += Record(i);
    if (i % 10 == 9) {
      ASSERT_TRUE(sink->Submit(batch, In(10s)));
      batch.clear();
    }
  }
  EXPECT_TRUE(sink->Stop(In(10s)));
  ASSERT_TRUE(WaitUntil([&] {
    const auto r = server.Received();
    return !r.empty() && Seqs(r.back()).size() >= 5000;
  }));
  const auto received = server.Received();
  ASSERT_EQ(received.size(), 1u);
  const std::vector<int> seqs = Seqs(received[0]);
  ASSERT_EQ(seqs.size(), 5000u);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(seqs[i], i);
  EXPECT_EQ(metrics.Value("logfold_sink_connects_total", kLabels), 1u);
  EXPECT_EQ(metrics.Value("logfold_sink_batches_total", kLabels), 500u);
  EXPECT_EQ(metrics.Value("logfold_sink_bytes_total", kLabels), received[0].size());
  EXPECT_EQ(sink->buffered_bytes(), 0u);
}

TEST(TcpSinkTest, DeliversInOrderIpv4) { ExpectInOrderDelivery(AF_INET, "127.0.0.1"); }

TEST(TcpSinkTest, DeliversInOrderIpv6) { ExpectInOrderDelivery(AF_INET6, "::1"); }

TEST(TcpSinkTest, ServerRestartLosesNothing) {
  auto server = std::make_unique<TestTcpServer>(TestTcpServer::Options{});
  ASSERT_TRUE(server->ok());
  const std::uint16_t port = server->port();
  Metrics metrics;
  std::string error;
  auto sink = MakeSink(TcpConfig(port), metrics, error);
  ASSERT_NE(sink, nullptr) << error;

  int next = 0;
  auto submit = [&](int count) {
    for (int i = 0; i < count; ++i) ASSERT_TRUE(sink->Submit(Record(next++), In(10s)));
  };
  submit(500);
  ASSERT_TRUE(WaitUntil([&] {
    const auto r = server->Received();
    return !r.empty() && Seqs(r[0]).size() == 500;
  }));
  std::vector<std::string> received = server->Received();

  // The collector goes away; records keep coming.
  server->Close();
  submit(500);
  ASSERT_TRUE(WaitUntil(
      [&] { return metrics.Value("logfold_sink_connect_failures_total", kLabels) >= 2; }));
  EXPECT_GT(sink->buffered_bytes(), 0u);

  // It comes back on the same port.
  server = std::make_unique<TestTcpServer>(TestTcpServer::Options{.port = port});
  ASSERT_TRUE(server->ok());
  submit(500);
  EXPECT_TRUE(sink->Stop(In(10s)));
  ASSERT_TRUE(WaitUntil([&] {
    std::set<int> seen;
    for (const std::string& conn : server->Received()) {
      for (int s : Seqs(conn)) seen.insert(s);
    }
    for (int s = 500; s < 1500; ++s) {
      if (!seen.contains(s)) return false;
    }
    return true;
  }));
  for (const std::string& conn : server->Received()) received.push_back(conn);

  std::vector<int> count(1500, 0);
  for (const std::string& conn : received) {
    std::vector<int> seqs = Seqs(conn);
    for (std::size_t i = 1; i < seqs.size(); ++i) EXPECT_GT(seqs[i], seqs[i - 1]);
    for (int s : seqs) {
      ASSERT_GE(s, 0);
      ASSERT_LT(s, 1500);
      ++count[s];
    }
  }
  for (int s = 0; s < 1500; ++s) EXPECT_GE(count[s], 1) << "record " << s << " lost";
  EXPECT_GE(metrics.Value("logfold_sink_disconnects_total", kLabels), 1u);
  EXPECT_EQ(metrics.Value("logfold_sink_connects_total", kLabels), 2u);
  EXPECT_GE(metrics.Value("logfold_sink_retries_total", kLabels), 1u);
}

TEST(TcpSinkTest, ResendsWhatAResetPeerNeverAcknowledged) {
  // The first collector accepts but never reads, so most of what the sink writes sits
  // unacknowledged in its socket when the collector crashes (RST).
  auto server =
      std::make_unique<TestTcpServer>(TestTcpServer::Options{.rcvbuf = 4096, .reading = false});
  ASSERT_TRUE(server->ok());
  const std::uint16_t port = server->port();
  Metrics metrics;
  std::string error;
  OutputConfig config = TcpConfig(port);
  config.sink.buffer = 4 << 20;
  auto sink = MakeSink(config, metrics, error);
  ASSERT_NE(sink, nullptr) << error;

  constexpr int kRecords = 3000;
  std::vector<std::string> records;
  for (int i = 0; i < kRecords; ++i) {
    records.push_back(Record(i));
    ASSERT_TRUE(sink->Submit(records.back(), In(10s)));
  }
  // Wait until the sink has written well beyond what the collector's kernel took in.
  int queued = 0;
  ASSERT_TRUE(WaitUntil([&] {
    queued = server->FirstConnectionQueued();
    return queued > 0 && metrics.Value("logfold_sink_bytes_total", kLabels) >
                             static_cast<std::uint64_t>(queued) + 10'000;
  }));
  queued = server->FirstConnectionQueued();
  server->Close(/*reset=*/true);

  server = std::make_unique<TestTcpServer>(TestTcpServer::Options{.port = port});
  ASSERT_TRUE(server->ok());
  EXPECT_TRUE(sink->Stop(In(10s)));
  std::vector<int> seqs;
  ASSERT_TRUE(WaitUntil([&] {
    const auto r = server->Received();
    seqs = r.empty() ? std::vector<int>() : Seqs(r[0]);
    return !seqs.empty() && seqs.back() == kRecords - 1;
  }));
  // Only what the crashed collector's kernel had acknowledged can be missing: a prefix no
  // larger than its receive queue. Everything after it arrives, in order.
  const int first = seqs.front();
  std::size_t lost_bytes = 0;
  for (int i = 0; i < first; ++i) lost_bytes += records[i].size();
  EXPECT_LE(lost_bytes, static_cast<std::size_t>(queued));
  ASSERT_EQ(seqs.size(), static_cast<std::size_t>(kRecords - first));
  for (std::size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], first + static_cast<int>(i));
  EXPECT_GT(metrics.Value("logfold_sink_resent_bytes_total", kLabels), 0u);
  // The events the crashed collector's kernel acknowledged and nobody read are not hidden. The
  // count is an estimate from the receive window the sink last sampled, so it can fall short of
  // the real loss (the ASan and TSan builds sample late: 41 counted of 42 and of 63 lost) but
  // never stays at zero, and never exceeds what was written.
  EXPECT_GT(first, 0);
  const std::uint64_t unconfirmed = metrics.Value("logfold_sink_unconfirmed_events_total", kLabels);
  EXPECT_GT(unconfirmed, 0u);
  EXPECT_LE(unconfirmed, static_cast<std::uint64_t>(kRecords));
}

TEST(TcpSinkTest, BackpressureWhenCollectorStopsReading) {
  TestTcpServer server({.rcvbuf = 4096, .reading = false});
  ASSERT_TRUE(server.ok());
  Metrics metrics;
  std::string error;
  OutputConfig config = TcpConfig(server.port());
  config.sink.buffer = 64 << 10;
  auto sink = MakeSink(config, metrics, error);
  ASSERT_NE(sink, nullptr) << error;

  int accepted = 0;
  bool refused = false;
  for (int i = 0; i < 100'000 && !refused; ++i) {  // bounded: ~100 MB at most
    if (sink->Submit(Record(i, 1000), In(50ms))) {
      ++accepted;
    } else {
      refused = true;
    }
  }
  ASSERT_TRUE(refused) << "Submit never blocked";
  EXPECT_LE(sink->buffered_bytes(), config.sink.buffer);

  // The collector catches up: the refused record goes through and everything arrives.
  server.SetReading(true);
  ASSERT_TRUE(sink->Submit(Record(accepted, 1000), In(10s)));
  ++accepted;
  EXPECT_TRUE(sink->Stop(In(10s)));
  ASSERT_TRUE(WaitUntil([&] {
    const auto r = server.Received();
    return !r.empty() && Seqs(r[0]).size() == static_cast<std::size_t>(accepted);
  }));
  const std::vector<int> seqs = Seqs(server.Received()[0]);
  for (int i = 0; i < accepted; ++i) ASSERT_EQ(seqs[i], i);
}

TEST(TcpSinkTest, StopWithDeadDestinationDiscardsAtDeadline) {
  Metrics metrics;
  std::string error;
  auto sink = MakeSink(TcpConfig(UnusedPort()), metrics, error);
  ASSERT_NE(sink, nullptr) << error;
  std::uint64_t total = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string r = Record(i);
    ASSERT_TRUE(sink->Submit(r, In(1s)));
    total += r.size();
  }
  ASSERT_TRUE(WaitUntil(
      [&] { return metrics.Value("logfold_sink_connect_failures_total", kLabels) >= 1; }));
  const auto start = Clock::now();
  EXPECT_FALSE(sink->Stop(In(300ms)));
  const auto took = Clock::now() - start;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 5s);
  EXPECT_EQ(metrics.Value("logfold_sink_discarded_bytes_total", kLabels), total);
  EXPECT_EQ(sink->buffered_bytes(), 0u);
  EXPECT_GE(metrics.Value("logfold_sink_errors_total", kLabels), 1u);
  EXPECT_FALSE(sink->Submit(Record(9), In(1s)));  // stopped sinks take nothing
  EXPECT_FALSE(sink->Stop(In(1s)));               // idempotent
}

// ---------------------------------------------------------------------------------------
// Syslog sink

std::vector<std::string> SyslogRecords() {
  std::vector<std::string> out;
  LogRecord record;
  record.facility = 3;
  record.severity = 6;
  record.has_timestamp = true;
  record.timestamp_us = 1709210096789012;
  record.hostname = "db-2";
  record.app_name = "postgres";
  record.procid = "77";
  for (int i = 0; i < 50; ++i) {
    record.message = "checkpoint " + std::to_string(i) + " complete\nwrote " +
                     std::string(static_cast<std::size_t>(i * 40), 'b') + " buffers";
    Event e;
    e.kind = i % 5 == 4 ? EventKind::kSummary : EventKind::kFirst;
    e.group_id = static_cast<std::uint64_t>(i);
    e.fingerprint = 0xabcdef;
    e.record = &record;
    e.template_text = "checkpoint <*> complete wrote <*> buffers";
    e.count = 3;
    e.count_total = 4;
    e.first_seen_us = record.timestamp_us;
    e.last_seen_us = record.timestamp_us + 1;
    std::string encoded;
    AppendEventSyslog(e, "logfold", encoded);
    out.push_back(std::move(encoded));
  }
  return out;
}

// Submits the records in '\n'-separated batches of five.
void SubmitSyslog(Sink& sink, const std::vector<std::string>& records) {
  std::string batch;
  for (std::size_t i = 0; i < records.size(); ++i) {
    batch += records[i];
    batch += '\n';
    if (i % 5 == 4 || i + 1 == records.size()) {
      ASSERT_TRUE(sink.Submit(batch, In(10s)));
      batch.clear();
    }
  }
}

// RFC 6587 octet-counted frames; a trailing incomplete frame is left out.
std::vector<std::string> ParseOctetCounted(std::string_view data) {
  std::vector<std::string> frames;
  while (!data.empty()) {
    const std::size_t sp = data.find(' ');
    if (sp == std::string_view::npos) break;
    std::size_t len = 0;
    const auto res = std::from_chars(data.data(), data.data() + sp, len);
    EXPECT_EQ(res.ptr, data.data() + sp) << "bad frame length";
    if (res.ptr != data.data() + sp || data.size() < sp + 1 + len) break;
    frames.emplace_back(data.substr(sp + 1, len));
    data.remove_prefix(sp + 1 + len);
  }
  return frames;
}

std::vector<std::string> ParseLines(std::string_view data) {
  std::vector<std::string> lines;
  std::size_t nl;
  while ((nl = data.find('\n')) != std::string_view::npos) {
    lines.emplace_back(data.substr(0, nl));
    data.remove_prefix(nl + 1);
  }
  return lines;
}

OutputConfig SyslogConfig(std::uint16_t port, std::string_view protocol, std::string_view framing) {
  OutputConfig c;
  c.sink.name = "relay";
  c.type = OutputType::kSyslog;
  c.syslog.target.address = "127.0.0.1";
  c.syslog.target.port = port;
  c.syslog.protocol = protocol == "udp" ? SyslogProtocol::kUdp : SyslogProtocol::kTcp;
  c.syslog.framing = framing == "newline" ? SyslogFraming::kNewline : SyslogFraming::kOctetCounted;
  c.syslog.target.reconnect_min_us = 10'000;
  c.syslog.target.reconnect_max_us = 100'000;
  return c;
}

TEST(SyslogSinkTest, TcpOctetCounted) {
  TestTcpServer server({});
  ASSERT_TRUE(server.ok());
  Metrics metrics;
  std::string error;
  auto sink = MakeSink(SyslogConfig(server.port(), "tcp", "octet-counted"), metrics, error);
  ASSERT_NE(sink, nullptr) << error;
  ASSERT_EQ(sink->encoding(), SinkEncoding::kSyslog5424);
  const std::vector<std::string> records = SyslogRecords();
  SubmitSyslog(*sink, records);
  EXPECT_TRUE(sink->Stop(In(10s)));
  std::vector<std::string> frames;
  ASSERT_TRUE(WaitUntil([&] {
    const auto r = server.Received();
    frames = r.empty() ? frames : ParseOctetCounted(r[0]);
    return frames.size() >= records.size();
  }));
  EXPECT_EQ(frames, records);
  for (const std::string& f : frames) {
    EXPECT_TRUE(f.starts_with("<30>1 2024-02-29T12:34:56.78901")) << f;
    EXPECT_NE(f.find("Z db-2 postgres 77 "), std::string::npos) << f;
    EXPECT_EQ(f.find('\n'), std::string::npos);
  }
}

TEST(SyslogSinkTest, TcpNewlineFraming) {
  TestTcpServer server({});
  ASSERT_TRUE(server.ok());
  Metrics metrics;
  std::string error;
  auto sink = MakeSink(SyslogConfig(server.port(), "tcp", "newline"), metrics, error);
  ASSERT_NE(sink, nullptr) << error;
  const std::vector<std::string> records = SyslogRecords();
  SubmitSyslog(*sink, records);
  EXPECT_TRUE(sink->Stop(In(10s)));
  std::vector<std::string> lines;
  ASSERT_TRUE(WaitUntil([&] {
    const auto r = server.Received();
    lines = r.empty() ? lines : ParseLines(r[0]);
    return lines.size() >= records.size();
  }));
  EXPECT_EQ(lines, records);
}

TEST(SyslogSinkTest, TcpResendAfterResetStartsAtAFrameBoundary) {
  auto server =
      std::make_unique<TestTcpServer>(TestTcpServer::Options{.rcvbuf = 4096, .reading = false});
  ASSERT_TRUE(server->ok());
  const std::uint16_t port = server->port();
  Metrics metrics;
  std::string error;
  auto sink = MakeSink(SyslogConfig(port, "tcp", "octet-counted"), metrics, error);
  ASSERT_NE(sink, nullptr) << error;
  std::vector<std::string> records;
  for (int round = 0; round < 20; ++round) {
    for (std::string& r : SyslogRecords()) records.push_back(std::move(r));
  }
  SubmitSyslog(*sink, records);
  ASSERT_TRUE(WaitUntil([&] {
    const int queued = server->FirstConnectionQueued();
    return queued > 0 && metrics.Value("logfold_sink_bytes_total", R"(sink="relay")") >
                             static_cast<std::uint64_t>(queued) + 10'000;
  }));
  server->Close(/*reset=*/true);
  server = std::make_unique<TestTcpServer>(TestTcpServer::Options{.port = port});
  ASSERT_TRUE(server->ok());
  EXPECT_TRUE(sink->Stop(In(10s)));

  std::string stream;
  ASSERT_TRUE(WaitUntil([&] {
    const auto r = server->Received();
    stream = r.empty() ? "" : r[0];
    return ParseOctetCounted(stream).size() >= 1 && stream.ends_with(records.back());
  }));
  // The new connection starts with a whole frame and carries only whole frames, which are
  // exactly the tail of what was submitted.
  const std::vector<std::string> frames = ParseOctetCounted(stream);
  std::size_t framed_bytes = 0;
  for (const std::string& f : frames)
    framed_bytes += std::to_string(f.size()).size() + 1 + f.size();
  EXPECT_EQ(framed_bytes, stream.size());
  ASSERT_LE(frames.size(), records.size());
  EXPECT_TRUE(std::equal(frames.begin(), frames.end(), records.end() - frames.size()));
  EXPECT_GT(metrics.Value("logfold_sink_resent_bytes_total", R"(sink="relay")"), 0u);
}

class TestUdpServer {
 public:
  TestUdpServer() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    const int rcvbuf = 4 << 20;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~TestUdpServer() { ::close(fd_); }
  std::uint16_t port() const { return port_; }

  // Receives up to `n` datagrams, giving up `timeout` after the last one.
  std::vector<std::string> Receive(std::size_t n, Clock::duration timeout = 5s) {
    std::vector<std::string> out;
    std::vector<char> buf(1 << 17);
    auto deadline = Clock::now() + timeout;
    while (out.size() < n && Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const ssize_t got = ::recv(fd_, buf.data(), buf.size(), 0);
      if (got < 0) continue;
      out.emplace_back(buf.data(), static_cast<std::size_t>(got));
      deadline = Clock::now() + timeout;
    }
    return out;
  }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

TEST(SyslogSinkTest, UdpOneDatagramPerRecord) {
  TestUdpServer server;
  Metrics metrics;
  std::string error;
  auto sink = MakeSink(SyslogConfig(server.port(), "udp", "octet-counted"), metrics, error);
  ASSERT_NE(sink, nullptr) << error;
  const std::vector<std::string> records = SyslogRecords();
  SubmitSyslog(*sink, records);
  EXPECT_TRUE(sink->Stop(In(10s)));
  EXPECT_EQ(server.Receive(records.size()), records);
  EXPECT_EQ(metrics.Value("logfold_sink_dropped_records_total", R"(sink="relay")"), 0u);
}

TEST(SyslogSinkTest, UdpSendFailureIsCountedAsDrop) {
  TestUdpServer server;
  Metrics metrics;
  std::string error;
  auto sink = MakeSink(SyslogConfig(server.port(), "udp", "newline"), metrics, error);
  ASSERT_NE(sink, nullptr) << error;
  const std::string small_a = "<13>1 - - - - first [x@1] a";
  const std::string huge(70'000, 'z');  // larger than any UDP datagram
  const std::string small_b = "<13>1 - - - - first [x@1] b";
  ASSERT_TRUE(sink->Submit(small_a + "\n" + huge + "\n" + small_b + "\n", In(10s)));
  EXPECT_TRUE(sink->Stop(In(10s)));
  EXPECT_EQ(server.Receive(2), (std::vector<std::string>{small_a, small_b}));
  EXPECT_EQ(metrics.Value("logfold_sink_dropped_records_total", R"(sink="relay")"), 1u);
  EXPECT_EQ(metrics.Value("logfold_sink_discarded_bytes_total", R"(sink="relay")"),
            huge.size() + 1);
  EXPECT_GE(metrics.Value("logfold_sink_errors_total", R"(sink="relay")"), 1u);
}

}  // namespace
}  // namespace logfold
