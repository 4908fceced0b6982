// FileInput: follows the files matching a glob pattern (like rsyslog's imfile): survives
// rotation by rename and by copytruncate, joins multi-line records by a start pattern, and
// keeps each file's read position in a state directory so that a restart resumes exactly
// where the last delivered line ended.
#ifndef LOGFOLD_DAEMON_INPUTS_FILE_INPUT_H_
#define LOGFOLD_DAEMON_INPUTS_FILE_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "daemon/inputs/ingest_target.h"
#include "daemon/runtime/metrics.h"
#include "pipeline/log_record.h"

namespace logfold {

class FileInput {
 public:
  enum class ReadFrom : std::uint8_t { kBeginning, kEnd };
  // Filled by the config layer, which holds the defaults (InputConfig).
  struct Options {
    std::string pattern;          // glob(7) pattern; a plain path matches itself
    std::string state_directory;  // "": positions are not kept across restarts
    // Where a file found at the first scan with no saved position starts. Files that appear
    // later (a rotation's new file) are always read from their beginning.
    ReadFrom read_from = ReadFrom::kBeginning;
    std::string multiline_start;      // ECMAScript regex; "": every line is a record
    TimeUs multiline_timeout_us = 0;  // a held record is delivered after this long idle
    TimeUs poll_interval_us = 0;      // rescan (and read) at least this often
    std::size_t max_message_size = 0;
    bool operator==(const Options&) const = default;
  };

  // Throws std::runtime_error for a bad multiline pattern or an unusable state directory.
  // `target` and `metrics` must outlive this object.
  FileInput(std::uint32_t input, std::string name, const Options& options, IngestTarget& target,
            Metrics& metrics);
  // Stop() and Join().
  ~FileInput();
  FileInput(const FileInput&) = delete;
  FileInput& operator=(const FileInput&) = delete;

  // Scans the pattern on the calling thread (the files present now are known, and
  // `read_from` has fixed where each starts), then follows them on a thread of its own.
  void Start();
  // Thread-safe. Lines read but not yet delivered are not lost: their position was not
  // saved, so the next start reads them again.
  void Stop();
  void Join();

  const std::string& name() const { return name_; }

 private:
  class Impl;
  const std::string name_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_FILE_INPUT_H_
