// GroupIndex: per-scope pigeonhole block tables. Entries live inline in Robin Hood tables
// or, when block values repeat a lot, in buckets addressed directly by block value (both one
// memory round trip per probe); small scopes are flat arrays that are scanned.
#include "pipeline/group_index.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

#include "pipeline/shape_map.h"
#include "pipeline/within_distance_mask.h"

namespace logfold {
namespace {

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

bool CpuHasPopcnt() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("popcnt");
  return has;
#else
  return false;
#endif
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

}  // namespace

struct GroupIndex::Impl {
  Impl(int max_distance, std::size_t limit)
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
  ~Impl() { Clear(); }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  int k;
  int blocks;
  std::size_t scan_limit;
  std::size_t buckets_enter = kNeverIndex;
  std::size_t buckets_exit = 0;
  std::uint64_t masks[kMaxDistance + 1] = {};
  int starts[kMaxDistance + 1] = {};
  int widths[kMaxDistance + 1] = {};

  ScopeMap scopes;  // owns the Scopes it points to

  // Heap accounting, kept incrementally so MemoryUsage is O(1).
  std::size_t flat_bytes = 0;
  std::size_t table_bytes = 0;
  std::size_t list_bytes = 0;

  // ---- scopes ----

  Scope* FindScope(std::uint64_t key) const { return scopes.Find(key); }

  Scope* AddScope(std::uint64_t key) {
    auto scope = std::make_unique<Scope>();
    scope->key = key;
    scopes.Set(key, scope.get());
    return scope.release();
  }

  void RemoveScope(Scope* scope) {
    scopes.EraseIf(scope->key, scope);
    FreeScope(scope);
  }

  void FreeScope(Scope* scope) {
    FreeRepresentation(*scope);
    delete scope;
  }

  void Clear() {
    scopes.ForEach([this](std::uint64_t, Scope* scope) { FreeScope(scope); });
    scopes.Clear();
  }

  // ---- flat arrays ----

  static std::size_t FlatBytes(const Scope& s) {
    return s.flat_fps.capacity() * sizeof(std::uint64_t) +
           s.flat_groups.capacity() * sizeof(std::uint32_t);
  }

  void FlatAppend(Scope& s, std::uint64_t fp, std::uint32_t group) {
    const std::size_t before = FlatBytes(s);
    s.flat_fps.push_back(fp);
    s.flat_groups.push_back(group);
    flat_bytes += FlatBytes(s) - before;
  }

  static bool FlatErase(Scope& s, std::uint64_t fp, std::uint32_t group) {
    std::vector<std::uint64_t>& fps = s.flat_fps;
    std::vector<std::uint32_t>& groups = s.flat_groups;
    const std::size_t n = fps.size();
    std::size_t pos = 0;
    while (pos < n && (fps[pos] != fp || groups[pos] != group)) ++pos;
    if (pos == n) return false;
    fps[pos] = fps.back();
    groups[pos] = groups.back();
    fps.pop_back();
    groups.pop_back();
    return true;
  }

  // ---- Robin Hood tables ----

  void RhAllocate(RhTable& t, std::uint32_t cap, std::uint32_t phys) {
    t.slots.reset(new Slot[phys]());
    t.occupied.reset(new std::uint64_t[RhTable::OccupiedWords(phys)]());
    t.cap = cap;
    t.phys = phys;
    t.used = 0;
    table_bytes += RhTable::Bytes(phys);
  }

  void RhRelease(RhTable& t) {
    if (!t.slots) return;
    table_bytes -= RhTable::Bytes(t.phys);
    t.slots.reset();
    t.occupied.reset();
    t.cap = t.phys = t.used = 0;
  }

  static std::uint32_t RhCapFor(std::size_t n) {
    const double want = static_cast<double>(n) / kBuildLoad;
    if (want >= 3.5e9) throw std::length_error("GroupIndex scope too large");
    return std::max(kMinTableCap, static_cast<std::uint32_t>(want) + 1);
  }

