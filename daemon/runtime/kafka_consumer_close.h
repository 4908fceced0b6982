// CloseConsumerBy: a kafka consumer leaves its group by a deadline even when the broker does
// not answer; shared by the at-least-once and the exactly-once kafka inputs.
#ifndef LOGFOLD_DAEMON_RUNTIME_KAFKA_CONSUMER_CLOSE_H_
#define LOGFOLD_DAEMON_RUNTIME_KAFKA_CONSUMER_CLOSE_H_

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace logfold {

// librdkafka calls a consumer's log callback from its own threads: a client left behind by a
// stop (see KeepUntilExit) calls this forwarder, which its owner detaches before it goes.
template <typename Owner>
struct KafkaEventForward : RdKafka::EventCb {
  void event_cb(RdKafka::Event& event) override {
    std::lock_guard lock(mu);
    if (owner != nullptr) owner->OnKafkaEvent(event);
  }
  std::mutex mu;
  Owner* owner = nullptr;
};

// Closes `consumer` (leaves its group) by `deadline()` (read again on every round, a later Stop
// may bring it forward), serving its rebalance events on the calling thread through
// `on_rebalance` (which must incremental_assign or incremental_unassign as rebalance_cb does)
// and reporting its errors through `on_error`. The close queue is polled with the C event API:
// polled through the C++ callback API, librdkafka 2.0 aborts (rd_kafka_q_serve: res !=
// RD_KAFKA_OP_RES_PASS) on an event no callback serves. Records fetched before the close are
// dropped unconsumed: their offsets are not committed. False: not closed by the deadline (a
// hung broker); librdkafka 2.0's destroy of such a consumer would wait for the close, so the
// caller keeps it (KeepUntilExit) instead.
bool CloseConsumerBy(
    RdKafka::KafkaConsumer& consumer,
    const std::function<std::chrono::steady_clock::time_point()>& deadline,
    const std::function<void(RdKafka::ErrorCode, std::vector<RdKafka::TopicPartition*>&)>&
        on_rebalance,
    const std::function<void(const std::string&)>& on_error);

// Keeps `what` (a kafka client not closed by its deadline, the forwarder its threads call)
// undestroyed and reachable until the process exits.
void KeepUntilExit(std::shared_ptr<void> what);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_RUNTIME_KAFKA_CONSUMER_CLOSE_H_
