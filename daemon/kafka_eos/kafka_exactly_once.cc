// KafkaExactlyOnce: the consumer thread, its per-partition mergers, the transactions that
// commit events, changelog and offsets together, and the restore of a partition's groups
// from the changelog when it is assigned (or when a failed transaction is rolled back).
#include "daemon/kafka_eos/kafka_exactly_once.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>
#include <spdlog/spdlog.h>
#include <time.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/kafka_eos/changelog_codec.h"
#include "daemon/runtime/kafka_consumer_close.h"
#include "daemon/runtime/kafka_fetch_waker.h"
#include "daemon/runtime/kafka_stream.h"
#include "daemon/runtime/thread_name.h"
#include "daemon/runtime/wall_clock.h"
#include "pipeline/event_json.h"
#include "pipeline/shape_map.h"

namespace logfold {

namespace {

using SteadyClock = std::chrono::steady_clock;
using PartitionKey = std::pair<std::string, std::int32_t>;

constexpr std::size_t kMaxBatch = 1024;
constexpr int kPollMs = 100;
constexpr TimeUs kFlushIntervalUs = 100'000;
constexpr int kTxnTimeoutMs = 30'000;
constexpr int kCallSliceMs = 1'000;
constexpr auto kRestoreTimeout = std::chrono::seconds(60);
constexpr auto kRestoreRetry = std::chrono::milliseconds(500);
constexpr auto kErrorLogInterval = std::chrono::seconds(10);

std::string Labels(std::string_view name) {
  return "input=\"" + Metrics::EscapeLabelValue(name) + "\",proto=\"kafka\"";
}

void Set(RdKafka::Conf& conf, const std::string& key, const std::string& value) {
  std::string err;
  if (conf.set(key, value, err) != RdKafka::Conf::CONF_OK) {
    throw std::runtime_error("kafka property " + key + ": " + err);
  }
}

// The options that key groups, as one number: restored groups resume folding only under the
// same (as the state directory's checkpoints do).
std::uint64_t GroupKeySettings(const MergerOptions& o) {
  std::string key = "2|";
  for (ScopeField f : o.scope) key += static_cast<char>('a' + static_cast<int>(f));
  key += '|' + std::to_string(o.tokenizer.max_tokens) + '|' + std::to_string(o.annotate) + '|';
  key += std::to_string(o.infer_header) + '|';
  key += std::to_string(o.weights.word) + '|' + std::to_string(o.weights.pairs);
  for (float w : o.weights.by_class) key += '|' + std::to_string(w);
  return XXH3_64bits(key.data(), key.size());
}

// What of a group the changelog must follow: a record is written when it changes.
std::uint64_t GroupDigest(const GroupState& g) {
  const std::uint64_t fields[] = {g.count_total,
                                  g.count_since,
                                  static_cast<std::uint64_t>(g.last_activity_us),
                                  static_cast<std::uint64_t>(g.hold_start_us),
                                  static_cast<std::uint64_t>(g.last_seen_us),
                                  static_cast<std::uint64_t>(g.max_distance)};
  return XXH3_64bits(fields, sizeof fields);
}

// A producer call on a thread of its own, and what it returned; under Waker::mu.
struct CallState {
  bool done = false;
  std::unique_ptr<RdKafka::Error> error;
};

// What a producer call came to: librdkafka's error (null: success), or left behind at the
// stop deadline.
struct CallOutcome {
  std::unique_ptr<RdKafka::Error> error;
  bool left_behind = false;
  bool ok() const { return !error && !left_behind; }
  bool retriable() const { return error && error->is_retriable(); }
  bool fatal() const { return error && error->is_fatal(); }
  std::string str() const {
    return left_behind ? "left behind at the shutdown deadline"
                       : (error ? error->str() : std::string());
  }
};

// Wakes the consumer thread from a producer call's wait: the call ended, or Stop.
struct Waker {
  std::mutex mu;
  std::condition_variable cv;
};

}  // namespace

struct KafkaExactlyOnce::Impl : RdKafka::RebalanceCb, EventSink {
  struct Partition {
    std::string topic;
    std::int32_t partition = 0;
    std::string prefix;        // of its changelog keys
    std::uint64_t stream = 0;  // its lines' LineOrigin::stream, as the at-least-once mode's
    std::int32_t changelog_partition = 0;
    std::unique_ptr<WindowMerger> merger;
    std::int64_t next_offset = -1;       // after the last record folded; -1: none yet
    std::int64_t committed_offset = -1;  // as of the last committed transaction
    // Group id -> digest, as the changelog holds it (`written`) and as the open transaction
    // writes it (`pending`, becomes `written` once committed).
    std::unordered_map<std::uint64_t, std::uint64_t> written, pending;
    bool dirty = false;  // records or events since the last commit
    TimeUs event_clock = INT64_MIN, event_clock_wall = 0;
  };

