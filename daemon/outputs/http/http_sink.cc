// HttpDestination: assembles batches from the sink's byte stream and delivers each one with
// retries and rejection splitting before it takes the next (see http_sink.h).
#include "daemon/outputs/http/http_sink.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <charconv>
#include <ctime>
#include <fstream>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/config/http_url.h"
#include "daemon/outputs/buffered_sink.h"
#include "daemon/outputs/http/gzip.h"
#include "daemon/outputs/http/http_body_format.h"
#include "daemon/outputs/http/http_client.h"
#include "daemon/outputs/tls_destination.h"
#include "daemon/runtime/tls_context.h"
#include "daemon/runtime/wall_clock.h"

namespace logfold {
namespace {

namespace http = boost::beast::http;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

constexpr auto kWaitSlice = milliseconds(100);
constexpr auto kMaxRetryAfter = std::chrono::hours(1);
constexpr std::size_t kLoggedBytes = 200;

// Retry-After as delta-seconds or an HTTP-date; nullopt when absent or unreadable.
std::optional<SinkClock::duration> ParseRetryAfter(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t seconds = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (r.ec == std::errc() && r.ptr == text.data() + text.size()) {
    return std::min<SinkClock::duration>(
        std::chrono::seconds(std::min<std::uint64_t>(seconds, 3600)), kMaxRetryAfter);
  }
  std::tm tm{};
  const char* end = ::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  const TimeUs at_us = static_cast<TimeUs>(::timegm(&tm)) * 1'000'000;
  const TimeUs wait_us = std::clamp<TimeUs>(at_us - WallClockNowUs(), 0, 3600LL * 1'000'000);
  return std::chrono::microseconds(wait_us);
}

std::string Excerpt(std::string_view text) {
  std::string out(text.substr(0, kLoggedBytes));
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (text.size() > kLoggedBytes) out += "...";
  return out;
}

class HttpDestination final : public Destination {
 public:
  HttpDestination(const std::string& name, const HttpSinkOptions& options,
                  std::unique_ptr<HttpBodyFormat> format, Metrics& metrics,
                  std::shared_ptr<boost::asio::ssl::context> tls)
      : name_(name),
        config_(options),
        url_(options.url),
        format_(std::move(format)),
        client_(url_.host, url_.port, name, metrics, std::move(tls), options.tls.verify),
        backoff_(std::chrono::microseconds(options.retry_initial_backoff_us),
                 std::chrono::microseconds(options.retry_max_backoff_us)),
        retries_(Counter(metrics, "logfold_sink_retries_total",
                         "Write attempts a sink made after a failure")),
        errors_(Counter(metrics, "logfold_sink_errors_total",
                        "Failed opens, connects, writes and sends of a sink (each is retried or "
                        "counted as discarded)")),
        batches_(Counter(metrics, "logfold_sink_http_batches_total",
                         "Batches of events an HTTP sink formed (split halves not counted)")),
        body_bytes_(Counter(metrics, "logfold_sink_http_body_bytes_total",
                            "Request body bytes an HTTP sink sent, after compression, retries "
                            "included")),
        delivered_(Counter(metrics, "logfold_sink_delivered_events_total",
                           "Events an HTTP sink's store accepted")),
        rejected_(Counter(metrics, "logfold_sink_rejected_events_total",
                          "Events an HTTP sink's store refused for good (counted, logged, "
                          "dropped)")) {
    const char* classes[] = {"2xx", "3xx", "4xx", "5xx", "failed"};
    for (std::size_t i = 0; i < 5; ++i) {
      requests_[i] = &metrics.GetCounter(
          "logfold_sink_http_requests_total",
          "HTTP requests of an HTTP sink by response status class (failed: no response)",
          "sink=\"" + name_ + "\",status=\"" + classes[i] + "\"");
    }
  }

