// FileInput: follows the files matching a glob pattern (like rsyslog's imfile): survives
// rotation by rename and by copytruncate, joins multi-line records by a start pattern, and
// keeps each file's read position in a state directory so that a restart, even after kill -9,
// resumes at the last line whose events the outputs had written: no line is skipped; lines
// delivered after that are read again (at-least-once).
#ifndef LOGFOLD_DAEMON_INPUTS_FILE_INPUT_H_
#define LOGFOLD_DAEMON_INPUTS_FILE_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/config/options/file_input_options.h"
#include "daemon/inputs/ingest_target.h"
#include "daemon/inputs/input_thread.h"
#include "daemon/runtime/metrics.h"
#include "pipeline/log_record.h"

namespace logfold {

class FileInput {
 public:
  // path (the glob pattern), state_directory, read_from, multiline_start and _timeout,
  // poll_interval, max_message_size; defaults and meaning in the options header.
  using Options = FileInputOptions;

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
  // After Join, once the engine and the outputs drained (shutdown): saves the positions if
  // everything delivered was written out, so that a clean restart reads nothing twice.
  void CheckpointSettled();

  const std::string& name() const { return name_; }

 private:
  class Impl;
  const std::string name_;
  std::unique_ptr<Impl> impl_;
  InputThread thread_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_FILE_INPUT_H_
