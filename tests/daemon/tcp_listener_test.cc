// Tests for TcpListener over real loopback sockets: both framings, concurrency, partial frames,
// backpressure, fairness (a flooding connection holds only its queue share), connection
// limits, idle timeout, garbage, two-phase stop, and `logger`.
#include "daemon/inputs/tcp_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/inputs/ingest_target.h"
#include "daemon/runtime/metrics.h"
#include "tests/support/listener_test_util.h"
#include "tests/support/recording_target.h"

namespace logfold {
namespace {

using test::WaitUntil;

using namespace std::chrono_literals;

// Records delivered lines; SetFull(true) makes it refuse deliveries like a full queue.
using test::RecordingTarget;

// A blocking loopback TCP client.
class Client {
 public:
  explicit Client(std::uint16_t port, bool v6 = false, int sndbuf = 0) {
    fd_ = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sndbuf > 0) setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    int rc;
    if (v6) {
      sockaddr_in6 addr{};
      addr.sin6_family = AF_INET6;
      addr.sin6_port = htons(port);
      addr.sin6_addr = in6addr_loopback;
      rc = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    } else {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(port);
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      rc = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    }
    connected_ = rc == 0;
  }
  ~Client() { Close(); }
  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  void ShutdownWrite() { shutdown(fd_, SHUT_WR); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  // True once the server has closed its end (EOF or reset) within `timeout`.
  bool WaitPeerClosed(std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

bool CanConnect(std::uint16_t port) {
  Client c(port);
  return c.connected();
}

constexpr const char* kLabels = R"(input="t0",proto="tcp")";

class TcpListenerTest : public ::testing::Test {
 protected:
  std::unique_ptr<TcpListener> Make(TcpListener::Options options = {}) {
    auto listener = std::make_unique<TcpListener>(3, "t0", options, io_.io, target_, metrics_);
    listener->Start();
    return listener;
  }
  std::uint64_t Counter(const char* name) { return metrics_.Value(name, kLabels); }
  bool WaitCounter(const char* name, std::uint64_t want) {
    return WaitUntil([&] { return Counter(name) == want; });
  }

  // With the target full and `c`'s lines held: StopReading, which must neither close the
  // connection nor report drained while they wait (no new clients are accepted meanwhile;
  // the stop is posted to the connection right after the acceptor closes), then free the
  // target. True once the listener reported drained.
  bool StopWhileHeldThenDrain(TcpListener& listener, Client& c) {
    auto drained = std::make_shared<std::atomic<bool>>(false);  // may outlive a failed wait
    listener.StopReading([drained] { *drained = true; });
    EXPECT_TRUE(WaitUntil([&] { return !CanConnect(listener.local_port()); }));
    EXPECT_FALSE(drained->load());
    EXPECT_FALSE(c.WaitPeerClosed(100ms));
    target_.SetFull(false);
    return WaitUntil([&] { return drained->load(); });
  }

  Metrics metrics_;
  RecordingTarget target_;
  test::IoThreads io_{3};  // declared last: its threads stop before the target goes away
};

TEST_F(TcpListenerTest, NewlineFramedClient) {
  auto listener = Make();
  {
    Client c(listener->local_port());
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.Send("<13>one\n<13>two\r\n"));
  }
  ASSERT_TRUE(target_.WaitForLines(2));
  EXPECT_EQ(target_.Lines(), (std::vector<std::string>{"<13>one", "<13>two"}));
  ASSERT_TRUE(WaitCounter("logfold_connections_closed_total", 1));
  EXPECT_EQ(Counter("logfold_connections_accepted_total"), 1u);
  EXPECT_EQ(Counter("logfold_received_total"), 2u);
  EXPECT_EQ(Counter("logfold_received_bytes_total"), 17u);
  EXPECT_EQ(Counter("logfold_framing_errors_total"), 0u);
  EXPECT_EQ(listener->open_connections(), 0u);
  EXPECT_NE(
      metrics_.RenderPrometheus().find(R"(logfold_connections_open{input="t0",proto="tcp"} 0)"),
      std::string::npos);
}

TEST_F(TcpListenerTest, OctetCountedClient) {
  auto listener = Make();
  {
    Client c(listener->local_port());
    ASSERT_TRUE(c.Send("9 <13>hello"));
    ASSERT_TRUE(c.Send("11 <13>a b c d"));
  }
  ASSERT_TRUE(target_.WaitForLines(2));
  EXPECT_EQ(target_.Lines(), (std::vector<std::string>{"<13>hello", "<13>a b c d"}));
  EXPECT_EQ(Counter("logfold_framing_errors_total"), 0u);
  ASSERT_TRUE(WaitCounter("logfold_connections_closed_total", 1));
  EXPECT_EQ(Counter("logfold_partial_at_close_total"), 0u);
}

TEST_F(TcpListenerTest, ForcedNewlineFramingIgnoresLengthPrefix) {
  auto listener = Make({.framing = Framing::kNewline});
  {
    Client c(listener->local_port());
    ASSERT_TRUE(c.Send("5 hello\n"));
  }
  ASSERT_TRUE(target_.WaitForLines(1));
  EXPECT_EQ(target_.Lines(), std::vector<std::string>{"5 hello"});
}

TEST_F(TcpListenerTest, ManyConcurrentClientsKeepPerConnectionOrder) {
  auto listener = Make();
  constexpr int kClients = 16, kLines = 300;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int k = 0; k < kClients; ++k) {
    threads.emplace_back([&, k] {
      std::string stream;
      for (int i = 0; i < kLines; ++i) {
        const std::string msg = "<13>c" + std::to_string(k) + " " + std::to_string(i);
        // Odd clients use octet counting, even ones newline framing.
        stream += (k % 2 == 1) ? std::to_string(msg.size()) + " " + msg : msg + "\n";
      }
      Client c(listener->local_port());
      std::mt19937 rng(static_cast<unsigned>(k));
      std::string_view rest = stream;
      while (!rest.empty()) {
        const std::size_t n = std::min<std::size_t>(rest.size(), 1 + rng() % 700);
        if (!c.Send(rest.substr(0, n))) ++failures;
        rest.remove_prefix(n);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(target_.WaitForLines(kClients * kLines));
  std::map<int, int> next;
  for (const std::string& line : target_.Lines()) {
    int k = -1, i = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "<13>c%d %d", &k, &i), 2) << line;
    EXPECT_EQ(i, next[k]) << "client " << k;
    next[k] = i + 1;
  }
  EXPECT_EQ(next.size(), static_cast<std::size_t>(kClients));
  EXPECT_EQ(target_.LineCount(), static_cast<std::size_t>(kClients * kLines));
  ASSERT_TRUE(WaitCounter("logfold_connections_closed_total", kClients));
  EXPECT_EQ(Counter("logfold_connections_accepted_total"), static_cast<std::uint64_t>(kClients));
  EXPECT_EQ(Counter("logfold_framing_errors_total"), 0u);
  EXPECT_EQ(listener->open_connections(), 0u);
}

TEST_F(TcpListenerTest, ClientDisconnectingMidFrameCountsPartialOthersUnaffected) {
  auto listener = Make();
  Client good(listener->local_port());
  {
    Client bad(listener->local_port());
    ASSERT_TRUE(bad.Send("30 <13>cut short"));
  }
  ASSERT_TRUE(WaitCounter("logfold_partial_at_close_total", 1));
  std::string stream;
  for (int i = 0; i < 100; ++i) stream += "<13>good " + std::to_string(i) + "\n";
  ASSERT_TRUE(good.Send(stream));
  good.Close();
  ASSERT_TRUE(target_.WaitForLines(101));
  const auto lines = target_.Lines();
  EXPECT_EQ(lines.front(), "<13>cut short");  // delivered as received
  for (int i = 0; i < 100; ++i) EXPECT_EQ(lines[1 + i], "<13>good " + std::to_string(i));
  ASSERT_TRUE(WaitCounter("logfold_connections_closed_total", 2));
  EXPECT_EQ(Counter("logfold_partial_at_close_total"), 1u);
}

// Writes as much of `data` as the socket takes without blocking for `stall`; returns bytes
// written. Stops early (returning < data.size()) once the peer stopped draining.
std::size_t WriteUntilStalled(int fd, std::string_view data, std::chrono::milliseconds stall) {
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n =
        send(fd, data.data() + written, data.size() - written, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) break;
    pollfd p{fd, POLLOUT, 0};
    if (poll(&p, 1, static_cast<int>(stall.count())) == 0) break;  // no progress: stalled
  }
  return written;
}

TEST_F(TcpListenerTest, BackpressureStallsSenderAndLosesNothing) {
  // Small fixed buffers keep what the kernel can absorb far below what we send.
  auto listener = Make({.receive_buffer = 64 * 1024});
  constexpr int kClients = 2;
  constexpr std::size_t kBytesPerClient = 8 << 20;
  std::vector<std::string> streams(kClients);
  std::vector<int> line_counts(kClients, 0);
  for (int k = 0; k < kClients; ++k) {
    while (streams[k].size() < kBytesPerClient) {
      std::string line = "<13>c" + std::to_string(k) + " " + std::to_string(line_counts[k]++) + " ";
      line.resize(200, 'p');
      streams[k] += line + "\n";
    }
  }
  target_.SetFull(true);
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<std::size_t> written(kClients, 0);
  for (int k = 0; k < kClients; ++k) {
    clients.push_back(std::make_unique<Client>(listener->local_port(), false, 64 * 1024));
    ASSERT_TRUE(clients.back()->connected());
  }
  for (int k = 0; k < kClients; ++k) {
    written[k] = WriteUntilStalled(clients[k]->fd(), streams[k], 300ms);
    EXPECT_LT(written[k], streams[k].size() / 2) << "sender " << k << " was never slowed down";
  }
  EXPECT_EQ(target_.LineCount(), 0u);
  EXPECT_TRUE(WaitUntil([&] { return target_.attempts() >= kClients; }));

  target_.SetFull(false);
  std::vector<std::thread> writers;
  for (int k = 0; k < kClients; ++k) {
    writers.emplace_back([&, k] {
      const std::string_view rest = std::string_view(streams[k]).substr(written[k]);
      EXPECT_EQ(WriteUntilStalled(clients[k]->fd(), rest, 20s), rest.size());
      clients[k]->ShutdownWrite();
    });
  }
  for (auto& t : writers) t.join();
  const std::size_t total = static_cast<std::size_t>(line_counts[0] + line_counts[1]);
  ASSERT_TRUE(target_.WaitForLines(total, 60s));
  std::map<int, int> next;
  for (const std::string& line : target_.Lines()) {
    int k = -1, i = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "<13>c%d %d", &k, &i), 2);
    ASSERT_EQ(i, next[k]) << "client " << k;
    next[k] = i + 1;
  }
  EXPECT_EQ(next[0], line_counts[0]);
  EXPECT_EQ(next[1], line_counts[1]);
  EXPECT_EQ(target_.LineCount(), total);
  for (auto& c : clients) EXPECT_TRUE(c->WaitPeerClosed());
  EXPECT_EQ(metrics_.Sum("logfold_dropped_total"), 0u);
}

TEST_F(TcpListenerTest, FinalFrameAtEofWaitsForTarget) {
  auto listener = Make();
  target_.SetFull(true);
  Client c(listener->local_port());
  ASSERT_TRUE(c.Send("<13>a\n<13>unterminated"));
  c.ShutdownWrite();
  ASSERT_TRUE(WaitUntil([&] { return target_.attempts() >= 1; }));
  EXPECT_FALSE(c.WaitPeerClosed(100ms));  // held open until everything is delivered
  target_.SetFull(false);
  ASSERT_TRUE(target_.WaitForLines(2));
  EXPECT_EQ(target_.Lines(), (std::vector<std::string>{"<13>a", "<13>unterminated"}));
  EXPECT_TRUE(c.WaitPeerClosed());
  EXPECT_EQ(Counter("logfold_partial_at_close_total"), 0u);
}

TEST_F(TcpListenerTest, MaxConnectionsRejectsExtraClients) {
  auto listener = Make({.max_connections = 2});
  Client a(listener->local_port()), b(listener->local_port());
  ASSERT_TRUE(WaitCounter("logfold_connections_accepted_total", 2));
  Client extra(listener->local_port());
  EXPECT_TRUE(extra.WaitPeerClosed());
  EXPECT_EQ(Counter("logfold_connections_rejected_total"), 1u);
  ASSERT_TRUE(a.Send("<13>still served\n"));
  ASSERT_TRUE(target_.WaitForLines(1));
  // A slot frees up when a client leaves.
  b.Close();
  ASSERT_TRUE(WaitCounter("logfold_connections_closed_total", 1));
  Client later(listener->local_port());
  ASSERT_TRUE(later.Send("<13>later\n"));
  ASSERT_TRUE(target_.WaitForLines(2));
  EXPECT_EQ(Counter("logfold_connections_accepted_total"), 3u);
  EXPECT_EQ(Counter("logfold_connections_rejected_total"), 1u);
}

TEST_F(TcpListenerTest, IdleConnectionIsClosedAndItsPartialLineDelivered) {
  auto listener = Make({.idle_timeout_us = 200'000});
  Client silent(listener->local_port());
  Client idle(listener->local_port());
  ASSERT_TRUE(idle.Send("<13>said one thing\n<13>then half"));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(idle.WaitPeerClosed());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  ASSERT_TRUE(target_.WaitForLines(2));
  EXPECT_EQ(target_.Lines(), (std::vector<std::string>{"<13>said one thing", "<13>then half"}));
  // The other client was idle just as long, so it goes too; one that keeps talking does not.
  EXPECT_TRUE(silent.WaitPeerClosed());
  EXPECT_EQ(Counter("logfold_idle_timeouts_total"), 2u);
  Client talker(listener->local_port());
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(talker.Send("<13>tick\n"));
    ASSERT_TRUE(target_.WaitForLines(3 + static_cast<std::size_t>(i)));
    EXPECT_FALSE(talker.WaitPeerClosed(100ms));
  }
  EXPECT_EQ(Counter("logfold_idle_timeouts_total"), 2u);
}

TEST_F(TcpListenerTest, GarbageInputDoesNotDisturbOtherClients) {
  auto listener = Make({.max_message_size = 256});
  std::mt19937 rng(5);
  std::string garbage(256 * 1024, '\0');
  for (char& ch : garbage) ch = static_cast<char>(rng() & 0xff);
  garbage.replace(0, 26, "9999999999999999999999 xx\n");  // an absurd octet count
  Client good(listener->local_port());
  {
    Client bad(listener->local_port());
    ASSERT_TRUE(bad.Send(garbage));
  }
  ASSERT_TRUE(good.Send("<13>good one\n"));
  good.Close();
  ASSERT_TRUE(WaitCounter("logfold_connections_closed_total", 2));
  const auto lines = target_.Lines();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "<13>good one"), 1);
  for (const std::string& line : lines) EXPECT_LE(line.size(), 256u);
  EXPECT_EQ(Counter("logfold_received_bytes_total"), garbage.size() + 13);
  EXPECT_GE(Counter("logfold_framing_errors_total"), 1u);
  EXPECT_EQ(Counter("logfold_received_total"), lines.size());
}

