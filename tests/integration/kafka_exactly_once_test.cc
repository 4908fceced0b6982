// The kafka input in exactly-once mode against a real broker (tests/support/kafka_broker.h):
// a logfold is kill -9ed at random points ten times while a producer writes a known number of
// lines to a 3-partition topic, restarted each time, and the committed output (read with
// isolation.level=read_committed) accounts for every line exactly once. Also: a stop while
// the broker hangs ends within the shutdown deadline and the count stays exact; a changelog
// that does not match the committed offsets stops the partition with a clear error.
// Skipped without the broker's jars and under TSan. scripts/kafka-eos-soak runs the kill test
// longer (LOGFOLD_EOS_KILLS, LOGFOLD_EOS_LINES).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/runtime/kafka_stream.h"
#include "tests/support/daemon_process.h"
#include "tests/support/kafka_broker.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::EnvInt;
using daemon_test::Json;
using daemon_test::LinesAccounted;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using kafka_test::CreateCompactedTopic;
using kafka_test::KafkaBroker;
using kafka_test::kSlowdown;
using kafka_test::ReadCommitted;
using kafka_test::ReadTopic;
using kafka_test::RestoredGroups;
using std::chrono::milliseconds;

// Checks that every event has an event_id, that no two events share one (exactly once: no
// event twice), and that each names a line of `lines` (by stream and offset, as
// daemon/runtime/kafka_stream.h derives the stream) whose message a first event repeats.
void ExpectEventIdsOfTheirFirstLines(
    const std::vector<Json>& events,
    const std::map<std::pair<std::uint64_t, std::int64_t>, std::string>& lines) {
  std::set<std::string> ids;
  for (const Json& e : events) {
    const std::string id = e.value("event_id", "");
    const std::string kind = e.value("kind", "");
    ASSERT_FALSE(id.empty()) << e.dump();
    EXPECT_TRUE(ids.insert(id).second) << "two events with id " << id;
    // "<stream, 16 hex digits>-<offset>-<kind's initial>"
    ASSERT_EQ(id.size() > 19 ? id[16] : ' ', '-') << id;
    const std::uint64_t stream = std::stoull(id.substr(0, 16), nullptr, 16);
    const std::size_t dash = id.rfind('-');
    const std::int64_t offset = std::stoll(id.substr(17, dash - 17));
    EXPECT_EQ(id.substr(dash + 1), kind.substr(0, 1)) << id;
    const auto line = lines.find({stream, offset});
    ASSERT_NE(line, lines.end()) << "no line at " << id;
    if (kind == "first") {
      EXPECT_TRUE(line->second.ends_with(e.value("message", "?"))) << id;
    }
  }
}

// The input lines of `topic` by (stream, offset): what an event_id names.
std::map<std::pair<std::uint64_t, std::int64_t>, std::string> InputLines(const std::string& brokers,
                                                                         const std::string& topic,
                                                                         int partitions) {
  std::map<std::pair<std::uint64_t, std::int64_t>, std::string> lines;
  ReadTopic(brokers, topic, partitions,
            [&](int partition, std::int64_t offset, std::string_view value) {
              lines.emplace(std::pair(KafkaStream(topic, partition), offset), std::string(value));
            });
  return lines;
}

class KafkaExactlyOnceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    if (const std::string why = kafka_test::WhyBrokerTestsCannotRun(); !why.empty()) {
      GTEST_SKIP() << why;
    }
    ASSERT_TRUE(broker_.Start()) << broker_.error();
    std::string error;
    ASSERT_TRUE(kafka_test::CreateExactlyOnceTopics(broker_.brokers(), 3, 2, error)) << error;
  }

  // An exactly-once instance; `id` is its static group member id and transactional id, so a
  // restart takes its place at once (and fences what the killed one left).
  std::string WriteConfig(const TempDir& dir, const std::string& id) {
    const Json config{
        {"log", {{"level", "info"}, {"stats_interval", "0"}}},
        {"inputs", Json::array({{{"name", "kafka-in"},
                                 {"type", "kafka"},
                                 {"brokers", broker_.brokers()},
                                 {"topics", {"logs"}},
                                 {"group_id", "eos"},
                                 {"commit_interval", "200ms"},
                                 {"exactly_once", true},
                                 {"changelog_topic", "changelog"},
                                 {"transactional_id", "logfold-" + id},
                                 {"properties",
                                  {{"session.timeout.ms", "6000"}, {"group.instance.id", id}}}}})},
        {"engine", {{"window", "3s"}, {"max_hold", "5s"}}},
        {"outputs", Json::array({{{"name", "out"},
                                  {"type", "kafka"},
                                  {"brokers", broker_.brokers()},
                                  {"topic", "events"}}})},
        {"metrics", {{"port", 0}}}};
    const std::string path = dir / "logfold.json";
    daemon_test::WriteFile(path, config.dump(2));
    return path;
  }

  TempDir dir_;
  KafkaBroker broker_{dir_};
};

