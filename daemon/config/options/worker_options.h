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
  // SIGTERM to exit: inputs drain, workers close every group, outputs deliver or spill to
  // their disk buffers; what is still undelivered then is counted as lost.
  TimeUs shutdown_timeout_us = 30 * kSecond;
  bool operator==(const WorkerOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_WORKER_OPTIONS_H_
