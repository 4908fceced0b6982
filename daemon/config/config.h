// Configuration of `logfold serve`: the JSON file's schema as the components' own option
// structs (options/, where every default lives), strict validation that maps the file onto
// them once and reports every problem at once, and the canonical JSON of `check-config`.
#ifndef LOGFOLD_DAEMON_CONFIG_H_
#define LOGFOLD_DAEMON_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/options/file_input_options.h"
#include "daemon/config/options/file_sink_options.h"
#include "daemon/config/options/http_sink_options.h"
#include "daemon/config/options/journald_input_options.h"
#include "daemon/config/options/kafka_input_options.h"
#include "daemon/config/options/kafka_sink_options.h"
#include "daemon/config/options/relp_input_options.h"
#include "daemon/config/options/relp_sink_options.h"
#include "daemon/config/options/sink_options.h"
#include "daemon/config/options/state_options.h"
#include "daemon/config/options/stream_input_options.h"
#include "daemon/config/options/syslog_sink_options.h"
#include "daemon/config/options/tcp_input_options.h"
#include "daemon/config/options/tcp_sink_options.h"
#include "daemon/config/options/tls_options.h"
#include "daemon/config/options/udp_input_options.h"
#include "daemon/config/options/unix_input_options.h"
#include "daemon/config/options/worker_options.h"
#include "daemon/config/units.h"
#include "pipeline/log_record.h"
#include "pipeline/syslog_parser.h"
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

enum class InputType : std::uint8_t {
  kUdp,
  kTcp,
  kStdin,
  kFile,
  kUnix,
  kJournald,
  kRelp,
  kKafka,
  kTls
};

// One input: what every type has, and the options of each type. Only the options of `type`
// are used; the others keep their defaults (validation rejects their keys in JSON).
struct InputConfig {
  std::string name;
  InputType type = InputType::kUdp;
  SyslogParser::Options parser;  // format, json_message_field
  UdpInputOptions udp;
  TcpInputOptions tcp;
  StreamInputOptions stream;  // stdin (its path stays empty)
  FileInputOptions file;
  UnixInputOptions unix_socket;
  JournaldInputOptions journald;
  RelpInputOptions relp;
  KafkaInputOptions kafka;
  TlsInputOptions tls;
  bool operator==(const InputConfig&) const = default;
};

// Which clock drives the merge windows.
enum class TimeSource : std::uint8_t {
  kArrival,  // when the line was received
  kEvent,    // the header's timestamp, arrival when absent (LogRecord::EventTime)
};

struct EngineConfig {
  // max_distance, window, max_hold, scope, ..., protected_words; and the fields the file
  // cannot set (value_keys, tokenizer, weights), which a reload compares as well.
  MergerOptions merger;
  TimeSource time = TimeSource::kArrival;
  bool operator==(const EngineConfig&) const = default;
};

using WorkersConfig = WorkerOptions;

enum class OutputType : std::uint8_t { kStdout, kFile, kTcp, kSyslog, kHttp, kRelp, kKafka };

// One output: what every type has, and the options of each type. Only the options of `type`
// are used; the others keep their defaults (validation rejects their keys in JSON).
struct OutputConfig {
  OutputType type = OutputType::kStdout;
  SinkOptions sink;  // name, buffer, when_full, block_timeout
  FileSinkOptions file;
  TcpSinkOptions tcp;
  SyslogSinkOptions syslog;
  HttpSinkOptions http;
  RelpSinkOptions relp;
  KafkaSinkOptions kafka;
  bool operator==(const OutputConfig&) const = default;
};

struct MetricsConfig {
  bool enabled = true;
  std::string address = "127.0.0.1";
  std::uint16_t port = 9514;                 // 0 = ephemeral
  std::vector<std::string> allowed_senders;  // CIDR blocks that may scrape; empty = anyone
  bool tls = false;  // a "tls" block was given: the endpoint (and the live view) is HTTPS
  TlsServerConfig tls_options{};
  bool operator==(const MetricsConfig&) const = default;
};

struct LimitsConfig {
  // Budget for groups, queued lines, TCP frames and output buffers. nullopt ("auto"): the
  // cgroup's memory limit when there is one, else half the physical memory
  // (ResolveMemoryBudget). 0: no budget.
  std::optional<std::uint64_t> memory;
  bool operator==(const LimitsConfig&) const = default;
};

struct Config {
  LogConfig log;
  LimitsConfig limits;
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

// Settings that are valid but risky, as ConfigErrors (path and reason) that do not refuse
// the file: metrics or inputs bound on every interface, an Authorization header sent in the
// clear to another host, TCP connections whose frames could exceed `memory_budget` (the
// resolved limits.memory; 0: none), an http output buffer too small for its batches.
// `check-config` prints them, `serve` logs them at start.
std::vector<ConfigError> ConfigWarnings(const Config& config, std::uint64_t memory_budget);

// The names used in the file, e.g. for log lines and metric labels.
std::string_view LogLevelName(LogLevel level);
std::string_view InputTypeName(InputType type);
std::string_view OutputTypeName(OutputType type);
std::string_view HttpFormatName(HttpFormat format);
// librdkafka's compression.codec value for `compression` (the same words as the file's).
std::string_view KafkaCompressionName(KafkaCompression compression);
// The event field a Kafka output keys its records by ("group_id", "host"; "none": no key).
std::string_view KafkaKeyName(KafkaKey key);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_H_
