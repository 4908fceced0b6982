// Fuzz target: the disk-buffer reader. The input's front is written as a segment file (and
// its end, optionally, as the cursor file); DiskQueue must open it, hand out only records
// whose bytes occur in the file, and never crash. A well-formed segment built from the
// input's pieces must come back whole and in order.
#include <fuzzer/FuzzedDataProvider.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/outputs/disk_queue.h"
#include "daemon/runtime/metrics.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using logfold::DiskQueue;

const std::filesystem::path& Dir() {
  static const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("disk_queue_fuzz." + std::to_string(::getpid()));
  return dir;
}

void Write(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Opens the queue over the files in Dir() and reads every record out of it.
std::vector<std::string> Drain() {
  logfold::Metrics metrics;
  std::string error;
  DiskQueue::Options options;
  options.dir = Dir().string();
  options.sink_name = "fuzz";
  std::vector<std::string> records;
  auto queue = DiskQueue::Open(options, metrics, error);
  FUZZ_CHECK(queue != nullptr, "a directory with any contents opens");
  std::string record;
  for (int i = 0; i < 100000 && queue->Peek(record, std::chrono::steady_clock::now()); ++i) {
    records.push_back(record);
    queue->Commit();
  }
  FUZZ_CHECK(queue->empty(), "everything is read or skipped");
  return records;
}

void Reset() {
  std::filesystem::remove_all(Dir());
  std::filesystem::create_directories(Dir());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  FuzzedDataProvider provider(data, size);
  const bool with_cursor = provider.ConsumeBool();
  const std::string cursor = with_cursor ? provider.ConsumeRandomLengthString(64) : "";
  const std::string raw = provider.ConsumeRemainingBytesAsString();

  // Arbitrary bytes as a segment: every record handed out occurs in the file.
  Reset();
  Write(Dir() / "0000010000000000.seg", raw);
  if (with_cursor) Write(Dir() / "cursor", cursor);
  for (const std::string& r : Drain()) {
    FUZZ_CHECK(raw.find(r) != std::string::npos, "a record's bytes come from the file");
  }

  // The same bytes cut into payloads and written properly: all come back, in order.
  std::vector<std::string> payloads;
  std::string segment(logfold::kSegmentMagic);
  for (std::size_t pos = 0; pos < raw.size();) {
    const std::size_t n =
        std::min<std::size_t>(1 + static_cast<unsigned char>(raw[pos]) % 64, raw.size() - pos);
    payloads.push_back(raw.substr(pos, n));
    logfold::AppendDiskRecord(payloads.back(), segment);
    pos += n;
  }
  Reset();
  Write(Dir() / "0000010000000000.seg", segment);
  FUZZ_CHECK(Drain() == payloads, "a sound segment is read back exactly");
  std::filesystem::remove_all(Dir());
  return 0;
}
