// Fuzz target: the journal segment reader. Never crashes or reads out of bounds; a segment
// ends in exactly one of end / torn tail / corruption; every record it returns re-encodes to
// exactly the bytes it was read from. The last input byte chooses: odd, the rest is a segment
// as found on disk; even, the rest is split into payloads (each prefixed by a length byte)
// that get a valid header, lengths and checksums, so the fuzzer reaches the record parser.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/state/binary_codec.h"
#include "daemon/state/journal_file.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size - 1);
  std::string segment;
  if (data[size - 1] % 2 == 0) {
    namespace codec = logfold::state_codec;
    logfold::AppendJournalHeader({7, 2}, segment);
    while (!input.empty()) {
      const std::size_t n =
          std::min<std::size_t>(static_cast<unsigned char>(input[0]), input.size() - 1);
      const std::string_view payload = input.substr(1, n);
      input.remove_prefix(1 + n);
      codec::PutU32(segment, static_cast<std::uint32_t>(payload.size()));
      codec::PutU32(segment, codec::Crc32(payload));
      segment.append(payload);
    }
    input = segment;
  }
  logfold::JournalReader reader(input);
  logfold::JournalSegmentHeader header;
  if (!reader.ReadHeader(header).empty()) return 0;
  FUZZ_CHECK(header.workers > 0, "a valid header names its workers");
  logfold::JournalRecord record;
  std::size_t before = reader.valid_bytes();
  while (true) {
    const auto status = reader.Next(record);
    if (status != logfold::JournalReader::Status::kRecord) {
      FUZZ_CHECK(reader.valid_bytes() == before, "a failed read consumes nothing");
      FUZZ_CHECK(status == logfold::JournalReader::Status::kEnd || !reader.error().empty(),
                 "a torn or corrupt segment says why");
      FUZZ_CHECK(status != logfold::JournalReader::Status::kEnd || before == input.size(),
                 "the end is the end of the bytes");
      break;
    }
    std::string again;
    logfold::AppendJournalRecord(record.seq, record.input, record.arrival_us, record.lines, again);
    FUZZ_CHECK(input.substr(before, reader.valid_bytes() - before) == again,
               "a record re-encodes to its bytes");
    before = reader.valid_bytes();
  }
  return 0;
}
