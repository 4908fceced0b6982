// Options of a Kafka output (daemon/outputs/kafka_sink.h), with their defaults. Header-only and
// in config/ so that the config layer maps the file onto them once and the sink reads them.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_KAFKA_SINK_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_KAFKA_SINK_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>

namespace logfold {

// The record key of each event: its group id (all events of a group in one partition, in
// order), its host (all of a host's events together), or none (spread evenly).
enum class KafkaKey : std::uint8_t { kGroupId, kHost, kNone };

// compression.codec of the producer.
enum class KafkaCompression : std::uint8_t { kNone, kGzip, kSnappy, kLz4, kZstd };

struct KafkaSinkOptions {
  std::string brokers;  // bootstrap.servers
  std::string topic;
  KafkaKey key = KafkaKey::kGroupId;
  KafkaCompression compression = KafkaCompression::kLz4;
  // librdkafka producer properties passed through (security, linger.ms, batch.size...),
  // validated by check-config. acks=all and the idempotent producer are logfold's own.
  std::map<std::string, std::string> properties;
  bool operator==(const KafkaSinkOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_KAFKA_SINK_OPTIONS_H_
