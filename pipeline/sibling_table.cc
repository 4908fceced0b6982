// SiblingTable: a set-associative table of sibling keys and the distinct values seen at each.
#include "pipeline/sibling_table.h"

#include <algorithm>

namespace logfold {

SiblingTable::Entry* SiblingTable::Find(std::uint64_t key) {
  if (!entries_) return nullptr;
  Entry* set = &entries_[(key & (kEntries / kWays - 1)) * kWays];
  for (std::size_t w = 0; w < kWays; ++w) {
    if (set[w].key == key) {
      set[w].last_used = ++clock_;
      return &set[w];
    }
  }
  return nullptr;
}

SiblingTable::Entry& SiblingTable::Touch(std::uint64_t key) {
  if (!entries_) entries_ = std::make_unique<Entry[]>(kEntries);
  Entry* set = &entries_[(key & (kEntries / kWays - 1)) * kWays];
  for (std::size_t w = 0; w < kWays; ++w) {
    if (set[w].key == key) {
      set[w].last_used = ++clock_;
      return set[w];
    }
  }
  // An empty entry has last_used 0, so it goes first; then the least recently used
  // (wrap-around of the clock only makes one eviction choice less than ideal).
  Entry* victim = &set[0];
  for (std::size_t w = 1; w < kWays; ++w) {
    if (set[w].last_used < victim->last_used) victim = &set[w];
  }
  if (victim->key != 0) ++evictions_;
  // Values past `distinct` are never read: only the counters start again.
  victim->key = key;
  victim->anchor_value = 0;
  victim->last_used = ++clock_;
  victim->sightings = 0;
  victim->distinct = 0;
  victim->variable = false;
  return *victim;
}

bool SiblingTable::Holds(const Entry& e, std::uint64_t value) {
  for (std::size_t k = 0; k < e.distinct; ++k) {
    if (e.values[k] == value) return true;
  }
  return false;
}

bool SiblingTable::Note(Entry& e, std::uint64_t value) {
  if (e.sightings < UINT16_MAX) ++e.sightings;
  if (Holds(e, value) || e.distinct >= kMaxValues) return false;
  e.values[e.distinct++] = value;
  return true;
}

void SiblingTable::Export(std::vector<Entry>& out) const {
  if (!entries_) return;
  const std::size_t start = out.size();
  for (std::size_t i = 0; i < kEntries; ++i) {
    if (entries_[i].key != 0) out.push_back(entries_[i]);
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(start), out.end(),
            [](const Entry& a, const Entry& b) { return a.last_used < b.last_used; });
}

void SiblingTable::Restore(const Entry& saved) {
  if (saved.key == 0 || saved.distinct > kMaxValues) return;
  Entry& e = Touch(saved.key);
  std::copy(saved.values, saved.values + saved.distinct, e.values);
  e.anchor_value = saved.anchor_value;
  e.sightings = saved.sightings;
  e.distinct = saved.distinct;
  e.variable = saved.variable;
}

}  // namespace logfold
