// Fuzz target: the checkpoint (state file) and summary log readers. Never crash; an accepted
// checkpoint written back by CheckpointWriter parses to the same header, groups and learned
// evidence and writes the same bytes; the summary records read re-encode to the bytes they
// came from.
// The last input byte chooses: odd, the rest is a whole file as found on disk; even, the rest
// is a body that gets a valid prefix and checksum, so the fuzzer reaches the field parser.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/state/binary_codec.h"
#include "daemon/state/checkpoint_file.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool SameRecord(const logfold::LogRecord& a, const logfold::LogRecord& b) {
  return a.flavor == b.flavor && a.outcome == b.outcome && a.facility == b.facility &&
         a.severity == b.severity && a.has_timestamp == b.has_timestamp &&
         a.timestamp_us == b.timestamp_us && a.arrival_us == b.arrival_us &&
         a.hostname == b.hostname && a.app_name == b.app_name && a.tag == b.tag &&
         a.procid == b.procid && a.msgid == b.msgid && a.structured_data == b.structured_data &&
         a.message == b.message && a.json_fields == b.json_fields;
}

bool SameGroup(const logfold::SavedGroup& a, const logfold::SavedGroup& b) {
  return a.id == b.id && a.scope == b.scope && a.count_total == b.count_total &&
         a.count_since == b.count_since && a.since_origin == b.since_origin &&
         a.first_seen_us == b.first_seen_us && a.last_seen_us == b.last_seen_us &&
         a.last_activity_us == b.last_activity_us && a.hold_start_us == b.hold_start_us &&
         a.max_distance == b.max_distance && a.token_flags == b.token_flags &&
         SameRecord(a.first, b.first) && a.has_last == b.has_last &&
         (!a.has_last || SameRecord(a.last, b.last)) && a.hosts == b.hosts &&
         a.hosts_truncated == b.hosts_truncated;
}

bool SameLearned(const logfold::LearnedEvidence& a, const logfold::LearnedEvidence& b) {
  if (a.variable_after_values != b.variable_after_values || a.value_words != b.value_words ||
      a.siblings.size() != b.siblings.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.siblings.size(); ++i) {
    const logfold::SiblingTable::Entry &x = a.siblings[i], &y = b.siblings[i];
    if (x.key != y.key || x.anchor_value != y.anchor_value || x.sightings != y.sightings ||
        x.distinct != y.distinct || x.variable != y.variable ||
        !std::equal(x.values, x.values + x.distinct, y.values)) {
      return false;
    }
  }
  return true;
}

std::string Write(const logfold::Checkpoint& c) {
  std::string out;
  logfold::CheckpointWriter w;
  w.Begin(c.header, out);
  for (const logfold::SavedGroup& g : c.groups) w.AddGroup(g.View());
  w.AddLearned(c.learned);
  w.Finish();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size - 1);
  std::vector<logfold::SummaryRecord> records;
  const std::string why = logfold::ParseSummaryLog(input, records);
  std::string encoded;
  for (const auto& r : records) logfold::AppendSummaryRecord(r, encoded);
  FUZZ_CHECK(input.substr(0, encoded.size()) == encoded, "summary records re-encode");
  FUZZ_CHECK(why.empty() == (encoded.size() == input.size()), "a short read says why");
  std::string file;
  if (data[size - 1] % 2 == 0) {
    namespace codec = logfold::state_codec;
    file = "LFCK";
    codec::PutU32(file, logfold::kCheckpointVersion);
    codec::PutU64(file, input.size());
    codec::PutU32(file, codec::Crc32(input));
    file.append(input);
    input = file;
  }
  logfold::Checkpoint c;
  if (!logfold::ParseCheckpoint(input, c).empty()) return 0;
  const std::string written = Write(c);
  logfold::Checkpoint again;
  FUZZ_CHECK(logfold::ParseCheckpoint(written, again).empty(), "a written checkpoint parses");
  FUZZ_CHECK(again.header == c.header, "header survives a round trip");
  FUZZ_CHECK(again.groups.size() == c.groups.size(), "group count survives a round trip");
  for (std::size_t i = 0; i < c.groups.size(); ++i) {
    FUZZ_CHECK(SameGroup(again.groups[i], c.groups[i]), "group survives a round trip");
  }
  FUZZ_CHECK(SameLearned(again.learned, c.learned), "learned evidence survives a round trip");
  FUZZ_CHECK(Write(again) == written, "writing is a fixed point");
  return 0;
}
