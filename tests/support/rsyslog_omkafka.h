// Test fixture: a private rsyslogd (Debian's rsyslog with rsyslog-kafka) that takes lines on
// imtcp and produces them to Kafka with the README's "Scale out with Kafka" omkafka snippet.
#ifndef LOGFOLD_TESTS_SUPPORT_RSYSLOG_OMKAFKA_H_
#define LOGFOLD_TESTS_SUPPORT_RSYSLOG_OMKAFKA_H_

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "tests/support/daemon_process.h"
#include "tests/support/rsyslogd.h"

namespace logfold {
namespace kafka_test {

using daemon_test::TempDir;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;

using rsyslog_test::RsyslogdPath;

inline bool HaveOmkafka() { return rsyslog_test::HaveRsyslogModule("omkafka"); }

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

// A private rsyslogd (tests/support/rsyslogd.h): imtcp on an ephemeral loopback port, whose
// lines go through the omkafka action; its own messages go to a file, never to Kafka.
class RsyslogProcess {
 public:
  explicit RsyslogProcess(const TempDir& dir) : rsyslogd_(dir, "rsyslog") {}

  bool Start(const Snippet& omkafka, std::string& error) {
    return rsyslogd_.Start(rsyslogd_.ImtcpInput("kafka") + omkafka.module + "\n" +
                               omkafka.key_template + "\n" + "ruleset(name=\"kafka\") {\n" +
                               omkafka.action + "\n}\n",
                           error);
  }

  std::uint16_t port() const { return rsyslogd_.imtcp_port(); }

  // SIGTERM: omkafka flushes what it holds (which may take a while); rsyslogd exits 0.
  std::optional<int> Stop() { return rsyslogd_.Stop(milliseconds(30000)); }

  std::string Diagnostics() const { return rsyslogd_.Diagnostics(); }

 private:
  rsyslog_test::Rsyslogd rsyslogd_;
};

}  // namespace kafka_test
}  // namespace logfold

#endif  // LOGFOLD_TESTS_SUPPORT_RSYSLOG_OMKAFKA_H_
