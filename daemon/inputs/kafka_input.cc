// KafkaInput: the consumer thread, the rebalance callback that summarises open groups and
// commits before a revoke completes, and the periodic commit of confirmed offsets.
#include "daemon/inputs/kafka_input.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "daemon/inputs/blocking_delivery.h"
#include "daemon/inputs/kafka_partitions.h"
#include "daemon/runtime/kafka_consumer_close.h"
#include "daemon/runtime/kafka_fetch_waker.h"
#include "daemon/runtime/thread_name.h"
#include "daemon/runtime/wall_clock.h"

namespace logfold {

namespace {

using SteadyClock = std::chrono::steady_clock;
using PartitionKey = std::pair<std::string, std::int32_t>;
using Offsets = std::map<PartitionKey, std::int64_t>;

constexpr std::size_t kMaxBatch = 1024;  // records handed to the engine at once
constexpr auto kPollTimeout = std::chrono::milliseconds(100);
constexpr auto kLagInterval = std::chrono::seconds(1);
constexpr auto kErrorLogInterval = std::chrono::seconds(10);

std::string Labels(std::string_view name) {
  return "input=\"" + Metrics::EscapeLabelValue(name) + "\",proto=\"kafka\"";
}

// The scope salt of a partition's lines (LogRecord::scope_salt): never 0, and different for
// every partition of a topic, so no group holds lines of two partitions.
std::uint32_t PartitionSalt(const std::string& topic, std::int32_t partition) {
  std::uint64_t h = std::hash<std::string>{}(topic)*0x9E3779B97F4A7C15ULL;
  h ^= static_cast<std::uint32_t>(partition) * 0xC2B2AE3D27D4EB4FULL;
  const auto salt = static_cast<std::uint32_t>(h ^ (h >> 32));
  return salt == 0 ? 1 : salt;
}

// The records and errors of one round of consuming, destroyed when the next round begins or
// the consumer thread leaves its loop.
struct Polled {
  std::vector<rd_kafka_message_t*> at = std::vector<rd_kafka_message_t*>(kMaxBatch);
  std::size_t size = 0;

  Polled() = default;
  Polled(const Polled&) = delete;
  Polled& operator=(const Polled&) = delete;
  ~Polled() { Release(); }
  void Release() {
    for (std::size_t i = 0; i < size; ++i) rd_kafka_message_destroy(at[i]);
    size = 0;
  }
};

void Set(RdKafka::Conf& conf, const std::string& key, const std::string& value) {
  std::string err;
  if (conf.set(key, value, err) != RdKafka::Conf::CONF_OK) {
    throw std::runtime_error("kafka property " + key + ": " + err);
  }
}

}  // namespace

struct KafkaInput::Impl : RdKafka::RebalanceCb, RdKafka::OffsetCommitCb {
  // One Checkpoint call's answer, shared with the callback that may outlive a wait.
  struct Answer {
    std::mutex mu;
    std::condition_variable cv;
    bool answered = false;
    bool ok = false;
  };

