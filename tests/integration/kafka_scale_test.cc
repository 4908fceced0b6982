// Scaling out on Kafka in exactly-once mode (issue #16): three logfold instances in one consumer
// group on a 6-partition topic that a real rsyslogd fills through omkafka (the README's snippet,
// keyed by host) from many hosts. While lines flow, a random instance is kill -9ed and
// restarted again and again, at random points (sometimes in the middle of the rebalance the
// previous restart caused), a fourth instance is added and one is stopped. The committed output
// (read_committed) accounts for every line produced exactly once, and a partition handed over
// by a graceful rebalance (the added and the stopped instance) arrives with no open groups: the
// previous owner's summaries were committed before the next owner restored it. Also: a
// partition's next owner waits for a transaction a dead member left open on the changelog.
// Skipped without the broker's jars, rsyslogd or omkafka, and under TSan (librdkafka is not
// instrumented); 4 kills instead of 10 under ASan. scripts/kafka-scale-soak runs it longer
// (LOGFOLD_SCALE_KILLS, LOGFOLD_SCALE_RATE, LOGFOLD_SCALE_SEED).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/kafka_broker.h"
#include "tests/support/rsyslog_omkafka.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::EnvInt;
using daemon_test::Json;
using daemon_test::LinesAccounted;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using kafka_test::KafkaBroker;
using kafka_test::kSlowdown;
using std::chrono::milliseconds;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
// The sanitizer pass looks for memory errors on these paths, not for more kill points: it
// stays within CI's time with fewer.
constexpr int kDefaultKills = 4;
#else
constexpr int kDefaultKills = 10;
#endif

constexpr int kPartitions = 6;
constexpr int kEventPartitions = 3;
constexpr int kHosts = 48;

// The open groups restored on assignment ("restored N open group(s) of logs/P/ from the
// changelog (assigned)") that `log` reports from byte `from` on: N for each. A rollback after
// a failed transaction restores the partitions the instance keeps ("(rolled back)"); those
// are not handovers.
std::vector<std::uint64_t> AssignedRestoresAfter(const std::string& log, std::size_t from) {
  std::vector<std::uint64_t> counts;
  for (std::size_t at = log.find("restored ", from); at != std::string::npos;
       at = log.find("restored ", at + 1)) {
    const std::size_t eol = log.find('\n', at);
    if (log.substr(at, eol - at).find("(assigned)") == std::string::npos) continue;
    counts.push_back(std::strtoull(log.c_str() + at + 9, nullptr, 10));
  }
  return counts;
}

// One run of an instance (a restart is a new run with the same id): its own directory, so
// the log of every run stays for the report.
struct Instance {
  std::string id;
  std::unique_ptr<TempDir> dir = std::make_unique<TempDir>();
  std::unique_ptr<DaemonProcess> daemon = std::make_unique<DaemonProcess>(*dir);
  bool live = false;
};

class KafkaScaleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    if (const std::string why = kafka_test::WhyBrokerTestsCannotRun(); !why.empty()) {
      GTEST_SKIP() << why;
    }
    ASSERT_TRUE(broker_.Start()) << broker_.error();
    std::string error;
    ASSERT_TRUE(kafka_test::CreateExactlyOnceTopics(broker_.brokers(), kPartitions,
                                                    kEventPartitions, error))
        << error;
  }

  void TearDown() override {
    if (!HasFailure()) return;
    for (const auto& r : runs_) {
      std::fprintf(stderr, "--- logfold %s (%s) ---\n%s\n", r->id.c_str(),
                   r->live ? "live" : "ended", r->daemon->Stderr().c_str());
    }
  }

  // The README's exactly-once input, one instance of the group: `id` names its transactional
  // id (stable across its restarts). Dynamic group membership: a killed member's partitions
  // move once its session (3 s) expires, as when a machine dies.
  std::string WriteConfig(const TempDir& dir, const std::string& id) {
    const Json config{
        {"log", {{"level", "info"}, {"stats_interval", "0"}}},
        {"inputs",
         Json::array({{{"name", "kafka"},
                       {"type", "kafka"},
                       {"brokers", broker_.brokers()},
                       {"topics", {"logs"}},
                       {"group_id", "logfold"},
                       {"commit_interval", "200ms"},
                       {"exactly_once", true},
                       {"changelog_topic", "changelog"},
                       {"transactional_id", "logfold-" + id},
                       {"properties",
                        {{"session.timeout.ms", "3000"}, {"heartbeat.interval.ms", "500"}}}}})},
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

  Instance& StartInstance(const std::string& id) {
    runs_.push_back(std::make_unique<Instance>());
    Instance& r = *runs_.back();
    r.id = id;
    EXPECT_TRUE(r.dir->ok());
    r.live = r.daemon->Start(WriteConfig(*r.dir, id), milliseconds(30000 * kSlowdown));
    EXPECT_TRUE(r.live) << r.daemon->Stderr();
    return r;
  }

  std::vector<Instance*> Live() {
    std::vector<Instance*> live;
    for (const auto& r : runs_) {
      if (r->live) live.push_back(r.get());
    }
    return live;
  }

  // Every partition assigned, and to every live instance at least one, at two looks 300 ms
  // apart (a rebalance in its second, cooperative round would show in between).
  bool WaitBalanced(milliseconds timeout) {
    auto balanced = [&] {
      double sum = 0;
      for (Instance* r : Live()) {
        const double n = r->daemon->Metric("logfold_kafka_assigned_partitions");
        if (n < 1) return false;
        sum += n;
      }
      return sum == kPartitions;
    };
    return WaitUntil(
        [&] {
          if (!balanced()) return false;
          std::this_thread::sleep_for(milliseconds(300));
          return balanced();
        },
        timeout, milliseconds(100));
  }

  // The log lengths of the live instances now: restores logged after them are the ones a
  // rebalance from now on caused.
  std::vector<std::pair<Instance*, std::size_t>> Mark() {
    std::vector<std::pair<Instance*, std::size_t>> marks;
    for (Instance* r : Live()) marks.emplace_back(r, r->daemon->Stderr().size());
    return marks;
  }

  // After a graceful rebalance since `marks` (plus `fresh`, an instance started since): every
  // partition that moved was restored with no open groups, i.e. its previous owner summarised
  // its groups and committed that (with the offsets the marker matched) before it moved.
  void ExpectHandedOverEmpty(const std::vector<std::pair<Instance*, std::size_t>>& marks,
                             Instance* fresh, const std::string& what) {
    std::vector<std::pair<Instance*, std::size_t>> all = marks;
    if (fresh != nullptr) all.emplace_back(fresh, 0);
    std::size_t restores = 0;
    for (const auto& [r, from] : all) {
      if (!r->live) continue;
      for (std::uint64_t n : AssignedRestoresAfter(r->daemon->Stderr(), from)) {
        ++restores;
        EXPECT_EQ(n, 0u) << what << ": instance " << r->id
                         << " restored open groups of a partition handed over gracefully";
      }
    }
    EXPECT_GT(restores, 0u) << what << ": no partition moved";
  }

  TempDir dir_;
  KafkaBroker broker_{dir_};
  std::vector<std::unique_ptr<Instance>> runs_;
};

TEST_F(KafkaScaleTest, ThreeInstancesKilledAddedAndRemovedCountEveryLineOnce) {
  const int kills = EnvInt("LOGFOLD_SCALE_KILLS", kDefaultKills);
  const int rate = EnvInt("LOGFOLD_SCALE_RATE", 400);  // lines per second into rsyslog
  const unsigned seed =
      static_cast<unsigned>(EnvInt("LOGFOLD_SCALE_SEED", static_cast<int>(std::random_device{}())));
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed) + " (LOGFOLD_SCALE_SEED repeats its choices)");
  if (kafka_test::RsyslogdPath().empty() || !kafka_test::HaveOmkafka()) {
    GTEST_SKIP() << "rsyslogd or omkafka missing (Debian packages rsyslog, rsyslog-kafka)";
  }

  kafka_test::RsyslogProcess rsyslog(dir_);
  std::string error;
  const kafka_test::Snippet snippet = kafka_test::ReadmeOmkafka(broker_.brokers());
  ASSERT_FALSE(snippet.module.empty() || snippet.key_template.empty() || snippet.action.empty())
      << "README.md has no omkafka snippet with broker kafka1:9092";
  ASSERT_TRUE(rsyslog.Start(snippet, error)) << error;

  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(StartInstance(id).live);
  ASSERT_TRUE(WaitBalanced(milliseconds(60000 * kSlowdown)));

  // Many hosts write through rsyslog for as long as instances are being killed, added and
  // removed: every 50 ms a chunk, each line unique.
  std::atomic<bool> stop_feeding{false}, feed_failed{false};
  std::atomic<std::uint64_t> sent{0};
  std::thread feeder([&] {
    daemon_test::TcpClient client(rsyslog.port());
    if (!client.connected()) {
      feed_failed = true;
      return;
    }
    const int chunk = std::max(1, rate / 20);
    std::uint64_t i = 0;
    while (!stop_feeding.load()) {
      std::string text;
      for (int n = 0; n < chunk; ++n, ++i) {
        text += "<14>1 2026-11-25T10:00:00Z host" + std::to_string(i % kHosts) + " app" +
                std::to_string(i % 3) + " - - - job " + std::to_string(i) + " finished in " +
                std::to_string(i % 89) + " ms\n";
      }
      if (!client.Send(text)) {
        feed_failed = true;
        return;
      }
      sent += static_cast<std::uint64_t>(chunk);
      std::this_thread::sleep_for(milliseconds(50));
    }
  });
  // A failed assertion returns early: the feeder stops with it.
  struct StopFeeder {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~StopFeeder() {
      stop = true;
      if (thread.joinable()) thread.join();
    }
  } stop_feeder{stop_feeding, feeder};

  std::uniform_int_distribution<int> delay(0, 1500);
  int kills_done = 0, mid_rebalance = 0;
  for (int k = 0; k < kills; ++k) {
    if (k == kills / 3) {
      // Scale up: a fourth instance takes partitions from the three (once the last restart's
      // rebalance is over, so that every partition that moves is handed over gracefully).
      ASSERT_TRUE(WaitBalanced(milliseconds(60000 * kSlowdown))) << "before adding d";
      const auto marks = Mark();
      Instance& added = StartInstance("d");
      ASSERT_TRUE(added.live);
      ASSERT_TRUE(WaitBalanced(milliseconds(60000 * kSlowdown))) << "after adding d";
      ExpectHandedOverEmpty(marks, &added, "adding d");
    }
    if (k == kills / 2) {
      // A machine dies: an instance is kill -9ed and never comes back. The others take its
      // partitions once its session expires, with whatever transaction it had open left to
      // the broker's transaction timeout (no restart fences it), and a new instance with a
      // transactional id of its own replaces it.
      std::this_thread::sleep_for(milliseconds(delay(rng)));
      std::vector<Instance*> live = Live();
      Instance* dead = live[rng() % live.size()];
      ASSERT_TRUE(dead->daemon->Signal(SIGKILL));
      dead->daemon->WaitExit(milliseconds(10000));
      dead->live = false;
      ASSERT_TRUE(WaitBalanced(milliseconds(60000 * kSlowdown))) << "after " << dead->id << " died";
      ASSERT_TRUE(StartInstance("e").live);
    }
    if (k == 2 * kills / 3) {
      // Scale down: a random instance stops (SIGTERM), the others take its partitions.
      ASSERT_TRUE(WaitBalanced(milliseconds(60000 * kSlowdown))) << "before removing one";
      std::vector<Instance*> live = Live();
      Instance* removed = live[rng() % live.size()];
      removed->live = false;
      const auto marks = Mark();
      ASSERT_TRUE(removed->daemon->Signal(SIGTERM));
      EXPECT_EQ(removed->daemon->WaitExit(milliseconds(30000 * kSlowdown)), 0)
          << removed->daemon->Stderr();
      ASSERT_TRUE(WaitBalanced(milliseconds(60000 * kSlowdown)))
          << "after removing " << removed->id;
      ExpectHandedOverEmpty(marks, nullptr, "removing " + removed->id);
    }
    // A random point: usually once the group is balanced again, every third time while the
    // previous restart's rebalance may still be going on.
    if (rng() % 3 != 0) {
      ASSERT_TRUE(WaitBalanced(milliseconds(60000 * kSlowdown))) << "before kill " << k;
    } else {
      ++mid_rebalance;
    }
    std::this_thread::sleep_for(milliseconds(delay(rng)));
    std::vector<Instance*> live = Live();
    Instance* victim = live[rng() % live.size()];
    ASSERT_TRUE(victim->daemon->Signal(SIGKILL));
    victim->daemon->WaitExit(milliseconds(10000));
    victim->live = false;
    ++kills_done;
    ASSERT_TRUE(StartInstance(victim->id).live);
  }
  ASSERT_TRUE(WaitBalanced(milliseconds(60000 * kSlowdown))) << "after the last kill";
  stop_feeding = true;
  if (feeder.joinable()) feeder.join();
  ASSERT_FALSE(feed_failed.load()) << rsyslog.Diagnostics();

  // rsyslog produced every line it took (the records of "logs" are what the instances read).
  std::int64_t produced = 0;
  EXPECT_TRUE(WaitUntil(
      [&] {
        produced = kafka_test::HighWatermarkTotal(broker_.brokers(), "logs", kPartitions);
        return produced >= static_cast<std::int64_t>(sent.load());
      },
      milliseconds(60000), milliseconds(200)))
      << "produced " << produced << " of " << sent.load() << "\n"
      << rsyslog.Diagnostics();
  ASSERT_EQ(produced, static_cast<std::int64_t>(sent.load())) << rsyslog.Diagnostics();

  // The instances left fold the rest and close every group (window 3 s, max_hold 5 s).
  std::uint64_t accounted = 0;
  EXPECT_TRUE(WaitUntil(
      [&] {
        accounted = LinesAccounted(
            kafka_test::ReadCommitted(broker_.brokers(), "events", kEventPartitions));
        return accounted >= static_cast<std::uint64_t>(produced);
      },
      milliseconds(120000 * kSlowdown), milliseconds(1000)))
      << "accounted " << accounted << " of " << produced;

  std::uint64_t restored = 0;
  double rebalances = 0, aborts = 0;
  for (Instance* r : Live()) {
    rebalances += r->daemon->Metric("logfold_kafka_rebalances_total");
    aborts += r->daemon->Metric("logfold_kafka_transactions_total", {"result=\"abort\""});
    ASSERT_TRUE(r->daemon->Signal(SIGTERM));
    EXPECT_EQ(r->daemon->WaitExit(milliseconds(30000 * kSlowdown)), 0) << r->daemon->Stderr();
    r->live = false;
  }
  for (const auto& r : runs_) {
    const std::string log = r->daemon->Stderr();
    restored += kafka_test::RestoredGroups(log);
    // A changelog that did not match its offsets would have stopped a partition.
    EXPECT_EQ(log.find("not consuming it"), std::string::npos) << r->id << ":\n" << log;
  }
  // Kills left open groups behind that the next owners restored and went on folding.
  EXPECT_GT(restored, 0u);
  std::printf(
      "%d kills (%d during a rebalance), 4 instances (one added, one removed), %lld lines "
      "through rsyslog, %llu open groups restored, %.0f rebalance callbacks and %.0f aborted "
      "transactions in the last runs\n",
      kills_done, mid_rebalance, static_cast<long long>(produced),
      static_cast<unsigned long long>(restored), rebalances, aborts);
  // Exactly: a line counted twice would show as more, a lost one as less.
  EXPECT_EQ(
      LinesAccounted(kafka_test::ReadCommitted(broker_.brokers(), "events", kEventPartitions)),
      static_cast<std::uint64_t>(produced));
  const std::optional<int> rsyslog_code = rsyslog.Stop();
  ASSERT_TRUE(rsyslog_code.has_value());
  EXPECT_EQ(*rsyslog_code, 0) << rsyslog.Diagnostics();
}

