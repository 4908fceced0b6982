// WorkerPool: the engine threads of `serve`. Each worker owns one WindowMerger (a shard of the
// scope keys), fed through a bounded lock-free queue; it encodes events and hands them to
// every sink. Implements IngestTarget for the listeners.
#ifndef LOGFOLD_DAEMON_WORKER_POOL_H_
#define LOGFOLD_DAEMON_WORKER_POOL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/config/options/sink_options.h"
#include "daemon/config/options/syslog_sink_options.h"
#include "daemon/config/options/worker_options.h"
#include "daemon/inputs/ingest_target.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/memory_budget.h"
#include "daemon/runtime/metrics.h"
#include "daemon/state/state_store.h"
#include "daemon/workers/group_tracker.h"
#include "pipeline/event_filter.h"
#include "pipeline/syslog_parser.h"
#include "pipeline/window_merger.h"

namespace logfold {

class WorkerPool : public IngestTarget {
 public:
  // A sink and what to do when its buffer stays full.
  struct Output {
    Sink* sink = nullptr;
    // when_full block: wait as long as it takes (lossless; backs up to the TCP readers and
    // stalls the other outputs too). drop: after block_timeout_us, drop this batch for this
    // sink only and count it (logfold_output_dropped_bytes_total), so the other outputs
    // carry on. The name and buffer size are the sink's own business. ({}: may be left out
    // of an initializer list under -Wextra.)
    SinkOptions options{};
    // Syslog encoding: APP-NAME of events whose record has none (the output's app_name).
    std::string syslog_app_name = SyslogSinkOptions{}.app_name;
  };

  // threads, queue_capacity and flush_interval_us (WorkerOptions, the file's `workers`), and
  // what the pool takes from the rest of the config.
  struct Options : WorkerOptions {
    bool event_time = false;  // windows follow the lines' own timestamps
    MergerOptions merger;
    std::vector<SyslogParser::Options> inputs;  // parser per input id
    // Per input id: true for an input that waits when refused (TCP, files, stdin). Such an
    // input may fill only 3/4 of a worker's queue: the last quarter is kept for the inputs
    // that lose what is refused (UDP), so that a flood on one TCP connection pauses that
    // connection instead of making every datagram drop. Ids past the end: no reservation.
    std::vector<bool> waiting_inputs;
    GroupTracker::Options groups;  // the live view's snapshots
  };

