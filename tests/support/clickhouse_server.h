// Test fixture: a private ClickHouse server (Debian's clickhouse-server 18.16) on a free
// loopback port, with its own config and data under a temp dir, queried over HTTP.
#ifndef LOGFOLD_TESTS_CLICKHOUSE_SERVER_H_
#define LOGFOLD_TESTS_CLICKHOUSE_SERVER_H_

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/daemon_process.h"

namespace logfold {
namespace clickhouse_test {

using daemon_test::HttpResponse;
using daemon_test::TempDir;
using std::chrono::milliseconds;

// Debian installs the server in /usr/sbin, which is not in every user's PATH.
inline std::string ServerBinary() {
  if (daemon_test::HaveProgram("clickhouse-server")) return "clickhouse-server";
  if (::access("/usr/sbin/clickhouse-server", X_OK) == 0) return "/usr/sbin/clickhouse-server";
  return "";
}

// A loopback TCP port that was free a moment ago (the kernel's pick for port 0). The server
// binds it a little later; Start() retries with another port if someone took it meanwhile.
inline std::uint16_t PickFreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a = daemon_test::Loopback(0);
  socklen_t len = sizeof a;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

// Percent-encodes everything but RFC 3986 unreserved characters, for a URL query value.
inline std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// The statements of an SQL script: `--` comments dropped, split at `;` outside quotes,
// blank statements left out. Enough for config/*.sql, which the HTTP interface cannot run
// as one request (it takes one statement at a time).
inline std::vector<std::string> SplitSqlStatements(std::string_view script) {
  std::vector<std::string> out;
  std::string current;
  char quote = 0;
  for (std::size_t i = 0; i < script.size(); ++i) {
    const char c = script[i];
    if (quote != 0) {
      current += c;
      if (c == '\\' && i + 1 < script.size()) {
        current += script[++i];
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '\'' || c == '"' || c == '`') {
      quote = c;
      current += c;
    } else if (c == '-' && i + 1 < script.size() && script[i + 1] == '-') {
      while (i < script.size() && script[i] != '\n') ++i;
      current += '\n';
    } else if (c == ';') {
      if (current.find_first_not_of(" \t\r\n") != std::string::npos) out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (current.find_first_not_of(" \t\r\n") != std::string::npos) out.push_back(current);
  return out;
}

// clickhouse-server in the foreground with a minimal config: HTTP (and HTTPS when asked), on
// 127.0.0.1, data, temporary and user files in `dir`, a password-less `default` user and a user
// `logfold` with password kPassword, both limited to loopback. Stop() and Start() again reuse the
// port and the data (a restart); the destructor kills a server still running, and `dir` (owned by
// the caller) removes everything it wrote.
class ClickHouseServer {
 public:
  static constexpr std::string_view kPassword = "fold-secret";

  explicit ClickHouseServer(const TempDir& dir) : root_(dir / "clickhouse") {}
  ~ClickHouseServer() { daemon_test::KillAndReap(pid_); }
  ClickHouseServer(const ClickHouseServer&) = delete;
  ClickHouseServer& operator=(const ClickHouseServer&) = delete;

  // Starts the server and waits until GET /ping answers "Ok.". The first start picks a free
  // port (a few tries, in case another process takes it first); later starts reuse it.
  // False on failure, with the reason in error().
  bool Start(milliseconds timeout = milliseconds(20000)) {
    const std::string binary = ServerBinary();
    if (binary.empty()) {
      error_ = "clickhouse-server is not installed";
      return false;
    }
    const bool fixed_port = port_ != 0;
    for (int attempt = 0; attempt < (fixed_port ? 1 : 5); ++attempt) {
      if (!fixed_port) port_ = PickFreePort();
      if (!fixed_port && !https_cert_.empty()) {
        do {
          https_port_ = PickFreePort();
        } while (https_port_ == port_);
      }
      if (!WriteConfig()) return false;
      ++starts_;
      pid_ = daemon_test::Spawn({binary, "--config-file=" + (root_ / "config.xml").string()},
                                RunPath(starts_, "out"), RunPath(starts_, "log"));
      if (pid_ < 0) {
        error_ = "cannot spawn " + binary;
        return false;
      }
      if (WaitReady(timeout)) return true;
      if (fixed_port || Log().find("Address already in use") == std::string::npos) break;
    }
    return false;
  }

  // Stops the server as an administrator would (SIGTERM: queries in progress finish), or
  // kills it (SIGKILL) when `kill` is set or it has not exited within `timeout`. True if it
  // exited by itself.
  bool Stop(bool kill = false, milliseconds timeout = milliseconds(20000)) {
    if (pid_ <= 0) return false;
    ::kill(pid_, kill ? SIGKILL : SIGTERM);
    const std::optional<int> code = daemon_test::WaitExit(pid_, timeout);
    pid_ = -1;
    return code.has_value();
  }

  // Also serve HTTPS on another free loopback port with this PEM certificate and key (call
  // before the first Start).
  void EnableHttps(std::string cert_file, std::string key_file) {
    https_cert_ = std::move(cert_file);
    https_key_ = std::move(key_file);
  }
  std::uint16_t https_port() const { return https_port_; }

  bool running() const { return pid_ > 0; }
  std::uint16_t http_port() const { return port_; }
  const std::string& error() const { return error_; }
  // Everything the server wrote (its log: warnings and errors) in all its runs.
  std::string Log() const {
    std::string all;
    for (int run = 1; run <= starts_; ++run) {
      all += daemon_test::ReadFile(RunPath(run, "out"));
      all += daemon_test::ReadFile(RunPath(run, "log"));
    }
    return all;
  }

  // Runs one statement (the POST body); `data` goes after it, as for INSERT ... FORMAT.
  HttpResponse Query(std::string_view sql, milliseconds timeout = milliseconds(30000)) const {
    return daemon_test::HttpRequest(port_, "POST", "/", sql, timeout);
  }
  HttpResponse Insert(std::string_view insert_sql, std::string_view data,
                      std::string_view settings = {}) const {
    std::string target = "/?query=" + UrlEncode(insert_sql);
    if (!settings.empty()) target += "&" + std::string(settings);
    return daemon_test::HttpRequest(port_, "POST", target, data, milliseconds(30000));
  }
  // The result of a query whose answer is one line, without its newline; "" on an error
  // (with the server's answer in error()).
  std::string QueryValue(std::string_view sql) {
    const HttpResponse r = Query(sql);
    if (r.status != 200) {
      error_ = "HTTP " + std::to_string(r.status) + ": " + r.body;
      return "";
    }
    std::string v = r.body;
    while (!v.empty() && v.back() == '\n') v.pop_back();
    return v;
  }

  // Runs every statement of an SQL file in order. False at the first failure (in error()).
  bool ApplySqlFile(const std::filesystem::path& path) {
    const std::string script = daemon_test::ReadFile(path);
    if (script.empty()) {
      error_ = "cannot read " + path.string();
      return false;
    }
    for (const std::string& statement : SplitSqlStatements(script)) {
      const HttpResponse r = Query(statement);
      if (r.status != 200) {
        error_ = path.string() + ": HTTP " + std::to_string(r.status) + ": " + r.body +
                 "\nstatement: " + statement;
        return false;
      }
    }
    return true;
  }

 private:
  // Output of the server's `run`-th start: "out" (stdout) or "log" (stderr, its log).
  std::string RunPath(int run, std::string_view what) const {
    return (root_ / ("run" + std::to_string(run) + "." + std::string(what))).string();
  }

  bool WriteConfig() {
    std::error_code ec;
    for (const char* sub : {"data", "tmp", "user_files"}) {
      std::filesystem::create_directories(root_ / sub, ec);
      if (ec) {
        error_ = "cannot create " + (root_ / sub).string() + ": " + ec.message();
        return false;
      }
    }
    const std::string r = root_.string();
    daemon_test::WriteFile(root_ / "config.xml", R"(<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>)" + std::to_string(port_) + R"(</http_port>
)" + HttpsConfig() + R"(
  <path>)" + r + R"(/data/</path>
  <tmp_path>)" + r + R"(/tmp/</tmp_path>
  <user_files_path>)" + r + R"(/user_files/</user_files_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <!-- As Debian's config.xml: an idle keep-alive connection is closed after 3 s, which also
       bounds how long a SIGTERM waits for open connections. -->
  <keep_alive_timeout>3</keep_alive_timeout>
  <mark_cache_size>67108864</mark_cache_size>
</yandex>
)");
    daemon_test::WriteFile(root_ / "users.xml", R"(<?xml version="1.0"?>
<yandex>
  <profiles><default/></profiles>
  <quotas><default/></quotas>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
    <logfold>
      <password>)" + std::string(kPassword) + R"(</password>
      <networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </logfold>
  </users>
</yandex>
)");
    return true;
  }

  std::string HttpsConfig() const {
    if (https_cert_.empty()) return "";
    return "  <https_port>" + std::to_string(https_port_) +
           "</https_port>\n  <openSSL><server><certificateFile>" + https_cert_ +
           "</certificateFile><privateKeyFile>" + https_key_ +
           "</privateKeyFile><verificationMode>none</verificationMode>"
           "<loadDefaultCAFile>false</loadDefaultCAFile><cacheSessions>true</cacheSessions>"
           "<disableProtocols>sslv2,sslv3</disableProtocols></server></openSSL>";
  }

  bool WaitReady(milliseconds timeout) {
    bool exited = false;
    const bool ready = daemon_test::WaitUntil(
        [&] {
          int status = 0;
          if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            exited = true;
            return true;
          }
          const HttpResponse r = daemon_test::HttpGet(port_, "/ping", milliseconds(1000));
          return r.status == 200 && r.body == "Ok.\n";
        },
        timeout, milliseconds(20));
    if (ready && !exited) return true;
    if (exited) {
      pid_ = -1;
      error_ = "clickhouse-server exited at start-up:\n" + Log();
    } else {
      Stop(/*kill=*/true);
      error_ = "clickhouse-server did not answer /ping within " + std::to_string(timeout.count()) +
               " ms:\n" + Log();
    }
    return false;
  }

  std::filesystem::path root_;
  std::uint16_t port_ = 0;
  std::uint16_t https_port_ = 0;
  std::string https_cert_, https_key_;
  pid_t pid_ = -1;
  int starts_ = 0;
  std::string error_;
};

}  // namespace clickhouse_test
}  // namespace logfold

#endif  // LOGFOLD_TESTS_CLICKHOUSE_SERVER_H_
