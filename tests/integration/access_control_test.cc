// Who may talk to logfold: CIDR sender allow-lists on tcp and udp inputs (a refused peer is
// counted, not served), and the metrics endpoint (with the live view) over HTTPS with client
// certificates and its own allow-list, scraped with curl. Loopback only: 127.0.0.2 is a
// second local source address.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/test_pki.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::MetricSum;
using daemon_test::TempDir;
using daemon_test::TestPki;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;

// A socket of `type` bound to the local address `source`, connected to 127.0.0.1:port.
int ConnectFrom(const char* source, std::uint16_t port, int type) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &local.sin_addr);
  sockaddr_in remote{};
  remote.sin_family = AF_INET;
  remote.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `text` from `source` (TCP: one connection, closed after; UDP: one datagram).
bool SendFrom(const char* source, std::uint16_t port, int type, const std::string& text) {
  const int fd = ConnectFrom(source, port, type);
  if (fd < 0) return false;
  const bool ok =
      ::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

TEST(AccessControlTest, InputAllowListsCountRefusedSendersAndServeAllowedOnes) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Json config = daemon_test::LoopbackConfig(dir / "events.ndjson");
  for (Json& in : config["inputs"]) in["allowed_senders"] = Json::array({"127.0.0.2/32"});
  daemon_test::WriteFile(dir / "logfold.json", config.dump(2));
  DaemonProcess daemon(dir);
  ASSERT_TRUE(daemon.Start(dir / "logfold.json")) << daemon.Stderr();
  const std::uint16_t tcp_port = daemon.InputPort("tcp-in", "tcp");
  const std::uint16_t udp_port = daemon.InputPort("udp-in", "udp");
  ASSERT_NE(tcp_port, 0);
  ASSERT_NE(udp_port, 0);

  // Refused: 127.0.0.1 is not in the list. The TCP connection is closed unread.
  constexpr int kRefused = 5;
  for (int i = 0; i < kRefused; ++i) {
    const std::string line =
        "<13>1 2024-05-01T12:00:00Z other app - - - refused " + std::to_string(i) + "\n";
    SendFrom("127.0.0.1", tcp_port, SOCK_STREAM, line);  // may fail once the peer closed
    ASSERT_TRUE(SendFrom("127.0.0.1", udp_port, SOCK_DGRAM, line));
  }
  EXPECT_TRUE(
      daemon.WaitMetricAtLeast("logfold_senders_refused_total", {"input=\"tcp-in\""}, kRefused))
      << daemon.Metrics();
  EXPECT_TRUE(
      daemon.WaitMetricAtLeast("logfold_senders_refused_total", {"input=\"udp-in\""}, kRefused))
      << daemon.Metrics();

  // Allowed: 127.0.0.2.
  constexpr int kAllowed = 50;
  std::string chunk;
  for (int i = 0; i < kAllowed; ++i) {
    chunk += "<13>1 2024-05-01T12:00:00Z web app - - - allowed " + std::to_string(i) + "\n";
    ASSERT_TRUE(SendFrom("127.0.0.2", udp_port, SOCK_DGRAM,
                         "<13>1 2024-05-01T12:00:00Z web app - - - datagram " + std::to_string(i)));
  }
  ASSERT_TRUE(SendFrom("127.0.0.2", tcp_port, SOCK_STREAM, chunk));
  EXPECT_TRUE(daemon.WaitMetricAtLeast("logfold_received_total", {"input=\"tcp-in\""}, kAllowed))
      << daemon.Metrics();
  EXPECT_TRUE(daemon.WaitMetricAtLeast("logfold_received_total", {"input=\"udp-in\""}, kAllowed))
      << daemon.Metrics();
  // Nothing from the refused sender got in.
  EXPECT_EQ(daemon.Metric("logfold_received_total"), 2 * kAllowed);
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  EXPECT_EQ(daemon.WaitExit(milliseconds(20000)), 0);
}

