// GroupIndex: per-scope pigeonhole block tables. Entries live inline in Robin Hood tables
// or, when block values repeat a lot, in buckets addressed directly by block value (both one
// memory round trip per probe); small scopes are flat arrays that are scanned. This file: the
// scopes, the choice and change of layout, and the operations and lookups.
#include "pipeline/group_index.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "pipeline/group_index_impl.h"

namespace logfold {
namespace group_index_detail {

Scope* IndexImpl::AddScope(std::uint64_t key) {
  auto scope = std::make_unique<Scope>();
  scope->key = key;
  scopes.Set(key, scope.get());
  return scope.release();
}

void IndexImpl::RemoveScope(Scope* scope) {
  scopes.EraseIf(scope->key, scope);
  FreeScope(scope);
}

void IndexImpl::FreeScope(Scope* scope) {
  FreeRepresentation(*scope);
  delete scope;
}

void IndexImpl::Clear() {
  scopes.ForEach([this](std::uint64_t, Scope* scope) { FreeScope(scope); });
  scopes.Clear();
}

void IndexImpl::FlatAppend(Scope& s, std::uint64_t fp, std::uint32_t group) {
  const std::size_t before = FlatBytes(s);
  s.flat_fps.push_back(fp);
  s.flat_groups.push_back(group);
  flat_bytes += FlatBytes(s) - before;
}

bool IndexImpl::FlatErase(Scope& s, std::uint64_t fp, std::uint32_t group) {
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

void IndexImpl::FreeRepresentation(Scope& s) {
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

std::vector<Pair> IndexImpl::Collect(const Scope& s) const {
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

void IndexImpl::Rebuild(Scope& s, Kind kind) {
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

void IndexImpl::Rebalance(Scope& s) {
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

void IndexImpl::Insert(std::uint64_t scope_key, std::uint64_t fp, std::uint32_t group) {
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

bool IndexImpl::Erase(std::uint64_t scope_key, std::uint64_t fp, std::uint32_t group) {
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
      // k+1 cold buckets and their overflow lists: load them all at once rather than one
      // round trip after another (an evicting merger does this for every new line).
      PrefetchEntries(*s, fp, false);
      PrefetchEntries(*s, fp, true);
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

}  // namespace group_index_detail

namespace {

bool CpuHasPopcnt() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("popcnt");
  return has;
#else
  return false;
#endif
}

}  // namespace

struct GroupIndex::Impl : group_index_detail::IndexImpl {
  using IndexImpl::IndexImpl;
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

void GroupIndex::Prefetch(std::uint64_t scope, std::uint64_t fingerprint) const {
  if (impl_ == nullptr) return;
  if (const group_index_detail::Scope* s = impl_->FindScope(scope)) {
    impl_->PrefetchEntries(*s, fingerprint, false);
  }
}

std::size_t GroupIndex::FindWithin(std::uint64_t scope, std::uint64_t fingerprint,
                                   std::vector<Candidate>& out, std::size_t limit) const {
  out.clear();
  if (impl_ == nullptr || limit == 0) return 0;
  const group_index_detail::Scope* s = impl_->FindScope(scope);
  if (s == nullptr) return 0;
  // Found so far at each distance: after blocks 0..b every group within b has been seen
  // (Visit's stop contract), so once `limit` of them lie within b the first `limit` of the
  // order are all here and no later block can change them.
  std::size_t at[kMaxDistance + 1];  // [0, max_distance_] used; zeroed so far only
  std::fill_n(at, max_distance_ + 1, std::size_t{0});
  const auto add = [&out, &at](std::uint32_t group, int d) {
    out.push_back(Candidate{group, d});
    ++at[d];
  };
  const auto settled = [&at, limit](int b) {
    std::size_t n = 0;
    for (int d = 0; d <= b; ++d) n += at[d];
    return n >= limit;
  };
  // In a crowd, past kCrowdFactor x limit groups within distance, the nearest of those found.
  const std::size_t most = limit > SIZE_MAX / kCrowdFactor ? SIZE_MAX : limit * kCrowdFactor;
  const auto full = [&out, most] { return out.size() >= most; };
  const std::size_t read = CpuHasPopcnt()
                               ? impl_->Visit<true, true>(*s, fingerprint, add, settled, full)
                               : impl_->Visit<true, false>(*s, fingerprint, add, settled, full);
  const auto nearer = [](const Candidate& a, const Candidate& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.group < b.group;
  };
  if (out.size() > limit) {
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(limit), out.end(),
                      nearer);
    out.resize(limit);
  } else {
    std::sort(out.begin(), out.end(), nearer);
  }
  return read;
}

bool GroupIndex::FindNearest(std::uint64_t scope, std::uint64_t fingerprint, Candidate& out) const {
  if (impl_ == nullptr) return false;
  const group_index_detail::Scope* s = impl_->FindScope(scope);
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
