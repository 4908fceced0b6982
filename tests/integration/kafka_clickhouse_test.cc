// At-least-once from a kafka input into a private clickhouse-server: a stop commits what was
// summarised and confirmed, a kill -9 mid-stream makes the restarted daemon replay from the
// last commit, and the replayed events carry the same event_id, so the ReplacingMergeTree of
// config/clickhouse_kafka.sql read with FINAL counts every line produced exactly once.
// Needs the broker's jars (scripts/kafka-fixture) and clickhouse-server; skipped otherwise.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tests/support/clickhouse_server.h"
#include "tests/support/daemon_process.h"
#include "tests/support/kafka_broker.h"

namespace logfold {
namespace {

using clickhouse_test::ClickHouseServer;
using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using kafka_test::KafkaBroker;
using kafka_test::kSlowdown;
using std::chrono::milliseconds;

const std::string kSourceDir = LOGFOLD_SOURCE_DIR;
constexpr int kPartitions = 4;

// `n` RFC 5424 lines from 16 hosts in a few shapes (so the engine folds them), numbered from
// `from`; keyed by host, as producers must key them (engine.scope).
void MakeLines(int from, int n, std::vector<std::string>& values, std::vector<std::string>& keys) {
  for (int i = from; i < from + n; ++i) {
    const std::string host = "host" + std::to_string(i % 16);
    values.push_back("<14>1 2026-11-25T10:00:00Z " + host + " app" + std::to_string(i % 3) +
                     " - - - request " + std::to_string(i) + " took " + std::to_string(i % 89) +
                     " ms");
    keys.push_back(host);
  }
}

class KafkaClickHouseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    if (const std::string why = kafka_test::WhyBrokerTestsCannotRun(); !why.empty()) {
      GTEST_SKIP() << why;
    }
    if (clickhouse_test::ServerBinary().empty()) {
      GTEST_SKIP() << "clickhouse-server is not installed (scripts/install-deps installs it)";
    }
    ASSERT_TRUE(broker_.Start()) << broker_.error();
    ASSERT_TRUE(clickhouse_.Start()) << clickhouse_.error();
    ASSERT_TRUE(clickhouse_.ApplySqlFile(kSourceDir + "/config/clickhouse.sql"))
        << clickhouse_.error();
    ASSERT_TRUE(clickhouse_.ApplySqlFile(kSourceDir + "/config/clickhouse_kafka.sql"))
        << clickhouse_.error();
  }
  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "--- clickhouse ---\n%s\n", clickhouse_.Log().c_str());
  }

  // A kafka input in group "g", a 60 s window (only stops close groups, so nothing is
  // committed between them), events to logfold.kafka_events and to the file `run`.ndjson.
  std::string WriteConfig(const std::string& run) {
    const Json config{
        {"log", {{"level", "info"}, {"stats_interval", "0"}}},
        {"inputs", Json::array({{{"name", "kafka-in"},
                                 {"type", "kafka"},
                                 {"brokers", broker_.brokers()},
                                 {"topics", {"logs"}},
                                 {"group_id", "g"},
                                 {"commit_interval", "500ms"},
                                 {"properties", {{"session.timeout.ms", "6000"}}}}})},
        {"engine", {{"window", "60s"}, {"max_hold", "60s"}}},
        {"workers", {{"threads", 2}, {"flush_interval", "100ms"}}},
        {"outputs",
         Json::array({{{"name", "clickhouse"},
                       {"type", "http"},
                       {"format", "clickhouse"},
                       {"url", "http://127.0.0.1:" + std::to_string(clickhouse_.http_port())},
                       {"table", "logfold.kafka_events"},
                       {"batch_max_events", 500},
                       {"batch_max_delay", "100ms"}},
                      {{"name", "file"},
                       {"type", "file"},
                       {"path", (dir_ / (run + ".ndjson")).string()}}})},
        {"metrics", {{"port", 0}}}};
    const std::string path = dir_ / (run + ".json");
    daemon_test::WriteFile(path, config.dump(2));
    return path;
  }

  void Produce(int from, int n) {
    std::vector<std::string> values, keys;
    MakeLines(from, n, values, keys);
    ASSERT_EQ(kafka_test::Produce(broker_.brokers(), "logs", values, keys), 0u);
  }

  std::int64_t Committed() {
    return kafka_test::CommittedTotal(broker_.brokers(), "g", "logs", kPartitions);
  }

  std::uint64_t Value(const std::string& sql) {
    const std::string v = clickhouse_.QueryValue(sql);
    return v.empty() ? 0 : std::stoull(v);
  }

  // The event ids in the file output of `run` (complete lines only: a killed daemon may have
  // left half a line).
  std::set<std::string> EventIds(const std::string& run) {
    std::string text = daemon_test::ReadFile(dir_ / (run + ".ndjson"));
    text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    std::vector<Json> events;
    std::string error;
    EXPECT_TRUE(daemon_test::ParseNdjson(text, events, error)) << error;
    std::set<std::string> ids;
    for (const Json& e : events) ids.insert(e.value("event_id", ""));
    return ids;
  }

  TempDir dir_;
  KafkaBroker broker_{dir_};
  ClickHouseServer clickhouse_{dir_};
};