// A bounded FIFO queue in front of a slow worker thread, as WorkerPool is: it refuses a
// delivery that would overfill the queue, counts a sender's lines in its share until the
// worker took them, and notes who delivers so that shares bind only while senders contend.
// Records, for every line of the legitimate client ("<13>legit ..."), how many lines were
// queued ahead of it, and the most flood lines queued (both since the last ResetRecords).
class SlowQueueTarget : public IngestTarget {
 public:
  SlowQueueTarget(std::size_t capacity, std::size_t share_limit)
      : capacity_(capacity), share_limit_(share_limit), worker_([this] { Work(); }) {}
  ~SlowQueueTarget() override { StopWorker(); }

  bool TryDeliver(std::uint32_t input, std::span<const std::string_view> lines,
                  TimeUs arrival_us) override {
    return TryDeliverShared(input, lines, arrival_us, nullptr);
  }
  std::shared_ptr<QueueShare> NewShare() override {
    return std::make_shared<QueueShare>(share_limit_, contention_);
  }
  bool TryDeliverShared(std::uint32_t, std::span<const std::string_view> lines, TimeUs,
                        const std::shared_ptr<QueueShare>& share) override {
    contention_->Note(share.get());
    std::lock_guard lock(mu_);
    if (queue_.size() + lines.size() > capacity_) {
      ++refused_;
      return false;
    }
    if (share != nullptr) share->Add(lines.size());
    for (std::string_view line : lines) {
      const bool legit = line.starts_with("<13>legit ");
      if (legit) most_ahead_of_legit_ = std::max(most_ahead_of_legit_, queue_.size());
      if (!legit && share != nullptr) {
        most_flood_queued_ = std::max(most_flood_queued_, share->queued());
      }
      queue_.push_back({std::string(line), share});
    }
    cv_.notify_all();
    return true;
  }
  void OnWritable(std::function<void()> resume) override {
    std::unique_lock lock(mu_);
    if (queue_.size() >= capacity_ / 2) {
      waiters_.push_back(std::move(resume));
      return;
    }
    lock.unlock();
    resume();
  }
  void StopWorker() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
  }
  std::size_t Taken(std::string_view prefix) {
    std::lock_guard lock(mu_);
    return std::count_if(taken_.begin(), taken_.end(),
                         [&](const std::string& l) { return l.starts_with(prefix); });
  }
  std::size_t refused() {
    std::lock_guard lock(mu_);
    return refused_;
  }
  std::size_t most_ahead_of_legit() {
    std::lock_guard lock(mu_);
    return most_ahead_of_legit_;
  }
  std::size_t most_flood_queued() {
    std::lock_guard lock(mu_);
    return most_flood_queued_;
  }
  void ResetRecords() {
    std::lock_guard lock(mu_);
    refused_ = most_ahead_of_legit_ = most_flood_queued_ = 0;
  }

 private:
  struct Item {
    std::string line;
    std::shared_ptr<QueueShare> share;
  };
  // Takes up to 64 lines, then rests a millisecond: a worker far slower than loopback.
  void Work() {
    std::vector<Item> round;
    while (true) {
      std::vector<std::function<void()>> wake;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        for (int i = 0; i < 64 && !queue_.empty(); ++i) {
          round.push_back(std::move(queue_.front()));
          queue_.pop_front();
          taken_.push_back(round.back().line);
        }
        if (queue_.size() < capacity_ / 2) wake.swap(waiters_);
      }
      for (Item& item : round) {
        if (item.share != nullptr) item.share->Release(1);
      }
      round.clear();
      for (auto& resume : wake) resume();
      std::this_thread::sleep_for(1ms);
    }
  }

  const std::size_t capacity_;
  const std::size_t share_limit_;
  const std::shared_ptr<ShareContention> contention_ = std::make_shared<ShareContention>();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::vector<std::string> taken_;
  std::vector<std::function<void()>> waiters_;
  std::size_t refused_ = 0;
  std::size_t most_ahead_of_legit_ = 0;
  std::size_t most_flood_queued_ = 0;
  bool stop_ = false;
  std::thread worker_;  // last: starts once the rest is built
};