  WriteResult Write(std::span<const iovec> data, const StopSignal& stop) override {
    stop_ = &stop;
    WriteResult result;
    for (const iovec& piece : data) {
      std::string_view bytes(static_cast<const char*>(piece.iov_base), piece.iov_len);
      result.written += bytes.size();
      taken_ += bytes.size();
      while (!bytes.empty()) {
        const std::size_t nl = bytes.find('\n');
        if (nl == std::string_view::npos) {
          partial_.append(bytes);  // the record continues in the next piece
          break;
        }
        if (partial_.empty()) {
          AddEvent(bytes.substr(0, nl), stop);
        } else {
          partial_.append(bytes.substr(0, nl));
          AddEvent(partial_, stop);
          partial_.clear();
        }
        bytes.remove_prefix(nl + 1);
      }
    }
    if (!event_ends_.empty() && (stop.Requested() || SinkClock::now() >= BatchDue())) {
      SendBatch(stop);
    }
    return result;
  }

  std::uint64_t Unconfirmed() override { return taken_ - resolved_; }

  WriteResult Poll() override {
    if (!event_ends_.empty() && stop_ != nullptr && SinkClock::now() >= BatchDue()) {
      SendBatch(*stop_);
    }
    return {};
  }

  SinkClock::duration PollInterval() const override {
    if (event_ends_.empty()) return std::chrono::seconds(1);
    return std::max(SinkClock::duration::zero(), BatchDue() - SinkClock::now());
  }

  WriteResult Flush(const StopSignal& stop) override {
    if (!event_ends_.empty()) SendBatch(stop);
    return {};
  }

  // SIGHUP on an https output: re-read the CA bundle and client certificate for the next
  // connection; files that do not load leave the previous ones in use. Deliver's retry loop
  // also checks the flag, so events waiting on a refused certificate flow once it is fixed.
  void ReopenRequested() override { tls_reload_.store(true); }
  std::string Reopen() override { return ReloadTls(); }

  void Close() override {
    client_.Close();
    ClearBatch();
    partial_.clear();
  }

 private:
  Metrics::Counter& Counter(Metrics& metrics, std::string_view name, std::string_view help) {
    return metrics.GetCounter(name, help, "sink=\"" + name_ + "\"");
  }

  SinkClock::time_point BatchDue() const {
    return batch_started_ + std::chrono::microseconds(config_.batch_max_delay_us);
  }

  void AddEvent(std::string_view event, const StopSignal& stop) {
    const std::uint64_t size = event.size() + 1;
    if (event.empty()) {
      resolved_ += size;  // a blank line is not an event
      return;
    }
    if (!event_ends_.empty() && batch_.size() + size > config_.batch_max_bytes) SendBatch(stop);
    if (event_ends_.empty()) batch_started_ = SinkClock::now();
    batch_.append(event);
    batch_ += '\n';
    event_ends_.push_back(batch_.size());
    if (event_ends_.size() >= config_.batch_max_events ||
        batch_.size() >= config_.batch_max_bytes) {
      SendBatch(stop);
    }
  }

  void ClearBatch() {
    batch_.clear();
    event_ends_.clear();
  }

  // Delivers the current batch (or gives up once Stop's deadline passed: then the sink
  // discards what is unresolved). Resolution is all-or-nothing per batch, so a deadline in
  // the middle of a split counts the whole batch as discarded.
  void SendBatch(const StopSignal& stop) {
    std::vector<std::string_view> events;
    events.reserve(event_ends_.size());
    std::size_t start = 0;
    for (std::size_t end : event_ends_) {
      events.emplace_back(batch_.data() + start, end - start - 1);
      start = end;
    }
    batches_.fetch_add(1, std::memory_order_relaxed);
    if (Deliver(events, stop)) resolved_ += batch_.size();
    ClearBatch();
  }

