// GroupTracker implementation: one walk of the merger's open groups picks each order's top
// groups with bounded heaps, and takes the marks that the next walks' rates are measured from.
#include "daemon/workers/group_tracker.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_set>

namespace logfold {
namespace {

struct Candidate {
  std::uint64_t key;  // count, lines since the last walk, or last seen time
  OpenGroupInfo info;
  std::uint64_t since_previous, since_recent;
  bool operator>(const Candidate& o) const { return key > o.key; }
};
using TopHeap = std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>>;

void Offer(TopHeap& heap, std::size_t top, const Candidate& c) {
  if (heap.size() < top) {
    heap.push(c);
  } else if (top > 0 && c.key > heap.top().key) {
    heap.pop();
    heap.push(c);
  }
}

}  // namespace

std::shared_ptr<const GroupSnapshot> GroupTracker::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

std::uint64_t GroupTracker::Since(const Marks& marks, const OpenGroupInfo& info) {
  if (marks.taken_us == 0 || info.handle >= marks.slots.size()) return info.count_total;
  const Mark& m = marks.slots[info.handle];
  // Another group held the slot at the mark: all of this one's lines came after it.
  if (m.id != static_cast<std::uint32_t>(info.id)) return info.count_total;
  return static_cast<std::uint32_t>(static_cast<std::uint32_t>(info.count_total) - m.count);
}

void GroupTracker::MaybePublish(WindowMerger& merger, TimeUs now_us) {
  const TimeUs watched = watched_us_.load(std::memory_order_relaxed);
  if (watched == INT64_MIN || now_us - watched > options_.idle_after_us) {
    if (!previous_.slots.empty()) {  // nobody looks any more: give the marks' memory back
      previous_ = Marks{};
      for (Marks& m : recent_) m = Marks{};
      std::lock_guard lock(mu_);
      latest_.reset();
    }
    return;
  }
  if (last_walk_us_ != INT64_MIN && now_us - last_walk_us_ < options_.interval_us &&
      now_us >= last_walk_us_) {
    return;
  }
  Walk(merger, now_us);
  last_walk_us_ = now_us;
}

void GroupTracker::Walk(WindowMerger& merger, TimeUs now_us) {
  // The oldest recent mark is the start of the recent window.
  const Marks* oldest = nullptr;
  for (const Marks& m : recent_) {
    if (m.taken_us != 0 && (oldest == nullptr || m.taken_us < oldest->taken_us)) oldest = &m;
  }
  TopHeap by_count, by_rate, by_recent;
  Marks next;
  next.taken_us = now_us;
  merger.VisitOpenGroups([&](const OpenGroupInfo& info) {
    if (info.handle >= next.slots.size()) next.slots.resize(info.handle + 1);
    next.slots[info.handle] = {static_cast<std::uint32_t>(info.id),
                               static_cast<std::uint32_t>(info.count_total)};
    Candidate c{0, info, Since(previous_, info),
                oldest != nullptr ? Since(*oldest, info) : info.count_total};
    c.key = info.count_total;
    Offer(by_count, options_.top, c);
    c.key = c.since_previous;
    Offer(by_rate, options_.top, c);
    c.key = static_cast<std::uint64_t>(info.last_seen_us);
    Offer(by_recent, options_.top, c);
  });

  auto snapshot = std::make_shared<GroupSnapshot>();
  snapshot->taken_us = now_us;
  snapshot->open_groups = merger.open_groups();
  snapshot->recent_window_s =
      oldest != nullptr ? static_cast<double>(now_us - oldest->taken_us) / 1e6 : 0;
  const double interval_s = previous_.taken_us != 0 && now_us > previous_.taken_us
                                ? static_cast<double>(now_us - previous_.taken_us) / 1e6
                                : 0;
  std::unordered_set<std::uint64_t> listed;
  for (TopHeap* heap : {&by_count, &by_rate, &by_recent}) {
    for (; !heap->empty(); heap->pop()) {
      const Candidate& c = heap->top();
      if (!listed.insert(c.info.id).second) continue;
      GroupRow row;
      row.id = c.info.id;
      // The views in `info` stay valid: nothing changed the merger since the visit.
      row.host.assign(c.info.host);
      row.app.assign(c.info.app);
      row.template_text = merger.OpenGroupTemplate(c.info.handle);
      row.count = c.info.count_total;
      row.count_recent = oldest != nullptr ? c.since_recent : c.info.count_total;
      row.rate = interval_s > 0 ? static_cast<double>(c.since_previous) / interval_s : 0;
      row.first_seen_us = c.info.first_seen_us;
      row.last_seen_us = c.info.last_seen_us;
      snapshot->rows.push_back(std::move(row));
    }
  }

  if (recent_[recent_next_ == 0 ? kRecentMarks - 1 : recent_next_ - 1].taken_us + kRecentStep <=
      now_us) {
    recent_[recent_next_] = next;
    recent_next_ = (recent_next_ + 1) % kRecentMarks;
  }
  previous_ = std::move(next);
  std::lock_guard lock(mu_);
  latest_ = std::move(snapshot);
}

}  // namespace logfold
