// WindowMerger::Add throughput on generated syslog lines (bench/corpus_lines.h) with a null
// sink, with NDJSON serialisation, with 10k/100k other groups open (memory per group), and
// the many-groups-in-one-scope costs: opening yet another group, closing them all.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/corpus_lines.h"
#include "pipeline/event.h"
#include "pipeline/event_json.h"
#include "pipeline/log_record.h"
#include "pipeline/window_merger.h"

namespace logfold {
namespace {

constexpr std::size_t kLines = 100'000;
constexpr TimeUs kT0 = 1'709'251'200'000'000;  // 2024-03-01T00:00:00Z
constexpr TimeUs kLineGapUs = 10;              // 100k lines/s of input time

const std::vector<LogRecord>& Records() {
  static const std::vector<LogRecord> records = corpus::ToRecords(corpus::Load(kLines));
  return records;
}

class NullSink : public EventSink {
 public:
  void OnEvent(const Event& e) override { benchmark::DoNotOptimize(e.group_id); }
};

// Serialises every event into one reused buffer, emptied as a writer would every 64 KiB.
class NdjsonSink : public EventSink {
 public:
  NdjsonSink() { buf_.reserve(kFlushAt + 4096); }
  void OnEvent(const Event& e) override {
    AppendEventJson(e, buf_);
    if (buf_.size() >= kFlushAt) {
      benchmark::DoNotOptimize(buf_.data());
      bytes_ += buf_.size();
      buf_.clear();
    }
  }
  std::size_t bytes() const { return bytes_ + buf_.size(); }

 private:
  static constexpr std::size_t kFlushAt = 64 * 1024;
  std::string buf_;
  std::size_t bytes_ = 0;
};

std::size_t ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2
             ? static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE))
             : 0;
}

// Counters over the lines added while timing (`before` is the stats when timing began).
void ReportMerger(benchmark::State& state, const WindowMerger& merger, const MergerStats& before) {
  const MergerStats& st = merger.stats();
  const double lines = static_cast<double>(st.lines - before.lines);
  auto percent = [&](std::uint64_t now, std::uint64_t then) {
    return lines == 0 ? 0.0 : 100.0 * static_cast<double>(now - then) / lines;
  };
  state.SetItemsProcessed(state.iterations());
  state.counters["open_groups"] = static_cast<double>(merger.open_groups());
  state.counters["merged_%"] = percent(st.lines_merged, before.lines_merged);
  state.counters["exact_%"] = percent(st.exact_hits, before.exact_hits);
  state.counters["events/line"] =
      lines == 0 ? 0.0
                 : static_cast<double>(st.events_first + st.events_summary - before.events_first -
                                       before.events_summary) /
                       lines;
  state.counters["candidates/line"] =
      lines == 0 ? 0.0
                 : static_cast<double>(st.candidates_checked - before.candidates_checked) / lines;
}

template <typename Sink>
void RunAdds(benchmark::State& state, WindowMerger& merger, Sink& sink, TimeUs& now) {
  const std::vector<LogRecord>& records = Records();
  std::size_t i = 0;
  for (auto _ : state) {
    merger.Add(records[i], now, sink);
    now += kLineGapUs;
    if (++i == records.size()) i = 0;
  }
}

void BM_MergerAddNullSink(benchmark::State& state) {
  WindowMerger merger{MergerOptions{}};
  NullSink sink;
  TimeUs now = kT0;
  RunAdds(state, merger, sink, now);
  ReportMerger(state, merger, MergerStats{});
}
BENCHMARK(BM_MergerAddNullSink);

