// BufferedSink: bounded block buffer, backpressure in Submit, and the sink thread that
// drains it to a Destination with retries, resends and a deadline-bound Stop.
#include "daemon/outputs/buffered_sink.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>
#include <utility>

#include "daemon/runtime/thread_name.h"

namespace logfold {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

constexpr std::size_t kMaxSpareBlocks = 4;

// Scratch for the octet-counted rewrite of a batch; per worker thread, so it stops
// allocating once it has grown.
thread_local std::string tls_wire;
thread_local std::vector<std::uint64_t> tls_record_ends;

// Splits `batch` into '\n'-terminated records (a trailing unterminated piece counts as a
// record too) and calls fn(record_without_newline).
template <typename Fn>
void ForEachRecord(std::string_view batch, Fn&& fn) {
  while (!batch.empty()) {
    const std::size_t nl = batch.find('\n');
    if (nl == std::string_view::npos) {
      fn(batch);
      return;
    }
    fn(batch.substr(0, nl));
    batch.remove_prefix(nl + 1);
  }
}

}  // namespace

bool StopSignal::Expired() const {
  return requested_.load(std::memory_order_acquire) &&
         SinkClock::now().time_since_epoch().count() >= deadline_.load(std::memory_order_relaxed);
}

void StopSignal::Set(SinkClock::time_point deadline) {
  deadline_.store(deadline.time_since_epoch().count(), std::memory_order_relaxed);
  requested_.store(true, std::memory_order_release);
}

BufferedSinkOptions NetworkSinkOptions(const SinkOptions& sink, std::string type,
                                       SinkEncoding encoding, SinkFraming framing,
                                       TimeUs backoff_min_us, TimeUs backoff_max_us) {
  BufferedSinkOptions options;
  options.name = sink.name;
  options.type = std::move(type);
  options.encoding = encoding;
  options.capacity = sink.buffer;
  options.framing = framing;
  options.backoff_min = std::chrono::microseconds(backoff_min_us);
  options.backoff_max = std::chrono::microseconds(backoff_max_us);
  return options;
}

BufferedSink::BufferedSink(BufferedSinkOptions options, std::unique_ptr<Destination> destination,
                           Metrics& metrics)
    : options_(std::move(options)),
      destination_(std::move(destination)),
      bytes_total_(metrics.GetCounter("logfold_sink_bytes_total",
                                      "Bytes a sink wrote to its destination (resends included)",
                                      "sink=\"" + options_.name + "\"")),
      batches_total_(metrics.GetCounter("logfold_sink_batches_total",
                                        "Batches a sink accepted from the workers",
                                        "sink=\"" + options_.name + "\"")),
      errors_total_(metrics.GetCounter(
          "logfold_sink_errors_total",
          "Failed opens, connects, writes and sends of a sink (each is retried or counted "
          "as discarded)",
          "sink=\"" + options_.name + "\"")),
      retries_total_(metrics.GetCounter("logfold_sink_retries_total",
                                        "Write attempts a sink made after a failure",
                                        "sink=\"" + options_.name + "\"")),
      discarded_bytes_total_(metrics.GetCounter(
          "logfold_sink_discarded_bytes_total",
          "Accepted bytes a sink gave up on (Stop deadline, UDP send failure, closed stdout)",
          "sink=\"" + options_.name + "\"")),
      shutdown_loss_(metrics, options_.name, "shutdown"),
      buffered_gauge_(std::make_shared<std::atomic<std::uint64_t>>(0)),
      backoff_(options_.backoff_min, options_.backoff_max) {
  const std::string labels = "sink=\"" + options_.name + "\"";
  if (tracks_records()) {
    resent_bytes_total_ = &metrics.GetCounter(
        "logfold_sink_resent_bytes_total",
        "Bytes written again after a lost connection because the peer may not have them", labels);
    unconfirmed_events_total_ = &metrics.GetCounter(
        "logfold_sink_unconfirmed_events_total",
        "Events a collector's TCP acknowledged on a connection that then broke with a reset or "
        "error: plain TCP cannot tell whether the collector read them (not resent)",
        labels);
  }
  metrics.AddGauge("logfold_sink_buffered_bytes",
                   "Bytes a sink holds that are not yet known to be delivered", labels,
                   [gauge = buffered_gauge_] { return static_cast<double>(gauge->load()); });
  thread_ = std::thread([this] { Run(); });
  NameThread(thread_, "lf-sink-" + options_.name);
}

BufferedSink::~BufferedSink() { Stop(SinkClock::now()); }

