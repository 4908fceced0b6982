// Delivery guarantees of `logfold serve` with an output that is down: SIGTERM ends within
// workers.shutdown_timeout and counts what it gives up in events and lines; a disk buffer
// keeps everything across a restart; a SIGHUP hands a replaced sink's events on.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/late_collector.h"

namespace logfold {
namespace {

using daemon_test::Clock;
using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::LateCollector;
using daemon_test::LinesAccounted;
using daemon_test::TcpClient;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;

#if defined(__SANITIZE_THREAD__)
constexpr int kSlowdown = 4;
#else
constexpr int kSlowdown = 1;
#endif

constexpr int kLines = 1000;  // ~300 KB of events: far more than the collector's 64 KiB buffer

// A number the final stats line gives after `label` ("lost events 12"), or -1.
long long FinalCounter(const std::string& log, const std::string& label) {
  const std::size_t line = log.rfind("stats: received ");
  if (line == std::string::npos) return -1;
  const std::size_t at = log.find(label + " ", line);
  if (at == std::string::npos) return -1;
  return std::strtoll(log.c_str() + at + label.size() + 1, nullptr, 10);
}

class DeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }
  void TearDown() override {
    if (HasFailure())
      std::fprintf(stderr, "--- daemon stderr ---\n%s\n", daemon_->Stderr().c_str());
  }

  // Annotate mode (one event per line), the events file and a 64 KiB tcp output to the
  // collector, which is down; the given shutdown bound.
  Json Config(const std::string& shutdown_timeout, bool disk_buffer) {
    Json config = daemon_test::LoopbackConfig(dir_ / "events.ndjson");
    config["engine"]["mode"] = "annotate";
    config["workers"]["shutdown_timeout"] = shutdown_timeout;
    Json collector = {{"name", "collector"},       {"type", "tcp"},     {"address", "127.0.0.1"},
                      {"port", collector_.port()}, {"buffer", "64KiB"}, {"reconnect_min", "10ms"},
                      {"reconnect_max", "100ms"}};
    if (disk_buffer) {
      collector["disk_buffer"] = (dir_ / "disk").string();
      collector["disk_buffer_max_size"] = "64MiB";
    }
    config["outputs"].push_back(collector);
    return config;
  }

  bool Start(const Json& config) {
    daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
    daemon_ = std::make_unique<DaemonProcess>(dir_);
    return daemon_->Start(dir_ / "logfold.json");
  }

  void SendLines() {
    TcpClient client(daemon_->InputPort("tcp-in", "tcp"));
    std::string payload;
    for (int i = 0; i < kLines; ++i) {
      payload += "<13>1 2024-05-01T12:00:00.000Z d-host d-app - - - seq=" + std::to_string(i) +
                 " pad " + std::string(200, 'p') + "\n";
    }
    ASSERT_TRUE(client.Send(payload));
    client.Close();
  }

  // SIGTERM; the time until the daemon exited (exit code 0 expected).
  milliseconds Terminate() {
    const auto start = Clock::now();
    EXPECT_TRUE(daemon_->Signal(SIGTERM));
    const std::optional<int> code = daemon_->WaitExit(milliseconds(60000));
    EXPECT_EQ(code, std::optional<int>(0));
    return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  }

  // Which seq numbers reached the collector, and how often.
  std::vector<int> SeqCounts() {
    std::vector<int> counts(kLines, 0);
    const std::string data = collector_.data();
    for (std::size_t at = 0; (at = data.find("\"message\":\"seq=", at)) != std::string::npos;) {
      at += 15;
      const long seq = std::strtol(data.c_str() + at, nullptr, 10);
      if (seq >= 0 && seq < kLines) ++counts[static_cast<std::size_t>(seq)];
    }
    return counts;
  }
  int SeqsReceived() {
    const std::vector<int> c = SeqCounts();
    return static_cast<int>(std::count_if(c.begin(), c.end(), [](int n) { return n > 0; }));
  }

