// What every output has whatever its type (name, buffer, what to do when it is full), with
// the defaults. The per-type options are in file_sink_options.h, tcp_sink_options.h, ...
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_SINK_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_SINK_OPTIONS_H_

#include <cstdint>
#include <string>

#include "daemon/config/units.h"
#include "pipeline/event_filter.h"

namespace logfold {

// What a worker does when this output's buffer stays full: wait (nothing is lost; the
// pipeline backs up to the TCP readers, and the other outputs wait too), or drop this
// output's events and count them (the other outputs carry on).
enum class WhenFull : std::uint8_t { kBlock, kDrop };

struct SinkOptions {
  // Labels metrics and log lines unescaped; the config allows only [A-Za-z0-9_.-]+.
  std::string name;
  std::uint64_t buffer = 64 * kMiB;       // encoded events held before backpressure
  WhenFull when_full = WhenFull::kBlock;  // see WhenFull
  TimeUs block_timeout_us = 5 * kSecond;  // when_full drop: wait this long first
  // The events this output receives (default: all). Outputs that select all share one
  // encoding per format in the workers; each selective output gets a buffer of its own.
  EventSelection select{};
  bool operator==(const SinkOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_SINK_OPTIONS_H_
