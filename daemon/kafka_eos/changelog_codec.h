// The records of the exactly-once changelog topic: one per open group of an input partition
// (key "<topic>/<partition>/<group id>", value a one-group checkpoint, checksummed; a
// tombstone when the group closed) and one marker per partition (key "<topic>/<partition>/#",
// the offset committed with it and the merger's id counter).
#ifndef LOGFOLD_DAEMON_KAFKA_EOS_CHANGELOG_CODEC_H_
#define LOGFOLD_DAEMON_KAFKA_EOS_CHANGELOG_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/state/checkpoint_file.h"
#include "pipeline/window_merger.h"

namespace logfold {

// What a partition's marker says: the next offset to consume (committed in the same
// transaction), the merger's id counter and the settings key its groups were saved under.
struct ChangelogMarker {
  std::int64_t next_offset = -1;
  std::uint64_t id_counter = 0;
  std::uint64_t settings_key = 0;
  bool operator==(const ChangelogMarker&) const = default;
};

// "<topic>/<partition>/": every key of that partition starts with it.
std::string ChangelogPrefix(std::string_view topic, std::int32_t partition);
std::string ChangelogGroupKey(std::string_view prefix, std::uint64_t group_id);
std::string ChangelogMarkerKey(std::string_view prefix);
// The key's part after `prefix` is "#" (a marker).
bool IsMarkerKey(std::string_view key, std::string_view prefix);

void EncodeMarker(const ChangelogMarker& marker, std::string& out);
// "" on success, else why `bytes` is not a marker.
std::string DecodeMarker(std::string_view bytes, ChangelogMarker& out);

// A group's value, reusing `writer` and `out`'s capacity.
void EncodeGroup(const GroupState& group, std::uint64_t settings_key, CheckpointWriter& writer,
                 std::string& out);
// "" on success, else why `bytes` is not one group's value (a failed checksum included).
// Reuses `out`'s buffers.
std::string DecodeGroup(std::string_view bytes, SavedGroup& out, std::uint64_t& settings_key);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_KAFKA_EOS_CHANGELOG_CODEC_H_