bool BufferedSink::Submit(std::string_view batch, SinkClock::time_point deadline) {
  if (batch.empty()) return true;

  // Work out the bytes to store, and where records end, before taking the lock.
  std::string_view bytes = batch;
  bool add_newline = false;
  std::vector<std::uint64_t>& ends = tls_record_ends;
  ends.clear();
  if (options_.framing == SinkFraming::kOctetCounted) {
    std::string& wire = tls_wire;
    wire.clear();
    ForEachRecord(batch, [&](std::string_view record) {
      // A zero-length frame carries no message and some receivers reject it.
      if (record.empty()) return;
      wire += std::to_string(record.size());
      wire += ' ';
      wire += record;
      ends.push_back(wire.size());
    });
    bytes = wire;
    if (bytes.empty()) return true;
  } else if (options_.framing == SinkFraming::kNewline) {
    // Records must stay whole for resends, so an unterminated tail gets its '\n'.
    add_newline = batch.back() != '\n';
    std::size_t pos = 0;
    while ((pos = batch.find('\n', pos)) != std::string_view::npos) ends.push_back(++pos);
    if (add_newline) ends.push_back(batch.size() + 1);
  }
  const std::uint64_t size = bytes.size() + (add_newline ? 1 : 0);

  std::unique_lock lock(mu_);
  for (;;) {
    if (stop_requested_) return false;
    const std::uint64_t used = end_ - done_;
    if (used == 0 || used + size <= options_.capacity) break;
    if (space_cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
      if (stop_requested_) return false;
      const std::uint64_t now_used = end_ - done_;
      if (now_used == 0 || now_used + size <= options_.capacity) break;
      return false;
    }
  }
  const std::uint64_t start = end_;
  AppendLocked(bytes);
  if (add_newline) AppendLocked("\n");
  for (std::uint64_t e : ends) record_ends_.push_back(start + e);
  batches_total_.fetch_add(1, std::memory_order_relaxed);
  PublishLocked();
  lock.unlock();
  data_cv_.notify_one();
  return true;
}

void BufferedSink::Reopen() {
  destination_->ReopenRequested();
  {
    std::lock_guard lock(mu_);
    reopen_requested_ = true;
  }
  data_cv_.notify_one();
}

bool BufferedSink::Stop(SinkClock::time_point deadline, std::string* unsent) {
  std::lock_guard stop_lock(stop_mu_);
  if (stopped_) return drained_;
  unsent_ = unsent;
  {
    std::lock_guard lock(mu_);
    stop_requested_ = true;
    stop_deadline_ = deadline;
  }
  stop_signal_.Set(deadline);
  data_cv_.notify_all();
  space_cv_.notify_all();
  thread_.join();
  stopped_ = true;
  return drained_;
}

std::size_t BufferedSink::buffered_bytes() const {
  return static_cast<std::size_t>(buffered_gauge_->load());
}

std::uint64_t BufferedSink::AcceptedMark() const {
  std::lock_guard lock(mu_);
  return end_;
}

bool BufferedSink::Confirmed(std::uint64_t mark) const {
  std::lock_guard lock(mu_);
  return done_ >= mark;  // done_ advances only past bytes the destination confirmed
}

void BufferedSink::AppendLocked(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::uint64_t offset = end_ - base_;
    const std::size_t index = static_cast<std::size_t>(offset / kBlockSize);
    const std::size_t in_block = static_cast<std::size_t>(offset % kBlockSize);
    if (index == blocks_.size()) {
      if (spare_blocks_.empty()) {
        blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlockSize));
      } else {
        blocks_.push_back(std::move(spare_blocks_.back()));
        spare_blocks_.pop_back();
      }
    }
    const std::size_t n = std::min(kBlockSize - in_block, bytes.size());
    std::memcpy(blocks_[index].get() + in_block, bytes.data(), n);
    end_ += n;
    bytes.remove_prefix(n);
  }
}

void BufferedSink::CollectLocked(std::vector<iovec>& iov) const {
  iov.clear();
  std::uint64_t pos = sent_;
  std::size_t total = 0;
  while (pos < end_ && total < kMaxWriteBytes) {
    const std::uint64_t offset = pos - base_;
    const std::size_t index = static_cast<std::size_t>(offset / kBlockSize);
    const std::size_t in_block = static_cast<std::size_t>(offset % kBlockSize);
    std::size_t n = std::min<std::uint64_t>(kBlockSize - in_block, end_ - pos);
    n = std::min(n, kMaxWriteBytes - total);
    iov.push_back(iovec{blocks_[index].get() + in_block, n});
    pos += n;
    total += n;
  }
}

