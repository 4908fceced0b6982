// KafkaFetchWaker: wakes a kafka consumer's fetcher once the records it had queued, up to its
// queue limits, have been drained, so that it does not sleep out its second before fetching on.
#ifndef LOGFOLD_DAEMON_RUNTIME_KAFKA_FETCH_WAKER_H_
#define LOGFOLD_DAEMON_RUNTIME_KAFKA_FETCH_WAKER_H_

#include <librdkafka/rdkafkacpp.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/runtime/metrics.h"

namespace logfold {

// librdkafka (2.0, Debian's) stops fetching a partition while the consumer's local queue holds
// `queued.min.messages` records or `queued.max.messages.kbytes`, and looks again only when its
// broker thread wakes up for something else: at the latest after one second. A consumer that
// drains the queue faster than that (the input catching up on a backlog) then waits out the
// rest of every second. Any request to a broker wakes its thread, which then fetches again; this
// class sends one (ListOffsets, one per leader, off the consumer thread) when the queue has drained
// to half of its limit after having been close to it. Newer librdkafka versions have
// `fetch.queue.backoff.ms` for this; with them the request is only redundant.
class KafkaFetchWaker {
 public:
  using Partitions = std::vector<std::pair<std::string, std::int32_t>>;

  // `consumer` must outlive this object (or Stop() be called before it goes). `limit_records`
  // and `limit_bytes`: the consumer's queued.min.messages and queued.max.messages.kbytes
  // (times 1024). Each wake-up is counted in `wakeups`; `name` (the input's) names the thread.
  KafkaFetchWaker(RdKafka::KafkaConsumer& consumer, std::size_t limit_records,
                  std::size_t limit_bytes, Metrics::Counter& wakeups, const std::string& name);
  ~KafkaFetchWaker();
  KafkaFetchWaker(const KafkaFetchWaker&) = delete;
  KafkaFetchWaker& operator=(const KafkaFetchWaker&) = delete;

  // The limits of a consumer made from `conf`, as the constructor takes them:
  // queued.min.messages, and queued.max.messages.kbytes in bytes (their defaults unless set).
  static std::pair<std::size_t, std::size_t> QueueLimits(const RdKafka::Conf& conf);

  // Consumer thread, after each round of consuming: the client's queue held `queued_before`
  // records when the round began and holds `queued_after` now, of `record_bytes` on average;
  // `assigned()` gives the partitions whose leaders a wake-up goes to (called only when one
  // is due).
  template <typename AssignedFn>
  void Observe(std::size_t queued_before, std::size_t queued_after, double record_bytes,
               AssignedFn&& assigned) {
    if (Due(queued_before, queued_after, record_bytes)) Wake(assigned());
  }

  // Stops the thread (waiting for a request under way, at most its timeout). Idempotent.
  void Stop();

 private:
  double Fill(std::size_t queued, double record_bytes) const;
  bool Due(std::size_t queued_before, std::size_t queued_after, double record_bytes);
  void Wake(Partitions partitions);
  void Run();

  RdKafka::KafkaConsumer& consumer_;
  const std::size_t limit_records_;
  const std::size_t limit_bytes_;
  Metrics::Counter& wakeups_;
  bool armed_ = false;  // consumer thread only: the queue came close to its limit

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool requested_ = false;
  Partitions partitions_;
  std::thread thread_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_RUNTIME_KAFKA_FETCH_WAKER_H_
