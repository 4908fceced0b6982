// GroupIndex's internals (private to pipeline/): the entry layouts and the per-index state,
// shared by group_index.cc (scopes, layout changes, operations, lookups) and
// group_index_tables.cc (Robin Hood tables, posting lists and bucket arrays).
#ifndef LOGFOLD_PIPELINE_GROUP_INDEX_IMPL_H_
#define LOGFOLD_PIPELINE_GROUP_INDEX_IMPL_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "pipeline/group_index.h"
#include "pipeline/shape_map.h"
#include "pipeline/within_distance_mask.h"

namespace logfold {
namespace group_index_detail {

// murmur3's fmix64: full avalanche, so block values differing in a few bits land far apart
// and each scope's tables get unrelated seeds (scopes never share a table anyway).
inline std::uint64_t Mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// The build targets baseline x86-64, where std::popcount is a libgcc call that costs a
// quarter of a lookup; the POPCNT instruction is used when the CPU has it (checked once).
template <bool kHardware>
inline int Popcount(std::uint64_t x) {
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (kHardware) {
    std::uint64_t r;
    asm("popcntq %1, %0" : "=r"(r) : "r"(x));
    return static_cast<int>(r);
  }
#endif
  return std::popcount(x);
}

constexpr std::uint64_t kScopeSalt = 0x6a09e667f3bcc908ULL;
constexpr std::uint64_t kBlockSalt = 0x9e3779b97f4a7c15ULL;
// glibc keeps a size word in front of every chunk; counted so MemoryUsage stays honest.
constexpr std::size_t kMallocOverhead = sizeof(std::size_t);

// Robin Hood load limits. Probe runs are sorted by home slot, so a lookup reads its own run
// plus the runs displaced in front of it; with near-duplicate clusters (runs of one key)
// that displacement grows fast with load: at 10k clustered groups, k=3, a probe took half
// the time at load 0.5 as at 0.8. Tables grow 1.35x at 0.7 and are rebuilt at 0.6, so load
// stays in [0.52, 0.7]: about 12 B / 0.61 = 20 B per group per block.
constexpr double kMaxLoad = 0.7;
constexpr double kBuildLoad = 0.6;
constexpr double kGrowth = 1.35;
constexpr double kMinLoad = 0.25;
constexpr std::uint32_t kMinTableCap = 16;

// A scope switches to bucket arrays once its widest block has this many entries per
// possible value on average (back to Robin Hood below a quarter of it). With repeated keys
// a Robin Hood probe also reads the runs displaced in front of its own (2.3x slower than
// buckets at 1M groups, k=3) and inserts shift whole runs; a bucket is read from its start
// and appended to in O(1). Below ~8 per value the bucket headers and unused inline room
// would cost more memory than Robin Hood's empty slots.
constexpr std::size_t kBucketsEnterPerValue = 8;
constexpr std::size_t kBucketsExitPerValue = 2;

// One table entry: the full fingerprint next to the group, so verifying a candidate needs
// no second memory access. 12 bytes (no padding), fingerprint read with memcpy.
struct Slot {
  std::uint32_t words[3];
};

inline std::uint64_t SlotFp(const Slot& s) {
  std::uint64_t fp;
  std::memcpy(&fp, s.words, sizeof(fp));
  return fp;
}
inline std::uint32_t SlotGroup(const Slot& s) { return s.words[2]; }
inline Slot MakeSlot(std::uint64_t fp, std::uint32_t group) {
  Slot s;
  std::memcpy(s.words, &fp, sizeof(fp));
  s.words[2] = group;
  return s;
}

// Robin Hood table for one block of one scope. Homes come from a multiply-shift range
// reduction, so capacity need not be a power of two and can grow by 1.35x. Probe runs never
// wrap around: slots past the last home form a tail that grows when a run spills into it,
// which keeps every run one forward memmove-able range sorted by home.
struct RhTable {
  std::unique_ptr<Slot[]> slots;
  std::unique_ptr<std::uint64_t[]> occupied;  // one bit per slot
  std::uint64_t seed = 0;
  std::uint32_t cap = 0;   // home slots
  std::uint32_t phys = 0;  // allocated slots; the last is always empty, ending every scan
  std::uint32_t used = 0;
  // The most entries before the table grows: kMaxLoad * cap, rounded down (an insert takes
  // used + 1 > grow_at for used + 1 > kMaxLoad * cap, which it is, used being whole). In the
  // padding: sizeof(RhTable), which the memory accounting counts, stays 40.
  std::uint32_t grow_at = 0;