  // The sinks must outlive the pool (or be replaced with SetSinks before they are destroyed).
  // `budget`, when given, must outlive it too: queued lines and open groups are accounted in
  // it, deliveries are refused past its intake threshold, and workers close their least
  // recently active groups early (summary reason "memory") past its groups threshold.
  // With `state` (opened), each worker checkpoints its groups there every
  // state->options().checkpoint_interval_us, and in journal mode every accepted line is
  // journalled before TryDeliver returns.
  WorkerPool(Options options, std::vector<Output> outputs, Metrics& metrics,
             MemoryBudget* budget = nullptr, StateStore* state = nullptr);
  ~WorkerPool() override;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts the workers. With a state store, first restores what `recovered` holds (groups
  // from checkpoints, then journalled lines they lack), hands the events that produces to
  // the sinks, waits (up to 30 s) for them to be delivered and commits the result as this
  // run's first checkpoints. Returns false (with `error`) if that commit failed.
  bool Start(RecoveredState* recovered = nullptr, std::string* error = nullptr);

  // IngestTarget. Thread-safe; parses on the caller's thread to find each line's shard.
  bool TryDeliver(std::uint32_t input, std::span<const std::string_view> lines,
                  TimeUs arrival_us) override;
  void OnWritable(std::function<void()> resume) override;
  // A share of queue_capacity / 16 lines (at least 64) over all workers: while another
  // sender delivers, a flooding connection holds at most that many lines in the queues, so
  // the lines of every other sender wait behind at most that many of its lines. A sender
  // alone is held back only by the queues' capacity.
  std::shared_ptr<QueueShare> NewShare() override;
  bool TryDeliverShared(std::uint32_t input, std::span<const std::string_view> lines,
                        TimeUs arrival_us, const std::shared_ptr<QueueShare>& share) override;
  // Salt 0: none; `origins` empty: none (IngestTarget::TryDeliverSalted).
  bool TryDeliverSalted(std::uint32_t input, std::span<const std::string_view> lines,
                        TimeUs arrival_us, const std::shared_ptr<QueueShare>& share,
                        std::uint32_t scope_salt,
                        std::span<const LineOrigin> origins = {}) override;
  // A share's lines are released once folded and their events handed to the sinks, so: the
  // share holds nothing, then no sink holds an unwritten byte.
  bool Settled(const QueueShare& share) override;
  // A marker queued behind the caller's lines on every worker; see IngestTarget.
  void Checkpoint(bool close_all, std::function<void(bool)> done) override;
  void CloseSalted(std::vector<std::uint32_t> salts, std::function<void(bool)> done) override;

  // Applies new engine and input settings; open groups survive (see
  // WindowMerger::Reconfigure). The thread count cannot change without a restart.
  void Reconfigure(const MergerOptions& merger, std::vector<SyslogParser::Options> inputs,
                   bool event_time);
  // Replaces the sinks workers write to and returns at once. A worker may still be inside a
  // Submit to a sink of the old list: call the returned function, which blocks until no
  // worker uses the old list, before stopping or destroying a sink that left it.
  std::function<void()> SetSinks(std::vector<Output> outputs);

  // Processes everything queued, closes every open group (summaries out), hands all events
  // to the sinks and joins the workers. Call after the inputs stopped delivering.
  void Stop();

  // From now on a worker whose sink stays full gives its pending output up (counted in
  // logfold_output_discarded_bytes_total) instead of waiting: the shutdown deadline passed.
  void AbandonBlockedOutput() { abandon_output_.store(true); }

  // After Stop and a complete flush of the sinks: the state directory is emptied (groups all
  // summarised and delivered), so the next start restores nothing twice.
  bool CommitFinalState(std::string& error);

  std::size_t threads() const { return workers_.size(); }
  // The worker count `threads` means: itself, or one per core for 0.
  static std::uint32_t ResolvedThreads(std::uint32_t configured);
  // The live view: marks the groups as watched at `now_us` (workers keep their snapshots fresh
  // while watched) and returns each worker's latest snapshot (null until its first).
  std::vector<std::shared_ptr<const GroupSnapshot>> WatchGroups(TimeUs now_us);
  std::size_t queued_lines() const;
  std::size_t open_groups() const;
  // Settings versions not yet freed: the current one and any an ingest thread or worker may
  // still be reading (old ones are freed once every reader moved on). For tests.
  std::size_t retained_settings() const;
  // Line batches kept in the workers' free lists for reuse (at most 32 per worker, none
  // larger than 64 KiB). Exact while no delivery and no worker round is under way; only an
  // approximation while the lists change. For tests.
  std::size_t retained_batches() const;

 private:
  struct Batch;
  struct Worker;
  struct Shared;
  struct CheckpointState;
  struct PendingCheckpoint;

  bool Deliver(std::uint32_t input, std::span<const std::string_view> lines, TimeUs arrival_us,
               const std::shared_ptr<QueueShare>& share, std::uint32_t scope_salt,
               std::span<const LineOrigin> origins);
  void QueueMarker(std::shared_ptr<CheckpointState> state, bool close_all,
                   std::shared_ptr<const std::vector<std::uint32_t>> close_salts);
  void Run(Worker& w);
  void Fold(Worker& w, const LogRecord& record, TimeUs t);
  // Sets w.record's salt, counting a scope that was last seen with another one.
  static void NoteSalt(Worker& w, const std::vector<ScopeField>& scope, std::uint32_t salt);
  void KeepGroupsInBudget(Worker& w, bool measure_now);
  void SubmitOutput(Worker& w);
  void StartCheckpoint(Worker& w, Batch& marker, TimeUs merger_now);
  void AdvanceCheckpoints(Worker& w, TimeUs last_flush_time);
  void NotifyWritable();
  void Recover(RecoveredState& recovered);
  // Serialises worker w's groups into w.snapshot (on w's thread, or before it starts).
  void Snapshot(Worker& w, TimeUs now);
  void MaybeCheckpoint(Worker& w, TimeUs now);
  void NoteJournalBatch(Worker& w, std::uint64_t seq, std::uint64_t prev_seq);
  bool WaitDelivered(std::chrono::steady_clock::time_point deadline);

  Options options_;
  Metrics& metrics_;
  MemoryBudget* budget_;
  Metrics::Counter& refused_memory_;
  std::shared_ptr<Shared> shared_;  // shared with the waits SetSinks hands out
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> abandon_output_{false};
  std::mutex writable_mu_;
  std::vector<std::function<void()>> writable_waiters_;
  std::atomic<bool> has_waiters_{false};
  // Whether senders contend for the queues: shares bind only then (see QueueShare).
  const std::shared_ptr<ShareContention> contention_ = std::make_shared<ShareContention>();
  StateStore* state_ = nullptr;
  bool journal_ = false;
  // Journal mode: sequence numbers are taken, written and enqueued under journal_mu_, so
  // that each worker's batches are chained in sequence order (Batch::prev_seq).
  std::mutex journal_mu_;
  std::atomic<std::uint64_t> completed_seq_{0};  // every record up to it is enqueued
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_WORKER_POOL_H_
