// GroupIndex tests: every lookup (also with a limit) is checked against a brute-force scan of the
// same entries, for flat and block-indexed scopes, across k = 0..8, 12, 20 and 31; and the bucket
// scan's WithinDistanceMask kernels against popcount.
#include "pipeline/group_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "pipeline/within_distance_mask.h"

namespace logfold {
namespace {

using Candidate = GroupIndex::Candidate;

struct Entry {
  std::uint64_t scope;
  std::uint64_t fp;
  std::uint32_t group;
};

// The reference: a plain list of entries, answered by scanning all of them.
class Model {
 public:
  explicit Model(int k) : k_(k) {}

  void Insert(std::uint64_t scope, std::uint64_t fp, std::uint32_t group) {
    entries_.push_back({scope, fp, group});
  }
  bool Erase(std::uint64_t scope, std::uint64_t fp, std::uint32_t group) {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      if (e.scope == scope && e.fp == fp && e.group == group) {
        entries_[i] = entries_.back();
        entries_.pop_back();
        return true;
      }
    }
    return false;
  }
  void EraseAt(std::size_t i) {
    entries_[i] = entries_.back();
    entries_.pop_back();
  }
  std::vector<Candidate> Within(std::uint64_t scope, std::uint64_t fp) const {
    std::vector<Candidate> out;
    for (const Entry& e : entries_) {
      const int d = std::popcount(e.fp ^ fp);
      if (e.scope == scope && d <= k_) out.push_back({e.group, d});
    }
    std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
      return std::tie(a.distance, a.group) < std::tie(b.distance, b.group);
    });
    return out;
  }
  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }

 private:
  int k_;
  std::vector<Entry> entries_;
};

std::vector<std::pair<std::uint32_t, int>> Pairs(const std::vector<Candidate>& v) {
  std::vector<std::pair<std::uint32_t, int>> out;
  for (const Candidate& c : v) out.emplace_back(c.group, c.distance);
  return out;
}

std::uint64_t FlipBits(std::uint64_t fp, int flips, std::mt19937_64& rng) {
  for (int i = 0; i < flips; ++i) fp ^= 1ULL << (rng() % 64);
  return fp;
}

// Compares FindWithin and FindNearest with the model for one query.
void ExpectSameAnswers(const GroupIndex& index, const Model& model, std::uint64_t scope,
                       std::uint64_t query, const std::string& where) {
  std::vector<Candidate> got;
  index.FindWithin(scope, query, got);
  const std::vector<Candidate> want = model.Within(scope, query);
  ASSERT_EQ(Pairs(got), Pairs(want)) << where << " query=" << query;
  // With a limit: the same order's first `limit` while at most kCrowdFactor x limit lie
  // within; past that, `limit` of them, nearest first.
  for (std::size_t limit : {std::size_t{1}, std::size_t{3}, std::size_t{17}}) {
    index.FindWithin(scope, query, got, limit);
    const std::string at =
        where + " query=" + std::to_string(query) + " limit=" + std::to_string(limit);
    if (want.size() <= GroupIndex::kCrowdFactor * limit) {
      const std::vector<Candidate> first(
          want.begin(), want.begin() + static_cast<std::ptrdiff_t>(std::min(limit, want.size())));
      ASSERT_EQ(Pairs(got), Pairs(first)) << at;
      continue;
    }
    ASSERT_EQ(got.size(), limit) << at;
    const auto all = Pairs(want);
    const std::set<std::pair<std::uint32_t, int>> within(all.begin(), all.end());
    const auto some = Pairs(got);
    const std::set<std::pair<std::uint32_t, int>> distinct(some.begin(), some.end());
    EXPECT_EQ(distinct.size(), limit) << at;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(within.count(some[i])) << at;
      if (i > 0) {
        ASSERT_LT(std::tie(got[i - 1].distance, got[i - 1].group),
                  std::tie(got[i].distance, got[i].group))
            << at;
      }
    }
  }
  Candidate nearest{0, -1};
  const bool found = index.FindNearest(scope, query, nearest);
  ASSERT_EQ(found, !want.empty()) << where;
  if (found) {
    EXPECT_EQ(nearest.group, want.front().group) << where;
    EXPECT_EQ(nearest.distance, want.front().distance) << where;
  }
}

