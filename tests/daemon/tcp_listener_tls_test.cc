// Tests for TcpListener's TLS transport over real loopback TLS connections (certificates made
// by the openssl CLI): the protections of the plain TCP listener hold for TLS inputs too
// (connections per source, the idle timeout that needs complete lines, queue shares).
#include <gtest/gtest.h>
#include <poll.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/inputs/tcp_listener.h"
#include "daemon/runtime/metrics.h"
#include "daemon/runtime/tls_context.h"
#include "tests/support/daemon_process.h"
#include "tests/support/listener_test_util.h"
#include "tests/support/recording_target.h"
#include "tests/support/test_pki.h"

namespace logfold {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using namespace std::chrono_literals;
using test::WaitUntil;

constexpr const char* kLabels = R"(input="t0",proto="tls")";

// A blocking loopback TLS client (no client certificate; it does not verify the server,
// whose identity is not what these tests are about).
class TlsClient {
 public:
  explicit TlsClient(std::uint16_t port) {
    boost::system::error_code ec;
    stream_.lowest_layer().connect({asio::ip::make_address("127.0.0.1"), port}, ec);
    if (ec) return;
    connected_ = true;
    stream_.handshake(ssl::stream_base::client, ec);
    handshake_ok_ = !ec;
  }
  bool connected() const { return connected_; }
  bool handshake_ok() const { return handshake_ok_; }

  bool Send(std::string_view data) {
    boost::system::error_code ec;
    asio::write(stream_, asio::buffer(data.data(), data.size()), ec);
    return !ec;
  }
  // True once the server closed the connection (EOF, truncation or reset) within `timeout`.
  // Reads through whatever the server sends after the handshake (TLS 1.3 session tickets).
  bool WaitPeerClosed(std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{stream_.lowest_layer().native_handle(), POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      boost::system::error_code ec;
      stream_.read_some(asio::buffer(buf), ec);
      if (ec) return true;
    }
    return false;
  }

 private:
  asio::io_context io_;
  ssl::context ctx_{ssl::context::tls_client};
  ssl::stream<asio::ip::tcp::socket> stream_{io_, ctx_};
  bool connected_ = false;
  bool handshake_ok_ = false;
};

class TcpListenerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    ASSERT_TRUE(pki_.MakeCa()) << pki_.error();
    ASSERT_TRUE(pki_.MakeLeaf("server", "localhost")) << pki_.error();
    TlsServerOptions o{};
    o.cert_file = pki_.Cert("server");
    o.key_file = pki_.Key("server");
    o.min_version = TlsVersion::kTls12;
    o.client_auth = ClientAuth::kNone;
    std::string error;
    context_ = MakeTlsServerContext(o, error);
    ASSERT_NE(context_, nullptr) << error;
  }

  std::unique_ptr<TcpListener> Make(TcpListener::Options options) {
    options.nul_terminator = false;
    auto listener = std::make_unique<TcpListener>(
        3, "t0", options, io_.io, target_, metrics_, nullptr,
        TcpListener::Tls{.context = context_, .handshake_timeout_us = 5'000'000});
    listener->Start();
    return listener;
  }
  std::uint64_t Counter(const char* name) { return metrics_.Value(name, kLabels); }

  daemon_test::TempDir dir_;
  daemon_test::TestPki pki_{dir_};
  std::shared_ptr<const TlsServerContext> context_;
  Metrics metrics_;
  test::RecordingTarget target_;
  test::IoThreads io_{2};  // declared last: its threads stop before the target goes away
};

// One source address holds at most max_connections_per_source TLS connections: the next is
// closed before its handshake and counted, and the ones it holds keep being served.
TEST_F(TcpListenerTlsTest, ConnectionsPerSourceAreLimited) {
  TcpListener::Options options;
  options.max_connections_per_source = 2;
  auto listener = Make(options);
  TlsClient a(listener->local_port()), b(listener->local_port());
  ASSERT_TRUE(a.handshake_ok() && b.handshake_ok());
  ASSERT_TRUE(WaitUntil([&] { return listener->open_connections() == 2; }));
  TlsClient third(listener->local_port());
  EXPECT_TRUE(third.connected());  // the kernel accepts; the listener closes it
  EXPECT_FALSE(third.handshake_ok());
  EXPECT_TRUE(
      WaitUntil([&] { return Counter("logfold_connections_rejected_per_source_total") == 1; }));
  // A TLS 1.3 client finishes its handshake before the server has read its Finished, which
  // is when the server counts it.
  EXPECT_TRUE(WaitUntil([&] { return Counter("logfold_tls_handshakes_total") == 2; }));
  ASSERT_TRUE(a.Send("<13>Jan  1 00:00:00 h app: from a\n"));
  ASSERT_TRUE(b.Send("<13>Jan  1 00:00:00 h app: from b\n"));
  ASSERT_TRUE(target_.WaitForLines(2));
  EXPECT_EQ(listener->open_connections(), 2u);
}

// A TLS sender trickling bytes that never complete a line is closed by the idle timeout; one
// that sends complete lines as slowly stays open. (Any TLS record used to count as activity.)
TEST_F(TcpListenerTlsTest, IdleTimeoutNeedsCompleteLines) {
  TcpListener::Options options;
  options.idle_timeout_us = 1'000'000;
  options.framing = Framing::kNewline;
  auto listener = Make(options);
  TlsClient trickle(listener->local_port()), steady(listener->local_port());
  ASSERT_TRUE(trickle.handshake_ok() && steady.handshake_ok());
  bool trickle_closed = false;
  for (int i = 0; i < 40 && !trickle_closed; ++i) {  // 8 s at most; closing takes ~1 s
    ASSERT_TRUE(trickle.Send("x"));
    ASSERT_TRUE(steady.Send("<13>Jan  1 00:00:00 h app: steady line " + std::to_string(i) + "\n"));
    std::this_thread::sleep_for(200ms);  // the pace of the senders under test
    trickle_closed = Counter("logfold_idle_timeouts_total") >= 1;
  }
  EXPECT_TRUE(trickle_closed);
  EXPECT_TRUE(trickle.WaitPeerClosed());
  EXPECT_EQ(Counter("logfold_idle_timeouts_total"), 1u);
  // The trickle's unfinished line is delivered as the fragment it is when it closes.
  EXPECT_TRUE(WaitUntil([&] {
    for (const std::string& line : target_.Lines()) {
      if (line.starts_with("xx")) return true;
    }
    return false;
  }));
  ASSERT_TRUE(steady.Send("<13>Jan  1 00:00:00 h app: still open\n"));
  EXPECT_TRUE(WaitUntil([&] {
    for (const std::string& line : target_.Lines()) {
      if (line.ends_with("still open")) return true;
    }
    return false;
  }));
  EXPECT_EQ(listener->open_connections(), 1u);
}

}  // namespace
}  // namespace logfold
