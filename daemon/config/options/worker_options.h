// Options of the worker threads (daemon/workers/worker_pool.h) that come from the file, with
// their defaults.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_WORKER_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_WORKER_OPTIONS_H_

#include <cstdint>

#include "daemon/config/units.h"

namespace logfold {

struct WorkerOptions {
  std::uint32_t threads = 0;             // 0: one per core
  std::uint32_t queue_capacity = 65536;  // lines waiting per worker before TryDeliver refuses
  TimeUs flush_interval_us = 100 * kMillisecond;  // how often idle workers check their windows
  bool operator==(const WorkerOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_WORKER_OPTIONS_H_
