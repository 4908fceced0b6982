// HttpBodyFormat: what a batch of NDJSON events becomes for one kind of log store
// (ClickHouse JSONEachRow insert, Elasticsearch/OpenSearch _bulk, Loki push), and how that
// store's answers are to be read: delivered, retry, or rejected.
#ifndef LOGFOLD_DAEMON_HTTP_BODY_FORMAT_H_
#define LOGFOLD_DAEMON_HTTP_BODY_FORMAT_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/config/http_url.h"
#include "daemon/config/options/http_sink_options.h"
#include "pipeline/log_record.h"

namespace logfold {

// What to do with a batch (or one event) after the store answered.
enum class HttpVerdict {
  kDelivered,
  kRetry,         // transient (overload, restart, timeout): retry indefinitely with backoff
  kRetryLimited,  // unexplained server error: retry up to max_retries, then reject
  kRejected,      // the data itself was refused: split the batch, drop the bad event
};

class HttpBodyFormat {
 public:
  virtual ~HttpBodyFormat() = default;

  // Request target (path and query) every batch is POSTed to.
  const std::string& target() const { return target_; }
  virtual std::string_view content_type() const = 0;

  // Appends the body for `events` (NDJSON lines without their '\n'). `now_us` is the wall
  // clock at sending, for stores that need a time the event lacks.
  virtual void AppendBody(std::span<const std::string_view> events, TimeUs now_us,
                          std::string& body) const = 0;

  // The verdict for a whole batch from the response status and body. Elasticsearch's 2xx
  // needs ItemVerdicts as well.
  virtual HttpVerdict Classify(unsigned status, std::string_view body) const;

  // For stores that answer per event inside a 2xx (Elasticsearch's "errors":true): fills one
  // verdict per event and, for each rejected one, a short reason. Returns false when the
  // body does not say (all events then count as delivered with the batch).
  virtual bool ItemVerdicts(std::string_view body, std::size_t events,
                            std::vector<HttpVerdict>& verdicts,
                            std::vector<std::string>& reasons) const;

 protected:
  explicit HttpBodyFormat(std::string target) : target_(std::move(target)) {}

 private:
  std::string target_;
};

// The verdict every format starts from: 2xx delivered; 408, 429, 502, 503, 504 retried;
// other 4xx rejected; other statuses (5xx, unfollowed 3xx) retried up to max_retries.
HttpVerdict ClassifyHttpStatus(unsigned status);

// ClickHouse answers a bad row with HTTP 500 and a body "Code: N, e.displayText() = ...".
// Returns the verdict for error code N: retried for overload, timeouts, read-only tables and
// a table or database that does not exist (yet); rejected for any other code.
HttpVerdict ClassifyClickHouseError(int code);

// The format of an HTTP output (options.format), for the store at options.url. The config
// layer has checked that the format's setting (table, index) is there.
std::unique_ptr<HttpBodyFormat> MakeHttpBodyFormat(const HttpSinkOptions& options);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_HTTP_BODY_FORMAT_H_
