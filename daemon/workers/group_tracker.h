// GroupTracker: what one worker publishes of its open groups for the live view (GET
// /api/groups, `logfold top`): its top groups by count, by current rate and by recency, taken
// on the worker's own thread at most once an interval and only while somebody is looking.
#ifndef LOGFOLD_DAEMON_WORKERS_GROUP_TRACKER_H_
#define LOGFOLD_DAEMON_WORKERS_GROUP_TRACKER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline/log_record.h"
#include "pipeline/window_merger.h"

namespace logfold {

// One open group in a snapshot.
struct GroupRow {
  std::uint64_t id = 0;
  std::string template_text, host, app;
  std::uint64_t count = 0;         // lines since the group opened
  std::uint64_t count_recent = 0;  // lines in the snapshot's recent window
  double rate = 0;                 // lines per second over the last interval
  TimeUs first_seen_us = 0, last_seen_us = 0;
};

// A worker's published view. Immutable once published; readers share it.
struct GroupSnapshot {
  TimeUs taken_us = 0;          // wall time of the walk
  std::size_t open_groups = 0;  // all of the worker's open groups, listed or not
  double recent_window_s = 0;   // what count_recent covers (about a minute, see GroupTracker)
  std::vector<GroupRow> rows;   // the worker's top groups by count, rate and recency, no repeats
};

class GroupTracker {
 public:
  struct Options {
    TimeUs interval_us = 1'000'000;  // at most one walk of the groups per interval
    std::size_t top = 500;           // groups listed per order (count, rate, recency)
    // A worker stops walking when nobody asked for this long, and frees its marks.
    TimeUs idle_after_us = 300'000'000;
    bool operator==(const Options&) const = default;
  };

  explicit GroupTracker(Options options) : options_(options) {}

  // Any thread: somebody is looking, keep the snapshots fresh.
  void Watch(TimeUs now_us) { watched_us_.store(now_us, std::memory_order_relaxed); }
  // Any thread: the latest snapshot (null before the first walk).
  std::shared_ptr<const GroupSnapshot> Latest() const;

  // The owning worker's thread, once per round: walks `merger` and publishes a snapshot when
  // the interval has passed and somebody watched recently.
  void MaybePublish(WindowMerger& merger, TimeUs now_us);

 private:
  // Per group slot: the low bits of the group's id (to tell a reused slot) and its count when
  // the mark was taken.
  struct Mark {
    std::uint32_t id = 0;
    std::uint32_t count = 0;
  };
  struct Marks {
    TimeUs taken_us = 0;
    std::vector<Mark> slots;
  };
  // Lines since `marks` were taken for the group in `info` (all of its lines when it opened
  // after the mark).
  static std::uint64_t Since(const Marks& marks, const OpenGroupInfo& info);
  void Walk(WindowMerger& merger, TimeUs now_us);

  const Options options_;
  std::atomic<TimeUs> watched_us_{INT64_MIN};
  TimeUs last_walk_us_ = INT64_MIN;
  Marks previous_;  // the last walk's, for rates
  // Taken every kRecentStep; the oldest is a minute to a minute and a step old.
  static constexpr int kRecentMarks = 5;
  static constexpr TimeUs kRecentStep = 15'000'000;
  Marks recent_[kRecentMarks];
  int recent_next_ = 0;

  mutable std::mutex mu_;
  std::shared_ptr<const GroupSnapshot> latest_;  // under mu_
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_WORKERS_GROUP_TRACKER_H_