// A client that sends 64-byte lines as fast as the listener reads them, from its own thread.
class Flooder {
 public:
  explicit Flooder(std::uint16_t port) : client_(port) {
    // 64-byte lines: a 64 KiB read holds at most 1024 of them, less than a share.
    for (int i = 0; data_.size() < (1 << 20); ++i) {
      char line[65];
      std::snprintf(line, sizeof line, "<13>flood %053d\n", i);
      data_ += line;
    }
    thread_ = std::thread([this] {
      std::size_t at = 0;
      while (!stop_.load()) {
        pollfd p{client_.fd(), POLLOUT, 0};
        if (poll(&p, 1, 50) <= 0) continue;
        const ssize_t n =
            send(client_.fd(), data_.data() + at, data_.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) at = (at + static_cast<std::size_t>(n)) % data_.size();
      }
    });
  }
  ~Flooder() { Stop(); }
  bool connected() const { return client_.connected(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  Client client_;
  std::string data_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One connection floods lines far faster than the worker takes them. While a second
// connection sends, the flood may hold at most its share of the queue, so the queue does not
// fill (no delivery is refused) and every line of the second connection is queued behind at
// most a share of flood lines, while the flood goes on. Alone, the flood may fill the queue
// (LoneConnectionIsNotHeldToItsShare), so the second connection's first lines may wait
// behind a full queue; from its second round on, the share binds.
class TcpListenerFairnessTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kCapacity = 16384, kShare = 2048;

  void SetUp() override { listener->Start(); }
  // Stops the flood and the listener, then the worker, so the records are final.
  void StopAll(Flooder& flooder) {
    flooder.Stop();
    listener->Close();
    ASSERT_TRUE(WaitUntil([&] { return listener->open_connections() == 0; }));
    target.StopWorker();
  }

  SlowQueueTarget target{kCapacity, kShare};
  Metrics metrics;
  test::IoThreads io{2};
  std::unique_ptr<TcpListener> listener =
      std::make_unique<TcpListener>(0, "t0", TcpListener::Options{}, io.io, target, metrics);
};

TEST_F(TcpListenerFairnessTest, FloodingConnectionHoldsOnlyItsShareOfTheQueue) {
  constexpr int kRounds = 20, kLinesPerRound = 10;
  Flooder flooder(listener->local_port());
  ASSERT_TRUE(flooder.connected());
  // The flood is under way and backed up: more than a share was offered already.
  ASSERT_TRUE(WaitUntil([&] { return target.Taken("<13>flood") >= kShare; }));
  Client legit(listener->local_port());
  ASSERT_TRUE(legit.connected());
  std::size_t flood_taken_after_first_round = 0;
  for (int r = 0; r < kRounds; ++r) {
    std::string batch;
    for (int i = 0; i < kLinesPerRound; ++i) {
      batch += "<13>legit " + std::to_string(r * kLinesPerRound + i) + "\n";
    }
    ASSERT_TRUE(legit.Send(batch));
    ASSERT_TRUE(WaitUntil([&] {
      return target.Taken("<13>legit ") == std::size_t((r + 1) * kLinesPerRound);
    })) << "round "
        << r;
    if (r == 0) {
      target.ResetRecords();
      flood_taken_after_first_round = target.Taken("<13>flood");
    }
  }
  const std::size_t flood_taken = target.Taken("<13>flood") - flood_taken_after_first_round;
  StopAll(flooder);
  EXPECT_EQ(target.refused(), 0u) << "the flood filled the queue";
  EXPECT_LE(target.most_flood_queued(), kShare);
  EXPECT_GE(target.most_flood_queued(), kShare / 2) << "the flood never used its share";
  EXPECT_LE(target.most_ahead_of_legit(), kShare + kLinesPerRound);
  // The flood was served all along, not stopped for the other connection.
  EXPECT_GT(flood_taken, kShare + kRounds * 64u);
}

// A connection that sends alone is held back only by the target's capacity, not by its
// share: held to a share, a lone fast sender pipelines less (bench/RESULTS.md).
TEST_F(TcpListenerFairnessTest, LoneConnectionIsNotHeldToItsShare) {
  Flooder flooder(listener->local_port());
  ASSERT_TRUE(flooder.connected());
  EXPECT_TRUE(WaitUntil([&] { return target.most_flood_queued() >= kCapacity / 2; }))
      << "most flood lines queued: " << target.most_flood_queued();
  StopAll(flooder);
}

TEST_F(TcpListenerTest, StopReadingDeliversHeldLinesThenCloses) {
  auto listener = Make();
  target_.SetFull(true);
  Client c(listener->local_port());
  std::string data;
  for (int i = 0; i < 10; ++i) data += "<13>held " + std::to_string(i) + "\n";
  data += "<13>tail";
  ASSERT_TRUE(c.Send(data));
  ASSERT_TRUE(WaitUntil([&] { return Counter("logfold_received_bytes_total") == data.size(); }));
  ASSERT_TRUE(WaitUntil([&] { return target_.attempts() >= 1; }));

  ASSERT_TRUE(StopWhileHeldThenDrain(*listener, c));
  const auto lines = target_.Lines();
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(lines[0], "<13>held 0");
  EXPECT_EQ(lines[9], "<13>held 9");
  EXPECT_EQ(lines[10], "<13>tail");  // the unfinished frame, as at EOF
  EXPECT_TRUE(c.WaitPeerClosed());
  EXPECT_EQ(listener->open_connections(), 0u);
  EXPECT_EQ(metrics_.Sum("logfold_dropped_total"), 0u);
}

// Bytes the kernel received (and acknowledged) before the stop are read and delivered even
// though the connection was paused by backpressure and had not read them yet; the sender does
// not resend them, so dropping them would lose lines.
TEST_F(TcpListenerTest, StopReadingReadsWhatTheKernelHadAlreadyReceived) {
  auto listener = Make();
  target_.SetFull(true);
  Client c(listener->local_port());
  const std::string first = "<13>read before the stop\n";
  ASSERT_TRUE(c.Send(first));
  ASSERT_TRUE(WaitUntil([&] { return target_.attempts() >= 1; }));  // paused, holding it
  std::string queued;
  for (int i = 0; i < 200; ++i) queued += "<13>queued in the kernel " + std::to_string(i) + "\n";
  ASSERT_TRUE(c.Send(queued));
  // Acknowledged by the listener's kernel: nothing left in the client's send queue.
  ASSERT_TRUE(WaitUntil([&] {
    int unacked = -1;
    return ioctl(c.fd(), SIOCOUTQ, &unacked) == 0 && unacked == 0;
  }));
  EXPECT_EQ(Counter("logfold_received_bytes_total"), first.size());  // not read yet

  ASSERT_TRUE(StopWhileHeldThenDrain(*listener, c));
  const auto lines = target_.Lines();
  ASSERT_EQ(lines.size(), 201u);
  EXPECT_EQ(lines[0], "<13>read before the stop");
  EXPECT_EQ(lines[200], "<13>queued in the kernel 199");
  EXPECT_EQ(Counter("logfold_received_bytes_total"), first.size() + queued.size());
  EXPECT_TRUE(c.WaitPeerClosed());
  EXPECT_EQ(metrics_.Sum("logfold_dropped_total"), 0u);
}

TEST_F(TcpListenerTest, StopReadingWithoutConnectionsDrainsAtOnce) {
  auto listener = Make();
  std::atomic<bool> drained{false};
  listener->StopReading([&] { drained = true; });
  EXPECT_TRUE(WaitUntil([&] { return drained.load(); }));
}

TEST_F(TcpListenerTest, CloseDropsHeldLinesAndCountsThem) {
  auto listener = Make();
  target_.SetFull(true);
  Client c(listener->local_port());
  const std::string data = "<13>a\n<13>b\n<13>c\n";
  ASSERT_TRUE(c.Send(data));
  ASSERT_TRUE(WaitUntil([&] { return target_.attempts() >= 1; }));
  listener->Close();
  EXPECT_TRUE(c.WaitPeerClosed());
  const std::string dropped = std::string(kLabels) + R"(,reason="shutdown")";
  EXPECT_TRUE(WaitUntil([&] { return metrics_.Value("logfold_dropped_total", dropped) == 3; }));
  EXPECT_EQ(target_.LineCount(), 0u);
  EXPECT_TRUE(WaitUntil([&] { return listener->open_connections() == 0; }));
}

TEST_F(TcpListenerTest, Ipv6Loopback) {
  std::unique_ptr<TcpListener> listener;
  try {
    listener = Make({.address = "::1"});
  } catch (const std::exception& e) {
    GTEST_SKIP() << "cannot bind [::1]: " << e.what();
  }
  {
    Client c(listener->local_port(), /*v6=*/true);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.Send("<13>over ipv6\n"));
  }
  ASSERT_TRUE(target_.WaitForLines(1));
  EXPECT_EQ(target_.Lines(), std::vector<std::string>{"<13>over ipv6"});
}

TEST_F(TcpListenerTest, AdoptsAListeningSocket) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto listener = Make({.adopted_fd = fd});
  EXPECT_EQ(listener->local_port(), ntohs(addr.sin_port));
  {
    Client c(listener->local_port());
    ASSERT_TRUE(c.Send("<13>adopted\n"));
  }
  ASSERT_TRUE(target_.WaitForLines(1));
  EXPECT_EQ(target_.Lines(), std::vector<std::string>{"<13>adopted"});
}

