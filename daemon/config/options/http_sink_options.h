// Options of an HTTP output (daemon/outputs/http/http_sink.h): the store, its format and the
// batching and retry policy, with their defaults.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_HTTP_SINK_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_HTTP_SINK_OPTIONS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "daemon/config/http_url.h"
#include "daemon/config/options/tls_options.h"
#include "daemon/config/units.h"

namespace logfold {

enum class HttpFormat : std::uint8_t { kClickHouse, kElasticsearch, kLoki };
enum class HttpCompression : std::uint8_t { kNone, kGzip };
using StringPairs = std::vector<std::pair<std::string, std::string>>;

struct HttpSinkOptions {
  HttpUrl url;  // parsed and checked by the config layer
  HttpFormat format = HttpFormat::kClickHouse;
  std::string table;    // format clickhouse: name or database.name
  std::string index;    // format elasticsearch
  StringPairs labels;   // format loki: static stream labels
  StringPairs headers;  // extra request headers
  // Headers whose value is the first line of a file (a secret kept out of the config), read
  // when the sink is built.
  StringPairs header_files;
  // An https:// url: the server's verification and an optional client certificate.
  TlsClientConfig tls{};
  HttpCompression compression = HttpCompression::kNone;
  std::uint64_t batch_max_events = 5000;
  std::uint64_t batch_max_bytes = kMiB;
  TimeUs batch_max_delay_us = kSecond;
  TimeUs request_timeout_us = 30 * kSecond;
  TimeUs retry_initial_backoff_us = 100 * kMillisecond;
  TimeUs retry_max_backoff_us = 30 * kSecond;
  std::uint32_t max_retries = 5;  // for unexplained server errors; transient ones: no limit
  bool operator==(const HttpSinkOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_HTTP_SINK_OPTIONS_H_
