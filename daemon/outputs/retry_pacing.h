// Pacing of retries against a failing destination or disk: exponential backoff with jitter,
// and a throttle that keeps a repeating error to one log line per period.
#ifndef LOGFOLD_DAEMON_OUTPUTS_RETRY_PACING_H_
#define LOGFOLD_DAEMON_OUTPUTS_RETRY_PACING_H_

#include <chrono>
#include <cstdint>
#include <random>
#include <string>

namespace logfold {

using SinkClock = std::chrono::steady_clock;

// Exponential backoff with jitter, so many sinks (or daemons) that lost the same collector
// do not reconnect in lockstep.
class Backoff {
 public:
  Backoff(SinkClock::duration min, SinkClock::duration max);
  // The next delay: the nominal delay doubles per call up to max; the result is drawn
  // uniformly from [max(min, nominal/2), nominal].
  SinkClock::duration Next();
  void Reset() { nominal_ = SinkClock::duration::zero(); }

 private:
  SinkClock::duration min_, max_;
  SinkClock::duration nominal_{0};
  std::minstd_rand rng_;
};

// Lets a repeating warning through at most once per period, so a dead collector produces a
// line every few seconds rather than one per retry. Not thread-safe.
class LogThrottle {
 public:
  explicit LogThrottle(SinkClock::duration period = std::chrono::seconds(10)) : period_(period) {}
  // True if a message may be logged now; then `note` is "" or, when messages were held
  // back since the previous one, " (N similar messages suppressed)" to append to it.
  bool Allow(std::string& note);

 private:
  SinkClock::duration period_;
  SinkClock::time_point next_{};
  std::uint64_t suppressed_ = 0;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_OUTPUTS_RETRY_PACING_H_