  // Lays entries out from scratch: sorted by home, each at max(home, previous + 1).
  void RhBuild(RhTable& t, std::uint64_t m, std::uint32_t cap, const std::vector<Pair>& entries) {
    const std::uint64_t seed = t.seed;
    RhRelease(t);
    t.seed = seed;
    t.cap = cap;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> order(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
      order[i] = {t.Home(entries[i].fp & m), static_cast<std::uint32_t>(i)};
    }
    std::sort(order.begin(), order.end());
    std::uint64_t end = 0;
    for (const auto& [home, idx] : order) end = std::max<std::uint64_t>(home, end) + 1;
    const std::uint64_t phys = std::max<std::uint64_t>(cap, end) + 1 + cap / 64;
    if (phys >= 0xffffffffULL) throw std::length_error("GroupIndex scope too large");
    RhAllocate(t, cap, static_cast<std::uint32_t>(phys));
    std::uint32_t next = 0;
    for (const auto& [home, idx] : order) {
      const std::uint32_t pos = std::max(home, next);
      t.slots[pos] = MakeSlot(entries[idx].fp, entries[idx].group);
      t.SetOccupied(pos);
      next = pos + 1;
    }
    t.used = static_cast<std::uint32_t>(entries.size());
  }

  void RhResize(RhTable& t, std::uint64_t m, std::uint32_t new_cap) {
    std::vector<Pair> entries;
    entries.reserve(t.used);
    for (std::uint32_t i = 0; i < t.phys; ++i) {
      if (t.Occupied(i)) entries.push_back({SlotFp(t.slots[i]), SlotGroup(t.slots[i])});
    }
    RhBuild(t, m, new_cap, entries);
  }

  // Makes room for one more slot at the end of the tail.
  void RhGrowTail(RhTable& t) {
    const std::uint64_t phys = std::uint64_t{t.phys} + std::max<std::uint32_t>(16, t.phys / 16);
    if (phys >= 0xffffffffULL) throw std::length_error("GroupIndex scope too large");
    RhTable bigger;
    RhAllocate(bigger, t.cap, static_cast<std::uint32_t>(phys));
    std::memcpy(bigger.slots.get(), t.slots.get(), std::size_t{t.phys} * sizeof(Slot));
    std::memcpy(bigger.occupied.get(), t.occupied.get(),
                RhTable::OccupiedWords(t.phys) * sizeof(std::uint64_t));
    bigger.seed = t.seed;
    bigger.used = t.used;
    RhRelease(t);
    t = std::move(bigger);
  }

  // Inserts at the start of the run of its block value (after entries with earlier homes),
  // shifting the rest of the cluster one slot right: no walk over a long run of equal keys.
  void RhInsert(RhTable& t, int b, std::uint64_t fp, std::uint32_t group) {
    const std::uint64_t m = masks[b];
    if (static_cast<double>(t.used + 1) > kMaxLoad * static_cast<double>(t.cap)) {
      const auto grown = static_cast<std::uint64_t>(t.cap * kGrowth) + 1;
      if (grown >= 0xf0000000ULL) throw std::length_error("GroupIndex scope too large");
      RhResize(t, m, static_cast<std::uint32_t>(grown));
    }
    const std::uint64_t key = fp & m;
    const std::uint32_t home = t.Home(key);
    std::uint32_t i = home;
    std::uint64_t cached_key = key;  // entries are grouped by key: one Home() per run
    std::uint32_t cached_home = home;
    for (; t.Occupied(i); ++i) {
      const std::uint64_t f = SlotFp(t.slots[i]) & m;
      if (f == key) break;
      if (f != cached_key) {
        cached_key = f;
        cached_home = t.Home(f);
      }
      if (cached_home >= home) break;
    }
    std::uint32_t e = t.NextEmpty(i);
    if (e + 1 >= t.phys) RhGrowTail(t);
    if (e > i) std::memmove(&t.slots[i + 1], &t.slots[i], std::size_t{e - i} * sizeof(Slot));
    t.SetOccupied(e);
    t.slots[i] = MakeSlot(fp, group);
    ++t.used;
  }