  bool Occupied(std::uint32_t i) const { return (occupied[i >> 6] >> (i & 63)) & 1; }
  void SetOccupied(std::uint32_t i) { occupied[i >> 6] |= 1ULL << (i & 63); }
  void ClearOccupied(std::uint32_t i) { occupied[i >> 6] &= ~(1ULL << (i & 63)); }
  std::uint32_t Home(std::uint64_t block_key) const {
    const auto h = static_cast<std::uint32_t>(Mix(block_key ^ seed) >> 32);
    return static_cast<std::uint32_t>((std::uint64_t{h} * cap) >> 32);
  }
  // The first empty slot at or after i (the guard slot guarantees one exists).
  std::uint32_t NextEmpty(std::uint32_t i) const {
    std::size_t w = i >> 6;
    std::uint64_t free_bits = ~occupied[w] & (~0ULL << (i & 63));
    while (free_bits == 0) free_bits = ~occupied[++w];
    return static_cast<std::uint32_t>(w * 64 +
                                      static_cast<std::size_t>(std::countr_zero(free_bits)));
  }
  static std::size_t OccupiedWords(std::uint32_t phys) { return (std::size_t{phys} + 63) / 64; }
  static std::size_t Bytes(std::uint32_t phys) {
    return std::size_t{phys} * sizeof(Slot) + OccupiedWords(phys) * sizeof(std::uint64_t) +
           2 * kMallocOverhead;
  }
};

// Posting list of one block value, one malloc block: header, fps[cap], groups[cap].
// Fingerprints and slots are split so verification streams over 8-byte fingerprints only.
struct List {
  std::uint32_t count;
  std::uint32_t cap;
  std::uint64_t* fps() { return reinterpret_cast<std::uint64_t*>(this + 1); }
  const std::uint64_t* fps() const { return reinterpret_cast<const std::uint64_t*>(this + 1); }
  std::uint32_t* groups() { return reinterpret_cast<std::uint32_t*>(fps() + cap); }
  const std::uint32_t* groups() const {
    return reinterpret_cast<const std::uint32_t*>(fps() + cap);
  }
};

// Bucketed posting lists for one block: bucket v sits at base + v * stride, so a probe
// needs no directory load before the entries (one memory round trip, like Robin Hood).
// Each bucket holds up to `inline_cap` entries in place, sized from the average occupancy,
// and spills the rest into an overflow List.
struct BucketHead {
  std::uint32_t count;  // entries held inline (<= inline_cap)
  std::uint32_t unused;
  List* overflow;
};

struct Buckets {
  std::byte* base = nullptr;
  std::size_t stride = 0;
  std::size_t bytes = 0;
  std::uint32_t inline_cap = 0;

