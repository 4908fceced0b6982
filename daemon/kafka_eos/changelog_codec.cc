// The exactly-once changelog's keys and values: a marker is "LFKM", three u64 and a CRC-32 of
// them; a group is a checkpoint (daemon/state/checkpoint_file.h) holding that group alone.
#include "daemon/kafka_eos/changelog_codec.h"

#include "daemon/state/binary_codec.h"

namespace logfold {

namespace {
constexpr std::string_view kMarkerMagic = "LFKM";
constexpr std::size_t kMarkerSize = 4 + 3 * 8 + 4;
}  // namespace

std::string ChangelogPrefix(std::string_view topic, std::int32_t partition) {
  std::string prefix(topic);
  prefix += '/';
  prefix += std::to_string(partition);
  prefix += '/';
  return prefix;
}

std::string ChangelogGroupKey(std::string_view prefix, std::uint64_t group_id) {
  return std::string(prefix) + std::to_string(group_id);
}

std::string ChangelogMarkerKey(std::string_view prefix) { return std::string(prefix) + "#"; }

bool IsMarkerKey(std::string_view key, std::string_view prefix) {
  return key.size() == prefix.size() + 1 && key.substr(0, prefix.size()) == prefix &&
         key.back() == '#';
}

void EncodeMarker(const ChangelogMarker& marker, std::string& out) {
  using namespace state_codec;
  out.assign(kMarkerMagic);
  PutU64(out, static_cast<std::uint64_t>(marker.next_offset));
  PutU64(out, marker.id_counter);
  PutU64(out, marker.settings_key);
  PutU32(out, Crc32(std::string_view(out).substr(4)));
}

std::string DecodeMarker(std::string_view bytes, ChangelogMarker& out) {
  using namespace state_codec;
  if (bytes.size() != kMarkerSize || bytes.substr(0, 4) != kMarkerMagic) {
    return "not a changelog marker";
  }
  Reader in(bytes.substr(4));
  std::uint64_t offset = 0;
  std::uint32_t crc = 0;
  if (!in.GetU64(offset) || !in.GetU64(out.id_counter) || !in.GetU64(out.settings_key) ||
      !in.GetU32(crc)) {
    return "truncated changelog marker";
  }
  if (crc != Crc32(bytes.substr(4, 24))) return "changelog marker checksum mismatch";
  out.next_offset = static_cast<std::int64_t>(offset);
  return "";
}

void EncodeGroup(const GroupState& group, std::uint64_t settings_key, CheckpointWriter& writer,
                 std::string& out) {
  CheckpointHeader header;
  header.settings_key = settings_key;
  writer.Begin(header, out);
  writer.AddGroup(group);
  writer.Finish();
}

std::string DecodeGroup(std::string_view bytes, SavedGroup& out, std::uint64_t& settings_key) {
  CheckpointHeader header;
  if (std::string error = ParseSingleGroupCheckpoint(bytes, header, out); !error.empty()) {
    return error;
  }
  settings_key = header.settings_key;
  return "";
}

}  // namespace logfold
