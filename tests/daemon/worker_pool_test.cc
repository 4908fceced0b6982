// Tests for WorkerPool with its real worker threads: lines delivered while the settings are
// reloaded are all accounted for, old settings versions are freed instead of kept, the
// workers' free lists keep only a few small line batches however many a burst needed, and a
// large delivery leaves no scratch behind.
#include "daemon/workers/worker_pool.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {
namespace {

using namespace std::chrono_literals;

// Keeps every NDJSON batch in memory. While held, it refuses batches as a full buffer does
// (waiting until released or the deadline), so the workers stop and deliveries queue up.
class MemorySink final : public Sink {
 public:
  MemorySink() = default;
  MemorySink(std::string name, SinkEncoding encoding)
      : name_(std::move(name)), encoding_(encoding) {}
  const std::string& name() const override { return name_; }
  SinkEncoding encoding() const override { return encoding_; }
  bool Submit(std::string_view batch, std::chrono::steady_clock::time_point deadline) override {
    std::unique_lock lock(mu_);
    if (!released_.wait_until(lock, deadline, [&] { return !held_; })) return false;
    text_ += batch;
    return true;
  }
  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    released_.notify_all();
  }
  void Reopen() override {}
  using Sink::Stop;
  bool Stop(std::chrono::steady_clock::time_point, std::string*) override { return true; }
  std::size_t buffered_bytes() const override { return 0; }
  std::string text() const {
    std::lock_guard lock(mu_);
    return text_;
  }

 private:
  const std::string name_ = "memory";
  const SinkEncoding encoding_ = SinkEncoding::kNdjson;
  mutable std::mutex mu_;
  std::condition_variable released_;
  bool held_ = false;
  std::string text_;
};

// Lines represented by the events: one per `first`, `count` per summary.
std::uint64_t LinesAccounted(const std::string& ndjson) {
  std::uint64_t lines = 0;
  std::istringstream in(ndjson);
  for (std::string line; std::getline(in, line);) {
    const auto event = nlohmann::json::parse(line);
    if (event["kind"] == "first") ++lines;
    if (event["kind"] == "summary") lines += event["count"].get<std::uint64_t>();
  }
  return lines;
}

// Waits, up to a deadline, until the workers have taken `lines` lines through their mergers.
// The count is published at the end of each worker round, after every batch of the round went
// back to its worker's free list or was freed, so the free lists are settled by then.
bool WaitProcessed(const Metrics& metrics, std::uint64_t lines) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (metrics.Value("logfold_lines_processed_total") < lines) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// A started pool of two workers flushing every 5 ms, one syslog input, into a MemorySink.
class WorkerPoolTest : public ::testing::Test {
 protected:
  static WorkerPool::Options TwoWorkers() {
    WorkerPool::Options options;
    options.threads = 2;
    options.flush_interval_us = 5'000;
    options.inputs = {SyslogParser::Options{}};
    return options;
  }
  void SetUp() override { pool.Start(); }

  Metrics metrics;
  MemorySink sink;
  const WorkerPool::Options options = TwoWorkers();
  WorkerPool pool{options, {WorkerPool::Output{&sink}}, metrics};
};

TEST_F(WorkerPoolTest, ReloadsFreeOldSettingsVersions) {
  // Each reload is a new version; this thread delivers between reloads, so the workers and
  // the ingest side keep moving to newer versions while older ones are still being read.
  constexpr int kReloads = 2000;
  const std::size_t bound = options.threads + 2;  // current + one per worker + this thread
  std::size_t most_retained = 0;
  std::uint64_t delivered = 0;
  for (int i = 0; i < kReloads; ++i) {
    MergerOptions merger = options.merger;
    merger.max_groups = 1000 + static_cast<std::size_t>(i);
    pool.Reconfigure(merger, options.inputs, false);
    const std::string line = "<13>Nov 22 08:00:00 host app: request " + std::to_string(i) + " done";
    const std::string_view lines[] = {line};
    if (pool.TryDeliver(0, lines, 1'000'000 + i)) ++delivered;
    most_retained = std::max(most_retained, pool.retained_settings());
  }
  EXPECT_LE(most_retained, bound);
  EXPECT_GT(delivered, 0u);

  // Once every reader has seen the last version, it is the only one left.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (pool.retained_settings() != 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(pool.retained_settings(), 1u);

  pool.Stop();
  EXPECT_EQ(LinesAccounted(sink.text()), delivered);
}

