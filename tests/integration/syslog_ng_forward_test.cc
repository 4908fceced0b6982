// Integration test with a real, private syslog-ng forwarding to `logfold serve`: the README's
// syslog-ng snippet (syslog() driver, RFC 5424 octet-counted over TCP) and its variants over
// UDP and with the network() driver (RFC 3164), every line accounted field by field. Debian's
// syslog-ng conflicts with rsyslog, so scripts/syslog-ng-fixture unpacks it into a cache dir.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/base64.h"
#include "tests/support/daemon_process.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;
namespace fs = std::filesystem;

constexpr int kLinesPerDriver = 40;

// Where scripts/syslog-ng-fixture unpacked the package: $LOGFOLD_SYSLOG_NG, else
// ~/.cache/logfold/syslog-ng; its file tree is under root/.
fs::path FixtureRoot() {
  if (const char* dir = std::getenv("LOGFOLD_SYSLOG_NG"); dir != nullptr && *dir != '\0') {
    return fs::path(dir) / "root";
  }
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr ? home : "/root") / ".cache/logfold/syslog-ng/root";
}

// The README's syslog-ng destination and log statements, verbatim; empty if absent.
std::pair<std::string, std::string> ReadmeSnippet() {
  const std::string readme = daemon_test::ReadFile(fs::path(LOGFOLD_SOURCE_DIR) / "README.md");
  const auto line_at = [&](std::string_view start) {
    const std::size_t at = readme.find(start);
    if (at == std::string::npos) return std::string();
    return readme.substr(at, readme.find('\n', at) - at);
  };
  return {line_at("destination d_logfold {"), line_at("log { source(s_src);")};
}

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  const std::size_t at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// One way of forwarding: a syslog-ng source socket the test writes to, the destination
// driver it forwards with, and the logfold input that receives it.
struct Driver {
  std::string name;  // also the first word of each of its messages
  bool rfc5424;      // syslog() sends RFC 5424, network() RFC 3164
  std::string input, proto;
};

const std::vector<Driver>& Drivers() {
  static const std::vector<Driver> d = {{"syslog-tcp", true, "syslog-tcp", "tcp"},
                                        {"syslog-udp", true, "syslog-udp", "udp"},
                                        {"network-tcp", false, "network-tcp", "tcp"},
                                        {"network-udp", false, "network-udp", "udp"}};
  return d;
}

// Line i of every driver, as a local program's syslog() call would reach syslog-ng.
struct Line {
  int facility, severity;
  std::string host, app, procid, message;
  int second;
  std::string text;  // what the test writes to syslog-ng's socket, LF-terminated
};

Line MakeLine(const Driver& d, int i) {
  static constexpr const char* kApps[] = {"sshd", "cron", "app.worker", "postfix-smtpd"};
  static constexpr int kFacilities[] = {1, 3, 4, 16, 23};
  Line l;
  l.facility = kFacilities[i % 5];
  l.severity = i % 8;
  l.host = "web-" + std::to_string(i % 3);
  l.app = kApps[i % 4];
  l.procid = i % 5 == 0 ? "" : std::to_string(1000 + i);
  l.message = d.name + " request " + std::to_string(i) + " took " + std::to_string(i * 7) + " ms";
  if (i == 3) l.message += " caf\xc3\xa9";         // UTF-8
  if (i == 4) l.message += " raw \xff\xfe bytes";  // not UTF-8: travels in message_base64
  l.second = i % 60;
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "Nov 25 12:00:%02d", l.second);
  l.text = "<" + std::to_string(l.facility * 8 + l.severity) + ">" + stamp + " " + l.host + " " +
           l.app + (l.procid.empty() ? "" : "[" + l.procid + "]") + ": " + l.message + "\n";
  return l;
}

using test::FromBase64;

// Writes `data` on a new connection to the unix stream socket at `path`; false if the
// connection is refused or breaks. Empty data only probes: bound is not listening (syslog-ng
// creates the socket's file at bind() and listens later).
bool WriteUnixStream(const std::string& path, std::string_view data) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return false;
  path.copy(addr.sun_path, path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  while (ok && !data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    ok = n > 0;
    if (ok) data.remove_prefix(static_cast<std::size_t>(n));
  }
  ::close(fd);
  return ok;
}

