// The kafka input against a real single-node broker (tests/support/kafka_broker.h) on
// loopback: exact accounting from topic to events file, periodic commits of confirmed
// offsets, bad records (unparseable, oversized) and a missing topic; a fetcher stopped by its
// full queue that is woken; a rebalance between two members of one group that loses and
// duplicates nothing; a broker that hangs while the input stops; a broker that is down at start.
// Each test starts its own broker (ctest runs tests as separate processes); they skip when
// scripts/kafka-fixture has not cached the broker's jars.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/kafka_broker.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::LinesAccounted;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using kafka_test::KafkaBroker;
using kafka_test::kSlowdown;
using std::chrono::milliseconds;

// RFC 5424 lines from `hosts` hosts, a few message shapes each with a varying number, so the
// engine folds them; keys are the hosts (producers key by engine.scope).
void MakeLines(int n, int hosts, const std::string& tag, std::vector<std::string>& values,
               std::vector<std::string>& keys) {
  for (int i = 0; i < n; ++i) {
    const std::string host = "host" + std::to_string(i % hosts);
    values.push_back("<14>1 2026-11-25T10:00:00Z " + host + " app" + std::to_string(i % 3) +
                     " - - - " + tag + " request " + std::to_string(i) + " took " +
                     std::to_string(i % 97) + " ms");
    keys.push_back(host);
  }
}

std::vector<Json> ReadEvents(const std::string& path) {
  std::vector<Json> events;
  std::string error;
  EXPECT_TRUE(daemon_test::ParseNdjson(daemon_test::ReadFile(path), events, error)) << error;
  return events;
}

// The lines a daemon received, from its final stats line ("stats: received N, ..."); -1.
double FinalReceived(const std::string& log) {
  const std::size_t at = log.rfind("stats: received ");
  if (at == std::string::npos) return -1;
  return std::strtod(log.c_str() + at + 16, nullptr);
}

// Debian's librdkafka is not built with ThreadSanitizer, and its own threads crash inside the
// TSan runtime (SIGSEGV in the allocator on the first calloc of "rdk:main"), so a TSan build
// of logfold cannot run a kafka input at all; the suite runs in the normal and ASan passes.
#if defined(__SANITIZE_THREAD__)
#define SkipUnderTsan() GTEST_SKIP() << "librdkafka crashes under ThreadSanitizer (uninstrumented)"
#else
#define SkipUnderTsan() static_cast<void>(0)
#endif

class KafkaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    SkipUnderTsan();
    if (kafka_test::JarsDir().empty()) {
      GTEST_SKIP() << "Kafka broker jars missing (run scripts/kafka-fixture)";
    }
    ASSERT_TRUE(broker_.Start()) << broker_.error();
  }

  // A kafka input on `topics` in group `group`, syslog format, events to `events`.
  Json Config(const std::string& events, const std::vector<std::string>& topics,
              const std::string& group, const std::string& window) {
    return Json{
        {"log", {{"level", "info"}, {"stats_interval", "0"}}},
        {"inputs", Json::array({{{"name", "kafka-in"},
                                 {"type", "kafka"},
                                 {"brokers", broker_.brokers()},
                                 {"topics", topics},
                                 {"group_id", group},
                                 {"commit_interval", "500ms"},
                                 {"properties", {{"session.timeout.ms", "10000"}}}}})},
        {"engine", {{"window", window}, {"max_hold", window}}},
        {"workers", {{"threads", 2}, {"flush_interval", "100ms"}}},
        {"outputs", Json::array({{{"name", "events"}, {"type", "file"}, {"path", events}}})},
        {"metrics", {{"port", 0}}}};
  }

  std::string WriteConfig(const Json& config, const std::string& name) {
    const std::string path = dir_ / name;
    daemon_test::WriteFile(path, config.dump(2));
    return path;
  }

  TempDir dir_;
  KafkaBroker broker_{dir_};
};

