// Options of a stdin or file input (daemon/inputs/stream_input.h), with their defaults.
// Header-only and in config/ so that the config layer maps the file onto them once.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_STREAM_INPUT_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_STREAM_INPUT_OPTIONS_H_

#include <cstdint>
#include <string>

#include "daemon/config/units.h"

namespace logfold {

struct StreamInputOptions {
  std::string path;  // the file to read; "" or "-": standard input
  // Read this already open descriptor instead of `path` (a pipe, say). Not closed by us.
  // Not a config key.
  int fd = -1;
  std::uint64_t max_message_size = 64 * kKiB;  // longer lines are truncated and counted
  bool nul_terminator = false;                 // NUL also ends a line; not a config key
  bool operator==(const StreamInputOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_STREAM_INPUT_OPTIONS_H_
