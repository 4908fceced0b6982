// Journal segment format: record encoder and checked reader (see journal_file.h).
#include "daemon/state/journal_file.h"

#include "daemon/state/binary_codec.h"

namespace logfold {
namespace {

using namespace state_codec;

constexpr std::string_view kMagic = "LFJN";
constexpr std::size_t kRecordPrefix = 8;              // length, CRC
constexpr std::size_t kPayloadFixed = 8 + 4 + 8 + 4;  // seq, input, arrival, count

}  // namespace

void AppendJournalHeader(const JournalSegmentHeader& header, std::string& out) {
  const std::size_t at = out.size();
  out.append(kMagic);
  PutU32(out, kJournalVersion);
  PutU64(out, header.generation);
  PutU32(out, header.workers);
  PutU32(out, Crc32(std::string_view(out).substr(at)));
}

void AppendJournalRecord(std::uint64_t seq, std::uint32_t input, TimeUs arrival_us,
                         std::span<const std::string_view> lines, std::string& out) {
  const std::size_t at = out.size();
  PutU32(out, 0);
  PutU32(out, 0);
  PutU64(out, seq);
  PutU32(out, input);
  PutU64(out, static_cast<std::uint64_t>(arrival_us));
  PutU32(out, static_cast<std::uint32_t>(lines.size()));
  for (std::string_view l : lines) {
    PutU32(out, static_cast<std::uint32_t>(l.size()));
    out.append(l);
  }
  const std::string_view payload = std::string_view(out).substr(at + kRecordPrefix);
  SetU32(out, at, static_cast<std::uint32_t>(payload.size()));
  SetU32(out, at + 4, Crc32(payload));
}

std::string JournalReader::ReadHeader(JournalSegmentHeader& header) {
  Reader in(bytes_);
  std::string_view magic;
  std::uint32_t version = 0, workers = 0, crc = 0;
  std::uint64_t generation = 0;
  if (!in.GetBytes(4, magic) || magic != kMagic) return "not a journal segment (bad magic)";
  if (!in.GetU32(version) || !in.GetU64(generation) || !in.GetU32(workers) || !in.GetU32(crc)) {
    return "truncated segment header";
  }
  if (crc != Crc32(bytes_.substr(0, kJournalHeaderSize - 4))) return "header checksum mismatch";
  if (version != kJournalVersion) return "unsupported version " + std::to_string(version);
  if (workers == 0) return "worker count 0";
  header.generation = generation;
  header.workers = workers;
  pos_ = kJournalHeaderSize;
  return "";
}

JournalReader::Status JournalReader::Next(JournalRecord& record) {
  if (pos_ < kJournalHeaderSize) {
    error_ = "header not read";
    return Status::kCorrupt;
  }
  const std::string_view rest = bytes_.substr(pos_);
  if (rest.empty()) return Status::kEnd;
  Reader in(rest);
  std::uint32_t length = 0, crc = 0;
  std::string_view payload;
  if (!in.GetU32(length) || !in.GetU32(crc) || !in.GetBytes(length, payload)) {
    error_ = "incomplete last record";
    return Status::kTornTail;
  }
  if (Crc32(payload) != crc) {
    error_ = "record checksum mismatch at byte " + std::to_string(pos_);
    return Status::kCorrupt;
  }
  Reader p(payload);
  std::uint32_t count = 0;
  std::uint64_t arrival = 0;
  if (payload.size() < kPayloadFixed || !p.GetU64(record.seq) || !p.GetU32(record.input) ||
      !p.GetU64(arrival) || !p.GetU32(count)) {
    error_ = "record too short at byte " + std::to_string(pos_);
    return Status::kCorrupt;
  }
  record.arrival_us = static_cast<TimeUs>(arrival);
  record.lines.clear();
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t len = 0;
    std::string_view line;
    if (!p.GetU32(len) || !p.GetBytes(len, line)) {
      error_ = "record lines overrun its length at byte " + std::to_string(pos_);
      return Status::kCorrupt;
    }
    record.lines.push_back(line);
  }
  if (!p.empty()) {
    error_ = "record has bytes after its lines at byte " + std::to_string(pos_);
    return Status::kCorrupt;
  }
  pos_ += kRecordPrefix + length;
  return Status::kRecord;
}

}  // namespace logfold
