// What every input with a thread of its own shares (followed files, the journal, the unix
// socket): the counters every input keeps, the wakeup a Stop() sends to its poll, and the
// named thread itself.
#ifndef LOGFOLD_DAEMON_INPUTS_INPUT_THREAD_H_
#define LOGFOLD_DAEMON_INPUTS_INPUT_THREAD_H_

#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "daemon/runtime/metrics.h"

namespace logfold {

// The counters of one input, labelled input="NAME",proto="PROTO", with the help texts the
// network listeners use for the same metrics.
struct InputCounters {
  InputCounters(Metrics& metrics, std::string_view name, std::string_view proto);

  // logfold_input_errors_total{error="ERROR"} and logfold_dropped_total{reason="REASON"}.
  Metrics::Counter& Error(std::string_view error) const;
  Metrics::Counter& Dropped(std::string_view reason) const;
  // Another metric of this input, with `extra` labels (",key=\"value\"") after its own.
  Metrics::Counter& Other(std::string_view metric, std::string_view help,
                          std::string_view extra = "") const;

  Metrics& metrics;
  const std::string labels;
  Metrics::Counter& received;   // logfold_received_total
  Metrics::Counter& bytes;      // logfold_received_bytes_total
  Metrics::Counter& truncated;  // logfold_truncated_total
};

// An eventfd the input's thread polls beside its sources: Signal() (from any thread) makes it
// readable for good, which is how Stop() interrupts the poll.
class WakeSignal {
 public:
  WakeSignal();  // throws std::runtime_error when no eventfd can be made
  ~WakeSignal();
  WakeSignal(const WakeSignal&) = delete;
  WakeSignal& operator=(const WakeSignal&) = delete;

  int fd() const { return fd_; }
  void Signal();

 private:
  int fd_ = -1;
};

// The input's thread, named "lf-in-NAME" for top -H and perf. Destroying it joins it.
class InputThread {
 public:
  InputThread() = default;
  ~InputThread() { Join(); }
  InputThread(const InputThread&) = delete;
  InputThread& operator=(const InputThread&) = delete;

  bool started() const { return thread_.joinable(); }
  // Runs `run` on the thread; nothing when it was started already.
  void Start(std::string_view input_name, std::function<void()> run);
  void Join();

 private:
  std::thread thread_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_INPUT_THREAD_H_
