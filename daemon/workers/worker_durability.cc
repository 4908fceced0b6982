// WorkerPool's crash durability through state/: restoring checkpointed groups and replaying the
// journal at start, periodic snapshots and summary logs, journal watermarks, the final commit.
#include <spdlog/spdlog.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "daemon/runtime/wall_clock.h"
#include "daemon/state/checkpoint_file.h"
#include "daemon/workers/worker_pool.h"
#include "daemon/workers/worker_pool_impl.h"

namespace logfold {
namespace {

// The options that decide which group a line joins as one hash: restored groups resume
// folding only when it is unchanged (else they are summarised at once, reason "recovered").
std::uint64_t GroupKeySettings(const MergerOptions& o) {
  // The version of how the merger keys groups: raised when that changes (2: the header's
  // level keys the scope), so that groups saved by an older build are not resumed.
  std::string key = "2|";
  for (ScopeField f : o.scope) key += static_cast<char>('a' + static_cast<int>(f));
  key += '|' + std::to_string(o.tokenizer.max_tokens) + '|' + std::to_string(o.annotate) + '|';
  key += std::to_string(o.weights.word) + '|' + std::to_string(o.weights.pairs);
  for (float w : o.weights.by_class) key += '|' + std::to_string(w);
  return XXH3_64bits(key.data(), key.size());
}

// Passes on the events of journal replay except summaries the outputs already received
// before the crash (logged, with the same or a later count_total): replay reproduces them at
// the same lines, and they must not go out twice.
class ReplaySink : public EventSink {
 public:
  ReplaySink(EventSink& next, const std::map<std::uint64_t, SummaryRecord>& delivered)
      : next_(next), delivered_(delivered) {}
  void OnEvent(const Event& e) override {
    if (e.kind == EventKind::kSummary) {
      const auto it = delivered_.find(e.group_id);
      if (it != delivered_.end() && e.count_total <= it->second.count_total) return;
    }
    next_.OnEvent(e);
  }

