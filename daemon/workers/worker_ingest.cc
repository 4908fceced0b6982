// WorkerPool's IngestTarget intake: parsing and sharding on the ingest thread, queue room and
// shares, the memory budget's intake check, journalling, and waking paused inputs.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/workers/worker_pool.h"
#include "daemon/workers/worker_pool_impl.h"

namespace logfold {

bool WorkerPool::TryDeliver(std::uint32_t input, std::span<const std::string_view> lines,
                            TimeUs arrival_us) {
  return TryDeliverShared(input, lines, arrival_us, nullptr);
}

std::shared_ptr<QueueShare> WorkerPool::NewShare() {
  return std::make_shared<QueueShare>(std::max<std::size_t>(options_.queue_capacity / 16, 64),
                                      contention_);
}

bool WorkerPool::TryDeliverShared(std::uint32_t input, std::span<const std::string_view> lines,
                                  TimeUs arrival_us, const std::shared_ptr<QueueShare>& share) {
  return Deliver(input, lines, arrival_us, share, 0, {});
}

bool WorkerPool::TryDeliverSalted(std::uint32_t input, std::span<const std::string_view> lines,
                                  TimeUs arrival_us, const std::shared_ptr<QueueShare>& share,
                                  std::uint32_t scope_salt, std::span<const LineOrigin> origins) {
  return Deliver(input, lines, arrival_us, share, scope_salt, origins);
}

bool WorkerPool::Deliver(std::uint32_t input, std::span<const std::string_view> lines,
                         TimeUs arrival_us, const std::shared_ptr<QueueShare>& share,
                         std::uint32_t scope_salt, std::span<const LineOrigin> origins) {
  if (lines.empty()) return true;
  contention_->Note(share.get());
  // Each ingest thread keeps the last settings it used, for the last pool it delivered to.
  thread_local std::uint64_t settings_pool = 0;
  thread_local Shared::SettingsPtr settings_held;
  if (settings_pool != shared_->pool_id) settings_held.reset();
  settings_pool = shared_->pool_id;
  shared_->UpdateSettings(settings_held);
  const Shared::Settings& settings = *settings_held;
  const SyslogParser& parser = settings.parser(input);
  const std::size_t n_workers = workers_.size();
  // Each line is parsed once, here: its scope picks the worker, and the worker copies the
  // fields the parse found instead of scanning the line again.
  thread_local std::vector<LogRecordView> views;
  thread_local std::vector<std::uint32_t> shard_of;
  thread_local std::vector<std::size_t> counts, bytes;
  thread_local LogRecord scratch;
  // A delivery of many lines (a TCP read after a pause holds thousands) grows the scratch to
  // ~150 B a line. Kept, that is memory each ingest thread holds for good and that creeps up
  // with every new largest delivery (most of the soak's residual RSS drift, by heaptrack), so
  // scratch past kDeliveryScratchKept lines is freed when the call ends.
  struct TrimScratch {
    ~TrimScratch() {
      if (views.capacity() > kDeliveryScratchKept) {
        std::vector<LogRecordView>().swap(views);
        std::vector<std::uint32_t>().swap(shard_of);
      }
    }
  } trim_scratch;
  views.resize(lines.size());
  shard_of.assign(lines.size(), 0);
  counts.assign(n_workers, 0);
  bytes.assign(n_workers, 0);
  bool parsed = true;
  for (std::size_t i = 0; i < lines.size() && parsed; ++i) {
    parsed = parser.ParseView(lines[i], arrival_us, views[i]);
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!parsed) {
      views[i] = LogRecordView{};
      views[i].raw = lines[i];
    }
    if (!origins.empty()) views[i].origin = origins[i];
    if (n_workers > 1) {
      std::uint64_t scope;
      if (parsed) {
        scope = ScopeHash(views[i], settings.merger.scope);
      } else {
        parser.Parse(lines[i], arrival_us, scratch);
        scope = ScopeHash(scratch, settings.merger.scope);
      }
      shard_of[i] = static_cast<std::uint32_t>(scope % n_workers);
    }
    ++counts[shard_of[i]];
    bytes[shard_of[i]] += views[i].raw.size();
  }
  if (budget_ != nullptr) {
    std::size_t total = 0;
    for (std::size_t s = 0; s < n_workers; ++s) total += bytes[s];
    if (!budget_->IntakeAllowed(total)) {
      refused_memory_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  }
  // Reserve room in every target queue, all or nothing.
  const bool waits = input < options_.waiting_inputs.size() && options_.waiting_inputs[input];
  const std::size_t limit = waits ? options_.queue_capacity / 4 * 3 : options_.queue_capacity;
  for (std::size_t s = 0; s < n_workers; ++s) {
    if (counts[s] == 0) continue;
    const std::size_t before = workers_[s]->pending.fetch_add(counts[s]);
    if (before + counts[s] > limit && before > 0) {
      for (std::size_t r = 0; r <= s; ++r) {
        if (counts[r] > 0) workers_[r]->pending.fetch_sub(counts[r]);
      }
      return false;
    }
  }
  // Counted before any worker can see (and release) them.
  if (share != nullptr) share->Add(lines.size());
  auto enqueue = [&](std::uint64_t seq) {
    for (std::size_t s = 0; s < n_workers; ++s) {
      if (counts[s] == 0) continue;
      Worker& w = *workers_[s];
      Batch* b = nullptr;
      if (!w.free_batches.try_dequeue(b)) b = new Batch;
      b->input = input;
      b->arrival_us = arrival_us;
      b->parsed = parsed;
      b->share = share;
      b->scope_salt = scope_salt;
      b->seq = seq;
      b->prev_seq = 0;
      if (seq != 0) {
        b->prev_seq = w.last_enqueued_seq.load(std::memory_order_relaxed);
        w.last_enqueued_seq.store(seq, std::memory_order_release);
      }
      b->bytes.clear();
      b->bytes.reserve(bytes[s]);  // so the views taken below never move
      b->views.clear();
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (shard_of[i] != s) continue;
        const std::size_t at = b->bytes.size();
        b->bytes.append(views[i].raw);
        b->views.push_back(views[i].Rebased({b->bytes.data() + at, views[i].raw.size()}));
      }
      b->accounted = static_cast<std::int64_t>(b->bytes.capacity() +
                                               b->views.capacity() * sizeof(LogRecordView));
      if (budget_ != nullptr) budget_->Add(MemoryBudget::Part::kQueued, b->accounted);
      w.queue.enqueue(b);
    }
  };
  if (!journal_) {
    enqueue(0);
    return true;
  }
  {
    std::lock_guard lock(journal_mu_);
    const std::uint64_t seq = state_->JournalAppend(input, arrival_us, lines);
    if (seq == 0) {
      // Not journalled, so not accepted: the reservations go back and the sender waits (TCP)
      // or the batch is counted as dropped (UDP).
      if (share != nullptr) share->Release(lines.size());
      for (std::size_t s = 0; s < n_workers; ++s) {
        if (counts[s] > 0) workers_[s]->pending.fetch_sub(counts[s]);
      }
      return false;
    }
    enqueue(seq);
    completed_seq_.store(seq, std::memory_order_release);
  }
  // Accepted only once durable: the caller reads no more from its connection meanwhile.
  state_->JournalSync();
  return true;
}

bool WorkerPool::Settled(const QueueShare& share) {
  if (share.queued() != 0) return false;
  const auto sinks = shared_->GetSinks();
  return std::all_of(sinks->begin(), sinks->end(),
                     [](const Output& o) { return o.sink->buffered_bytes() == 0; });
}

void WorkerPool::OnWritable(std::function<void()> resume) {
  {
    std::lock_guard lock(writable_mu_);
    writable_waiters_.push_back(std::move(resume));
    has_waiters_.store(true);
  }
  // Space may have freed between the failed TryDeliver and this registration.
  bool has_room = true;
  for (const auto& w : workers_) {
    if (w->pending.load() >= options_.queue_capacity / 2) has_room = false;
  }
  // A journal that cannot be written is no room either: the waiter's own retry timer brings
  // it back once the hold-off has passed.
  if (journal_ && state_->JournalHeld()) has_room = false;
  if (has_room) NotifyWritable();
}

void WorkerPool::NotifyWritable() {
  std::vector<std::function<void()>> waiters;
  {
    std::lock_guard lock(writable_mu_);
    waiters.swap(writable_waiters_);
    has_waiters_.store(false);
  }
  for (auto& resume : waiters) resume();
}

}  // namespace logfold
