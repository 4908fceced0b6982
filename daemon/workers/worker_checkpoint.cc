// WorkerPool::Checkpoint (IngestTarget): markers queued behind an input's lines, answered once
// every group open at the marker was summarised and every sink confirmed its events.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "daemon/workers/worker_pool.h"
#include "daemon/workers/worker_pool_impl.h"

namespace logfold {

void WorkerPool::Checkpoint(bool close_all, std::function<void(bool)> done) {
  if (stopping_.load()) {
    done(false);
    return;
  }
  auto state = std::make_shared<CheckpointState>();
  state->remaining.store(workers_.size());
  state->done = std::move(done);
  QueueMarker(std::move(state), close_all, nullptr);
}

void WorkerPool::CloseSalted(std::vector<std::uint32_t> salts, std::function<void(bool)> done) {
  if (stopping_.load()) {
    done(false);
    return;
  }
  auto state = std::make_shared<CheckpointState>();
  state->remaining.store(workers_.size());
  state->done = std::move(done);
  QueueMarker(std::move(state), false,
              std::make_shared<const std::vector<std::uint32_t>>(std::move(salts)));
}

void WorkerPool::QueueMarker(std::shared_ptr<CheckpointState> state, bool close_all,
                             std::shared_ptr<const std::vector<std::uint32_t>> close_salts) {
  // Queued from the caller's thread, each marker follows every batch that thread queued
  // before (the queues keep one producer's items in order).
  for (auto& w : workers_) {
    auto* marker = new Batch;
    marker->checkpoint = state;
    marker->close_all = close_all;
    marker->close_salts = close_salts;
    w->queue.enqueue(marker);
  }
}

// Every line before the marker is folded. close_all summarises every open group now;
// otherwise each is summarised by max(window, max_hold) later on the merger's clock (idle
// for a window, or its periodic max_hold summary), whichever comes first.
void WorkerPool::StartCheckpoint(Worker& w, Batch& marker, TimeUs merger_now) {
  PendingCheckpoint c;
  c.state = marker.checkpoint;
  if (marker.close_all) {
    w.merger->FlushAll(w.encoder);
    if (budget_ != nullptr) KeepGroupsInBudget(w, true);
    // Every group is summarised now: the checkpoints still waiting for their windows are
    // covered too and need only the sinks' confirmation.
    for (PendingCheckpoint& earlier : w.checkpoints) earlier.due = INT64_MIN;
  } else if (marker.close_salts != nullptr) {
    // Those sources' groups are summarised now; the answer covers only their lines, so it
    // waits for no window (c.due stays INT64_MIN).
    for (const std::uint32_t salt : *marker.close_salts) w.merger->FlushSalt(salt, w.encoder);
  } else {
    const MergerOptions& m = w.merger->options();
    c.due = merger_now + std::max(m.window_us, m.max_hold_us);
  }
  w.checkpoints.push_back(std::move(c));
  SubmitOutput(w);
  AdvanceCheckpoints(w, INT64_MIN);
}

void WorkerPool::AdvanceCheckpoints(Worker& w, TimeUs last_flush_time) {
  const auto sinks = shared_->AcquireSinks(w.index);
  struct Release {
    Shared& shared;
    std::size_t worker;
    ~Release() { shared.ReleaseSinks(worker); }
  } release{*shared_, w.index};
  // Each checkpoint is answered on its own: a CloseSalted marker (due at once) must not wait
  // behind a periodic one that waits for its windows.
  for (PendingCheckpoint& c : w.checkpoints) {
    if (!c.marked || c.marks_for != sinks.get()) {
      // Marks are taken after the events of every group the checkpoint covers were handed
      // to the sinks (SubmitOutput ran since the flush); a reload's new sink list needs new
      // marks, which only delays the answer.
      if (c.due != INT64_MIN && last_flush_time < c.due) continue;
      if (stopping_.load() && c.due != INT64_MIN) continue;
      c.marks.clear();
      for (const Output& o : *sinks) c.marks.push_back(o.sink->AcceptedMark());
      c.marks_for = sinks.get();
      c.marked = true;
    }
    bool confirmed = true;
    for (std::size_t i = 0; i < sinks->size() && confirmed; ++i) {
      confirmed = (*sinks)[i].sink->Confirmed(c.marks[i]);
    }
    if (!confirmed) continue;
    c.state->Finish(true);
    c.state = nullptr;
  }
  w.checkpoints.erase(std::remove_if(w.checkpoints.begin(), w.checkpoints.end(),
                                     [](const PendingCheckpoint& c) { return c.state == nullptr; }),
                      w.checkpoints.end());
}

}  // namespace logfold