void BufferedSink::PublishLocked() {
  // Blocks wholly before done_ are never read again (resends start at done_ or later).
  while (!blocks_.empty() && done_ - base_ >= kBlockSize) {
    if (spare_blocks_.size() < kMaxSpareBlocks) spare_blocks_.push_back(std::move(blocks_.front()));
    blocks_.pop_front();
    base_ += kBlockSize;
  }
  buffered_gauge_->store(end_ - done_, std::memory_order_relaxed);
}

BufferedSink::Action BufferedSink::NextAction(std::vector<iovec>& iov, bool& drained) {
  std::unique_lock lock(mu_);
  for (;;) {
    const auto now = SinkClock::now();
    if (stop_requested_ && done_ == end_) {
      drained = true;
      return Action::kFinish;
    }
    if (stop_requested_ && now >= stop_deadline_) return Action::kFinish;
    // Checked in the same critical section that collects data, so anything submitted after
    // Reopen() returned is written only after the reopen.
    if (reopen_requested_) {
      reopen_requested_ = false;
      return Action::kReopen;
    }
    if (sent_ < end_ && now >= retry_at_) {
      CollectLocked(iov);
      return Action::kWrite;
    }
    if (stop_requested_ && sent_ == end_ && !flushed_for_stop_) {
      flushed_for_stop_ = true;
      return Action::kFlush;
    }
    if (now >= next_poll_) return Action::kPoll;
    auto wake = next_poll_;
    if (sent_ < end_) wake = std::min(wake, retry_at_);
    if (stop_requested_) wake = std::min(wake, stop_deadline_);
    data_cv_.wait_until(lock, wake);
  }
}

void BufferedSink::Run() {
  // EPIPE must come back as an error from write(), not kill the daemon; SIGPIPE from a
  // write is directed at the writing thread, so blocking it here is enough.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  std::vector<iovec> iov;
  next_poll_ = SinkClock::now() + destination_->PollInterval();
  for (;;) {
    bool drained = false;
    const Action action = NextAction(iov, drained);
    WriteResult result;
    switch (action) {
      case Action::kFinish:
        if (!drained) {
          std::string local;
          std::string& rest = unsent_ != nullptr ? *unsent_ : local;
          const std::size_t before = rest.size();
          TakeRemaining(rest);
          if (unsent_ == nullptr) {
            const EventTally t = shutdown_loss_.Count(rest, options_.encoding);
            discarded_bytes_total_.fetch_add(rest.size(), std::memory_order_relaxed);
            spdlog::error("sink {}: stop deadline passed; lost {} events ({} lines, {} bytes)",
                          options_.name, t.events, t.lines, rest.size());
          } else if (rest.size() > before) {
            spdlog::warn("sink {}: stop deadline passed; handing {} unsent bytes over",
                         options_.name, rest.size() - before);
          }
        }
        destination_->Close();
        drained_ = drained;
        return;
      case Action::kReopen: {
        std::string error = destination_->Reopen();
        if (!error.empty()) {
          result.error = std::move(error);
          HandleError(result);
        }
        continue;
      }
      case Action::kWrite:
        if (retrying_) retries_total_.fetch_add(1, std::memory_order_relaxed);
        result = destination_->Write(iov, stop_signal_);
        break;
      case Action::kPoll:
        result = destination_->Poll();
        break;
      case Action::kFlush:
        result = destination_->Flush(stop_signal_);
        break;
    }
    std::uint64_t unconfirmed = 0;
    if (tracks_records()) {
      unconfirmed = result.failed ? result.unconfirmed : destination_->Unconfirmed();
    }
    Apply(result, unconfirmed);
    if (!result.error.empty() || result.failed) HandleError(result);
    if (action == Action::kWrite && !result.failed && result.written > 0) {
      std::string note;
      if (retrying_ && recovery_log_.Allow(note)) {
        spdlog::info("sink {}: {} destination writable again{}", options_.name, options_.type,
                     note);
      }
      retrying_ = false;
      backoff_.Reset();
    }
    next_poll_ = SinkClock::now() + destination_->PollInterval();
  }
}

