// Kafka sink: produces each event (NDJSON) as one record to a topic with librdkafka's
// idempotent producer (acks=all, retries inside librdkafka), keyed by group id or host. An
// event leaves the buffer only once the broker acknowledged it, so a full producer queue or
// a broker that is down backs up into the buffer and then into the workers (when_full).
#ifndef LOGFOLD_DAEMON_OUTPUTS_KAFKA_SINK_H_
#define LOGFOLD_DAEMON_OUTPUTS_KAFKA_SINK_H_

#include <memory>
#include <string>

#include "daemon/config/options/kafka_sink_options.h"
#include "daemon/config/options/sink_options.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

// Null with `error` set when librdkafka refuses the configuration. Registers
// logfold_kafka_output_failed_events_total{sink=...}: events the broker refused for good
// (after librdkafka's retries; e.g. a record over message.max.bytes), logged and dropped.
std::unique_ptr<Sink> MakeKafkaSink(const SinkOptions& sink, const KafkaSinkOptions& kafka,
                                    Metrics& metrics, std::string& error);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_OUTPUTS_KAFKA_SINK_H_