TEST_F(KafkaTest, ConsumesATopicWithExactAccountingAndCommitsConfirmedOffsets) {
  std::string error;
  ASSERT_TRUE(kafka_test::CreateTopic(broker_.brokers(), "logs", 3, error)) << error;
  std::vector<std::string> values, keys;
  MakeLines(3000, 20, "first", values, keys);
  // Values that are not syslog: folded raw and counted as such; one longer than
  // max_message_size (64 KiB): cut and counted.
  for (int i = 0; i < 5; ++i) values.push_back("\x01\x02 not syslog at all " + std::to_string(i));
  values.push_back(std::string(100 * 1024, 'x'));
  ASSERT_EQ(kafka_test::Produce(broker_.brokers(), "logs", values, keys), 0u);
  const auto total = static_cast<double>(values.size());

  // A 1 s window: groups close by themselves, so offsets are committed while it runs. The
  // topic "absent" does not exist: logged, and the input goes on with "logs".
  // The events go to a file and, keyed by group id, to the topic "events".
  ASSERT_TRUE(kafka_test::CreateTopic(broker_.brokers(), "events", 2, error)) << error;
  const std::string events = dir_ / "events.ndjson";
  Json config = Config(events, {"logs", "absent"}, "g1", "1s");
  config["outputs"].push_back({{"name", "kafka-out"},
                               {"type", "kafka"},
                               {"brokers", broker_.brokers()},
                               {"topic", "events"},
                               {"compression", "zstd"}});
  DaemonProcess daemon(dir_);
  ASSERT_TRUE(daemon.Start(WriteConfig(config, "a.json"))) << daemon.Stderr();
  EXPECT_TRUE(daemon.WaitMetricAtLeast("logfold_received_total", {"input=\"kafka-in\""}, total,
                                       milliseconds(60000 * kSlowdown)))
      << daemon.Stderr();
  // Every line is in a closed group within window + flush: the periodic commit covers all.
  EXPECT_TRUE(WaitUntil(
      [&] {
        return kafka_test::CommittedTotal(broker_.brokers(), "g1", "logs", 3) ==
               static_cast<std::int64_t>(total);
      },
      milliseconds(30000 * kSlowdown), milliseconds(250)))
      << "committed " << kafka_test::CommittedTotal(broker_.brokers(), "g1", "logs", 3) << " of "
      << total << "\n"
      << daemon.Stderr();
  EXPECT_EQ(daemon.Metric("logfold_truncated_total", {"input=\"kafka-in\""}), 1);
  EXPECT_EQ(daemon.Metric("logfold_kafka_assigned_partitions", {"input=\"kafka-in\""}), 3);
  // The broker shows a commit before librdkafka's commit callback, which counts it, runs on
  // the consumer's next poll.
  EXPECT_TRUE(daemon.WaitMetricAtLeast("logfold_kafka_commits_total", {"input=\"kafka-in\""}, 1,
                                       milliseconds(10000 * kSlowdown)));
  EXPECT_EQ(daemon.Metric("logfold_kafka_consumer_lag", {"input=\"kafka-in\""}), 0);
  EXPECT_EQ(daemon.Metric("logfold_parse_total") -
                daemon.Metric("logfold_parse_total", {"outcome=\"ok\""}),
            6);
  EXPECT_NE(daemon.Stderr().find("absent"), std::string::npos) << daemon.Stderr();
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  ASSERT_EQ(daemon.WaitExit(milliseconds(30000)), 0) << daemon.Stderr();

  const std::vector<Json> out = ReadEvents(events);
  EXPECT_EQ(LinesAccounted(out), values.size());
  EXPECT_LT(out.size(), values.size() / 4) << "the engine should have folded the lines";

  // The same events, read back from the topic by kcat, each keyed by its group id.
  if (!daemon_test::HaveProgram("kcat")) GTEST_SKIP() << "kcat is not installed";
  const daemon_test::CommandResult read =
      daemon_test::RunCommand({"kcat", "-b", broker_.brokers(), "-C", "-t", "events", "-o",
                               "beginning", "-e", "-q", "-f", "%k %s\n"},
                              dir_, milliseconds(30000));
  ASSERT_EQ(read.exit_code, 0) << read.err;
  std::string values_only;
  std::size_t keyed = 0;
  std::string_view rest = read.out;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    const std::size_t space = line.find(' ');
    ASSERT_NE(space, std::string_view::npos) << line;
    const Json event = Json::parse(line.substr(space + 1));
    keyed += line.substr(0, space) == event.value("group_id", "") ? 1 : 0;
    values_only.append(line.substr(space + 1)).push_back('\n');
  }
  std::vector<Json> from_topic;
  ASSERT_TRUE(daemon_test::ParseNdjson(values_only, from_topic, error)) << error;
  EXPECT_EQ(from_topic.size(), out.size());
  EXPECT_EQ(keyed, from_topic.size());
  EXPECT_EQ(LinesAccounted(from_topic), values.size());
}

