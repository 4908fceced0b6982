// Private to workers/: the structures the WorkerPool's files share (a worker, its line batches,
// the settings and sink lists replaced on reload, checkpoint markers). Not for other parts.
#ifndef LOGFOLD_DAEMON_WORKERS_WORKER_POOL_IMPL_H_
#define LOGFOLD_DAEMON_WORKERS_WORKER_POOL_IMPL_H_

#include <concurrentqueue/blockingconcurrentqueue.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/outputs/buffered_sink.h"
#include "daemon/outputs/syslog_event_encoder.h"
#include "daemon/state/checkpoint_file.h"
#include "daemon/workers/worker_pool.h"
#include "pipeline/event_json.h"

namespace logfold {

inline constexpr std::size_t kDequeueBulk = 64;
// Event kinds counted per worker (EventKind's values: first, summary, annotate, new_value).
inline constexpr int kEventKinds = static_cast<int>(EventKind::kNewValue) + 1;

// An idle worker sleeps after a short spin instead of moodycamel's 10,000 rounds: on a box
// with few cores the spinning worker holds a core the ingest thread, the other workers or the
// senders themselves need, and a batch arrives far less often than a futex wake costs.
struct WorkerQueueTraits : moodycamel::ConcurrentQueueDefaultTraits {
  static const int MAX_SEMA_SPINS = 100;
};

// Batches a worker keeps for reuse, and the largest buffer a kept batch may have.
inline constexpr std::size_t kFreeBatchesKept = 32;
inline constexpr std::size_t kBatchBytesKept = 64 * 1024;
// Lines of per-delivery scratch an ingest thread keeps between TryDeliver calls.
inline constexpr std::size_t kDeliveryScratchKept = 1024;

// Lines of one TryDeliver call bound for one worker, stored back to back, with what the
// ingest thread's parse found in each, so the worker only copies the fields out.
struct WorkerPool::Batch {
  std::uint32_t input = 0;
  TimeUs arrival_us = 0;
  // false (JSON-lines input, whose fields are not slices of the line): views[i].raw is the
  // line as received and the worker parses it.
  bool parsed = true;
  // Journal mode: this delivery's journal record, and that of the previous batch enqueued
  // for the same worker (0: none), so the worker can tell which records it has finished.
  std::uint64_t seq = 0, prev_seq = 0;
  std::string bytes;
  std::vector<LogRecordView> views;   // into `bytes`
  std::int64_t accounted = 0;         // bytes added to MemoryBudget::Part::kQueued
  std::shared_ptr<QueueShare> share;  // the sender's, released when the batch is folded
  // Non-null: not lines but a Checkpoint marker (views empty), shared by every worker's.
  std::shared_ptr<CheckpointState> checkpoint;
  bool close_all = false;
  // A CloseSalted marker: the sources whose groups it closes.
  std::shared_ptr<const std::vector<std::uint32_t>> close_salts;
  // Lines: LogRecord::scope_salt of every record (0: none).
  std::uint32_t scope_salt = 0;
};

// One Checkpoint call: the workers that have not yet confirmed it, and whom to tell.
struct WorkerPool::CheckpointState {
  std::atomic<std::size_t> remaining{0};
  std::function<void(bool)> done;
  void Finish(bool ok) {
    if (!ok) {
      // Once false, never true: the first failure answers and the rest are ignored.
      if (remaining.exchange(0) != 0) done(false);
    } else if (remaining.fetch_sub(1) == 1) {
      done(true);
    }
  }
};

// A checkpoint a worker has seen: first it waits until its merger clock passes `due` (every
// group open at the marker is then summarised), then until every sink confirmed what it had
// accepted at that point (`marks`, taken against the sink list `marks_for`).
struct WorkerPool::PendingCheckpoint {
  std::shared_ptr<CheckpointState> state;
  TimeUs due = INT64_MIN;
  bool marked = false;
  const void* marks_for = nullptr;
  std::vector<std::uint64_t> marks;
};

// Settings replaced as a whole on reload. A reader keeps a reference to the version it read
// and compares one atomic version number per call (every TryDeliver, every worker round) to
// see whether it must fetch the new one under the lock, so the hot path takes no lock and
// bounces no reference count. A version is freed when its last reader has moved on: at most
// one per worker and ingest thread, plus the current one, stay alive however often the
// configuration is reloaded.
struct WorkerPool::Shared {
  struct Settings {
    std::vector<SyslogParser> parsers;
    SyslogParser fallback_parser;  // for an input id without its own
    MergerOptions merger;
    bool event_time = false;
    std::uint64_t version = 0;

    const SyslogParser& parser(std::uint32_t input) const {
      return input < parsers.size() ? parsers[input] : fallback_parser;
    }
  };
  using SettingsPtr = std::shared_ptr<const Settings>;

