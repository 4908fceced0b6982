// The kafka input keeps open groups per assigned partition, against a real broker
// (tests/support/kafka_broker.h): lines of one scope arriving on two partitions fold in two
// groups (and are counted), and a revoke summarises the revoked partition's groups only,
// before the other member takes it. Skipped without the broker's jars and under TSan.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <string>
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

// Produces `values` to one partition of `topic` and waits for every acknowledgement.
bool ProduceToPartition(const std::string& brokers, const std::string& topic,
                        std::int32_t partition, const std::vector<std::string>& values) {
  auto p = kafka_test::MakeProducer(brokers, {{"enable.idempotence", "true"}});
  if (!p) return false;
  for (const std::string& v : values) {
    while (true) {
      const rd_kafka_resp_err_t err =
          rd_kafka_producev(p->rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                            RD_KAFKA_V_VALUE(const_cast<char*>(v.data()), v.size()),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(p->rk, 50);
        continue;
      }
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return false;
      break;
    }
    rd_kafka_poll(p->rk, 0);
  }
  return rd_kafka_flush(p->rk, 60000) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

// `n` lines of one shape from `hosts` hosts; `tag` names the partition in a token that varies
// anyway (so without per-partition groups both partitions' lines would share groups).
std::vector<std::string> Lines(int n, int hosts, const std::string& tag) {
  std::vector<std::string> values;
  for (int i = 0; i < n; ++i) {
    values.push_back("<14>1 2026-11-25T10:00:00Z host" + std::to_string(i % hosts) +
                     " app - - - request " + tag + "-" + std::to_string(i) + " took " +
                     std::to_string(i % 97) + " ms");
  }
  return values;
}

std::vector<Json> ReadEvents(const std::string& path) {
  std::vector<Json> events;
  std::string error;
  EXPECT_TRUE(daemon_test::ParseNdjson(daemon_test::ReadFile(path), events, error)) << error;
  return events;
}

// The partition tag of an event's group: its line's message says it ("request pN-..."), and
// for a summary both samples (the group's first and latest line) must say the same.
std::string TagOf(const Json& e) {
  auto tag = [](const std::string& message) {
    const std::size_t at = message.find("request p");
    return at == std::string::npos ? std::string("?") : message.substr(at + 8, 2);
  };
  if (e.contains("message")) return tag(e.value("message", ""));
  std::string found;
  for (const Json& s : e.value("samples", Json::array())) {
    const std::string t = tag(s.value("message", ""));
    if (!found.empty() && t != found) return "mixed";
    found = t;
  }
  return found;
}

class KafkaPartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    if (const std::string why = kafka_test::WhyBrokerTestsCannotRun(); !why.empty()) {
      GTEST_SKIP() << why;
    }
    ASSERT_TRUE(broker_.Start()) << broker_.error();
  }

  std::string WriteConfig(const std::string& events, const std::string& name) {
    const Json config{
        {"log", {{"level", "info"}, {"stats_interval", "0"}}},
        {"inputs", Json::array({{{"name", "kafka-in"},
                                 {"type", "kafka"},
                                 {"brokers", broker_.brokers()},
                                 {"topics", {"logs"}},
                                 {"group_id", "gp"},
                                 {"commit_interval", "500ms"},
                                 {"properties", {{"session.timeout.ms", "10000"}}}}})},
        // A long window: only a revoke or a stop closes groups.
        {"engine", {{"window", "120s"}, {"max_hold", "120s"}}},
        {"workers", {{"threads", 2}, {"flush_interval", "100ms"}}},
        {"outputs", Json::array({{{"name", "events"}, {"type", "file"}, {"path", events}}})},
        {"metrics", {{"port", 0}}}};
    const std::string path = dir_ / name;
    daemon_test::WriteFile(path, config.dump(2));
    return path;
  }

  TempDir dir_;
  KafkaBroker broker_{dir_};
};

