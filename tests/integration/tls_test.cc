// Syslog over TLS end to end: real rsyslogd instances (the ossl network driver) forward to
// `logfold serve` with mutual authentication; refused peers (not permitted, expired, plain
// TCP) are counted while an allowed sender keeps flowing; certificates rotate on SIGHUP.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/rsyslogd.h"
#include "tests/support/test_pki.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::MetricSum;
using daemon_test::TcpClient;
using daemon_test::TempDir;
using daemon_test::TestPki;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;

const std::string kInput = "input=\"tls-in\"";

// A private rsyslogd (tests/support/rsyslogd.h): imtcp on an ephemeral loopback port (the test
// feeds it lines), and omfwd over TLS (ossl driver, x509/name authentication of logfold as
// "localhost") with the given client certificate.
class RsyslogTls {
 public:
  RsyslogTls(const TempDir& dir, std::string name) : rsyslogd_(dir, std::move(name)) {}

  bool Start(std::uint16_t logfold_port, const std::string& ca, const std::string& cert,
             const std::string& key, std::string& error) {
    const std::string body =
        rsyslogd_.ImtcpInput("fwd") + "ruleset(name=\"fwd\") {\n" +
        "  action(type=\"omfwd\" target=\"127.0.0.1\" port=\"" + std::to_string(logfold_port) +
        "\" protocol=\"tcp\" TCP_Framing=\"octet-counted\" " +
        "template=\"RSYSLOG_SyslogProtocol23Format\" StreamDriver=\"ossl\" StreamDriverMode=\"1\" "
        "StreamDriverAuthMode=\"x509/name\" StreamDriverPermittedPeers=\"localhost\")\n}\n";
    const std::string tls_files = "\n  defaultNetstreamDriverCAFile=\"" + ca +
                                  "\" defaultNetstreamDriverCertFile=\"" + cert +
                                  "\" defaultNetstreamDriverKeyFile=\"" + key + "\"";
    if (!rsyslogd_.Start(body, error, nullptr, tls_files)) return false;
    feed_ = std::make_unique<TcpClient>(rsyslogd_.imtcp_port());
    return feed_->connected();
  }

  // Lines "<13>1 ... NAME-i" for i in [from, to), fed to rsyslog's imtcp.
  bool Feed(int from, int to) {
    const std::string& name = rsyslogd_.name();
    std::string chunk;
    for (int i = from; i < to; ++i) {
      chunk += "<13>1 2024-05-01T12:00:00Z host-" + name + " app - - - line " + name + " " +
               std::to_string(i) + "\n";
    }
    return feed_ && feed_->Send(chunk);
  }

  std::optional<int> Stop() {
    if (feed_) feed_->Close();
    return rsyslogd_.Stop();
  }

  std::string Diagnostics() const { return rsyslogd_.Diagnostics(); }

 private:
  rsyslog_test::Rsyslogd rsyslogd_;
  std::unique_ptr<TcpClient> feed_;
};

class TlsInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    if (rsyslog_test::RsyslogdPath().empty()) {
      GTEST_SKIP() << "rsyslogd not installed (Debian package rsyslog)";
    }
    if (!rsyslog_test::HaveRsyslogModule("lmnsd_ossl")) {
      GTEST_SKIP() << "rsyslog's ossl driver not installed (Debian package rsyslog-openssl)";
    }
    ASSERT_TRUE(pki_.MakeCa()) << pki_.error();
    ASSERT_TRUE(pki_.MakeLeaf("server", "localhost")) << pki_.error();
    ASSERT_TRUE(pki_.MakeLeaf("sender", "web-01.example.net")) << pki_.error();
  }

  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "--- logfold ---\n%s\n", daemon_.Stderr().c_str());
  }

  // A tls input requiring client certificates from *.example.net, events to a file.
  void StartLogfold() {
    Json config = daemon_test::LoopbackConfig(dir_ / "events.ndjson");
    config["inputs"] = Json::array({{{"name", "tls-in"},
                                     {"type", "tls"},
                                     {"port", 0},
                                     {"allowed_senders", Json::array({"127.0.0.0/8"})},
                                     {"handshake_timeout", "5s"},
                                     {"tls",
                                      {{"cert_file", (dir_ / "live.pem").string()},
                                       {"key_file", (dir_ / "live.key").string()},
                                       {"ca_file", pki_.CaCert()},
                                       {"client_auth", "required"},
                                       {"permitted_peers", Json::array({"*.example.net"})}}}}});
    std::filesystem::copy_file(pki_.Cert("server"), dir_ / "live.pem");
    std::filesystem::copy_file(pki_.Key("server"), dir_ / "live.key");
    daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
    ASSERT_TRUE(daemon_.Start(dir_ / "logfold.json")) << daemon_.Stderr();
    port_ = daemon_.InputPort("tls-in", "tls");
    ASSERT_NE(port_, 0);
  }

  double Received() const { return daemon_.Metric("logfold_received_total", {kInput}); }
  double Failures(const std::string& reason) const {
    return daemon_.Metric("logfold_tls_handshake_failures_total",
                          {kInput, "reason=\"" + reason + "\""});
  }

  bool WaitReceived(double n) const {
    return WaitUntil([&] { return Received() >= n; }, milliseconds(30000), milliseconds(20));
  }

  // SIGTERM logfold and check that every received line is in the events file.
  void StopAndCheckAccounting(double expected) {
    ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_lines_processed_total", {}, expected,
                                          milliseconds(30000)));
    EXPECT_EQ(Received(), expected);
    ASSERT_TRUE(daemon_.Signal(SIGTERM));
    const std::optional<int> code = daemon_.WaitExit(milliseconds(30000));
    ASSERT_TRUE(code.has_value());
    EXPECT_EQ(*code, 0);
    std::vector<Json> events;
    std::string error;
    ASSERT_TRUE(
        daemon_test::ParseNdjson(daemon_test::ReadFile(dir_ / "events.ndjson"), events, error))
        << error;
    EXPECT_EQ(daemon_test::LinesAccounted(events), static_cast<std::uint64_t>(expected));
  }

  // The PEM certificate logfold presents to a new connection (via `openssl s_client`).
  std::string PresentedCertificate() {
    const daemon_test::CommandResult r =
        daemon_test::RunCommand({"/bin/sh", "-c",
                                 "openssl s_client -connect 127.0.0.1:" + std::to_string(port_) +
                                     " -CAfile " + pki_.CaCert() + " -cert " + pki_.Cert("sender") +
                                     " -key " + pki_.Key("sender") + " </dev/null"},
                                dir_, milliseconds(20000));
    const std::size_t begin = r.out.find("-----BEGIN CERTIFICATE-----");
    const std::string end_marker = "-----END CERTIFICATE-----\n";
    const std::size_t end = r.out.find(end_marker, begin);
    if (begin == std::string::npos || end == std::string::npos) return "";
    return r.out.substr(begin, end + end_marker.size() - begin);
  }

  TempDir dir_;
  TestPki pki_{dir_};
  DaemonProcess daemon_{dir_};
  std::uint16_t port_ = 0;
};

TEST_F(TlsInputTest, RsyslogMutualTlsEveryLineAccounted) {
  StartLogfold();
  RsyslogTls rsyslog(dir_, "allowed");
  std::string error;
  ASSERT_TRUE(rsyslog.Start(port_, pki_.CaCert(), pki_.Cert("sender"), pki_.Key("sender"), error))
      << error;
  constexpr int kLines = 2000;
  ASSERT_TRUE(rsyslog.Feed(0, kLines));
  ASSERT_TRUE(WaitReceived(kLines)) << Received() << "\n" << rsyslog.Diagnostics();
  EXPECT_EQ(rsyslog.Stop(), 0);
  EXPECT_EQ(daemon_.Metric("logfold_tls_handshake_failures_total"), 0);
  EXPECT_EQ(daemon_.Metric("logfold_tls_handshakes_total", {kInput}), 1);
  EXPECT_EQ(daemon_.Metric("logfold_framing_errors_total"), 0);
  StopAndCheckAccounting(kLines);
}

