// Tests for UdpListener over real loopback sockets: one message per datagram, truncation, drops,
// kernel drop counting, IPv6, socket adoption, batching, stop, and the util-linux `logger`
// client.
#include "daemon/inputs/udp_listener.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <set>
#include <string>
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

class UdpSender {
 public:
  explicit UdpSender(std::uint16_t port, bool v6 = false) : v6_(v6) {
    fd_ = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
    if (v6) {
      addr6_.sin6_family = AF_INET6;
      addr6_.sin6_port = htons(port);
      addr6_.sin6_addr = in6addr_loopback;
    } else {
      addr4_.sin_family = AF_INET;
      addr4_.sin_port = htons(port);
      addr4_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
  }
  ~UdpSender() { close(fd_); }
  void Send(std::string_view datagram) {
    const ssize_t n = v6_ ? sendto(fd_, datagram.data(), datagram.size(), 0,
                                   reinterpret_cast<const sockaddr*>(&addr6_), sizeof addr6_)
                          : sendto(fd_, datagram.data(), datagram.size(), 0,
                                   reinterpret_cast<const sockaddr*>(&addr4_), sizeof addr4_);
    ASSERT_EQ(n, static_cast<ssize_t>(datagram.size()));
  }

 private:
  bool v6_;
  int fd_ = -1;
  sockaddr_in addr4_{};
  sockaddr_in6 addr6_{};
};

constexpr const char* kLabels = R"(input="u0",proto="udp")";

class UdpListenerTest : public ::testing::Test {
 protected:
  std::unique_ptr<UdpListener> Make(UdpListener::Options options = {}) {
    auto listener = std::make_unique<UdpListener>(7, "u0", options, io_.io, target_, metrics_);
    listener->Start();
    return listener;
  }

  Metrics metrics_;
  RecordingTarget target_;
  test::IoThreads io_{2};  // declared last: its threads stop before the target goes away
};

TEST_F(UdpListenerTest, SingleDatagramIsOneLine) {
  auto listener = Make();
  ASSERT_NE(listener->local_port(), 0);
  UdpSender sender(listener->local_port());
  const TimeUs before = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  sender.Send("<13>Oct  1 host app: hello");
  ASSERT_TRUE(target_.WaitForLines(1));
  EXPECT_EQ(target_.Lines(), std::vector<std::string>{"<13>Oct  1 host app: hello"});
  EXPECT_EQ(target_.Inputs(), std::vector<std::uint32_t>{7});
  EXPECT_GE(target_.last_arrival(), before);
  EXPECT_LT(target_.last_arrival(), before + 60'000'000);
  EXPECT_EQ(metrics_.Value("logfold_received_total", kLabels), 1u);
  EXPECT_EQ(metrics_.Value("logfold_received_bytes_total", kLabels), 26u);
}

// Issue #21: a stack trace sent in one datagram came out as three records, the continuation
// lines without a host. A datagram is one message (RFC 5426).
TEST_F(UdpListenerTest, MultiLineDatagramIsOneMessage) {
  auto listener = Make();
  UdpSender sender(listener->local_port());
  const std::string trace =
      "<11>app[7]: Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: x";
  sender.Send(trace + "\n");
  sender.Send(std::string("<14>py[9]: record\0", 18));  // Python's SysLogHandler ends with NUL
  ASSERT_TRUE(target_.WaitForLines(2));
  EXPECT_EQ(target_.Lines(), (std::vector<std::string>{trace, "<14>py[9]: record"}));
  EXPECT_EQ(metrics_.Value("logfold_received_total", kLabels), 2u);
}

TEST_F(UdpListenerTest, EmptyDatagramsYieldNothing) {
  auto listener = Make();
  UdpSender sender(listener->local_port());
  sender.Send("");
  sender.Send("\r\n\n");
  sender.Send("<13>after");
  ASSERT_TRUE(target_.WaitForLines(1));
  EXPECT_EQ(target_.Lines(), std::vector<std::string>{"<13>after"});
  EXPECT_EQ(metrics_.Value("logfold_received_total", kLabels), 1u);
}

TEST_F(UdpListenerTest, LongDatagramTruncatedAndCounted) {
  auto listener = Make({.max_message_size = 16});
  UdpSender sender(listener->local_port());
  sender.Send("0123456789abcdefTHE-REST-IS-CUT");
  sender.Send("short");
  ASSERT_TRUE(target_.WaitForLines(2));
  EXPECT_EQ(target_.Lines(), (std::vector<std::string>{"0123456789abcdef", "short"}));
  EXPECT_EQ(metrics_.Value("logfold_truncated_total", kLabels), 1u);
  EXPECT_EQ(metrics_.Value("logfold_received_bytes_total", kLabels), 31u + 5u);
}

TEST_F(UdpListenerTest, FullTargetDropsAndCounts) {
  target_.SetFull(true);
  auto listener = Make();
  UdpSender sender(listener->local_port());
  for (int i = 0; i < 10; ++i) sender.Send("<13>x");
  const std::string dropped_labels = std::string(kLabels) + R"(,reason="queue_full")";
  ASSERT_TRUE(
      WaitUntil([&] { return metrics_.Value("logfold_dropped_total", dropped_labels) == 10; }));
  EXPECT_TRUE(target_.Lines().empty());
  EXPECT_EQ(metrics_.Value("logfold_received_total", kLabels), 10u);

  // Accepting again: new datagrams get through, the dropped ones stay dropped.
  target_.SetFull(false);
  sender.Send("<13>z");
  ASSERT_TRUE(target_.WaitForLines(1));
  EXPECT_EQ(target_.Lines(), std::vector<std::string>{"<13>z"});
}

TEST_F(UdpListenerTest, ManyDatagramsAllArriveOnce) {
  auto listener = Make();
  UdpSender sender(listener->local_port());
  constexpr int kBursts = 20, kPerBurst = 50;
  for (int b = 0; b < kBursts; ++b) {
    for (int i = 0; i < kPerBurst; ++i) sender.Send("<13>msg " + std::to_string(b * kPerBurst + i));
    // Bursts small enough for any receive buffer: this tests batching, not kernel drops.
    ASSERT_TRUE(target_.WaitForLines(static_cast<std::size_t>((b + 1) * kPerBurst)));
  }
  const auto lines = target_.Lines();
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kBursts * kPerBurst));
  std::set<std::string> unique(lines.begin(), lines.end());
  EXPECT_EQ(unique.size(), lines.size());
  EXPECT_EQ(metrics_.Value("logfold_received_total", kLabels), lines.size());
}