// librdkafka stops fetching while its queue holds queued.min.messages records and, left
// alone, looks again only when its broker thread wakes for something else, at the latest a
// second later. Here every fetch answer (two small record batches) fills the queue, so
// reading 6000 records would take one such second per ~20 records (about five minutes)
// unless the input wakes the fetcher once it has drained the queue.
TEST_F(KafkaTest, AFetcherStoppedByAFullQueueIsWokenOnceTheQueueDrained) {
  std::string error;
  ASSERT_TRUE(kafka_test::CreateTopic(broker_.brokers(), "small", 1, error)) << error;
  std::vector<std::string> values, keys;
  MakeLines(6000, 20, "small", values, keys);
  ASSERT_EQ(
      kafka_test::Produce(broker_.brokers(), "small", values, keys, {{"batch.num.messages", "10"}}),
      0u);
  const std::string events = dir_ / "events.ndjson";
  Json config = Config(events, {"small"}, "g-small", "1s");
  config["inputs"][0]["properties"]["queued.min.messages"] = "10";
  config["inputs"][0]["properties"]["max.partition.fetch.bytes"] = "2048";
  DaemonProcess daemon(dir_);
  ASSERT_TRUE(daemon.Start(WriteConfig(config, "small.json"))) << daemon.Stderr();
  EXPECT_TRUE(daemon.WaitMetricAtLeast("logfold_received_total", {"input=\"kafka-in\""},
                                       static_cast<double>(values.size()),
                                       milliseconds(60000 * kSlowdown)))
      << "received " << daemon.Metric("logfold_received_total", {"input=\"kafka-in\""}) << " of "
      << values.size() << "\n"
      << daemon.Stderr();
  EXPECT_GE(daemon.Metric("logfold_kafka_fetch_wakeups_total", {"input=\"kafka-in\""}), 1);
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  ASSERT_EQ(daemon.WaitExit(milliseconds(30000)), 0) << daemon.Stderr();
  EXPECT_EQ(LinesAccounted(ReadEvents(events)), values.size());
}