void RunLogger(const std::string& args, std::uint16_t port) {
  const std::string cmd = "logger " + args + " -n 127.0.0.1 -P " + std::to_string(port) +
                          " -t logfoldtest 'tcp via logger' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

TEST_F(TcpListenerTest, UtilLinuxLoggerOctetCountedAndNewline) {
  if (std::system("command -v logger >/dev/null 2>&1") != 0) GTEST_SKIP() << "no logger";
  for (Framing framing : {Framing::kAuto, Framing::kOctetCounted}) {
    auto listener = Make({.framing = framing});
    const std::size_t before = target_.LineCount();
    RunLogger("--tcp --octet-count", listener->local_port());
    ASSERT_TRUE(target_.WaitForLines(before + 1));
    const std::string line = target_.Lines().back();
    EXPECT_EQ(line.front(), '<') << line;  // the length prefix was consumed
    EXPECT_NE(line.find("logfoldtest"), std::string::npos) << line;
    EXPECT_EQ(line.substr(line.size() - 14), "tcp via logger") << line;
  }
  for (Framing framing : {Framing::kAuto, Framing::kNewline}) {
    auto listener = Make({.framing = framing});
    const std::size_t before = target_.LineCount();
    RunLogger("--tcp", listener->local_port());  // newline framing (non-transparent)
    ASSERT_TRUE(target_.WaitForLines(before + 1));
    const std::string line = target_.Lines().back();
    EXPECT_EQ(line.front(), '<') << line;
    EXPECT_EQ(line.substr(line.size() - 14), "tcp via logger") << line;
  }
  EXPECT_EQ(metrics_.Sum("logfold_framing_errors_total"), 0u);
  EXPECT_EQ(target_.LineCount(), 4u);
}

}  // namespace
}  // namespace logfold