void BM_MergerAddNdjson(benchmark::State& state) {
  WindowMerger merger{MergerOptions{}};
  NdjsonSink sink;
  TimeUs now = kT0;
  RunAdds(state, merger, sink, now);
  ReportMerger(state, merger, MergerStats{});
  state.counters["json_bytes/line"] =
      benchmark::Counter(static_cast<double>(sink.bytes()), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_MergerAddNdjson);

// Hostile input (issue #19): 100 k random printable lines of 20-120 bytes, from one host and
// app, as a garbage flood on one connection delivers them. Almost every line opens a group
// after being confirmed against every bucket-scan candidate, so this is the per-line cost
// bound (1 ms apart, as `logfold replay` spaces lines: a line's group has closed, after
// `window`, long before the line comes round again); BM_MergerAddNdjson on the corpus is the
// baseline to compare with in one run.
constexpr TimeUs kGarbageGapUs = 1000;

const std::vector<LogRecord>& GarbageRecords() {
  static const std::vector<LogRecord> records = [] {
    std::mt19937_64 rng(19);
    std::vector<LogRecord> out(kLines);
    for (LogRecord& r : out) {
      const std::size_t len = 20 + rng() % 101;
      r.message.resize(len);
      for (char& c : r.message) c = static_cast<char>(' ' + rng() % 95);
      r.raw = r.message;
      r.hostname = "flood01";
      r.app_name = "garbage";
    }
    return out;
  }();
  return records;
}

void BM_MergerAddGarbageNdjson(benchmark::State& state) {
  WindowMerger merger{MergerOptions{}};
  NdjsonSink sink;
  TimeUs now = kT0;
  const std::vector<LogRecord>& records = GarbageRecords();
  std::size_t i = 0;
  for (auto _ : state) {
    merger.Add(records[i], now, sink);
    now += kGarbageGapUs;
    if (++i == records.size()) i = 0;
  }
  ReportMerger(state, merger, MergerStats{});
}
BENCHMARK(BM_MergerAddGarbageNdjson);

// A unique line of random lowercase words: never merges with another (the first word
// differs, and a line's first token is no value context).
// `words` 0: 4 to 10 words.
std::string FillerMessage(std::mt19937_64& rng, int words = 0) {
  std::string m;
  if (words == 0) words = 4 + static_cast<int>(rng() % 7);
  for (int w = 0; w < words; ++w) {
    if (w > 0) m += ' ';
    const int len = 3 + static_cast<int>(rng() % 6);
    for (int k = 0; k < len; ++k) m += static_cast<char>('a' + rng() % 26);
  }
  return m;
}

std::size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // large blocks are mmapped, outside uordblks
}

// A merger holding `filler` open groups in the corpus's scopes (same hosts and apps), built
// once per size and kept, so its memory is measured on a fresh heap region.
struct Filled {
  std::unique_ptr<WindowMerger> merger;
  TimeUs now = kT0;
  std::size_t groups = 0;
  double memory_usage_per_group = 0, heap_per_group = 0, rss_per_group = 0;
  double text_per_group = 0;  // the samples' own bytes: message, host and app of each line
};

Filled& GetFilled(std::size_t filler) {
  static std::map<std::size_t, std::unique_ptr<Filled>> cache;
  std::unique_ptr<Filled>& slot = cache[filler];
  if (slot) return *slot;
  slot = std::make_unique<Filled>();
  Filled& f = *slot;
  const std::vector<LogRecord>& records = Records();
  MergerOptions options;
  options.window_us = 24LL * 3600 * 1'000'000;  // nothing expires during the run
  options.max_hold_us = options.window_us;
  options.max_groups = filler + 50'000;
  NullSink sink;
  const std::size_t rss_before = ResidentBytes(), heap_before = HeapInUse();
  f.merger = std::make_unique<WindowMerger>(options);
  const std::size_t mem_before = f.merger->MemoryUsage();
  std::mt19937_64 rng(42);
  LogRecord r;
  std::size_t text = 0;
  for (std::size_t k = 0; k < filler; ++k) {
    const LogRecord& like = records[k % records.size()];
    r.hostname = like.hostname;
    r.app_name = like.app_name;
    r.message = FillerMessage(rng);
    r.raw = r.message;
    r.arrival_us = f.now;
    text += r.message.size() + r.hostname.size() + r.app_name.size();
    f.merger->Add(r, f.now, sink);
    f.now += kLineGapUs;
  }
  f.groups = f.merger->open_groups();
  const double groups = static_cast<double>(f.groups);
  f.memory_usage_per_group = static_cast<double>(f.merger->MemoryUsage() - mem_before) / groups;
  f.heap_per_group = static_cast<double>(HeapInUse() - heap_before) / groups;
  f.text_per_group = static_cast<double>(text) / groups;
  const std::size_t rss_after = ResidentBytes();
  f.rss_per_group =
      rss_after > rss_before ? static_cast<double>(rss_after - rss_before) / groups : 0.0;
  return f;
}