  BucketHead* Head(std::size_t v) const { return reinterpret_cast<BucketHead*>(base + v * stride); }
  std::uint64_t* Fps(BucketHead* h) const { return reinterpret_cast<std::uint64_t*>(h + 1); }
  std::uint32_t* Groups(BucketHead* h) const {
    return reinterpret_cast<std::uint32_t*>(Fps(h) + inline_cap);
  }
};

enum class Kind : std::uint8_t { kFlat, kRobinHood, kBuckets };

struct Scope {
  std::uint64_t key = 0;
  std::size_t count = 0;
  Kind kind = Kind::kFlat;
  // kFlat: parallel arrays, unordered.
  std::vector<std::uint64_t> flat_fps;
  std::vector<std::uint32_t> flat_groups;
  // kRobinHood: one table per block.
  std::unique_ptr<RhTable[]> rh;
  // kBuckets: per block, 2^width buckets indexed by the block value.
  std::unique_ptr<Buckets[]> buckets;
  std::size_t buckets_built_for = 0;  // scope size the inline capacities were chosen for
};

// Scope keys are spread by Mix: tests and callers may use small, sequential ones.
struct ScopeHome {
  std::size_t operator()(std::uint64_t key) const {
    return static_cast<std::size_t>(Mix(key ^ kScopeSalt));
  }
};
using ScopeMap = FlatMap64<Scope*, nullptr, ScopeHome, 8>;

struct Pair {
  std::uint64_t fp;
  std::uint32_t group;
};

// Visit's default full(): every entry is wanted.
struct NeverFull {
  bool operator()() const { return false; }
};

// Candidates within k, collected without a branch per candidate: in near-duplicate
// clusters "within k" is a coin flip, and mispredicting it cost more than the popcount.
struct Hits {
  static constexpr std::uint32_t kCapacity = 64;
  std::uint32_t index[kCapacity];
  int distance[kCapacity];
  std::uint32_t count = 0;

  bool full() const { return count == kCapacity; }
  void Add(std::uint32_t i, int d, int k) {
    index[count] = i;
    distance[count] = d;
    count += d <= k ? 1 : 0;
  }
};

// A GroupIndex's state: the block layout for its distance, the scopes and the heap accounting.
// GroupIndex::Impl is this (group_index.cc); the lookups' visits are templates, kept here so
// they inline into FindWithin and FindNearest.
struct IndexImpl {
  IndexImpl(int max_distance, std::size_t limit)
      : k(max_distance), blocks(max_distance + 1), scan_limit(limit) {
    const int base = 64 / blocks;
    const int extra = 64 % blocks;
    int start = 0;
    for (int b = 0; b < blocks; ++b) {
      const int width = base + (b < extra ? 1 : 0);
      masks[b] = (width == 64 ? ~0ULL : ((1ULL << width) - 1)) << start;
      starts[b] = start;
      widths[b] = width;
      start += width;
    }
    // Buckets need 2^width slots per block, so only narrow blocks (k >= 2) can fill them.
    if (widths[0] <= 24) {
      buckets_enter = (std::size_t{1} << widths[0]) * kBucketsEnterPerValue;
      buckets_exit = (std::size_t{1} << widths[0]) * kBucketsExitPerValue;
    }
  }
  ~IndexImpl() { Clear(); }

  IndexImpl(const IndexImpl&) = delete;
  IndexImpl& operator=(const IndexImpl&) = delete;

  int k;
  int blocks;
  std::size_t scan_limit;
  std::size_t buckets_enter = GroupIndex::kNeverIndex;
  std::size_t buckets_exit = 0;
  std::uint64_t masks[GroupIndex::kMaxDistance + 1] = {};
  int starts[GroupIndex::kMaxDistance + 1] = {};
  int widths[GroupIndex::kMaxDistance + 1] = {};

  ScopeMap scopes;  // owns the Scopes it points to

  // Heap accounting, kept incrementally so MemoryUsage is O(1).
  std::size_t flat_bytes = 0;
  std::size_t table_bytes = 0;
  std::size_t list_bytes = 0;

  // ---- scopes ----

  Scope* FindScope(std::uint64_t key) const { return scopes.Find(key); }

  Scope* AddScope(std::uint64_t key);
  void RemoveScope(Scope* scope);

  void FreeScope(Scope* scope);
  void Clear();

  // ---- flat arrays ----

  static std::size_t FlatBytes(const Scope& s) {
    return s.flat_fps.capacity() * sizeof(std::uint64_t) +
           s.flat_groups.capacity() * sizeof(std::uint32_t);
  }