TEST_F(KafkaExactlyOnceTest, KilledAtRandomPointsTheCommittedOutputCountsEveryLineOnce) {
  const int kills = EnvInt("LOGFOLD_EOS_KILLS", 10);
  const int total = EnvInt("LOGFOLD_EOS_LINES", 12000);
  const unsigned seed = static_cast<unsigned>(EnvInt("LOGFOLD_EOS_SEED", std::random_device{}()));
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed) + " (LOGFOLD_EOS_SEED repeats this run)");

  // The producer writes in chunks for the whole kill loop, keyed by host (engine.scope).
  std::atomic<bool> produce_failed{false};
  std::thread producer([&] {
    const int chunk = 150;
    for (int at = 0; at < total; at += chunk) {
      std::vector<std::string> values, keys;
      for (int i = at; i < std::min(total, at + chunk); ++i) {
        const std::string host = "host" + std::to_string(i % 12);
        values.push_back("<14>1 2026-11-25T10:00:00Z " + host + " app" + std::to_string(i % 3) +
                         " - - - request " + std::to_string(i) + " took " + std::to_string(i % 89) +
                         " ms");
        keys.push_back(host);
      }
      if (kafka_test::Produce(broker_.brokers(), "logs", values, keys) != 0) produce_failed = true;
      std::this_thread::sleep_for(milliseconds(200));
    }
  });

  std::vector<std::unique_ptr<TempDir>> dirs;
  std::uint64_t restored = 0;  // open groups the runs took over from the changelog
  for (int k = 0; k < kills; ++k) {
    dirs.push_back(std::make_unique<TempDir>());
    DaemonProcess d(*dirs.back());
    ASSERT_TRUE(d.Start(WriteConfig(*dirs.back(), "a"), milliseconds(30000))) << d.Stderr();
    // A random point once it consumes: folding, or inside a transaction.
    EXPECT_TRUE(d.WaitMetricAtLeast("logfold_kafka_assigned_partitions", {}, 3,
                                    milliseconds(30000 * kSlowdown)))
        << d.Stderr();
    std::uniform_int_distribution<int> delay(0, 1500);
    std::this_thread::sleep_for(milliseconds(delay(rng)));
    ASSERT_TRUE(d.Signal(SIGKILL));
    d.WaitExit(milliseconds(10000));
    restored += RestoredGroups(d.Stderr());
  }
  producer.join();
  ASSERT_FALSE(produce_failed.load());

  // The last run sees it through: every line folded, every group closed (3 s window).
  TempDir last;
  DaemonProcess d(last);
  ASSERT_TRUE(d.Start(WriteConfig(last, "a"), milliseconds(30000))) << d.Stderr();
  std::uint64_t accounted = 0;
  EXPECT_TRUE(WaitUntil(
      [&] {
        accounted = LinesAccounted(ReadCommitted(broker_.brokers(), "events", 2));
        return accounted >= static_cast<std::uint64_t>(total);
      },
      milliseconds(90000 * kSlowdown), milliseconds(1000)))
      << "accounted " << accounted << " of " << total << "\n"
      << d.Stderr();
  ASSERT_TRUE(d.Signal(SIGTERM));
  EXPECT_EQ(d.WaitExit(milliseconds(30000)), 0) << d.Stderr();
  // The kills left open groups behind that later runs restored and went on folding.
  restored += RestoredGroups(d.Stderr());
  EXPECT_GT(restored, 0u);
  std::printf("%d kills, %d lines, %llu open groups restored over the runs\n", kills, total,
              static_cast<unsigned long long>(restored));
  // Exactly: a line counted twice would show as more, a lost one as less.
  const std::vector<Json> events = ReadCommitted(broker_.brokers(), "events", 2);
  EXPECT_EQ(LinesAccounted(events), static_cast<std::uint64_t>(total)) << d.Stderr();
  // Summaries of restored groups too name their first line (the changelog keeps it).
  ExpectEventIdsOfTheirFirstLines(events, InputLines(broker_.brokers(), "logs", 3));
}

