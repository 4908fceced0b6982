// Metrics: process-wide counters and gauges, rendered in the Prometheus text format.
// Counters are atomics with stable addresses: components look theirs up once at start and
// increment them lock-free on the hot path.
#ifndef LOGFOLD_DAEMON_METRICS_H_
#define LOGFOLD_DAEMON_METRICS_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace logfold {

class Metrics {
 public:
  using Counter = std::atomic<std::uint64_t>;

  Metrics() = default;
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Returns the counter for (name, labels), creating it at 0. `labels` is the Prometheus
  // label text without braces, e.g. R"(listener="udp0",proto="udp")", or "" for none.
  // The reference stays valid for the registry's life. Thread-safe.
  Counter& GetCounter(std::string_view name, std::string_view help, std::string_view labels = "");

  // A gauge read at render time by calling `read` (which must be thread-safe). Adding a
  // gauge whose name and labels exist replaces the earlier one's `read`.
  void AddGauge(std::string_view name, std::string_view help, std::string_view labels,
                std::function<double()> read);
  // Takes the gauge (name, labels) out of the exposition (a Kafka partition revoked from
  // this member); AddGauge brings it back. Counters stay: their references must remain valid.
  void RemoveGauge(std::string_view name, std::string_view labels);

  // Value of a counter, 0 if it does not exist (for tests and the stats log line).
  std::uint64_t Value(std::string_view name, std::string_view labels = "") const;
  // Sum over all label sets of a counter.
  std::uint64_t Sum(std::string_view name) const;

  // `value` escaped for use inside a label's double quotes (backslash, quote, newline).
  static std::string EscapeLabelValue(std::string_view value);

  // Prometheus text exposition format 0.0.4, grouped by metric name.
  std::string RenderPrometheus() const;

 private:
  struct Entry {
    std::string name, help, labels;
    bool is_gauge = false;
    Counter counter{0};
    std::function<double()> read;  // gauges; empty once removed (not rendered)
  };
  mutable std::mutex mu_;
  std::deque<Entry> entries_;  // deque: stable addresses
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_METRICS_H_
