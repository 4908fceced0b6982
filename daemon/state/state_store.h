// StateStore: the state directory of `serve` (crash durability): per-worker checkpoints
// written atomically by a background thread, the journal of accepted lines (journal mode,
// group-committed fsync), recovery reads with corrupt files set aside, and an exclusive lock
// so that two daemons never share a directory. Part daemon/state: depends on pipeline,
// config (StateOptions) and runtime (metrics, thread names); the workers part drives it.
#ifndef LOGFOLD_DAEMON_STATE_STATE_STORE_H_
#define LOGFOLD_DAEMON_STATE_STATE_STORE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/config/options/state_options.h"
#include "daemon/runtime/metrics.h"
#include "daemon/state/checkpoint_file.h"
#include "daemon/state/journal_file.h"
#include "pipeline/log_record.h"

namespace logfold {

// What a previous run left: the valid checkpoints, and the journal records they do not hold.
struct RecoveredState {
  std::vector<Checkpoint> checkpoints;
  struct Segment {
    JournalSegmentHeader header;
    std::string bytes;  // the segment; records up to valid_bytes are intact
    std::size_t valid_bytes = 0;
  };
  std::vector<Segment> journal;  // in generation and file order
  struct SummaryLog {
    std::uint32_t worker = 0;
    std::uint64_t epoch = 0;
    std::vector<SummaryRecord> records;
  };
  std::vector<SummaryLog> summary_logs;
  std::uint64_t last_generation = 0;
};

class StateStore {
 public:
  StateStore(StateOptions options, std::uint32_t workers, Metrics& metrics);
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  // Creates and locks the directory and reads what a previous run left. A corrupt or
  // partial file is logged, counted (logfold_state_files_set_aside_total) and moved to
  // corrupt/ in the directory; it never fails the start. Returns false (with `error`) only
  // when the directory cannot be used at all (not creatable, locked by another process).
  bool Open(RecoveredState& recovered, std::string& error);

  // Writes every worker's checkpoint now (recovery's result, or the empty state after a
  // clean shutdown), then removes every journal file and the checkpoints of workers that no
  // longer exist; `open_journal` (journal mode) then starts this run's journal.
  // `checkpoints[i]` is worker i's.
  bool CommitAll(std::span<std::string> checkpoints, bool open_journal, std::string& error);

  // Starts the background writer. Offer hands it worker `worker`'s newest checkpoint (the
  // buffer is swapped, so the caller gets an old one back to reuse) whose groups hold every
  // journal record up to `journal_coverage`. Cheap: one lock per call, once per interval.
  void Start();
  void Offer(std::uint32_t worker, std::string& checkpoint, std::uint64_t journal_coverage,
             std::uint64_t summary_epoch);
  // Writes what was offered last and stops the writer.
  void Stop();

  // Journal mode. Append writes one record (its sequence number is returned) with one
  // write(2); calls are serialised by the caller. Sync makes every record appended before
  // it durable, with one fdatasync for all the callers waiting at the time (group commit).
  // Append returns 0 when the record could not be written (a full disk, EIO): nothing of it
  // stays in the journal, and the caller must not accept the lines. After a failure, appends
  // fail at once until a short hold-off has passed (JournalHeld), so that senders retrying
  // do not turn a full disk into a busy loop.
  std::uint64_t JournalAppend(std::uint32_t input, TimeUs arrival_us,
                              std::span<const std::string_view> lines);
  void JournalSync();
  bool JournalHeld() const;

  // Summary logs, called only from worker `worker`'s thread: a new log for the epoch a
  // snapshot starts, and records of delivered summaries (one write(2), no fsync: a process
  // crash keeps what the kernel has).
  void OpenSummaryLog(std::uint32_t worker, std::uint64_t epoch);
  void AppendSummaryLog(std::uint32_t worker, std::string_view records);

  const StateOptions& options() const { return options_; }
  std::uint64_t generation() const { return generation_; }
  std::uint32_t workers() const { return workers_; }
  // The settings key groups were folded under (written into every checkpoint).
  Metrics::Counter& recovered_groups() { return recovered_groups_; }
  Metrics::Counter& replayed_lines() { return replayed_lines_; }

 private:
  struct Slot {
    std::string pending;
    bool has_pending = false;
    std::uint64_t coverage = 0;
    std::uint64_t committed_coverage = 0;
    std::uint64_t epoch = 0;         // of the pending checkpoint
    std::uint64_t oldest_epoch = 0;  // summary logs before it are removed
  };
  struct JournalFile {
    std::string path;
    std::uint64_t max_seq = 0;
  };

  std::string Path(std::string_view name) const;
  void SetAside(const std::string& name, const std::string& why);
  bool WriteAtomically(const std::string& name, std::string_view bytes, std::string& error);
  bool OpenJournalSegment(std::string& error);
  void TrimJournal(std::uint64_t coverage);
  void Run();

  const StateOptions options_;
  const std::uint32_t workers_;
  int lock_fd_ = -1;
  std::uint64_t generation_ = 0;

  std::mutex mu_;  // slots, stopping
  std::condition_variable cv_;
  std::vector<Slot> slots_;
  std::vector<int> summary_fds_;  // per worker, used by that worker's thread only
  bool stopping_ = false;
  std::thread thread_;

  // Journal: appends are serialised by the caller; sync state under sync_mu_.
  int journal_fd_ = -1;
  std::uint64_t journal_seq_ = 0;
  std::uint64_t journal_file_bytes_ = 0;
  std::uint32_t journal_index_ = 0;
  std::string journal_buf_;
  // After a failed append: appends fail until this time (read by JournalHeld on any thread).
  std::atomic<std::int64_t> journal_held_until_ns_{0};
  std::chrono::milliseconds journal_hold_{0};  // doubles per failure in a row, up to 2 s
  std::uint64_t journal_errors_unlogged_ = 0;
  std::chrono::steady_clock::time_point journal_error_logged_{};
  std::mutex files_mu_;  // journal_files_
  std::vector<JournalFile> journal_files_;
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  std::uint64_t appended_ = 0;  // under sync_mu_: records written
  std::uint64_t synced_ = 0;    // under sync_mu_: records durable
  bool syncing_ = false;

  Metrics::Counter& checkpoints_;
  Metrics::Counter& checkpoint_errors_;
  Metrics::Counter& checkpoint_bytes_;
  Metrics::Counter& set_aside_;
  Metrics::Counter& recovered_groups_;
  Metrics::Counter& replayed_lines_;
  Metrics::Counter& journal_syncs_;
  Metrics::Counter& journal_bytes_;
  Metrics::Counter& journal_write_errors_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_STATE_STATE_STORE_H_
