// Options of a file output (daemon/outputs/stream_sink.h), with their defaults.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_FILE_SINK_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_FILE_SINK_OPTIONS_H_

#include <cstdint>
#include <string>

#include "daemon/config/units.h"

namespace logfold {

enum class FsyncPolicy : std::uint8_t { kNever, kInterval, kAlways };

struct FileSinkOptions {
  std::string path;  // appended to (O_APPEND|O_CREAT, mode 0640)
  FsyncPolicy fsync = FsyncPolicy::kNever;
  TimeUs fsync_interval_us = kSecond;  // fsync interval only
  bool operator==(const FileSinkOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_FILE_SINK_OPTIONS_H_