// A recycled batch keeps its buffers' capacity, so the free lists must stay short and hold
// no large batch (the soak's live heap climbed while they could grow): at most 32 batches of
// at most 64 KiB per worker (kFreeBatchesKept, kBatchBytesKept in worker_pool.cc).
TEST_F(WorkerPoolTest, FreeListsKeepAFewSmallBatchesOnly) {
  std::uint64_t delivered = 0;

  // Only deliveries of over 64 KiB for a worker, from empty free lists: nine lines of 8 KiB
  // from one host each (the host picks the worker). None of these batches may be kept.
  const std::string filler(8 * 1024, 'x');
  for (int d = 0; d < 16; ++d) {
    std::vector<std::string> text;
    for (int i = 0; i < 9; ++i) {
      text.push_back("<13>Nov 22 08:00:00 big" + std::to_string(d) + " app: payload " +
                     std::to_string(i) + " " + filler);
    }
    const std::vector<std::string_view> lines(text.begin(), text.end());
    ASSERT_TRUE(pool.TryDeliver(0, lines, 1'000'000 + d));
    delivered += lines.size();
  }
  ASSERT_TRUE(WaitProcessed(metrics, delivered));
  EXPECT_EQ(pool.retained_batches(), 0u);

  // Bursts of small deliveries while the sink is held. Every line is from a new host, so each
  // worker's first batch yields an event and the worker then waits on the sink: the rest of
  // the burst, hundreds of batches, is in flight at once when the sink is released.
  constexpr std::size_t kKeptPerWorker = 32;
  constexpr int kBursts = 3, kDeliveries = 200, kLinesEach = 4;
  for (int burst = 0; burst < kBursts; ++burst) {
    sink.Hold();
    for (int d = 0; d < kDeliveries; ++d) {
      std::vector<std::string> text;
      for (int i = 0; i < kLinesEach; ++i) {
        text.push_back("<13>Nov 22 08:00:01 h" + std::to_string(burst) + "-" + std::to_string(d) +
                       "-" + std::to_string(i) + " app: request done");
      }
      const std::vector<std::string_view> lines(text.begin(), text.end());
      ASSERT_TRUE(pool.TryDeliver(0, lines, 2'000'000 + burst));
      delivered += lines.size();
    }
    // The burst outran the workers: over twice as many batches (of at most kLinesEach lines
    // each) wait as the free lists may keep.
    EXPECT_GT(pool.queued_lines(), 2 * kKeptPerWorker * options.threads * kLinesEach);
    sink.Release();
    ASSERT_TRUE(WaitProcessed(metrics, delivered));
    const std::size_t kept = pool.retained_batches();
    EXPECT_GT(kept, 0u) << "burst " << burst;  // batches are recycled at all
    EXPECT_LE(kept, kKeptPerWorker * options.threads) << "burst " << burst;
  }

  pool.Stop();
  EXPECT_LE(pool.retained_batches(), kKeptPerWorker * options.threads);
  EXPECT_EQ(LinesAccounted(sink.text()), delivered);
}