  TempDir dir_;
  LateCollector collector_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(DeliveryTest, SigtermWithADeadOutputEndsWithinTheBoundAndCountsEventsAndLinesLost) {
  ASSERT_TRUE(Start(Config("3s", /*disk_buffer=*/false)));
  SendLines();
  // A worker blocks on the full collector output; the file output got what came before.
  ASSERT_TRUE(daemon_->WaitMetricAtLeast("logfold_output_stalls_total", {}, 1));
  const milliseconds took = Terminate();
  EXPECT_LT(took, milliseconds(3000 + 1500 * kSlowdown)) << "the bound is 3 s";
  const std::string log = daemon_->Stderr();
  // Every event the collector never got is counted, in events and in the lines they stand for.
  EXPECT_EQ(FinalCounter(log, "lost events"), kLines) << log;
  EXPECT_EQ(FinalCounter(log, "lost lines"), kLines);
  EXPECT_EQ(SeqsReceived(), 0);
  std::vector<Json> events;
  std::string error;
  ASSERT_TRUE(
      daemon_test::ParseNdjson(daemon_test::ReadFile(dir_ / "events.ndjson"), events, error));
  EXPECT_EQ(LinesAccounted(events), static_cast<std::uint64_t>(kLines))
      << "the file output has all";
}

TEST_F(DeliveryTest, SigtermWithAnHttpStoreThatNeverAnswersEndsWithinTheBound) {
  // The collector accepts and reads requests but never responds: a hung log store.
  ASSERT_TRUE(collector_.Listen());
  Json config = daemon_test::LoopbackConfig(dir_ / "events.ndjson");
  config["engine"]["mode"] = "annotate";
  config["workers"]["shutdown_timeout"] = "2s";
  config["outputs"].push_back(
      {{"name", "store"},
       {"type", "http"},
       {"url", "http://127.0.0.1:" + std::to_string(collector_.port()) + "/"},
       {"format", "clickhouse"},
       {"table", "logs"},
       {"batch_max_delay", "10ms"}});
  ASSERT_TRUE(Start(config));
  SendLines();
  ASSERT_TRUE(WaitUntil([&] { return collector_.data().find("POST ") != std::string::npos; },
                        milliseconds(10000)));
  const milliseconds took = Terminate();
  EXPECT_LT(took, milliseconds(2000 + 1500 * kSlowdown)) << "the bound is 2 s";
  EXPECT_EQ(FinalCounter(daemon_->Stderr(), "lost events"), kLines) << "none was confirmed";
  EXPECT_EQ(FinalCounter(daemon_->Stderr(), "lost lines"), kLines);
}

TEST_F(DeliveryTest, ADiskBufferKeepsEverythingAcrossARestartWhileTheOutputIsDown) {
  const Json config = Config("3s", /*disk_buffer=*/true);
  ASSERT_TRUE(Start(config));
  SendLines();
  // The collector output spills to disk, so no worker waits: the file output gets every event.
  EXPECT_TRUE(WaitUntil(
      [&] {
        std::vector<Json> events;
        std::string error;
        std::string text = daemon_test::ReadFile(dir_ / "events.ndjson");
        daemon_test::ParseNdjson(text, events, error);
        return LinesAccounted(events) == static_cast<std::uint64_t>(kLines);
      },
      milliseconds(20000 * kSlowdown)));
  EXPECT_GT(daemon_->Metric("logfold_disk_buffer_bytes", {"sink=\"collector\""}), 0);
  const milliseconds took = Terminate();
  EXPECT_LT(took, milliseconds(3000 + 1500 * kSlowdown));
  std::string log = daemon_->Stderr();
  EXPECT_EQ(FinalCounter(log, "lost events"), 0) << log;
  EXPECT_GT(FinalCounter(log, "disk-buffered bytes"), 0);

  // The collector is back, logfold starts again: everything arrives, once, in order.
  ASSERT_TRUE(collector_.Listen());
  ASSERT_TRUE(Start(config));
  EXPECT_TRUE(WaitUntil([&] { return SeqsReceived() == kLines; }, milliseconds(20000 * kSlowdown)))
      << SeqsReceived() << " of " << kLines;
  const std::vector<int> counts = SeqCounts();
  EXPECT_EQ(std::count(counts.begin(), counts.end(), 1), kLines) << "each event exactly once";
  const std::string data = collector_.data();
  EXPECT_LT(data.find("seq=0 "), data.find("seq=999 ")) << "in order";
  Terminate();
  log = daemon_->Stderr();
  EXPECT_EQ(FinalCounter(log, "lost events"), 0) << log;
  EXPECT_EQ(FinalCounter(log, "disk-buffered bytes"), 0);
}

TEST_F(DeliveryTest, SighupWithADeadOutputLosesNothing) {
  Json config = Config("4s", /*disk_buffer=*/false);  // replaced sinks drain for 1 s
  ASSERT_TRUE(Start(config));
  SendLines();
  ASSERT_TRUE(daemon_->WaitMetricAtLeast("logfold_output_stalls_total", {}, 1));
  config["outputs"][1]["reconnect_max"] = "200ms";  // the collector output is replaced
  daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
  ASSERT_TRUE(daemon_->Signal(SIGHUP));
  ASSERT_TRUE(daemon_->WaitMetricAtLeast("logfold_reloads_total", {}, 1));
  // The old sink gives up on its old destination and hands its events to the new one, which
  // takes them once it has room.
  EXPECT_TRUE(daemon_->WaitForStderr("unsent bytes over", milliseconds(10000 * kSlowdown)));
  ASSERT_TRUE(collector_.Listen());
  EXPECT_TRUE(daemon_->WaitForStderr("handed to its successor", milliseconds(10000 * kSlowdown)));
  EXPECT_TRUE(WaitUntil([&] { return SeqsReceived() == kLines; }, milliseconds(20000 * kSlowdown)))
      << SeqsReceived() << " of " << kLines;
  EXPECT_EQ(daemon_->Metric("logfold_output_lost_events_total"), 0);
  Terminate();
  EXPECT_EQ(FinalCounter(daemon_->Stderr(), "lost events"), 0);
}

TEST_F(DeliveryTest, SighupWithADeadOutputAndADiskBufferLosesNothing) {
  Json config = Config("4s", /*disk_buffer=*/true);
  ASSERT_TRUE(Start(config));
  SendLines();
  ASSERT_TRUE(daemon_->WaitMetricAtLeast("logfold_disk_buffer_bytes", {"sink=\"collector\""}, 1));
  // The replaced sink and its successor share the directory's queue: what the old one held
  // in memory goes back to the front of it, and the new one delivers everything.
  config["outputs"][1]["reconnect_max"] = "200ms";
  daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
  ASSERT_TRUE(daemon_->Signal(SIGHUP));
  ASSERT_TRUE(daemon_->WaitMetricAtLeast("logfold_reloads_total", {}, 1));
  EXPECT_TRUE(daemon_->WaitForStderr("kept in the disk buffer", milliseconds(10000 * kSlowdown)));
  ASSERT_TRUE(collector_.Listen());
  EXPECT_TRUE(WaitUntil([&] { return SeqsReceived() == kLines; }, milliseconds(20000 * kSlowdown)))
      << SeqsReceived() << " of " << kLines;
  EXPECT_EQ(daemon_->Metric("logfold_output_lost_events_total"), 0);
  EXPECT_EQ(daemon_->Metric("logfold_disk_buffer_corrupt_records_total"), 0);
  Terminate();
  EXPECT_EQ(FinalCounter(daemon_->Stderr(), "lost events"), 0);
  EXPECT_EQ(FinalCounter(daemon_->Stderr(), "disk-buffered bytes"), 0);
}

}  // namespace
}  // namespace logfold