  bool RhErase(RhTable& t, int b, std::uint64_t fp, std::uint32_t group) {
    const std::uint64_t m = masks[b];
    const std::uint64_t key = fp & m;
    const std::uint32_t home = t.Home(key);
    std::uint64_t cached_key = key;
    std::uint32_t cached_home = home;
    std::uint32_t i = home;
    for (;; ++i) {
      if (!t.Occupied(i)) return false;
      const std::uint64_t f = SlotFp(t.slots[i]);
      if ((f & m) == key) {
        if (f == fp && SlotGroup(t.slots[i]) == group) break;
        continue;
      }
      if ((f & m) != cached_key) {
        cached_key = f & m;
        cached_home = t.Home(cached_key);
      }
      if (cached_home > home) return false;
    }
    // Backward shift: the entries after i up to the first one sitting at its home (or an
    // empty slot) move one slot closer to home.
    cached_key = key;
    cached_home = home;
    std::uint32_t j = i + 1;
    for (; t.Occupied(j); ++j) {
      const std::uint64_t f = SlotFp(t.slots[j]) & m;
      if (f != cached_key) {
        cached_key = f;
        cached_home = t.Home(f);
      }
      if (cached_home == j) break;
    }
    if (j > i + 1) {
      std::memmove(&t.slots[i], &t.slots[i + 1], std::size_t{j - i - 1} * sizeof(Slot));
    }
    t.ClearOccupied(j - 1);
    --t.used;
    if (t.cap > kMinTableCap && static_cast<double>(t.used) < kMinLoad * t.cap) {
      RhResize(t, m, RhCapFor(t.used));
    }
    return true;
  }

  // ---- posting lists (bucket overflow) ----

  static std::size_t ListBytes(std::uint32_t cap) {
    return sizeof(List) + std::size_t{cap} * (sizeof(std::uint64_t) + sizeof(std::uint32_t));
  }
  // malloc often hands back more than asked; using it saves a realloc or two per list.
  static std::uint32_t UsableCap(void* p) {
    const std::size_t usable = malloc_usable_size(p);
    return static_cast<std::uint32_t>(std::min<std::size_t>(
        (usable - sizeof(List)) / (sizeof(std::uint64_t) + sizeof(std::uint32_t)), 0xffffffffU));
  }

  List* NewList(std::uint32_t cap) {
    void* p = std::malloc(ListBytes(cap));
    if (p == nullptr) throw std::bad_alloc();
    list_bytes += malloc_usable_size(p) + kMallocOverhead;
    List* l = static_cast<List*>(p);
    l->count = 0;
    l->cap = UsableCap(p);
    return l;
  }

  void FreeList(List* l) {
    list_bytes -= malloc_usable_size(l) + kMallocOverhead;
    std::free(l);
  }

  List* GrowList(List* l) {
    const std::uint32_t old_cap = l->cap;
    if (old_cap == 0xffffffffU) throw std::length_error("GroupIndex posting list full");
    const std::uint64_t want = std::uint64_t{old_cap} + old_cap / 2 + 4;
    const auto new_cap = static_cast<std::uint32_t>(std::min<std::uint64_t>(want, 0xffffffffU));
    const std::size_t old_usable = malloc_usable_size(l);
    void* p = std::realloc(l, ListBytes(new_cap));
    if (p == nullptr) throw std::bad_alloc();
    list_bytes += malloc_usable_size(p);
    list_bytes -= old_usable;
    l = static_cast<List*>(p);
    const std::uint32_t cap = UsableCap(p);
    std::uint64_t* fps = l->fps();
    std::memmove(fps + cap, fps + old_cap, std::size_t{l->count} * sizeof(std::uint32_t));
    l->cap = cap;
    return l;
  }

  // Only shrinks well below capacity, so an erase/insert pair at a boundary does not
  // reallocate every time.
  List* MaybeShrinkList(List* l) {
    if (l->cap <= 16 || std::uint64_t{l->count} * 4 > l->cap) return l;
    const std::uint32_t new_cap = l->count * 2;
    std::uint64_t* fps = l->fps();
    std::memmove(fps + new_cap, fps + l->cap, std::size_t{l->count} * sizeof(std::uint32_t));
    l->cap = new_cap;
    const std::size_t old_usable = malloc_usable_size(l);
    void* p = std::realloc(l, ListBytes(new_cap));
    if (p == nullptr) return l;  // the shrunk layout is valid inside the old block too
    list_bytes += malloc_usable_size(p);
    list_bytes -= old_usable;
    return static_cast<List*>(p);
  }

