// The daemon's one reading of the wall clock: arrival times of received lines and the
// engine's window timer. (The pipeline never reads a clock; time is passed in.)
#ifndef LOGFOLD_DAEMON_WALL_CLOCK_H_
#define LOGFOLD_DAEMON_WALL_CLOCK_H_

#include <ctime>

#include "pipeline/log_record.h"

namespace logfold {

// Microseconds since the Unix epoch, CLOCK_REALTIME.
inline TimeUs WallClockNowUs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<TimeUs>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_WALL_CLOCK_H_