TEST_F(KafkaTest, ARebalanceBetweenTwoMembersLosesAndRepeatsNothing) {
  std::string error;
  ASSERT_TRUE(kafka_test::CreateTopic(broker_.brokers(), "logs", 4, error)) << error;
  std::vector<std::string> values, keys;
  MakeLines(2000, 16, "before", values, keys);
  ASSERT_EQ(kafka_test::Produce(broker_.brokers(), "logs", values, keys), 0u);

  // A 60 s window: only revokes and stops close groups, so every revoke has open groups
  // whose summaries must be out (and offsets committed) before the partition moves.
  const std::string events_a = dir_ / "a.ndjson", events_b = dir_ / "b.ndjson";
  TempDir dir_b;
  ASSERT_TRUE(dir_b.ok());
  DaemonProcess a(dir_), b(dir_b);
  ASSERT_TRUE(a.Start(WriteConfig(Config(events_a, {"logs"}, "g2", "60s"), "a.json")))
      << a.Stderr();
  ASSERT_TRUE(a.WaitMetricAtLeast("logfold_received_total", {"input=\"kafka-in\""}, 1,
                                  milliseconds(60000 * kSlowdown)))
      << a.Stderr();
  // B joins: A gives up some partitions (cooperative rebalance), flushing first.
  ASSERT_TRUE(b.Start(WriteConfig(Config(events_b, {"logs"}, "g2", "60s"), "b.json")))
      << b.Stderr();
  EXPECT_TRUE(WaitUntil(
      [&] {
        return a.Metric("logfold_kafka_assigned_partitions") == 2 &&
               b.Metric("logfold_kafka_assigned_partitions") == 2;
      },
      milliseconds(60000 * kSlowdown), milliseconds(200)))
      << a.Stderr() << b.Stderr();
  std::vector<std::string> more, more_keys;
  MakeLines(2000, 16, "during", more, more_keys);
  ASSERT_EQ(kafka_test::Produce(broker_.brokers(), "logs", more, more_keys), 0u);
  const double total = static_cast<double>(values.size() + more.size());
  EXPECT_TRUE(WaitUntil(
      [&] {
        return a.Metric("logfold_received_total") + b.Metric("logfold_received_total") >= total;
      },
      milliseconds(60000 * kSlowdown), milliseconds(200)))
      << a.Stderr() << b.Stderr();
  // B leaves: its partitions go back to A, starting at what B committed on its revoke.
  ASSERT_TRUE(b.Signal(SIGTERM));
  ASSERT_EQ(b.WaitExit(milliseconds(30000)), 0) << b.Stderr();
  const double b_received = FinalReceived(b.Stderr());
  ASSERT_GT(b_received, 0) << b.Stderr();
  std::vector<std::string> after, after_keys;
  MakeLines(1000, 16, "after", after, after_keys);
  ASSERT_EQ(kafka_test::Produce(broker_.brokers(), "logs", after, after_keys), 0u);
  const std::size_t produced = values.size() + more.size() + after.size();
  // A reads exactly what B did not: a duplicate would show as more, a gap would never end.
  EXPECT_TRUE(WaitUntil(
      [&] {
        return a.Metric("logfold_kafka_assigned_partitions") == 4 &&
               a.Metric("logfold_received_total") + b_received >= static_cast<double>(produced);
      },
      milliseconds(60000 * kSlowdown), milliseconds(200)))
      << a.Stderr();
  EXPECT_EQ(a.Metric("logfold_received_total") + b_received, static_cast<double>(produced));
  ASSERT_TRUE(a.Signal(SIGTERM));
  ASSERT_EQ(a.WaitExit(milliseconds(30000)), 0) << a.Stderr();
  EXPECT_EQ(kafka_test::CommittedTotal(broker_.brokers(), "g2", "logs", 4),
            static_cast<std::int64_t>(produced));

  const std::vector<Json> out_a = ReadEvents(events_a), out_b = ReadEvents(events_b);
  EXPECT_GT(LinesAccounted(out_b), 0u);
  EXPECT_EQ(LinesAccounted(out_a) + LinesAccounted(out_b), produced)
      << "a " << LinesAccounted(out_a) << ", b " << LinesAccounted(out_b) << "\n--- a ---\n"
      << a.Stderr() << "--- b ---\n"
      << b.Stderr();
}

