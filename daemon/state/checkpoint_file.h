// The on-disk format of one worker's open groups (a checkpoint), its writer and its checked
// reader. Part daemon/state; depends on pipeline/ and zlib only, so the fuzz target links it alone.
#ifndef LOGFOLD_DAEMON_STATE_CHECKPOINT_FILE_H_
#define LOGFOLD_DAEMON_STATE_CHECKPOINT_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/log_record.h"
#include "pipeline/window_merger.h"

namespace logfold {

// Layout: "LFCK", format version (u32), body length (u64), CRC-32 of the body (u32), body.
// The body is a sequence of fields, each a tag (u16), a length (u32) and that many bytes;
// integers are little-endian and 8 bytes wide. A group is a field whose bytes are its own
// fields, and so are its two sample records and its slot statistics (tag 15: position, total,
// the distinct-count bits, the kept values; tag 17 the same for the peer endpoints' statistics).
// The merger's stream-learned evidence is one field (tag 17) holding its threshold, one packed
// record per sibling entry and the value words' keys as one packed array. A reader skips tags it
// does not know and keeps defaults for fields that are absent, so a later version adds fields
// (per-slot statistics, say) under new tags without breaking older files; kCheckpointVersion
// changes only for an incompatible layout.
inline constexpr std::uint32_t kCheckpointVersion = 1;

struct CheckpointHeader {
  std::uint32_t worker = 0;   // which worker wrote it
  std::uint32_t workers = 1;  // how many workers the daemon had (routing by scope % workers)
  // The options that key groups (scope, tokenizer, weights, annotate) as one hash: groups
  // resume folding only under the same key.
  std::uint64_t settings_key = 0;
  std::uint64_t id_counter = 0;  // WindowMerger::id_counter
  TimeUs written_us = 0;         // wall clock when the snapshot was taken
  // Journal mode: the journal generation these positions are in, every record up to
  // `journal_watermark` that had lines for this worker is in the groups, and so are the
  // later ones listed in `journal_done` (taken out of order).
  std::uint64_t journal_generation = 0;
  std::uint64_t journal_watermark = 0;
  std::vector<std::uint64_t> journal_done;
  // Summary logs (below) of this epoch and later may record summaries the groups here do not
  // reflect yet; earlier ones are redundant.
  std::uint64_t summary_epoch = 0;
  bool operator==(const CheckpointHeader&) const = default;
};

// A group read back from a checkpoint, owning its data.
struct SavedGroup {
  std::uint64_t id = 0, scope = 0, count_total = 0, count_since = 0;
  LineOrigin since_origin;
  TimeUs first_seen_us = 0, last_seen_us = 0, last_activity_us = 0, hold_start_us = 0;
  std::int32_t max_distance = 0;
  std::vector<std::uint8_t> token_flags;
  LogRecord first, last;
  bool has_last = false;
  std::vector<std::string> hosts;
  bool hosts_truncated = false;
  std::vector<SlotStats> slots;  // by ascending token position
  bool has_peer = false;
  SlotStats peer;  // the peer endpoints' statistics, when has_peer

  // Back to a default group, keeping the buffers' capacity.
  void Reset();
  // A view for WindowMerger::ImportGroup, valid while this object is unchanged.
  GroupState View() const;
  // An owned copy of an exported group.
  static SavedGroup From(const GroupState& g);
};

struct Checkpoint {
  CheckpointHeader header;
  std::vector<SavedGroup> groups;
  LearnedEvidence learned;  // empty when the file has none (an older writer's)
};

// Builds a checkpoint into a caller's buffer, reusing its capacity: Begin, AddGroup per
// group, Finish.
class CheckpointWriter {
 public:
  void Begin(const CheckpointHeader& header, std::string& out);
  void AddGroup(const GroupState& group);
  // At most once per checkpoint, after or between the groups.
  void AddLearned(const LearnedEvidence& learned);
  // Fills in the length and checksum; `out` then holds the complete file.
  void Finish();

 private:
  std::string* out_ = nullptr;
};

// A summary log: one fixed-size record per summary whose event the outputs have delivered,
// appended between checkpoints, so that a restart does not emit those lines a second time
// from a checkpoint taken before the summary. A record: group id (u64), count_total at the
// summary (u64), closed (u32), CRC-32 of those 20 bytes (u32).
struct SummaryRecord {
  std::uint64_t group_id = 0;
  std::uint64_t count_total = 0;
  bool closed = false;
  bool operator==(const SummaryRecord&) const = default;
};
inline constexpr std::size_t kSummaryRecordSize = 24;
void AppendSummaryRecord(const SummaryRecord& record, std::string& out);
// Appends the valid records of a log to `out`. Returns "" if every byte was a valid record,
// else why reading stopped (a torn last record, a checksum mismatch); what came before counts.
std::string ParseSummaryLog(std::string_view bytes, std::vector<SummaryRecord>& out);

// Parses a whole file. Returns "" on success, else why the bytes are not a valid checkpoint
// (bad magic, unknown version, truncated, checksum mismatch, malformed field); `out` is then
// unspecified. Never throws on any input.
std::string ParseCheckpoint(std::string_view bytes, Checkpoint& out);

// The same checks, for a checkpoint that holds exactly one group (an exactly-once changelog
// value): its header and its group, parsed into `group` reusing its buffers (a restore reads
// 100 000 of them). "" on success, else why not (also when it holds no or several groups).
std::string ParseSingleGroupCheckpoint(std::string_view bytes, CheckpointHeader& header,
                                       SavedGroup& group);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_STATE_CHECKPOINT_FILE_H_