// Bytes in live heap allocations, every arena and mmapped chunks included.
std::size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// TryDeliver's scratch (about 150 B a line, on the calling thread) does not stay at the size
// of the largest delivery that thread ever made: kept, it crept up with every new largest one
// and was most of the soak's residual RSS drift. After a 20,000-line delivery is processed,
// the live heap is back near where it was.
TEST_F(WorkerPoolTest, LargeDeliveryLeavesNoScratchBehind) {
  std::uint64_t delivered = 0;
  const auto deliver = [&](int count) {
    std::vector<std::string> text;
    for (int i = 0; i < count; ++i) {
      text.push_back("<13>Nov 22 08:00:00 web1 app: request " + std::to_string(i) + " done");
    }
    const std::vector<std::string_view> lines(text.begin(), text.end());
    ASSERT_TRUE(pool.TryDeliver(0, lines, 1'000'000));
    delivered += lines.size();
  };
  deliver(100);  // the engine, its group and the small scratch exist from here on
  ASSERT_TRUE(WaitProcessed(metrics, delivered));
  const std::size_t before = HeapInUse();
  deliver(20'000);
  ASSERT_TRUE(WaitProcessed(metrics, delivered));
  const std::size_t after = HeapInUse();
  // The views alone would keep 20,000 x ~150 B = 3 MB.
  EXPECT_LT(after, before + (1 << 20)) << "before " << before << " after " << after;
  pool.Stop();
  EXPECT_EQ(LinesAccounted(sink.text()), delivered);
}

// A sender's queue share counts its lines from delivery until a worker took them: all of
// them while the workers have not started, none once they were folded, and the sender waiting
// on it is woken then.
TEST(WorkerPoolShareTest, QueueShareCountsLinesUntilTheWorkersTookThem) {
  Metrics metrics;
  MemorySink sink;
  WorkerPool::Options options;
  options.threads = 2;
  options.flush_interval_us = 5'000;
  options.inputs = {SyslogParser::Options{}};
  WorkerPool pool{options, {WorkerPool::Output{&sink}}, metrics};
  const std::shared_ptr<QueueShare> share = pool.NewShare();
  ASSERT_NE(share, nullptr);
  EXPECT_EQ(share->limit(), options.queue_capacity / 16);
  std::vector<std::string> text;
  for (int i = 0; i < 300; ++i) {
    text.push_back("<13>Nov 22 08:00:00 web" + std::to_string(i % 7) + " app: new item " +
                   std::to_string(i));
  }
  const std::vector<std::string_view> lines(text.begin(), text.end());
  ASSERT_TRUE(pool.TryDeliverShared(0, lines, 1'000'000, share));
  ASSERT_TRUE(pool.TryDeliver(0, lines, 1'000'001));  // without a share: not counted in it
  EXPECT_EQ(share->queued(), lines.size());
  EXPECT_FALSE(pool.Settled(*share));
  EXPECT_TRUE(share->Fits(share->limit() - lines.size()));
  EXPECT_FALSE(share->Fits(share->limit() - lines.size() + 1));
  std::atomic<bool> woken{false};
  share->OnRoom(lines.size(), [&] { woken = true; });  // they fit, under half queued: at once
  EXPECT_TRUE(woken.exchange(false));
  // A share of 300 lines resumes its sender at 150 queued (the 300 here: once all are taken).
  auto small = std::make_shared<QueueShare>(300);
  ASSERT_TRUE(pool.TryDeliverShared(0, lines, 1'000'002, small));
  EXPECT_FALSE(small->Fits(1));
  small->OnRoom(1, [&] { woken = true; });
  EXPECT_FALSE(woken.load());
  pool.Start();
  ASSERT_TRUE(WaitProcessed(metrics, 3 * lines.size()));
  EXPECT_TRUE(woken.load());
  EXPECT_EQ(share->queued(), 0u);
  EXPECT_EQ(small->queued(), 0u);
  EXPECT_TRUE(pool.Settled(*share));  // the sink holds nothing unwritten
  pool.Stop();
  EXPECT_EQ(LinesAccounted(sink.text()), 3 * lines.size());
}

// Operators tell threads apart in top -H and perf by name; each worker carries its index.
TEST_F(WorkerPoolTest, WorkerThreadsAreNamed) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    names.push_back(name);
  }
  for (std::size_t i = 0; i < options.threads; ++i) {
    EXPECT_EQ(std::count(names.begin(), names.end(), "lf-worker-" + std::to_string(i)), 1)
        << "worker " << i;
  }
}

// The APP-NAME field (the fourth) of every RFC 5424 record in a syslog batch.
std::set<std::string> AppNames(const std::string& syslog) {
  std::set<std::string> apps;
  std::istringstream in(syslog);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string pri, ts, host, app;
    fields >> pri >> ts >> host >> app;
    apps.insert(app);
  }
  return apps;
}

// Issue #20: a syslog output's app_name names the app of events whose lines carried none (the
// workers wrote "logfold" whatever was configured); outputs naming different apps each get
// theirs, and a line's own app is kept.
TEST(WorkerPoolSyslogTest, EachSyslogOutputUsesItsOwnAppName) {
  Metrics metrics;
  MemorySink a("relay-a", SinkEncoding::kSyslog5424), b("relay-b", SinkEncoding::kSyslog5424),
      c("relay-c", SinkEncoding::kSyslog5424);
  WorkerPool::Options options;
  options.threads = 1;
  options.flush_interval_us = 5'000;
  SyslogParser::Options raw;
  raw.format = InputFormat::kRaw;
  options.inputs = {raw, SyslogParser::Options{}};
  WorkerPool::Output oa{&a}, ob{&b}, oc{&c};
  oa.syslog_app_name = "edge-a";
  ob.syslog_app_name = "edge-b";  // c keeps the default
  WorkerPool pool(options, {oa, ob, oc}, metrics);
  pool.Start();
  const std::string_view no_app[] = {"disk almost full on /var"};
  const std::string_view with_app[] = {"<13>Nov 22 08:00:00 host sshd: session opened"};
  ASSERT_TRUE(pool.TryDeliver(0, no_app, 1'000'000));
  ASSERT_TRUE(pool.TryDeliver(1, with_app, 1'000'001));
  ASSERT_TRUE(WaitProcessed(metrics, 2));
  pool.Stop();
  EXPECT_EQ(AppNames(a.text()), (std::set<std::string>{"edge-a", "sshd"})) << a.text();
  EXPECT_EQ(AppNames(b.text()), (std::set<std::string>{"edge-b", "sshd"})) << b.text();
  EXPECT_EQ(AppNames(c.text()), (std::set<std::string>{"logfold", "sshd"})) << c.text();
}

}  // namespace
}  // namespace logfold
