// GroupIndex benchmarks: lookups/s and memory per group at 10k..1M groups in one scope,
// insert+erase churn, many small scopes, and the flat-vs-indexed crossover for scan_limit.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "pipeline/group_index.h"

namespace logfold {
namespace {

constexpr std::uint64_t kScope = 0x5eed;
constexpr int kQueries = 1 << 16;

enum Layout : int { kRandom = 0, kClustered = 1 };

std::uint64_t FlipBits(std::uint64_t fp, int flips, std::mt19937_64& rng) {
  for (int i = 0; i < flips; ++i) fp ^= 1ULL << (rng() % 64);
  return fp;
}

// Clustered: n/20 centres with 0..4 random bit flips each, like one template's lines.
std::vector<std::uint64_t> MakeFingerprints(Layout layout, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> fps(n);
  if (layout == kRandom) {
    for (auto& fp : fps) fp = rng();
    return fps;
  }
  std::vector<std::uint64_t> centres(std::max<std::size_t>(1, n / 20));
  for (auto& c : centres) c = rng();
  for (auto& fp : fps)
    fp = FlipBits(centres[rng() % centres.size()], static_cast<int>(rng() % 5), rng);
  return fps;
}

std::size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // big tables are mmapped, outside uordblks
}

struct Built {
  std::vector<std::uint64_t> fps;
  std::unique_ptr<GroupIndex> index;
  std::vector<std::uint64_t> queries;  // half near an existing group, half random
  std::size_t heap_bytes = 0;          // measured by malloc, not estimated
};

// Building 1M groups takes a while, so each configuration is built once and shared.
Built& GetBuilt(int k, std::size_t n, Layout layout) {
  static std::map<std::tuple<int, std::size_t, int>, std::unique_ptr<Built>> cache;
  auto& slot = cache[{k, n, layout}];
  if (slot) return *slot;
  slot = std::make_unique<Built>();
  slot->fps = MakeFingerprints(layout, n, 42 + n);
  const std::size_t before = HeapInUse();
  slot->index = std::make_unique<GroupIndex>(k);
  for (std::size_t i = 0; i < n; ++i) {
    slot->index->Insert(kScope, slot->fps[i], static_cast<std::uint32_t>(i));
  }
  slot->heap_bytes = HeapInUse() - before;
  std::mt19937_64 rng(7);
  slot->queries.resize(kQueries);
  for (int i = 0; i < kQueries; ++i) {
    slot->queries[i] =
        i % 2 == 0 ? FlipBits(slot->fps[rng() % n], static_cast<int>(rng() % (k + 2)), rng) : rng();
  }
  return *slot;
}

void SetMemoryCounters(benchmark::State& state, const Built& b) {
  const double n = static_cast<double>(b.index->size());
  state.counters["bytes_per_group"] = static_cast<double>(b.index->MemoryUsage()) / n;
  state.counters["heap_bytes_per_group"] = static_cast<double>(b.heap_bytes) / n;
  state.counters["lookups_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_FindWithin(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  Built& b =
      GetBuilt(k, static_cast<std::size_t>(state.range(1)), static_cast<Layout>(state.range(2)));
  std::vector<GroupIndex::Candidate> out;
  std::size_t i = 0, found = 0;
  for (auto _ : state) {
    b.index->FindWithin(kScope, b.queries[i++ & (kQueries - 1)], out);
    found += out.size();
  }
  benchmark::DoNotOptimize(found);
  SetMemoryCounters(state, b);
  state.counters["results_per_lookup"] =
      static_cast<double>(found) / static_cast<double>(state.iterations());
}

void BM_FindNearest(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  Built& b =
      GetBuilt(k, static_cast<std::size_t>(state.range(1)), static_cast<Layout>(state.range(2)));
  GroupIndex::Candidate c{};
  std::size_t i = 0, found = 0;
  for (auto _ : state) {
    found += b.index->FindNearest(kScope, b.queries[i++ & (kQueries - 1)], c) ? 1 : 0;
  }
  benchmark::DoNotOptimize(found);
  SetMemoryCounters(state, b);
}

// A group absorbing a line: erased at its old fingerprint, re-inserted a few bits away.
void BM_InsertErasePair(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  Built& b =
      GetBuilt(k, static_cast<std::size_t>(state.range(1)), static_cast<Layout>(state.range(2)));
  std::mt19937_64 rng(11);
  const std::size_t n = b.fps.size();
  for (auto _ : state) {
    const std::size_t g = rng() % n;
    const std::uint64_t moved = FlipBits(b.fps[g], 1 + static_cast<int>(rng() % 2), rng);
    if (!b.index->Erase(kScope, b.fps[g], static_cast<std::uint32_t>(g))) {
      state.SkipWithError("erase of a present group failed");
      return;
    }
    b.index->Insert(kScope, moved, static_cast<std::uint32_t>(g));
    b.fps[g] = moved;
  }
  state.counters["pairs_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["bytes_per_group"] =
      static_cast<double>(b.index->MemoryUsage()) / static_cast<double>(n);
}

void Configs(benchmark::internal::Benchmark* bench) {
  bench->ArgNames({"k", "groups", "clustered"});
  for (int k : {3, 8}) {
    for (int layout : {kRandom, kClustered}) {
      for (std::int64_t n : {10'000, 100'000, 1'000'000}) bench->Args({k, n, layout});
    }
  }
}

BENCHMARK(BM_FindWithin)->Apply(Configs);
BENCHMARK(BM_FindNearest)->Apply(Configs);
BENCHMARK(BM_InsertErasePair)->Apply(Configs);

// The daemon's usual shape: many scopes (host x app) of a few hundred groups each.
void BM_ManySmallScopes(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const auto scopes = static_cast<std::uint64_t>(state.range(1));
  const auto per_scope = static_cast<std::size_t>(state.range(2));
  const std::vector<std::uint64_t> fps = MakeFingerprints(kClustered, scopes * per_scope, 5);
  const std::size_t before = HeapInUse();
  GroupIndex index(k);
  for (std::size_t i = 0; i < fps.size(); ++i) {
    index.Insert(i % scopes, fps[i], static_cast<std::uint32_t>(i));
  }
  const std::size_t heap = HeapInUse() - before;
  std::mt19937_64 rng(3);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> queries(kQueries);
  for (auto& [scope, q] : queries) {
    const std::size_t i = rng() % fps.size();
    scope = i % scopes;
    q = rng() % 2 == 0 ? FlipBits(fps[i], static_cast<int>(rng() % (k + 2)), rng) : rng();
  }
  GroupIndex::Candidate c{};
  std::size_t i = 0, found = 0;
  for (auto _ : state) {
    const auto& [scope, q] = queries[i++ & (kQueries - 1)];
    found += index.FindNearest(scope, q, c) ? 1 : 0;
  }
  benchmark::DoNotOptimize(found);
  const double n = static_cast<double>(fps.size());
  state.counters["lookups_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["bytes_per_group"] = static_cast<double>(index.MemoryUsage()) / n;
  state.counters["heap_bytes_per_group"] = static_cast<double>(heap) / n;
}
BENCHMARK(BM_ManySmallScopes)
    ->ArgNames({"k", "scopes", "per_scope"})
    ->Args({3, 1000, 100})
    ->Args({4, 1000, 100})
    ->Args({4, 100, 1000})
    ->Args({4, 10, 10000})
    ->Args({8, 1000, 100})
    ->Args({8, 100, 1000});

// Scan vs tables for one scope of `groups` entries: where the lines cross is where
// DefaultScanLimit should sit (scan_limit 0 forces tables, kNeverIndex forces the scan).
void BM_ScopeCrossover(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const auto n = static_cast<std::size_t>(state.range(1));
  const bool indexed = state.range(2) != 0;
  const std::vector<std::uint64_t> fps = MakeFingerprints(kClustered, n, 9);
  GroupIndex index(k, indexed ? 0 : GroupIndex::kNeverIndex);
  for (std::size_t i = 0; i < n; ++i) index.Insert(kScope, fps[i], static_cast<std::uint32_t>(i));
  std::mt19937_64 rng(4);
  std::vector<std::uint64_t> queries(kQueries);
  for (auto& q : queries) {
    q = rng() % 2 == 0 ? FlipBits(fps[rng() % n], static_cast<int>(rng() % (k + 2)), rng) : rng();
  }
  GroupIndex::Candidate c{};
  std::size_t i = 0, found = 0;
  for (auto _ : state) found += index.FindNearest(kScope, queries[i++ & (kQueries - 1)], c);
  benchmark::DoNotOptimize(found);
  state.counters["bytes_per_group"] =
      static_cast<double>(index.MemoryUsage()) / static_cast<double>(n);
}
BENCHMARK(BM_ScopeCrossover)
    ->ArgNames({"k", "groups", "indexed"})
    ->ArgsProduct({{3, 4, 8, 12}, {64, 256, 1024, 4096}, {0, 1}});

}  // namespace
}  // namespace logfold

BENCHMARK_MAIN();
