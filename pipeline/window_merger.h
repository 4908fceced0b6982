// WindowMerger: folds near-duplicate lines into groups within a sliding time window and emits
// events (first occurrence at once, summaries when a group closes or is held too long).
// Synchronous and single-threaded; time is passed in, never read from a clock.
#ifndef LOGFOLD_PIPELINE_WINDOW_MERGER_H_
#define LOGFOLD_PIPELINE_WINDOW_MERGER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pipeline/event.h"
#include "pipeline/fingerprinter.h"
#include "pipeline/log_record.h"
#include "pipeline/sibling_table.h"
#include "pipeline/slot_stats.h"
#include "pipeline/tokenizer.h"

namespace logfold {

// Record fields that can make up a group's scope: lines only merge within the same scope.
enum class ScopeField : std::uint8_t { kHost, kApp, kProcId, kMsgId, kSeverity, kFacility };

struct MergerOptions {
  // Hamming distance within which a line's fingerprint finds candidate groups (0..31).
  int max_distance = 4;
  TimeUs window_us = 10'000'000;     // a group closes after this long without a new line
  TimeUs max_hold_us = 60'000'000;   // a group that keeps receiving is summarised this often
  std::size_t max_groups = 100'000;  // open groups; when full the least recently active closes
  std::vector<ScopeField> scope = {ScopeField::kHost, ScopeField::kApp};
  std::size_t max_summary_hosts = 16;  // hosts listed in a summary when host is not in scope
  bool annotate = false;               // emit every line with its group instead of folding
  // Structural confirmation: a candidate group is joined only if the line aligns with its
  // template token by token, every differing token looks variable, and no protected word
  // differs. Off: the nearest candidate within max_distance is joined (plain SimHash).
  bool confirm = true;
  // Finds the application's own header at the start of each message (timestamp, level,
  // thread, logger; pipeline/message_header.h) and leaves it out of the fingerprint and
  // template. The level keeps lines apart instead: the same message at INFO and at FATAL is
  // two events. Events carry the level and logger.
  bool infer_header = true;
  // Words whose change must never merge two lines (compared case-insensitively).
  std::vector<std::string> protected_words = DefaultProtectedWords();
  // Words after which a plain word is taken as a value that may vary ("user alice"),
  // compared case-insensitively. Values after '=' or ':', or quoted, need no key.
  std::vector<std::string> value_keys = DefaultValueKeys();
  // Learned from the stream: a word position where otherwise-identical lines of one scope
  // (same token count, the same token everywhere else) have shown at least this many
  // distinct words, most of them not repeating, is a variable; such lines fold into one
  // group with a slot there. Fewer values (an enumeration: ACTION_DOWN / ACTION_UP) keep
  // splitting, and a protected word never takes the slot. 0 turns it off; otherwise 3..8.
  std::size_t variable_after_values = 6;
  Tokenizer::Options tokenizer;
  FeatureWeights weights;
  std::uint64_t id_seed = 0;  // mixed into group ids, so shards of one daemon never collide

  // Every field, so that a reload notices any change (EngineConfig compares with this).
  bool operator==(const MergerOptions&) const = default;

