// Tests for the WorkerPool's salted deliveries (Kafka partitions): lines of one scope with
// different salts fold in separate groups and a scope seen under two salts is counted;
// CloseSalted summarises the groups of the named salts only, before it answers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"
#include "daemon/runtime/wall_clock.h"
#include "daemon/workers/worker_pool.h"

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
  using Sink::Stop;
  bool Stop(std::chrono::steady_clock::time_point, std::string*) override { return true; }
  std::size_t buffered_bytes() const override { return 0; }
  std::vector<nlohmann::json> events() const {
    std::lock_guard lock(mu_);
    std::vector<nlohmann::json> out;
    std::istringstream in(text_);
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }

 private:
  const std::string name_ = "memory";
  mutable std::mutex mu_;
  std::string text_;
};

// Lines of one shape from one host; `tag` is in a token that varies anyway.
std::vector<std::string> Lines(int n, const std::string& tag) {
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) {
    lines.push_back("<13>Nov 22 08:00:00 web1 app: request " + tag + "-" + std::to_string(i) +
                    " took " + std::to_string(i % 50) + " ms");
  }
  return lines;
}

std::uint64_t SummarisedLines(const std::vector<nlohmann::json>& events, const std::string& tag) {
  std::uint64_t n = 0;
  for (const auto& e : events) {
    if (e["kind"] != "summary") continue;
    // A summary's samples are its group's first and latest lines: both of that source.
    bool all = !e["samples"].empty();
    for (const auto& s : e["samples"]) {
      all = all && s.value("message", "").find("request " + tag + "-") != std::string::npos;
    }
    if (!all) continue;
    n += e["count"].get<std::uint64_t>();
  }
  return n;
}

TEST(WorkerPoolSaltTest, CloseSaltedSummarisesOnlyThoseSourcesGroups) {
  Metrics metrics;
  MemorySink sink;
  WorkerPool::Options options;
  options.threads = 2;
  options.flush_interval_us = 5'000;
  options.inputs = {SyslogParser::Options{}};
  options.merger.window_us = 3600'000'000;  // only CloseSalted and Stop close groups
  options.merger.max_hold_us = 3600'000'000;
  WorkerPool pool(options, {WorkerPool::Output{&sink}}, metrics);
  ASSERT_TRUE(pool.Start());

  const std::vector<std::string> a = Lines(50, "pa"), b = Lines(30, "pb");
  std::vector<std::string_view> va(a.begin(), a.end()), vb(b.begin(), b.end());
  // Arrival now: the workers flush by the wall clock.
  const TimeUs now = WallClockNowUs();
  ASSERT_TRUE(pool.TryDeliverSalted(0, va, now, nullptr, 11));
  ASSERT_TRUE(pool.TryDeliverSalted(0, vb, now, nullptr, 22));

  // A periodic checkpoint queued first waits for its windows (an hour): the CloseSalted
  // behind it is answered on its own anyway.
  std::atomic<bool> periodic_answered{false};
  pool.Checkpoint(false, [&](bool) { periodic_answered = true; });
  std::promise<bool> answered;
  pool.CloseSalted({11}, [&](bool ok) { answered.set_value(ok); });
  auto done = answered.get_future();
  ASSERT_EQ(done.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(done.get());
  // Answered: salt 11's group is summarised with all of its lines, salt 22's is still open.
  const auto events = sink.events();
  EXPECT_EQ(SummarisedLines(events, "pa"), a.size() - 1);  // the first line went as `first`
  EXPECT_EQ(SummarisedLines(events, "pb"), 0u);
  // The same scope came with two salts: counted once, when it switched (published with the
  // open group count at the end of the worker's round).
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while ((pool.open_groups() != 1 || metrics.Value("logfold_kafka_scope_split_total") != 1) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(pool.open_groups(), 1u);
  EXPECT_EQ(metrics.Value("logfold_kafka_scope_split_total"), 1u);
  EXPECT_FALSE(periodic_answered.load());

  pool.Stop();
  EXPECT_EQ(SummarisedLines(sink.events(), "pb"), b.size() - 1);
}

}  // namespace
}  // namespace logfold
