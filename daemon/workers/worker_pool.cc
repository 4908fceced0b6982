// WorkerPool: the pool's life (construction, start, stop) and each worker's loop: one merger
// per worker thread, recycled line batches (no per-line allocation), the memory budget.
// Delivery is in worker_ingest.cc, sink hand-off in worker_output.cc, Checkpoint markers in
// worker_checkpoint.cc, crash durability in worker_durability.cc.
#include "daemon/workers/worker_pool.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <new>
#include <string>
#include <utility>

#include "daemon/runtime/thread_name.h"
#include "daemon/runtime/wall_clock.h"
#include "daemon/workers/worker_pool_impl.h"

namespace logfold {

WorkerPool::WorkerPool(Options options, std::vector<Output> sinks, Metrics& metrics,
                       MemoryBudget* budget, StateStore* state)
    : options_(std::move(options)),
      metrics_(metrics),
      budget_(budget),
      refused_memory_(metrics.GetCounter(
          "logfold_intake_refused_total",
          "Deliveries refused (TCP pauses, UDP drops and counts them as queue_full)",
          R"(reason="memory")")),
      shared_(std::make_unique<Shared>()),
      state_(state),
      journal_(state != nullptr && state->options().journal) {
  options_.threads = ResolvedThreads(options_.threads);
  auto settings = std::make_unique<Shared::Settings>();
  for (const auto& in : options_.inputs) settings->parsers.emplace_back(in);
  settings->merger = options_.merger;
  settings->event_time = options_.event_time;
  shared_->Publish(std::move(settings));
  shared_->sinks = std::make_shared<const std::vector<Output>>(std::move(sinks));
  shared_->sinks_held.assign(options_.threads, Shared::kNotHeld);
  for (std::size_t i = 0; i < options_.threads; ++i) {
    auto w = std::make_unique<Worker>(i, options_.groups);
    MergerOptions mo = options_.merger;
    mo.id_seed = mo.id_seed * 1000003 + i + 1;  // group ids unique across shards
    w->merger = std::make_unique<WindowMerger>(mo);
    const std::string label = "worker=\"" + std::to_string(i) + "\"";
    w->events[0] =
        &metrics_.GetCounter("logfold_events_total", "Events emitted, by kind", R"(kind="first")");
    w->events[1] = &metrics_.GetCounter("logfold_events_total", "Events emitted, by kind",
                                        R"(kind="summary")");
    w->events[2] = &metrics_.GetCounter("logfold_events_total", "Events emitted, by kind",
                                        R"(kind="annotate")");
    w->events[3] = &metrics_.GetCounter("logfold_events_total", "Events emitted, by kind",
                                        R"(kind="new_value")");
    for (int o = 0; o < static_cast<int>(ParseOutcome::kCount_); ++o) {
      const std::string l =
          "outcome=\"" + std::string(ParseOutcomeName(static_cast<ParseOutcome>(o))) + "\"";
      w->parse[o] = &metrics_.GetCounter("logfold_parse_total", "Lines parsed, by outcome", l);
    }
    w->lines =
        &metrics_.GetCounter("logfold_lines_processed_total", "Lines processed by the engine");
    w->merged =
        &metrics_.GetCounter("logfold_lines_merged_total", "Lines folded into an existing group");
    w->evicted = &metrics_.GetCounter("logfold_groups_evicted_total",
                                      "Groups closed early because max_groups was reached");
    w->clock_backwards = &metrics_.GetCounter("logfold_clock_backwards_total",
                                              "Lines whose time was before the latest seen");
    w->stalls = &metrics_.GetCounter("logfold_output_stalls_total",
                                     "Times a worker waited on a full sink buffer");
    w->discarded = &metrics_.GetCounter(
        "logfold_output_discarded_bytes_total",
        "Encoded event bytes given up because a sink was full at the shutdown deadline or "
        "when a reload removed it");
    w->dropped_output = &metrics_.GetCounter(
        "logfold_output_dropped_bytes_total",
        "Encoded event bytes dropped for an output with when_full: drop that stayed full");
    w->closed_memory = &metrics_.GetCounter(
        "logfold_groups_closed_memory_total",
        "Groups summarised early because the memory budget neared (reason \"memory\")");
    w->dropped_memory = &metrics_.GetCounter("logfold_dropped_total", "Lines dropped on intake.",
                                             R"(reason="memory")");
    w->scope_other_salt = &metrics_.GetCounter(
        "logfold_kafka_scope_split_total",
        "Kafka records whose scope (engine.scope) was last seen on another partition");
    Worker* wp = w.get();
    metrics_.AddGauge("logfold_queue_depth", "Lines queued for a worker", label,
                      [wp] { return static_cast<double>(wp->pending.load()); });
    metrics_.AddGauge("logfold_groups_open", "Open groups", label,
                      [wp] { return static_cast<double>(wp->open_groups.load()); });
    workers_.push_back(std::move(w));
  }
}

WorkerPool::~WorkerPool() {
  Stop();
  for (auto& w : workers_) {
    Batch* b;
    while (w->queue.try_dequeue(b)) delete b;
    while (w->free_batches.try_dequeue(b)) delete b;
  }
}

std::uint32_t WorkerPool::ResolvedThreads(std::uint32_t configured) {
  if (configured > 0) return configured;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? static_cast<std::uint32_t>(cores) : 1;
}

bool WorkerPool::Start(RecoveredState* recovered, std::string* error) {
  if (state_ != nullptr) {
    RecoveredState none;
    Recover(recovered != nullptr ? *recovered : none);
    std::vector<std::string> snapshots(workers_.size());
    const TimeUs now = WallClockNowUs();
    for (auto& w : workers_) {
      Snapshot(*w, now);
      snapshots[w->index].swap(w->snapshot);
    }
    std::string e;
    if (!state_->CommitAll(snapshots, true, e)) {
      if (error != nullptr) *error = e;
      return false;
    }
    // The commit's fsyncs can take a while on a busy disk: the interval starts after them.
    for (auto& w : workers_) {
      w->last_snapshot = WallClockNowUs();
      w->log_summaries = true;
      state_->OpenSummaryLog(static_cast<std::uint32_t>(w->index), w->summary_epoch);
    }
    state_->Start();
  }
  for (auto& w : workers_) {
    w->dropped_output = &metrics_.GetCounter(
        "logfold_output_dropped_bytes_total",
        "Encoded event bytes dropped for an output with when_full: drop that stayed full");
    Worker* wp = w.get();
    w->thread = std::thread([this, wp] { Run(*wp); });
    NameThread(w->thread, "lf-worker-" + std::to_string(wp->index));
  }
  return true;
}

void WorkerPool::Reconfigure(const MergerOptions& merger, std::vector<SyslogParser::Options> inputs,
                             bool event_time) {
  auto settings = std::make_unique<Shared::Settings>();
  for (const auto& in : inputs) settings->parsers.emplace_back(in);
  settings->merger = merger;
  settings->event_time = event_time;
  shared_->Publish(std::move(settings));
}

void WorkerPool::Run(Worker& w) {
  Batch* items[kDequeueBulk];
  Shared::SettingsPtr settings;
  shared_->UpdateSettings(settings);
  w.settings_version = settings->version;
  SubmitOutput(w);  // learns which encodings the sinks want
  TimeUs last_flush = WallClockNowUs();
  TimeUs last_flush_time = INT64_MIN;  // the merger clock of the latest Flush
  auto publish_stats = [&] {
    const MergerStats& s = w.merger->stats();
    *w.lines += s.lines - w.last_stats.lines;
    *w.merged += s.lines_merged - w.last_stats.lines_merged;
    *w.evicted += s.groups_evicted - w.last_stats.groups_evicted;
    *w.closed_memory += s.groups_closed_memory - w.last_stats.groups_closed_memory;
    *w.clock_backwards += s.clock_backwards - w.last_stats.clock_backwards;
    w.last_stats = s;
    for (int k = 0; k < kEventKinds; ++k) {
      if (w.events_since[k] != 0) *w.events[k] += std::exchange(w.events_since[k], 0);
    }
    for (int o = 0; o < static_cast<int>(ParseOutcome::kCount_); ++o) {
      if (w.parse_since[o] != 0) *w.parse[o] += std::exchange(w.parse_since[o], 0);
    }
    w.open_groups.store(w.merger->open_groups());
  };
  auto flush_time = [&](TimeUs wall) {
    if (!settings->event_time || w.event_clock == INT64_MIN) return wall;
    return w.event_clock + (wall - w.event_clock_wall);
  };
  while (true) {
    const std::size_t n = w.queue.wait_dequeue_bulk_timed(
        items, kDequeueBulk, std::chrono::microseconds(options_.flush_interval_us));
    shared_->UpdateSettings(settings);
    if (settings->version != w.settings_version) {
      w.settings_version = settings->version;
      MergerOptions mo = settings->merger;
      w.merger->Reconfigure(std::move(mo), w.encoder);
    }
    for (std::size_t i = 0; i < n; ++i) {
      Batch* b = items[i];
      if (b->checkpoint != nullptr) {
        StartCheckpoint(w, *b, flush_time(WallClockNowUs()));
        delete b;
        continue;
      }
      const SyslogParser& parser = settings->parser(b->input);
      for (const LogRecordView& line : b->views) {
        if (b->parsed) {
          line.CopyTo(w.record);
        } else {
          parser.Parse(line.raw, b->arrival_us, w.record);
          w.record.origin = line.origin;
        }
        ++w.parse_since[static_cast<int>(w.record.outcome)];
        if (b->scope_salt != 0) NoteSalt(w, settings->merger.scope, b->scope_salt);
        TimeUs t = b->arrival_us;
        if (settings->event_time) {
          t = w.record.EventTime();
          if (t > w.event_clock) w.event_clock = t, w.event_clock_wall = b->arrival_us;
        }
        Fold(w, w.record, t);
      }
      w.pending.fetch_sub(b->views.size());
      // Released once the batch's events are in the sinks (below), for Settled.
      const std::shared_ptr<QueueShare> share = std::exchange(b->share, nullptr);
      const std::size_t batch_lines = b->views.size();
      if (budget_ != nullptr) {
        budget_->Add(MemoryBudget::Part::kQueued, -b->accounted);
        w.folded_since_measure += b->bytes.size();
        KeepGroupsInBudget(w, false);
      }
      if (b->seq != 0) NoteJournalBatch(w, b->seq, b->prev_seq);
      // A recycled batch keeps its buffers' capacity, so an unbounded or large free list is
      // memory that only grows: every burst that outran the list left new batches behind,
      // each as large as the biggest delivery it ever held (the soak saw the live heap climb
      // ~4 MB/min this way). A few small ones cover the steady state; the rest are freed.
      if (w.free_batches.size_approx() < kFreeBatchesKept &&
          b->bytes.capacity() <= kBatchBytesKept &&
          b->views.capacity() * sizeof(LogRecordView) <= kBatchBytesKept * 2) {
        w.free_batches.enqueue(b);
      } else {
        delete b;
      }
      // Each batch's events leave at once rather than after the whole round: a new
      // message's `first` event must not wait behind up to kDequeueBulk batches.
      if (!w.ndjson.empty() || !w.syslog.empty() || w.RoutesPending()) SubmitOutput(w);
      if (share != nullptr) share->Release(batch_lines);
    }
    const TimeUs now = WallClockNowUs();
    if (n == 0 || now - last_flush >= options_.flush_interval_us) {
      last_flush_time = flush_time(now);
      w.merger->Flush(last_flush_time, w.encoder);
      last_flush = now;
      if (budget_ != nullptr) KeepGroupsInBudget(w, true);
    }
    w.tracker.MaybePublish(*w.merger, now);
    SubmitOutput(w);
    if (!w.checkpoints.empty()) AdvanceCheckpoints(w, last_flush_time);
    publish_stats();
    if (state_ != nullptr) MaybeCheckpoint(w, now);
    if (has_waiters_.load() && w.pending.load() < options_.queue_capacity / 2 &&
        (budget_ == nullptr || budget_->IntakeAllowed(0))) {
      NotifyWritable();
    }
    if (stopping_.load() && n == 0 && w.pending.load() == 0) break;
  }
  w.merger->FlushAll(w.encoder);
  if (budget_ != nullptr)
    budget_->Add(MemoryBudget::Part::kGroups, -std::exchange(w.groups_bytes, 0));
  SubmitOutput(w);
  publish_stats();
  // The sinks drain after the pool stopped, so no pending checkpoint can be confirmed here.
  for (PendingCheckpoint& c : w.checkpoints) c.state->Finish(false);
  w.checkpoints.clear();
}

void WorkerPool::NoteSalt(Worker& w, const std::vector<ScopeField>& scope, std::uint32_t salt) {
  // Records of one scope go to one worker whatever their salt (routing is unsalted), so one
  // map per worker sees them all. Bounded: past a million scopes it starts over.
  constexpr std::size_t kMaxScopesTracked = 1 << 20;
  w.record.scope_salt = 0;
  const std::uint64_t unsalted = ScopeHash(w.record, scope);
  w.record.scope_salt = salt;
  if (w.salt_of_scope.size() >= kMaxScopesTracked) w.salt_of_scope.clear();
  const auto [it, added] = w.salt_of_scope.try_emplace(unsalted, salt);
  if (!added && it->second != salt) {
    ++*w.scope_other_salt;
    it->second = salt;
  }
}

// Folds one line. An allocation failure drops that line (counted) rather than the process,
// and takes back the bytes the line's events had begun to add to the output buffers, so no
// output ever gets a truncated event; the oldest group is closed to make room.
void WorkerPool::Fold(Worker& w, const LogRecord& record, TimeUs t) {
  const std::size_t ndjson_before = w.ndjson.size(), syslog_before = w.syslog.size();
  try {
    w.merger->Add(record, t, w.encoder);
  } catch (const std::bad_alloc&) {
    w.ndjson.resize(ndjson_before);
    w.syslog.resize(syslog_before);
    ++*w.dropped_memory;
    try {
      w.merger->CloseOldest(w.encoder);
    } catch (const std::bad_alloc&) {
      w.ndjson.resize(ndjson_before);
      w.syslog.resize(syslog_before);
    }
  }
}

// Measures the merger when it may have grown by 1/64 of the budget since it was last
// measured (or when asked, once a flush interval, if the budget is past 40 %), then closes
// least recently active groups while the budget is past its groups threshold. Each worker
// keeps at least 1/8 of the budget, shared between the workers, so that a full output
// buffer or queue does not wipe every window.
//
// A measure walks every open group: at 100 k groups (a flood of unique lines) that stalled
// the worker for tens of milliseconds every flush interval, the lines queued behind it with
// it (the adversarial bench's first-event p99). Far below the threshold, where the answer
// changes nothing, the folded-bytes step alone bounds how far the accounting can lag.
void WorkerPool::KeepGroupsInBudget(Worker& w, bool measure_now) {
  const std::uint64_t limit = budget_->limit();
  const std::uint64_t step = std::max<std::uint64_t>(limit / 64, 64 * 1024);
  const bool worth_it = measure_now && budget_->used() >= limit / 10 * 4;
  if (!worth_it && w.folded_since_measure < step) return;
  const auto usage = static_cast<std::int64_t>(w.merger->MemoryUsage());
  budget_->Add(MemoryBudget::Part::kGroups, usage - w.groups_bytes);
  w.groups_bytes = usage;
  w.folded_since_measure = 0;
  const auto floor = static_cast<std::int64_t>(limit / 8 / workers_.size());
  while (budget_->GroupsOverLimit() && w.groups_bytes > floor && w.merger->open_groups() > 0) {
    const auto freed = static_cast<std::int64_t>(w.merger->CloseOldest(w.encoder));
    budget_->Add(MemoryBudget::Part::kGroups, -freed);
    w.groups_bytes -= freed;
    if (w.ndjson.size() + w.syslog.size() >= 256 * 1024) SubmitOutput(w);
  }
}

void WorkerPool::Stop() {
  if (stopping_.exchange(true)) {
    for (auto& w : workers_) {
      if (w->thread.joinable()) w->thread.join();
    }
    return;
  }
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  if (state_ != nullptr) state_->Stop();
  NotifyWritable();
}

std::vector<std::shared_ptr<const GroupSnapshot>> WorkerPool::WatchGroups(TimeUs now_us) {
  std::vector<std::shared_ptr<const GroupSnapshot>> out;
  for (auto& w : workers_) {
    w->tracker.Watch(now_us);
    out.push_back(w->tracker.Latest());
  }
  return out;
}

std::size_t WorkerPool::queued_lines() const {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w->pending.load();
  return n;
}

std::size_t WorkerPool::retained_settings() const {
  return shared_->live_settings->load(std::memory_order_relaxed);
}

std::size_t WorkerPool::retained_batches() const {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w->free_batches.size_approx();
  return n;
}

std::size_t WorkerPool::open_groups() const {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w->open_groups.load();
  return n;
}

}  // namespace logfold