  void FlatAppend(Scope& s, std::uint64_t fp, std::uint32_t group);
  static bool FlatErase(Scope& s, std::uint64_t fp, std::uint32_t group);

  // Bucket index of fingerprint fp in block b.
  std::size_t BlockValue(int b, std::uint64_t fp) const {
    return static_cast<std::size_t>((fp & masks[b]) >> starts[b]);
  }

  // ---- Robin Hood tables, posting lists, bucket arrays (group_index_tables.cc) ----
  void RhAllocate(RhTable& t, std::uint32_t cap, std::uint32_t phys);
  void RhRelease(RhTable& t);
  static std::uint32_t RhCapFor(std::size_t n);
  void RhBuild(RhTable& t, std::uint64_t m, std::uint32_t cap, const std::vector<Pair>& entries);
  void RhResize(RhTable& t, std::uint64_t m, std::uint32_t new_cap);
  template <class SlotOf>
  void RhPlace(RhTable& t, std::uint32_t cap, std::uint64_t* order, std::size_t n, SlotOf&& slot);
  void RhGrowTail(RhTable& t);
  void RhInsert(RhTable& t, int b, std::uint64_t fp, std::uint32_t group);
  bool RhErase(RhTable& t, int b, std::uint64_t fp, std::uint32_t group);
  static std::size_t ListBytes(std::uint32_t cap);
  static std::uint32_t UsableCap(void* p);
  List* NewList(std::uint32_t cap);
  void FreeList(List* l);
  List* GrowList(List* l);
  List* MaybeShrinkList(List* l);
  static std::uint32_t InlineCapFor(std::size_t n, int width);
  static void* AllocateHugeAligned(std::size_t bytes);
  void BucketsAllocate(Buckets& bk, int width, std::uint32_t inline_cap);
  void BucketsRelease(Buckets& bk, int width);
  void BucketInsert(const Buckets& bk, int b, std::uint64_t fp, std::uint32_t group);
  bool BucketErase(const Buckets& bk, int b, std::uint64_t fp, std::uint32_t group);
  void PopOverflow(BucketHead* h);

  // ---- representation changes ----

  // The per-scope array of k+1 tables (the larger of the two kinds, for simplicity).
  std::size_t TableArrayBytes() const {
    return static_cast<std::size_t>(blocks) * sizeof(RhTable) + kMallocOverhead;
  }

  void FreeRepresentation(Scope& s);
  // Every entry appears once per block, so block 0 alone enumerates the scope.
  std::vector<Pair> Collect(const Scope& s) const;

  void Rebuild(Scope& s, Kind kind);
  // Hysteresis on every threshold, so a scope hovering at a boundary does not rebuild.
  void Rebalance(Scope& s);

  // ---- operations ----

  void Insert(std::uint64_t scope_key, std::uint64_t fp, std::uint32_t group);
  // Prefetches the first lines of fp's k+1 buckets (or Robin Hood home slots) in scope s;
  // with `overflow`, also the buckets' overflow lists (reads the heads: call it once they
  // are on their way or in cache).
  void PrefetchEntries(const Scope& s, std::uint64_t fp, bool overflow) const {
    // GCC deems a function whose only effects are prefetches pure and deletes the calls to
    // it (it did, here); a volatile asm is an effect it keeps.
    asm volatile("");
    switch (s.kind) {
      case Kind::kFlat:
        return;
      case Kind::kRobinHood:
        for (int b = 0; b < blocks; ++b) {
          const RhTable& t = s.rh[b];
          const std::uint32_t home = t.Home(fp & masks[b]);
          __builtin_prefetch(&t.occupied[home >> 6]);
          __builtin_prefetch(&t.slots[home]);
        }
        return;
      case Kind::kBuckets:
        for (int b = 0; b < blocks; ++b) {
          const Buckets& bk = s.buckets[b];
          const BucketHead* h = bk.Head(BlockValue(b, fp));
          if (overflow) {
            if (h->overflow != nullptr) __builtin_prefetch(h->overflow);
            continue;
          }
          const char* p = reinterpret_cast<const char*>(h);
          const std::size_t lines = std::min<std::size_t>(3, (bk.stride + 63) / 64);
          for (std::size_t line = 0; line < lines; ++line) __builtin_prefetch(p + 64 * line);
        }
        return;
    }
  }
  bool Erase(std::uint64_t scope_key, std::uint64_t fp, std::uint32_t group);

