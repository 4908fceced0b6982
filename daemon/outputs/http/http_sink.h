// HTTP sink: events batched (by count, bytes and time) and POSTed to a log store
// (ClickHouse, Elasticsearch/OpenSearch, Loki) over a kept-alive connection, with retries
// that never give up on a store that is down and never let one bad event block the rest.
#ifndef LOGFOLD_DAEMON_HTTP_SINK_H_
#define LOGFOLD_DAEMON_HTTP_SINK_H_

#include <memory>
#include <string>

#include "daemon/config/options/http_sink_options.h"
#include "daemon/config/options/sink_options.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

// What happens to a batch, by the store's answer (see HttpBodyFormat::Classify):
// - connection refused/reset, timeouts, 408, 429 (Retry-After honoured), 502, 503, 504 and
//   transient ClickHouse errors: the same events are retried indefinitely with exponential
//   backoff and jitter; meanwhile the sink's buffer fills and applies backpressure.
// - other 5xx: retried up to max_retries, then treated as a rejection.
// - other 4xx and ClickHouse data errors: a rejection. A batch of several events is split
//   in halves and each half resent, so only the events the store refuses are lost; a single
//   rejected event is counted in logfold_sink_rejected_events_total, logged and dropped.
// Events stay in the sink's buffer until their batch is resolved, so Stop's discard count
// covers what was never delivered.
// nullptr and `error` when a header file or the TLS files of an https:// url cannot be read.
std::unique_ptr<Sink> MakeHttpSink(const SinkOptions& sink, const HttpSinkOptions& http,
                                   Metrics& metrics, std::string& error);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_HTTP_SINK_H_