  // Returns false if Stop's deadline passed before every event was delivered or rejected.
  bool Deliver(std::span<const std::string_view> events, const StopSignal& stop) {
    std::vector<std::string_view> retry_items;
    std::span<const std::string_view> current = events;
    std::uint32_t limited_attempts = 0;
    for (bool first_attempt = true;; first_attempt = false) {
      if (stop.Expired()) return false;
      if (!first_attempt) retries_.fetch_add(1, std::memory_order_relaxed);
      if (const std::string tls_error = ReloadTls(); !tls_error.empty()) {
        spdlog::error("sink {}: {}", name_, tls_error);
      }
      HttpRequest request = MakeRequest(current);
      const HttpExchange ex =
          client_.Send(request, std::chrono::microseconds(config_.request_timeout_us), stop);
      if (!ex.responded) {
        requests_[4]->fetch_add(1, std::memory_order_relaxed);
        errors_.fetch_add(1, std::memory_order_relaxed);
        if (!WaitBeforeRetry(ex.error, std::nullopt, stop)) return false;
        continue;
      }
      const unsigned cls = std::min(ex.status / 100, 5u);
      requests_[cls < 2 ? 1 : cls - 2]->fetch_add(1, std::memory_order_relaxed);
      HttpVerdict verdict = format_->Classify(ex.status, ex.body);
      if (verdict == HttpVerdict::kDelivered) {
        backoff_.Reset();
        std::vector<HttpVerdict> verdicts;
        std::vector<std::string> reasons;
        if (!format_->ItemVerdicts(ex.body, current.size(), verdicts, reasons)) {
          delivered_.fetch_add(current.size(), std::memory_order_relaxed);
          return true;
        }
        std::vector<std::string_view> again;
        std::string busy_reason;
        for (std::size_t i = 0; i < current.size(); ++i) {
          if (verdicts[i] == HttpVerdict::kDelivered) {
            delivered_.fetch_add(1, std::memory_order_relaxed);
          } else if (verdicts[i] == HttpVerdict::kRejected) {
            Reject(ex.status, reasons[i], current[i]);
          } else {
            if (again.empty()) busy_reason = reasons[i];
            again.push_back(current[i]);
          }
        }
        if (again.empty()) return true;
        retry_items.swap(again);
        current = retry_items;
        limited_attempts = 0;
        const std::string why = std::to_string(current.size()) + " events refused as busy (" +
                                Excerpt(busy_reason) + ")";
        if (!WaitBeforeRetry(why, std::nullopt, stop)) {
          return false;
        }
        continue;
      }
      errors_.fetch_add(1, std::memory_order_relaxed);
      if (verdict == HttpVerdict::kRetryLimited && ++limited_attempts > config_.max_retries) {
        verdict = HttpVerdict::kRejected;
      }
      if (verdict != HttpVerdict::kRejected) {
        std::string why = "HTTP " + std::to_string(ex.status) + ": " + Excerpt(ex.body);
        if (verdict == HttpVerdict::kRetryLimited) {
          why += " (attempt " + std::to_string(limited_attempts) + " of " +
                 std::to_string(config_.max_retries + 1) + ")";
        }
        if (!WaitBeforeRetry(why, ParseRetryAfter(ex.retry_after), stop)) return false;
        continue;
      }
      if (current.size() == 1) {
        Reject(ex.status, Excerpt(ex.body), current[0]);
        return true;
      }
      // Halve until the refused events are alone; the rest go through.
      const std::size_t half = current.size() / 2;
      return Deliver(current.first(half), stop) && Deliver(current.subspan(half), stop);
    }
  }

  HttpRequest MakeRequest(std::span<const std::string_view> events) {
    body_.clear();
    format_->AppendBody(events, WallClockNowUs(), body_);
    HttpRequest request(http::verb::post, format_->target(), 11);
    request.set(http::field::host, url_.host_header);
    request.set(http::field::user_agent, "logfold");
    request.set(http::field::content_type, std::string(format_->content_type()));
    for (const auto& [name, value] : config_.headers) request.set(name, value);
    std::string error;
    if (config_.compression == HttpCompression::kGzip && GzipCompress(body_, compressed_, error)) {
      request.set(http::field::content_encoding, "gzip");
      request.body() = compressed_;
    } else {
      if (!error.empty()) spdlog::warn("sink {}: {}; sending uncompressed", name_, error);
      request.body() = body_;
    }
    request.prepare_payload();
    body_bytes_.fetch_add(request.body().size(), std::memory_order_relaxed);
    return request;
  }

  void Reject(unsigned status, const std::string& reason, std::string_view event) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    std::string note;
    if (!reject_log_.Allow(note)) return;
    spdlog::error("sink {}: store rejected an event (HTTP {}: {}); dropped: {}{}", name_, status,
                  reason, Excerpt(event), note);
  }