  Impl(std::uint32_t input_id, const std::string& input_name, const Options& opts,
       IngestTarget& ingest, Metrics& metrics)
      : name(input_name),
        options(opts),
        target(ingest),
        delivery(input_id, ingest),
        received(metrics.GetCounter("logfold_received_total", "Lines received.", Labels(name))),
        bytes(metrics.GetCounter("logfold_received_bytes_total",
                                 "Bytes received (datagram payloads, frames).", Labels(name))),
        truncated(metrics.GetCounter("logfold_truncated_total", "Messages cut to max_message_size.",
                                     Labels(name))),
        errors(metrics.GetCounter("logfold_input_errors_total", "Input errors, by kind.",
                                  Labels(name) + ",error=\"kafka\"")),
        rebalances(metrics.GetCounter("logfold_kafka_rebalances_total",
                                      "Partition assignments and revocations", Labels(name))),
        commits(metrics.GetCounter("logfold_kafka_commits_total",
                                   "Offset commits of lines covered by confirmed events",
                                   Labels(name))),
        fetch_wakeups(metrics.GetCounter(
            "logfold_kafka_fetch_wakeups_total",
            "Requests sent to wake the client's fetcher after its full queue drained",
            Labels(name))),
        assigned_gauge(std::make_shared<std::atomic<std::int64_t>>(0)),
        lag_gauge(std::make_shared<std::atomic<std::int64_t>>(0)),
        partition_info(metrics, Labels(name)) {
    metrics.AddGauge("logfold_kafka_assigned_partitions", "Partitions assigned to this member",
                     Labels(name), [g = assigned_gauge] { return static_cast<double>(g->load()); });
    metrics.AddGauge("logfold_kafka_consumer_lag",
                     "Records not yet consumed, summed over the assigned partitions", Labels(name),
                     [g = lag_gauge] { return static_cast<double>(g->load()); });
    std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    // First the pass-through properties (validated by check-config), then logfold's own,
    // which the validator does not let them set.
    for (const auto& [key, value] : options.properties) Set(*conf, key, value);
    Set(*conf, "bootstrap.servers", options.brokers);
    Set(*conf, "group.id", options.group_id);
    // librdkafka commits, on its timer and when partitions are unassigned, only the offsets
    // this input stores, and those are stored only once their lines' events were confirmed.
    // Its own commits know the group's state: a commit of ours while the group rejoins
    // would be refused (illegal generation) and make the client drop its assignment.
    Set(*conf, "enable.auto.commit", "true");
    Set(*conf, "auto.commit.interval.ms",
        std::to_string(std::max<TimeUs>(options.commit_interval_us / 1000, 1)));
    Set(*conf, "enable.auto.offset.store", "false");
    Set(*conf, "partition.assignment.strategy", "cooperative-sticky");
    if (options.properties.count("auto.offset.reset") == 0) {
      Set(*conf, "auto.offset.reset", "earliest");  // a new group reads what is there
    }
    if (options.properties.count("client.id") == 0) Set(*conf, "client.id", "logfold-" + name);
    events->owner = this;
    std::string err;
    if (conf->set("rebalance_cb", static_cast<RdKafka::RebalanceCb*>(this), err) !=
            RdKafka::Conf::CONF_OK ||
        conf->set("event_cb", static_cast<RdKafka::EventCb*>(events.get()), err) !=
            RdKafka::Conf::CONF_OK ||
        conf->set("offset_commit_cb", static_cast<RdKafka::OffsetCommitCb*>(this), err) !=
            RdKafka::Conf::CONF_OK) {
      throw std::runtime_error("kafka: " + err);
    }
    std::tie(queue_limit_records, queue_limit_bytes) = KafkaFetchWaker::QueueLimits(*conf);
    consumer.reset(RdKafka::KafkaConsumer::create(conf.get(), err));
    if (!consumer) throw std::runtime_error("kafka consumer: " + err);
    queue.reset(rd_kafka_queue_get_consumer(consumer->c_ptr()));
  }

  ~Impl() {
    std::lock_guard lock(events->mu);
    events->owner = nullptr;
  }

  // ---- librdkafka callbacks, on the consumer thread (inside its polls and its close) ----

