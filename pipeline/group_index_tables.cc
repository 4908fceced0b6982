// GroupIndex's two indexed layouts of a scope: Robin Hood tables holding the entries inline,
// and bucket arrays addressed by block value with overflow posting lists.
#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <utility>

#include "pipeline/group_index_impl.h"

namespace logfold {
namespace group_index_detail {

void IndexImpl::RhAllocate(RhTable& t, std::uint32_t cap, std::uint32_t phys) {
  t.slots.reset(new Slot[phys]());
  t.occupied.reset(new std::uint64_t[RhTable::OccupiedWords(phys)]());
  t.cap = cap;
  t.phys = phys;
  t.used = 0;
  t.grow_at = static_cast<std::uint32_t>(kMaxLoad * static_cast<double>(cap));
  table_bytes += RhTable::Bytes(phys);
}

void IndexImpl::RhRelease(RhTable& t) {
  if (!t.slots) return;
  table_bytes -= RhTable::Bytes(t.phys);
  t.slots.reset();
  t.occupied.reset();
  t.cap = t.phys = t.used = 0;
}

std::uint32_t IndexImpl::RhCapFor(std::size_t n) {
  const double want = static_cast<double>(n) / kBuildLoad;
  if (want >= 3.5e9) throw std::length_error("GroupIndex scope too large");
  return std::max(kMinTableCap, static_cast<std::uint32_t>(want) + 1);
}

namespace {

// Sorts (home, entry) keys, each home << 32 | entry (one 64-bit compare per step). A table
// that grows passes its entries in its own order, sorted by the old homes; the seed is kept
// and homes are a monotone range reduction of one hash, so only entries that shared an old
// home can be out of order: an insertion sort puts them right in linear time, where a general
// sort of a growing table's 100 k entries was 5 % of a garbage flood's first 100 k lines.
// Other orders (a scope changing layout) exceed the insertion sort's budget of moves and are
// sorted in full. The keys are distinct, so the result is the same either way.
void SortHomes(std::uint64_t* order, std::size_t n) {
  std::size_t budget = 2 * n + 64;
  for (std::size_t i = 1; i < n; ++i) {
    const std::uint64_t x = order[i];
    if (!(x < order[i - 1])) continue;
    std::size_t j = i;
    for (; j > 0 && x < order[j - 1]; --j) order[j] = order[j - 1];
    order[j] = x;
    if (i - j > budget) {
      std::sort(order, order + n);
      return;
    }
    budget -= i - j;
  }
}

// The home of block key `key` in a table of `cap` homes and seed `seed` (RhTable::Home).
inline std::uint32_t HomeIn(std::uint64_t key, std::uint64_t seed, std::uint32_t cap) {
  const auto h = static_cast<std::uint32_t>(Mix(key ^ seed) >> 32);
  return static_cast<std::uint32_t>((std::uint64_t{h} * cap) >> 32);
}

}  // namespace

// Lays the n entries out from scratch in t (released, seed kept): sorted by home, each at
// max(home, previous + 1). order[i] is entry i's home << 32 | i' with i' increasing in i (so
// that ties keep the entries' order); slot(i') is the entry.
template <class SlotOf>
void IndexImpl::RhPlace(RhTable& t, std::uint32_t cap, std::uint64_t* order, std::size_t n,
                        SlotOf&& slot) {
  SortHomes(order, n);
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < n; ++i) end = std::max<std::uint64_t>(order[i] >> 32, end) + 1;
  const std::uint64_t phys = std::max<std::uint64_t>(cap, end) + 1 + cap / 64;
  if (phys >= 0xffffffffULL) throw std::length_error("GroupIndex scope too large");
  RhAllocate(t, cap, static_cast<std::uint32_t>(phys));
  Slot* slots = t.slots.get();
  std::uint64_t* occupied = t.occupied.get();
  std::uint32_t next = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t pos = std::max(static_cast<std::uint32_t>(order[i] >> 32), next);
    slots[pos] = slot(static_cast<std::uint32_t>(order[i]));
    occupied[pos >> 6] |= 1ULL << (pos & 63);
    next = pos + 1;
  }
  t.used = static_cast<std::uint32_t>(n);
}

