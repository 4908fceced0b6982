// KafkaExactlyOnce: a kafka input in exactly-once mode (config/README.md, "Exactly-once
// mode"). It consumes as a member of a consumer group, folds each assigned partition in a
// merger of its own on its own thread, and every commit_interval commits one producer
// transaction holding the events emitted since the last one (to the kafka output's topic),
// the changed open groups (to the compacted changelog topic) and the consumed offsets. An
// assigned partition's groups are restored from the changelog before its records are consumed.
#ifndef LOGFOLD_DAEMON_KAFKA_EOS_KAFKA_EXACTLY_ONCE_H_
#define LOGFOLD_DAEMON_KAFKA_EOS_KAFKA_EXACTLY_ONCE_H_

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "daemon/config/options/kafka_input_options.h"
#include "daemon/config/options/kafka_sink_options.h"
#include "daemon/runtime/metrics.h"
#include "pipeline/syslog_parser.h"
#include "pipeline/window_merger.h"

namespace logfold {

class KafkaExactlyOnce {
 public:
  struct Options {
    KafkaInputOptions input;
    KafkaSinkOptions output;  // the config's one output
    MergerOptions merger;     // id_seed is replaced per partition
    SyslogParser::Options parser;
    bool event_time = false;
  };

  // Creates the clients (throws std::runtime_error with librdkafka's reason if it cannot);
  // consuming starts at Start(). `metrics` must outlive this object.
  KafkaExactlyOnce(std::string name, Options options, Metrics& metrics);
  ~KafkaExactlyOnce();
  KafkaExactlyOnce(const KafkaExactlyOnce&) = delete;
  KafkaExactlyOnce& operator=(const KafkaExactlyOnce&) = delete;

  void Start();
  // Thread-safe: consuming stops; leaving the group summarises every partition's groups and
  // commits them with the offsets in a last transaction. Join() returns by `deadline` (plus
  // up to a second) whatever the broker does: a transaction not committed by then is
  // aborted, or left to the broker, which commits or aborts it whole; either way the next
  // owner reads from the last committed groups and offsets (nothing lost, nothing counted
  // twice).
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

#endif  // LOGFOLD_DAEMON_KAFKA_EOS_KAFKA_EXACTLY_ONCE_H_
