// SlotStats: bounded statistics of the values one variable slot of a group took (distinct
// count estimate and the most frequent values with counts), so folding hides nothing.
#ifndef LOGFOLD_PIPELINE_SLOT_STATS_H_
#define LOGFOLD_PIPELINE_SLOT_STATS_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace logfold {

class SlotStats {
 public:
  static constexpr std::size_t kTop = 5;          // values kept with counts
  static constexpr std::size_t kValueBytes = 31;  // longer values are kept truncated

  // A kept value as Sorted shows it; `text` points into the SlotStats.
  struct Value {
    std::string_view text;
    std::uint64_t count = 0;  // an upper bound once values were evicted (space-saving)

    std::string_view view() const { return text; }
  };

  explicit SlotStats(std::uint32_t position = 0) : position_(position) {}

  // Counts `count` lines whose value here was `text` (hash: any 64-bit hash of it).
  // Space-saving top-k: a value not kept replaces the least counted one and inherits its
  // count, so a kept count never underestimates; `total` stays exact. Hashes and counts are
  // kept apart from the texts: the per-line scan reads one cache line.
  void Add(std::uint64_t hash, std::string_view text, std::uint64_t count = 1) {
    total_ += count;
    bits_[(hash >> 6) & 3] |= std::uint64_t{1} << (hash & 63);
    for (std::size_t i = 0; i < size_; ++i) {
      if (hashes_[i] == hash) {
        counts_[i] += count;
        return;
      }
    }
    std::size_t slot;
    if (size_ < kTop) {
      slot = size_++;
      counts_[slot] = 0;
    } else {
      slot = 0;  // the first least counted, as std::min_element picks it
      for (std::size_t i = 1; i < kTop; ++i) {
        if (counts_[i] < counts_[slot]) slot = i;
      }
    }
    hashes_[slot] = hash;
    counts_[slot] += count;
    sizes_[slot] = static_cast<std::uint8_t>(std::min(text.size(), kValueBytes));
    std::memcpy(texts_[slot], text.data(), sizes_[slot]);
  }

  // Distinct values seen: exact while few, a linear-counting estimate over 256 bits beyond
  // (within a few percent up to several hundred; saturates near 1400).
  std::uint64_t Distinct() const {
    int zeros = 0;
    for (std::uint64_t w : bits_) zeros += 64 - std::popcount(w);
    const std::uint64_t estimate =
        zeros == 0 ? 1420
                   : static_cast<std::uint64_t>(std::llround(-256.0 * std::log(zeros / 256.0)));
    return std::max<std::uint64_t>(estimate, size_);
  }

  // The kept values, most counted first.
  std::size_t Sorted(std::array<Value, kTop>& out) const {
    for (std::size_t i = 0; i < size_; ++i) out[i] = {{texts_[i], sizes_[i]}, counts_[i]};
    // Stable insertion sort (what std::sort does on so few values): ties keep kept order.
    for (std::size_t i = 1; i < size_; ++i) {
      const Value v = out[i];
      std::size_t j = i;
      for (; j > 0 && v.count > out[j - 1].count; --j) out[j] = out[j - 1];
      out[j] = v;
    }
    return size_;
  }

  // Is a value of this hash among the kept ones?
  bool Keeps(std::uint64_t hash) const {
    for (std::size_t i = 0; i < size_; ++i) {
      if (hashes_[i] == hash) return true;
    }
    return false;
  }
  // Enumeration-like: over at least kEnumLines lines, at most kEnumValues distinct values,
  // every one kept with its exact count. A value new to such a slot is news.
  static constexpr std::uint64_t kEnumLines = 16;
  static constexpr std::size_t kEnumValues = 4;
  bool EnumerationLike() const { return total_ >= kEnumLines && size_ <= kEnumValues; }

  std::uint32_t position() const { return position_; }
  std::uint64_t total() const { return total_; }

 private:
  std::uint32_t position_;
  std::uint8_t size_ = 0;
  std::array<std::uint8_t, kTop> sizes_{};
  std::uint64_t total_ = 0;
  std::array<std::uint64_t, 4> bits_{};
  std::array<std::uint64_t, kTop> hashes_{};
  std::array<std::uint64_t, kTop> counts_{};
  char texts_[kTop][kValueBytes];
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_SLOT_STATS_H_