  // The first block on which two fingerprints differing by x agree (x has a zero block).
  int FirstZeroBlock(std::uint64_t x) const {
    int b = 0;
    while ((x & masks[b]) != 0) ++b;
    return b;
  }

  // Calls fn(group, distance) for every entry of the scope within k of q. With kUnique an
  // entry seen in several blocks is reported only from the first block it agrees on.
  // stop(b) is asked after blocks 0..b are done: an entry not seen yet differs from q in
  // each of them, so lies at distance b+1 or more, and a caller that needs no such entry
  // may end the visit there. full() is asked after each batch of entries reported (a block's
  // run of one value can hold thousands in a crowd of near-duplicates): true ends the visit
  // at once, with only some of the block's entries reported. Returns the entries of the
  // query's block values read (a flat scope's scan, bounded by scan_limit, counts none).
  template <bool kUnique, bool kHw, class Fn, class Stop, class Full = NeverFull>
  std::size_t Visit(const Scope& s, std::uint64_t q, Fn&& fn, Stop&& stop, Full&& full = {}) const {
    switch (s.kind) {
      case Kind::kFlat: {
        const std::uint64_t* fps = s.flat_fps.data();
        const std::size_t n = s.flat_fps.size();
        for (std::size_t i = 0; i < n; ++i) {
          const int d = Popcount<kHw>(fps[i] ^ q);
          if (d <= k) fn(s.flat_groups[i], d);
        }
        return 0;
      }
      case Kind::kRobinHood:
        return VisitRobinHood<kUnique, kHw>(s, q, fn, stop, full);
      case Kind::kBuckets:
        return VisitBuckets<kUnique, kHw>(s, q, fn, stop, full);
    }
    return 0;
  }

  template <bool kUnique, bool kHw, class Fn, class Stop, class Full>
  std::size_t VisitRobinHood(const Scope& s, std::uint64_t q, Fn& fn, Stop& stop,
                             Full& full) const {
    std::size_t read = 0;
    // Issue every block's first cache lines before reading any, so the k+1 memory
    // round trips overlap instead of queueing.
    std::uint32_t home[GroupIndex::kMaxDistance + 1];
    for (int b = 0; b < blocks; ++b) {
      const RhTable& t = s.rh[b];
      home[b] = t.Home(q & masks[b]);
      const char* first = reinterpret_cast<const char*>(&t.slots[home[b]]);
      const char* end = reinterpret_cast<const char*>(&t.slots[0] + t.phys);
      __builtin_prefetch(&t.occupied[home[b] >> 6]);
      for (int line = 0; line < 4 && first + 64 * line < end; ++line) {
        __builtin_prefetch(first + 64 * line);
      }
    }
    for (int b = 0; b < blocks; ++b) {
      const RhTable& t = s.rh[b];
      const std::uint64_t m = masks[b];
      const std::uint64_t key = q & m;
      std::uint64_t cached_key = key;
      std::uint32_t cached_home = home[b];
      Hits hits;
      const std::uint32_t run_end = t.NextEmpty(home[b]);  // one bit scan, not one per slot
      for (std::uint32_t i = home[b]; i < run_end; ++i) {
        const std::uint64_t f = SlotFp(t.slots[i]);
        if ((f & m) == key) {
          ++read;
          hits.Add(i, Popcount<kHw>(f ^ q), k);
          if (hits.full()) {
            ReportHits<kUnique>(hits, t, q, b, fn);
            if (full()) return read;
          }
          continue;
        }
        // Runs are sorted by home: skip runs that started earlier, stop at a later one.
        if ((f & m) != cached_key) {
          cached_key = f & m;
          cached_home = t.Home(cached_key);
        }
        if (cached_home > home[b]) break;
      }
      ReportHits<kUnique>(hits, t, q, b, fn);
      if (stop(b) || full()) return read;
    }
    return read;
  }

