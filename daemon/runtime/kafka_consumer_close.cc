// CloseConsumerBy: a kafka consumer's bounded close, polled with librdkafka's C event API.
#include "daemon/runtime/kafka_consumer_close.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace logfold {

namespace {

constexpr std::int64_t kPollMs = 100;  // the longest wait for an event before the next check

}  // namespace

bool CloseConsumerBy(
    RdKafka::KafkaConsumer& consumer,
    const std::function<std::chrono::steady_clock::time_point()>& deadline,
    const std::function<void(RdKafka::ErrorCode, std::vector<RdKafka::TopicPartition*>&)>&
        on_rebalance,
    const std::function<void(const std::string&)>& on_error) {
  rd_kafka_t* rk = consumer.c_ptr();
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  if (rd_kafka_error_t* e = rd_kafka_consumer_close_queue(rk, queue); e != nullptr) {
    on_error(rd_kafka_error_string(e));
    rd_kafka_error_destroy(e);
    rd_kafka_queue_destroy(queue);
    return false;
  }
  bool closed = false;
  while (true) {
    closed = rd_kafka_consumer_closed(rk) != 0;
    if (closed) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline() - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    rd_kafka_event_t* event =
        rd_kafka_queue_poll(queue, static_cast<int>(std::min<std::int64_t>(left.count(), kPollMs)));
    if (event == nullptr) continue;
    if (rd_kafka_event_type(event) == RD_KAFKA_EVENT_REBALANCE) {
      std::vector<RdKafka::TopicPartition*> partitions;
      const rd_kafka_topic_partition_list_t* list = rd_kafka_event_topic_partition_list(event);
      for (int i = 0; list != nullptr && i < list->cnt; ++i) {
        partitions.push_back(
            RdKafka::TopicPartition::create(list->elems[i].topic, list->elems[i].partition));
      }
      on_rebalance(static_cast<RdKafka::ErrorCode>(rd_kafka_event_error(event)), partitions);
      RdKafka::TopicPartition::destroy(partitions);
    } else if (rd_kafka_event_type(event) == RD_KAFKA_EVENT_ERROR) {
      on_error(rd_kafka_event_error_string(event));
    }
    rd_kafka_event_destroy(event);
  }
  rd_kafka_queue_destroy(queue);
  return closed;
}

void KeepUntilExit(std::shared_ptr<void> what) {
  static std::mutex mu;
  static auto* kept = new std::vector<std::shared_ptr<void>>();  // never destroyed: see above
  std::lock_guard lock(mu);
  kept->push_back(std::move(what));
}

}  // namespace logfold