  Impl(const std::string& input_name, Options opts, Metrics& metrics)
      : name(input_name),
        options(std::move(opts)),
        parser(options.parser),
        settings_key(GroupKeySettings(options.merger)),
        received(metrics.GetCounter("logfold_received_total", "Lines received.", Labels(name))),
        bytes(metrics.GetCounter("logfold_received_bytes_total",
                                 "Bytes received (datagram payloads, frames).", Labels(name))),
        truncated(metrics.GetCounter("logfold_truncated_total", "Messages cut to max_message_size.",
                                     Labels(name))),
        errors(metrics.GetCounter("logfold_input_errors_total", "Input errors, by kind.",
                                  Labels(name) + ",error=\"kafka\"")),
        rebalances(metrics.GetCounter("logfold_kafka_rebalances_total",
                                      "Partition assignments and revocations", Labels(name))),
        txn_commits(metrics.GetCounter("logfold_kafka_transactions_total",
                                       "Exactly-once transactions, by result",
                                       Labels(name) + ",result=\"commit\"")),
        txn_aborts(metrics.GetCounter("logfold_kafka_transactions_total",
                                      "Exactly-once transactions, by result",
                                      Labels(name) + ",result=\"abort\"")),
        restored_groups(metrics.GetCounter("logfold_kafka_changelog_restored_groups_total",
                                           "Open groups restored from the changelog",
                                           Labels(name))),
        resets(metrics.GetCounter(
            "logfold_kafka_changelog_resets_total",
            "Partitions consumed with no open groups because their changelog did not match "
            "(changelog_recovery: empty)",
            Labels(name))),
        scope_split(metrics.GetCounter(
            "logfold_kafka_scope_split_total",
            "Kafka records whose scope (engine.scope) was last seen on another partition",
            Labels(name))),
        fetch_wakeups(metrics.GetCounter(
            "logfold_kafka_fetch_wakeups_total",
            "Requests sent to wake the client's fetcher after its full queue drained",
            Labels(name))),
        assigned_gauge(std::make_shared<std::atomic<std::int64_t>>(0)),
        restore_us_gauge(std::make_shared<std::atomic<std::int64_t>>(0)) {
    metrics.AddGauge("logfold_kafka_assigned_partitions", "Partitions assigned to this member",
                     Labels(name), [g = assigned_gauge] { return static_cast<double>(g->load()); });
    metrics.AddGauge("logfold_kafka_changelog_restore_seconds",
                     "Time the latest restore of a partition's groups from the changelog took",
                     Labels(name),
                     [g = restore_us_gauge] { return static_cast<double>(g->load()) / 1e6; });
    const KafkaInputOptions& in = options.input;
    std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    for (const auto& [key, value] : in.properties) Set(*conf, key, value);
    Set(*conf, "bootstrap.servers", in.brokers);
    Set(*conf, "group.id", in.group_id);
    // Offsets are committed only inside the transactions.
    Set(*conf, "enable.auto.commit", "false");
    Set(*conf, "enable.auto.offset.store", "false");
    Set(*conf, "isolation.level", "read_committed");
    Set(*conf, "partition.assignment.strategy", "cooperative-sticky");
    if (in.properties.count("auto.offset.reset") == 0) Set(*conf, "auto.offset.reset", "earliest");
    if (in.properties.count("client.id") == 0) Set(*conf, "client.id", "logfold-" + name);
    events->owner = this;
    std::string err;
    if (conf->set("rebalance_cb", static_cast<RdKafka::RebalanceCb*>(this), err) !=
            RdKafka::Conf::CONF_OK ||
        conf->set("event_cb", static_cast<RdKafka::EventCb*>(events.get()), err) !=
            RdKafka::Conf::CONF_OK) {
      throw std::runtime_error("kafka: " + err);
    }
    std::tie(queue_limit_records, queue_limit_bytes) = KafkaFetchWaker::QueueLimits(*conf);
    consumer.reset(RdKafka::KafkaConsumer::create(conf.get(), err));
    if (!consumer) throw std::runtime_error("kafka consumer: " + err);

    // The changelog reader: assigned one changelog partition at a time, never commits.
    std::unique_ptr<RdKafka::Conf> rconf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    for (const auto& [key, value] : in.properties) Set(*rconf, key, value);
    Set(*rconf, "bootstrap.servers", in.brokers);
    Set(*rconf, "group.id", in.group_id + ".changelog-reader");
    Set(*rconf, "enable.auto.commit", "false");
    Set(*rconf, "isolation.level", "read_committed");
    Set(*rconf, "enable.partition.eof", "true");
    Set(*rconf, "auto.offset.reset", "earliest");
    // A restore ends at the partition's end, which librdkafka learns from a fetch that comes
    // back empty: the broker holds such a fetch this long (500 ms by default).
    Set(*rconf, "fetch.wait.max.ms", "10");
    if (rconf->set("event_cb", static_cast<RdKafka::EventCb*>(events.get()), err) !=
        RdKafka::Conf::CONF_OK) {
      throw std::runtime_error("kafka: " + err);
    }
    restorer.reset(RdKafka::KafkaConsumer::create(rconf.get(), err));
    if (!restorer) throw std::runtime_error("kafka changelog reader: " + err);
    transactional_id =
        in.transactional_id.empty() ? "logfold-" + in.group_id + "-" + name : in.transactional_id;
    producer = MakeProducer();
  }

  ~Impl() {
    std::lock_guard lock(events->mu);
    events->owner = nullptr;
  }