  // Waits the next backoff delay (or what the server asked for), logging why. Returns false
  // if Stop's deadline passed meanwhile.
  bool WaitBeforeRetry(const std::string& why, std::optional<SinkClock::duration> asked,
                       const StopSignal& stop) {
    SinkClock::duration delay = backoff_.Next();
    if (asked) delay = *asked;
    std::string note;
    if (retry_log_.Allow(note)) {
      spdlog::warn("sink {}: {}; retrying in {} ms{}", name_, why,
                   duration_cast<milliseconds>(delay).count(), note);
    }
    const auto until = SinkClock::now() + delay;
    while (!stop.Expired()) {
      const auto now = SinkClock::now();
      if (now >= until) return true;
      std::this_thread::sleep_for(std::min<SinkClock::duration>(until - now, kWaitSlice));
    }
    return false;
  }

  std::string ReloadTls() {
    if (!url_.tls || !tls_reload_.exchange(false)) return "";
    std::string error;
    auto ctx = MakeTlsClientContext(ClientTlsOptions(config_.tls), error);
    if (!ctx) return "TLS files not reloaded, keeping the previous ones: " + error;
    client_.SetTlsContext(std::move(ctx));
    spdlog::info("sink {}: TLS files reloaded", name_);
    return "";
  }

  const std::string name_;
  const HttpSinkOptions config_;
  std::atomic<bool> tls_reload_{false};
  const HttpUrl url_;
  const std::unique_ptr<HttpBodyFormat> format_;
  HttpClient client_;
  Backoff backoff_;
  LogThrottle retry_log_;
  LogThrottle reject_log_;
  Metrics::Counter& retries_;
  Metrics::Counter& errors_;
  Metrics::Counter& batches_;
  Metrics::Counter& body_bytes_;
  Metrics::Counter& delivered_;
  Metrics::Counter& rejected_;
  Metrics::Counter* requests_[5] = {};  // 2xx 3xx 4xx 5xx failed
  // The sink's StopSignal, remembered from Write for Poll (which is not given one).
  const StopSignal* stop_ = nullptr;

  std::string batch_;                    // the batch's events, each ending in '\n'
  std::vector<std::size_t> event_ends_;  // offsets in batch_ just past each event's '\n'
  SinkClock::time_point batch_started_{};
  std::string partial_;            // start of an event split across Write pieces
  std::uint64_t taken_ = 0;        // bytes taken from the sink's buffer
  std::uint64_t resolved_ = 0;     // of those, delivered or rejected for good
  std::string body_, compressed_;  // scratch
};

}  // namespace

std::unique_ptr<Sink> MakeHttpSink(const SinkOptions& sink, const HttpSinkOptions& http,
                                   Metrics& metrics, std::string& error) {
  HttpSinkOptions with_secrets = http;
  for (const auto& [name, path] : http.header_files) {
    std::ifstream in(path);
    std::string value;
    if (!in || !std::getline(in, value)) {
      error = "sink " + sink.name + ": header " + name + ": cannot read " + path;
      return nullptr;
    }
    if (!value.empty() && value.back() == '\r') value.pop_back();
    for (char c : value) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f) {
        error =
            "sink " + sink.name + ": header " + name + ": " + path + " holds control characters";
        return nullptr;
      }
    }
    with_secrets.headers.emplace_back(name, std::move(value));
  }
  std::shared_ptr<boost::asio::ssl::context> tls;
  if (http.url.tls) {
    std::string tls_error;
    tls = MakeTlsClientContext(ClientTlsOptions(http.tls), tls_error);
    if (!tls) {
      error = "sink " + sink.name + ": " + tls_error;
      return nullptr;
    }
  }
  // Events stay buffered until their batch is delivered; Write takes whole records.
  return std::make_unique<BufferedSink>(
      NetworkSinkOptions(sink, "http", SinkEncoding::kNdjson, SinkFraming::kNewline,
                         http.retry_initial_backoff_us, http.retry_max_backoff_us),
      std::make_unique<HttpDestination>(sink.name, with_secrets, MakeHttpBodyFormat(http), metrics,
                                        std::move(tls)),
      metrics);
}

}  // namespace logfold
