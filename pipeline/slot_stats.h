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

  struct Value {
    std::uint64_t hash = 0;
    std::uint64_t count = 0;  // an upper bound once values were evicted (space-saving)
    std::uint8_t size = 0;
    char text[kValueBytes];

    std::string_view view() const { return {text, size}; }
  };

  explicit SlotStats(std::uint32_t position = 0) : position_(position) {}

  // Counts `count` lines whose value here was `text` (hash: any 64-bit hash of it).
  // Space-saving top-k: a value not kept replaces the least counted one and inherits its
  // count, so a kept count never underestimates; `total` stays exact.
  void Add(std::uint64_t hash, std::string_view text, std::uint64_t count = 1) {
    total_ += count;
    bits_[(hash >> 6) & 3] |= std::uint64_t{1} << (hash & 63);
    for (std::size_t i = 0; i < size_; ++i) {
      if (top_[i].hash == hash) {
        top_[i].count += count;
        return;
      }
    }
    Value* slot;
    if (size_ < kTop) {
      slot = &top_[size_++];
      slot->count = 0;
    } else {
      slot = &*std::min_element(top_.begin(), top_.end(),
                                [](const Value& a, const Value& b) { return a.count < b.count; });
    }
    slot->hash = hash;
    slot->count += count;
    slot->size = static_cast<std::uint8_t>(std::min(text.size(), kValueBytes));
    std::memcpy(slot->text, text.data(), slot->size);
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
  std::size_t Sorted(std::array<const Value*, kTop>& out) const {
    for (std::size_t i = 0; i < size_; ++i) out[i] = &top_[i];
    std::sort(out.begin(), out.begin() + size_,
              [](const Value* a, const Value* b) { return a->count > b->count; });
    return size_;
  }

  std::uint32_t position() const { return position_; }
  std::uint64_t total() const { return total_; }

  // What a checkpoint saves and Restore takes back: the distinct-count bits and the kept
  // values (unsorted).
  const std::array<std::uint64_t, 4>& bits() const { return bits_; }
  std::size_t kept() const { return size_; }
  const Value& kept_value(std::size_t i) const { return top_[i]; }
  // Rebuilds statistics from saved parts; false (and `out` unchanged) if they are
  // inconsistent (more than kTop values, an oversized value, kept counts above `total`).
  static bool Restore(std::uint32_t position, std::uint64_t total,
                      const std::array<std::uint64_t, 4>& bits, const Value* values, std::size_t n,
                      SlotStats& out) {
    if (n > kTop) return false;
    SlotStats st(position);
    st.total_ = total;
    st.bits_ = bits;
    for (std::size_t i = 0; i < n; ++i) {
      if (values[i].size > kValueBytes || values[i].count > total) return false;
      st.top_[i] = values[i];
    }
    st.size_ = static_cast<std::uint8_t>(n);
    out = st;
    return true;
  }

 private:
  std::uint32_t position_;
  std::uint8_t size_ = 0;
  std::uint64_t total_ = 0;
  std::array<std::uint64_t, 4> bits_{};
  std::array<Value, kTop> top_{};
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_SLOT_STATS_H_
