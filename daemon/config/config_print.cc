// ConfigToJson: the effective configuration as canonical JSON, every key that applies
// present with its value (defaults filled in), in schema order.
#include <cstdio>

#include "daemon/config/config.h"
#include "daemon/config/config_names.h"

namespace logfold {
namespace {

using config_internal::Json;
using config_internal::kChangelogRecoveries;
using config_internal::kClientAuths;
using config_internal::kFsyncPolicies;
using config_internal::kHttpCompressions;
using config_internal::kHttpFormats;
using config_internal::kInputFormats;
using config_internal::kInputTypes;
using config_internal::kKafkaCompressions;
using config_internal::kKafkaKeys;
using config_internal::kLogLevels;
using config_internal::kModes;
using config_internal::kOutputTypes;
using config_internal::kReadFroms;
using config_internal::kScopeFields;
using config_internal::kSyslogFramings;
using config_internal::kSyslogProtocols;
using config_internal::kTcpFramings;
using config_internal::kTimeSources;
using config_internal::kTlsVersions;
using config_internal::kUnixSocketTypes;
using config_internal::kWhenFull;
using config_internal::NameOf;

Json TlsClientToJson(const TlsClientConfig& tls) {
  Json t;
  if (!tls.ca_file.empty()) t["ca_file"] = tls.ca_file;
  t["verify"] = tls.verify;
  if (!tls.cert_file.empty()) {
    t["cert_file"] = tls.cert_file;
    t["key_file"] = tls.key_file;
  }
  if (!tls.password_file.empty()) t["password_file"] = tls.password_file;
  t["min_version"] = NameOf(kTlsVersions, tls.min_version);
  return t;
}

Json TlsServerToJson(const TlsServerConfig& tls) {
  Json t;
  t["cert_file"] = tls.cert_file;
  t["key_file"] = tls.key_file;
  if (!tls.password_file.empty()) t["password_file"] = tls.password_file;
  if (!tls.ca_file.empty()) t["ca_file"] = tls.ca_file;
  t["min_version"] = NameOf(kTlsVersions, tls.min_version);
  if (!tls.ciphers.empty()) t["ciphers"] = tls.ciphers;
  t["client_auth"] = NameOf(kClientAuths, tls.client_auth);
  if (tls.client_auth != TlsClientAuth::kNone) t["permitted_peers"] = tls.permitted_peers;
  return t;
}

Json InputToJson(const InputConfig& in) {
  Json j;
  j["name"] = in.name;
  j["type"] = NameOf(kInputTypes, in.type);
  j["format"] = NameOf(kInputFormats, in.parser.format);
  if (in.parser.format == InputFormat::kJson) {
    j["json_message_field"] = in.parser.json_message_field;
  }
  auto bind = [&j](const std::string& socket_name, const std::string& address, std::uint16_t port) {
    if (!socket_name.empty()) {
      j["socket_name"] = socket_name;
    } else {
      j["address"] = address;
      j["port"] = port;
    }
  };
  switch (in.type) {
    case InputType::kUdp:
      j["max_message_size"] = FormatSize(in.udp.max_message_size);
      bind(in.udp.socket_name, in.udp.address, in.udp.port);
      j["allowed_senders"] = in.udp.allowed_senders;
      j["receive_buffer"] = FormatSize(in.udp.receive_buffer);
      break;
    case InputType::kTcp:
      j["max_message_size"] = FormatSize(in.tcp.max_message_size);
      bind(in.tcp.socket_name, in.tcp.address, in.tcp.port);
      j["allowed_senders"] = in.tcp.allowed_senders;
      j["framing"] = NameOf(kTcpFramings, in.tcp.framing);
      j["nul_terminator"] = in.tcp.nul_terminator;
      j["max_connections"] = in.tcp.max_connections;
      j["max_connections_per_source"] = in.tcp.max_connections_per_source;
      j["idle_timeout"] = FormatDuration(in.tcp.idle_timeout_us);
      break;
    case InputType::kRelp:
      j["max_message_size"] = FormatSize(in.relp.max_message_size);
      j["address"] = in.relp.address;
      j["port"] = in.relp.port;
      break;
    case InputType::kTls:
      j["max_message_size"] = FormatSize(in.tls.max_message_size);
      bind(in.tls.socket_name, in.tls.address, in.tls.port);
      j["allowed_senders"] = in.tls.allowed_senders;
      j["framing"] = NameOf(kTcpFramings, in.tls.framing);
      j["max_connections"] = in.tls.max_connections;
      j["max_connections_per_source"] = in.tls.max_connections_per_source;
      j["idle_timeout"] = FormatDuration(in.tls.idle_timeout_us);
      j["handshake_timeout"] = FormatDuration(in.tls.handshake_timeout_us);
      j["tls"] = TlsServerToJson(in.tls.tls);
      break;
    case InputType::kStdin:
      j["max_message_size"] = FormatSize(in.stream.max_message_size);
      break;
    case InputType::kFile:
      j["max_message_size"] = FormatSize(in.file.max_message_size);
      j["path"] = in.file.path;
      if (!in.file.state_directory.empty()) j["state_directory"] = in.file.state_directory;
      j["read_from"] = NameOf(kReadFroms, in.file.read_from);
      if (!in.file.multiline_start.empty()) {
        j["multiline_start"] = in.file.multiline_start;
        j["multiline_timeout"] = FormatDuration(in.file.multiline_timeout_us);
      }
      j["poll_interval"] = FormatDuration(in.file.poll_interval_us);
      break;
    case InputType::kUnix: {
      j["max_message_size"] = FormatSize(in.unix_socket.max_message_size);
      j["path"] = in.unix_socket.path;
      j["socket_type"] = NameOf(kUnixSocketTypes, in.unix_socket.socket_type);
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(in.unix_socket.mode));
      j["socket_mode"] = mode;
      break;
    }
    case InputType::kJournald:
      j["max_message_size"] = FormatSize(in.journald.max_message_size);
      if (!in.journald.directory.empty()) j["journal_directory"] = in.journald.directory;
      j["units"] = in.journald.units;
      if (!in.journald.state_directory.empty()) {
        j["state_directory"] = in.journald.state_directory;
      }
      j["read_from"] = NameOf(kReadFroms, in.journald.read_from);
      break;
    case InputType::kKafka:
      j["max_message_size"] = FormatSize(in.kafka.max_message_size);
      j["brokers"] = in.kafka.brokers;
      j["topics"] = in.kafka.topics;
      j["group_id"] = in.kafka.group_id;
      j["commit_interval"] = FormatDuration(in.kafka.commit_interval_us);
      j["properties"] = in.kafka.properties;
      j["exactly_once"] = in.kafka.exactly_once;
      j["changelog_topic"] = in.kafka.changelog_topic;
      j["transactional_id"] = in.kafka.transactional_id;
      j["changelog_recovery"] = NameOf(kChangelogRecoveries, in.kafka.changelog_recovery);
      break;
  }
  return j;
}

Json SelectionToJson(const EventSelection& sel) {
  Json j = Json::object();
  j["kinds"] = Json::array();
  if (sel.first) j["kinds"].push_back("first");
  if (sel.summary) j["kinds"].push_back("summary");
  if (sel.min_severity >= 0) j["min_severity"] = config_internal::kSeverityNames[sel.min_severity];
  if (!sel.hosts.empty()) j["hosts"] = sel.hosts;
  if (!sel.apps.empty()) j["apps"] = sel.apps;
  if (!sel.template_contains.empty()) j["template_contains"] = sel.template_contains;
  if (!sel.template_regex.empty()) j["template_regex"] = sel.template_regex;
  return j;
}

Json OutputToJson(const OutputConfig& out) {
  Json j;
  j["name"] = out.sink.name;
  j["type"] = NameOf(kOutputTypes, out.type);
  j["buffer"] = FormatSize(out.sink.buffer);
  j["when_full"] = NameOf(kWhenFull, out.sink.when_full);
  if (out.sink.when_full == WhenFull::kDrop) {
    j["block_timeout"] = FormatDuration(out.sink.block_timeout_us);
  }
  if (!out.sink.disk_buffer.directory.empty()) {
    j["disk_buffer"] = out.sink.disk_buffer.directory;
    j["disk_buffer_max_size"] = FormatSize(out.sink.disk_buffer.max_size);
  }
  auto reconnect = [&j](const TcpSinkOptions& target) {
    j["reconnect_min"] = FormatDuration(target.reconnect_min_us);
    j["reconnect_max"] = FormatDuration(target.reconnect_max_us);
  };
  switch (out.type) {
    case OutputType::kStdout:
      break;
    case OutputType::kFile:
      j["path"] = out.file.path;
      j["fsync"] = NameOf(kFsyncPolicies, out.file.fsync);
      if (out.file.fsync == FsyncPolicy::kInterval) {
        j["fsync_interval"] = FormatDuration(out.file.fsync_interval_us);
      }
      break;
    case OutputType::kTcp:
      j["address"] = out.tcp.address;
      j["port"] = out.tcp.port;
      reconnect(out.tcp);
      if (out.tcp.tls) j["tls"] = TlsClientToJson(out.tcp.tls_options);
      break;
    case OutputType::kKafka:
      j["brokers"] = out.kafka.brokers;
      j["topic"] = out.kafka.topic;
      j["key"] = NameOf(kKafkaKeys, out.kafka.key);
      j["compression"] = NameOf(kKafkaCompressions, out.kafka.compression);
      j["properties"] = out.kafka.properties;
      break;
    case OutputType::kRelp:
      j["address"] = out.relp.target.address;
      j["port"] = out.relp.target.port;
      reconnect(out.relp.target);
      j["window"] = out.relp.window;
      j["ack_timeout"] = FormatDuration(out.relp.ack_timeout_us);
      break;
    case OutputType::kSyslog:
      j["address"] = out.syslog.target.address;
      j["port"] = out.syslog.target.port;
      j["protocol"] = NameOf(kSyslogProtocols, out.syslog.protocol);
      if (out.syslog.protocol == SyslogProtocol::kTcp) {
        j["framing"] = NameOf(kSyslogFramings, out.syslog.framing);
        reconnect(out.syslog.target);
      }
      j["app_name"] = out.syslog.app_name;
      if (out.syslog.target.tls) j["tls"] = TlsClientToJson(out.syslog.target.tls_options);
      break;
    case OutputType::kHttp: {
      const HttpSinkOptions& h = out.http;
      if (h.url.tls) j["tls"] = TlsClientToJson(h.tls);
      j["url"] = h.url.text;
      j["format"] = NameOf(kHttpFormats, h.format);
      if (h.format == HttpFormat::kClickHouse) j["table"] = h.table;
      if (h.format == HttpFormat::kElasticsearch) j["index"] = h.index;
      if (h.format == HttpFormat::kLoki) {
        j["labels"] = Json::object();
        for (const auto& [name, value] : h.labels) j["labels"][name] = value;
      }
      j["headers"] = Json::object();
      for (const auto& [name, value] : h.headers) j["headers"][name] = value;
      j["header_files"] = Json::object();
      for (const auto& [name, path] : h.header_files) j["header_files"][name] = path;
      j["compression"] = NameOf(kHttpCompressions, h.compression);
      j["batch_max_events"] = h.batch_max_events;
      j["batch_max_bytes"] = FormatSize(h.batch_max_bytes);
      j["batch_max_delay"] = FormatDuration(h.batch_max_delay_us);
      j["request_timeout"] = FormatDuration(h.request_timeout_us);
      j["retry_initial_backoff"] = FormatDuration(h.retry_initial_backoff_us);
      j["retry_max_backoff"] = FormatDuration(h.retry_max_backoff_us);
      j["max_retries"] = h.max_retries;
      break;
    }
  }
  if (!out.sink.select.all()) j["select"] = SelectionToJson(out.sink.select);
  return j;
}

}  // namespace

