// Options of a journald input (daemon/inputs/journald_input.h), with their defaults.
// Header-only and in config/ so that the config layer maps the file onto them once.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_JOURNALD_INPUT_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_JOURNALD_INPUT_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/config/options/file_input_options.h"
#include "daemon/config/units.h"

namespace logfold {

struct JournaldInputOptions {
  std::string directory;        // "": the local system journal
  std::string state_directory;  // "": the cursor is not kept across restarts
  // Without a saved cursor: the whole journal, or only entries written from now on.
  ReadFrom read_from = ReadFrom::kBeginning;
  std::vector<std::string> units;  // _SYSTEMD_UNIT values to keep; empty: every entry
  std::uint64_t max_message_size = 64 * kKiB;
  bool operator==(const JournaldInputOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_JOURNALD_INPUT_OPTIONS_H_
