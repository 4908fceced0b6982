// GroupIndex: finds the open groups whose 64-bit fingerprint lies within Hamming distance k of
// a query, without scanning all groups (pigeonhole block index, Manku et al., WWW 2007).
#ifndef LOGFOLD_PIPELINE_GROUP_INDEX_H_
#define LOGFOLD_PIPELINE_GROUP_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace logfold {

// Groups are identified by a caller-chosen 32-bit slot. Each group belongs to a scope (a
// 64-bit hash of its scope key); lookups only return groups of the query's scope.
//
// The 64 bits are split into k+1 contiguous blocks; two fingerprints within distance k agree
// exactly on at least one block, so only groups sharing a block value are examined.
// Each scope picks its own layout as it grows and shrinks (with hysteresis):
//  - at most scan_limit() groups: a flat array, scanned (cheaper than k+1 probes, 12 B/group);
//  - larger: one Robin Hood table per block holding the entries inline, so a probe is one
//    contiguous read;
//  - once blocks average 8+ entries per possible block value: per block, an array of
//    buckets addressed by the block value (entries inline, overflow in a side list), since
//    long runs of equal keys make Robin Hood probes read more and inserts shift.
// Not thread-safe: one owner thread, like the WindowMerger that holds it.
class GroupIndex {
 public:
  static constexpr int kMaxDistance = 31;

  struct Candidate {
    std::uint32_t group;
    int distance;
  };

  // Never build block tables: every scope is scanned.
  static constexpr std::size_t kNeverIndex = static_cast<std::size_t>(-1);

  // 0 <= max_distance <= kMaxDistance (values outside are clamped).
  explicit GroupIndex(int max_distance);
  // scan_limit 0 indexes every scope (tests use it to reach the tables with few groups).
  GroupIndex(int max_distance, std::size_t scan_limit);

  // The largest scope size for which scanning beats probing k+1 tables at this distance;
  // kNeverIndex when blocks are so narrow (k >= 11) that the tables would still visit over a
  // quarter of the scope.
  static std::size_t DefaultScanLimit(int max_distance);

  GroupIndex(const GroupIndex&) = delete;
  GroupIndex& operator=(const GroupIndex&) = delete;
  GroupIndex(GroupIndex&&) noexcept;
  GroupIndex& operator=(GroupIndex&&) noexcept;
  ~GroupIndex();

  // Inserting the same (scope, fingerprint, group) twice is a caller error.
  void Insert(std::uint64_t scope, std::uint64_t fingerprint, std::uint32_t group);
  // Erases exactly the entry inserted with these values; returns false if absent.
  bool Erase(std::uint64_t scope, std::uint64_t fingerprint, std::uint32_t group);

  // Starts loading the memory an Erase of this entry will touch (a hint: no effect on
  // results). A merger at max_groups evicts a cold group per new line; issued a line ahead,
  // the eviction's k+1 scattered bucket reads overlap with other work instead of stalling.
  void Prefetch(std::uint64_t scope, std::uint64_t fingerprint) const;

  // Appends every group of `scope` within max_distance of `fingerprint` to `out` (cleared
  // first), each exactly once, sorted by distance then group. Reuses out's capacity.
  // With a limit, only the first `limit` of that order (a line of a near-duplicate crowd
  // can have thousands within distance): the visit ends after the first block that settles
  // them, or once kCrowdFactor x limit groups within distance have been found, and then
  // they are the nearest `limit` of those found (exact whenever fewer lie within).
  // Returns the index entries read: the entries sharing a block value with the query, which
  // is what a lookup costs (a crowd of near-duplicates makes those runs long).
  static constexpr std::size_t kCrowdFactor = 4;
  std::size_t FindWithin(std::uint64_t scope, std::uint64_t fingerprint,
                         std::vector<Candidate>& out, std::size_t limit = SIZE_MAX) const;

  // The nearest group within max_distance (ties: lowest slot); false if none.
  bool FindNearest(std::uint64_t scope, std::uint64_t fingerprint, Candidate& out) const;

  int max_distance() const { return max_distance_; }
  std::size_t scan_limit() const { return scan_limit_; }
  std::size_t size() const { return size_; }
  void Clear();

  // Approximate heap bytes used, for memory reporting.
  std::size_t MemoryUsage() const;

 private:
  struct Impl;
  int max_distance_;
  std::size_t scan_limit_;
  std::size_t size_ = 0;
  Impl* impl_;  // null only after being moved from; created again on the next Insert
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_GROUP_INDEX_H_