// Queries that exercise every outcome: exact hits, near hits at and just beyond k, random.
std::vector<std::uint64_t> MakeQueries(const Model& model, int k, int count, std::mt19937_64& rng) {
  std::vector<std::uint64_t> queries = {0, ~0ULL};
  for (int i = 0; i < count; ++i) {
    if (i % 4 == 3 || model.size() == 0) {
      queries.push_back(rng());
    } else {
      const std::uint64_t base = model.entries()[rng() % model.size()].fp;
      queries.push_back(FlipBits(base, static_cast<int>(rng() % (k + 3)), rng));
    }
  }
  return queries;
}

enum class Layout { kRandom, kClustered };

// Fingerprints either uniform, or centres with a few bits flipped around each (near-dups,
// which make many entries share block values and so exercise long posting lists).
std::vector<std::uint64_t> MakeFingerprints(Layout layout, int n, int k, std::mt19937_64& rng) {
  std::vector<std::uint64_t> fps;
  if (layout == Layout::kRandom) {
    for (int i = 0; i < n; ++i) fps.push_back(rng());
    return fps;
  }
  std::vector<std::uint64_t> centres;
  for (int i = 0; i < std::max(1, n / 20); ++i) centres.push_back(rng());
  for (int i = 0; i < n; ++i) {
    const int flips = static_cast<int>(rng() % (k + 3));
    fps.push_back(FlipBits(centres[rng() % centres.size()], flips, rng));
  }
  return fps;
}

constexpr int kDistances[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 20, 31};
constexpr std::size_t kIndexAlways = 0;
constexpr std::size_t kSmallLimit = 16;
constexpr std::size_t kUseDefault = 1;  // sentinel for "GroupIndex(k)"

GroupIndex MakeIndex(int k, std::size_t limit) {
  return limit == kUseDefault ? GroupIndex(k) : GroupIndex(k, limit);
}

class GroupIndexVsBruteForce
    : public ::testing::TestWithParam<std::tuple<int, std::size_t, Layout>> {};

TEST_P(GroupIndexVsBruteForce, StaticContentsMatchScan) {
  const auto [k, limit, layout] = GetParam();
  std::mt19937_64 rng(1234 + static_cast<unsigned>(k));
  GroupIndex index = MakeIndex(k, limit);
  Model model(k);
  // One large scope, one mid-sized, one tiny, so both representations are reached.
  const std::uint64_t scopes[] = {11, 22, 33};
  const int sizes[] = {3000, 200, 5};
  std::uint32_t group = 0;
  for (int s = 0; s < 3; ++s) {
    for (std::uint64_t fp : MakeFingerprints(layout, sizes[s], k, rng)) {
      index.Insert(scopes[s], fp, group);
      model.Insert(scopes[s], fp, group);
      ++group;
    }
  }
  ASSERT_EQ(index.size(), model.size());
  for (std::uint64_t scope : {11, 22, 33, 44}) {
    for (std::uint64_t q : MakeQueries(model, k, 150, rng)) {
      ExpectSameAnswers(index, model, scope, q, "scope " + std::to_string(scope));
    }
  }
}