TEST_F(TlsInputTest, RefusedPeersAreCountedWhileAnAllowedSenderFlows) {
  ASSERT_TRUE(pki_.MakeLeaf("intruder", "intruder.evil.org")) << pki_.error();
  ASSERT_TRUE(pki_.MakeLeaf("expired", "web-02.example.net", -1)) << pki_.error();
  StartLogfold();
  std::string error;
  RsyslogTls allowed(dir_, "allowed");
  ASSERT_TRUE(allowed.Start(port_, pki_.CaCert(), pki_.Cert("sender"), pki_.Key("sender"), error))
      << error;
  ASSERT_TRUE(allowed.Feed(0, 500));
  ASSERT_TRUE(WaitReceived(500));

  RsyslogTls intruder(dir_, "intruder");
  ASSERT_TRUE(
      intruder.Start(port_, pki_.CaCert(), pki_.Cert("intruder"), pki_.Key("intruder"), error))
      << error;
  RsyslogTls expired(dir_, "expired");
  ASSERT_TRUE(expired.Start(port_, pki_.CaCert(), pki_.Cert("expired"), pki_.Key("expired"), error))
      << error;
  ASSERT_TRUE(intruder.Feed(0, 100));
  ASSERT_TRUE(expired.Feed(0, 100));
  TcpClient plain(port_);
  ASSERT_TRUE(plain.connected());
  ASSERT_TRUE(plain.Send("<13>1 2024-05-01T12:00:00Z plain app - - - in the clear\n"));
  ASSERT_TRUE(allowed.Feed(500, 1000));

  EXPECT_TRUE(WaitUntil([&] { return Failures("peer_not_permitted") >= 1; }, milliseconds(30000)))
      << daemon_.Metrics() << intruder.Diagnostics();
  EXPECT_TRUE(WaitUntil([&] { return Failures("certificate_expired") >= 1; }, milliseconds(30000)))
      << daemon_.Metrics() << expired.Diagnostics();
  EXPECT_TRUE(WaitUntil([&] { return Failures("not_tls") >= 1; }, milliseconds(30000)))
      << daemon_.Metrics();
  EXPECT_TRUE(plain.WaitPeerClose()) << "the plaintext client is disconnected";

  ASSERT_TRUE(allowed.Feed(1000, 1500));
  ASSERT_TRUE(WaitReceived(1500)) << Received();
  EXPECT_EQ(allowed.Stop(), 0);
  intruder.Stop();
  expired.Stop();
  // The allowed sender's one connection was never disturbed by the refusals around it.
  EXPECT_EQ(daemon_.Metric("logfold_tls_handshakes_total", {kInput}), 1);
  const std::string log = daemon_.Stderr();
  EXPECT_NE(log.find("failed (peer_not_permitted): certificate names [intruder.evil.org"),
            std::string::npos);
  EXPECT_NE(log.find("failed (certificate_expired)"), std::string::npos);
  StopAndCheckAccounting(1500);  // exactly the allowed sender's lines
}