  template <bool kUnique, class Fn>
  void ReportHits(Hits& hits, const RhTable& t, std::uint64_t q, int b, Fn& fn) const {
    for (std::uint32_t h = 0; h < hits.count; ++h) {
      const Slot& slot = t.slots[hits.index[h]];
      if (!kUnique || FirstZeroBlock(SlotFp(slot) ^ q) == b) fn(SlotGroup(slot), hits.distance[h]);
    }
    hits.count = 0;
  }

  template <bool kUnique, bool kHw, class Fn, class Stop, class Full>
  std::size_t VisitBuckets(const Scope& s, std::uint64_t q, Fn& fn, Stop& stop, Full& full) const {
    std::size_t read = 0;
    BucketHead* heads[GroupIndex::kMaxDistance + 1];
    for (int b = 0; b < blocks; ++b) {
      const Buckets& bk = s.buckets[b];
      heads[b] = bk.Head(BlockValue(b, q));
      const char* p = reinterpret_cast<const char*>(heads[b]);
      const std::size_t lines = std::min<std::size_t>(5, (bk.stride + 63) / 64);
      for (std::size_t line = 0; line < lines; ++line) __builtin_prefetch(p + 64 * line);
    }
    // Overflow lists are a second round trip; fetch them for all blocks at once rather than
    // one after another (they are where near-duplicate clusters pile up).
    for (int b = 0; b < blocks; ++b) {
      if (const List* l = heads[b]->overflow) {
        __builtin_prefetch(l);
        __builtin_prefetch(reinterpret_cast<const char*>(l) + 64);
      }
    }
    for (int b = 0; b < blocks; ++b) {
      const Buckets& bk = s.buckets[b];
      BucketHead* h = heads[b];
      read += h->count;
      if (!ScanEntries<kUnique, kHw>(bk.Fps(h), bk.Groups(h), h->count, q, b, fn, full)) {
        return read;
      }
      if (const List* l = h->overflow) {
        read += l->count;
        if (!ScanEntries<kUnique, kHw>(l->fps(), l->groups(), l->count, q, b, fn, full)) {
          return read;
        }
      }
      if (stop(b) || full()) return read;
    }
    return read;
  }

  // Within-k entries are first marked in a 64-bit mask (no store per entry: the scan of
  // ~15-30 entries per bucket was most of a lookup's instructions), then visited by bit.
  // False when full() ended the scan.
  template <bool kUnique, bool kHw, class Fn, class Full>
  bool ScanEntries(const std::uint64_t* fps, const std::uint32_t* groups, std::uint32_t n,
                   std::uint64_t q, int b, Fn& fn, Full& full) const {
    for (std::uint32_t start = 0; start < n; start += 64) {
      const std::uint32_t len = std::min<std::uint32_t>(n - start, 64);
      const std::uint64_t hits = WithinDistanceMask(fps + start, len, q, k);
      for (std::uint64_t m = hits; m != 0; m &= m - 1) {
        const std::uint32_t i = start + static_cast<std::uint32_t>(std::countr_zero(m));
        const std::uint64_t x = fps[i] ^ q;
        if (!kUnique || FirstZeroBlock(x) == b) fn(groups[i], Popcount<kHw>(x));
      }
      if (hits != 0 && full()) return false;
    }
    return true;
  }

  std::size_t MemoryUsage() const {
    return sizeof(IndexImpl) + scopes.MemoryUsage() +
           scopes.size() * (sizeof(Scope) + kMallocOverhead) + flat_bytes + table_bytes +
           list_bytes;
  }
};

}  // namespace group_index_detail
}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_GROUP_INDEX_IMPL_H_
