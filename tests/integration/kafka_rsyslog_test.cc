// A real producer: a private rsyslogd with Debian's omkafka (rsyslog-kafka), configured with
// the README's "Scale out with Kafka" snippet, takes lines from many hosts over TCP and
// produces them keyed by host to a 6-partition topic on a private broker; logfold consumes it.
// Every line is accounted for, and each host's records are in one partition.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/kafka_broker.h"
#include "tests/support/rsyslog_omkafka.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using kafka_test::HaveOmkafka;
using kafka_test::KafkaBroker;
using kafka_test::kSlowdown;
using kafka_test::ReadmeOmkafka;
using kafka_test::RsyslogdPath;
using kafka_test::RsyslogProcess;
using kafka_test::Snippet;
using std::chrono::milliseconds;

constexpr int kPartitions = 6;
constexpr int kHosts = 40;
constexpr int kLines = 4000;

TEST(KafkaRsyslogTest, OmkafkaKeyedByHostFeedsLogfoldWithExactAccounting) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "librdkafka crashes under ThreadSanitizer (uninstrumented)";
#endif
  if (kafka_test::JarsDir().empty()) GTEST_SKIP() << "Kafka broker jars missing";
  if (RsyslogdPath().empty() || !HaveOmkafka()) {
    GTEST_SKIP() << "rsyslogd or omkafka missing (Debian packages rsyslog, rsyslog-kafka)";
  }
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  KafkaBroker broker(dir);
  ASSERT_TRUE(broker.Start()) << broker.error();
  std::string error;
  ASSERT_TRUE(kafka_test::CreateTopic(broker.brokers(), "logs", kPartitions, error)) << error;

  const std::string events = dir / "events.ndjson";
  const Json config{
      {"log", {{"level", "info"}, {"stats_interval", "0"}}},
      {"inputs", Json::array({{{"name", "kafka-in"},
                               {"type", "kafka"},
                               {"brokers", broker.brokers()},
                               {"topics", {"logs"}},
                               {"group_id", "logfold"}}})},
      {"engine", {{"window", "60s"}, {"max_hold", "60s"}}},
      {"outputs", Json::array({{{"name", "events"}, {"type", "file"}, {"path", events}}})},
      {"metrics", {{"port", 0}}}};
  daemon_test::WriteFile(dir / "logfold.json", config.dump(2));
  DaemonProcess daemon(dir);
  ASSERT_TRUE(daemon.Start(dir / "logfold.json")) << daemon.Stderr();

  const Snippet snippet = ReadmeOmkafka(broker.brokers());
  ASSERT_FALSE(snippet.module.empty() || snippet.key_template.empty() || snippet.action.empty())
      << "README.md has no omkafka snippet with broker kafka1:9092";
  RsyslogProcess rsyslog(dir);
  ASSERT_TRUE(rsyslog.Start(snippet, error)) << error;

  std::string feed;
  for (int i = 0; i < kLines; ++i) {
    feed += "<14>1 2026-11-25T10:00:00Z host" + std::to_string(i % kHosts) + " app" +
            std::to_string(i % 4) + " - - - job " + std::to_string(i) + " finished in " +
            std::to_string(i % 101) + " ms\n";
  }
  {
    daemon_test::TcpClient client(rsyslog.port());
    ASSERT_TRUE(client.connected());
    ASSERT_TRUE(client.Send(feed));
  }
  EXPECT_TRUE(daemon.WaitMetricAtLeast("logfold_received_total", {"input=\"kafka-in\""}, kLines,
                                       milliseconds(60000 * kSlowdown)))
      << daemon.Stderr() << rsyslog.Diagnostics();
  // Per-partition lag: one series per assigned partition, 0 once everything was consumed.
  auto lag_series = [&] {
    std::size_t n = 0;
    std::istringstream text(daemon.Metrics());
    for (std::string line; std::getline(text, line);) {
      n += line.rfind(
               "logfold_kafka_partition_lag{input=\"kafka-in\",proto=\"kafka\",topic=\"logs\","
               "partition=\"",
               0) == 0
               ? 1
               : 0;
    }
    return n;
  };
  EXPECT_TRUE(WaitUntil(
      [&] {
        return lag_series() == kPartitions &&
               daemon.Metric("logfold_kafka_partition_lag", {"input=\"kafka-in\""}) == 0;
      },
      milliseconds(10000), milliseconds(100)))
      << daemon.Metrics();
  const std::optional<int> rsyslog_code = rsyslog.Stop();
  ASSERT_TRUE(rsyslog_code.has_value());
  EXPECT_EQ(*rsyslog_code, 0) << rsyslog.Diagnostics();
  EXPECT_EQ(daemon.Metric("logfold_kafka_assigned_partitions", {"input=\"kafka-in\""}),
            kPartitions);
  EXPECT_EQ(daemon.Metric("logfold_received_total", {"input=\"kafka-in\""}), kLines)
      << "nothing more than was fed (e.g. rsyslog's own messages)";
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  ASSERT_EQ(daemon.WaitExit(milliseconds(30000)), 0) << daemon.Stderr();

  std::vector<Json> out;
  ASSERT_TRUE(daemon_test::ParseNdjson(daemon_test::ReadFile(events), out, error)) << error;
  EXPECT_EQ(daemon_test::LinesAccounted(out), static_cast<std::size_t>(kLines));
  std::set<std::string> hosts;
  for (const Json& e : out) {
    if (e.value("kind", "") == "first") hosts.insert(e.value("host", ""));
  }
  EXPECT_EQ(hosts.size(), static_cast<std::size_t>(kHosts)) << "headers survive omkafka";

  // The records as rsyslog keyed them: by host, each host in one partition, spread over
  // several partitions.
  if (!daemon_test::HaveProgram("kcat")) GTEST_SKIP() << "kcat is not installed";
  const daemon_test::CommandResult read =
      daemon_test::RunCommand({"kcat", "-b", broker.brokers(), "-C", "-t", "logs", "-o",
                               "beginning", "-e", "-q", "-f", "%k %p\n"},
                              dir, milliseconds(30000));
  ASSERT_EQ(read.exit_code, 0) << read.err;
  std::map<std::string, std::set<int>> partitions_of;
  std::set<int> used;
  std::size_t records = 0;
  std::istringstream lines(read.out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    const int p = std::stoi(line.substr(space + 1));
    partitions_of[line.substr(0, space)].insert(p);
    used.insert(p);
    ++records;
  }
  EXPECT_EQ(records, static_cast<std::size_t>(kLines));
  EXPECT_EQ(partitions_of.size(), static_cast<std::size_t>(kHosts));
  for (const auto& [key, parts] : partitions_of) {
    EXPECT_EQ(key.rfind("host", 0), 0u) << key;
    EXPECT_EQ(parts.size(), 1u) << key << " is in several partitions";
  }
  EXPECT_GE(used.size(), 3u);
}

}  // namespace
}  // namespace logfold