  std::size_t BlockValue(int b, std::uint64_t fp) const {
    return static_cast<std::size_t>((fp & masks[b]) >> starts[b]);
  }

  // Inline room for about 1.4x the average bucket occupancy: ~97% of buckets need no
  // overflow at 15 entries per value, for 12 B per entry plus 16 B per bucket. Buckets are
  // rebuilt (and re-sized) when the scope grows 1.5x or halves.
  static std::uint32_t InlineCapFor(std::size_t n, int width) {
    const double avg = static_cast<double>(n) / static_cast<double>(std::size_t{1} << width);
    return static_cast<std::uint32_t>(std::min(avg * 1.4 + 2, 1e8));
  }

  // Every lookup lands in k+1 random buckets of arrays that reach tens of MB: with 4 KiB
  // pages each is a TLB miss and a page walk on top of the cache miss. Arrays of 4 MiB and
  // more start on a 2 MiB boundary and ask for transparent huge pages (THP "madvise" mode,
  // Debian's default), which made 1M-group lookups 10-15 % faster. The alignment costs
  // address space, not memory: the unused front of the mapping is never touched.
  static void* AllocateHugeAligned(std::size_t bytes) {
    constexpr std::size_t kHugePage = std::size_t{2} << 20;
    const bool huge = bytes >= 2 * kHugePage;
    void* p = nullptr;
    if (posix_memalign(&p, huge ? kHugePage : 64, bytes) != 0) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    if (huge) madvise(p, bytes / 4096 * 4096, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
    return p;
  }

  void BucketsAllocate(Buckets& bk, int width, std::uint32_t inline_cap) {
    bk.inline_cap = inline_cap;
    const std::size_t entry = sizeof(std::uint64_t) + sizeof(std::uint32_t);
    bk.stride = (sizeof(BucketHead) + std::size_t{inline_cap} * entry + 15) / 16 * 16;
    const std::size_t size = (std::size_t{1} << width) * bk.stride;
    bk.bytes = (size + 63) / 64 * 64;
    void* p = AllocateHugeAligned(bk.bytes);
    std::memset(p, 0, bk.bytes);
    bk.base = static_cast<std::byte*>(p);
    table_bytes += bk.bytes + kMallocOverhead;
  }

  void BucketsRelease(Buckets& bk, int width) {
    if (bk.base == nullptr) return;
    const std::size_t n = std::size_t{1} << width;
    for (std::size_t v = 0; v < n; ++v) {
      if (bk.Head(v)->overflow != nullptr) FreeList(bk.Head(v)->overflow);
    }
    std::free(bk.base);
    table_bytes -= bk.bytes + kMallocOverhead;
    bk = Buckets{};
  }

  void BucketInsert(const Buckets& bk, int b, std::uint64_t fp, std::uint32_t group) {
    BucketHead* h = bk.Head(BlockValue(b, fp));
    if (h->count < bk.inline_cap) {
      bk.Fps(h)[h->count] = fp;
      bk.Groups(h)[h->count] = group;
      ++h->count;
      return;
    }
    List*& l = h->overflow;
    if (l == nullptr) l = NewList(4);
    if (l->count == l->cap) l = GrowList(l);
    l->fps()[l->count] = fp;
    l->groups()[l->count] = group;
    ++l->count;
  }

  // Keeps the inline part dense: a hole there is filled from the overflow list first.
  bool BucketErase(const Buckets& bk, int b, std::uint64_t fp, std::uint32_t group) {
    BucketHead* h = bk.Head(BlockValue(b, fp));
    std::uint64_t* fps = bk.Fps(h);
    std::uint32_t* groups = bk.Groups(h);
    List* l = h->overflow;
    std::uint32_t pos = 0;
    while (pos < h->count && (fps[pos] != fp || groups[pos] != group)) ++pos;
    if (pos < h->count) {
      if (l != nullptr) {
        fps[pos] = l->fps()[l->count - 1];
        groups[pos] = l->groups()[l->count - 1];
        PopOverflow(h);
      } else {
        --h->count;
        fps[pos] = fps[h->count];
        groups[pos] = groups[h->count];
      }
      return true;
    }
    if (l == nullptr) return false;
    std::uint64_t* lfps = l->fps();
    std::uint32_t* lgroups = l->groups();
    pos = 0;
    while (pos < l->count && (lfps[pos] != fp || lgroups[pos] != group)) ++pos;
    if (pos == l->count) return false;
    lfps[pos] = lfps[l->count - 1];
    lgroups[pos] = lgroups[l->count - 1];
    PopOverflow(h);
    return true;
  }

  void PopOverflow(BucketHead* h) {
    List* l = h->overflow;
    if (--l->count == 0) {
      FreeList(l);
      h->overflow = nullptr;
    } else {
      h->overflow = MaybeShrinkList(l);
    }
  }

  // ---- representation changes ----

  // The per-scope array of k+1 tables (the larger of the two kinds, for simplicity).
  std::size_t TableArrayBytes() const {
    return static_cast<std::size_t>(blocks) * sizeof(RhTable) + kMallocOverhead;
  }

  void FreeRepresentation(Scope& s) {
    flat_bytes -= FlatBytes(s);
    std::vector<std::uint64_t>().swap(s.flat_fps);
    std::vector<std::uint32_t>().swap(s.flat_groups);
    if (s.rh) {
      for (int b = 0; b < blocks; ++b) RhRelease(s.rh[b]);
      s.rh.reset();
      table_bytes -= TableArrayBytes();
    }
    if (s.buckets) {
      for (int b = 0; b < blocks; ++b) BucketsRelease(s.buckets[b], widths[b]);
      s.buckets.reset();
      table_bytes -= TableArrayBytes();
    }
  }

  // Every entry appears once per block, so block 0 alone enumerates the scope.
  std::vector<Pair> Collect(const Scope& s) const {
    std::vector<Pair> out;
    out.reserve(s.count);
    switch (s.kind) {
      case Kind::kFlat:
        for (std::size_t i = 0; i < s.flat_fps.size(); ++i) {
          out.push_back({s.flat_fps[i], s.flat_groups[i]});
        }
        break;
      case Kind::kRobinHood: {
        const RhTable& t = s.rh[0];
        for (std::uint32_t i = 0; i < t.phys; ++i) {
          if (t.Occupied(i)) out.push_back({SlotFp(t.slots[i]), SlotGroup(t.slots[i])});
        }
        break;
      }
      case Kind::kBuckets: {
        const Buckets& bk = s.buckets[0];
        const std::size_t n = std::size_t{1} << widths[0];
        for (std::size_t v = 0; v < n; ++v) {
          BucketHead* h = bk.Head(v);
          for (std::uint32_t i = 0; i < h->count; ++i) {
            out.push_back({bk.Fps(h)[i], bk.Groups(h)[i]});
          }
          if (const List* l = h->overflow) {
            for (std::uint32_t i = 0; i < l->count; ++i) {
              out.push_back({l->fps()[i], l->groups()[i]});
            }
          }
        }
        break;
      }
    }
    return out;
  }

  void Rebuild(Scope& s, Kind kind) {
    const std::vector<Pair> entries = Collect(s);
    FreeRepresentation(s);
    s.kind = kind;
    switch (kind) {
      case Kind::kFlat: {
        s.flat_fps.reserve(entries.size());
        s.flat_groups.reserve(entries.size());
        for (const Pair& p : entries) {
          s.flat_fps.push_back(p.fp);
          s.flat_groups.push_back(p.group);
        }
        flat_bytes += FlatBytes(s);
        break;
      }
      case Kind::kRobinHood: {
        s.rh.reset(new RhTable[static_cast<std::size_t>(blocks)]);
        table_bytes += TableArrayBytes();
        for (int b = 0; b < blocks; ++b) {
          RhTable& t = s.rh[b];
          t.seed = Mix(s.key ^ (kBlockSalt * static_cast<std::uint64_t>(b + 1)));
          RhBuild(t, masks[b], RhCapFor(entries.size()), entries);
        }
        break;
      }
      case Kind::kBuckets: {
        s.buckets.reset(new Buckets[static_cast<std::size_t>(blocks)]);
        table_bytes += TableArrayBytes();
        s.buckets_built_for = entries.size();
        for (int b = 0; b < blocks; ++b) {
          BucketsAllocate(s.buckets[b], widths[b], InlineCapFor(entries.size(), widths[b]));
          for (const Pair& p : entries) BucketInsert(s.buckets[b], b, p.fp, p.group);
        }
        break;
      }
    }
  }

  // Hysteresis on every threshold, so a scope hovering at a boundary does not rebuild.
  void Rebalance(Scope& s) {
    const std::size_t n = s.count;
    switch (s.kind) {
      case Kind::kFlat:
        if (n > scan_limit) Rebuild(s, n >= buckets_enter ? Kind::kBuckets : Kind::kRobinHood);
        break;
      case Kind::kRobinHood:
        if (n <= scan_limit / 2) {
          Rebuild(s, Kind::kFlat);
        } else if (n >= buckets_enter) {
          Rebuild(s, Kind::kBuckets);
        }
        break;
      case Kind::kBuckets:
        if (n <= scan_limit / 2) {
          Rebuild(s, Kind::kFlat);
        } else if (n < buckets_exit) {
          Rebuild(s, Kind::kRobinHood);
        } else if (n > s.buckets_built_for * 3 / 2 || n < s.buckets_built_for / 2) {
          Rebuild(s, Kind::kBuckets);  // re-size inline capacity to the new occupancy
        }
        break;
    }
  }

  // ---- operations ----

  void Insert(std::uint64_t scope_key, std::uint64_t fp, std::uint32_t group) {
    Scope* s = FindScope(scope_key);
    if (s == nullptr) s = AddScope(scope_key);
    switch (s->kind) {
      case Kind::kFlat:
        FlatAppend(*s, fp, group);
        break;
      case Kind::kRobinHood:
        for (int b = 0; b < blocks; ++b) RhInsert(s->rh[b], b, fp, group);
        break;
      case Kind::kBuckets:
        for (int b = 0; b < blocks; ++b) BucketInsert(s->buckets[b], b, fp, group);
        break;
    }
    ++s->count;
    Rebalance(*s);
  }

  bool Erase(std::uint64_t scope_key, std::uint64_t fp, std::uint32_t group) {
    Scope* s = FindScope(scope_key);
    if (s == nullptr) return false;
    // An entry is in block 0 iff it is in every block, so only the first erase can miss.
    switch (s->kind) {
      case Kind::kFlat:
        if (!FlatErase(*s, fp, group)) return false;
        break;
      case Kind::kRobinHood:
        if (!RhErase(s->rh[0], 0, fp, group)) return false;
        for (int b = 1; b < blocks; ++b) RhErase(s->rh[b], b, fp, group);
        break;
      case Kind::kBuckets:
        if (!BucketErase(s->buckets[0], 0, fp, group)) return false;
        for (int b = 1; b < blocks; ++b) BucketErase(s->buckets[b], b, fp, group);
        break;
    }
    --s->count;
    if (s->count == 0) {
      RemoveScope(s);
    } else {
      Rebalance(*s);
    }
    return true;
  }

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
  // may end the visit there.
  template <bool kUnique, bool kHw, class Fn, class Stop>
  void Visit(const Scope& s, std::uint64_t q, Fn&& fn, Stop&& stop) const {
    switch (s.kind) {
      case Kind::kFlat: {
        const std::uint64_t* fps = s.flat_fps.data();
        const std::size_t n = s.flat_fps.size();
        for (std::size_t i = 0; i < n; ++i) {
          const int d = Popcount<kHw>(fps[i] ^ q);
          if (d <= k) fn(s.flat_groups[i], d);
        }
        return;
      }
      case Kind::kRobinHood:
        VisitRobinHood<kUnique, kHw>(s, q, fn, stop);
        return;
      case Kind::kBuckets:
        VisitBuckets<kUnique, kHw>(s, q, fn, stop);
        return;
    }
  }

  template <bool kUnique, bool kHw, class Fn, class Stop>
  void VisitRobinHood(const Scope& s, std::uint64_t q, Fn& fn, Stop& stop) const {
    // Issue every block's first cache lines before reading any, so the k+1 memory
    // round trips overlap instead of queueing.
    std::uint32_t home[kMaxDistance + 1];
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
      for (std::uint32_t i = home[b]; t.Occupied(i); ++i) {
        const std::uint64_t f = SlotFp(t.slots[i]);
        if ((f & m) == key) {
          hits.Add(i, Popcount<kHw>(f ^ q), k);
          if (hits.full()) ReportHits<kUnique>(hits, t, q, b, fn);
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
      if (stop(b)) return;
    }
  }

  template <bool kUnique, class Fn>
  void ReportHits(Hits& hits, const RhTable& t, std::uint64_t q, int b, Fn& fn) const {
    for (std::uint32_t h = 0; h < hits.count; ++h) {
      const Slot& slot = t.slots[hits.index[h]];
      if (!kUnique || FirstZeroBlock(SlotFp(slot) ^ q) == b) fn(SlotGroup(slot), hits.distance[h]);
    }
    hits.count = 0;
  }

  template <bool kUnique, bool kHw, class Fn, class Stop>
  void VisitBuckets(const Scope& s, std::uint64_t q, Fn& fn, Stop& stop) const {
    BucketHead* heads[kMaxDistance + 1];
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
      ScanEntries<kUnique, kHw>(bk.Fps(h), bk.Groups(h), h->count, q, b, fn);
      if (const List* l = h->overflow) {
        ScanEntries<kUnique, kHw>(l->fps(), l->groups(), l->count, q, b, fn);
      }
      if (stop(b)) return;
    }
  }

  // Within-k entries are first marked in a 64-bit mask (no store per entry: the scan of
  // ~15-30 entries per bucket was most of a lookup's instructions), then visited by bit.
  template <bool kUnique, bool kHw, class Fn>
  void ScanEntries(const std::uint64_t* fps, const std::uint32_t* groups, std::uint32_t n,
                   std::uint64_t q, int b, Fn& fn) const {
    for (std::uint32_t start = 0; start < n; start += 64) {
      const std::uint32_t len = std::min<std::uint32_t>(n - start, 64);
      const std::uint64_t hits = WithinDistanceMask(fps + start, len, q, k);
      for (std::uint64_t m = hits; m != 0; m &= m - 1) {
        const std::uint32_t i = start + static_cast<std::uint32_t>(std::countr_zero(m));
        const std::uint64_t x = fps[i] ^ q;
        if (!kUnique || FirstZeroBlock(x) == b) fn(groups[i], Popcount<kHw>(x));
      }
    }
  }

  std::size_t MemoryUsage() const {
    return sizeof(Impl) + scopes.MemoryUsage() + scopes.size() * (sizeof(Scope) + kMallocOverhead) +
           flat_bytes + table_bytes + list_bytes;
  }
};

std::size_t GroupIndex::DefaultScanLimit(int max_distance) {
  const int k = std::clamp(max_distance, 0, kMaxDistance);
  const int blocks = k + 1;
  // Expected fraction of a random scope that the tables make us visit: sum of 2^-width.
  const int base = 64 / blocks;
  const int extra = 64 % blocks;
  double visited = 0;
  for (int b = 0; b < blocks; ++b) {
    const int width = base + (b < extra ? 1 : 0);
    visited += width >= 63 ? 0.0 : 1.0 / static_cast<double>(1ULL << width);
  }
  // Past a quarter the tables save at most 4x over a scan while costing ~10x the memory.
  if (visited > 0.25) return kNeverIndex;
  // Scanning costs ~1 ns per entry; a table probe ~100 ns (a cache miss in a large index,
  // measured as the flat/indexed crossover in group_index_bench's BM_ScopeCrossover).
  constexpr double kProbeCostInEntries = 128;
  return static_cast<std::size_t>(kProbeCostInEntries * blocks / (1.0 - visited));
}

GroupIndex::GroupIndex(int max_distance)
    : GroupIndex(max_distance, DefaultScanLimit(max_distance)) {}

GroupIndex::GroupIndex(int max_distance, std::size_t scan_limit)
    : max_distance_(std::clamp(max_distance, 0, kMaxDistance)),
      scan_limit_(scan_limit),
      impl_(new Impl(max_distance_, scan_limit_)) {}

GroupIndex::GroupIndex(GroupIndex&& other) noexcept
    : max_distance_(other.max_distance_),
      scan_limit_(other.scan_limit_),
      size_(std::exchange(other.size_, 0)),
      impl_(std::exchange(other.impl_, nullptr)) {}

GroupIndex& GroupIndex::operator=(GroupIndex&& other) noexcept {
  if (this != &other) {
    delete impl_;
    max_distance_ = other.max_distance_;
    scan_limit_ = other.scan_limit_;
    size_ = std::exchange(other.size_, 0);
    impl_ = std::exchange(other.impl_, nullptr);
  }
  return *this;
}

GroupIndex::~GroupIndex() { delete impl_; }

void GroupIndex::Insert(std::uint64_t scope, std::uint64_t fingerprint, std::uint32_t group) {
  if (impl_ == nullptr) impl_ = new Impl(max_distance_, scan_limit_);
  impl_->Insert(scope, fingerprint, group);
  ++size_;
}

bool GroupIndex::Erase(std::uint64_t scope, std::uint64_t fingerprint, std::uint32_t group) {
  if (impl_ == nullptr || !impl_->Erase(scope, fingerprint, group)) return false;
  --size_;
  return true;
}

void GroupIndex::FindWithin(std::uint64_t scope, std::uint64_t fingerprint,
                            std::vector<Candidate>& out) const {
  out.clear();
  if (impl_ == nullptr) return;
  const Scope* s = impl_->FindScope(scope);
  if (s == nullptr) return;
  const auto add = [&out](std::uint32_t group, int d) { out.push_back(Candidate{group, d}); };
  const auto never = [](int) { return false; };  // every block is needed
  if (CpuHasPopcnt()) {
    impl_->Visit<true, true>(*s, fingerprint, add, never);
  } else {
    impl_->Visit<true, false>(*s, fingerprint, add, never);
  }
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.group < b.group;
  });
}

