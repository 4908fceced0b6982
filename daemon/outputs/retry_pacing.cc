// Backoff and LogThrottle: see retry_pacing.h.
#include "daemon/outputs/retry_pacing.h"

#include <algorithm>

namespace logfold {

Backoff::Backoff(SinkClock::duration min, SinkClock::duration max)
    : min_(std::max(min, SinkClock::duration(1))),
      max_(std::max(max, min_)),
      rng_(std::random_device{}()) {}

SinkClock::duration Backoff::Next() {
  nominal_ = nominal_ == SinkClock::duration::zero() ? min_ : std::min(nominal_ * 2, max_);
  const auto low = std::max(min_, nominal_ / 2);
  if (low >= nominal_) return nominal_;
  std::uniform_int_distribution<SinkClock::rep> dist(low.count(), nominal_.count());
  return SinkClock::duration(dist(rng_));
}

bool LogThrottle::Allow(std::string& note) {
  const auto now = SinkClock::now();
  if (now < next_) {
    ++suppressed_;
    return false;
  }
  note.clear();
  if (suppressed_ > 0) note = " (" + std::to_string(suppressed_) + " similar messages suppressed)";
  suppressed_ = 0;
  next_ = now + period_;
  return true;
}

}  // namespace logfold
