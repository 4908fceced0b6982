// Internal to daemon/config: the JSON type the config is read and printed with, and the
// names of every enum value as written in the file. Not for other parts (use config.h).
#ifndef LOGFOLD_DAEMON_CONFIG_CONFIG_NAMES_H_
#define LOGFOLD_DAEMON_CONFIG_CONFIG_NAMES_H_

#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "daemon/config/config.h"

namespace logfold {
namespace config_internal {

// Ordered, so that errors come out in document order and ConfigToJson keeps schema order.
using Json = nlohmann::ordered_json;

inline constexpr TimeUs kMaxTime = std::numeric_limits<TimeUs>::max();

// Syslog severities 0..7 by their RFC 5424 keywords, as rsyslog spells them.
inline constexpr const char* kSeverityNames[8] = {"emerg",   "alert",  "crit", "err",
                                                  "warning", "notice", "info", "debug"};

template <typename E>
struct EnumName {
  std::string_view name;
  E value;
};

inline constexpr EnumName<LogLevel> kLogLevels[] = {
    {"trace", LogLevel::kTrace}, {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo},
    {"warn", LogLevel::kWarn},   {"error", LogLevel::kError}, {"critical", LogLevel::kCritical},
    {"off", LogLevel::kOff},
};
inline constexpr EnumName<InputType> kInputTypes[] = {
    {"udp", InputType::kUdp},   {"tcp", InputType::kTcp},     {"stdin", InputType::kStdin},
    {"file", InputType::kFile}, {"unix", InputType::kUnix},   {"journald", InputType::kJournald},
    {"relp", InputType::kRelp}, {"kafka", InputType::kKafka}, {"tls", InputType::kTls},
};
inline constexpr EnumName<TlsMinVersion> kTlsVersions[] = {
    {"1.2", TlsMinVersion::kTls12},
    {"1.3", TlsMinVersion::kTls13},
};
inline constexpr EnumName<TlsClientAuth> kClientAuths[] = {
    {"none", TlsClientAuth::kNone},
    {"optional", TlsClientAuth::kOptional},
    {"required", TlsClientAuth::kRequired},
};
inline constexpr EnumName<KafkaKey> kKafkaKeys[] = {
    {"group_id", KafkaKey::kGroupId},
    {"host", KafkaKey::kHost},
    {"none", KafkaKey::kNone},
};
inline constexpr EnumName<KafkaCompression> kKafkaCompressions[] = {
    {"none", KafkaCompression::kNone},     {"gzip", KafkaCompression::kGzip},
    {"snappy", KafkaCompression::kSnappy}, {"lz4", KafkaCompression::kLz4},
    {"zstd", KafkaCompression::kZstd},
};
inline constexpr EnumName<KafkaInputOptions::ChangelogRecovery> kChangelogRecoveries[] = {
    {"stop", KafkaInputOptions::ChangelogRecovery::kStop},
    {"empty", KafkaInputOptions::ChangelogRecovery::kEmpty},
};
inline constexpr EnumName<InputFormat> kInputFormats[] = {
    {"syslog", InputFormat::kSyslog},
    {"raw", InputFormat::kRaw},
    {"json", InputFormat::kJson},
};
inline constexpr EnumName<ReadFrom> kReadFroms[] = {
    {"beginning", ReadFrom::kBeginning},
    {"end", ReadFrom::kEnd},
};
inline constexpr EnumName<UnixSocketType> kUnixSocketTypes[] = {
    {"datagram", UnixSocketType::kDatagram},
    {"stream", UnixSocketType::kStream},
};
inline constexpr EnumName<Framing> kTcpFramings[] = {
    {"auto", Framing::kAuto},
    {"octet-counted", Framing::kOctetCounted},
    {"newline", Framing::kNewline},
};
inline constexpr EnumName<ScopeField> kScopeFields[] = {
    {"host", ScopeField::kHost},         {"app", ScopeField::kApp},
    {"procid", ScopeField::kProcId},     {"msgid", ScopeField::kMsgId},
    {"severity", ScopeField::kSeverity}, {"facility", ScopeField::kFacility},
};
inline constexpr EnumName<bool> kModes[] = {{"fold", false}, {"annotate", true}};
inline constexpr EnumName<TimeSource> kTimeSources[] = {
    {"arrival", TimeSource::kArrival},
    {"event", TimeSource::kEvent},
};
inline constexpr EnumName<OutputType> kOutputTypes[] = {
    {"stdout", OutputType::kStdout}, {"file", OutputType::kFile}, {"tcp", OutputType::kTcp},
    {"syslog", OutputType::kSyslog}, {"http", OutputType::kHttp}, {"relp", OutputType::kRelp},
    {"kafka", OutputType::kKafka},
};
inline constexpr EnumName<FsyncPolicy> kFsyncPolicies[] = {
    {"never", FsyncPolicy::kNever},
    {"interval", FsyncPolicy::kInterval},
    {"always", FsyncPolicy::kAlways},
};
inline constexpr EnumName<WhenFull> kWhenFull[] = {
    {"block", WhenFull::kBlock},
    {"drop", WhenFull::kDrop},
};
inline constexpr EnumName<SyslogProtocol> kSyslogProtocols[] = {
    {"tcp", SyslogProtocol::kTcp},
    {"udp", SyslogProtocol::kUdp},
};
inline constexpr EnumName<SyslogFraming> kSyslogFramings[] = {
    {"octet-counted", SyslogFraming::kOctetCounted},
    {"newline", SyslogFraming::kNewline},
};

inline constexpr EnumName<HttpFormat> kHttpFormats[] = {
    {"clickhouse", HttpFormat::kClickHouse},
    {"elasticsearch", HttpFormat::kElasticsearch},
    {"loki", HttpFormat::kLoki},
};
inline constexpr EnumName<HttpCompression> kHttpCompressions[] = {
    {"none", HttpCompression::kNone},
    {"gzip", HttpCompression::kGzip},
};
template <typename E, std::size_t N>
std::string_view NameOf(const EnumName<E> (&table)[N], E value) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> ValueOf(const EnumName<E> (&table)[N], std::string_view name) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

}  // namespace config_internal
}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_CONFIG_NAMES_H_