// 300 lines of 5 hosts on the 3-partition topic, keyed by host.
void ProduceHostLines(const std::string& brokers) {
  std::vector<std::string> values, keys;
  for (int i = 0; i < 300; ++i) {
    values.push_back("<14>1 2026-11-25T10:00:00Z h" + std::to_string(i % 5) + " app - - - n " +
                     std::to_string(i));
    keys.push_back("h" + std::to_string(i % 5));
  }
  ASSERT_EQ(kafka_test::Produce(brokers, "logs", values, keys), 0u);
}

// Events carry the at-least-once mode's event_id (topic, partition and offset of the first
// line they cover), so a line's events have the same ids in either mode.
TEST_F(KafkaExactlyOnceTest, EventsCarryTheEventIdOfTheirFirstLine) {
  ProduceHostLines(broker_.brokers());
  DaemonProcess d(dir_);
  ASSERT_TRUE(d.Start(WriteConfig(dir_, "a"), milliseconds(30000))) << d.Stderr();
  ASSERT_TRUE(
      d.WaitMetricAtLeast("logfold_received_total", {}, 300, milliseconds(30000 * kSlowdown)))
      << d.Stderr();
  // The stop summarises the open groups and commits them.
  ASSERT_TRUE(d.Signal(SIGTERM));
  EXPECT_EQ(d.WaitExit(milliseconds(30000)), 0) << d.Stderr();
  const std::vector<Json> events = ReadCommitted(broker_.brokers(), "events", 2);
  EXPECT_EQ(LinesAccounted(events), 300u);
  ExpectEventIdsOfTheirFirstLines(events, InputLines(broker_.brokers(), "logs", 3));
  int summaries = 0;
  for (const Json& e : events) summaries += e.value("kind", "") == "summary";
  EXPECT_GT(summaries, 0);
}

// A stop while the broker hangs (SIGSTOP: connections open, nothing answered) ends within
// the shutdown deadline: the last transaction's calls and the close of the consumer are left
// behind. The transaction left open ends as a whole once the broker resumes (the restart's
// producer fences it), so the restarted instance counts every line exactly once.
TEST_F(KafkaExactlyOnceTest, StopsWithinItsDeadlineWhenTheBrokerHangs) {
  ProduceHostLines(broker_.brokers());
  Json config = Json::parse(daemon_test::ReadFile(WriteConfig(dir_, "a")));
  config["workers"]["shutdown_timeout"] = "4s";
  daemon_test::WriteFile(dir_ / "hang.json", config.dump(2));
  {
    DaemonProcess d(dir_);
    ASSERT_TRUE(d.Start(dir_ / "hang.json", milliseconds(30000))) << d.Stderr();
    ASSERT_TRUE(
        d.WaitMetricAtLeast("logfold_received_total", {}, 300, milliseconds(30000 * kSlowdown)))
        << d.Stderr();
    // Open groups (3 s window) wait for the last transaction, which cannot commit.
    const kafka_test::StopAtAHungBroker stop =
        kafka_test::StopWhileTheBrokerHangs(d, broker_, milliseconds(4000));
    ASSERT_TRUE(stop.code.has_value()) << "still running after " << stop.took.count() << " ms\n"
                                       << d.Stderr();
    EXPECT_EQ(*stop.code, 0) << d.Stderr();
  }
  TempDir again;
  DaemonProcess d(again);
  ASSERT_TRUE(d.Start(dir_ / "hang.json", milliseconds(30000))) << d.Stderr();
  std::uint64_t accounted = 0;
  EXPECT_TRUE(WaitUntil(
      [&] {
        accounted = LinesAccounted(ReadCommitted(broker_.brokers(), "events", 2));
        return accounted >= 300;
      },
      milliseconds(60000 * kSlowdown), milliseconds(500)))
      << "accounted " << accounted << "\n"
      << d.Stderr();
  ASSERT_TRUE(d.Signal(SIGTERM));
  EXPECT_EQ(d.WaitExit(milliseconds(30000)), 0) << d.Stderr();
  EXPECT_EQ(LinesAccounted(ReadCommitted(broker_.brokers(), "events", 2)), 300u) << d.Stderr();
}

