// FlatMap64: a flat open-addressing map from 64-bit keys to small values (linear probing,
// backward-shift deletion). One probe of one contiguous array per lookup, instead of a
// node-based hash map's bucket array plus a node per entry. ShapeMap, the merger's exact-shape
// table (shape key -> group slot), and GroupIndex's scope table are instances.
#ifndef LOGFOLD_PIPELINE_SHAPE_MAP_H_
#define LOGFOLD_PIPELINE_SHAPE_MAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace logfold {

// Keys that are hash outputs already (XXH3): their low bits are uniform, so they are the home.
struct KeyIsHome {
  std::size_t operator()(std::uint64_t key) const { return static_cast<std::size_t>(key); }
};

// Maps to Value (a slot number, a pointer); kAbsentValue is never stored and marks an empty
// entry. HomeOf spreads keys over the table (masked to its size). The table starts at
// kMinCapacity entries (a power of two) and doubles at half load.
template <typename Value, Value kAbsentValue, typename HomeOf = KeyIsHome,
          std::size_t kMinCapacity = 64>
class FlatMap64 {
 public:
  static constexpr Value kAbsent = kAbsentValue;
  static_assert((kMinCapacity & (kMinCapacity - 1)) == 0, "a power of two");

  // The value stored for `key`, or kAbsent.
  Value Find(std::uint64_t key) const {
    if (entries_.empty()) return kAbsent;
    for (std::size_t i = Home(key);; i = (i + 1) & mask_) {
      const Entry& e = entries_[i];
      if (e.value == kAbsent) return kAbsent;
      if (e.key == key) return e.value;
    }
  }

  // Starts loading the entry where a lookup of `key` begins (a hint).
  void Prefetch(std::uint64_t key) const {
    if (!entries_.empty()) __builtin_prefetch(&entries_[Home(key)]);
  }

  // The value stored for `key`, in place (valid until the next Set or erase), or nullptr.
  Value* Lookup(std::uint64_t key) {
    if (entries_.empty()) return nullptr;
    for (std::size_t i = Home(key);; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (e.value == kAbsent) return nullptr;
      if (e.key == key) return &e.value;
    }
  }

  // Maps `key` to `value` (!= kAbsent), replacing what it mapped to.
  void Set(std::uint64_t key, Value value) {
    if ((size_ + 1) * 2 > entries_.size()) Grow();
    for (std::size_t i = Home(key);; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (e.value == kAbsent) {
        e = {key, value};
        ++size_;
        return;
      }
      if (e.key == key) {
        e.value = value;
        return;
      }
    }
  }

  // Removes `key` if it maps to `value`.
  void EraseIf(std::uint64_t key, Value value) {
    const std::size_t i = Position(key);
    if (i != kNoPosition && entries_[i].value == value) EraseAt(i);
  }

  // Removes `key` whatever it maps to.
  void Erase(std::uint64_t key) {
    const std::size_t i = Position(key);
    if (i != kNoPosition) EraseAt(i);
  }

  // Calls fn(key, value) for every entry, in table order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const Entry& e : entries_) {
      if (e.value != kAbsent) fn(e.key, e.value);
    }
  }

  // Removes every entry and releases the table.
  void Clear() {
    std::vector<Entry>().swap(entries_);
    mask_ = 0;
    size_ = 0;
  }

  std::size_t size() const { return size_; }
  std::size_t MemoryUsage() const { return entries_.capacity() * sizeof(Entry); }

 private:
  struct Entry {
    std::uint64_t key = 0;
    Value value = kAbsent;
  };

  static constexpr std::size_t kNoPosition = SIZE_MAX;

  std::size_t Home(std::uint64_t key) const { return HomeOf{}(key)&mask_; }

  // Where `key` is in the table, or kNoPosition.
  std::size_t Position(std::uint64_t key) const {
    if (entries_.empty()) return kNoPosition;
    for (std::size_t i = Home(key);; i = (i + 1) & mask_) {
      const Entry& e = entries_[i];
      if (e.value == kAbsent) return kNoPosition;
      if (e.key == key) return i;
    }
  }

  void EraseAt(std::size_t i) {
    // Backward-shift deletion: move later entries of the probe run into the hole, so no
    // tombstones accumulate and lookups stay short.
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      const Entry& e = entries_[j];
      if (e.value == kAbsent) break;
      const std::size_t home = Home(e.key);
      // e may move to the hole at i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (stays) continue;
      entries_[i] = e;
      i = j;
    }
    entries_[i].value = kAbsent;
    --size_;
  }

  void Grow() {
    std::vector<Entry> old;
    old.swap(entries_);
    entries_.assign(old.empty() ? kMinCapacity : old.size() * 2, Entry{});
    mask_ = entries_.size() - 1;
    size_ = 0;
    for (const Entry& e : old) {
      if (e.value != kAbsent) Set(e.key, e.value);
    }
  }

  std::vector<Entry> entries_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

// The merger's exact-shape table: shape key (XXH3) -> group slot.
using ShapeMap = FlatMap64<std::uint32_t, UINT32_MAX>;

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_SHAPE_MAP_H_