TEST_F(TlsInputTest, CertificateRotationBySighupUnderLoad) {
  ASSERT_TRUE(pki_.MakeLeaf("rotated", "localhost")) << pki_.error();
  StartLogfold();
  std::string error;
  RsyslogTls rsyslog(dir_, "allowed");
  ASSERT_TRUE(rsyslog.Start(port_, pki_.CaCert(), pki_.Cert("sender"), pki_.Key("sender"), error))
      << error;
  const std::string original = daemon_test::ReadFile(pki_.Cert("server"));
  const std::string rotated = daemon_test::ReadFile(pki_.Cert("rotated"));
  ASSERT_EQ(PresentedCertificate(), original);

  // Load keeps coming while the certificate files are replaced and SIGHUP arrives.
  ASSERT_TRUE(rsyslog.Feed(0, 1000));
  std::filesystem::copy_file(pki_.Cert("rotated"), dir_ / "live.pem",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(pki_.Key("rotated"), dir_ / "live.key",
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_TRUE(daemon_.Signal(SIGHUP));
  ASSERT_TRUE(rsyslog.Feed(1000, 2000));
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_reloads_total", {}, 1));
  EXPECT_EQ(PresentedCertificate(), rotated) << "new connections get the new certificate";

  // A broken certificate refuses the reload and the rotated one stays in use.
  daemon_test::WriteFile(dir_ / "live.pem", "-----BEGIN CERTIFICATE-----\nbroken\n");
  ASSERT_TRUE(daemon_.Signal(SIGHUP));
  ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_reload_failures_total", {}, 1));
  ASSERT_TRUE(rsyslog.Feed(2000, 3000));
  EXPECT_EQ(PresentedCertificate(), rotated);
  EXPECT_NE(daemon_.Stderr().find("reload refused, keeping the running config and certificates: "
                                  "input tls-in: certificate "),
            std::string::npos);

  ASSERT_TRUE(WaitReceived(3000)) << Received();
  // rsyslog's connection survived both reloads: one handshake for it, plus the three probes.
  EXPECT_EQ(daemon_.Metric("logfold_tls_handshakes_total", {kInput}), 4);
  EXPECT_EQ(rsyslog.Stop(), 0);
  StopAndCheckAccounting(3000);
}

// logfold forwards its events with the syslog output over TLS (RFC 5425, client
// certificate) to another logfold's tls input: every event the sender emitted arrives.
TEST_F(TlsInputTest, LogfoldToLogfoldOverTlsExactAccounting) {
  StartLogfold();  // the receiver
  TempDir sender_dir;
  DaemonProcess sender(sender_dir);
  Json config = daemon_test::LoopbackConfig(sender_dir / "events.ndjson");
  config["outputs"].push_back({{"name", "relay"},
                               {"type", "syslog"},
                               {"address", "localhost"},
                               {"port", port_},
                               {"tls",
                                {{"ca_file", pki_.CaCert()},
                                 {"cert_file", pki_.Cert("sender")},
                                 {"key_file", pki_.Key("sender")}}}});
  daemon_test::WriteFile(sender_dir / "logfold.json", config.dump(2));
  ASSERT_TRUE(sender.Start(sender_dir / "logfold.json")) << sender.Stderr();
  TcpClient feed(sender.InputPort("tcp-in", "tcp"));
  ASSERT_TRUE(feed.connected());
  constexpr int kLines = 3000;
  std::string chunk;
  for (int i = 0; i < kLines; ++i) {
    // Three shapes on two hosts: folded into a handful of groups, each with a summary.
    chunk += "<13>1 2024-05-01T12:00:00Z host-" + std::to_string(i % 2) + " app - - - " +
             (i % 3 == 0   ? "user " + std::to_string(i) + " logged in"
              : i % 3 == 1 ? "disk sda" + std::to_string(i) + " is full"
                           : "request " + std::to_string(i) + " took 5 ms") +
             "\n";
  }
  ASSERT_TRUE(feed.Send(chunk));
  feed.Close();
  ASSERT_TRUE(
      sender.WaitMetricAtLeast("logfold_lines_processed_total", {}, kLines, milliseconds(30000)));
  ASSERT_TRUE(sender.Signal(SIGTERM));  // closes every group: summaries go out too
  const std::optional<int> code = sender.WaitExit(milliseconds(30000));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << sender.Stderr();
  EXPECT_NE(sender.Stderr().find("sink relay: TLS connection to localhost:"), std::string::npos)
      << sender.Stderr();

  std::vector<Json> sent;
  std::string error;
  ASSERT_TRUE(
      daemon_test::ParseNdjson(daemon_test::ReadFile(sender_dir / "events.ndjson"), sent, error))
      << error;
  EXPECT_EQ(daemon_test::LinesAccounted(sent), static_cast<std::uint64_t>(kLines));
  ASSERT_GT(sent.size(), 0U);
  ASSERT_TRUE(WaitReceived(static_cast<double>(sent.size()))) << Received();
  EXPECT_EQ(daemon_.Metric("logfold_framing_errors_total"), 0);
  EXPECT_EQ(daemon_.Metric("logfold_parse_total", {"outcome=\"ok\""}),
            static_cast<double>(sent.size()));
  StopAndCheckAccounting(static_cast<double>(sent.size()));
}

}  // namespace
}  // namespace logfold
