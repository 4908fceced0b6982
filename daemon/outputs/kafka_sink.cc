// Kafka sink: a BufferedSink whose Destination produces whole records to librdkafka and
// reports as unconfirmed every byte from the oldest record not yet acknowledged.
#include "daemon/outputs/kafka_sink.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <deque>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/outputs/buffered_sink.h"
#include "pipeline/event_json.h"

namespace logfold {
namespace {

class KafkaDestination final : public Destination {
 public:
  KafkaDestination(const std::string& name, const KafkaSinkOptions& options, Metrics& metrics)
      : name_(name),
        options_(options),
        failed_events_(
            metrics.GetCounter("logfold_kafka_output_failed_events_total",
                               "Events the Kafka broker refused for good (after retries), dropped",
                               "sink=\"" + Metrics::EscapeLabelValue(name) + "\"")) {}

  ~KafkaDestination() override { Close(); }

  // Builds the producer; false with `error` when librdkafka refuses a setting.
  bool Init(std::string& error) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char err[512];
    auto set = [&](const std::string& k, const std::string& v) {
      if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) == RD_KAFKA_CONF_OK) {
        return true;
      }
      error = "kafka property " + k + ": " + err;
      return false;
    };
    bool ok = true;
    for (const auto& [k, v] : options_.properties) ok = ok && set(k, v);
    ok = ok && set("bootstrap.servers", options_.brokers) && set("acks", "all") &&
         set("enable.idempotence", "true") &&
         set("compression.codec", std::string(KafkaCompressionName(options_.compression)));
    if (ok && options_.properties.count("linger.ms") == 0) ok = set("linger.ms", "20");
    if (!ok) {
      rd_kafka_conf_destroy(conf);
      return false;
    }
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_dr_msg_cb(conf, &KafkaDestination::OnDelivery);
    rd_kafka_conf_set_error_cb(conf, &KafkaDestination::OnError);
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (rk_ == nullptr) {
      error = std::string("kafka producer: ") + err;
      return false;
    }
    topic_ = rd_kafka_topic_new(rk_, options_.topic.c_str(), nullptr);
    return true;
  }

  WriteResult Write(std::span<const iovec> data, const StopSignal& /*stop*/) override {
    WriteResult result;
    for (const iovec& v : data) {
      std::string_view chunk(static_cast<const char*>(v.iov_base), v.iov_len);
      while (!chunk.empty()) {
        const std::size_t nl = chunk.find('\n');
        if (nl == std::string_view::npos) {
          partial_.append(chunk);  // completed by the next iovec
          break;
        }
        std::string_view record = chunk.substr(0, nl);
        if (!partial_.empty()) {
          partial_.append(record);
          record = partial_;
        }
        if (!Produce(record)) {
          // The producer's queue is full: serve delivery reports for a moment; what was not
          // produced stays in the buffer for the next Write.
          rd_kafka_poll(rk_, 10);
          partial_.clear();
          return Collect(result);
        }
        result.written += record.size() + 1;
        partial_.clear();
        chunk.remove_prefix(nl + 1);
      }
    }
    partial_.clear();  // an incomplete tail is offered again with the rest of its record
    rd_kafka_poll(rk_, 0);
    return Collect(result);
  }

  std::uint64_t Unconfirmed() override {
    return produced_end_ - (pending_.empty() ? produced_end_ : pending_.front().start);
  }

  WriteResult Poll() override {
    WriteResult result;
    rd_kafka_poll(rk_, 0);
    return Collect(result);
  }

  SinkClock::duration PollInterval() const override {
    return pending_.empty() ? std::chrono::seconds(1) : std::chrono::milliseconds(10);
  }

  WriteResult Flush(const StopSignal& stop) override {
    while (!pending_.empty() && !stop.Expired()) rd_kafka_poll(rk_, 50);
    WriteResult result;
    return Collect(result);
  }

  void Close() override {
    if (rk_ == nullptr) return;
    rd_kafka_flush(rk_, 0);
    if (topic_ != nullptr) rd_kafka_topic_destroy(topic_);
    rd_kafka_destroy(rk_);
    rk_ = nullptr;
    topic_ = nullptr;
  }

 private:
  struct Pending {
    std::uint64_t start = 0;  // stream position of the record
    bool acked = false;
  };

  bool Produce(std::string_view record) {
    const std::string_view key = options_.key == KafkaKey::kNone
                                     ? std::string_view()
                                     : EventJsonStringField(record, KafkaKeyName(options_.key));
    // The opaque is the record's sequence number: delivery reports come per partition in
    // order but across partitions in any order.
    const std::uint64_t seq = next_seq_;
    const int rc = rd_kafka_produce(topic_, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY,
                                    const_cast<char*>(record.data()), record.size(),
                                    key.empty() ? nullptr : key.data(), key.size(),
                                    reinterpret_cast<void*>(static_cast<std::uintptr_t>(seq)));
    if (rc != 0) {
      const rd_kafka_resp_err_t err = rd_kafka_last_error();
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) return false;
      // Refused before queueing (e.g. larger than message.max.bytes): counted and dropped.
      failed_events_.fetch_add(1, std::memory_order_relaxed);
      if (first_error_.empty()) first_error_ = rd_kafka_err2str(err);
    } else {
      pending_.push_back({produced_end_, false});
      ++next_seq_;
    }
    produced_end_ += record.size() + 1;
    return true;
  }

  static void OnDelivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* opaque) {
    auto* self = static_cast<KafkaDestination*>(opaque);
    const auto seq = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(m->_private));
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      self->failed_events_.fetch_add(1, std::memory_order_relaxed);
      if (self->first_error_.empty()) self->first_error_ = rd_kafka_err2str(m->err);
    }
    const std::uint64_t index = seq - self->first_seq_;
    if (index < self->pending_.size()) self->pending_[index].acked = true;
    while (!self->pending_.empty() && self->pending_.front().acked) {
      self->pending_.pop_front();
      ++self->first_seq_;
    }
  }

  static void OnError(rd_kafka_t* /*rk*/, int err, const char* reason, void* opaque) {
    auto* self = static_cast<KafkaDestination*>(opaque);
    if (self->first_error_.empty()) {
      self->first_error_ =
          std::string(rd_kafka_err2str(static_cast<rd_kafka_resp_err_t>(err))) + ": " + reason;
    }
  }

  // Hands the first error seen since the last call to the sink (counted and logged there).
  WriteResult& Collect(WriteResult& result) {
    if (!first_error_.empty()) result.error = "kafka: " + std::exchange(first_error_, {});
    return result;
  }

  const std::string name_;
  const KafkaSinkOptions options_;
  Metrics::Counter& failed_events_;
  rd_kafka_t* rk_ = nullptr;
  rd_kafka_topic_t* topic_ = nullptr;
  // Sink thread only (delivery reports run inside rd_kafka_poll, on this thread).
  std::deque<Pending> pending_;  // produced, in order; acknowledged ones leave from the front
  std::uint64_t first_seq_ = 0, next_seq_ = 0;
  std::uint64_t produced_end_ = 0;  // stream position after the last record taken
  std::string partial_;             // a record split across two iovecs
  std::string first_error_;
};

}  // namespace

std::unique_ptr<Sink> MakeKafkaSink(const SinkOptions& sink, const KafkaSinkOptions& kafka,
                                    Metrics& metrics, std::string& error) {
  auto destination = std::make_unique<KafkaDestination>(sink.name, kafka, metrics);
  if (!destination->Init(error)) return nullptr;
  BufferedSinkOptions o;
  o.name = sink.name;
  o.type = "kafka";
  o.encoding = SinkEncoding::kNdjson;
  o.capacity = sink.buffer;
  o.framing = SinkFraming::kNewline;  // whole records; unconfirmed bytes stay buffered
  return std::make_unique<BufferedSink>(std::move(o), std::move(destination), metrics);
}

}  // namespace logfold
