// Options of a followed-file input (daemon/inputs/file_input.h), with their defaults.
// Header-only and in config/ so that the config layer maps the file onto them once.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_FILE_INPUT_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_FILE_INPUT_OPTIONS_H_

#include <cstdint>
#include <string>

#include "daemon/config/units.h"

namespace logfold {

// file, journald: where reading starts when there is no saved position.
enum class ReadFrom : std::uint8_t { kBeginning, kEnd };

struct FileInputOptions {
  std::string path;             // glob(7) pattern; a plain path matches itself
  std::string state_directory;  // "": positions are not kept across restarts
  // Where a file found at the first scan with no saved position starts. Files that appear
  // later (a rotation's new file) are always read from their beginning.
  ReadFrom read_from = ReadFrom::kBeginning;
  std::string multiline_start;                 // ECMAScript regex; "": every line is a record
  TimeUs multiline_timeout_us = kSecond;       // a held record is delivered after this long idle
  TimeUs poll_interval_us = kSecond;           // rescan (and read) at least this often
  std::uint64_t max_message_size = 64 * kKiB;  // longer records are cut and counted
  bool operator==(const FileInputOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_FILE_INPUT_OPTIONS_H_
