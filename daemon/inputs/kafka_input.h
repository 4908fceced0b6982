// KafkaInput: consumes Kafka topics as a member of a consumer group (librdkafka, cooperative-
// sticky assignment) on its own thread, one record value per line, and commits a partition's
// offset only up to lines whose events the outputs confirmed (at least once; see
// config/README.md, "kafka only").
#ifndef LOGFOLD_DAEMON_INPUTS_KAFKA_INPUT_H_
#define LOGFOLD_DAEMON_INPUTS_KAFKA_INPUT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "daemon/config/options/kafka_input_options.h"
#include "daemon/inputs/ingest_target.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

class KafkaInput {
 public:
  using Options = KafkaInputOptions;

  // Creates the consumer (throws std::runtime_error with librdkafka's reason if it cannot);
  // consuming starts at Start(). A broker that cannot be reached is not an error here: the
  // client retries and the input logs why. `target` and `metrics` must outlive this object.
  KafkaInput(std::uint32_t input, std::string name, const Options& options, IngestTarget& target,
             Metrics& metrics);
  ~KafkaInput();
  KafkaInput(const KafkaInput&) = delete;
  KafkaInput& operator=(const KafkaInput&) = delete;

  void Start();
  // Thread-safe: consuming stops; the thread then summarises every open group through the
  // target, waits for the outputs to confirm until `deadline`, commits, and leaves the group
  // (its partitions go to the other members). Past the deadline nothing more is committed:
  // the next owner reads those lines again.
  void Stop(std::chrono::steady_clock::time_point deadline);
  void Join();

  const std::string& name() const { return name_; }

 private:
  struct Impl;
  std::string name_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_KAFKA_INPUT_H_