 private:
  EventSink& next_;
  const std::map<std::uint64_t, SummaryRecord>& delivered_;
};

// How long recovery waits for its events to reach the outputs before committing.
constexpr auto kRecoveryDeliveryTimeout = std::chrono::seconds(30);

}  // namespace

void WorkerPool::Recover(RecoveredState& recovered) {
  // Runs before the worker threads exist: the mergers are this thread's for now.
  for (auto& w : workers_) SubmitOutput(*w);  // learns which encodings the sinks want
  const std::size_t n = workers_.size();
  const std::uint64_t key = GroupKeySettings(options_.merger);
  std::uint64_t groups = 0, id_counter = 0;
  // Summaries the outputs received after a checkpoint was taken: the lines up to their
  // count_total are out already. Applied once the journal is replayed (the replayed lines
  // that joined such a group before its summary are among them), or at once to groups that
  // cannot resume folding.
  std::map<std::uint64_t, SummaryRecord> logged;  // group id -> its latest logged summary
  std::map<std::uint64_t, SummaryRecord> logged_resumed;
  for (logfold::Checkpoint& c : recovered.checkpoints) {
    const bool resume = c.header.settings_key == key;
    id_counter = std::max(id_counter, c.header.id_counter);
    // Learned evidence is keyed by scope like the groups: with as many workers as before it
    // goes back to the worker that learned it; otherwise to every worker (each finds its
    // scopes' entries there, the rest age out of its tables).
    if (resume) {
      if (c.header.workers == n) {
        workers_[c.header.worker]->merger->ImportLearned(c.learned);
      } else {
        for (auto& w : workers_) w->merger->ImportLearned(c.learned);
      }
    }
    logged.clear();
    for (const RecoveredState::SummaryLog& log : recovered.summary_logs) {
      if (log.worker != c.header.worker || log.epoch < c.header.summary_epoch) continue;
      for (const SummaryRecord& r : log.records) {
        SummaryRecord& latest = logged[r.group_id];
        if (r.count_total >= latest.count_total) latest = r;
      }
    }
    for (SavedGroup& g : c.groups) {
      const auto it = logged.find(g.id);
      if (it != logged.end() && it->second.count_total >= g.count_total) {
        if (resume) {
          logged_resumed[g.id] = it->second;
        } else if (it->second.closed) {
          continue;
        } else {
          g.count_total = it->second.count_total;
          g.count_since = 0;
        }
      }
      // To the worker this run's lines of the group go to (the saved scope is the merger's
      // own, which may mix in more than the routing scope, e.g. the header's level; routing
      // leaves a Kafka partition's salt out).
      const std::uint32_t salt = std::exchange(g.first.scope_salt, 0);
      Worker& w = *workers_[ScopeHash(g.first, options_.merger.scope) % n];
      g.first.scope_salt = salt;
      w.merger->ImportGroup(g.View(), resume, w.encoder);
      ++groups;
    }
  }
  for (auto& w : workers_) w->merger->RestoreIdCounter(id_counter);
  state_->recovered_groups() += groups;
  // Journalled lines: replayed unless the checkpoint of the worker that owned them (in the
  // run that wrote them) already holds them.
  std::uint64_t replayed = 0;
  const SyslogParser fallback{SyslogParser::Options{}};
  std::vector<SyslogParser> parsers;
  for (const auto& in : options_.inputs) parsers.emplace_back(in);
  LogRecord record;
  JournalRecord jr;
  for (const RecoveredState::Segment& seg : recovered.journal) {
    JournalReader reader(std::string_view(seg.bytes).substr(0, seg.valid_bytes));
    JournalSegmentHeader header;
    if (!reader.ReadHeader(header).empty()) continue;
    while (reader.Next(jr) == JournalReader::Status::kRecord) {
      const SyslogParser& parser = jr.input < parsers.size() ? parsers[jr.input] : fallback;
      for (std::string_view line : jr.lines) {
        parser.Parse(line, jr.arrival_us, record);
        const std::uint64_t scope = ScopeHash(record, options_.merger.scope);
        const std::uint32_t owner = static_cast<std::uint32_t>(scope % header.workers);
        bool held = false;
        for (const logfold::Checkpoint& c : recovered.checkpoints) {
          if (c.header.worker != owner || c.header.workers != header.workers) continue;
          if (c.header.journal_generation > header.generation) held = true;
          if (c.header.journal_generation == header.generation) {
            held = jr.seq <= c.header.journal_watermark ||
                   std::find(c.header.journal_done.begin(), c.header.journal_done.end(), jr.seq) !=
                       c.header.journal_done.end();
          }
        }
        if (held) continue;
        Worker& w = *workers_[scope % n];
        ++w.parse_since[static_cast<int>(record.outcome)];
        ReplaySink sink(w.encoder, logged_resumed);
        w.merger->Add(record, options_.event_time ? record.EventTime() : jr.arrival_us, sink);
        ++replayed;
      }
    }
  }
  state_->replayed_lines() += replayed;
  if (!logged_resumed.empty()) {
    // Rebuilt through export and import, the only way into a merger's groups.
    std::vector<SavedGroup> saved;
    for (auto& w : workers_) {
      saved.clear();
      w->merger->ExportGroups([&](const GroupState& g) { saved.push_back(SavedGroup::From(g)); });
      auto fresh = std::make_unique<WindowMerger>(w->merger->options());
      fresh->RestoreIdCounter(w->merger->id_counter());
      w->merger->ExportLearned(w->learned);
      fresh->ImportLearned(w->learned);
      for (SavedGroup& g : saved) {
        if (const auto it = logged_resumed.find(g.id); it != logged_resumed.end()) {
          const SummaryRecord& r = it->second;
          if (r.closed && g.count_total <= r.count_total) continue;  // nothing after it
          const std::uint64_t unsent =
              g.count_total > r.count_total ? g.count_total - r.count_total : 0;
          g.count_since = std::min(g.count_since, unsent);
          g.count_total = std::max(g.count_total, r.count_total);
        }
        fresh->ImportGroup(g.View(), true, w->encoder);
      }
      w->merger = std::move(fresh);
    }
  }
  for (auto& w : workers_) w->summaries_new.clear();  // the commit after recovery holds them
  const TimeUs now = WallClockNowUs();
  for (auto& w : workers_) {
    if (!options_.event_time) w->merger->Flush(now, w->encoder);
    SubmitOutput(*w);
  }
  if (groups > 0 || replayed > 0) {
    spdlog::info("state: restored {} open groups and replayed {} journalled lines from {}", groups,
                 replayed, state_->options().directory);
  }
  if (!WaitDelivered(std::chrono::steady_clock::now() + kRecoveryDeliveryTimeout)) {
    spdlog::warn("state: recovered events not all delivered after {} s; committing anyway",
                 kRecoveryDeliveryTimeout.count());
  }
}

bool WorkerPool::WaitDelivered(std::chrono::steady_clock::time_point deadline) {
  const auto sinks = shared_->GetSinks();
  std::vector<std::uint64_t> targets;
  for (const Output& o : *sinks) targets.push_back(o.sink->AcceptedMark());
  while (true) {
    bool all = true;
    for (std::size_t i = 0; i < sinks->size(); ++i) {
      all = all && (*sinks)[i].sink->Confirmed(targets[i]);
    }
    if (all) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void WorkerPool::Snapshot(Worker& w, TimeUs now) {
  CheckpointHeader h;
  // Summaries delivered from now on go to a new log, which a restart from this checkpoint
  // applies; the older logs become redundant once it is committed.
  h.summary_epoch = ++w.summary_epoch;
  if (w.log_summaries) state_->OpenSummaryLog(static_cast<std::uint32_t>(w.index), w.summary_epoch);
  h.worker = static_cast<std::uint32_t>(w.index);
  h.workers = static_cast<std::uint32_t>(workers_.size());
  h.settings_key = GroupKeySettings(w.merger->options());
  h.id_counter = w.merger->id_counter();
  h.written_us = now;
  h.journal_generation = state_->generation();
  // Records up to `completed` are all enqueued; if this worker has processed every batch
  // enqueued for it by then, none of them has lines it still lacks.
  const std::uint64_t completed = completed_seq_.load(std::memory_order_acquire);
  const std::uint64_t last = w.last_enqueued_seq.load(std::memory_order_acquire);
  h.journal_watermark = w.watermark >= last ? std::max(w.watermark, completed) : w.watermark;
  for (const auto& d : w.done_out_of_order) h.journal_done.push_back(d.second);
  w.snapshot_coverage = h.journal_watermark;
  w.checkpoint_writer.Begin(h, w.snapshot);
  w.merger->ExportGroups([&w](const GroupState& g) { w.checkpoint_writer.AddGroup(g); });
  w.merger->ExportLearned(w.learned);
  w.checkpoint_writer.AddLearned(w.learned);
  w.checkpoint_writer.Finish();
}

void WorkerPool::MaybeCheckpoint(Worker& w, TimeUs now) {
  // checkpoint_interval is the most a crash may lose: snapshots are taken every half of it,
  // leaving the rest for the events before it to be delivered and the file to be written and
  // fdatasynced, which takes hundreds of milliseconds on a busy disk.
  const TimeUs period = state_->options().checkpoint_interval_us / 2;
  const bool snapshot_due = !w.snapshot_pending && now - w.last_snapshot >= period;
  if (!snapshot_due && !w.snapshot_pending && w.summaries_waiting.empty() &&
      w.summaries_new.empty()) {
    return;
  }
  const auto sinks = shared_->AcquireSinks(w.index);
  struct Release {
    Shared& shared;
    std::size_t worker;
    ~Release() { shared.ReleaseSinks(worker); }
  } release{*shared_, w.index};
  // Called right after SubmitOutput: every event emitted so far is in the sinks' buffers.
  auto capture = [&](std::vector<std::pair<const Sink*, std::uint64_t>>& targets) {
    targets.clear();
    for (const Output& o : *sinks) targets.emplace_back(o.sink, o.sink->AcceptedMark());
  };
  auto delivered = [&](const std::vector<std::pair<const Sink*, std::uint64_t>>& targets) {
    for (const auto& [sink, position] : targets) {
      const bool current = std::any_of(sinks->begin(), sinks->end(),
                                       [&](const Output& o) { return o.sink == sink; });
      if (current && !sink->Confirmed(position)) return false;
    }
    return true;
  };
  if (!w.summaries_waiting.empty() && delivered(w.summaries_targets)) {
    w.summary_bytes.clear();
    for (const SummaryRecord& r : w.summaries_waiting) AppendSummaryRecord(r, w.summary_bytes);
    state_->AppendSummaryLog(static_cast<std::uint32_t>(w.index), w.summary_bytes);
    w.summaries_waiting.clear();
  }
  if (w.summaries_waiting.empty() && !w.summaries_new.empty()) {
    w.summaries_waiting.swap(w.summaries_new);
    capture(w.summaries_targets);
  }
  if (snapshot_due) {
    Snapshot(w, now);
    w.last_snapshot = now;
    capture(w.snapshot_targets);
    w.snapshot_pending = true;
  }
  if (w.snapshot_pending && delivered(w.snapshot_targets)) {
    state_->Offer(static_cast<std::uint32_t>(w.index), w.snapshot, w.snapshot_coverage,
                  w.summary_epoch);
    w.snapshot_pending = false;
  }
}

void WorkerPool::NoteJournalBatch(Worker& w, std::uint64_t seq, std::uint64_t prev_seq) {
  if (prev_seq != w.watermark) {
    w.done_out_of_order.emplace_back(prev_seq, seq);
    return;
  }
  w.watermark = seq;
  for (bool advanced = true; advanced;) {
    advanced = false;
    for (std::size_t i = 0; i < w.done_out_of_order.size(); ++i) {
      if (w.done_out_of_order[i].first != w.watermark) continue;
      w.watermark = w.done_out_of_order[i].second;
      w.done_out_of_order[i] = w.done_out_of_order.back();
      w.done_out_of_order.pop_back();
      advanced = true;
      break;
    }
  }
}

bool WorkerPool::CommitFinalState(std::string& error) {
  if (state_ == nullptr) return true;
  state_->Stop();
  std::vector<std::string> snapshots(workers_.size());
  const TimeUs now = WallClockNowUs();
  for (auto& w : workers_) {
    Snapshot(*w, now);
    snapshots[w->index].swap(w->snapshot);
  }
  return state_->CommitAll(snapshots, false, error);
}

}  // namespace logfold
