// The on-disk format of the journal (journal mode: every accepted line is written here, and
// fsynced, before it counts as accepted), its record encoder and its checked reader. Part
// daemon/state; depends on pipeline/ and zlib only, so the fuzz target links it alone.
#ifndef LOGFOLD_DAEMON_STATE_JOURNAL_FILE_H_
#define LOGFOLD_DAEMON_STATE_JOURNAL_FILE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/log_record.h"

namespace logfold {

// A segment: a header ("LFJN", version u32, generation u64, workers u32, CRC-32 of those 20
// bytes), then records. A record: payload length (u32), CRC-32 of the payload (u32), payload:
// sequence number (u64), input id (u32), arrival time (i64), line count (u32), then each line
// as its length (u32) and bytes. Little-endian throughout. One record is one delivery (the
// lines of one read, one datagram batch...), appended with one write.
inline constexpr std::uint32_t kJournalVersion = 1;
inline constexpr std::size_t kJournalHeaderSize = 4 + 4 + 8 + 4 + 4;

struct JournalSegmentHeader {
  std::uint64_t generation = 0;  // a daemon run's journal; checkpoints name theirs
  std::uint32_t workers = 1;     // worker count of the run that wrote it (line routing)
};

struct JournalRecord {
  std::uint64_t seq = 0;  // increasing within a generation, from 1
  std::uint32_t input = 0;
  TimeUs arrival_us = 0;
  std::vector<std::string_view> lines;  // into the segment's bytes
};

void AppendJournalHeader(const JournalSegmentHeader& header, std::string& out);
// Appends one record to `out` (capacity reused).
void AppendJournalRecord(std::uint64_t seq, std::uint32_t input, TimeUs arrival_us,
                         std::span<const std::string_view> lines, std::string& out);

// Reads a segment held in memory. Never throws and never reads past `bytes`, on any input.
class JournalReader {
 public:
  enum class Status {
    kRecord,    // `record` holds the next record
    kEnd,       // clean end of the segment
    kTornTail,  // the last record is incomplete: a write cut short by the crash
    kCorrupt,   // a checksum or structure error: nothing after it is trusted
  };
  explicit JournalReader(std::string_view bytes) : bytes_(bytes) {}
  // Returns "" or why the segment header is not valid.
  std::string ReadHeader(JournalSegmentHeader& header);
  Status Next(JournalRecord& record);
  // Bytes of the segment consumed by valid records (and the header).
  std::size_t valid_bytes() const { return pos_; }
  const std::string& error() const { return error_; }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_STATE_JOURNAL_FILE_H_
