// Tests for FlatMap64 as ShapeMap, the merger's exact-shape table (lookups, replacement,
// conditional erase with backward shifting checked against std::unordered_map, in-place
// updates and unconditional erase as the bucket table uses them, growth), and
// as GroupIndex's scope table (pointer values, a home function of its own).
#include "pipeline/shape_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace logfold {
namespace {

TEST(ShapeMapTest, FindSetEraseIf) {
  ShapeMap m;
  EXPECT_EQ(m.Find(42), ShapeMap::kAbsent);
  m.EraseIf(42, 1);  // on an empty table: nothing
  m.Set(42, 7);
  EXPECT_EQ(m.Find(42), 7u);
  m.Set(42, 8);  // replaces
  EXPECT_EQ(m.Find(42), 8u);
  EXPECT_EQ(m.size(), 1u);
  m.EraseIf(42, 7);  // maps to another slot: stays
  EXPECT_EQ(m.Find(42), 8u);
  m.EraseIf(42, 8);
  EXPECT_EQ(m.Find(42), ShapeMap::kAbsent);
  EXPECT_EQ(m.size(), 0u);
  m.Set(0, 3);  // key 0 is an ordinary key
  EXPECT_EQ(m.Find(0), 3u);
}

// Keys that share their low bits collide into long probe runs that wrap around the table's
// end; erasing from the middle of such runs must keep every other key findable.
TEST(ShapeMapTest, MatchesAModelUnderCollidingKeysAndErasures) {
  std::mt19937_64 rng(20261122);
  for (int trial = 0; trial < 4; ++trial) {
    ShapeMap m;
    std::unordered_map<std::uint64_t, std::uint32_t> model;
    std::vector<std::uint64_t> keys;
    // Few distinct low bits (so runs collide) and some keys near the table's last index.
    for (int i = 0; i < 300; ++i) {
      const std::uint64_t low = trial % 2 == 0 ? rng() % 4 : 60 + rng() % 4;
      keys.push_back((rng() << 8) | low);
    }
    for (int step = 0; step < 20000; ++step) {
      const std::uint64_t key = keys[rng() % keys.size()];
      const auto slot = static_cast<std::uint32_t>(rng() % 5);
      if (rng() % 3 == 0) {
        m.EraseIf(key, slot);
        auto it = model.find(key);
        if (it != model.end() && it->second == slot) model.erase(it);
      } else {
        m.Set(key, slot);
        model[key] = slot;
      }
      ASSERT_EQ(m.size(), model.size()) << "step " << step;
    }
    for (std::uint64_t key : keys) {
      auto it = model.find(key);
      EXPECT_EQ(m.Find(key), it == model.end() ? ShapeMap::kAbsent : it->second);
    }
  }
}

// The merger's bucket table: values updated in place through Lookup and keys removed with
// Erase, under colliding keys, against a model (an in-place value equal to the empty marker
// would break the probe runs: the merger erases instead, as this does).
TEST(ShapeMapTest, LookupUpdatesInPlaceAndEraseRemovesWhateverTheValue) {
  std::mt19937_64 rng(20261125);
  ShapeMap m;
  std::unordered_map<std::uint64_t, std::uint32_t> model;
  std::vector<std::uint64_t> keys;
  for (int i = 0; i < 200; ++i) keys.push_back((rng() << 8) | (rng() % 4));
  EXPECT_EQ(m.Lookup(keys[0]), nullptr);  // on an empty table
  m.Erase(keys[0]);
  for (int step = 0; step < 20000; ++step) {
    const std::uint64_t key = keys[rng() % keys.size()];
    switch (rng() % 3) {
      case 0:
        m.Erase(key);
        model.erase(key);
        break;
      case 1:
        if (std::uint32_t* v = m.Lookup(key)) {
          ASSERT_EQ(model.count(key), 1u);
          *v += 1;
          model[key] += 1;
        } else {
          ASSERT_EQ(model.count(key), 0u);
        }
        break;
      default: {
        const auto value = static_cast<std::uint32_t>(rng() % 1000);
        m.Set(key, value);
        model[key] = value;
      }
    }
    ASSERT_EQ(m.size(), model.size()) << "step " << step;
  }
  for (std::uint64_t key : keys) {
    auto it = model.find(key);
    EXPECT_EQ(m.Find(key), it == model.end() ? ShapeMap::kAbsent : it->second);
  }
}

TEST(ShapeMapTest, GrowsAndKeepsEveryEntry) {
  ShapeMap m;
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> keys(100000);
  for (auto& k : keys) k = rng();
  for (std::size_t i = 0; i < keys.size(); ++i) m.Set(keys[i], static_cast<std::uint32_t>(i));
  EXPECT_EQ(m.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(m.Find(keys[i]), i);
  EXPECT_GE(m.MemoryUsage(), keys.size() * 2 * 12);  // at most half full
}

// GroupIndex's scope table: pointer values, sequential keys spread by a hash of its own (with
// the identity home they would all probe one run), a small first table, ForEach and Clear.
struct SpreadHome {
  std::size_t operator()(std::uint64_t key) const { return key * 0x9e3779b97f4a7c15ULL >> 7; }
};
using PointerMap = FlatMap64<const int*, nullptr, SpreadHome, 8>;

TEST(FlatMap64Test, PointerValuesWithAHomeOfTheirOwn) {
  std::vector<int> values(1000);
  PointerMap m;
  EXPECT_EQ(m.Find(1), nullptr);
  for (std::uint64_t k = 0; k < values.size(); ++k) m.Set(k, &values[k]);
  EXPECT_EQ(m.size(), values.size());
  for (std::uint64_t k = 0; k < values.size(); k += 2) m.EraseIf(k, &values[k]);
  m.EraseIf(1, &values[0]);  // maps to another value: stays
  std::size_t visited = 0;
  m.ForEach([&](std::uint64_t key, const int* v) {
    EXPECT_EQ(key % 2, 1u);
    EXPECT_EQ(v, &values[key]);
    ++visited;
  });
  EXPECT_EQ(visited, values.size() / 2);
  for (std::uint64_t k = 1; k < values.size(); k += 2) ASSERT_EQ(m.Find(k), &values[k]);
  m.Clear();
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.MemoryUsage(), 0u);
  EXPECT_EQ(m.Find(1), nullptr);
  m.Set(5, &values[5]);
  EXPECT_EQ(m.MemoryUsage(), 8 * sizeof(std::uint64_t) * 2);  // the first table: 8 entries
}

}  // namespace
}  // namespace logfold