  void rebalance_cb(RdKafka::KafkaConsumer* c, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    rebalances.fetch_add(1, std::memory_order_relaxed);
    if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
      for (const auto* p : partitions) {
        delivered[{p->topic(), p->partition()}] = -1;
        partition_info.Assign(p->topic(), p->partition());
      }
      std::unique_ptr<RdKafka::Error> e(c->incremental_assign(partitions));
      if (e) spdlog::error("input {}: kafka assign: {}", name, e->str());
      spdlog::info("input {}: assigned {} partition(s), {} in all", name, partitions.size(),
                   delivered.size());
    } else {
      // A revoke: before the partitions go to another member, their open groups (and only
      // theirs) are summarised and delivered and their offsets committed, so the next owner
      // starts where we stopped. Lost partitions (the session expired) may already be someone
      // else's: no commit.
      if (err == RdKafka::ERR__REVOKE_PARTITIONS && !c->assignment_lost()) {
        Offsets revoked;
        std::vector<std::uint32_t> salts;
        for (const auto* p : partitions) {
          const auto it = delivered.find({p->topic(), p->partition()});
          if (it != delivered.end()) revoked.insert(*it);
          salts.push_back(PartitionSalt(p->topic(), p->partition()));
        }
        if (WaitCheckpoint(std::move(salts))) {
          Commit(revoked, true);
        } else {
          spdlog::warn(
              "input {}: revoked {} partition(s) before their events were confirmed; "
              "the next owner reads them again from the last commit",
              name, partitions.size());
        }
      }
      for (const auto* p : partitions) {
        delivered.erase({p->topic(), p->partition()});
        stored.erase({p->topic(), p->partition()});
        in_flight_offsets.erase({p->topic(), p->partition()});
        partition_info.Revoke(p->topic(), p->partition());
      }
      std::unique_ptr<RdKafka::Error> e(c->incremental_unassign(partitions));
      if (e) spdlog::error("input {}: kafka unassign: {}", name, e->str());
      spdlog::info("input {}: revoked {} partition(s), {} left", name, partitions.size(),
                   delivered.size());
    }
    assigned_gauge->store(static_cast<std::int64_t>(delivered.size()));
  }

  // Through `events`, on librdkafka's threads as well (its log callback).
  void OnKafkaEvent(RdKafka::Event& event) {
    if (event.type() == RdKafka::Event::EVENT_ERROR) {
      errors.fetch_add(1, std::memory_order_relaxed);
      LogThrottled(std::string("kafka: ") + RdKafka::err2str(event.err()) + ": " + event.str());
    } else if (event.type() == RdKafka::Event::EVENT_LOG &&
               (event.severity() <= RdKafka::Event::EVENT_SEVERITY_WARNING)) {
      spdlog::warn("input {}: librdkafka {}: {}", name, event.fac(), event.str());
    }
  }

  void LogThrottled(const std::string& what) {
    const auto now = SteadyClock::now();
    if (now < next_error_log) {
      ++suppressed;
      return;
    }
    next_error_log = now + kErrorLogInterval;
    spdlog::warn("input {}: {}{}", name, what,
                 suppressed == 0 ? std::string()
                                 : " (" + std::to_string(std::exchange(suppressed, 0)) +
                                       " similar suppressed)");
  }

  // Asks the target to summarise the groups of the partitions of `salts` and waits for its
  // answer; a stop gives up at the stop deadline (false).
  bool WaitCheckpoint(std::vector<std::uint32_t> salts) {
    auto answer = std::make_shared<Answer>();
    target.CloseSalted(std::move(salts), [answer](bool ok) {
      {
        std::lock_guard lock(answer->mu);
        answer->answered = true;
        answer->ok = ok;
      }
      answer->cv.notify_all();
    });
    std::unique_lock lock(answer->mu);
    while (!answer->answered) {
      answer->cv.wait_for(lock, kPollTimeout);
      if (stopping.load() && SteadyClock::now() >= StopDeadline()) return false;
    }
    return answer->ok;
  }

  SteadyClock::time_point StopDeadline() const {
    return SteadyClock::time_point(SteadyClock::duration(stop_deadline.load()));
  }

  void offset_commit_cb(RdKafka::ErrorCode err,
                        std::vector<RdKafka::TopicPartition*>& /*offsets*/) override {
    if (err == RdKafka::ERR_NO_ERROR) {
      commits.fetch_add(1, std::memory_order_relaxed);
    } else if (err != RdKafka::ERR__NO_OFFSET) {
      errors.fetch_add(1, std::memory_order_relaxed);
      LogThrottled(std::string("kafka commit: ") + RdKafka::err2str(err));
    }
  }

