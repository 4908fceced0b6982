// LossCounter: counts events an output gave up on in the units an operator reconciles with
// (events and the input lines they stand for), next to the bytes, by sink and reason.
#ifndef LOGFOLD_DAEMON_LOSS_COUNTER_H_
#define LOGFOLD_DAEMON_LOSS_COUNTER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

struct EventTally {
  std::uint64_t events = 0;
  std::uint64_t lines = 0;  // `first` and `annotate` count 1, a summary its `count`
};

// Tallies the '\n'-separated encoded records in `batch` (the form workers hand to Submit).
// A record that cannot be read (a fragment) counts as one event and one line, so a loss is
// never under-reported as zero.
EventTally TallyEvents(std::string_view batch, SinkEncoding encoding);

// The lost-events and lost-lines counters of one sink for one reason ("shutdown", "reload",
// "when_full", "abandoned"), plus the byte counter the daemon had before.
class LossCounter {
 public:
  LossCounter(Metrics& metrics, const std::string& sink, std::string_view reason);
  // Counts `batch` as lost and returns its tally (for the log line).
  EventTally Count(std::string_view batch, SinkEncoding encoding);

 private:
  Metrics::Counter& events_;
  Metrics::Counter& lines_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_LOSS_COUNTER_H_
