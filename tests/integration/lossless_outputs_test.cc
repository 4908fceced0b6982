// Message bytes that are not UTF-8 reach every output losslessly (issue #21): exactly, base64,
// in the events' `message_base64` (file, tcp, kafka and http outputs, the same NDJSON), and as
// the raw bytes in the syslog output's MSG; never only as U+FFFD. (ClickHouse:
// clickhouse_e2e_test; relp: relp_test.) An RFC 3164 tag longer than its app ("legacy/worker", app
// "legacy") reaches every output too.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/base64.h"
#include "tests/support/daemon_process.h"
#include "tests/support/http_test_server.h"
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
const std::string kLine = "<13>Nov 25 12:00:00 old-host legacy/worker[7]: " + std::string(kMessage);

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
  EXPECT_EQ(events[0].value("tag", ""), "legacy/worker");
  EXPECT_EQ(FromBase64(events[0].value("message_base64", "")), kMessage) << text;
}

Json Config(const std::string& events_path) {
  Json config = daemon_test::LoopbackConfig(events_path);
  config["workers"]["threads"] = 1;
  return config;
}

// The event lines of the bodies an http output posted: an Elasticsearch _bulk body's documents
// (every other line), or each value of a Loki push body's streams, as NDJSON.
std::string HttpEventLines(const test::TestHttpServer& server, bool loki) {
  std::string out;
  for (const test::ReceivedRequest& r : server.Requests()) {
    if (!loki) {
      std::vector<Json> lines;
      std::string error;
      if (!daemon_test::ParseNdjson(r.body, lines, error)) return "unparsable body: " + r.body;
      for (const Json& j : lines) {
        if (j.contains("kind")) out += j.dump() + "\n";
      }
      continue;
    }
    const Json body = Json::parse(r.body, nullptr, false);
    if (!body.is_object() || !body.contains("streams")) return "unparsable body: " + r.body;
    for (const Json& stream : body["streams"]) {
      for (const Json& value : stream["values"]) out += value[1].get<std::string>() + "\n";
    }
  }
  return out;
}

TEST(LosslessOutputsTest, FileTcpSyslogAndHttpOutputsKeepNonUtf8Bytes) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LateCollector tcp_collector, syslog_collector;
  ASSERT_TRUE(tcp_collector.Listen());
  ASSERT_TRUE(syslog_collector.Listen());
  test::TestHttpServer elasticsearch, loki;
  ASSERT_TRUE(elasticsearch.ok());
  ASSERT_TRUE(loki.ok());
  elasticsearch.SetScript([](const test::ReceivedRequest&, std::size_t) {
    return test::Reply(200, R"({"errors":false,"items":[]})");
  });
  loki.SetScript([](const test::ReceivedRequest&, std::size_t) { return test::Reply(204, ""); });
  Json config = Config(dir / "events.ndjson");
  config["outputs"].push_back({{"name", "tcp-out"},
                               {"type", "tcp"},
                               {"address", "127.0.0.1"},
                               {"port", tcp_collector.port()}});
  config["outputs"].push_back({{"name", "syslog-out"},
                               {"type", "syslog"},
                               {"address", "127.0.0.1"},
                               {"port", syslog_collector.port()}});
  config["outputs"].push_back({{"name", "es-out"},
                               {"type", "http"},
                               {"url", elasticsearch.url()},
                               {"format", "elasticsearch"},
                               {"index", "logs"},
                               {"batch_max_delay", "10ms"}});
  config["outputs"].push_back({{"name", "loki-out"},
                               {"type", "http"},
                               {"url", loki.url()},
                               {"format", "loki"},
                               {"batch_max_delay", "10ms"}});
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
  ASSERT_TRUE(
      WaitUntil([&] { return elasticsearch.request_count() > 0 && loki.request_count() > 0; },
                milliseconds(15000)));
  // Syslog: one octet-counted RFC 5424 message (the first event) whose MSG is the bytes received.
  const std::string syslog = syslog_collector.data();
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  EXPECT_EQ(daemon.WaitExit(), 0);

  ExpectExactMessage(daemon_test::ReadFile(dir / "events.ndjson"), "file");
  ExpectExactMessage(tcp_collector.data(), "tcp");
  ExpectExactMessage(HttpEventLines(elasticsearch, false), "http elasticsearch");
  ExpectExactMessage(HttpEventLines(loki, true), "http loki");
  EXPECT_TRUE(syslog.ends_with(" " + std::string(kMessage))) << syslog;
  EXPECT_EQ(syslog.find("\xEF\xBF\xBD"), std::string::npos) << "no U+FFFD";
  // APP-NAME is the program name; the whole tag rides in logfold's SD element.
  EXPECT_NE(syslog.find(" old-host legacy 7 first [logfold@32473 "), std::string::npos) << syslog;
  EXPECT_NE(syslog.find(" tag=\"legacy/worker\"]"), std::string::npos) << syslog;
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
