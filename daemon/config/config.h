// Configuration of `logfold serve`: the JSON file's schema as C++ structs, strict validation
// that reports every problem at once, and the canonical JSON printed by `check-config`.
#ifndef LOGFOLD_DAEMON_CONFIG_H_
#define LOGFOLD_DAEMON_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/config/state_options.h"
#include "daemon/config/units.h"
#include "pipeline/log_record.h"
#include "pipeline/window_merger.h"

namespace logfold {

// One problem found in a configuration. `path` locates it in the document, e.g.
// "inputs[1].port", "engine.window" or "" for the document as a whole.
struct ConfigError {
  std::string path;
  std::string reason;
  bool operator==(const ConfigError&) const = default;
};

// Same order and values as spdlog::level::level_enum, so the daemon can cast between them.
enum class LogLevel : std::uint8_t { kTrace, kDebug, kInfo, kWarn, kError, kCritical, kOff };

struct LogConfig {
  LogLevel level = LogLevel::kInfo;
  TimeUs stats_interval_us = 60 * kSecond;  // 0: no periodic stats line
  bool operator==(const LogConfig&) const = default;
};

enum class InputType : std::uint8_t { kUdp, kTcp, kStdin, kFile };
enum class TcpFraming : std::uint8_t { kAuto, kOctetCounted, kNewline };

// Fields that do not apply to `type` keep their defaults (validation rejects them in JSON).
struct InputConfig {
  std::string name;
  InputType type = InputType::kUdp;
  InputFormat format = InputFormat::kSyslog;
  std::string json_message_field = "message";  // format json only
  std::uint64_t max_message_size = 64 * kKiB;  // any type: longest datagram, frame or line
  // udp, tcp: an inherited systemd socket to adopt, by FileDescriptorName. When set,
  // address and port are unused (the socket is already bound).
  std::string socket_name;
  std::string address = "127.0.0.1";        // udp, tcp: IP literal to bind
  std::uint16_t port = 0;                   // udp, tcp: 0 = ephemeral
  std::uint64_t receive_buffer = 4 * kMiB;  // udp: SO_RCVBUF request; 0 = system default
  TcpFraming framing = TcpFraming::kAuto;   // tcp
  bool nul_terminator = false;              // tcp: NUL also ends a newline frame
  std::uint32_t max_connections = 1024;     // tcp
  TimeUs idle_timeout_us = 5 * kMinute;     // tcp: 0 = never
  std::string path;                         // file
  bool operator==(const InputConfig&) const = default;
};

// Which clock drives the merge windows.
enum class TimeSource : std::uint8_t {
  kArrival,  // when the line was received
  kEvent,    // the header's timestamp, arrival when absent (LogRecord::EventTime)
};

struct EngineConfig {
  MergerOptions merger;  // max_distance, window, max_hold, scope, ..., protected_words
  TimeSource time = TimeSource::kArrival;
  // Hand-written because MergerOptions has no operator==; compares every MergerOptions
  // field, including those the file cannot set.
  bool operator==(const EngineConfig& other) const;
};

struct WorkersConfig {
  std::uint32_t threads = 0;             // 0: one per core
  std::uint32_t queue_capacity = 65536;  // lines per worker
  TimeUs flush_interval_us = 100 * kMillisecond;
  bool operator==(const WorkersConfig&) const = default;
};

enum class OutputType : std::uint8_t { kStdout, kFile, kTcp, kSyslog, kHttp };
enum class FsyncPolicy : std::uint8_t { kNever, kInterval, kAlways };
// What a worker does when this output's buffer stays full: wait (nothing is lost; the
// pipeline backs up to the TCP readers, and the other outputs wait too), or drop this
// output's events and count them (the other outputs carry on).
enum class WhenFull : std::uint8_t { kBlock, kDrop };
enum class SyslogProtocol : std::uint8_t { kTcp, kUdp };
enum class SyslogFraming : std::uint8_t { kOctetCounted, kNewline };
enum class HttpFormat : std::uint8_t { kClickHouse, kElasticsearch, kLoki };
enum class HttpCompression : std::uint8_t { kNone, kGzip };
using StringPairs = std::vector<std::pair<std::string, std::string>>;

// Fields that do not apply to `type` keep their defaults (validation rejects them in JSON).
struct OutputConfig {
  std::string name;
  OutputType type = OutputType::kStdout;
  std::uint64_t buffer = 64 * kMiB;                      // encoded events held before backpressure
  std::string path;                                      // file
  WhenFull when_full = WhenFull::kBlock;                 // any
  TimeUs block_timeout_us = 5 * kSecond;                 // when_full drop: wait this long first
  FsyncPolicy fsync = FsyncPolicy::kNever;               // file
  TimeUs fsync_interval_us = kSecond;                    // file, fsync interval only
  std::string address;                                   // tcp, syslog: host name or IP literal
  std::uint16_t port = 0;                                // tcp, syslog
  TimeUs reconnect_min_us = 100 * kMillisecond;          // tcp, syslog over tcp
  TimeUs reconnect_max_us = 30 * kSecond;                // tcp, syslog over tcp
  SyslogProtocol protocol = SyslogProtocol::kTcp;        // syslog
  SyslogFraming framing = SyslogFraming::kOctetCounted;  // syslog over tcp
  std::string app_name = "logfold";                      // syslog
  std::string url;                                       // http: validated http:// URL
  HttpFormat http_format = HttpFormat::kClickHouse;      // http
  std::string table;                                     // http, format clickhouse
  std::string index;                                     // http, format elasticsearch
  StringPairs labels;                                    // http, format loki
  StringPairs headers;                                   // http
  HttpCompression compression = HttpCompression::kNone;  // http
  std::uint64_t batch_max_events = 5000;                 // http
  std::uint64_t batch_max_bytes = kMiB;                  // http
  TimeUs batch_max_delay_us = kSecond;                   // http
  TimeUs request_timeout_us = 30 * kSecond;              // http
  TimeUs retry_initial_backoff_us = 100 * kMillisecond;  // http
  TimeUs retry_max_backoff_us = 30 * kSecond;            // http
  std::uint32_t max_retries = 5;                         // http
  bool operator==(const OutputConfig&) const = default;
};

struct MetricsConfig {
  bool enabled = true;
  std::string address = "127.0.0.1";
  std::uint16_t port = 9514;  // 0 = ephemeral
  bool operator==(const MetricsConfig&) const = default;
};

struct Config {
  LogConfig log;
  std::vector<InputConfig> inputs;
  EngineConfig engine;
  WorkersConfig workers;
  std::vector<OutputConfig> outputs;
  MetricsConfig metrics;
  StateOptions state;
  bool operator==(const Config&) const = default;
};

// Parses and validates a configuration document (schema: config/README.md). Returns true and
// sets `out` when there is no error; otherwise appends every error found to `errors`, in
// document order, and leaves `out` unchanged. Never throws.
bool ParseConfig(std::string_view json_text, Config& out, std::vector<ConfigError>& errors);

// ParseConfig on a file's contents. An unreadable file gives one error with path "".
bool LoadConfigFile(const std::string& path, Config& out, std::vector<ConfigError>& errors);

// config/default.json, embedded at build time.
std::string_view DefaultConfigJson();

// The effective configuration as canonical JSON: every key present (defaults filled in, only
// keys that apply to each input's and output's type), durations and sizes in their largest
// exact unit. ParseConfig of the result yields a Config equal to `config`.
std::string ConfigToJson(const Config& config);

// One "path: reason" line per error (just "reason" when the path is empty), each ending in
// a newline.
std::string FormatConfigErrors(const std::vector<ConfigError>& errors);

// The names used in the file, e.g. for log lines and metric labels.
std::string_view LogLevelName(LogLevel level);
std::string_view InputTypeName(InputType type);
std::string_view OutputTypeName(OutputType type);
std::string_view HttpFormatName(HttpFormat format);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_H_
