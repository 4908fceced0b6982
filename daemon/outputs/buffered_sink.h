// BufferedSink: the bounded byte buffer and writer thread every Sink is built on. A
// Destination supplies only how bytes reach the outside world (fd, file, socket).
#ifndef LOGFOLD_DAEMON_BUFFERED_SINK_H_
#define LOGFOLD_DAEMON_BUFFERED_SINK_H_

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/config/options/sink_options.h"
#include "daemon/outputs/loss_counter.h"
#include "daemon/outputs/retry_pacing.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

// Lets a Destination that waits on a slow peer notice that Stop's deadline has passed, so
// Stop stays prompt. Read from the sink thread, set by whoever calls Stop.
class StopSignal {
 public:
  bool Expired() const;
  // Stop has begun (its deadline may still be ahead): time to send what is held back.
  bool Requested() const { return requested_.load(std::memory_order_acquire); }
  void Set(SinkClock::time_point deadline);

 private:
  std::atomic<bool> requested_{false};
  std::atomic<SinkClock::rep> deadline_{0};
};

struct WriteResult {
  std::size_t written = 0;    // bytes taken from the front of the data (sent or discarded)
  std::size_t discarded = 0;  // of `written`, bytes given up on for good (counted)
  // The destination is unusable for now: the sink backs off before the next attempt and
  // keeps everything not yet taken.
  bool failed = false;
  // With `failed`, on record-tracking sinks: how many of the bytes written since the lost
  // connection was opened the peer may not have received. The sink resends them, from the
  // start of the record they begin in.
  std::uint64_t unconfirmed = 0;
  // With `failed`, on record-tracking sinks: the connection broke with a reset or error, and
  // this many of the last bytes the peer's TCP acknowledged on it may never have been read
  // by the collector (they are not resent; their events are counted as unconfirmed).
  std::uint64_t unread_acknowledged = 0;
  std::string error;  // non-empty: counted in logfold_sink_errors_total and logged
};

// Called only on the sink's own thread, so implementations need no locking.
class Destination {
 public:
  virtual ~Destination() = default;

  // Writes a prefix of `data`. May return early with partial progress (the sink calls
  // again with the rest); must return within about 100 ms once `stop` has expired.
  virtual WriteResult Write(std::span<const iovec> data, const StopSignal& stop) = 0;

  // How many of the bytes written on the current connection the peer has not yet
  // acknowledged. They stay in the buffer until it has; only record-tracking sinks ask.
  virtual std::uint64_t Unconfirmed() { return 0; }

  // Housekeeping between writes: interval fsync, noticing a dropped connection while idle.
  virtual WriteResult Poll() { return {}; }
  // How long the sink may wait before the next Poll.
  virtual SinkClock::duration PollInterval() const { return std::chrono::seconds(1); }

  // Called once when Stop begins and every buffered byte has been handed to Write, for
  // destinations that hold bytes back (an HTTP sink's partial batch): send them now.
  virtual WriteResult Flush(const StopSignal& /*stop*/) { return {}; }

  // Returns an error text, or "" on success (a failed reopen is retried by the next Write).
  virtual std::string Reopen() { return ""; }
  // Called on the thread that calls Sink::Reopen (SIGHUP), before Reopen is queued for the
  // sink thread: for a destination that may be busy retrying on the sink thread (an HTTP
  // batch) and must notice the reload there. Must be thread-safe.
  virtual void ReopenRequested() {}
  // Final close after Stop drained or gave up.
  virtual void Close() {}
};

// How the buffer treats record boundaries.
enum class SinkFraming {
  kStream,        // bytes pass through; a failed write continues where it stopped
  kNewline,       // '\n'-terminated records; after a lost connection, resend whole records
  kOctetCounted,  // like kNewline, but stored on the wire as RFC 6587 "LEN SP MSG"
};

struct BufferedSinkOptions {
  std::string name;
  std::string type;  // for log lines: "stdout", "file", "tcp", "syslog", "http"
  SinkEncoding encoding = SinkEncoding::kNdjson;
  std::uint64_t capacity = 64 << 20;
  SinkFraming framing = SinkFraming::kStream;
  SinkClock::duration backoff_min = std::chrono::milliseconds(100);
  SinkClock::duration backoff_max = std::chrono::seconds(5);
};

// Options of a network sink of `type` (for log lines): name and buffer size from `sink`, and
// its reconnect (or retry) range as the backoff range.
BufferedSinkOptions NetworkSinkOptions(const SinkOptions& sink, std::string type,
                                       SinkEncoding encoding, SinkFraming framing,
                                       TimeUs backoff_min_us, TimeUs backoff_max_us);