// As in at-least-once mode (KafkaTest.AFetcherStoppedByAFullQueueIsWokenOnceTheQueueDrained):
// every fetch answer fills the client's queue (queued.min.messages 10, two small batches), and
// librdkafka would look again only a second later; reading 6000 records would take about five
// minutes unless the input wakes the fetcher once the queue drained.
TEST_F(KafkaExactlyOnceTest, AFetcherStoppedByAFullQueueIsWokenOnceTheQueueDrained) {
  std::string error;
  ASSERT_TRUE(kafka_test::CreateTopic(broker_.brokers(), "small", 1, error)) << error;
  std::vector<std::string> values, keys;
  for (int i = 0; i < 6000; ++i) {
    values.push_back("<14>1 2026-11-25T10:00:00Z h" + std::to_string(i % 20) + " app - - - n " +
                     std::to_string(i));
    keys.push_back("h" + std::to_string(i % 20));
  }
  ASSERT_EQ(
      kafka_test::Produce(broker_.brokers(), "small", values, keys, {{"batch.num.messages", "10"}}),
      0u);
  Json config = Json::parse(daemon_test::ReadFile(WriteConfig(dir_, "a")));
  config["inputs"][0]["topics"] = {"small"};
  config["inputs"][0]["properties"]["queued.min.messages"] = "10";
  config["inputs"][0]["properties"]["max.partition.fetch.bytes"] = "2048";
  daemon_test::WriteFile(dir_ / "small.json", config.dump(2));
  DaemonProcess d(dir_);
  ASSERT_TRUE(d.Start(dir_ / "small.json", milliseconds(30000))) << d.Stderr();
  EXPECT_TRUE(d.WaitMetricAtLeast("logfold_received_total", {}, static_cast<double>(values.size()),
                                  milliseconds(60000 * kSlowdown)))
      << "received " << d.Metric("logfold_received_total", {}) << " of " << values.size() << "\n"
      << d.Stderr();
  EXPECT_GE(d.Metric("logfold_kafka_fetch_wakeups_total", {}), 1);
  ASSERT_TRUE(d.Signal(SIGTERM));
  EXPECT_EQ(d.WaitExit(milliseconds(30000)), 0) << d.Stderr();
  EXPECT_EQ(LinesAccounted(ReadCommitted(broker_.brokers(), "events", 2)), values.size());
}

// The changelog lost (deleted and recreated empty) while offsets are committed: the partitions
// are not consumed, with an error that says why; "empty" recovery consumes them again.
TEST_F(KafkaExactlyOnceTest, AChangelogThatDoesNotMatchTheOffsetsStopsThePartition) {
  ProduceHostLines(broker_.brokers());
  {
    DaemonProcess d(dir_);
    ASSERT_TRUE(d.Start(WriteConfig(dir_, "a"), milliseconds(30000))) << d.Stderr();
    ASSERT_TRUE(d.WaitMetricAtLeast("logfold_kafka_transactions_total", {"result=\"commit\""}, 2,
                                    milliseconds(30000 * kSlowdown)))
        << d.Stderr();
    ASSERT_TRUE(WaitUntil(
        [&] { return kafka_test::CommittedTotal(broker_.brokers(), "eos", "logs", 3) == 300; },
        milliseconds(30000 * kSlowdown), milliseconds(200)));
    ASSERT_TRUE(d.Signal(SIGKILL));
    d.WaitExit();
  }
  // A second changelog topic stands for the lost one: no marker matches the offsets.
  std::string error;
  ASSERT_TRUE(CreateCompactedTopic(broker_.brokers(), "changelog2", 3, error)) << error;
  TempDir other;
  Json config = Json::parse(daemon_test::ReadFile(WriteConfig(other, "a")));
  config["inputs"][0]["changelog_topic"] = "changelog2";
  daemon_test::WriteFile(other / "c.json", config.dump(2));
  {
    DaemonProcess d(other);
    ASSERT_TRUE(d.Start(other / "c.json", milliseconds(30000))) << d.Stderr();
    EXPECT_TRUE(d.WaitForStderr("does not match the committed offset", milliseconds(30000)))
        << d.Stderr();
    EXPECT_TRUE(d.WaitForStderr("not consuming it")) << d.Stderr();
    ASSERT_TRUE(d.Signal(SIGTERM));
    EXPECT_EQ(d.WaitExit(milliseconds(30000)), 0) << d.Stderr();
  }
  config["inputs"][0]["changelog_recovery"] = "empty";
  daemon_test::WriteFile(other / "c.json", config.dump(2));
  TempDir third;
  DaemonProcess d(third);
  ASSERT_TRUE(d.Start(other / "c.json", milliseconds(30000))) << d.Stderr();
  EXPECT_TRUE(d.WaitMetricAtLeast("logfold_kafka_changelog_resets_total", {}, 1,
                                  milliseconds(30000 * kSlowdown)))
      << d.Stderr();
  EXPECT_TRUE(d.WaitForStderr("with no open groups (changelog_recovery: empty)")) << d.Stderr();
  // Its next commit wrote markers that match: consumed normally from now on.
  EXPECT_TRUE(d.WaitMetricAtLeast("logfold_kafka_transactions_total", {"result=\"commit\""}, 1,
                                  milliseconds(30000 * kSlowdown)))
      << d.Stderr();
  ASSERT_TRUE(d.Signal(SIGTERM));
  EXPECT_EQ(d.WaitExit(milliseconds(30000)), 0) << d.Stderr();
}