TEST_F(UdpListenerTest, KernelDropsAreCounted) {
  // A small receive buffer, and nothing read while it fills (not started yet): the kernel
  // drops what does not fit, and the next datagram after the drain reports how many.
  UdpListener listener(7, "u0", {.receive_buffer = 4096}, io_.io, target_, metrics_);
  UdpSender sender(listener.local_port());
  constexpr int kSent = 200;
  for (int i = 0; i < kSent; ++i) sender.Send("<13>fill " + std::to_string(i));
  listener.Start();
  ASSERT_TRUE(WaitUntil([&] { return !target_.Lines().empty(); }));
  // The queued datagrams are all read once a marker sent after them arrives.
  sender.Send("<13>marker");
  ASSERT_TRUE(WaitUntil([&] {
    const auto lines = target_.Lines();
    return !lines.empty() && lines.back() == "<13>marker";
  }));
  const std::uint64_t kept = target_.Lines().size() - 1;
  EXPECT_LT(kept, static_cast<std::uint64_t>(kSent));
  EXPECT_EQ(metrics_.Value("logfold_udp_kernel_drops_total", kLabels), kSent - kept);
  EXPECT_EQ(metrics_.Value("logfold_received_total", kLabels), kept + 1);
}

TEST_F(UdpListenerTest, Ipv6Loopback) {
  std::unique_ptr<UdpListener> listener;
  try {
    listener = Make({.address = "::1"});
  } catch (const std::exception& e) {
    GTEST_SKIP() << "cannot bind [::1]: " << e.what();
  }
  UdpSender sender(listener->local_port(), /*v6=*/true);
  sender.Send("<13>over ipv6");
  ASSERT_TRUE(target_.WaitForLines(1));
  EXPECT_EQ(target_.Lines(), std::vector<std::string>{"<13>over ipv6"});
}

TEST_F(UdpListenerTest, AdoptsAnAlreadyBoundSocket) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto listener = Make({.adopted_fd = fd});
  EXPECT_EQ(listener->local_port(), ntohs(addr.sin_port));
  UdpSender sender(listener->local_port());
  sender.Send("<13>adopted");
  ASSERT_TRUE(target_.WaitForLines(1));
  EXPECT_EQ(target_.Lines(), std::vector<std::string>{"<13>adopted"});
}

TEST_F(UdpListenerTest, AdoptingAStreamSocketFails) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  EXPECT_THROW(Make({.adopted_fd = fd}), std::exception);
  close(fd);
}

TEST_F(UdpListenerTest, BadAddressThrows) {
  EXPECT_THROW(Make({.address = "not-an-ip"}), std::exception);
}

TEST_F(UdpListenerTest, StopReleasesThePort) {
  auto listener = Make();
  const std::uint16_t port = listener->local_port();
  listener->Stop();
  // The close runs on the io_context; the port becomes bindable again once it has.
  EXPECT_TRUE(WaitUntil([&] {
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    return ok;
  }));
  EXPECT_TRUE(target_.Lines().empty());
}

TEST_F(UdpListenerTest, UtilLinuxLoggerOverUdp) {
  if (std::system("command -v logger >/dev/null 2>&1") != 0) GTEST_SKIP() << "no logger";
  auto listener = Make();
  const std::string cmd = "logger --udp -n 127.0.0.1 -P " + std::to_string(listener->local_port()) +
                          " -t logfoldtest 'udp via logger 4711' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ASSERT_TRUE(target_.WaitForLines(1));
  const auto lines = target_.Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("logfoldtest"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("udp via logger 4711"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].front(), '<');
}

}  // namespace
}  // namespace logfold