  // Tells the ingest threads' cached settings of different pools apart (an address could be
  // reused by the next pool).
  static std::uint64_t NextPoolId() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }
  const std::uint64_t pool_id = NextPoolId();

  mutable std::mutex mu;
  SettingsPtr settings;                            // under mu
  std::atomic<std::uint64_t> settings_version{0};  // settings->version, readable without mu
  // Versions not yet freed; shared with their deleters, which may run after the pool is gone
  // (an ingest thread's cached copy).
  std::shared_ptr<std::atomic<std::size_t>> live_settings =
      std::make_shared<std::atomic<std::size_t>>(0);
  std::shared_ptr<const std::vector<Output>> sinks;

  // Refreshes `held` if a newer version was published since it was read.
  void UpdateSettings(SettingsPtr& held) const {
    if (held != nullptr && held->version == settings_version.load(std::memory_order_acquire)) {
      return;
    }
    std::lock_guard lock(mu);
    held = settings;
  }
  void Publish(std::unique_ptr<Settings> next) {
    std::lock_guard lock(mu);
    next->version = settings == nullptr ? 0 : settings->version + 1;
    live_settings->fetch_add(1, std::memory_order_relaxed);
    settings = SettingsPtr(next.release(), [live = live_settings](const Settings* s) {
      delete s;
      live->fetch_sub(1, std::memory_order_relaxed);
    });
    settings_version.store(settings->version, std::memory_order_release);
  }
  std::shared_ptr<const std::vector<Output>> GetSinks() const {
    std::lock_guard lock(mu);
    return sinks;
  }

  // Which sink list each worker is submitting to, so that a reload retires a sink only once
  // no worker can still be inside it — through this list or any older one that shares it.
  static constexpr std::uint64_t kNotHeld = UINT64_MAX;
  std::uint64_t sinks_version = 0;        // under mu
  std::vector<std::uint64_t> sinks_held;  // under mu, one per worker
  std::condition_variable sinks_released;

  std::shared_ptr<const std::vector<Output>> AcquireSinks(std::size_t worker) {
    std::lock_guard lock(mu);
    sinks_held[worker] = sinks_version;
    return sinks;
  }
  void ReleaseSinks(std::size_t worker) {
    {
      std::lock_guard lock(mu);
      sinks_held[worker] = kNotHeld;
    }
    sinks_released.notify_all();
  }
  // Blocks until no worker holds a sink list older than `version`.
  void WaitSinksReleased(std::uint64_t version) {
    std::unique_lock lock(mu);
    sinks_released.wait(lock, [&] {
      return std::all_of(sinks_held.begin(), sinks_held.end(),
                         [&](std::uint64_t v) { return v == kNotHeld || v >= version; });
    });
  }
};

struct WorkerPool::Worker {
  // The events of one output with a buffer of its own, encoded in its format: a selective
  // output (its `select`), or a syslog output whose app_name differs from the shared syslog
  // encoding's.
  struct Route {
    std::string output;  // the output's name: routes are matched to a new sink list by it
    SinkEncoding encoding = SinkEncoding::kNdjson;
    EventFilter filter;
    std::string buf;
    std::string app_name;  // syslog: encoded with this one when own_syslog
    bool own_syslog = false;
  };

  // Encodes events for every sink encoding in use, and for each selective output the events
  // it selects.
  class Encoder : public EventSink {
   public:
    explicit Encoder(Worker& w) : w_(w) {}
    void OnEvent(const Event& e) override {
      if (want_ndjson || !w_.routes.empty()) AppendEventJson(e, w_.ndjson);
      if (want_syslog || !w_.routes.empty()) {
        AppendEventSyslog(e, w_.syslog_app_name, w_.syslog);
        w_.syslog += '\n';  // records are newline-separated in batches; the sink frames them
      }
      ++w_.events_since[static_cast<int>(e.kind)];
      if (w_.log_summaries && e.kind == EventKind::kSummary) {
        w_.summaries_new.push_back({e.group_id, e.count_total, e.closed});
      }
      if (w_.routes.empty()) return;
      // This event's encodings are the buffers' tails: copy them to the routes that select it.
      const std::string_view ndjson = std::string_view(w_.ndjson).substr(ndjson_end_);
      const std::string_view syslog = std::string_view(w_.syslog).substr(syslog_end_);
      for (Route& r : w_.routes) {
        if (!r.filter.Matches(e)) continue;
        if (r.own_syslog) {
          AppendEventSyslog(e, r.app_name, r.buf);
          r.buf += '\n';
        } else {
          r.buf += r.encoding == SinkEncoding::kNdjson ? ndjson : syslog;
        }
      }
      // Encodings no shared output wants were only scratch for the routes.
      if (!want_ndjson) w_.ndjson.resize(ndjson_end_);
      if (!want_syslog) w_.syslog.resize(syslog_end_);
      ndjson_end_ = w_.ndjson.size();
      syslog_end_ = w_.syslog.size();
    }
    // The shared buffers were handed to the sinks and cleared.
    void Submitted() { ndjson_end_ = syslog_end_ = 0; }
    bool want_ndjson = true;
    bool want_syslog = false;