bool GroupIndex::FindNearest(std::uint64_t scope, std::uint64_t fingerprint, Candidate& out) const {
  if (impl_ == nullptr) return false;
  const Scope* s = impl_->FindScope(scope);
  if (s == nullptr) return false;
  // Seeing an entry again from another block cannot change a minimum, so no dedup here.
  Candidate best{0, kMaxDistance + 1};
  const auto keep = [&best](std::uint32_t group, int d) {
    if (d < best.distance || (d == best.distance && group < best.group)) best = {group, d};
  };
  // After blocks 0..b every unseen entry lies at b+1 or more: a best of b or less is final
  // (strictly nearer, so no unseen entry can tie it). Near-duplicate queries often stop
  // after the first block or two.
  const auto settled = [&best](int b) { return best.distance <= b; };
  if (CpuHasPopcnt()) {
    impl_->Visit<false, true>(*s, fingerprint, keep, settled);
  } else {
    impl_->Visit<false, false>(*s, fingerprint, keep, settled);
  }
  if (best.distance > max_distance_) return false;
  out = best;
  return true;
}

void GroupIndex::Clear() {
  if (impl_ != nullptr) impl_->Clear();
  size_ = 0;
}

std::size_t GroupIndex::MemoryUsage() const {
  return sizeof(GroupIndex) + (impl_ == nullptr ? 0 : impl_->MemoryUsage());
}

}  // namespace logfold