std::string ConfigToJson(const Config& config) {
  Json root;
  root["log"]["level"] = LogLevelName(config.log.level);
  root["log"]["stats_interval"] = FormatDuration(config.log.stats_interval_us);

  root["inputs"] = Json::array();
  for (const InputConfig& in : config.inputs) root["inputs"].push_back(InputToJson(in));

  const MergerOptions& m = config.engine.merger;
  Json& engine = root["engine"];
  engine["max_distance"] = m.max_distance;
  engine["window"] = FormatDuration(m.window_us);
  engine["max_hold"] = FormatDuration(m.max_hold_us);
  engine["max_groups"] = m.max_groups;
  engine["scope"] = Json::array();
  for (ScopeField field : m.scope) engine["scope"].push_back(NameOf(kScopeFields, field));
  engine["max_summary_hosts"] = m.max_summary_hosts;
  engine["mode"] = NameOf(kModes, m.annotate);
  engine["confirm"] = m.confirm;
  engine["variable_after_values"] = m.variable_after_values;
  engine["protected_words"] = m.protected_words;
  engine["time"] = NameOf(kTimeSources, config.engine.time);

  root["workers"]["threads"] = config.workers.threads;
  root["workers"]["queue_capacity"] = config.workers.queue_capacity;
  root["workers"]["flush_interval"] = FormatDuration(config.workers.flush_interval_us);
  root["workers"]["shutdown_timeout"] = FormatDuration(config.workers.shutdown_timeout_us);

  root["outputs"] = Json::array();
  for (const OutputConfig& out : config.outputs) root["outputs"].push_back(OutputToJson(out));

  root["limits"]["memory"] =
      config.limits.memory ? Json(FormatSize(*config.limits.memory)) : Json("auto");
  root["metrics"]["enabled"] = config.metrics.enabled;
  root["metrics"]["address"] = config.metrics.address;
  root["metrics"]["port"] = config.metrics.port;
  root["metrics"]["allowed_senders"] = config.metrics.allowed_senders;
  if (config.metrics.tls) root["metrics"]["tls"] = TlsServerToJson(config.metrics.tls_options);
  root["state"]["directory"] = config.state.directory;
  root["state"]["checkpoint_interval"] = FormatDuration(config.state.checkpoint_interval_us);
  root["state"]["journal"] = config.state.journal;
  root["state"]["journal_segment_size"] = FormatSize(config.state.journal_segment_bytes);
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace logfold