   private:
    Worker& w_;
    std::size_t ndjson_end_ = 0, syslog_end_ = 0;
  };

  Worker(std::size_t i, const GroupTracker::Options& groups)
      : index(i), encoder(*this), tracker(groups) {}

  std::size_t index;
  moodycamel::BlockingConcurrentQueue<Batch*, WorkerQueueTraits> queue;
  moodycamel::ConcurrentQueue<Batch*> free_batches;
  std::atomic<std::size_t> pending{0};
  std::atomic<std::size_t> open_groups{0};
  std::unique_ptr<WindowMerger> merger;
  std::uint64_t settings_version = 0;
  std::thread thread;
  std::string ndjson, syslog;
  std::string syslog_app_name;  // of the shared syslog encoding (SharedSyslogAppName)
  std::vector<Route> routes;    // one per routed output of `routes_for` (Routed)
  const std::vector<Output>* routes_for = nullptr;
  bool RoutesPending() const {
    return std::any_of(routes.begin(), routes.end(), [](const Route& r) { return !r.buf.empty(); });
  }
  Encoder encoder;
  GroupTracker tracker;
  LogRecord record;
  MergerStats last_stats;
  // Event-time mode: the latest event time and the wall time it was seen at.
  TimeUs event_clock = INT64_MIN, event_clock_wall = 0;
  Metrics::Counter* events[kEventKinds] = {};
  Metrics::Counter* parse[static_cast<int>(ParseOutcome::kCount_)] = {};
  // Counted here per line and added to the shared counters once per round: an atomic add
  // per line on counters every worker shares would bounce their cache line between cores.
  std::uint64_t events_since[kEventKinds] = {};
  std::uint64_t parse_since[static_cast<int>(ParseOutcome::kCount_)] = {};
  Metrics::Counter* lines = nullptr;
  Metrics::Counter* merged = nullptr;
  Metrics::Counter* evicted = nullptr;
  Metrics::Counter* clock_backwards = nullptr;
  Metrics::Counter* stalls = nullptr;
  Metrics::Counter* discarded = nullptr;
  Metrics::Counter* dropped_output = nullptr;
  LogThrottle abandon_log{std::chrono::seconds(5)};
  Metrics::Counter* dropped_memory = nullptr;
  // Salted lines (Kafka partitions): the salt each unsalted scope was last seen with, to count
  // records of one scope arriving through two partitions (producers not keyed by scope).
  std::unordered_map<std::uint64_t, std::uint32_t> salt_of_scope;
  Metrics::Counter* scope_other_salt = nullptr;
  Metrics::Counter* closed_memory = nullptr;
  // Memory budget: the merger's usage as last measured (and accounted), and line bytes
  // folded since, which bound how far it can have grown.
  std::int64_t groups_bytes = 0;
  std::uint64_t folded_since_measure = 0;

  // Checkpoints: the snapshot waiting for the events emitted before it to be delivered, the
  // sink positions that means, and the journal records it holds.
  std::string snapshot;
  bool snapshot_pending = false;
  std::vector<std::pair<const Sink*, std::uint64_t>> snapshot_targets;
  std::uint64_t snapshot_coverage = 0;
  TimeUs last_snapshot = 0;
  CheckpointWriter checkpoint_writer;
  LearnedEvidence learned;  // the merger's, exported into each snapshot (buffers reused)
  // Journal mode: every batch chained up to `watermark` is processed, and so are those in
  // `done_out_of_order` (prev_seq, seq), taken ahead of a batch from another ingest thread.
  std::uint64_t watermark = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> done_out_of_order;
  std::atomic<std::uint64_t> last_enqueued_seq{0};  // written under journal_mu_
  // Summary logs: summaries emitted since the last batch was logged, and the batch waiting
  // for its events to be delivered (then logged to this epoch's file).
  bool log_summaries = false;
  std::uint64_t summary_epoch = 0;
  std::vector<SummaryRecord> summaries_new, summaries_waiting;
  std::vector<std::pair<const Sink*, std::uint64_t>> summaries_targets;
  std::string summary_bytes;
  std::vector<PendingCheckpoint> checkpoints;  // in arrival order
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_WORKERS_WORKER_POOL_IMPL_H_