TEST_F(KafkaPartitionTest, ARevokeSummarisesOnlyTheRevokedPartitionsGroupsBeforeItMoves) {
  std::string error;
  ASSERT_TRUE(kafka_test::CreateTopic(broker_.brokers(), "logs", 2, error)) << error;
  // The same hosts write to both partitions (producers not keyed by scope).
  const std::vector<std::string> p0 = Lines(600, 4, "p0"), p1 = Lines(400, 4, "p1");
  ASSERT_TRUE(ProduceToPartition(broker_.brokers(), "logs", 0, p0));
  ASSERT_TRUE(ProduceToPartition(broker_.brokers(), "logs", 1, p1));
  const double total = static_cast<double>(p0.size() + p1.size());

  const std::string events_a = dir_ / "a.ndjson", events_b = dir_ / "b.ndjson";
  TempDir dir_b;
  ASSERT_TRUE(dir_b.ok());
  DaemonProcess a(dir_), b(dir_b);
  ASSERT_TRUE(a.Start(WriteConfig(events_a, "a.json"))) << a.Stderr();
  ASSERT_TRUE(a.WaitMetricAtLeast("logfold_lines_processed_total", {}, total,
                                  milliseconds(60000 * kSlowdown)))
      << a.Stderr();
  // Each host's lines arrived on both partitions: counted, and folded apart.
  EXPECT_GT(a.Metric("logfold_kafka_scope_split_total"), 0) << a.Stderr();
  EXPECT_EQ(a.Metric("logfold_groups_open"), 8) << "4 hosts x 2 partitions";

  // B joins: A gives one partition up (cooperative-sticky), summarising its groups first.
  ASSERT_TRUE(b.Start(WriteConfig(events_b, "b.json"))) << b.Stderr();
  ASSERT_TRUE(WaitUntil(
      [&] {
        return a.Metric("logfold_kafka_assigned_partitions") == 1 &&
               b.Metric("logfold_kafka_assigned_partitions") == 1;
      },
      milliseconds(60000 * kSlowdown), milliseconds(100)))
      << a.Stderr() << b.Stderr();
  // B holds a partition now: its summaries were already out, and only its.
  const std::vector<Json> out = ReadEvents(events_a);
  std::uint64_t summaries_p0 = 0, summaries_p1 = 0;
  for (const Json& e : out) {
    if (e.value("kind", "") != "summary") continue;
    const std::string tag = TagOf(e);
    (tag == "p0" ? summaries_p0 : summaries_p1) += 1;
  }
  ASSERT_TRUE((summaries_p0 == 4) != (summaries_p1 == 4))
      << "summaries p0 " << summaries_p0 << ", p1 " << summaries_p1 << "\n"
      << a.Stderr();
  EXPECT_EQ(summaries_p0 + summaries_p1, 4u);
  const std::string revoked = summaries_p0 == 4 ? "p0" : "p1";
  const std::size_t revoked_lines = revoked == "p0" ? p0.size() : p1.size();
  // Every line of the revoked partition is accounted, in groups of that partition only.
  EXPECT_EQ(LinesAccounted(out, [&](const Json& e) { return TagOf(e) == revoked; }), revoked_lines);
  EXPECT_EQ(daemon_test::ReadFile(events_b).size(), 0u) << "B re-read nothing";
  EXPECT_EQ(a.Metric("logfold_groups_open"), 4) << "the kept partition's groups stay open";
  EXPECT_EQ(kafka_test::CommittedTotal(broker_.brokers(), "gp", "logs", 2),
            static_cast<std::int64_t>(revoked_lines));

  // Both stop: the rest is summarised; every line is accounted exactly once over both.
  ASSERT_TRUE(b.Signal(SIGTERM));
  ASSERT_EQ(b.WaitExit(milliseconds(30000)), 0) << b.Stderr();
  ASSERT_TRUE(a.Signal(SIGTERM));
  ASSERT_EQ(a.WaitExit(milliseconds(30000)), 0) << a.Stderr();
  const std::vector<Json> all_a = ReadEvents(events_a), all_b = ReadEvents(events_b);
  EXPECT_EQ(LinesAccounted(all_a) + LinesAccounted(all_b), p0.size() + p1.size());
  EXPECT_EQ(kafka_test::CommittedTotal(broker_.brokers(), "gp", "logs", 2),
            static_cast<std::int64_t>(p0.size() + p1.size()));
}

}  // namespace
}  // namespace logfold