void BufferedSink::Apply(const WriteResult& result, std::uint64_t unconfirmed) {
  bytes_total_.fetch_add(result.written - result.discarded, std::memory_order_relaxed);
  if (result.discarded > 0) {
    discarded_bytes_total_.fetch_add(result.discarded, std::memory_order_relaxed);
  }
  bool freed = false;
  {
    std::lock_guard lock(mu_);
    sent_ += result.written;
    const std::uint64_t old_done = done_;
    if (tracks_records()) {
      // done_ only ever rests on a record boundary, so a resend starts at a whole record.
      const std::uint64_t acked = sent_ - std::min(unconfirmed, sent_ - done_);
      while (!record_ends_.empty() && record_ends_.front() <= acked) {
        done_ = record_ends_.front();
        record_ends_.pop_front();
        released_ends_.push_back(done_);
      }
      while (!released_ends_.empty() && released_ends_.front() + kUnreadWindow < done_) {
        released_ends_.pop_front();
      }
      if (result.failed) {
        // Records that ended within the last `unread_acknowledged` acknowledged bytes.
        const std::uint64_t from = done_ - std::min(done_, result.unread_acknowledged);
        std::uint64_t unread = 0;
        for (auto it = released_ends_.rbegin(); it != released_ends_.rend() && *it > from; ++it) {
          ++unread;
        }
        if (unread > 0) unconfirmed_events_total_->fetch_add(unread, std::memory_order_relaxed);
        released_ends_.clear();
      }
      if (result.failed && sent_ > done_) {
        resent_bytes_total_->fetch_add(sent_ - done_, std::memory_order_relaxed);
        sent_ = done_;
      }
    } else {
      done_ = sent_;
      if (result.written > 0) {
        // The block holding done_ - 1 is still there: only PublishLocked frees blocks.
        const std::uint64_t last = done_ - 1 - base_;
        mid_record_ =
            blocks_[static_cast<std::size_t>(last / kBlockSize)][last % kBlockSize] != '\n';
      }
    }
    freed = done_ != old_done;
    PublishLocked();
  }
  if (freed) space_cv_.notify_all();
}

void BufferedSink::HandleError(const WriteResult& result) {
  errors_total_.fetch_add(1, std::memory_order_relaxed);
  SinkClock::duration delay{0};
  if (result.failed) {
    delay = backoff_.Next();
    retry_at_ = SinkClock::now() + delay;
    retrying_ = true;
  }
  std::string note;
  if (!error_log_.Allow(note)) return;
  const std::string& what = result.error.empty() ? std::string("destination failed") : result.error;
  if (result.failed) {
    spdlog::warn("sink {}: {}; {} bytes buffered, retrying in {} ms{}", options_.name, what,
                 buffered_gauge_->load(), duration_cast<milliseconds>(delay).count(), note);
  } else {
    spdlog::warn("sink {}: {}{}", options_.name, what, note);
  }
}

void BufferedSink::TakeRemaining(std::string& out) {
  std::string bytes;
  {
    std::lock_guard lock(mu_);
    bytes.reserve(static_cast<std::size_t>(end_ - done_));
    for (std::uint64_t pos = done_; pos < end_;) {
      const std::uint64_t offset = pos - base_;
      const std::size_t index = static_cast<std::size_t>(offset / kBlockSize);
      const std::size_t in_block = static_cast<std::size_t>(offset % kBlockSize);
      const std::size_t n = std::min<std::uint64_t>(kBlockSize - in_block, end_ - pos);
      bytes.append(blocks_[index].get() + in_block, n);
      pos += n;
    }
    done_ = sent_ = end_;
    record_ends_.clear();
    PublishLocked();
  }
  std::string_view rest = bytes;
  if (options_.framing == SinkFraming::kStream && mid_record_) {
    const std::size_t nl = rest.find('\n');
    const std::size_t fragment = nl == std::string_view::npos ? rest.size() : nl + 1;
    discarded_bytes_total_.fetch_add(fragment, std::memory_order_relaxed);
    shutdown_loss_.Count(rest.substr(0, fragment), options_.encoding);
    rest.remove_prefix(fragment);
  }
  if (options_.framing != SinkFraming::kOctetCounted) {
    out.append(rest);
    if (!out.empty() && out.back() != '\n') out += '\n';
    return;
  }
  // "LEN SP MSG" frames back to "MSG\n"; done_ rests on a frame boundary.
  while (!rest.empty()) {
    const std::size_t sp = rest.find(' ');
    std::size_t len = 0;
    if (sp == std::string_view::npos ||
        std::from_chars(rest.data(), rest.data() + sp, len).ec != std::errc() ||
        len > rest.size() - sp - 1) {
      break;
    }
    out.append(rest.substr(sp + 1, len));
    out += '\n';
    rest.remove_prefix(sp + 1 + len);
  }
}

}  // namespace logfold