class SyslogNgForwardTest : public ::testing::Test {
 protected:
  // syslog-ng reads RFC 3164 stamps (no zone) as local time; logfold as UTC.
  static void SetUpTestSuite() { ::setenv("TZ", "UTC", 1); }

  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    root_ = FixtureRoot();
    binary_ = root_ / "usr/sbin/syslog-ng";
    if (::access(binary_.c_str(), X_OK) != 0) {
      GTEST_SKIP() << binary_ << " missing: run scripts/syslog-ng-fixture";
    }
  }

  void TearDown() override {
    if (syslog_ng_ > 0) daemon_test::KillAndReap(syslog_ng_);
    if (HasFailure()) {
      std::fprintf(stderr, "--- logfold stderr ---\n%s\n--- syslog-ng ---\n%s\n",
                   daemon_.Stderr().c_str(), daemon_test::ReadFile(dir_ / "sng.stderr").c_str());
    }
  }

  std::string SourceSocket(const Driver& d) const { return dir_ / (d.name + ".sock"); }

  // syslog-ng -F with its own config, persist, pid and control files, LD_LIBRARY_PATH and
  // module path into the unpacked package; waits until its sources listen.
  void StartSyslogNg(const std::string& config) {
    daemon_test::WriteFile(dir_ / "syslog-ng.conf", config);
    std::string library_path, module_path;
    for (const fs::directory_entry& e : fs::directory_iterator(root_ / "usr/lib")) {
      if (e.path().filename().string().ends_with("-linux-gnu")) {
        library_path += e.path().string() + ":";
      }
    }
    library_path += (root_ / "usr/lib/syslog-ng").string();
    for (const fs::directory_entry& e : fs::directory_iterator(root_ / "usr/lib/syslog-ng")) {
      if (fs::exists(e.path() / "libafsocket.so")) module_path = e.path();
    }
    ASSERT_FALSE(module_path.empty()) << "no syslog-ng module dir under " << root_;
    daemon_test::SpawnOptions options;
    options.env = {{"LD_LIBRARY_PATH", library_path}};
    syslog_ng_ = daemon_test::Spawn(
        {binary_, "-F", "-e", "--module-path=" + module_path, "-f", dir_ / "syslog-ng.conf", "-R",
         dir_ / "syslog-ng.persist", "-p", dir_ / "syslog-ng.pid", "-c", dir_ / "syslog-ng.ctl"},
        dir_ / "sng.stdout", dir_ / "sng.stderr", options);
    ASSERT_GT(syslog_ng_, 0);
    ASSERT_TRUE(WaitUntil(
        [&] {
          for (const Driver& d : Drivers()) {
            if (!WriteUnixStream(SourceSocket(d), "")) return false;
          }
          return true;
        },
        milliseconds(15000)))
        << "syslog-ng did not listen: " << daemon_test::ReadFile(dir_ / "sng.stderr");
  }

  std::vector<Json> Events() {
    std::string text = daemon_test::ReadFile(dir_ / "events.ndjson");
    text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    std::vector<Json> events;
    std::string error;
    daemon_test::ParseNdjson(text, events, error);
    return events;
  }

  TempDir dir_;
  DaemonProcess daemon_{dir_};
  fs::path root_, binary_;
  pid_t syslog_ng_ = -1;
};

