// SiblingTable: a set-associative table of sibling keys and the distinct values seen at each.
#include "pipeline/sibling_table.h"

namespace logfold {
namespace {

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// MurmurHash3's finaliser: every input bit moves every output bit.
std::uint64_t Fmix(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

}  // namespace

std::uint64_t SiblingKeys::Term(std::uint64_t hash, std::size_t position) {
  return Fmix(hash + kGolden * (position + 1));
}

std::uint64_t SiblingKeys::Base(std::uint64_t scope, std::size_t n) {
  return Fmix(scope ^ Fmix(n + 0x7369626c696e67ULL));  // "sibling"
}

std::uint64_t SiblingKeys::Key(std::uint64_t sum, std::uint64_t hash_i, std::size_t i) {
  const std::uint64_t key = Fmix((sum - Term(hash_i, i)) ^ (kGolden * (i + 7)));
  return key == 0 ? 1 : key;
}

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
  Entry* victim = &set[0];
  for (std::size_t w = 0; w < kWays; ++w) {
    if (set[w].key == key) {
      set[w].last_used = ++clock_;
      return set[w];
    }
    // Empty entries first, then the least recently used (wrap-around of the clock only
    // makes one eviction choice less than ideal).
    if (victim->key != 0 && (set[w].key == 0 || set[w].last_used < victim->last_used)) {
      victim = &set[w];
    }
  }
  if (victim->key != 0) ++evictions_;
  *victim = Entry{};
  victim->key = key;
  victim->last_used = ++clock_;
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

}  // namespace logfold