// A broker that hangs (SIGSTOP) while the input stops: the stop's revoke summarises the open
// groups and sends the commit, the close waits for the broker only up to shutdown_timeout, and
// the daemon exits within it. What was not committed is read again by the next start: every
// line is in the events at least once, and exactly once after removing the replays by event_id.
TEST_F(KafkaTest, StopsWithinItsDeadlineWhenTheBrokerHangs) {
  std::string error;
  ASSERT_TRUE(kafka_test::CreateTopic(broker_.brokers(), "logs", 3, error)) << error;
  std::vector<std::string> values, keys;
  MakeLines(300, 10, "hang", values, keys);
  ASSERT_EQ(kafka_test::Produce(broker_.brokers(), "logs", values, keys), 0u);
  const auto total = static_cast<double>(values.size());
  // A long window: no group closes, so no offset is committed before the stop.
  const std::string first_events = dir_ / "first.ndjson";
  Json config = Config(first_events, {"logs"}, "g-hang", "60s");
  config["workers"]["shutdown_timeout"] = "4s";
  {
    DaemonProcess d(dir_);
    ASSERT_TRUE(d.Start(WriteConfig(config, "first.json"))) << d.Stderr();
    ASSERT_TRUE(d.WaitMetricAtLeast("logfold_received_total", {"input=\"kafka-in\""}, total,
                                    milliseconds(60000 * kSlowdown)))
        << d.Stderr();
    const kafka_test::StopAtAHungBroker stop =
        kafka_test::StopWhileTheBrokerHangs(d, broker_, milliseconds(4000));
    ASSERT_TRUE(stop.code.has_value()) << "still running after " << stop.took.count() << " ms\n"
                                       << d.Stderr();
    EXPECT_EQ(*stop.code, 0) << d.Stderr();
    EXPECT_NE(d.Stderr().find("did not close by the shutdown deadline"), std::string::npos)
        << d.Stderr();
  }
  const std::vector<Json> first = ReadEvents(first_events);
  EXPECT_EQ(LinesAccounted(first), values.size()) << "the stop summarises the open groups";

  // The restart (once the old member's session expired) reads again what was not committed;
  // with a 1 s window its groups close by themselves, and the periodic commit covers all.
  const std::string second_events = dir_ / "second.ndjson";
  DaemonProcess d(dir_);
  ASSERT_TRUE(d.Start(WriteConfig(Config(second_events, {"logs"}, "g-hang", "1s"), "second.json")))
      << d.Stderr();
  EXPECT_TRUE(WaitUntil(
      [&] {
        return kafka_test::CommittedTotal(broker_.brokers(), "g-hang", "logs", 3) ==
               static_cast<std::int64_t>(total);
      },
      milliseconds(60000 * kSlowdown), milliseconds(250)))
      << "committed " << kafka_test::CommittedTotal(broker_.brokers(), "g-hang", "logs", 3)
      << " of " << total << "\n"
      << d.Stderr();
  ASSERT_TRUE(d.Signal(SIGTERM));
  ASSERT_EQ(d.WaitExit(milliseconds(30000)), 0) << d.Stderr();
  EXPECT_EQ(kafka_test::CommittedTotal(broker_.brokers(), "g-hang", "logs", 3),
            static_cast<std::int64_t>(total));

  const std::vector<Json> second = ReadEvents(second_events);
  std::vector<Json> all = first;
  all.insert(all.end(), second.begin(), second.end());
  EXPECT_GE(LinesAccounted(all), values.size());
  std::set<std::string> ids;
  std::vector<Json> unique;
  for (const Json& e : all) {
    const std::string id = e.value("event_id", "");
    ASSERT_FALSE(id.empty()) << e.dump();
    if (ids.insert(id).second) unique.push_back(e);
  }
  EXPECT_EQ(LinesAccounted(unique), values.size())
      << "events " << all.size() << ", unique ids " << unique.size() << "\n"
      << d.Stderr();
  // The restart reads nothing again when the stop's commit reached the broker after all
  // (sent before the hang ended), everything when it did not.
  std::printf(
      "lines %zu: read again by the restart %llu, accounted %llu in both runs' events, "
      "%llu after removing replays\n",
      values.size(), static_cast<unsigned long long>(LinesAccounted(second)),
      static_cast<unsigned long long>(LinesAccounted(all)),
      static_cast<unsigned long long>(LinesAccounted(unique)));
}

// No broker at all (nothing listens on the port): the daemon still serves its other duties,
// says why it cannot consume, counts the errors, and stops promptly on SIGTERM.
TEST(KafkaDownTest, ABrokerThatIsDownAtStartIsReportedAndRetried) {
  SkipUnderTsan();
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::uint16_t port = kafka_test::FreePort();
  Json config{
      {"log", {{"level", "info"}, {"stats_interval", "0"}}},
      {"inputs", Json::array({{{"name", "kafka-in"},
                               {"type", "kafka"},
                               {"brokers", "127.0.0.1:" + std::to_string(port)},
                               {"topics", {"logs"}}}})},
      {"outputs",
       Json::array(
           {{{"name", "events"}, {"type", "file"}, {"path", (dir / "events.ndjson").string()}}})},
      {"metrics", {{"port", 0}}}};
  daemon_test::WriteFile(dir / "c.json", config.dump(2));
  DaemonProcess daemon(dir);
  ASSERT_TRUE(daemon.Start(dir / "c.json")) << daemon.Stderr();
  EXPECT_TRUE(daemon.WaitMetricAtLeast("logfold_input_errors_total", {"error=\"kafka\""}, 1,
                                       milliseconds(20000)))
      << daemon.Stderr();
  EXPECT_TRUE(daemon.WaitForStderr("Connection refused")) << daemon.Stderr();
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  EXPECT_EQ(daemon.WaitExit(milliseconds(20000)), 0) << daemon.Stderr();
}

}  // namespace
}  // namespace logfold