TEST_F(KafkaClickHouseTest, AKillMidStreamIsReplayedAndFinalCountsEveryLineOnce) {
  std::string error;
  ASSERT_TRUE(kafka_test::CreateTopic(broker_.brokers(), "logs", kPartitions, error)) << error;
  constexpr int kA = 2000, kB1 = 2000, kB2 = 1500;

  // 1. A stop: open groups are summarised, confirmed by ClickHouse, and committed.
  Produce(0, kA);
  {
    DaemonProcess first(dir_);
    ASSERT_TRUE(first.Start(WriteConfig("first"))) << first.Stderr();
    ASSERT_TRUE(first.WaitMetricAtLeast("logfold_received_total", {"input=\"kafka-in\""}, kA,
                                        milliseconds(60000 * kSlowdown)))
        << first.Stderr();
    ASSERT_TRUE(first.Signal(SIGTERM));
    ASSERT_EQ(first.WaitExit(milliseconds(60000)), 0) << first.Stderr();
  }
  EXPECT_EQ(Committed(), kA);
  EXPECT_EQ(Value("SELECT sum(lines) FROM logfold.kafka_events FINAL"), std::uint64_t{kA});
  const std::uint64_t rows_a = Value("SELECT count() FROM logfold.kafka_events");

  // 2. kill -9 mid-stream: the first events of B1's groups are in ClickHouse, their open
  // groups' counts are lost, nothing of B1 is committed.
  Produce(kA, kB1);
  {
    DaemonProcess killed(dir_);
    ASSERT_TRUE(killed.Start(WriteConfig("killed"))) << killed.Stderr();
    ASSERT_TRUE(killed.WaitMetricAtLeast("logfold_received_total", {"input=\"kafka-in\""}, kB1,
                                         milliseconds(60000 * kSlowdown)))
        << killed.Stderr();
    ASSERT_TRUE(
        WaitUntil([&] { return Value("SELECT count() FROM logfold.kafka_events") > rows_a; },
                  milliseconds(30000 * kSlowdown), milliseconds(100)))
        << killed.Stderr();
    ASSERT_TRUE(killed.Signal(SIGKILL));
    killed.WaitExit(milliseconds(10000));
  }
  EXPECT_EQ(Committed(), kA) << "lines in open groups must not be committed";
  const std::uint64_t rows_before_replay = Value("SELECT count() FROM logfold.kafka_events");
  EXPECT_GT(rows_before_replay, rows_a);

  // 3. More lines while it is down; the restarted daemon reads B1 again, then B2.
  Produce(kA + kB1, kB2);
  DaemonProcess restarted(dir_);
  ASSERT_TRUE(restarted.Start(WriteConfig("restarted"))) << restarted.Stderr();
  ASSERT_TRUE(restarted.WaitMetricAtLeast("logfold_received_total", {"input=\"kafka-in\""},
                                          kB1 + kB2, milliseconds(60000 * kSlowdown)))
      << restarted.Stderr();
  EXPECT_EQ(restarted.Metric("logfold_received_total", {"input=\"kafka-in\""}), kB1 + kB2)
      << "the restart replays exactly what was not committed";
  ASSERT_TRUE(restarted.Signal(SIGTERM));
  ASSERT_EQ(restarted.WaitExit(milliseconds(60000)), 0) << restarted.Stderr();
  EXPECT_EQ(Committed(), kA + kB1 + kB2);

  // The replayed first events were inserted again (same ids); FINAL keeps one of each.
  constexpr std::uint64_t kTotal = kA + kB1 + kB2;
  EXPECT_EQ(Value("SELECT count() FROM logfold.kafka_events WHERE event_id = ''"), 0u);
  EXPECT_EQ(Value("SELECT sum(lines) FROM logfold.kafka_events FINAL"), kTotal)
      << clickhouse_.QueryValue(
             "SELECT kind, count(), sum(lines) FROM logfold.kafka_events FINAL GROUP BY kind "
             "FORMAT TSV");
  EXPECT_EQ(Value("SELECT countIf(kind = 'first') + sumIf(count, kind = 'summary') FROM "
                  "logfold.kafka_events FINAL"),
            kTotal);
  // What the killed daemon had emitted, the restart emitted again with the same ids.
  const std::set<std::string> killed_ids = EventIds("killed"), replayed_ids = EventIds("restarted");
  EXPECT_FALSE(killed_ids.empty());
  for (const std::string& id : killed_ids) {
    EXPECT_TRUE(replayed_ids.contains(id)) << id << " was not replayed with the same id";
  }
}

}  // namespace
}  // namespace logfold