// The metrics endpoint over HTTPS, only for scrapers with a permitted client certificate and
// from allowed addresses.
class MetricsTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    if (daemon_test::FindProgram("curl").empty()) GTEST_SKIP() << "curl not installed";
    ASSERT_TRUE(pki_.MakeCa()) << pki_.error();
    ASSERT_TRUE(pki_.MakeLeaf("server", "localhost")) << pki_.error();
    ASSERT_TRUE(pki_.MakeLeaf("rotated", "localhost")) << pki_.error();
    ASSERT_TRUE(pki_.MakeLeaf("scraper", "prometheus.example.net")) << pki_.error();
    ASSERT_TRUE(pki_.MakeLeaf("intruder", "intruder.evil.org")) << pki_.error();
    std::filesystem::copy_file(pki_.Cert("server"), dir_ / "live.pem");
    std::filesystem::copy_file(pki_.Key("server"), dir_ / "live.key");
    Json config = daemon_test::LoopbackConfig(dir_ / "events.ndjson");
    config["metrics"] = {{"port", 0},
                         {"allowed_senders", Json::array({"127.0.0.1"})},
                         {"tls",
                          {{"cert_file", (dir_ / "live.pem").string()},
                           {"key_file", (dir_ / "live.key").string()},
                           {"ca_file", pki_.CaCert()},
                           {"client_auth", "required"},
                           {"permitted_peers", Json::array({"prometheus.example.net"})}}}};
    daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
    ASSERT_TRUE(daemon_.Start(dir_ / "logfold.json")) << daemon_.Stderr();
    const std::string prefix = "metrics on https://127.0.0.1:";
    const std::string log = daemon_.Stderr();
    const std::size_t at = log.find(prefix);
    if (at != std::string::npos) {
      port_ =
          static_cast<std::uint16_t>(std::strtoul(log.c_str() + at + prefix.size(), nullptr, 10));
    }
    ASSERT_NE(port_, 0) << daemon_.Stderr();
  }

  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "--- logfold ---\n%s\n", daemon_.Stderr().c_str());
  }

  // curl over HTTPS as client `cert` ("" for none), from `source`.
  daemon_test::CommandResult Curl(const std::string& path, const std::string& cert,
                                  const std::string& source = "127.0.0.1") {
    std::vector<std::string> argv = {"curl",
                                     "-sS",
                                     "--fail",
                                     "--max-time",
                                     "10",
                                     "--cacert",
                                     pki_.CaCert(),
                                     "--interface",
                                     source,
                                     "--resolve",
                                     "localhost:" + std::to_string(port_) + ":127.0.0.1"};
    if (!cert.empty()) {
      for (const std::string& a :
           {std::string("--cert"), pki_.Cert(cert), std::string("--key"), pki_.Key(cert)}) {
        argv.push_back(a);
      }
    }
    argv.push_back("https://localhost:" + std::to_string(port_) + path);
    return daemon_test::RunCommand(argv, dir_, milliseconds(15000));
  }

  std::string Scrape() {
    const daemon_test::CommandResult r = Curl("/metrics", "scraper");
    return r.exit_code == 0 ? r.out : "";
  }
  double Failures(const std::string& reason) {
    return MetricSum(Scrape(), "logfold_tls_handshake_failures_total",
                     {"input=\"metrics\"", "reason=\"" + reason + "\""});
  }

  TempDir dir_;
  TestPki pki_{dir_};
  DaemonProcess daemon_{dir_};
  std::uint16_t port_ = 0;
};