// A member that died while committing left a transaction open on a partition's changelog (a
// producer of its own here, whose transaction the broker aborts after 20 s). Until then
// read_committed readers see nothing of the changelog after its first record: the partition's
// next owner commits after it, and stops; the owner after that must not restore the older
// state (whose marker shows the same offset, with the groups the stop closed still open, so
// that their lines would be counted again) but wait for the transaction to end.
TEST_F(KafkaScaleTest, ARestoreWaitsForATransactionLeftOpenOnTheChangelog) {
  std::vector<std::string> values;
  for (int i = 0; i < 600; ++i) {
    values.push_back("<14>1 2026-11-25T10:00:00Z host" + std::to_string(i % 8) + " app - - - job " +
                     std::to_string(i) + " finished in " + std::to_string(i % 89) + " ms");
  }
  ASSERT_EQ(kafka_test::Produce(broker_.brokers(), "logs", values, {}, {}, 0), 0u);

  // The first owner restores, folds the lines and commits them with their groups, still open
  // (window 3 s) when it stops below.
  Instance& x = StartInstance("x");
  ASSERT_TRUE(x.live);
  ASSERT_TRUE(WaitUntil(
      [&] { return kafka_test::CommittedTotal(broker_.brokers(), "logfold", "logs", 6) == 600; },
      milliseconds(60000 * kSlowdown), milliseconds(200)))
      << x.daemon->Stderr();

  // The dead member's transaction: one record on the changelog partition of logs/0.
  auto zombie = kafka_test::MakeProducer(broker_.brokers(), {{"transactional.id", "dead-member"},
                                                             {"enable.idempotence", "true"},
                                                             {"transaction.timeout.ms", "20000"}});
  ASSERT_TRUE(zombie);
  auto ok = [](rd_kafka_error_t* e) {
    const std::string what = e == nullptr ? "" : rd_kafka_error_string(e);
    if (e != nullptr) rd_kafka_error_destroy(e);
    return what;
  };
  ASSERT_EQ(ok(rd_kafka_init_transactions(zombie->rk, 30000)), "");
  ASSERT_EQ(ok(rd_kafka_begin_transaction(zombie->rk)), "");
  const std::string record = "left open";
  ASSERT_EQ(rd_kafka_producev(zombie->rk, RD_KAFKA_V_TOPIC("changelog"), RD_KAFKA_V_PARTITION(0),
                              RD_KAFKA_V_KEY("dead-member", 11),
                              RD_KAFKA_V_VALUE(const_cast<char*>(record.data()), record.size()),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(zombie->rk, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);

  // The first owner stops: its groups are summarised and closed in a commit that lands after
  // the open transaction (same offsets, no open groups).
  ASSERT_TRUE(x.daemon->Signal(SIGTERM));
  ASSERT_EQ(x.daemon->WaitExit(milliseconds(30000 * kSlowdown)), 0) << x.daemon->Stderr();
  x.live = false;

  // The next owner waits for the transaction to end, then restores the state after the stop.
  Instance& y = StartInstance("y");
  ASSERT_TRUE(y.live);
  EXPECT_TRUE(y.daemon->WaitForStderr("logs/0/: the changelog has a transaction open",
                                      milliseconds(30000 * kSlowdown)));
  EXPECT_TRUE(
      y.daemon->WaitForStderr("restored 0 open group(s) of logs/0/ from the changelog (assigned)",
                              milliseconds(60000 * kSlowdown)));
  ASSERT_EQ(kafka_test::Produce(broker_.brokers(), "logs", values, {}, {}, 0), 0u);
  std::uint64_t accounted = 0;
  EXPECT_TRUE(WaitUntil(
      [&] {
        accounted = LinesAccounted(
            kafka_test::ReadCommitted(broker_.brokers(), "events", kEventPartitions));
        return accounted >= 1200;
      },
      milliseconds(60000 * kSlowdown), milliseconds(1000)))
      << "accounted " << accounted;
  ASSERT_TRUE(y.daemon->Signal(SIGTERM));
  EXPECT_EQ(y.daemon->WaitExit(milliseconds(30000 * kSlowdown)), 0);
  y.live = false;
  EXPECT_EQ(y.daemon->Stderr().find("not consuming it"), std::string::npos);
  // Exactly: the groups the first owner closed at its stop were not restored and counted again.
  EXPECT_EQ(
      LinesAccounted(kafka_test::ReadCommitted(broker_.brokers(), "events", kEventPartitions)),
      1200u);
}

}  // namespace
}  // namespace logfold