  // Stores `offsets` (those past what was stored before) for librdkafka to commit; with
  // `now`, commits them at once as well (a revoke, inside the rebalance callback, where the
  // group's generation is still ours). A stop's revoke does not wait for the broker's answer
  // (it may not come before the stop deadline): the commit is sent ahead of the group leave,
  // and offsets it does not commit are read again by the next owner.
  void Commit(const Offsets& offsets, bool now) {
    std::vector<RdKafka::TopicPartition*> list;
    for (const auto& [key, offset] : offsets) {
      if (offset < 0) continue;
      const auto last = stored.find(key);
      if (last != stored.end() && last->second >= offset && !now) continue;
      list.push_back(RdKafka::TopicPartition::create(key.first, key.second, offset));
    }
    if (list.empty()) return;
    RdKafka::ErrorCode err = consumer->offsets_store(list);
    const bool async = now && stopping.load();
    if (err == RdKafka::ERR_NO_ERROR && now) {
      err = async ? consumer->commitAsync(list) : consumer->commitSync(list);
    }
    if (err == RdKafka::ERR_NO_ERROR) {
      if (now && !async) commits.fetch_add(1, std::memory_order_relaxed);
      for (const auto* p : list) stored[{p->topic(), p->partition()}] = p->offset();
    } else {
      errors.fetch_add(1, std::memory_order_relaxed);
      LogThrottled(std::string("kafka commit: ") + RdKafka::err2str(err));
    }
    RdKafka::TopicPartition::destroy(list);
  }

  // Periodic commits: a checkpoint of what was delivered is asked for; once it is answered,
  // the offsets it covers are committed (for the partitions still assigned).
  void MaybeCommit(SteadyClock::time_point now) {
    if (in_flight) {
      bool answered = false, ok = false;
      {
        std::lock_guard lock(in_flight->mu);
        answered = in_flight->answered;
        ok = in_flight->ok;
      }
      if (!answered) return;
      if (ok) Commit(in_flight_offsets, false);
      in_flight.reset();
      in_flight_offsets.clear();
    }
    if (now < next_commit) return;
    next_commit = now + std::chrono::microseconds(options.commit_interval_us);
    bool news = false;
    for (const auto& [key, offset] : delivered) {
      const auto last = stored.find(key);
      news = news || (offset >= 0 && (last == stored.end() || last->second < offset));
    }
    if (!news) return;
    in_flight_offsets = delivered;
    in_flight = std::make_shared<Answer>();
    target.Checkpoint(false, [answer = in_flight](bool ok) {
      {
        std::lock_guard lock(answer->mu);
        answer->answered = true;
        answer->ok = ok;
      }
      answer->cv.notify_all();
    });
  }

  void UpdateLag() {
    std::int64_t lag = 0;
    for (const auto& [key, offset] : delivered) {
      std::int64_t low = 0, high = 0;
      if (consumer->get_watermark_offsets(key.first, key.second, &low, &high) !=
          RdKafka::ERR_NO_ERROR) {
        continue;
      }
      const std::int64_t at = offset >= 0 ? offset : low;
      const std::int64_t behind = high > at ? high - at : 0;
      partition_info.SetLag(key.first, key.second, behind);
      lag += behind;
    }
    lag_gauge->store(lag);
  }