// Not a test but the measurement bench/RESULTS.md quotes ("kafka-eos restore"): the time to
// restore 100 k open groups of one partition from the changelog after a kill -9. Runs only
// with LOGFOLD_EOS_BENCH=1 (it is a benchmark: nothing is asserted about the time).
TEST_F(KafkaExactlyOnceTest, BenchChangelogRestoreOf100kOpenGroups) {
  if (std::getenv("LOGFOLD_EOS_BENCH") == nullptr) GTEST_SKIP() << "set LOGFOLD_EOS_BENCH=1";
  const int groups = EnvInt("LOGFOLD_EOS_BENCH_GROUPS", 100000);
  std::string error;
  ASSERT_TRUE(kafka_test::CreateTopic(broker_.brokers(), "wide", 1, error)) << error;
  std::vector<std::string> values;
  for (int i = 0; i < groups; ++i) {
    // Every line its own scope (host): one open group each.
    values.push_back("<14>1 2026-11-25T10:00:00Z h" + std::to_string(i) +
                     " app - - - connection from 10.0.0." + std::to_string(i % 250) +
                     " accepted after " + std::to_string(i % 97) + " ms");
  }
  ASSERT_EQ(kafka_test::Produce(broker_.brokers(), "wide", values), 0u);
  TempDir a;
  Json config = Json::parse(daemon_test::ReadFile(WriteConfig(a, "a")));
  config["inputs"][0]["topics"] = {"wide"};
  config["inputs"][0]["commit_interval"] = "1s";
  config["engine"] = {{"window", "1h"}, {"max_hold", "1h"}, {"max_groups", groups * 2}};
  daemon_test::WriteFile(a / "c.json", config.dump(2));
  {
    DaemonProcess d(a);
    ASSERT_TRUE(d.Start(a / "c.json", milliseconds(30000))) << d.Stderr();
    ASSERT_TRUE(WaitUntil(
        [&] { return kafka_test::CommittedTotal(broker_.brokers(), "eos", "wide", 1) == groups; },
        milliseconds(300000), milliseconds(500)))
        << d.Stderr();
    ASSERT_TRUE(d.Signal(SIGKILL));
    d.WaitExit();
  }
  TempDir b;
  DaemonProcess d(b);
  // LOGFOLD_EOS_BENCH_PREFIX: a command the restoring daemon runs under, e.g.
  // "perf record -g -o /tmp/restore.perf --".
  std::vector<std::string> prefix;
  if (const char* p = std::getenv("LOGFOLD_EOS_BENCH_PREFIX"); p != nullptr) {
    std::istringstream words(p);
    for (std::string w; words >> w;) prefix.push_back(w);
  }
  ASSERT_TRUE(d.Start(a / "c.json", milliseconds(30000), prefix)) << d.Stderr();
  ASSERT_TRUE(d.WaitMetricAtLeast("logfold_kafka_changelog_restored_groups_total", {}, groups,
                                  milliseconds(300000)))
      << d.Stderr();
  const double seconds = d.Metric("logfold_kafka_changelog_restore_seconds");
  std::printf("kafka-eos restore: %d open groups restored in %.3f s\n", groups, seconds);
  // The daemon's own line, with the restoring thread's CPU time.
  const std::string log = d.Stderr();
  if (const std::size_t at = log.rfind("restored "); at != std::string::npos) {
    std::printf("  %s\n", log.substr(at, log.find('\n', at) - at).c_str());
  }
  RecordProperty("restore_seconds", std::to_string(seconds));
  ASSERT_TRUE(d.Signal(SIGTERM));
  EXPECT_EQ(d.WaitExit(milliseconds(60000)), 0) << d.Stderr();
}

}  // namespace
}  // namespace logfold