// Add throughput of the corpus with `filler` other groups open, and the memory they hold:
// the merger's own estimate (MemoryUsage), malloc's count and the process RSS growth.
void BM_MergerAddWithOpenGroups(benchmark::State& state) {
  Filled& f = GetFilled(static_cast<std::size_t>(state.range(0)));
  NullSink sink;
  const MergerStats before = f.merger->stats();
  RunAdds(state, *f.merger, sink, f.now);
  ReportMerger(state, *f.merger, before);
  state.counters["filler_groups"] = static_cast<double>(f.groups);
  state.counters["MemoryUsage/group"] = f.memory_usage_per_group;
  state.counters["heap/group"] = f.heap_per_group;
  state.counters["RSS/group"] = f.rss_per_group;
  state.counters["sample_text/group"] = f.text_per_group;
}
BENCHMARK(BM_MergerAddWithOpenGroups)->Arg(10'000)->Arg(100'000);

// A merger with `groups` open groups of distinct 8-word lines in one host/app scope (the
// e2e memory corpus's shape: every same-length group is a bucket-scan candidate).
std::unique_ptr<WindowMerger> OneScopeMerger(std::size_t groups, std::mt19937_64& rng,
                                             TimeUs& now) {
  MergerOptions options;
  options.window_us = 24LL * 3600 * 1'000'000;  // nothing expires during the run
  options.max_hold_us = options.window_us;
  options.max_groups = 10'000'000;
  auto merger = std::make_unique<WindowMerger>(options);
  NullSink sink;
  LogRecord r;
  r.hostname = "bench01";
  r.app_name = "memprobe";
  for (std::size_t k = 0; k < groups; ++k) {
    r.message = FillerMessage(rng, 8);
    r.raw = r.message;
    merger->Add(r, now, sink);
    now += kLineGapUs;
  }
  return merger;
}

// Opening a group in a scope already holding N groups: a stream of distinct lines, each
// confirmed against the bucket-scan and index candidates and rejected by all.
void BM_MergerOpenInBusyScope(benchmark::State& state) {
  std::mt19937_64 rng(7);
  TimeUs now = kT0;
  auto merger = OneScopeMerger(static_cast<std::size_t>(state.range(0)), rng, now);
  NullSink sink;
  LogRecord r;
  r.hostname = "bench01";
  r.app_name = "memprobe";
  const MergerStats before = merger->stats();
  for (auto _ : state) {
    state.PauseTiming();
    r.message = FillerMessage(rng, 8);
    r.raw = r.message;
    state.ResumeTiming();
    merger->Add(r, now, sink);
    now += kLineGapUs;
  }
  ReportMerger(state, *merger, before);
}
BENCHMARK(BM_MergerOpenInBusyScope)->Arg(10'000)->Arg(100'000);

// Closing N open groups of one scope (FlushAll at shutdown; a window expiring them all pays
// the same per group). One iteration closes them all; time per group is reported.
void BM_MergerCloseAll(benchmark::State& state) {
  const auto groups = static_cast<std::size_t>(state.range(0));
  std::mt19937_64 rng(7);
  for (auto _ : state) {
    state.PauseTiming();
    TimeUs now = kT0;
    auto merger = OneScopeMerger(groups, rng, now);
    NullSink sink;
    state.ResumeTiming();
    merger->FlushAll(sink);
    state.PauseTiming();
    benchmark::DoNotOptimize(merger->open_groups());
    merger.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(groups));
}
BENCHMARK(BM_MergerCloseAll)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace logfold

BENCHMARK_MAIN();