  static std::vector<std::string> DefaultProtectedWords();
  static std::vector<std::string> DefaultValueKeys();
};

// 64-bit hash of a record's scope key: lines merge only when it is equal. Stable for a given
// field list, so a daemon can route each scope to the worker that owns it.
std::uint64_t ScopeHash(const LogRecord& record, const std::vector<ScopeField>& scope);
std::uint64_t ScopeHash(const LogRecordView& record, const std::vector<ScopeField>& scope);

struct MergerStats {
  std::uint64_t lines = 0;         // lines added
  std::uint64_t lines_merged = 0;  // lines that joined an existing group
  std::uint64_t groups_opened = 0;
  std::uint64_t groups_closed = 0;
  std::uint64_t groups_evicted = 0;        // closed early because max_groups was reached
  std::uint64_t groups_closed_memory = 0;  // closed early by CloseOldest (memory budget)
  std::uint64_t events_first = 0;
  std::uint64_t events_summary = 0;
  std::uint64_t events_annotate = 0;
  std::uint64_t events_new_value = 0;  // notices of a new value in an enumeration-like slot
  std::uint64_t clock_backwards = 0;   // Add/Flush called with a time before the latest seen
  std::uint64_t exact_hits = 0;        // lines settled by the exact masked-shape lookup
  std::uint64_t candidates_checked = 0;
};

// How the latest line was settled, for `logfold explain` and debugging.
struct MergeDecision {
  enum Path : std::uint8_t { kNew, kExact, kIndex, kBucket, kSibling };
  Path path = kNew;
  std::string reason;             // why it joined, or the last candidate's rejection
  std::uint32_t candidates = 0;   // groups confirmed or rejected
  std::uint64_t fingerprint = 0;  // the line's
  std::uint64_t group_id = 0;     // joined group (path != kNew)
  std::uint64_t group_fingerprint = 0;
  int distance = 0;  // Hamming distance line/group
  // Stream-learned evidence for a line that found no group by its template: the word
  // position (of the line's tokens) whose otherwise-identical lines in this scope have shown
  // the most distinct values, and how many (-1 / 0 when no position had any).
  int sibling_position = -1;
  std::uint32_t sibling_values = 0;
};

// One open group as a checkpoint saves it and ImportGroup takes it back: everything the
// group's later events depend on. Views are valid only during the ExportGroups callback (or
// the ImportGroup call).
struct GroupState {
  std::uint64_t id = 0;
  std::uint64_t scope = 0;  // ScopeHash of its lines under the options it was opened with
  std::uint64_t count_total = 0, count_since = 0;
  LineOrigin since_origin;                         // of the first line counted in count_since
  TimeUs first_seen_us = 0, last_seen_us = 0;      // event times
  TimeUs last_activity_us = 0, hold_start_us = 0;  // merger clock (window and max_hold)
  std::int32_t max_distance = 0;
  // Template flags per token of first->message (the tokenizer's tokens): which positions
  // varied. Opaque to everyone but the merger.
  std::span<const std::uint8_t> token_flags;
  const LogRecord* first = nullptr;  // the group's first line
  const LogRecord* last = nullptr;   // the latest line that joined; null if none did
  std::span<const std::string> hosts;
  bool hosts_truncated = false;
  // Statistics of the template's variable slots, by ascending token position. (Where the
  // first line's message proper starts is not saved: ImportGroup infers the header again.)
  std::span<const SlotStats> slots;
  // Statistics of the peer endpoints that opened its lines (Event::peer); null if none.
  const SlotStats* peer = nullptr;
};

// What the merger has learned from the stream besides its groups, as a checkpoint saves it:
// the evidence that word positions are free arguments (SiblingTable) and the words a scope
// wrote as values (ValueWords). Without it a restarted merger folds like a fresh one until it
// has learned again, and an event whose lines folded by that evidence splits once.
struct LearnedEvidence {
  // MergerOptions::variable_after_values it was learned under: the entries' `variable`
  // verdicts hold only for the same threshold.
  std::uint32_t variable_after_values = 0;
  std::vector<SiblingTable::Entry> siblings;  // least recently used first
  std::vector<std::uint64_t> value_words;     // ValueWords keys
  void Clear() {
    siblings.clear();
    value_words.clear();
  }
};

// One open group as WindowMerger::VisitOpenGroups shows it; the views are valid until the
// merger next adds, flushes or reconfigures.
struct OpenGroupInfo {
  std::uint32_t handle = 0;  // names the group to OpenGroupTemplate until the merger next changes
  std::uint64_t id = 0;
  std::uint64_t count_total = 0;
  TimeUs first_seen_us = 0, last_seen_us = 0;
  std::string_view host, app;  // of the group's first line
};

class WindowMerger {
 public:
  explicit WindowMerger(MergerOptions options);
  ~WindowMerger();
  WindowMerger(const WindowMerger&) = delete;
  WindowMerger& operator=(const WindowMerger&) = delete;

