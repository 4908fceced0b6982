// Message bytes that are not UTF-8 reach every output losslessly (issue #21): exactly, base64,
// in the events' `message_base64` (file, tcp and kafka outputs, the same NDJSON), and as the
// raw bytes in the syslog output's MSG; never only as U+FFFD. (ClickHouse: clickhouse_e2e_test.)
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/base64.h"
#include "tests/support/daemon_process.h"
#include "tests/support/kafka_broker.h"
#include "tests/support/late_collector.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::LateCollector;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;

// A line from a legacy sender: Latin-1 'é' (0xE9), a lone continuation byte, an overlong
// encoding and a UTF-16 surrogate, none of them UTF-8.
constexpr std::string_view kMessage = "caf\xe9 \x80 \xc0\xaf \xed\xa0\x80 from a legacy sender";
const std::string kLine = "<13>Nov 25 12:00:00 old-host legacy[7]: " + std::string(kMessage);

using test::FromBase64;

// The one `first` event in NDJSON `text` carries the message's exact bytes.
void ExpectExactMessage(const std::string& text, std::string_view output) {
  SCOPED_TRACE(output);
  std::vector<Json> events;
  std::string error;
  ASSERT_TRUE(daemon_test::ParseNdjson(text, events, error)) << error;
  std::erase_if(events, [](const Json& e) { return e.value("kind", "") != "first"; });
  ASSERT_EQ(events.size(), 1u) << text;
  EXPECT_EQ(events[0].value("app", ""), "legacy");
  EXPECT_EQ(FromBase64(events[0].value("message_base64", "")), kMessage) << text;
}

Json Config(const std::string& events_path) {
  Json config = daemon_test::LoopbackConfig(events_path);
  config["workers"]["threads"] = 1;
  return config;
}

TEST(LosslessOutputsTest, FileTcpAndSyslogOutputsKeepNonUtf8Bytes) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LateCollector tcp_collector, syslog_collector;
  ASSERT_TRUE(tcp_collector.Listen());
  ASSERT_TRUE(syslog_collector.Listen());
  Json config = Config(dir / "events.ndjson");
  config["outputs"].push_back({{"name", "tcp-out"},
                               {"type", "tcp"},
                               {"address", "127.0.0.1"},
                               {"port", tcp_collector.port()}});
  config["outputs"].push_back({{"name", "syslog-out"},
                               {"type", "syslog"},
                               {"address", "127.0.0.1"},
                               {"port", syslog_collector.port()}});
  daemon_test::WriteFile(dir / "logfold.json", config.dump(2));
  DaemonProcess daemon(dir);
  ASSERT_TRUE(daemon.Start(dir / "logfold.json")) << daemon.Stderr();
  {
    daemon_test::TcpClient client(daemon.InputPort("tcp-in", "tcp"));
    ASSERT_TRUE(client.Send(kLine + "\n"));
  }
  ASSERT_TRUE(WaitUntil([&] { return syslog_collector.data().ends_with("legacy sender"); },
                        milliseconds(15000)))
      << daemon.Stderr();
  ASSERT_TRUE(WaitUntil([&] { return tcp_collector.data().ends_with("\n"); }, milliseconds(15000)));
  // Syslog: one octet-counted RFC 5424 message (the first event) whose MSG is the bytes received.
  const std::string syslog = syslog_collector.data();
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  EXPECT_EQ(daemon.WaitExit(), 0);

  ExpectExactMessage(daemon_test::ReadFile(dir / "events.ndjson"), "file");
  ExpectExactMessage(tcp_collector.data(), "tcp");
  EXPECT_TRUE(syslog.ends_with(" " + std::string(kMessage))) << syslog;
  EXPECT_EQ(syslog.find("\xEF\xBF\xBD"), std::string::npos) << "no U+FFFD";
}

#if defined(__SANITIZE_THREAD__)
// Debian's uninstrumented librdkafka crashes inside the TSan runtime (see kafka_test.cc).
#define SkipUnderTsan() GTEST_SKIP() << "librdkafka crashes under ThreadSanitizer (uninstrumented)"
#else
#define SkipUnderTsan() static_cast<void>(0)
#endif

TEST(LosslessOutputsTest, KafkaOutputKeepsNonUtf8Bytes) {
  SkipUnderTsan();
  if (kafka_test::JarsDir().empty()) {
    GTEST_SKIP() << "Kafka broker jars missing (run scripts/kafka-fixture)";
  }
  if (!daemon_test::HaveProgram("kcat")) GTEST_SKIP() << "kcat is not installed";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  kafka_test::KafkaBroker broker(dir);
  ASSERT_TRUE(broker.Start()) << broker.error();
  std::string error;
  ASSERT_TRUE(kafka_test::CreateTopic(broker.brokers(), "events", 1, error)) << error;
  Json config = Config(dir / "events.ndjson");
  config["outputs"].push_back({{"name", "kafka-out"},
                               {"type", "kafka"},
                               {"brokers", broker.brokers()},
                               {"topic", "events"}});
  daemon_test::WriteFile(dir / "logfold.json", config.dump(2));
  DaemonProcess daemon(dir);
  ASSERT_TRUE(daemon.Start(dir / "logfold.json")) << daemon.Stderr();
  {
    daemon_test::TcpClient client(daemon.InputPort("tcp-in", "tcp"));
    ASSERT_TRUE(client.Send(kLine + "\n"));
  }
  // Each record's value as it is, LF after each: the topic's one event.
  daemon_test::CommandResult consumed;
  ASSERT_TRUE(WaitUntil(
      [&] {
        consumed = daemon_test::RunCommand({"kcat", "-C", "-b", broker.brokers(), "-t", "events",
                                            "-o", "beginning", "-e", "-q", "-f", "%s\\n"},
                                           dir, milliseconds(20000));
        return consumed.exit_code == 0 && !consumed.out.empty();
      },
      milliseconds(30000), milliseconds(500)))
      << consumed.err << daemon.Stderr();
  ExpectExactMessage(consumed.out, "kafka");
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  EXPECT_EQ(daemon.WaitExit(), 0);
}

}  // namespace
}  // namespace logfold
