// JournaldInput: follows the systemd journal (or a journal directory) through libsystemd's
// sd_journal, turning each entry into an RFC 5424 line (_HOSTNAME, SYSLOG_IDENTIFIER, _PID,
// PRIORITY, __REALTIME_TIMESTAMP, MESSAGE) and saving the cursor of the last delivered entry.
#ifndef LOGFOLD_DAEMON_INPUTS_JOURNALD_INPUT_H_
#define LOGFOLD_DAEMON_INPUTS_JOURNALD_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/config/options/journald_input_options.h"
#include "daemon/inputs/ingest_target.h"
#include "daemon/inputs/input_thread.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

class JournaldInput {
 public:
  // directory, state_directory, read_from, units, max_message_size.
  using Options = JournaldInputOptions;

  // Opens the journal (throws std::runtime_error naming the input if it cannot).
  JournaldInput(std::uint32_t input, std::string name, const Options& options, IngestTarget& target,
                Metrics& metrics);
  ~JournaldInput();  // Stop() and Join()
  JournaldInput(const JournaldInput&) = delete;
  JournaldInput& operator=(const JournaldInput&) = delete;

  void Start();
  // Thread-safe. Entries read and not delivered are read again at the next start.
  void Stop();
  void Join();

 private:
  class Impl;
  const std::string name_;
  std::unique_ptr<Impl> impl_;
  InputThread thread_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_JOURNALD_INPUT_H_
