// KafkaPartitions: stream ids of partitions and their lag gauges, added on assign and taken
// out of /metrics on revoke (a partition another member consumes is not ours to report).
#include "daemon/inputs/kafka_partitions.h"

namespace logfold {

namespace {
constexpr const char* kLagName = "logfold_kafka_partition_lag";
constexpr const char* kLagHelp =
    "Records of an assigned partition not yet consumed (high watermark minus position)";
}  // namespace

KafkaPartitions::KafkaPartitions(Metrics& metrics, std::string labels)
    : metrics_(metrics), labels_(std::move(labels)) {}

KafkaPartitions::~KafkaPartitions() {
  for (const auto& [key, p] : partitions_) {
    metrics_.RemoveGauge(kLagName, GaugeLabels(key.first, key.second));
  }
}

std::string KafkaPartitions::GaugeLabels(const std::string& topic, std::int32_t partition) const {
  return labels_ + ",topic=\"" + Metrics::EscapeLabelValue(topic) + "\",partition=\"" +
         std::to_string(partition) + "\"";
}

void KafkaPartitions::Assign(const std::string& topic, std::int32_t partition) {
  Partition& p = partitions_[{topic, partition}];
  if (p.lag != nullptr) return;
  p.stream = KafkaStream(topic, partition);
  p.lag = std::make_shared<std::atomic<std::int64_t>>(0);
  metrics_.AddGauge(kLagName, kLagHelp, GaugeLabels(topic, partition),
                    [lag = p.lag] { return static_cast<double>(lag->load()); });
}

void KafkaPartitions::Revoke(const std::string& topic, std::int32_t partition) {
  if (partitions_.erase({topic, partition}) == 0) return;
  metrics_.RemoveGauge(kLagName, GaugeLabels(topic, partition));
}

std::uint64_t KafkaPartitions::Stream(const std::string& topic, std::int32_t partition) const {
  const auto it = partitions_.find({topic, partition});
  return it != partitions_.end() ? it->second.stream : KafkaStream(topic, partition);
}

void KafkaPartitions::SetLag(const std::string& topic, std::int32_t partition, std::int64_t lag) {
  const auto it = partitions_.find({topic, partition});
  if (it != partitions_.end()) it->second.lag->store(lag);
}

}  // namespace logfold