  void Run() {
    if (const RdKafka::ErrorCode err = consumer->subscribe(options.topics);
        err != RdKafka::ERR_NO_ERROR) {
      spdlog::error("input {}: kafka subscribe: {}", name, RdKafka::err2str(err));
      errors.fetch_add(1, std::memory_order_relaxed);
    }
    Polled polled;
    std::vector<const rd_kafka_message_t*> messages;  // the round's records, errors left out
    std::vector<std::string_view> lines;
    std::vector<LineOrigin> origins;  // per line: its partition's stream and its offset
    auto next_lag = SteadyClock::now();
    next_commit = SteadyClock::now() + std::chrono::microseconds(options.commit_interval_us);
    KafkaFetchWaker waker(*consumer, queue_limit_records, queue_limit_bytes, fetch_wakeups, name);
    while (!stopping.load()) {
      polled.Release();
      messages.clear();
      // The first record (or error) waits up to kPollTimeout and serves the client's
      // callbacks (rebalances, errors) as consume() does; the rest of the round is what the
      // client has queued already, taken in one call rather than one allocation and poll each.
      std::size_t queued_before = 0;  // prefetched records when the round began (fetch waker)
      if (rd_kafka_message_t* first =
              rd_kafka_consumer_poll(consumer->c_ptr(), static_cast<int>(kPollTimeout.count()))) {
        polled.at[0] = first;
        polled.size = 1;
        queued_before = rd_kafka_queue_length(queue.get());
        const ssize_t more =
            rd_kafka_consume_batch_queue(queue.get(), 0, polled.at.data() + 1, kMaxBatch - 1);
        if (more > 0) polled.size += static_cast<std::size_t>(more);
      }
      for (std::size_t i = 0; i < polled.size; ++i) {
        const rd_kafka_message_t* m = polled.at[i];
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
          messages.push_back(m);
        } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          errors.fetch_add(1, std::memory_order_relaxed);
          const bool no_topic = m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                                m->err == RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION;
          LogThrottled(
              std::string("kafka: ") +
              (no_topic && m->rkt != nullptr
                   ? "topic " + std::string(rd_kafka_topic_name(m->rkt)) + " does not exist (yet): "
                   : std::string()) +
              rd_kafka_message_errstr(m));
        }
      }
      // A revoke inside the poll may have taken partitions whose records are already here:
      // they are the next owner's now (it starts at our commit), so they are not delivered.
      // Each run of one partition's records goes with that partition's salt, so its groups
      // stay its own (librdkafka hands out a fetched batch of one partition at a time).
      bool stopped = false;
      for (std::size_t run = 0; run < messages.size() && !stopped;) {
        const rd_kafka_message_t* head = messages[run];
        std::size_t end = run;
        while (end < messages.size() && messages[end]->partition == head->partition &&
               messages[end]->rkt == head->rkt) {
          ++end;
        }
        const PartitionKey key{rd_kafka_topic_name(head->rkt), head->partition};
        const auto at = delivered.find(key);
        if (at != delivered.end()) {
          lines.clear();
          origins.clear();
          const std::uint64_t stream = partition_info.Stream(key.first, key.second);
          std::uint64_t byte_count = 0;
          for (std::size_t i = run; i < end; ++i) {
            std::string_view value(static_cast<const char*>(messages[i]->payload),
                                   messages[i]->len);
            byte_count += value.size();
            if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
            if (value.size() > options.max_message_size) {
              value = value.substr(0, options.max_message_size);
              truncated.fetch_add(1, std::memory_order_relaxed);
            }
            lines.push_back(value);
            origins.push_back({stream, messages[i]->offset});
          }
          bytes.fetch_add(byte_count, std::memory_order_relaxed);
          received.fetch_add(lines.size(), std::memory_order_relaxed);
          if (!delivery.Deliver(lines, WallClockNowUs(), PartitionSalt(key.first, key.second),
                                origins)) {
            stopped = true;  // not committed
            break;
          }
          at->second = std::max(at->second, messages[end - 1]->offset + 1);
        }
        run = end;
      }
      if (stopped) break;
      if (!messages.empty()) {
        std::size_t round_bytes = 0;
        for (const rd_kafka_message_t* message : messages) round_bytes += message->len;
        const double average =
            static_cast<double>(round_bytes) / static_cast<double>(messages.size());
        record_bytes = record_bytes == 0 ? average : 0.9 * record_bytes + 0.1 * average;
      }
      waker.Observe(queued_before, rd_kafka_queue_length(queue.get()), record_bytes, [this] {
        KafkaFetchWaker::Partitions assigned;
        for (const auto& [key, offset] : delivered) assigned.push_back(key);
        return assigned;
      });
      const auto now = SteadyClock::now();
      MaybeCommit(now);
      if (now >= next_lag) {
        UpdateLag();
        next_lag = now + kLagInterval;
      }
    }
    waker.Stop();
    polled.Release();
    queue.reset();
    // Leaving the group revokes every partition through rebalance_cb: open groups are
    // summarised and the offsets committed there, bounded by the stop deadline.
    const bool closed = CloseConsumerBy(
        *consumer, [this] { return StopDeadline(); },
        [this](RdKafka::ErrorCode err, std::vector<RdKafka::TopicPartition*>& partitions) {
          rebalance_cb(consumer.get(), err, partitions);
        },
        [this](const std::string& error) {
          errors.fetch_add(1, std::memory_order_relaxed);
          LogThrottled("kafka close: " + error);
        });
    if (closed) {
      spdlog::info("input {}: left consumer group {}", name, options.group_id);
      return;
    }
    // Not destroyed: librdkafka 2.0's destroy would wait for the close. The offsets not
    // committed are read again by the partitions' next owner.
    errors.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("input {}: kafka consumer did not close by the shutdown deadline", name);
    KeepUntilExit(std::shared_ptr<void>(consumer.release(), [](void*) {}));
    KeepUntilExit(events);
  }

  const std::string name;
  const Options options;
  IngestTarget& target;
  BlockingDelivery delivery;
  Metrics::Counter& received;
  Metrics::Counter& bytes;
  Metrics::Counter& truncated;
  Metrics::Counter& errors;
  Metrics::Counter& rebalances;
  Metrics::Counter& commits;
  Metrics::Counter& fetch_wakeups;
  // Shared with the gauges, which may outlive this input inside Metrics.
  std::shared_ptr<std::atomic<std::int64_t>> assigned_gauge;
  std::shared_ptr<std::atomic<std::int64_t>> lag_gauge;
  KafkaPartitions partition_info;  // consumer thread only; stream ids and per-partition lag
  // Before the consumer, whose threads call it until it is destroyed (see KeepUntilExit).
  std::shared_ptr<KafkaEventForward<Impl>> events = std::make_shared<KafkaEventForward<Impl>>();
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  struct QueueDeleter {
    void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
  };
  // The consumer's queue (declared after `consumer`, so it goes first): its length tells the
  // fetch waker how much the client has prefetched.
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue;
  std::size_t queue_limit_records = 0;  // queued.min.messages
  std::size_t queue_limit_bytes = 0;    // queued.max.messages.kbytes, in bytes
  double record_bytes = 0;              // consumer thread: recent average record value size
  std::atomic<bool> stopping{false};
  std::atomic<SteadyClock::rep> stop_deadline{0};

  // Consumer thread only. Per assigned partition: the offset after the last line delivered
  // to the target (-1: none yet).
  Offsets delivered;
  Offsets stored;                     // what this member last stored for commit, per partition
  std::shared_ptr<Answer> in_flight;  // the periodic checkpoint awaited, if any
  Offsets in_flight_offsets;          // what it covers
  SteadyClock::time_point next_commit{};
  SteadyClock::time_point next_error_log{};
  std::uint64_t suppressed = 0;
};

KafkaInput::KafkaInput(std::uint32_t input, std::string name, const Options& options,
                       IngestTarget& target, Metrics& metrics)
    : name_(std::move(name)),
      impl_(std::make_unique<Impl>(input, name_, options, target, metrics)) {}

KafkaInput::~KafkaInput() {
  Stop(SteadyClock::now());
  Join();
}

void KafkaInput::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { impl_->Run(); });
  NameThread(thread_, "lf-in-" + name_);
}

void KafkaInput::Stop(std::chrono::steady_clock::time_point deadline) {
  if (impl_->stopping.load()) return;
  impl_->stop_deadline.store(deadline.time_since_epoch().count());
  impl_->stopping.store(true);
  impl_->delivery.Stop();
}

void KafkaInput::Join() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace logfold
