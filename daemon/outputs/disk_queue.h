// DiskQueue: an output's disk buffer, a FIFO of records in segment files with checksums,
// which outlives the process; and the record parser the reader (and its fuzz target) use.
#ifndef LOGFOLD_DAEMON_DISK_QUEUE_H_
#define LOGFOLD_DAEMON_DISK_QUEUE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "daemon/outputs/retry_pacing.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

// On disk: every segment file starts with kSegmentMagic, then records, each a 16-byte
// header (magic, payload length, CRC-32 of the payload, CRC-32 of the first 12 header
// bytes; little-endian) and the payload. The header's own checksum makes a damaged length
// detectable, and the record magic lets the reader find the next record after damage.
inline constexpr std::string_view kSegmentMagic = "LFDBSEG1";
inline constexpr std::size_t kRecordHeaderSize = 16;
inline constexpr std::uint32_t kMaxRecordPayload = 256u << 20;

// Appends one record (header and payload) to `out`.
void AppendDiskRecord(std::string_view payload, std::string& out);

struct ParsedRecord {
  enum Kind {
    kNeedMore,  // `data` ends inside a record: read more (or, at the end of a file, damage)
    kRecord,    // `payload` is a record; `consumed` bytes make it up
    kCorrupt,   // damage: skip `consumed` bytes (to the next plausible record start)
  };
  Kind kind = kNeedMore;
  std::size_t consumed = 0;
  std::string_view payload;  // points into `data`
};

// Reads the record at the start of `data` (which follows the segment magic or a record).
ParsedRecord ParseDiskRecord(std::string_view data);

// A directory of segments. Thread-safe. Every sink of one output (a reload builds a new one
// while the old drains) shares the one queue of its directory: Open returns it.
class DiskQueue {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    std::string dir;
    std::uint64_t max_bytes = 1ull << 30;
    std::uint64_t segment_bytes = 8ull << 20;
    std::string sink_name;  // metrics label, log lines
  };

  // Opens (creating it if needed) the queue in options.dir, or returns the one this process
  // has open there. Fails (nullptr, `error`) if the directory cannot be used or another
  // process holds it. Damaged records are found while reading, not here: opening never
  // fails because of the contents.
  static std::shared_ptr<DiskQueue> Open(const Options& options, Metrics& metrics,
                                         std::string& error);
  ~DiskQueue();
  DiskQueue(const DiskQueue&) = delete;
  DiskQueue& operator=(const DiskQueue&) = delete;

  // Appends a record. Waits while the queue holds max_bytes (the record would exceed it);
  // false at `deadline`, or when the write failed (counted and logged; nothing written).
  bool Push(std::string_view record, Clock::time_point deadline);
  // Puts `record` before every queued record, regardless of max_bytes (it was already
  // accepted; only a write error refuses it).
  bool PushFront(std::string_view record);

  // Copies the oldest record into `out` without removing it; waits for one until
  // `deadline`. Damaged records on the way are counted and skipped. One consumer at a time
  // holds the oldest record (after a reload two sinks share the queue for a while): another
  // consumer's Peek waits until the holder commits or releases it.
  bool Peek(std::string& out, Clock::time_point deadline, const void* consumer = nullptr);
  // Removes the record `consumer`'s last Peek returned. If a PushFront came in between, the
  // record stays queued (it may then be delivered twice, never lost).
  void Commit(const void* consumer = nullptr);
  // `consumer` gives up the record it holds without removing it.
  void Release(const void* consumer);
  bool empty() const;
  std::uint64_t bytes() const;  // queued, headers included
  // Writes the read positions: what a restart resumes from.
  void Persist();

 private:
  struct Segment {
    std::uint64_t seq = 0;
    std::uint64_t size = 0;   // file size
    std::uint64_t start = 0;  // first unread byte
  };
  explicit DiskQueue(Options options, Metrics& metrics);
  bool Load(std::string& error);
  std::string SegmentPath(std::uint64_t seq) const;
  bool WriteSegmentLocked(std::uint64_t seq, std::string_view bytes);
  bool AppendLocked(std::string_view record);
  void WriteFailedLocked(const std::string& what, int err);
  bool NextLocked(std::string& out);  // false: nothing readable now
  void ResetReaderLocked();
  void PersistLocked();
  void CountCorruptLocked(std::size_t bytes, const char* what);
  void DropLocked(std::uint64_t bytes);  // no longer queued

  const Options options_;
  std::string key_;  // registry key
  int lock_fd_ = -1;
  Metrics::Counter& written_;
  Metrics::Counter& read_;
  Metrics::Counter& corrupt_;
  Metrics::Counter& write_errors_;

  mutable std::mutex mu_;
  std::condition_variable data_cv_, space_cv_;
  std::deque<Segment> segments_;
  std::uint64_t bytes_ = 0;
  int tail_fd_ = -1;  // open for appending to segments_.back(), or -1
  // Reader: segments_.front() from rbuf_offset_ (file offset of rbuf_[0]).
  int head_fd_ = -1;
  std::uint64_t head_seq_ = 0;
  std::string rbuf_;
  std::uint64_t rbuf_offset_ = 0;
  std::size_t peeked_ = 0;        // size of the record Peek returned, 0 if none
  const void* holder_ = nullptr;  // the consumer that has it
  bool held_ = false;
  Clock::time_point next_persist_{};
  // After a failed write (a full disk, EIO) appends wait out a backoff instead of retrying
  // at once: the workers call Push in a loop, and each try would log and churn a segment.
  Backoff write_backoff_{std::chrono::milliseconds(100), std::chrono::seconds(5)};
  Clock::time_point write_retry_at_{};
  LogThrottle write_error_log_;
  std::shared_ptr<std::atomic<std::uint64_t>> gauge_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_DISK_QUEUE_H_