void IndexImpl::RhBuild(RhTable& t, std::uint64_t m, std::uint32_t cap,
                        const std::vector<Pair>& entries) {
  const std::uint64_t seed = t.seed;
  RhRelease(t);
  t.seed = seed;
  const std::size_t n = entries.size();
  std::unique_ptr<std::uint64_t[]> order(new std::uint64_t[n]);
  for (std::size_t i = 0; i < n; ++i) {
    order[i] = std::uint64_t{HomeIn(entries[i].fp & m, seed, cap)} << 32 | i;
  }
  RhPlace(t, cap, order.get(), n,
          [&entries](std::uint32_t i) { return MakeSlot(entries[i].fp, entries[i].group); });
}

// RhBuild of the table's own entries, read in place: the old arrays are kept until the new
// ones are filled, and an entry's key is its old slot (increasing in table order).
void IndexImpl::RhResize(RhTable& t, std::uint64_t m, std::uint32_t new_cap) {
  const std::uint64_t seed = t.seed;
  const std::size_t n = t.used;
  std::unique_ptr<std::uint64_t[]> order(new std::uint64_t[n]);
  std::size_t count = 0;
  const std::size_t words = RhTable::OccupiedWords(t.phys);
  for (std::size_t w = 0; w < words; ++w) {
    for (std::uint64_t bits = t.occupied[w]; bits != 0; bits &= bits - 1) {
      const auto i = static_cast<std::uint32_t>(w * 64 + std::countr_zero(bits));
      order[count++] = std::uint64_t{HomeIn(SlotFp(t.slots[i]) & m, seed, new_cap)} << 32 | i;
    }
  }
  const std::unique_ptr<Slot[]> old_slots = std::move(t.slots);
  const std::unique_ptr<std::uint64_t[]> old_occupied = std::move(t.occupied);
  if (old_slots) table_bytes -= RhTable::Bytes(t.phys);  // RhRelease's share
  const Slot* from = old_slots.get();
  RhPlace(t, new_cap, order.get(), count, [from](std::uint32_t i) { return from[i]; });
}

