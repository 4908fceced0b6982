// ShapeMap: the merger's exact-shape table, a flat open-addressing map from 64-bit shape keys
// to group slots. One probe of one contiguous array per lookup, instead of a node-based
// hash map's bucket array plus a node per entry (two cache misses on every line).
#ifndef LOGFOLD_PIPELINE_SHAPE_MAP_H_
#define LOGFOLD_PIPELINE_SHAPE_MAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace logfold {

class ShapeMap {
 public:
  static constexpr std::uint32_t kAbsent = UINT32_MAX;  // also marks an empty entry

  // The slot stored for `key`, or kAbsent.
  std::uint32_t Find(std::uint64_t key) const {
    if (entries_.empty()) return kAbsent;
    for (std::size_t i = Home(key);; i = (i + 1) & mask_) {
      const Entry& e = entries_[i];
      if (e.slot == kAbsent) return kAbsent;
      if (e.key == key) return e.slot;
    }
  }

  // Maps `key` to `slot` (slot != kAbsent), replacing what it mapped to.
  void Set(std::uint64_t key, std::uint32_t slot) {
    if ((size_ + 1) * 2 > entries_.size()) Grow();
    for (std::size_t i = Home(key);; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (e.slot == kAbsent) {
        e = {key, slot};
        ++size_;
        return;
      }
      if (e.key == key) {
        e.slot = slot;
        return;
      }
    }
  }

  // Removes `key` if it maps to `slot`.
  void EraseIf(std::uint64_t key, std::uint32_t slot) {
    if (entries_.empty()) return;
    std::size_t i = Home(key);
    for (;; i = (i + 1) & mask_) {
      const Entry& e = entries_[i];
      if (e.slot == kAbsent) return;
      if (e.key == key) break;
    }
    if (entries_[i].slot != slot) return;
    // Backward-shift deletion: move later entries of the probe run into the hole, so no
    // tombstones accumulate and lookups stay short.
    for (std::size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      const Entry& e = entries_[j];
      if (e.slot == kAbsent) break;
      const std::size_t home = Home(e.key);
      // e may move to the hole at i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (stays) continue;
      entries_[i] = e;
      i = j;
    }
    entries_[i].slot = kAbsent;
    --size_;
  }

  std::size_t size() const { return size_; }
  std::size_t MemoryUsage() const { return entries_.capacity() * sizeof(Entry); }

 private:
  struct Entry {
    std::uint64_t key = 0;
    std::uint32_t slot = kAbsent;
  };

  // Shape keys are XXH3 outputs, so their low bits are already uniform.
  std::size_t Home(std::uint64_t key) const { return static_cast<std::size_t>(key) & mask_; }

  void Grow() {
    std::vector<Entry> old;
    old.swap(entries_);
    entries_.assign(old.empty() ? 64 : old.size() * 2, Entry{});
    mask_ = entries_.size() - 1;
    size_ = 0;
    for (const Entry& e : old) {
      if (e.slot != kAbsent) Set(e.key, e.slot);
    }
  }

  std::vector<Entry> entries_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_SHAPE_MAP_H_