TEST_P(GroupIndexVsBruteForce, InterleavedInsertEraseMatchesModel) {
  const auto [k, limit, layout] = GetParam();
  std::mt19937_64 rng(99 + static_cast<unsigned>(k) * 7 + static_cast<unsigned>(limit));
  GroupIndex index = MakeIndex(k, limit);
  Model model(k);
  const std::vector<std::uint64_t> pool = MakeFingerprints(layout, 400, k, rng);
  std::uint32_t next_group = 0;
  // Scope sizes drift up and down across the scan limit, promoting and demoting scopes.
  for (int op = 0; op < 3000; ++op) {
    const std::uint64_t scope = 1 + rng() % 3;
    const bool grow = (op / 500) % 2 == 0;
    if (model.size() == 0 || rng() % 100 < (grow ? 70u : 30u)) {
      const std::uint64_t fp = pool[rng() % pool.size()];
      index.Insert(scope, fp, next_group);
      model.Insert(scope, fp, next_group);
      ++next_group;
    } else if (rng() % 8 == 0) {
      // Absent entries: a wrong group, scope or fingerprint must not erase anything.
      const Entry e = model.entries()[rng() % model.size()];
      EXPECT_FALSE(index.Erase(e.scope, e.fp, next_group + 1));
      EXPECT_FALSE(index.Erase(e.scope + 100, e.fp, e.group));
      if (!model.Erase(e.scope, e.fp ^ 1, e.group)) {
        EXPECT_FALSE(index.Erase(e.scope, e.fp ^ 1, e.group));
      } else {
        model.Insert(e.scope, e.fp ^ 1, e.group);
      }
    } else {
      const Entry e = model.entries()[rng() % model.size()];
      ASSERT_TRUE(index.Erase(e.scope, e.fp, e.group));
      ASSERT_TRUE(model.Erase(e.scope, e.fp, e.group));
      // A group moving to a new fingerprint, as when it absorbs a line.
      if (rng() % 2 == 0) {
        const std::uint64_t moved = FlipBits(e.fp, 1 + static_cast<int>(rng() % 3), rng);
        index.Insert(e.scope, moved, e.group);
        model.Insert(e.scope, moved, e.group);
      }
    }
    ASSERT_EQ(index.size(), model.size());
    if (op % 7 == 0) {
      for (std::uint64_t q : MakeQueries(model, k, 6, rng)) {
        ExpectSameAnswers(index, model, 1 + rng() % 3, q, "op " + std::to_string(op));
      }
    }
  }
  // Drain completely: every entry erasable exactly once, then nothing is found.
  while (model.size() > 0) {
    const Entry e = model.entries().back();
    ASSERT_TRUE(index.Erase(e.scope, e.fp, e.group));
    ASSERT_TRUE(model.Erase(e.scope, e.fp, e.group));
    ASSERT_FALSE(index.Erase(e.scope, e.fp, e.group));
  }
  EXPECT_EQ(index.size(), 0u);
  std::vector<Candidate> out;
  for (std::uint64_t fp : pool) {
    index.FindWithin(1, fp, out);
    EXPECT_TRUE(out.empty());
  }
}

std::string ParamName(const ::testing::TestParamInfo<std::tuple<int, std::size_t, Layout>>& info) {
  const auto [k, limit, layout] = info.param;
  std::string name = "k" + std::to_string(k);
  name += limit == kIndexAlways ? "_indexed" : limit == kSmallLimit ? "_limit16" : "_default";
  name += layout == Layout::kRandom ? "_random" : "_clustered";
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllDistances, GroupIndexVsBruteForce,
                         ::testing::Combine(::testing::ValuesIn(kDistances),
                                            ::testing::Values(kIndexAlways, kSmallLimit,
                                                              kUseDefault),
                                            ::testing::Values(Layout::kRandom, Layout::kClustered)),
                         ParamName);

class GroupIndexEachK : public ::testing::TestWithParam<int> {};

