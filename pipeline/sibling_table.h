// SiblingTable: the merger's evidence, learned from the stream, that a word position is a free
// argument: for lines otherwise identical (one scope, one token count, the same token at every
// other position), the distinct words seen at that position. Bounded (set-associative, least
// recently used evicted) and allocated on first use; the merger consults it only for lines
// that would open a new group.
#ifndef LOGFOLD_PIPELINE_SIBLING_TABLE_H_
#define LOGFOLD_PIPELINE_SIBLING_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace logfold {

class SiblingTable {
 public:
  static constexpr std::size_t kMaxValues = 8;  // distinct values kept per key (the largest K)
  static constexpr std::size_t kWays = 4;       // entries per set
  static constexpr std::size_t kEntries = 4096;

  // Evidence for one sibling key (scope, token count, every token but one, that position).
  struct Entry {
    std::uint64_t key = 0;                  // 0: empty
    std::uint64_t values[kMaxValues] = {};  // token hashes of the distinct values, first first
    std::uint64_t anchor_value = 0;         // value of the latest group opened already varied
    std::uint32_t last_used = 0;
    std::uint16_t sightings = 0;  // lines that would have opened a group with this key
    std::uint8_t distinct = 0;    // values[0, distinct) hold
    bool variable = false;        // the position has been learned to be a variable
  };

  // The entry for `key` (never 0), or null.
  Entry* Find(std::uint64_t key);
  // The entry for `key`, made (in place of its set's least recently used) if absent.
  Entry& Touch(std::uint64_t key);
  // Records that a line with `value` at the entry's position would open a group; true when
  // the value is new to the entry (false also once kMaxValues are held).
  static bool Note(Entry& e, std::uint64_t value);
  // Is `value` among the entry's values?
  static bool Holds(const Entry& e, std::uint64_t value);

  // Appends the held entries to `out`, least recently used first (for checkpoints).
  void Export(std::vector<Entry>& out) const;
  // Takes an exported entry back as the most recently used of its set (a malformed one, key 0
  // or more values than kMaxValues, is ignored).
  void Restore(const Entry& e);

  void Clear() { entries_.reset(); }
  std::size_t MemoryUsage() const { return entries_ ? kEntries * sizeof(Entry) : 0; }
  std::uint64_t evictions() const { return evictions_; }

 private:
  std::unique_ptr<Entry[]> entries_;
  std::uint32_t clock_ = 0;
  std::uint64_t evictions_ = 0;
};

// ValueWords: words a scope has written as a key's value (`user alice`, `ruser=bob`) in lines
// that folded, so that the same word elsewhere in that scope's lines (`(to alice) bob on
// pts/0`, `(carol) CMD (...)`) is a value too. Direct-mapped (a newer word takes an older one's
// place), allocated on first use; a lookup is one load, so every word of a line can ask.
class ValueWords {
 public:
  static constexpr std::size_t kEntries = 1024;

  // Token hashes are XXH3 outputs and scopes are hashes: their XOR is a uniform key.
  static std::uint64_t Key(std::uint64_t scope, std::uint64_t word_hash) {
    const std::uint64_t key = scope ^ word_hash;
    return key == 0 ? 1 : key;
  }
  bool Empty() const { return !entries_; }
  bool Holds(std::uint64_t key) const { return entries_[Index(key)] == key; }  // !Empty()
  void Note(std::uint64_t key) {
    if (!entries_) entries_ = std::make_unique<std::uint64_t[]>(kEntries);
    entries_[Index(key)] = key;
  }
  void Clear() { entries_.reset(); }
  std::size_t MemoryUsage() const { return entries_ ? kEntries * sizeof(std::uint64_t) : 0; }
  // Appends the held keys to `out` (for checkpoints; Note takes each back).
  void Export(std::vector<std::uint64_t>& out) const {
    if (!entries_) return;
    for (std::size_t i = 0; i < kEntries; ++i) {
      if (entries_[i] != 0) out.push_back(entries_[i]);
    }
  }

 private:
  static std::size_t Index(std::uint64_t key) { return (key >> 17) & (kEntries - 1); }
  std::unique_ptr<std::uint64_t[]> entries_;
};

// A 64-bit key from a scope and a token count, with every position's token hash but one
// wildcarded: summing Term over the positions once gives every position's key in O(n).
// Inline: a line that opens a group computes one term per token.
struct SiblingKeys {
  static constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
  // MurmurHash3's finaliser: every input bit moves every output bit.
  static std::uint64_t Fmix(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
  }
  // Token hashes are XXH3 outputs already: one multiply by an odd constant that depends on
  // the position keeps terms of different positions apart; Key mixes the sum fully.
  static std::uint64_t Term(std::uint64_t hash, std::size_t position) {
    return hash * (kGolden + 2 * position);
  }
  // The sum's start, from the scope and the token count.
  static std::uint64_t Base(std::uint64_t scope, std::size_t n) {
    return Fmix(scope ^ Fmix(n + 0x7369626c696e67ULL));  // "sibling"
  }
  // The key of the line whose terms (and Base) sum to `sum`, with position i wildcarded.
  static std::uint64_t Key(std::uint64_t sum, std::uint64_t hash_i, std::size_t i) {
    const std::uint64_t key = Fmix((sum - Term(hash_i, i)) ^ (kGolden * (i + 7)));
    return key == 0 ? 1 : key;
  }
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_SIBLING_TABLE_H_