TEST_F(SyslogNgForwardTest, ReadmeSnippetAndNetworkDriverOverTcpAndUdp) {
  const auto [destination, log] = ReadmeSnippet();
  ASSERT_NE(destination.find("syslog(\"127.0.0.1\" port(5514) transport(\"tcp\"))"),
            std::string::npos)
      << "README's syslog-ng snippet changed: " << destination;
  ASSERT_FALSE(log.empty());

  // logfold: one input per driver, one event per line (annotate) in arrival order.
  Json config = daemon_test::LoopbackConfig(dir_ / "events.ndjson");
  config["inputs"] = Json::array();
  for (const Driver& d : Drivers()) {
    config["inputs"].push_back({{"name", d.input}, {"type", d.proto}, {"port", 0}});
  }
  config["engine"]["mode"] = "annotate";
  config["workers"]["threads"] = 1;
  daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
  ASSERT_TRUE(daemon_.Start(dir_ / "logfold.json")) << daemon_.Stderr();

  // syslog-ng: the README's statements for syslog-tcp (only the port changed), the same
  // destination with transport("udp") and with the network() driver for the others. Each
  // driver has its own source socket: a local program's line, with a hostname (relayed).
  std::string conf =
      "@version: 3.38\n"
      "options { keep-hostname(yes); chain-hostnames(no); use-dns(no); stats-freq(0); };\n";
  for (const Driver& d : Drivers()) {
    const std::string port = std::to_string(daemon_.InputPort(d.input, d.proto));
    ASSERT_NE(port, "0") << d.input;
    std::string dest = Replace(destination, "port(5514)", "port(" + port + ")");
    if (!d.rfc5424) dest = Replace(dest, "syslog(", "network(");
    if (d.proto == "udp") dest = Replace(dest, "transport(\"tcp\")", "transport(\"udp\")");
    std::string id = d.name == "syslog-tcp" ? "" : "_" + d.name;
    std::replace(id.begin(), id.end(), '-', '_');
    const std::string dest_name = "d_logfold" + id, source_name = "s_src" + id;
    conf += "source " + source_name + " { unix-stream(\"" + SourceSocket(d) +
            "\" flags(expect-hostname)); };\n";
    conf += Replace(dest, "d_logfold", dest_name) + "\n";
    conf += Replace(Replace(log, "s_src", source_name), "d_logfold", dest_name) + "\n";
  }
  StartSyslogNg(conf);

  std::map<std::string, std::pair<const Driver*, Line>> want;  // by message
  for (const Driver& d : Drivers()) {
    std::string stream;
    for (int i = 0; i < kLinesPerDriver; ++i) {
      Line l = MakeLine(d, i);
      stream += l.text;
      std::string key = l.message;
      want.emplace(std::move(key), std::make_pair(&d, std::move(l)));
    }
    ASSERT_TRUE(WriteUnixStream(SourceSocket(d), stream)) << d.name;
  }
  const std::size_t total = want.size();
  std::vector<Json> events;
  WaitUntil(
      [&] {
        events = Events();
        return events.size() >= total;
      },
      milliseconds(20000));
  for (const Driver& d : Drivers()) {
    EXPECT_EQ(daemon_.Metric("logfold_received_total", {"input=\"" + d.input + "\""}),
              kLinesPerDriver)
        << d.input;
    EXPECT_EQ(daemon_.Metric("logfold_framing_errors_total", {"input=\"" + d.input + "\""}), 0);
  }
  EXPECT_EQ(daemon_.Metric("logfold_dropped_total"), 0);

  // syslog-ng and logfold stop cleanly; nothing more and nothing less than what was fed.
  ASSERT_EQ(::kill(syslog_ng_, SIGTERM), 0);
  EXPECT_EQ(daemon_test::WaitExit(syslog_ng_, milliseconds(15000)), 0);
  syslog_ng_ = -1;
  ASSERT_TRUE(daemon_.Signal(SIGTERM));
  EXPECT_EQ(daemon_.WaitExit(), 0);
  events = Events();
  ASSERT_EQ(events.size(), total) << "every line once, and nothing else";

  for (const Json& e : events) {
    SCOPED_TRACE(e.dump());
    // A message that is not UTF-8 is exact only in message_base64.
    const bool base64 = e.contains("message_base64");
    const auto it =
        want.find(base64 ? FromBase64(e.value("message_base64", "")) : e.value("message", ""));
    ASSERT_NE(it, want.end()) << "an unexpected or altered message";
    const auto& [driver, line] = it->second;
    EXPECT_EQ(base64, line.message.find('\xff') != std::string::npos);
    EXPECT_EQ(e.value("kind", ""), "annotate");
    EXPECT_EQ(e.value("format", ""), driver->rfc5424 ? "rfc5424" : "rfc3164");
    EXPECT_FALSE(e.contains("parse_error"));
    EXPECT_EQ(e.value("host", ""), line.host);
    EXPECT_EQ(e.value("app", ""), line.app);
    EXPECT_EQ(e.value("procid", ""), line.procid);
    EXPECT_EQ(e.value("facility", -1), line.facility);
    EXPECT_EQ(e.value("severity", -1), line.severity);
    // The year is each sender's guess; month, day and time are what was sent (UTC).
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "-11-25T12:00:%02d", line.second);
    EXPECT_EQ(e.value("time", "").substr(4, 15), stamp);
    // syslog() adds its sequence number as structured data.
    EXPECT_EQ(e.value("structured_data", "").starts_with("[meta sequenceId=\""), driver->rfc5424);
    want.erase(it);  // each message once
  }
  EXPECT_TRUE(want.empty());
}

}  // namespace
}  // namespace logfold
