// Test fixture: a private rsyslogd (Debian's rsyslog with rsyslog-kafka) that takes lines on
// imtcp and produces them to Kafka with the README's "Scale out with Kafka" omkafka snippet.
#ifndef LOGFOLD_TESTS_SUPPORT_RSYSLOG_OMKAFKA_H_
#define LOGFOLD_TESTS_SUPPORT_RSYSLOG_OMKAFKA_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "tests/support/daemon_process.h"

namespace logfold {
namespace kafka_test {

using daemon_test::TempDir;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;

inline std::string RsyslogdPath() {
  for (const char* candidate : {"/usr/sbin/rsyslogd", "/sbin/rsyslogd"}) {
    if (::access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

inline bool HaveOmkafka() {
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu/rsyslog", "/usr/lib/rsyslog",
                          "/usr/lib/aarch64-linux-gnu/rsyslog"}) {
    if (std::filesystem::exists(std::filesystem::path(dir) / "omkafka.so")) return true;
  }
  return false;
}

// The README's omkafka snippet: the module, the key template and the action, with the
// broker replaced; empty parts when the README lacks them.
struct Snippet {
  std::string module, key_template, action;
};
inline Snippet ReadmeOmkafka(const std::string& brokers) {
  const std::string readme =
      daemon_test::ReadFile(std::filesystem::path(LOGFOLD_SOURCE_DIR) / "README.md");
  auto statement = [&](std::string_view start) -> std::string {
    const std::size_t begin = readme.find(start);
    if (begin == std::string::npos) return "";
    const std::size_t end = readme.find(")\n", begin);
    return end == std::string::npos ? "" : readme.substr(begin, end + 1 - begin);
  };
  Snippet s{statement("module(load=\"omkafka\")"), statement("template(name=\"host\""),
            statement("action(type=\"omkafka\"")};
  const std::size_t at = s.action.find("kafka1:9092");
  if (at == std::string::npos) return {};
  s.action.replace(at, 11, brokers);
  return s;
}

// `rsyslogd -n` in the foreground with its own config and work directory: imtcp on an
// ephemeral loopback port, whose lines go through the omkafka action; its own messages go
// to a file, never to Kafka.
class RsyslogProcess {
 public:
  explicit RsyslogProcess(const TempDir& dir) : dir_(dir) {}
  ~RsyslogProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      daemon_test::WaitExit(pid_, milliseconds(5000));
    }
  }
  RsyslogProcess(const RsyslogProcess&) = delete;
  RsyslogProcess& operator=(const RsyslogProcess&) = delete;

  bool Start(const Snippet& omkafka, std::string& error) {
    const std::filesystem::path work = dir_ / "rsyslog-work";
    std::filesystem::create_directories(work);
    const std::string conf =
        "global(workDirectory=\"" + work.string() + "\" processInternalMessages=\"on\")\n" +
        "module(load=\"imtcp\")\n" + omkafka.module + "\n" + omkafka.key_template + "\n" +
        "input(type=\"imtcp\" address=\"127.0.0.1\" port=\"0\" listenPortFileName=\"" + PortFile() +
        "\" ruleset=\"kafka\")\n" + "ruleset(name=\"kafka\") {\n" + omkafka.action + "\n}\n" +
        "action(type=\"omfile\" file=\"" + InternalLog() + "\")\n";
    daemon_test::WriteFile(dir_ / "rsyslog.conf", conf);
    pid_ = daemon_test::Spawn(
        {RsyslogdPath(), "-n", "-f", dir_ / "rsyslog.conf", "-i", dir_ / "rsyslog.pid"},
        dir_ / "rsyslog.stdout", dir_ / "rsyslog.stderr");
    if (pid_ < 0) {
      error = "cannot spawn rsyslogd";
      return false;
    }
    bool exited = false;
    const bool up = WaitUntil(
        [&] {
          if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
            exited = true;
            pid_ = -1;
            return true;
          }
          return port() != 0;
        },
        milliseconds(15000));
    if (!up || exited) {
      error = std::string(exited ? "rsyslogd exited" : "rsyslogd did not listen within 15 s") +
              "; config:\n" + conf + "\n" + Diagnostics();
      return false;
    }
    return true;
  }

  std::uint16_t port() const {
    const unsigned long p = std::strtoul(daemon_test::ReadFile(PortFile()).c_str(), nullptr, 10);
    return p > 0 && p <= 65535 ? static_cast<std::uint16_t>(p) : 0;
  }

  // SIGTERM: omkafka flushes what it holds; rsyslogd exits 0.
  std::optional<int> Stop() {
    if (pid_ <= 0) return std::nullopt;
    ::kill(pid_, SIGTERM);
    const std::optional<int> code = daemon_test::WaitExit(pid_, milliseconds(30000));
    pid_ = -1;
    return code;
  }

  std::string Diagnostics() const {
    return daemon_test::ReadFile(dir_ / "rsyslog.stderr") + daemon_test::ReadFile(InternalLog());
  }

 private:
  std::string PortFile() const { return dir_ / "rsyslog-imtcp.port"; }
  std::string InternalLog() const { return dir_ / "rsyslog-internal.log"; }

  const TempDir& dir_;
  pid_t pid_ = -1;
};

}  // namespace kafka_test
}  // namespace logfold

#endif  // LOGFOLD_TESTS_SUPPORT_RSYSLOG_OMKAFKA_H_
