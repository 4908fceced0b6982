// Tests for WorkerPool with its real worker threads: lines delivered while the settings are
// reloaded are all accounted for, and old settings versions are freed instead of kept.
#include "daemon/worker_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/metrics.h"
#include "daemon/sink.h"

namespace logfold {
namespace {

using namespace std::chrono_literals;

// Keeps every NDJSON batch in memory.
class MemorySink final : public Sink {
 public:
  const std::string& name() const override { return name_; }
  SinkEncoding encoding() const override { return SinkEncoding::kNdjson; }
  bool Submit(std::string_view batch, std::chrono::steady_clock::time_point) override {
    std::lock_guard lock(mu_);
    text_ += batch;
    return true;
  }
  void Reopen() override {}
  bool Stop(std::chrono::steady_clock::time_point) override { return true; }
  std::size_t buffered_bytes() const override { return 0; }
  std::string text() const {
    std::lock_guard lock(mu_);
    return text_;
  }

 private:
  const std::string name_ = "memory";
  mutable std::mutex mu_;
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

TEST(WorkerPoolTest, ReloadsFreeOldSettingsVersions) {
  Metrics metrics;
  MemorySink sink;
  WorkerPool::Options options;
  options.threads = 2;
  options.flush_interval_us = 5'000;
  options.inputs = {SyslogParser::Options{}};
  WorkerPool pool(options, {WorkerPool::Output{&sink}}, metrics);
  pool.Start();

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

}  // namespace
}  // namespace logfold