TEST_P(GroupIndexEachK, ScopesNeverLeakIntoEachOther) {
  const int k = GetParam();
  GroupIndex index(k, kIndexAlways);
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> fps;
  for (int i = 0; i < 500; ++i) fps.push_back(rng());
  // Identical fingerprints in three scopes; scope s owns groups s*1000 + i.
  for (std::uint32_t s = 1; s <= 3; ++s) {
    for (std::uint32_t i = 0; i < fps.size(); ++i) index.Insert(s, fps[i], s * 1000 + i);
  }
  std::vector<Candidate> out;
  for (std::uint32_t s = 1; s <= 3; ++s) {
    for (std::uint32_t i = 0; i < fps.size(); i += 7) {
      index.FindWithin(s, fps[i], out);
      ASSERT_FALSE(out.empty());
      EXPECT_EQ(out.front().group, s * 1000 + i);
      EXPECT_EQ(out.front().distance, 0);
      for (const Candidate& c : out) EXPECT_EQ(c.group / 1000, s);
    }
  }
  index.FindWithin(4, fps[0], out);
  EXPECT_TRUE(out.empty());
  Candidate c{};
  EXPECT_FALSE(index.FindNearest(4, fps[0], c));
  EXPECT_FALSE(index.Erase(4, fps[0], 1000));
}

TEST_P(GroupIndexEachK, NearestBreaksTiesByLowestSlot) {
  const int k = GetParam();
  for (std::size_t limit : {kIndexAlways, kSmallLimit, GroupIndex::kNeverIndex}) {
    GroupIndex index(k, limit);
    const std::uint64_t base = 0x0123456789abcdefULL;
    // Same distance (1 bit, or 0 at k = 0) from the query, inserted highest slot first.
    const int flip = k == 0 ? -1 : 40;
    const std::uint64_t fp = flip < 0 ? base : base ^ (1ULL << flip);
    for (std::uint32_t g = 60; g >= 40; --g) index.Insert(5, fp, g);
    for (std::uint32_t g = 0; g < 30; ++g) index.Insert(5, ~base ^ g, g);  // far away
    Candidate c{};
    ASSERT_TRUE(index.FindNearest(5, base, c));
    EXPECT_EQ(c.group, 40u);
    EXPECT_EQ(c.distance, flip < 0 ? 0 : 1);
    std::vector<Candidate> out;
    index.FindWithin(5, base, out);
    ASSERT_EQ(out.size(), 21u);
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].group, 40 + i);
    // A strictly closer group wins regardless of its slot.
    index.Insert(5, base, 99);
    ASSERT_TRUE(index.FindNearest(5, base, c));
    EXPECT_EQ(c.group, flip < 0 ? 40u : 99u);
    EXPECT_EQ(c.distance, 0);
  }
}

