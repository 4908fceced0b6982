// KafkaPartitions: what the kafka input keeps per assigned partition besides offsets: the
// stream id its lines' origins carry (so that event ids are the same after a restart) and
// its consumer-lag gauge in /metrics.
#ifndef LOGFOLD_DAEMON_INPUTS_KAFKA_PARTITIONS_H_
#define LOGFOLD_DAEMON_INPUTS_KAFKA_PARTITIONS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "daemon/runtime/kafka_stream.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

class KafkaPartitions {
 public:
  // `labels`: the input's metric labels (input="...",proto="kafka"). `metrics` must outlive
  // this object.
  KafkaPartitions(Metrics& metrics, std::string labels);
  ~KafkaPartitions();
  KafkaPartitions(const KafkaPartitions&) = delete;
  KafkaPartitions& operator=(const KafkaPartitions&) = delete;

  // Consumer thread only.
  void Assign(const std::string& topic, std::int32_t partition);
  void Revoke(const std::string& topic, std::int32_t partition);
  // The stream id of an assigned partition (computed once, on Assign); KafkaStream otherwise.
  std::uint64_t Stream(const std::string& topic, std::int32_t partition) const;
  // Records between the partition's consume position and its high watermark.
  void SetLag(const std::string& topic, std::int32_t partition, std::int64_t lag);

 private:
  struct Partition {
    std::uint64_t stream = 0;
    std::shared_ptr<std::atomic<std::int64_t>> lag;  // shared with the gauge
  };
  std::string GaugeLabels(const std::string& topic, std::int32_t partition) const;

  Metrics& metrics_;
  const std::string labels_;
  std::map<std::pair<std::string, std::int32_t>, Partition> partitions_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_KAFKA_PARTITIONS_H_