  // Adds one line that arrived at `now_us` (closing what is due first). Time that goes
  // backwards is treated as the latest time seen (and counted).
  void Add(const LogRecord& record, TimeUs now_us, EventSink& sink);

  // Emits what is due at `now_us`: summaries of groups idle for `window`, and periodic
  // summaries of groups held for `max_hold`. A group idle for exactly `window` closes.
  void Flush(TimeUs now_us, EventSink& sink);

  // Closes every open group, emitting its summary (shutdown).
  void FlushAll(EventSink& sink);
  // Closes every open group whose lines carry LogRecord::scope_salt `salt` (a Kafka partition
  // that moves to another consumer), emitting their summaries (reason shutdown). Walks every
  // open group.
  void FlushSalt(std::uint32_t salt, EventSink& sink);

  // Applies new options without dropping open groups. If the scope fields change, open
  // groups are flushed first (they were keyed by the old scope).
  void Reconfigure(MergerOptions options, EventSink& sink);

  // Calls `visit` once per open group, oldest activity first (for checkpoints; allocates
  // nothing once its scratch has grown).
  void ExportGroups(const std::function<void(const GroupState&)>& visit);
  // Opens a group from a checkpoint. `resume`: it goes on folding (the options that key
  // groups must be those it was exported under); otherwise its summary goes out at once
  // with reason kRecovered and it closes. A group whose flags do not match its first line's
  // tokens keeps its counts but loses its <*> positions, and is summarised at once.
  void ImportGroup(const GroupState& group, bool resume, EventSink& sink);
  // Group ids are derived from a counter: a restored merger continues it, so ids of new
  // groups do not repeat those of restored ones.
  std::uint64_t id_counter() const;
  void RestoreIdCounter(std::uint64_t counter);
  // Fills `out` with the stream-learned evidence (for checkpoints; reuses its capacity).
  void ExportLearned(LearnedEvidence& out) const;
  // Takes evidence exported by a merger with the same grouping options back, on top of what
  // this one has learned; ignored when it was learned under another variable_after_values.
  void ImportLearned(const LearnedEvidence& evidence);

  // The earliest time at which Flush would emit something; INT64_MAX when nothing is open.
  TimeUs NextDeadline() const;

  std::size_t open_groups() const;
  const MergeDecision& last_decision() const;
  // Whether last_decision() names, for a line that opened a group, why the last candidate
  // the cheap checks ruled out did not fit (off by default). Finding that reason runs the full
  // match against that candidate, a cold group, for every such line: in a flood of unique
  // lines that is every line, and only `logfold explain` reads it.
  void ExplainRejections(bool on);
  const MergerStats& stats() const;
  const MergerOptions& options() const;
  // Approximate heap bytes held for open groups (samples included).
  std::size_t MemoryUsage() const;

  // Closes the least recently active group now (its summary says reason "memory") and
  // returns the bytes its own blocks held, by which MemoryUsage() drops at least (its index
  // entries go too); 0 when no group is open.
  std::size_t CloseOldest(EventSink& sink);
  // Visits every open group. It walks them all: call it from the owning thread, and rarely
  // (the live view's snapshots, not per line).
  void VisitOpenGroups(const std::function<void(const OpenGroupInfo&)>& visit) const;
  // The template of the open group `handle` names, as its events show it. Valid only until the
  // merger next adds, flushes or reconfigures.
  std::string OpenGroupTemplate(std::uint32_t handle);
  // The slot statistics of the open group `handle` names, as its summaries show them (empty
  // when no position varied yet). Valid until the next call or the merger next changes.
  std::span<const SlotSummary> OpenGroupSlots(std::uint32_t handle);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_WINDOW_MERGER_H_