TEST_P(GroupIndexEachK, EdgeFingerprints) {
  const int k = GetParam();
  for (std::size_t limit : {kIndexAlways, GroupIndex::kNeverIndex}) {
    GroupIndex index(k, limit);
    index.Insert(1, 0, 1);
    index.Insert(1, ~0ULL, 2);
    std::vector<Candidate> out;
    index.FindWithin(1, 0, out);
    ASSERT_EQ(Pairs(out), (std::vector<std::pair<std::uint32_t, int>>{{1, 0}}));
    index.FindWithin(1, ~0ULL, out);
    ASSERT_EQ(Pairs(out), (std::vector<std::pair<std::uint32_t, int>>{{2, 0}}));
    // Exactly k low bits set is still within reach of 0; k+1 bits is not.
    const std::uint64_t k_bits = k == 0 ? 0 : (~0ULL >> (64 - k));
    index.FindWithin(1, k_bits, out);
    ASSERT_EQ(Pairs(out), (std::vector<std::pair<std::uint32_t, int>>{{1, k}}));
    index.FindWithin(1, ~k_bits, out);
    ASSERT_EQ(Pairs(out), (std::vector<std::pair<std::uint32_t, int>>{{2, k}}));
    const std::uint64_t beyond = (k_bits << 1) | 1;
    index.FindWithin(1, beyond, out);
    EXPECT_TRUE(out.empty());
    EXPECT_TRUE(index.Erase(1, ~0ULL, 2));
    EXPECT_FALSE(index.Erase(1, ~0ULL, 2));
    EXPECT_TRUE(index.Erase(1, 0, 1));
    EXPECT_EQ(index.size(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(AllDistances, GroupIndexEachK, ::testing::ValuesIn(kDistances));

TEST(GroupIndexTest, ClampsDistance) {
  EXPECT_EQ(GroupIndex(-3).max_distance(), 0);
  EXPECT_EQ(GroupIndex(99).max_distance(), GroupIndex::kMaxDistance);
  EXPECT_EQ(GroupIndex(5).max_distance(), 5);
}

TEST(GroupIndexTest, DefaultScanLimitStopsIndexingWhenBlocksAreTooNarrow) {
  EXPECT_NE(GroupIndex::DefaultScanLimit(3), GroupIndex::kNeverIndex);
  EXPECT_NE(GroupIndex::DefaultScanLimit(8), GroupIndex::kNeverIndex);
  EXPECT_EQ(GroupIndex::DefaultScanLimit(31), GroupIndex::kNeverIndex);
  EXPECT_EQ(GroupIndex(4).scan_limit(), GroupIndex::DefaultScanLimit(4));
}

TEST(GroupIndexTest, EraseRemovesExactlyOneOfSharedFingerprint) {
  for (std::size_t limit : {kIndexAlways, GroupIndex::kNeverIndex}) {
    GroupIndex index(3, limit);
    const std::uint64_t fp = 0xfeedfacecafebeefULL;
    for (std::uint32_t g = 1; g <= 5; ++g) index.Insert(9, fp, g);
    EXPECT_FALSE(index.Erase(9, fp, 6));
    EXPECT_FALSE(index.Erase(8, fp, 3));
    EXPECT_FALSE(index.Erase(9, fp ^ 4, 3));
    EXPECT_EQ(index.size(), 5u);
    EXPECT_TRUE(index.Erase(9, fp, 3));
    EXPECT_FALSE(index.Erase(9, fp, 3));
    EXPECT_EQ(index.size(), 4u);
    std::vector<Candidate> out;
    index.FindWithin(9, fp, out);
    EXPECT_EQ(Pairs(out),
              (std::vector<std::pair<std::uint32_t, int>>{{1, 0}, {2, 0}, {4, 0}, {5, 0}}));
  }
}

TEST(GroupIndexTest, LongRunsOfOneBlockValueGrowAndShrink) {
  // Thousands of groups around one centre share most block values at k=3: long runs of
  // one key, the skewed shape a busy log template produces.
  GroupIndex index(3, kIndexAlways);
  Model model(3);
  std::mt19937_64 rng(3);
  const std::uint64_t centre = rng();
  for (std::uint32_t g = 0; g < 6000; ++g) {
    const std::uint64_t fp = g % 3 == 0 ? centre : FlipBits(centre, 1 + g % 4, rng);
    index.Insert(1, fp, g);
    model.Insert(1, fp, g);
  }
  const std::size_t full = index.MemoryUsage();
  ExpectSameAnswers(index, model, 1, centre, "full");
  for (int i = 0; i < 5900; ++i) {
    const Entry e = model.entries()[rng() % model.size()];
    ASSERT_TRUE(index.Erase(e.scope, e.fp, e.group));
    ASSERT_TRUE(model.Erase(e.scope, e.fp, e.group));
  }
  EXPECT_LT(index.MemoryUsage() * 4, full);
  for (std::uint64_t q : MakeQueries(model, 3, 100, rng)) {
    ExpectSameAnswers(index, model, 1, q, "drained");
  }
}

// Grows one scope from flat through Robin Hood tables to bucket arrays (which it switches
// to at 8 entries per possible block value, re-sizing them at 12) and back down again.
TEST(GroupIndexTest, RepresentationChangesKeepContents) {
  for (int k : {5, 6, 8}) {
    SCOPED_TRACE(k);
    GroupIndex index(k, kSmallLimit);
    Model model(k);
    std::mt19937_64 rng(static_cast<unsigned>(k));
    const int width = 64 / (k + 1) + (64 % (k + 1) != 0 ? 1 : 0);
    const std::uint32_t peak = (1u << width) * 13;
    const std::vector<std::uint64_t> fps =
        MakeFingerprints(Layout::kClustered, static_cast<int>(peak), k, rng);
    const std::uint32_t per_value = 1u << width;
    const std::set<std::uint32_t> checkpoints = {
        10, 17, 40, 200, peak / 8, per_value * 2 - 1, per_value * 8, per_value * 12 + 1, peak};
    for (std::uint32_t g = 0; g < peak; ++g) {
      index.Insert(1, fps[g], g);
      model.Insert(1, fps[g], g);
      if (checkpoints.count(g + 1) != 0) {
        for (std::uint64_t q : MakeQueries(model, k, 30, rng)) {
          ExpectSameAnswers(index, model, 1, q, "growing to " + std::to_string(g + 1));
        }
      }
    }
    while (model.size() > 0) {
      const std::size_t at = rng() % model.size();
      const Entry e = model.entries()[at];
      ASSERT_TRUE(index.Erase(e.scope, e.fp, e.group));
      model.EraseAt(at);
      if (checkpoints.count(static_cast<std::uint32_t>(model.size())) != 0) {
        for (std::uint64_t q : MakeQueries(model, k, 30, rng)) {
          ExpectSameAnswers(index, model, 1, q, "shrinking to " + std::to_string(model.size()));
        }
      }
    }
    EXPECT_EQ(index.size(), 0u);
  }
}

TEST(GroupIndexTest, ClearEmptiesAndStaysUsable) {
  GroupIndex index(4, kSmallLimit);
  const std::size_t empty = index.MemoryUsage();
  std::mt19937_64 rng(5);
  for (std::uint32_t g = 0; g < 1000; ++g) index.Insert(g % 10, rng(), g);
  EXPECT_EQ(index.size(), 1000u);
  EXPECT_GT(index.MemoryUsage(), empty + 1000 * 8);
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.MemoryUsage(), empty);
  std::vector<Candidate> out;
  index.FindWithin(0, 0, out);
  EXPECT_TRUE(out.empty());
  index.Insert(0, 77, 1);
  index.FindWithin(0, 77, out);
  EXPECT_EQ(Pairs(out), (std::vector<std::pair<std::uint32_t, int>>{{1, 0}}));
}

TEST(GroupIndexTest, MemoryReturnsToBaselineAfterErasingEverything) {
  GroupIndex index(3, kSmallLimit);
  const std::size_t empty = index.MemoryUsage();
  std::mt19937_64 rng(6);
  std::vector<Entry> entries;
  for (std::uint32_t g = 0; g < 5000; ++g) entries.push_back({g % 4, rng(), g});
  for (const Entry& e : entries) index.Insert(e.scope, e.fp, e.group);
  const std::size_t full = index.MemoryUsage();
  EXPECT_GT(full, empty + 5000 * 4 * 12);  // 4 tables, at least 12 bytes per entry each
  for (const Entry& e : entries) ASSERT_TRUE(index.Erase(e.scope, e.fp, e.group));
  // Only the scope map's slot array may stay allocated.
  EXPECT_LT(index.MemoryUsage(), empty + 1024);
}

TEST(GroupIndexTest, MoveConstructionAndAssignment) {
  GroupIndex a(3, kIndexAlways);
  for (std::uint32_t g = 0; g < 100; ++g) a.Insert(1, 1000 + g, g);
  GroupIndex b(std::move(a));
  EXPECT_EQ(b.size(), 100u);
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from must be empty
  Candidate c{};
  ASSERT_TRUE(b.FindNearest(1, 1000 + 42, c));
  EXPECT_EQ(c.group, 42u);
  // The moved-from index answers nothing and can be refilled.
  std::vector<Candidate> out;
  a.FindWithin(1, 1000, out);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(a.FindNearest(1, 1000, c));
  EXPECT_FALSE(a.Erase(1, 1000, 0));
  a.Insert(2, 5, 7);
  ASSERT_TRUE(a.FindNearest(2, 5, c));
  EXPECT_EQ(c.group, 7u);

  GroupIndex d(8);
  d.Insert(3, 3, 3);
  d = std::move(b);
  EXPECT_EQ(d.max_distance(), 3);
  EXPECT_EQ(d.size(), 100u);
  EXPECT_FALSE(d.FindNearest(3, 3, c));
  ASSERT_TRUE(d.FindNearest(1, 1000 + 7, c));
  EXPECT_EQ(c.group, 7u);
  EXPECT_TRUE(d.Erase(1, 1000 + 7, 7));
  EXPECT_EQ(d.size(), 99u);
  GroupIndex& alias = d;
  d = std::move(alias);  // self-move leaves it intact
  EXPECT_EQ(d.size(), 99u);
}

// A scope past the bucket threshold at k=3 (2^16 values x 8): its bucket arrays are over
// 4 MiB, so they take the huge-page allocation path, and clusters overflow inline buckets.
TEST(GroupIndexTest, LargeBucketedScopeMatchesScan) {
  constexpr int kK = 3;
  std::mt19937_64 rng(77);
  GroupIndex index(kK);
  Model model(kK);
  const std::vector<std::uint64_t> fps = MakeFingerprints(Layout::kClustered, 600'000, kK, rng);
  for (std::uint32_t g = 0; g < fps.size(); ++g) {
    index.Insert(1, fps[g], g);
    model.Insert(1, fps[g], g);
  }
  EXPECT_GT(index.MemoryUsage(), std::size_t{4} * 4 << 20);  // four arrays of 4 MiB or more
  for (std::uint64_t q : MakeQueries(model, kK, 40, rng)) ExpectSameAnswers(index, model, 1, q, "");
  for (std::uint32_t g = 0; g < fps.size(); g += 2) ASSERT_TRUE(index.Erase(1, fps[g], g));
  for (std::size_t i = 0; i < model.size();) {
    if (model.entries()[i].group % 2 == 0) {
      model.EraseAt(i);
    } else {
      ++i;
    }
  }
  for (std::uint64_t q : MakeQueries(model, kK, 40, rng)) ExpectSameAnswers(index, model, 1, q, "");
}

TEST(WithinDistanceMaskTest, EveryKernelMatchesPopcount) {
  std::mt19937_64 rng(5);
  int kernels_run = 0;
  for (WithinDistanceKernel kernel :
       {WithinDistanceKernel::kAuto, WithinDistanceKernel::kPortable, WithinDistanceKernel::kPopcnt,
        WithinDistanceKernel::kAvx2, WithinDistanceKernel::kAvx512}) {
    if (!WithinDistanceKernelSupported(kernel)) continue;
    ++kernels_run;
    for (int round = 0; round < 300; ++round) {
      const std::uint64_t q = rng();
      const int k = static_cast<int>(rng() % 33);
      const std::size_t n = rng() % 65;
      std::uint64_t fps[64];
      for (std::size_t i = 0; i < n; ++i) {
        fps[i] = FlipBits(q, static_cast<int>(rng() % (2 * k + 3)), rng);  // both sides of k
      }
      std::uint64_t want = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (std::popcount(fps[i] ^ q) <= k) want |= std::uint64_t{1} << i;
      }
      ASSERT_EQ(WithinDistanceMask(fps, n, q, k, kernel), want)
          << "kernel " << static_cast<int>(kernel) << " n=" << n << " k=" << k;
    }
  }
  EXPECT_GE(kernels_run, 2);  // kAuto and kPortable at least
}

}  // namespace
}  // namespace logfold