TEST_F(MetricsTlsTest, PermittedScraperIsServedOthersAreRefusedAndCounted) {
  const daemon_test::CommandResult metrics = Curl("/metrics", "scraper");
  ASSERT_EQ(metrics.exit_code, 0) << metrics.err;
  EXPECT_NE(metrics.out.find("# TYPE logfold_received_total counter"), std::string::npos);
  const daemon_test::CommandResult health = Curl("/healthz", "scraper");
  EXPECT_EQ(health.out, "ok\n") << health.err;
  const daemon_test::CommandResult stats = Curl("/api/stats", "scraper");
  EXPECT_NE(stats.out.find("\"lines_received\""), std::string::npos) << stats.err;

  const daemon_test::CommandResult intruder = Curl("/metrics", "intruder");
  EXPECT_NE(intruder.exit_code, 0);
  EXPECT_EQ(intruder.out.find("logfold_"), std::string::npos);
  const daemon_test::CommandResult anonymous = Curl("/metrics", "");
  EXPECT_NE(anonymous.exit_code, 0);
  const daemon_test::HttpResponse plain = daemon_test::HttpGet(port_, "/metrics");
  EXPECT_NE(plain.status, 200);
  EXPECT_EQ(plain.body.find("logfold_"), std::string::npos);
  const daemon_test::CommandResult elsewhere = Curl("/metrics", "scraper", "127.0.0.2");
  EXPECT_NE(elsewhere.exit_code, 0);

  EXPECT_EQ(Failures("peer_not_permitted"), 1) << Scrape();
  EXPECT_EQ(Failures("no_certificate"), 1) << Scrape();
  EXPECT_EQ(Failures("not_tls"), 1) << Scrape();
  EXPECT_EQ(MetricSum(Scrape(), "logfold_senders_refused_total", {"input=\"metrics\""}), 1);
  EXPECT_NE(daemon_.Stderr().find("metrics: TLS handshake with 127.0.0.1 failed "
                                  "(peer_not_permitted): certificate names [intruder.evil.org"),
            std::string::npos);
}

TEST_F(MetricsTlsTest, CertificateRotatesOnSighupAndABadOneIsRefused) {
  const auto presented = [&] {
    const daemon_test::CommandResult r = daemon_test::RunCommand(
        {"/bin/sh", "-c",
         "openssl s_client -connect 127.0.0.1:" + std::to_string(port_) + " -CAfile " +
             pki_.CaCert() + " -cert " + pki_.Cert("scraper") + " -key " + pki_.Key("scraper") +
             " </dev/null"},
        dir_, milliseconds(15000));
    const std::size_t begin = r.out.find("-----BEGIN CERTIFICATE-----");
    const std::string end_marker = "-----END CERTIFICATE-----\n";
    const std::size_t end = r.out.find(end_marker, begin);
    if (begin == std::string::npos || end == std::string::npos) return std::string();
    return r.out.substr(begin, end + end_marker.size() - begin);
  };
  ASSERT_EQ(presented(), daemon_test::ReadFile(pki_.Cert("server")));
  std::filesystem::copy_file(pki_.Cert("rotated"), dir_ / "live.pem",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(pki_.Key("rotated"), dir_ / "live.key",
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_TRUE(daemon_.Signal(SIGHUP));
  ASSERT_TRUE(WaitUntil([&] { return MetricSum(Scrape(), "logfold_reloads_total", {}) >= 1; },
                        milliseconds(15000)));
  EXPECT_EQ(presented(), daemon_test::ReadFile(pki_.Cert("rotated")));

  daemon_test::WriteFile(dir_ / "live.key", "-----BEGIN PRIVATE KEY-----\nbroken\n");
  ASSERT_TRUE(daemon_.Signal(SIGHUP));
  ASSERT_TRUE(
      WaitUntil([&] { return MetricSum(Scrape(), "logfold_reload_failures_total", {}) >= 1; },
                milliseconds(15000)));
  EXPECT_EQ(presented(), daemon_test::ReadFile(pki_.Cert("rotated")));
  EXPECT_NE(daemon_.Stderr().find("reload refused, keeping the running config and certificates: "
                                  "metrics: "),
            std::string::npos);
}

}  // namespace
}  // namespace logfold