  // Shared with the calls of CallProducer; the producer keeps its event callback alive.
  std::shared_ptr<RdKafka::Producer> MakeProducer() {
    const KafkaSinkOptions& out = options.output;
    std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    for (const auto& [key, value] : out.properties) Set(*conf, key, value);
    Set(*conf, "bootstrap.servers", out.brokers);
    Set(*conf, "transactional.id", transactional_id);
    Set(*conf, "enable.idempotence", "true");
    Set(*conf, "acks", "all");
    Set(*conf, "compression.codec", std::string(KafkaCompressionName(out.compression)));
    if (out.properties.count("linger.ms") == 0) Set(*conf, "linger.ms", "20");
    // What a member that dies leaves open holds the readers of the output, the changelog and
    // the next owner's committed offsets until the broker aborts it: after this long. A
    // transaction lasts one commit_interval; the broker allows 15 minutes at most.
    // librdkafka wants message.timeout.ms and socket.timeout.ms (- 100) within it.
    if (out.properties.count("transaction.timeout.ms") == 0) {
      std::int64_t ms = options.input.commit_interval_us / 1000 + 10'000;
      if (const auto it = out.properties.find("message.timeout.ms"); it != out.properties.end()) {
        ms = std::max<std::int64_t>(ms, std::atoll(it->second.c_str()));
      }
      if (const auto it = out.properties.find("socket.timeout.ms"); it != out.properties.end()) {
        ms = std::max<std::int64_t>(ms, std::atoll(it->second.c_str()) - 100);
      }
      txn_timeout_ms = std::min<std::int64_t>(ms, 900'000);
      Set(*conf, "transaction.timeout.ms", std::to_string(txn_timeout_ms));
    } else {
      txn_timeout_ms = std::atoll(out.properties.at("transaction.timeout.ms").c_str());
    }
    std::string err;
    if (conf->set("event_cb", static_cast<RdKafka::EventCb*>(events.get()), err) !=
        RdKafka::Conf::CONF_OK) {
      throw std::runtime_error("kafka: " + err);
    }
    RdKafka::Producer* p = RdKafka::Producer::create(conf.get(), err);
    if (p == nullptr) throw std::runtime_error("kafka transactional producer: " + err);
    return std::shared_ptr<RdKafka::Producer>(p,
                                              [keep = events](RdKafka::Producer* q) { delete q; });
  }

  // ---- errors ----

  void OnKafkaEvent(RdKafka::Event& event) {
    if (event.type() == RdKafka::Event::EVENT_ERROR) {
      errors.fetch_add(1, std::memory_order_relaxed);
      LogThrottled(std::string("kafka: ") + RdKafka::err2str(event.err()) + ": " + event.str());
    } else if (event.type() == RdKafka::Event::EVENT_LOG &&
               event.severity() <= RdKafka::Event::EVENT_SEVERITY_WARNING) {
      spdlog::warn("input {}: librdkafka {}: {}", name, event.fac(), event.str());
    }
  }

  void LogThrottled(const std::string& what) {
    std::lock_guard lock(log_mu);  // librdkafka's threads call event_cb too
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

  // ---- the transaction ----

  // Producer calls fail with an RdKafka::Error the caller owns.
  static std::string Take(RdKafka::Error* e) {
    std::unique_ptr<RdKafka::Error> owned(e);
    return owned ? owned->str() : std::string();
  }

  // Connects the transactional producer (fencing any earlier producer of this
  // transactional.id: what a crashed run left open is aborted). Retries until stopped.
  bool InitTransactions() {
    while (!stopping.load()) {
      const CallOutcome e =
          CallProducer([](RdKafka::Producer& p) { return p.init_transactions(kTxnTimeoutMs); });
      if (e.ok()) return true;
      if (e.left_behind) return false;
      errors.fetch_add(1, std::memory_order_relaxed);
      spdlog::error("input {}: kafka init_transactions ({}): {}", name, transactional_id, e.str());
      if (e.fatal()) producer = MakeProducer();
    }
    return false;
  }

  // The timeout of a transaction call: librdkafka's usual bound, or once stopping what is
  // left until the shutdown deadline (at least 1 ms).
  int TxnTimeoutMs() const {
    if (!stopping.load()) return kTxnTimeoutMs;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        SteadyClock::time_point(SteadyClock::duration(stop_deadline.load())) - SteadyClock::now());
    return static_cast<int>(std::clamp<std::int64_t>(left.count(), 1, kTxnTimeoutMs));
  }

  SteadyClock::time_point StopDeadline() const {
    return SteadyClock::time_point(SteadyClock::duration(stop_deadline.load()));
  }

  bool PastDeadline() const { return stopping.load() && SteadyClock::now() >= StopDeadline(); }

  // Runs a blocking call of the producer on a thread of its own and waits for it; once
  // stopping, only until the stop deadline. librdkafka 2.0 may block past a call's timeout
  // (send_offsets_to_transaction, commit_transaction) while the broker does not answer: such a
  // call is left behind with its own reference to the producer, which this input uses no more
  // (`abandoned`). Its transaction then ends as a whole, committed or aborted (by the broker
  // at transaction.timeout.ms, or when the next producer of this transactional.id fences it):
  // events, changelog and offsets together. `call` must own what it uses.
  CallOutcome CallProducer(std::function<RdKafka::Error*(RdKafka::Producer&)> call) {
    if (abandoned) return CallOutcome{nullptr, true};
    auto state = std::make_shared<CallState>();
    std::thread thread([call = std::move(call), p = producer, state, w = waker] {
      std::unique_ptr<RdKafka::Error> e(call(*p));
      {
        std::lock_guard lock(w->mu);
        state->error = std::move(e);
        state->done = true;
      }
      w->cv.notify_all();
    });
    std::unique_lock lock(waker->mu);
    while (!state->done) {
      if (!stopping.load()) {
        waker->cv.wait(lock, [&] { return state->done || stopping.load(); });
      } else if (!waker->cv.wait_until(lock, StopDeadline(), [&] { return state->done; })) {
        break;
      }
    }
    if (!state->done) {
      lock.unlock();
      thread.detach();
      abandoned = true;
      errors.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn(
          "input {}: a kafka transaction call did not return by the shutdown deadline (the "
          "broker does not answer); left behind: its transaction commits or aborts as a whole "
          "on the broker",
          name);
      return CallOutcome{nullptr, true};
    }
    CallOutcome outcome{std::move(state->error), false};
    lock.unlock();
    thread.join();
    return outcome;
  }

  // A transaction call (commit, abort: librdkafka resumes each when it is called again after
  // a retriable error, a timeout included) in calls of at most a second, until it
  // succeeds, fails for good, or its usual bound or the shutdown deadline passes: a Stop
  // during a call to a hung broker is bounded by its deadline. `call` takes the timeout in ms.
  template <typename Call>
  CallOutcome InSlices(Call&& call) {
    const auto bound = SteadyClock::now() + std::chrono::milliseconds(kTxnTimeoutMs);
    while (true) {
      const int ms = std::min(TxnTimeoutMs(), kCallSliceMs);
      CallOutcome e = CallProducer([call, ms](RdKafka::Producer& p) { return call(p, ms); });
      if (!e.retriable() || PastDeadline() || SteadyClock::now() >= bound) return e;
    }
  }

  std::string Abort() {
    return InSlices([](RdKafka::Producer& p, int ms) { return p.abort_transaction(ms); }).str();
  }

  void BeginIfNeeded() {
    if (txn_open) return;
    if (abandoned) {
      broken = true;
      return;
    }
    if (std::string e = Take(producer->begin_transaction()); !e.empty()) {
      spdlog::error("input {}: kafka begin_transaction: {}", name, e);
      errors.fetch_add(1, std::memory_order_relaxed);
      broken = true;
      return;
    }
    txn_open = true;
  }

  // Produces one record inside the open transaction, waiting while librdkafka's queue is full.
  void Produce(const std::string& topic, std::int32_t partition, std::string_view key,
               const std::string* value) {
    BeginIfNeeded();
    if (abandoned) return;
    while (true) {
      const RdKafka::ErrorCode err =
          producer->produce(topic, partition, RdKafka::Producer::RK_MSG_COPY,
                            value == nullptr ? nullptr : const_cast<char*>(value->data()),
                            value == nullptr ? 0 : value->size(),
                            key.empty() ? nullptr : key.data(), key.size(), 0, nullptr);
      if (err == RdKafka::ERR__QUEUE_FULL && !PastDeadline()) {
        producer->poll(10);
        continue;
      }
      if (err != RdKafka::ERR_NO_ERROR) {
        // The transaction cannot commit without this record: it is rolled back.
        spdlog::error("input {}: kafka produce to {}: {}", name, topic, RdKafka::err2str(err));
        errors.fetch_add(1, std::memory_order_relaxed);
        broken = true;
      }
      return;
    }
  }

  // EventSink: every event of every partition's merger goes to the output topic, in the
  // open transaction.
  void OnEvent(const Event& e) override {
    event_buf.clear();
    AppendEventJson(e, event_buf);
    if (held_events != nullptr) {
      held_events->push_back(event_buf);
      return;
    }
    ProduceEvent(event_buf);
    if (current != nullptr) current->dirty = true;
  }

  void ProduceEvent(const std::string& json) {
    const std::string_view key = options.output.key == KafkaKey::kNone
                                     ? std::string_view()
                                     : EventJsonStringField(json, KafkaKeyName(options.output.key));
    Produce(options.output.topic, RdKafka::Topic::PARTITION_UA, key, &json);
  }

  // Writes what changed of `p`'s groups since the last commit, and its marker.
  void WriteChangelog(Partition& p) {
    p.pending.clear();
    p.merger->ExportGroups([&](const GroupState& g) {
      const std::uint64_t digest = GroupDigest(g);
      p.pending[g.id] = digest;
      const auto w = p.written.find(g.id);
      if (w != p.written.end() && w->second == digest) return;
      EncodeGroup(g, settings_key, writer, value_buf);
      Produce(options.input.changelog_topic, p.changelog_partition,
              ChangelogGroupKey(p.prefix, g.id), &value_buf);
    });
    for (const auto& [id, digest] : p.written) {
      if (p.pending.count(id) == 0) {
        Produce(options.input.changelog_topic, p.changelog_partition,
                ChangelogGroupKey(p.prefix, id), nullptr);
      }
    }
    if (p.next_offset >= 0) {
      EncodeMarker({p.next_offset, p.merger->id_counter(), settings_key}, value_buf);
      Produce(options.input.changelog_topic, p.changelog_partition, ChangelogMarkerKey(p.prefix),
              &value_buf);
    }
  }

  struct OffsetsToSend {
    ~OffsetsToSend() { RdKafka::TopicPartition::destroy(offsets); }
    std::vector<RdKafka::TopicPartition*> offsets;
    std::unique_ptr<RdKafka::ConsumerGroupMetadata> meta;
  };

  // Commits one transaction: events so far, changed groups, offsets. On failure it is
  // aborted and false returned; the caller rolls the partitions back (Rewind).
  bool CommitTransaction() {
    bool any = txn_open || broken;
    for (auto& [key, p] : parts) any = any || p.dirty;
    if (!any) return true;
    std::vector<RdKafka::TopicPartition*> offsets;
    std::string error;
    if (!broken) {
      BeginIfNeeded();
      for (auto& [key, p] : parts) {
        if (p.dirty) WriteChangelog(p);
        if (p.next_offset >= 0) {
          offsets.push_back(RdKafka::TopicPartition::create(p.topic, p.partition, p.next_offset));
        }
      }
    }
    if (broken) {
      error = "a record could not be produced";
    } else if (!offsets.empty()) {
      // Owned by the call, which may outlive this one (CallProducer). Not in slices:
      // librdkafka (2.0) may wait past the timeout of a repeated call.
      auto owned = std::make_shared<OffsetsToSend>();
      owned->offsets = std::move(offsets);
      owned->meta.reset(consumer->groupMetadata());
      const int ms = TxnTimeoutMs();
      const CallOutcome e = CallProducer([owned, ms](RdKafka::Producer& p) {
        return p.send_offsets_to_transaction(owned->offsets, owned->meta.get(), ms);
      });
      error = e.str();
    }
    RdKafka::TopicPartition::destroy(offsets);
    bool fatal = false;
    if (error.empty()) {
      const CallOutcome e =
          InSlices([](RdKafka::Producer& p, int ms) { return p.commit_transaction(ms); });
      error = e.str();
      fatal = e.fatal();
    }
    txn_open = false;
    if (error.empty()) {
      txn_commits.fetch_add(1, std::memory_order_relaxed);
      for (auto& [key, p] : parts) {
        if (p.dirty) p.written.swap(p.pending);
        p.pending.clear();
        p.dirty = false;
        p.committed_offset = p.next_offset;
      }
      return true;
    }
    txn_aborts.fetch_add(1, std::memory_order_relaxed);
    errors.fetch_add(1, std::memory_order_relaxed);
    broken = false;
    if (stopping.load()) {
      // Stopping. A call left behind (CallProducer) leaves the transaction to the broker,
      // which commits or aborts it whole. Otherwise the offsets did not commit either, so the
      // next owner of these partitions reads the lines again from the last committed groups;
      // what is left of the transaction (if the abort does not get through in time either)
      // the broker aborts when that owner's producer fences this transactional.id, or at
      // transaction.timeout.ms.
      if (abandoned) {
        spdlog::warn(
            "input {}: the last transaction did not finish by the shutdown deadline; the "
            "broker commits or aborts it whole (events, changelog and offsets together)",
            name);
        return false;
      }
      spdlog::warn(
          "input {}: the last transaction did not commit by the shutdown deadline and is "
          "aborted; its lines are read again by the next owner of their partitions: {}",
          name, error);
      if (!fatal) Abort();
      return false;
    }
    spdlog::error("input {}: kafka transaction failed, rolled back to the last commit: {}", name,
                  error);
    if (!fatal) {
      if (std::string e = Abort(); !e.empty()) {
        spdlog::error("input {}: kafka abort_transaction: {}", name, e);
        fatal = true;
      }
    }
    if (fatal) {
      // Fenced (another producer took this transactional.id) or broken for good: a new
      // producer, whose init fences what is left of this one.
      producer = MakeProducer();
      InitTransactions();
    }
    return false;
  }

  // ---- partitions ----

  Partition NewPartition(const std::string& topic, std::int32_t partition) {
    Partition p;
    p.topic = topic;
    p.partition = partition;
    p.prefix = ChangelogPrefix(topic, partition);
    p.stream = KafkaStream(topic, partition);
    p.changelog_partition = changelog_partitions > 0 ? partition % changelog_partitions : 0;
    MergerOptions mo = options.merger;
    // Group ids differ between partitions and stay the same for one partition across runs
    // (its id counter is restored with its groups).
    const std::string seed = options.input.group_id + "/" + p.prefix;
    mo.id_seed = XXH3_64bits(seed.data(), seed.size());
    p.merger = std::make_unique<WindowMerger>(std::move(mo));
    return p;
  }

  // Learns the changelog topic's partition count; false (logged) when it does not exist.
  // Asked through the changelog reader, which keeps the topic and its leaders known: else its
  // first assign waits for a metadata refresh (about a second) before it can fetch.
  bool ReadChangelogPartitions() {
    std::string err;
    if (!changelog_handle) {
      changelog_handle.reset(
          RdKafka::Topic::create(restorer.get(), options.input.changelog_topic, nullptr, err));
    }
    RdKafka::Metadata* md = nullptr;
    if (!changelog_handle ||
        restorer->metadata(false, changelog_handle.get(), &md, 10'000) != RdKafka::ERR_NO_ERROR) {
      return false;
    }
    std::unique_ptr<RdKafka::Metadata> owned(md);
    if (md->topics()->empty() || md->topics()->front()->err() != RdKafka::ERR_NO_ERROR ||
        md->topics()->front()->partitions()->empty()) {
      return false;
    }
    changelog_partitions = static_cast<std::int32_t>(md->topics()->front()->partitions()->size());
    return true;
  }

  // Rebuilds `p`'s merger from the changelog (read to its last committed record) and checks
  // it against `committed` (the group's committed offset, -1 if none). "" or the error.
  // CPU time of the calling thread: on a loaded machine the wall time of a restore says more
  // about the neighbours than about the restore.
  static std::int64_t ThreadCpuUs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
  }

  // What a read of a partition's changelog found: the latest value of each group's key, in
  // the order those records were written (about the order of the groups' last activity: a
  // commit writes the groups that changed, least recently active first). Superseded and
  // deleted values are released as they are read.
  struct ChangelogRead {
    std::vector<std::string> values;              // released once superseded or deleted
    std::vector<std::uint64_t> ids;               // of each value
    FlatMap64<std::uint32_t, UINT32_MAX> latest;  // group id -> index of its latest value
    std::size_t live = 0, records = 0;
    std::string marker_value;
    bool have_marker = false;
  };

  // Reads `p`'s records of the changelog from the beginning to its end as read_committed sees
  // it (`end`: the offset it stopped at, the last stable offset; `high`: the high watermark
  // the same fetch reported) into `r`; "" or the error.
  std::string ReadChangelog(const Partition& p, SteadyClock::time_point deadline, ChangelogRead& r,
                            std::int64_t& end, std::int64_t& high) {
    r = ChangelogRead{};
    std::vector<RdKafka::TopicPartition*> tp = {RdKafka::TopicPartition::create(
        options.input.changelog_topic, p.changelog_partition, RdKafka::Topic::OFFSET_BEGINNING)};
    std::string error;
    if (restorer->assign(tp) != RdKafka::ERR_NO_ERROR) error = "cannot read the changelog";
    while (error.empty()) {
      if (SteadyClock::now() >= deadline) {
        error = "timed out reading the changelog";
        break;
      }
      if (stopping.load()) {
        error = "stopping";
        break;
      }
      std::unique_ptr<RdKafka::Message> m(restorer->consume(500));
      if (m->err() == RdKafka::ERR__PARTITION_EOF) {
        end = m->offset();
        // The cached watermarks of the last fetch (a ListOffsets query would answer with the
        // last stable offset under read_committed).
        std::int64_t low = 0;
        if (restorer->get_watermark_offsets(options.input.changelog_topic, p.changelog_partition,
                                            &low, &high) != RdKafka::ERR_NO_ERROR) {
          high = -1;
        }
        break;
      }
      if (m->err() == RdKafka::ERR__TIMED_OUT) continue;
      if (m->err() != RdKafka::ERR_NO_ERROR) {
        error = "reading changelog topic \"" + options.input.changelog_topic + "\": " + m->errstr();
        break;
      }
      ++r.records;
      if (m->key_pointer() == nullptr) continue;
      const std::string_view key(static_cast<const char*>(m->key_pointer()), m->key_len());
      if (!key.starts_with(p.prefix)) continue;
      const char* value = static_cast<const char*>(m->payload());
      if (IsMarkerKey(key, p.prefix)) {
        r.have_marker = value != nullptr;
        r.marker_value.assign(value == nullptr ? "" : value, value == nullptr ? 0 : m->len());
        continue;
      }
      std::uint64_t id = 0;
      const std::string_view digits = key.substr(p.prefix.size());
      if (std::from_chars(digits.data(), digits.data() + digits.size(), id).ptr !=
              digits.data() + digits.size() ||
          digits.empty()) {
        error = "changelog record \"" + std::string(key) + "\": not a group's key";
        break;
      }
      if (const std::uint32_t at = r.latest.Find(id); at != r.latest.kAbsent) {
        std::string().swap(r.values[at]);
        --r.live;
      }
      if (value == nullptr) {
        r.latest.Erase(id);
        continue;
      }
      r.latest.Set(id, static_cast<std::uint32_t>(r.values.size()));
      r.values.emplace_back(value, m->len());
      r.ids.push_back(id);
      ++r.live;
    }
    restorer->unassign();
    RdKafka::TopicPartition::destroy(tp);
    return error;
  }

  // `why` ("assigned", "rolled back") goes into the log line: a partition restored on
  // assignment after a graceful handover has no open groups, one rolled back may have some.
  std::string Restore(Partition& p, std::int64_t committed, std::string_view why) {
    const auto start = SteadyClock::now();
    const std::int64_t cpu_start = ThreadCpuUs();
    if (changelog_partitions == 0 && !ReadChangelogPartitions()) {
      return "changelog topic \"" + options.input.changelog_topic +
             "\" does not exist (create it with cleanup.policy=compact)";
    }
    p.changelog_partition = p.partition % changelog_partitions;
    ChangelogRead read;
    // A transaction still open on the changelog partition (a member that died while
    // committing, until the broker aborts it; or the previous owner's last commit, whose
    // markers the broker is still writing) hides from read_committed everything committed
    // after its first record, and the read ends short of the high watermark. What it hides
    // may be newer state of this partition (the previous owner's last commit, with the same
    // offset but its groups closed): only a read to the high watermark is restored from.
    const auto wait_until = start + std::max<SteadyClock::duration>(
                                        kRestoreTimeout, std::chrono::milliseconds(txn_timeout_ms) +
                                                             std::chrono::seconds(20));
    for (bool waited = false;; waited = true) {
      std::int64_t end = -1, high = -1;
      if (std::string e = ReadChangelog(p, SteadyClock::now() + kRestoreTimeout, read, end, high);
          !e.empty()) {
        return e;
      }
      const bool pending = end >= 0 && end < high;
      if (pending) {
        if (stopping.load()) return "stopping";
        if (SteadyClock::now() + kRestoreRetry >= wait_until) {
          return "a transaction on the changelog stayed open (readable up to offset " +
                 std::to_string(end) + " of " + std::to_string(high) + ") for " +
                 std::to_string(
                     std::chrono::duration_cast<std::chrono::seconds>(SteadyClock::now() - start)
                         .count()) +
                 " s; restart this instance once it ended";
        }
        if (!waited) {
          spdlog::info(
              "input {}: partition {}: the changelog has a transaction open (readable up to "
              "offset {} of {}); waiting for it to end",
              name, p.prefix, end, high);
        }
        std::this_thread::sleep_for(kRestoreRetry);
        continue;
      }
      break;
    }
    const auto read_end = SteadyClock::now();
    std::vector<std::string>& values = read.values;
    const std::vector<std::uint64_t>& ids = read.ids;
    const auto& latest = read.latest;
    const std::size_t live = read.live, records = read.records;
    const bool have_marker = read.have_marker;
    const std::string& marker_value = read.marker_value;
    std::string error;
    ChangelogMarker marker;
    if (have_marker) {
      if (std::string e = DecodeMarker(marker_value, marker); !e.empty()) {
        return "changelog marker of " + p.prefix + ": " + e;
      }
    }
    if (committed >= 0 ? !have_marker || marker.next_offset != committed
                       : have_marker || live > 0) {
      return "the changelog does not match the committed offset (" +
             (have_marker ? "marker at " + std::to_string(marker.next_offset) : "no marker") +
             ", committed " + (committed >= 0 ? std::to_string(committed) : "none") +
             "): it was deleted, truncated or recreated";
    }
    // Each value is decoded and imported in turn into one reused SavedGroup. What the import
    // emits (groups that cannot resume) is held back until every value has decoded: a
    // partition whose changelog turns out corrupt must not have produced anything.
    Partition fresh = NewPartition(p.topic, p.partition);
    fresh.written.reserve(live);
    std::vector<std::string> held;
    held_events = &held;
    current = &fresh;
    const bool resume = marker.settings_key == settings_key;
    for (std::size_t i = 0; i < values.size() && error.empty(); ++i) {
      if (latest.Find(ids[i]) != i) continue;  // superseded or deleted
      std::uint64_t key_settings = 0;
      if (std::string e = DecodeGroup(values[i], restore_group, key_settings); !e.empty()) {
        error = "changelog record " + ChangelogGroupKey(p.prefix, ids[i]) + ": " + e;
      } else if (restore_group.id != ids[i]) {
        error = "changelog record " + ChangelogGroupKey(p.prefix, ids[i]) + " holds group " +
                std::to_string(restore_group.id);
      } else {
        fresh.merger->ImportGroup(restore_group.View(), resume, *this);
      }
      std::string().swap(values[i]);
    }
    current = nullptr;
    held_events = nullptr;
    if (!error.empty()) return error;
    if (have_marker) fresh.merger->RestoreIdCounter(marker.id_counter);
    fresh.merger->ExportGroups([&](const GroupState& g) { fresh.written[g.id] = GroupDigest(g); });
    if (fresh.merger->open_groups() < live) {
      // The groups the import summarised and closed keep their record with no digest, so
      // the next commit removes it.
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (latest.Find(ids[i]) == i) fresh.written.try_emplace(ids[i], 0);
      }
    }
    for (const std::string& event : held) ProduceEvent(event);
    fresh.dirty = !held.empty();
    fresh.next_offset = fresh.committed_offset = committed;
    restored_groups.fetch_add(live, std::memory_order_relaxed);
    restore_us_gauge->store(
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start).count());
    const auto ms = [](SteadyClock::duration d) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    };
    spdlog::info(
        "input {}: restored {} open group(s) of {} from the changelog ({}) in {} ms (reading "
        "{} record(s) {} ms, importing {} ms; {} ms CPU on this thread)",
        name, live, p.prefix, why, ms(SteadyClock::now() - start), records, ms(read_end - start),
        ms(SteadyClock::now() - read_end), (ThreadCpuUs() - cpu_start) / 1000);
    p = std::move(fresh);
    return "";
  }

  // Restores `p` for consuming from `committed`; false when changelog_recovery "stop" keeps
  // it from being consumed.
  bool RestoreOrRecover(Partition& p, std::int64_t committed, std::string_view why) {
    const std::string error = Restore(p, committed, why);
    if (error.empty()) return true;
    // A restore cut short by a stop is no reason to recover: the next owner restores it.
    if (stopping.load()) return false;
    errors.fetch_add(1, std::memory_order_relaxed);
    if (options.input.changelog_recovery == KafkaInputOptions::ChangelogRecovery::kStop) {
      spdlog::error(
          "input {}: partition {}: {}; not consuming it (see config/README.md, exactly-once "
          "mode: changelog_recovery)",
          name, p.prefix, error);
      return false;
    }
    spdlog::warn(
        "input {}: partition {}: {}; consuming from offset {} with no open groups "
        "(changelog_recovery: empty)",
        name, p.prefix, error, committed);
    resets.fetch_add(1, std::memory_order_relaxed);
    Partition fresh = NewPartition(p.topic, p.partition);
    fresh.next_offset = fresh.committed_offset = committed;
    fresh.dirty = true;  // the next commit writes a marker that matches
    p = std::move(fresh);
    return true;
  }

  // After a failed transaction: every partition back to its last commit.
  void Rewind() {
    if (stopping.load()) {
      // No restore now (it reads the changelog from a broker that may not answer): the next
      // owner of these partitions reads their lines again from the last commit.
      parts.clear();
      return;
    }
    for (auto it = parts.begin(); it != parts.end();) {
      Partition& p = it->second;
      const std::int64_t committed = p.committed_offset;
      if (!RestoreOrRecover(p, committed, "rolled back")) {
        stopped_parts.push_back(it->first);
        it = parts.erase(it);
        continue;
      }
      const RdKafka::TopicPartition* tp = RdKafka::TopicPartition::create(
          p.topic, p.partition, committed >= 0 ? committed : RdKafka::Topic::OFFSET_BEGINNING);
      if (const RdKafka::ErrorCode err = consumer->seek(*tp, 10'000);
          err != RdKafka::ERR_NO_ERROR) {
        spdlog::error("input {}: kafka seek {}: {}", name, p.prefix, RdKafka::err2str(err));
      }
      delete tp;
      ++it;
    }
  }

  // The group's committed offsets of `partitions` (read_committed: librdkafka waits while a
  // transaction holds them), retried until they come or the input stops (false).
  bool CommittedOffsets(RdKafka::KafkaConsumer& c,
                        std::vector<RdKafka::TopicPartition*>& partitions) {
    // In calls of at most a second, so that a stop need not wait out librdkafka's timeout.
    auto bound = SteadyClock::now() + std::chrono::milliseconds(kTxnTimeoutMs);
    while (true) {
      RdKafka::ErrorCode e = c.committed(partitions, std::min(TxnTimeoutMs(), kCallSliceMs));
      for (const auto* tp : partitions) {
        if (e == RdKafka::ERR_NO_ERROR && tp->err() != RdKafka::ERR_NO_ERROR) e = tp->err();
      }
      if (e == RdKafka::ERR_NO_ERROR) return true;
      if (stopping.load()) {
        spdlog::warn("input {}: kafka committed offsets: {}; stopping", name, RdKafka::err2str(e));
        return false;
      }
      if (e == RdKafka::ERR__TIMED_OUT && SteadyClock::now() < bound) continue;
      bound = SteadyClock::now() + std::chrono::milliseconds(kTxnTimeoutMs);
      errors.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn(
          "input {}: kafka committed offsets: {} (a transaction of a member that died may hold "
          "them until the broker aborts it); retrying",
          name, RdKafka::err2str(e));
    }
  }

  void rebalance_cb(RdKafka::KafkaConsumer* c, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    rebalances.fetch_add(1, std::memory_order_relaxed);
    if (err == RdKafka::ERR__ASSIGN_PARTITIONS && stopping.load()) {
      // Not restored nor consumed (their records are not folded): the next owner takes them
      // from their last commit.
      std::unique_ptr<RdKafka::Error> e(c->incremental_assign(partitions));
      if (e) spdlog::error("input {}: kafka assign: {}", name, e->str());
      for (const auto* tp : partitions) stopped_parts.emplace_back(tp->topic(), tp->partition());
    } else if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
      // Our own open transaction would hold the changelog's last stable offset back, and a
      // restore reads only up to it: it is committed first.
      if (txn_open && !CommitTransaction()) Rewind();
      // The committed offsets first: with read_committed, librdkafka waits for a transaction
      // still pending on them, so the changelog read after is the one they were committed with.
      std::vector<RdKafka::TopicPartition*> committed;
      for (const auto* p : partitions) {
        committed.push_back(RdKafka::TopicPartition::create(p->topic(), p->partition()));
      }
      // A transaction of a member that died while committing holds them until the broker
      // aborts it (the producer's transaction timeout): an answer must be waited for, as "no
      // offset" would not match the changelog and stop the partition.
      const bool have_offsets = CommittedOffsets(*c, committed);
      std::vector<RdKafka::TopicPartition*> stop;
      for (const auto* tp : committed) {
        const std::int64_t offset = tp->offset() >= 0 ? tp->offset() : -1;
        Partition p = NewPartition(tp->topic(), tp->partition());
        if (!have_offsets || !RestoreOrRecover(p, offset, "assigned")) {
          stopped_parts.emplace_back(tp->topic(), tp->partition());
          stop.push_back(RdKafka::TopicPartition::create(tp->topic(), tp->partition()));
          continue;
        }
        parts.insert_or_assign({tp->topic(), tp->partition()}, std::move(p));
      }
      RdKafka::TopicPartition::destroy(committed);
      std::unique_ptr<RdKafka::Error> e(c->incremental_assign(partitions));
      if (e) spdlog::error("input {}: kafka assign: {}", name, e->str());
      if (!stop.empty()) c->pause(stop);
      RdKafka::TopicPartition::destroy(stop);
      spdlog::info("input {}: assigned {} partition(s), {} consumed in all", name,
                   partitions.size(), parts.size());
    } else {
      const bool lost = err != RdKafka::ERR__REVOKE_PARTITIONS || c->assignment_lost();
      std::vector<PartitionKey> revoked;
      for (const auto* tp : partitions) revoked.emplace_back(tp->topic(), tp->partition());
      bool rewind = false;
      if (!lost) {
        // The revoked partitions' groups are summarised and committed with their offsets
        // before the next owner can take them.
        for (const PartitionKey& key : revoked) {
          const auto it = parts.find(key);
          if (it == parts.end()) continue;
          current = &it->second;
          it->second.merger->FlushAll(*this);
          it->second.dirty = true;
          current = nullptr;
        }
        rewind = !CommitTransaction();
      } else if (txn_open) {
        // The partitions may be someone else's already: nothing of ours may commit.
        Abort();
        txn_open = false;
        txn_aborts.fetch_add(1, std::memory_order_relaxed);
        rewind = true;
      }
      for (const PartitionKey& key : revoked) {
        parts.erase(key);
        stopped_parts.erase(std::remove(stopped_parts.begin(), stopped_parts.end(), key),
                            stopped_parts.end());
      }
      if (rewind) Rewind();
      std::unique_ptr<RdKafka::Error> e(c->incremental_unassign(partitions));
      if (e) spdlog::error("input {}: kafka unassign: {}", name, e->str());
      spdlog::info("input {}: revoked {} partition(s), {} left", name, partitions.size(),
                   parts.size());
    }
    assigned_gauge->store(static_cast<std::int64_t>(parts.size() + stopped_parts.size()));
  }

  // ---- consuming ----

  void Fold(const RdKafka::Message& m) {
    const auto it = parts.find({m.topic_name(), m.partition()});
    if (it == parts.end()) return;  // revoked, or stopped by a changelog error
    Partition& p = it->second;
    if (m.offset() < p.next_offset) return;  // fetched before a rewind's seek
    std::string_view value(static_cast<const char*>(m.payload()), m.len());
    bytes.fetch_add(value.size(), std::memory_order_relaxed);
    received.fetch_add(1, std::memory_order_relaxed);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    if (value.size() > options.input.max_message_size) {
      value = value.substr(0, options.input.max_message_size);
      truncated.fetch_add(1, std::memory_order_relaxed);
    }
    const TimeUs now = WallClockNowUs();
    parser.Parse(value, now, record);
    record.origin = {p.stream, m.offset()};  // the events' event_id
    NoteScope(p);
    TimeUs t = now;
    if (options.event_time) {
      t = record.EventTime();
      if (t > p.event_clock) p.event_clock = t, p.event_clock_wall = now;
    }
    current = &p;
    p.merger->Add(record, t, *this);
    current = nullptr;
    p.next_offset = m.offset() + 1;
    p.dirty = true;
  }

  // Counts a record whose scope was last seen on another partition (bounded map).
  void NoteScope(const Partition& p) {
    const std::uint64_t scope = ScopeHash(record, options.merger.scope);
    const std::uint32_t where = static_cast<std::uint32_t>(std::hash<std::string>{}(p.prefix));
    if (scope_partition.size() >= (1u << 20)) scope_partition.clear();
    const auto [it, added] = scope_partition.try_emplace(scope, where);
    if (!added && it->second != where) {
      scope_split.fetch_add(1, std::memory_order_relaxed);
      it->second = where;
    }
  }

  void FlushDue(TimeUs now) {
    for (auto& [key, p] : parts) {
      TimeUs t = now;
      if (options.event_time && p.event_clock != INT64_MIN) {
        t = p.event_clock + (now - p.event_clock_wall);
      }
      current = &p;
      p.merger->Flush(t, *this);
      current = nullptr;
    }
  }

  void Run() {
    if (!InitTransactions()) return;
    if (!ReadChangelogPartitions()) {
      spdlog::error(
          "input {}: changelog topic \"{}\" does not exist or cannot be read; create it "
          "(cleanup.policy=compact, as many partitions as the input topics) — partitions are "
          "not consumed until it exists",
          name, options.input.changelog_topic);
      errors.fetch_add(1, std::memory_order_relaxed);
    }
    if (const RdKafka::ErrorCode err = consumer->subscribe(options.input.topics);
        err != RdKafka::ERR_NO_ERROR) {
      spdlog::error("input {}: kafka subscribe: {}", name, RdKafka::err2str(err));
      errors.fetch_add(1, std::memory_order_relaxed);
    }
    auto next_commit =
        SteadyClock::now() + std::chrono::microseconds(options.input.commit_interval_us);
    TimeUs last_flush = WallClockNowUs();
    // The consumer's queue: its length tells the fetch waker how much the client prefetched.
    rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(consumer->c_ptr());
    KafkaFetchWaker fetch_waker(*consumer, queue_limit_records, queue_limit_bytes, fetch_wakeups,
                                name);
    double record_bytes = 0;  // recent average record value size
    while (!stopping.load()) {
      std::unique_ptr<RdKafka::Message> m(consumer->consume(kPollMs));
      const std::size_t queued_before = m != nullptr ? rd_kafka_queue_length(queue) : 0;
      std::size_t round_records = 0, round_bytes = 0;
      for (std::size_t n = 1; m != nullptr; ++n) {
        const RdKafka::ErrorCode err = m->err();
        if (err == RdKafka::ERR_NO_ERROR) {
          Fold(*m);
          ++round_records;
          round_bytes += m->len();
        } else if (err == RdKafka::ERR__TIMED_OUT) {
          break;
        } else if (err != RdKafka::ERR__PARTITION_EOF) {
          errors.fetch_add(1, std::memory_order_relaxed);
          LogThrottled("kafka: " + m->errstr());
          break;
        }
        if (n == kMaxBatch) break;  // before consume() takes one more
        m.reset(consumer->consume(0));
      }
      if (round_records > 0) {
        const double average =
            static_cast<double>(round_bytes) / static_cast<double>(round_records);
        record_bytes = record_bytes == 0 ? average : 0.9 * record_bytes + 0.1 * average;
      }
      fetch_waker.Observe(queued_before, rd_kafka_queue_length(queue), record_bytes, [this] {
        KafkaFetchWaker::Partitions assigned;
        for (const auto& [key, p] : parts) assigned.push_back(key);
        return assigned;
      });
      const TimeUs now = WallClockNowUs();
      if (now - last_flush >= kFlushIntervalUs) {
        FlushDue(now);
        last_flush = now;
      }
      if (SteadyClock::now() >= next_commit || broken) {
        if (!CommitTransaction()) Rewind();
        next_commit =
            SteadyClock::now() + std::chrono::microseconds(options.input.commit_interval_us);
      }
      if (!abandoned) producer->poll(0);
    }
    fetch_waker.Stop();
    rd_kafka_queue_destroy(queue);
    // Leaving the group revokes every partition: their groups are summarised and committed
    // in rebalance_cb.
    const bool left = Close(*consumer, "consumer");
    if (txn_open) CommitTransaction();
    if (!Close(*restorer, "changelog reader")) {
      LeaveBehind(changelog_handle);
      LeaveBehind(restorer);
    }
    if (left) {
      spdlog::info("input {}: left consumer group {}", name, options.input.group_id);
    } else {
      LeaveBehind(consumer);
    }
  }

  // A client whose close did not end by the stop deadline is not destroyed: librdkafka
  // 2.0's destroy waits for that close (for a broker that does not answer). It stays, with
  // the event callback its threads call, reachable until the process exits.
  template <typename T>
  void LeaveBehind(std::unique_ptr<T>& client) {
    KeepUntilExit(std::shared_ptr<void>(client.release(), [](void*) {}));
    KeepUntilExit(events);
  }

  // Closes `c` by the stop deadline, serving its rebalance events on this thread.
  bool Close(RdKafka::KafkaConsumer& c, const char* what) {
    const bool closed = CloseConsumerBy(
        c, [this] { return StopDeadline(); },
        [this, &c](RdKafka::ErrorCode err, std::vector<RdKafka::TopicPartition*>& partitions) {
          rebalance_cb(&c, err, partitions);
        },
        [this, what](const std::string& error) {
          errors.fetch_add(1, std::memory_order_relaxed);
          LogThrottled(std::string("kafka ") + what + " close: " + error);
        });
    if (!closed) {
      errors.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("input {}: kafka {} did not close by the shutdown deadline", name, what);
    }
    return closed;
  }

  const std::string name;
  const Options options;
  const SyslogParser parser;
  const std::uint64_t settings_key;
  Metrics::Counter& received;
  Metrics::Counter& bytes;
  Metrics::Counter& truncated;
  Metrics::Counter& errors;
  Metrics::Counter& rebalances;
  Metrics::Counter& txn_commits;
  Metrics::Counter& txn_aborts;
  Metrics::Counter& restored_groups;
  Metrics::Counter& resets;
  Metrics::Counter& scope_split;
  Metrics::Counter& fetch_wakeups;
  // Shared with the gauges, which may outlive this input inside Metrics.
  std::shared_ptr<std::atomic<std::int64_t>> assigned_gauge;
  std::shared_ptr<std::atomic<std::int64_t>> restore_us_gauge;
  std::string transactional_id;
  std::int64_t txn_timeout_ms = 60'000;  // the producer's transaction.timeout.ms
  // Before the clients, which call it until they are destroyed.
  std::shared_ptr<KafkaEventForward<Impl>> events = std::make_shared<KafkaEventForward<Impl>>();
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::unique_ptr<RdKafka::KafkaConsumer> restorer;
  std::size_t queue_limit_records = 0;               // the consumer's queued.min.messages
  std::size_t queue_limit_bytes = 0;                 // and queued.max.messages.kbytes, in bytes
  std::unique_ptr<RdKafka::Topic> changelog_handle;  // the restorer's, see ReadChangelogPartitions
  std::shared_ptr<RdKafka::Producer> producer;
  std::shared_ptr<Waker> waker = std::make_shared<Waker>();
  bool abandoned = false;  // a producer call was left behind at the stop deadline
  std::atomic<bool> stopping{false};
  // Set before `stopping`; the earliest of the Stop calls' deadlines.
  std::atomic<SteadyClock::rep> stop_deadline{SteadyClock::duration::max().count()};

  // The consumer thread's (librdkafka calls rebalance_cb on it, inside consume and close).
  std::map<PartitionKey, Partition> parts;
  std::vector<PartitionKey> stopped_parts;  // assigned but not consumed (changelog errors)
  std::int32_t changelog_partitions = 0;
  bool txn_open = false;
  bool broken = false;           // a produce failed: the open transaction must abort
  Partition* current = nullptr;  // whose merger is emitting
  std::vector<std::string>* held_events = nullptr;  // a restore's, until it has succeeded
  SavedGroup restore_group;                         // a restore's decoding buffers
  LogRecord record;
  std::string event_buf, value_buf;
  CheckpointWriter writer;
  std::unordered_map<std::uint64_t, std::uint32_t> scope_partition;
  std::mutex log_mu;
  SteadyClock::time_point next_error_log{};
  std::uint64_t suppressed = 0;
};

KafkaExactlyOnce::KafkaExactlyOnce(std::string name, Options options, Metrics& metrics)
    : name_(std::move(name)), impl_(std::make_unique<Impl>(name_, std::move(options), metrics)) {}

KafkaExactlyOnce::~KafkaExactlyOnce() {
  Stop(std::chrono::steady_clock::now());
  Join();
}

void KafkaExactlyOnce::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { impl_->Run(); });
  NameThread(thread_, "lf-eos-" + name_);
}

void KafkaExactlyOnce::Stop(std::chrono::steady_clock::time_point deadline) {
  const auto at = deadline.time_since_epoch().count();
  auto old = impl_->stop_deadline.load();
  while (at < old && !impl_->stop_deadline.compare_exchange_weak(old, at)) {
  }
  {
    std::lock_guard lock(impl_->waker->mu);  // a producer call's wait sees it
    impl_->stopping.store(true);
  }
  impl_->waker->cv.notify_all();
}

void KafkaExactlyOnce::Join() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace logfold