class BufferedSink final : public Sink {
 public:
  // Registers the common metrics and starts the sink thread.
  BufferedSink(BufferedSinkOptions options, std::unique_ptr<Destination> destination,
               Metrics& metrics);
  // Stops with an immediate deadline: whatever is still buffered is counted as lost.
  ~BufferedSink() override;

  BufferedSink(const BufferedSink&) = delete;
  BufferedSink& operator=(const BufferedSink&) = delete;

  const std::string& name() const override { return options_.name; }
  SinkEncoding encoding() const override { return options_.encoding; }
  bool Submit(std::string_view batch, SinkClock::time_point deadline) override;
  void Reopen() override;
  using Sink::Stop;
  bool Stop(SinkClock::time_point deadline, std::string* unsent) override;
  std::size_t buffered_bytes() const override;
  std::uint64_t AcceptedMark() const override;
  bool Confirmed(std::uint64_t mark) const override;

 private:
  // Bytes live in fixed-size blocks so that the sink thread can write from them without
  // holding the lock while workers append: a block never moves once allocated.
  static constexpr std::size_t kBlockSize = 64 << 10;
  static constexpr std::size_t kMaxWriteBytes = 1 << 20;

  enum class Action { kWrite, kPoll, kFlush, kReopen, kFinish };

  bool tracks_records() const { return options_.framing != SinkFraming::kStream; }
  void Run();
  Action NextAction(std::vector<iovec>& iov, bool& drained);
  void AppendLocked(std::string_view bytes);
  void CollectLocked(std::vector<iovec>& iov) const;
  // Applies a write or poll outcome to the buffer positions.
  void Apply(const WriteResult& result, std::uint64_t unconfirmed);
  void HandleError(const WriteResult& result);
  // What is left between done_ and end_, as whole '\n'-separated records (octet-counted
  // frames decoded); a record the destination got only part of is counted as discarded.
  void TakeRemaining(std::string& out);
  void PublishLocked();

  const BufferedSinkOptions options_;
  std::unique_ptr<Destination> destination_;

  Metrics::Counter& bytes_total_;
  Metrics::Counter& batches_total_;
  Metrics::Counter& errors_total_;
  Metrics::Counter& retries_total_;
  Metrics::Counter& discarded_bytes_total_;
  Metrics::Counter* resent_bytes_total_ = nullptr;        // record-tracking sinks only
  Metrics::Counter* unconfirmed_events_total_ = nullptr;  // record-tracking sinks only
  LossCounter shutdown_loss_;
  // Shared with the gauge callback, which may outlive this sink inside Metrics.
  std::shared_ptr<std::atomic<std::uint64_t>> buffered_gauge_;

  mutable std::mutex mu_;
  std::condition_variable data_cv_;   // the sink thread waits for work
  std::condition_variable space_cv_;  // Submit waits for room
  // Positions in the byte stream since construction: [done_, end_) is buffered; of that,
  // [done_, sent_) has been handed to the destination but may still have to be resent.
  std::uint64_t done_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t end_ = 0;
  std::uint64_t base_ = 0;  // stream position of blocks_.front()[0]
  std::deque<std::unique_ptr<char[]>> blocks_;
  std::vector<std::unique_ptr<char[]>> spare_blocks_;
  std::deque<std::uint64_t> record_ends_;  // positions just past each buffered record
  // Ends of records released on the current connection, the last kUnreadWindow bytes' worth.
  std::deque<std::uint64_t> released_ends_;
  static constexpr std::uint64_t kUnreadWindow = 64 << 20;
  bool reopen_requested_ = false;
  bool stop_requested_ = false;
  SinkClock::time_point stop_deadline_{};
  StopSignal stop_signal_;

  // Sink thread only.
  Backoff backoff_;
  LogThrottle error_log_;
  LogThrottle recovery_log_;
  SinkClock::time_point retry_at_{};
  SinkClock::time_point next_poll_{};
  bool retrying_ = false;
  bool flushed_for_stop_ = false;
  std::uint64_t unconfirmed_ = 0;  // last Unconfirmed() answer
  bool drained_ = false;           // result of the final flush, read after join
  std::string* unsent_ = nullptr;  // where Stop wants the remainder; set before join
  // Stream framing: the destination took part of a record (a file write stopped at ENOSPC).
  bool mid_record_ = false;

  std::mutex stop_mu_;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_BUFFERED_SINK_H_