// Makes room for one more slot at the end of the tail.
void IndexImpl::RhGrowTail(RhTable& t) {
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
void IndexImpl::RhInsert(RhTable& t, int b, std::uint64_t fp, std::uint32_t group) {
  const std::uint64_t m = masks[b];
  if (t.used + 1 > t.grow_at) {
    const auto grown = static_cast<std::uint64_t>(t.cap * kGrowth) + 1;
    if (grown >= 0xf0000000ULL) throw std::length_error("GroupIndex scope too large");
    RhResize(t, m, static_cast<std::uint32_t>(grown));
  }
  const std::uint64_t key = fp & m;
  const std::uint32_t home = t.Home(key);
  std::uint32_t i = home;
  std::uint64_t cached_key = key;  // entries are grouped by key: one Home() per run
  std::uint32_t cached_home = home;
  // The cluster's end, where the shifted entries go: the scan below stops there at the latest.
  const std::uint32_t e = t.NextEmpty(home);
  for (; i < e; ++i) {
    const std::uint64_t f = SlotFp(t.slots[i]) & m;
    if (f == key) break;
    if (f != cached_key) {
      cached_key = f;
      cached_home = t.Home(f);
    }
    if (cached_home >= home) break;
  }
  if (e + 1 >= t.phys) RhGrowTail(t);
  if (e > i) std::memmove(&t.slots[i + 1], &t.slots[i], std::size_t{e - i} * sizeof(Slot));
  t.SetOccupied(e);
  t.slots[i] = MakeSlot(fp, group);
  ++t.used;
}

bool IndexImpl::RhErase(RhTable& t, int b, std::uint64_t fp, std::uint32_t group) {
  const std::uint64_t m = masks[b];
  const std::uint64_t key = fp & m;
  const std::uint32_t home = t.Home(key);
  // An entry lies at or after its home with every slot between occupied (runs never wrap, and
  // a backward shift stops at an entry sitting at its home): finding it needs no home of the
  // entries before it, which a scan that stops at a later run computes for each (an absent
  // entry, a caller's error, is answered at the cluster's end instead).
  std::uint32_t i = home;
  for (;; ++i) {
    if (!t.Occupied(i)) return false;
    if (SlotFp(t.slots[i]) == fp && SlotGroup(t.slots[i]) == group) break;
  }
  // Backward shift: the entries after i up to the first one sitting at its home (or an
  // empty slot) move one slot closer to home.
  std::uint64_t cached_key = key;
  std::uint32_t cached_home = home;
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

std::size_t IndexImpl::ListBytes(std::uint32_t cap) {
  return sizeof(List) + std::size_t{cap} * (sizeof(std::uint64_t) + sizeof(std::uint32_t));
}

// malloc often hands back more than asked; using it saves a realloc or two per list.
std::uint32_t IndexImpl::UsableCap(void* p) {
  const std::size_t usable = malloc_usable_size(p);
  return static_cast<std::uint32_t>(std::min<std::size_t>(
      (usable - sizeof(List)) / (sizeof(std::uint64_t) + sizeof(std::uint32_t)), 0xffffffffU));
}

List* IndexImpl::NewList(std::uint32_t cap) {
  void* p = std::malloc(ListBytes(cap));
  if (p == nullptr) throw std::bad_alloc();
  list_bytes += malloc_usable_size(p) + kMallocOverhead;
  List* l = static_cast<List*>(p);
  l->count = 0;
  l->cap = UsableCap(p);
  return l;
}

void IndexImpl::FreeList(List* l) {
  list_bytes -= malloc_usable_size(l) + kMallocOverhead;
  std::free(l);
}

List* IndexImpl::GrowList(List* l) {
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
List* IndexImpl::MaybeShrinkList(List* l) {
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

// Inline room for about 1.4x the average bucket occupancy: ~97% of buckets need no
// overflow at 15 entries per value, for 12 B per entry plus 16 B per bucket. Buckets are
// rebuilt (and re-sized) when the scope grows 1.5x or halves.
std::uint32_t IndexImpl::InlineCapFor(std::size_t n, int width) {
  const double avg = static_cast<double>(n) / static_cast<double>(std::size_t{1} << width);
  return static_cast<std::uint32_t>(std::min(avg * 1.4 + 2, 1e8));
}

// Every lookup lands in k+1 random buckets of arrays that reach tens of MB: with 4 KiB
// pages each is a TLB miss and a page walk on top of the cache miss. Arrays of 4 MiB and
// more start on a 2 MiB boundary and ask for transparent huge pages (THP "madvise" mode,
// Debian's default), which made 1M-group lookups 10-15 % faster. The alignment costs
// address space, not memory: the unused front of the mapping is never touched.
void* IndexImpl::AllocateHugeAligned(std::size_t bytes) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const bool huge = bytes >= 2 * kHugePage;
  void* p = nullptr;
  if (posix_memalign(&p, huge ? kHugePage : 64, bytes) != 0) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (huge) madvise(p, bytes / 4096 * 4096, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
  return p;
}

void IndexImpl::BucketsAllocate(Buckets& bk, int width, std::uint32_t inline_cap) {
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

void IndexImpl::BucketsRelease(Buckets& bk, int width) {
  if (bk.base == nullptr) return;
  const std::size_t n = std::size_t{1} << width;
  for (std::size_t v = 0; v < n; ++v) {
    if (bk.Head(v)->overflow != nullptr) FreeList(bk.Head(v)->overflow);
  }
  std::free(bk.base);
  table_bytes -= bk.bytes + kMallocOverhead;
  bk = Buckets{};
}

void IndexImpl::BucketInsert(const Buckets& bk, int b, std::uint64_t fp, std::uint32_t group) {
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
bool IndexImpl::BucketErase(const Buckets& bk, int b, std::uint64_t fp, std::uint32_t group) {
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

void IndexImpl::PopOverflow(BucketHead* h) {
  List* l = h->overflow;
  if (--l->count == 0) {
    FreeList(l);
    h->overflow = nullptr;
  } else {
    h->overflow = MaybeShrinkList(l);
  }
}

}  // namespace group_index_detail
}  // namespace logfold
