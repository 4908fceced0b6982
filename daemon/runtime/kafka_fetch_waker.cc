// KafkaFetchWaker: when a wake-up is due, and the thread that sends it (a ListOffsets request
// for the assigned partitions, which librdkafka sends to each partition's leader).
#include "daemon/runtime/kafka_fetch_waker.h"

#include <algorithm>
#include <cstdlib>

#include "daemon/runtime/thread_name.h"

namespace logfold {

namespace {
// The queue is "close to its limit" from this share of it on (the fetcher stops at 1, and may
// have stopped since the consumer thread looked).
constexpr double kArmAt = 0.75;
// A wake-up when the queue is down to this share: what is left covers the time the broker
// thread takes to send the next fetch and the answer's way back.
constexpr double kWakeAt = 0.5;
// How long one wake-up request may take (a stop waits for it).
constexpr int kRequestTimeoutMs = 500;
// ListOffsets by timestamp: -1 asks for the latest offset, which every partition has.
constexpr std::int64_t kLatest = -1;
}  // namespace

KafkaFetchWaker::KafkaFetchWaker(RdKafka::KafkaConsumer& consumer, std::size_t limit_records,
                                 std::size_t limit_bytes, Metrics::Counter& wakeups,
                                 const std::string& name)
    : consumer_(consumer),
      limit_records_(std::max<std::size_t>(limit_records, 1)),
      limit_bytes_(std::max<std::size_t>(limit_bytes, 1)),
      wakeups_(wakeups) {
  thread_ = std::thread([this] { Run(); });
  NameThread(thread_, "lf-kw-" + name);
}

KafkaFetchWaker::~KafkaFetchWaker() { Stop(); }

std::pair<std::size_t, std::size_t> KafkaFetchWaker::QueueLimits(const RdKafka::Conf& conf) {
  const auto number = [&](const std::string& key) -> std::size_t {
    std::string value;
    if (conf.get(key, value) != RdKafka::Conf::CONF_OK) return 0;
    return static_cast<std::size_t>(std::strtoull(value.c_str(), nullptr, 10));
  };
  return {number("queued.min.messages"), number("queued.max.messages.kbytes") * 1024};
}

void KafkaFetchWaker::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

double KafkaFetchWaker::Fill(std::size_t queued, double record_bytes) const {
  return std::max(static_cast<double>(queued) / static_cast<double>(limit_records_),
                  static_cast<double>(queued) * record_bytes / static_cast<double>(limit_bytes_));
}

bool KafkaFetchWaker::Due(std::size_t queued_before, std::size_t queued_after,
                          double record_bytes) {
  if (Fill(queued_before, record_bytes) >= kArmAt) armed_ = true;
  if (!armed_ || Fill(queued_after, record_bytes) >= kWakeAt) return false;
  armed_ = false;
  return true;
}

void KafkaFetchWaker::Wake(Partitions partitions) {
  if (partitions.empty()) return;
  {
    std::lock_guard lock(mu_);
    partitions_ = std::move(partitions);
    requested_ = true;
  }
  cv_.notify_all();
}

void KafkaFetchWaker::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || requested_; });
    if (stop_) return;
    requested_ = false;
    std::vector<RdKafka::TopicPartition*> list;
    for (const auto& [topic, partition] : partitions_) {
      list.push_back(RdKafka::TopicPartition::create(topic, partition, kLatest));
    }
    lock.unlock();
    // The answer does not matter: the request woke the leaders' broker threads on its way
    // out. One that fails (no leader known) leaves the fetcher to its own timer.
    consumer_.offsetsForTimes(list, kRequestTimeoutMs);
    RdKafka::TopicPartition::destroy(list);
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    lock.lock();
  }
}

}  // namespace logfold
