// Validator: the typed readers (each reports its own error with the value's path) and the
// log, inputs, engine, workers, metrics and state sections of the configuration.
#include "daemon/config/validator.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <regex>
#include <string>
#include <utility>

namespace logfold {
namespace config_internal {

// Optimal string alignment distance (Levenshtein plus adjacent transpositions), so a
// swapped pair of letters ("widnow") counts as one edit.
std::size_t EditDistance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

namespace {}  // namespace

// An exactly-once kafka input produces to the config's kafka output itself, in its
// transactions: the output must be the only one (other outputs could not be part of them).
void Validator::ExactlyOnceOutputs(const Json& root, const Config& /*config*/) {
  if (!root.is_object() || !root.contains("inputs") || !root["inputs"].is_array()) return;
  const Json& inputs = root["inputs"];
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Json& in = inputs[i];
    if (!in.is_object() || !in.contains("exactly_once") || in["exactly_once"] != true) continue;
    const Json* outputs = root.contains("outputs") ? &root["outputs"] : nullptr;
    const bool one_kafka = outputs != nullptr && outputs->is_array() && outputs->size() == 1 &&
                           (*outputs)[0].is_object() && (*outputs)[0].contains("type") &&
                           (*outputs)[0]["type"] == "kafka";
    if (!one_kafka) {
      Error(Join(Index("inputs", i), "exactly_once"),
            "needs exactly one output, of type \"kafka\" (its events are produced in the "
            "input's transactions)");
    }
  }
}

// An at-least-once kafka input reads again from its committed offsets after a restart, which
// lie before every line of the open groups a state directory restores (and before every line
// its journal replays): those lines would be counted twice. Exactly-once mode keeps its
// groups in its changelog and does not use the state directory.
void Validator::KafkaInputsWithState(const Json& root) {
  if (!root.is_object() || !root.contains("state") || !root["state"].is_object()) return;
  const Json& state = root["state"];
  if (!state.contains("directory") || !state["directory"].is_string() ||
      state["directory"].get<std::string>().empty()) {
    return;
  }
  if (!root.contains("inputs") || !root["inputs"].is_array()) return;
  const Json& inputs = root["inputs"];
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Json& in = inputs[i];
    if (!in.is_object() || !in.contains("type") || in["type"] != "kafka") continue;
    if (in.contains("exactly_once") && in["exactly_once"] == true) continue;
    Error(Join(Index("inputs", i), "type"),
          "an at-least-once kafka input cannot be combined with state.directory (after a "
          "restart it reads the restored groups' lines again from its committed offsets, "
          "counting them twice); use exactly_once, or no state directory");
  }
}

void Validator::Document(const Json& root, Config& config) {
  ExactlyOnceOutputs(root, config);
  KafkaInputsWithState(root);
  Walk(root, "",
       {
           {"log", [&](const Json& v, const std::string& p) { Log(v, p, config.log); }},
           {"inputs", [&](const Json& v, const std::string& p) { Inputs(v, p, config); }, true},
           {"engine", [&](const Json& v, const std::string& p) { Engine(v, p, config.engine); }},
           {"workers", [&](const Json& v, const std::string& p) { Workers(v, p, config.workers); }},
           {"outputs", [&](const Json& v, const std::string& p) { Outputs(v, p, config); }, true},
           {"metrics", [&](const Json& v, const std::string& p) { Metrics(v, p, config.metrics); }},
           {"limits", [&](const Json& v, const std::string& p) { Limits(v, p, config.limits); }},
           {"state", [&](const Json& v, const std::string& p) { State(v, p, config.state); }},
       });
}

// Reads an object key by key, in document order: duplicates, unknown keys and keys not
// allowed here are reported where they occur, missing required keys at the end.
void Validator::Walk(const Json& object, const std::string& path,
                     const std::vector<Field>& fields) {
  if (!object.is_object()) {
    TypeError(path, "an object", object);
    return;
  }
  std::vector<std::string_view> seen;
  for (const auto& [key, value] : object.get_ref<const Json::object_t&>()) {
    const std::string key_path = Join(path, key);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      Error(key_path, "duplicate key");
      continue;
    }
    seen.push_back(key);
    const Field* field = nullptr;
    for (const Field& f : fields) {
      if (f.key == key) field = &f;
    }
    if (field == nullptr) {
      Error(key_path, UnknownKey(key, fields));
    } else if (!field->not_allowed.empty()) {
      Error(key_path, field->not_allowed);
    } else {
      field->read(value, key_path);
    }
  }
  for (const Field& f : fields) {
    if (f.required && std::find(seen.begin(), seen.end(), f.key) == seen.end()) {
      Error(Join(path, f.key), "required key missing");
    }
  }
}

std::string Validator::UnknownKey(std::string_view key, const std::vector<Field>& fields) {
  const Field* best = nullptr;
  std::size_t best_distance = 3;  // suggest only within two edits
  for (const Field& f : fields) {
    if (!f.not_allowed.empty()) continue;
    const std::size_t distance = EditDistance(key, f.key);
    if (distance < best_distance) {
      best = &f;
      best_distance = distance;
    }
  }
  if (best == nullptr) return "unknown key";
  return "unknown key; did you mean " + Quote(best->key) + "?";
}

bool Validator::String(const Json& v, const std::string& p, std::string& out) {
  if (!v.is_string()) {
    TypeError(p, "a string", v);
    return false;
  }
  out = v.get<std::string>();
  return true;
}

bool Validator::NonEmptyString(const Json& v, const std::string& p, std::string& out) {
  std::string s;
  if (!String(v, p, s)) return false;
  if (s.empty()) {
    Error(p, "must not be empty");
    return false;
  }
  out = std::move(s);
  return true;
}

bool Validator::Bool(const Json& v, const std::string& p, bool& out) {
  if (!v.is_boolean()) {
    TypeError(p, "a boolean", v);
    return false;
  }
  out = v.get<bool>();
  return true;
}

bool Validator::Duration(const Json& v, const std::string& p, TimeUs min, TimeUs max, TimeUs& out) {
  if (!v.is_string()) {
    TypeError(p, "a duration string such as \"10s\"", v);
    return false;
  }
  TimeUs us = 0;
  std::string error;
  if (!ParseDuration(v.get_ref<const std::string&>(), us, error)) {
    Error(p, error);
    return false;
  }
  if (us < min || us > max) {
    std::string reason;
    if (max != kMaxTime) {
      reason = "must be between " + FormatDuration(min) + " and " + FormatDuration(max);
    } else if (min == 1) {
      reason = "must be greater than 0";
    } else {
      reason = "must be at least " + FormatDuration(min);
    }
    Error(p, reason + ", got " + Dump(v));
    return false;
  }
  out = us;
  return true;
}

bool Validator::Size(const Json& v, const std::string& p, std::uint64_t min, std::uint64_t max,
                     std::uint64_t& out) {
  std::uint64_t bytes = 0;
  if (v.is_number_unsigned()) {
    bytes = v.get<std::uint64_t>();
  } else if (v.is_number_integer()) {
    // Negative (non-negative integers are stored as unsigned): below any minimum.
    Error(p, "must be between " + FormatSize(min) + " and " + FormatSize(max) + ", got " + Dump(v));
    return false;
  } else if (v.is_string()) {
    std::string error;
    if (!ParseSize(v.get_ref<const std::string&>(), bytes, error)) {
      Error(p, error);
      return false;
    }
  } else {
    TypeError(p, "a size (a string such as \"64KiB\" or an integer number of bytes)", v);
    return false;
  }
  if (bytes < min || bytes > max) {
    Error(p, "must be between " + FormatSize(min) + " and " + FormatSize(max) + ", got " + Dump(v));
    return false;
  }
  out = bytes;
  return true;
}

bool Validator::IpLiteral(const Json& v, const std::string& p, std::string& out) {
  std::string s;
  if (!String(v, p, s)) return false;
  if (!ParseIp(s)) {
    Error(p,
          "must be an IPv4 or IPv6 address literal (no brackets, no host names), got " + Quote(s));
    return false;
  }
  out = std::move(s);
  return true;
}

bool Validator::HostOrIp(const Json& v, const std::string& p, std::string& out) {
  std::string s;
  if (!String(v, p, s)) return false;
  if (!ParseIp(s) && !IsHostName(s)) {
    Error(p, "must be a host name or an IP address literal, got " + Quote(s));
    return false;
  }
  out = std::move(s);
  return true;
}

// Names label metrics and log lines, so they are kept to a safe character set.
bool Validator::Name(const Json& v, const std::string& p, std::string& out) {
  std::string s;
  if (!String(v, p, s)) return false;
  bool valid = !s.empty();
  for (char c : s) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-');
  }
  if (!valid) {
    Error(p, "must match [A-Za-z0-9_.-]+, got " + Quote(s));
    return false;
  }
  out = std::move(s);
  return true;
}

// Canonical text of an IP literal (so "::0001" and "::1" compare equal), or nullopt.
std::optional<std::string> Validator::ParseIp(const std::string& s) {
  unsigned char bytes[sizeof(in6_addr)];
  char text[INET6_ADDRSTRLEN];
  if (inet_pton(AF_INET, s.c_str(), bytes) == 1) {
    return std::string(inet_ntop(AF_INET, bytes, text, sizeof(text)));
  }
  if (inet_pton(AF_INET6, s.c_str(), bytes) == 1) {
    return "[" + std::string(inet_ntop(AF_INET6, bytes, text, sizeof(text))) + "]";
  }
  return std::nullopt;
}

// The first value of `key` in `object`, or null.
const Json* Validator::Find(const Json& object, std::string_view key) {
  for (const auto& entry : object.get_ref<const Json::object_t&>()) {
    if (entry.first == key) return &entry.second;
  }
  return nullptr;
}

void Validator::Log(const Json& v, const std::string& path, LogConfig& log) {
  Walk(v, path,
       {
           {"level",
            [&](const Json& j, const std::string& p) { Enum(j, p, kLogLevels, log.level); }},
           {"stats_interval",
            [&](const Json& j, const std::string& p) {
              Duration(j, p, 0, kMaxTime, log.stats_interval_us);
            }},
       });
}

void Validator::Inputs(const Json& v, const std::string& path, Config& config) {
  if (!v.is_array()) {
    TypeError(path, "an array", v);
    return;
  }
  if (v.empty()) Error(path, "must contain at least one input");
  for (std::size_t i = 0; i < v.size(); ++i) Input(v[i], Index(path, i), config);
}

void Validator::Input(const Json& v, const std::string& path, Config& config) {
  if (!v.is_object()) {
    TypeError(path, "an object", v);
    return;
  }
  InputConfig in;
  const std::optional<InputType> type = Peek(v, "type", kInputTypes);
  const std::optional<InputFormat> format =
      Has(v, "format") ? Peek(v, "format", kInputFormats) : in.parser.format;
  const bool adopts_socket = Has(v, "socket_name");
  const bool relp = type == InputType::kRelp;
  const bool tls = type == InputType::kTls;
  const bool network = type == InputType::kUdp || type == InputType::kTcp || relp || tls;
  // The keys udp, tcp, relp and tls share land in the options of the input's type.
  const bool tcp = type == InputType::kTcp;
  std::string& address = relp  ? in.relp.address
                         : tcp ? in.tcp.address
                         : tls ? in.tls.address
                               : in.udp.address;
  std::uint16_t& port = relp ? in.relp.port : tcp ? in.tcp.port : tls ? in.tls.port : in.udp.port;
  std::string& socket_name = tcp   ? in.tcp.socket_name
                             : tls ? in.tls.socket_name
                                   : in.udp.socket_name;
  std::uint64_t& max_message_size = relp                           ? in.relp.max_message_size
                                    : tcp                          ? in.tcp.max_message_size
                                    : tls                          ? in.tls.max_message_size
                                    : network                      ? in.udp.max_message_size
                                    : type == InputType::kFile     ? in.file.max_message_size
                                    : type == InputType::kUnix     ? in.unix_socket.max_message_size
                                    : type == InputType::kJournald ? in.journald.max_message_size
                                    : type == InputType::kKafka    ? in.kafka.max_message_size
                                                                   : in.stream.max_message_size;
  Framing& framing = tls ? in.tls.framing : in.tcp.framing;
  std::uint32_t& max_connections = tls ? in.tls.max_connections : in.tcp.max_connections;
  TimeUs& idle_timeout_us = tls ? in.tls.idle_timeout_us : in.tcp.idle_timeout_us;
  std::vector<std::string>& allowed_senders = tcp   ? in.tcp.allowed_senders
                                              : tls ? in.tls.allowed_senders
                                                    : in.udp.allowed_senders;
  // Keys that land in the options of more than one type.
  const bool journald = type == InputType::kJournald;
  std::string& path_key = type == InputType::kUnix ? in.unix_socket.path : in.file.path;
  std::string& state_directory = journald ? in.journald.state_directory : in.file.state_directory;
  ReadFrom& read_from = journald ? in.journald.read_from : in.file.read_from;

  auto only_for = [&](std::initializer_list<InputType> types) -> std::string {
    if (!type || std::find(types.begin(), types.end(), *type) != types.end()) return {};
    return "not allowed for type " + std::string(NameOf(kInputTypes, *type));
  };
  std::string bind_rule =
      only_for({InputType::kUdp, InputType::kTcp, InputType::kRelp, InputType::kTls});
  if (bind_rule.empty() && adopts_socket) {
    bind_rule = "not allowed together with socket_name (the inherited socket is already bound)";
  }
  const std::string json_rule =
      format && *format != InputFormat::kJson ? "only allowed when format is \"json\"" : "";

  bool name_ok = false, address_ok = true, port_ok = false, socket_ok = false, path_ok = false;
  Walk(
      v, path,
      {
          {"name",
           [&](const Json& j, const std::string& p) {
             name_ok = Name(j, p, in.name) && UniqueName(p, in.name, input_names_);
           },
           true},
          {"type", [&](const Json& j, const std::string& p) { Enum(j, p, kInputTypes, in.type); },
           true},
          {"format", [&](const Json& j,
                         const std::string& p) { Enum(j, p, kInputFormats, in.parser.format); }},
          {"json_message_field",
           [&](const Json& j, const std::string& p) {
             NonEmptyString(j, p, in.parser.json_message_field);
           },
           false, json_rule},
          {"max_message_size",
           [&](const Json& j, const std::string& p) {
             Size(j, p, kKiB, 16 * kMiB, max_message_size);
           }},
          {"socket_name",
           [&](const Json& j, const std::string& p) {
             socket_ok = NonEmptyString(j, p, socket_name);
           },
           false, only_for({InputType::kUdp, InputType::kTcp, InputType::kTls})},
          {"address",
           [&](const Json& j, const std::string& p) { address_ok = IpLiteral(j, p, address); },
           false, bind_rule},
          {"port",
           [&](const Json& j, const std::string& p) { port_ok = Integer(j, p, 0, 65535, port); },
           network && !adopts_socket, bind_rule},
          {"receive_buffer",
           [&](const Json& j, const std::string& p) { Size(j, p, 0, kGiB, in.udp.receive_buffer); },
           false, only_for({InputType::kUdp})},
          {"framing",
           [&](const Json& j, const std::string& p) { Enum(j, p, kTcpFramings, framing); }, false,
           only_for({InputType::kTcp, InputType::kTls})},
          {"nul_terminator",
           [&](const Json& j, const std::string& p) { Bool(j, p, in.tcp.nul_terminator); }, false,
           only_for({InputType::kTcp})},
          {"max_connections",
           [&](const Json& j, const std::string& p) { Integer(j, p, 1, 65535, max_connections); },
           false, only_for({InputType::kTcp, InputType::kTls})},
          {"max_connections_per_source",
           [&](const Json& j, const std::string& p) {
             Integer(j, p, 0, 65535,
                     tls ? in.tls.max_connections_per_source : in.tcp.max_connections_per_source);
           },
           false, only_for({InputType::kTcp, InputType::kTls})},
          {"idle_timeout",
           [&](const Json& j, const std::string& p) {
             Duration(j, p, 0, kMaxTime, idle_timeout_us);
           },
           false, only_for({InputType::kTcp, InputType::kTls})},
          {"allowed_senders",
           [&](const Json& j, const std::string& p) { Cidrs(j, p, allowed_senders); }, false,
           only_for({InputType::kUdp, InputType::kTcp, InputType::kTls})},
          {"handshake_timeout",
           [&](const Json& j, const std::string& p) {
             Duration(j, p, kMillisecond, 10 * kMinute, in.tls.handshake_timeout_us);
           },
           false, only_for({InputType::kTls})},
          {"tls", [&](const Json& j, const std::string& p) { TlsInput(j, p, in.tls.tls); },
           type == InputType::kTls, only_for({InputType::kTls})},
          {"path",
           [&](const Json& j, const std::string& p) { path_ok = NonEmptyString(j, p, path_key); },
           type == InputType::kFile || type == InputType::kUnix,
           only_for({InputType::kFile, InputType::kUnix})},
          {"state_directory",
           [&](const Json& j, const std::string& p) { NonEmptyString(j, p, state_directory); },
           false, only_for({InputType::kFile, InputType::kJournald})},
          {"read_from",
           [&](const Json& j, const std::string& p) { Enum(j, p, kReadFroms, read_from); }, false,
           only_for({InputType::kFile, InputType::kJournald})},
          {"multiline_start",
           [&](const Json& j, const std::string& p) {
             if (!NonEmptyString(j, p, in.file.multiline_start)) return;
             try {
               std::regex check(in.file.multiline_start, std::regex::ECMAScript);
             } catch (const std::regex_error& e) {
               Error(p, std::string("invalid regular expression: ") + e.what());
             }
           },
           false, only_for({InputType::kFile})},
          {"multiline_timeout",
           [&](const Json& j, const std::string& p) {
             Duration(j, p, kMillisecond, kHour, in.file.multiline_timeout_us);
           },
           false,
           type == InputType::kFile && !Has(v, "multiline_start")
               ? "only allowed with multiline_start"
               : only_for({InputType::kFile})},
          {"poll_interval",
           [&](const Json& j, const std::string& p) {
             Duration(j, p, kMillisecond, kHour, in.file.poll_interval_us);
           },
           false, only_for({InputType::kFile})},
          {"socket_type",
           [&](const Json& j, const std::string& p) {
             Enum(j, p, kUnixSocketTypes, in.unix_socket.socket_type);
           },
           false, only_for({InputType::kUnix})},
          {"socket_mode",
           [&](const Json& j, const std::string& p) { FileMode(j, p, in.unix_socket.mode); }, false,
           only_for({InputType::kUnix})},
          {"journal_directory",
           [&](const Json& j, const std::string& p) {
             NonEmptyString(j, p, in.journald.directory);
           },
           false, only_for({InputType::kJournald})},
          {"units", [&](const Json& j, const std::string& p) { Words(j, p, in.journald.units); },
           false, only_for({InputType::kJournald})},
          {"brokers",
           [&](const Json& j, const std::string& p) { NonEmptyString(j, p, in.kafka.brokers); },
           type == InputType::kKafka, only_for({InputType::kKafka})},
          {"topics",
           [&](const Json& j, const std::string& p) {
             Words(j, p, in.kafka.topics);
             if (j.is_array() && j.empty()) Error(p, "must name at least one topic");
           },
           type == InputType::kKafka, only_for({InputType::kKafka})},
          {"group_id",
           [&](const Json& j, const std::string& p) { NonEmptyString(j, p, in.kafka.group_id); },
           false, only_for({InputType::kKafka})},
          {"commit_interval",
           [&](const Json& j, const std::string& p) {
             Duration(j, p, 100 * kMillisecond, kHour, in.kafka.commit_interval_us);
           },
           false, only_for({InputType::kKafka})},
          {"properties",
           [&](const Json& j, const std::string& p) {
             KafkaProperties(
                 j, p, in.kafka.properties,
                 {"bootstrap.servers", "metadata.broker.list", "group.id", "enable.auto.commit",
                  "enable.auto.offset.store", "partition.assignment.strategy", "rebalance_cb",
                  "offset_commit_cb", "isolation.level"});
           },
           false, only_for({InputType::kKafka})},
          {"exactly_once",
           [&](const Json& j, const std::string& p) { Bool(j, p, in.kafka.exactly_once); }, false,
           only_for({InputType::kKafka})},
          {"changelog_topic",
           [&](const Json& j, const std::string& p) {
             String(j, p, in.kafka.changelog_topic);  // "" (the default) is checked below
           },
           false, only_for({InputType::kKafka})},
          {"transactional_id",
           [&](const Json& j, const std::string& p) {
             String(j, p, in.kafka.transactional_id);  // "": derived
           },
           false, only_for({InputType::kKafka})},
          {"changelog_recovery",
           [&](const Json& j, const std::string& p) {
             Enum(j, p, kChangelogRecoveries, in.kafka.changelog_recovery);
           },
           false, only_for({InputType::kKafka})},
      });
  if (type == InputType::kKafka && in.kafka.exactly_once && in.kafka.changelog_topic.empty()) {
    Error(Join(path, "changelog_topic"), "required when exactly_once is true");
  }
  // Raw lines may start with a number ("42 items processed"), which auto framing could
  // take for an octet count.
  if (in.parser.format == InputFormat::kRaw && !Has(v, "framing")) {
    framing = Framing::kNewline;
  }

  const std::string label = name_ok ? "input " + Quote(in.name) : path;
  if (type == InputType::kStdin) {
    if (!stdin_input_.empty()) {
      Error(Join(path, "type"),
            "only one stdin input is allowed; " + stdin_input_ + " reads stdin already");
    } else {
      stdin_input_ = label;
    }
  }
  // tls and tcp share the TCP port space.
  const std::string_view transport = type == InputType::kUdp ? "udp" : "tcp";
  if (network && port_ok && address_ok && !adopts_socket && port != 0) {
    // tls and relp run over TCP: they cannot share a port with a tcp input either.
    const std::string bind =
        std::string(transport) + " " + *ParseIp(address) + ":" + std::to_string(port);
    auto [it, inserted] = binds_.emplace(bind, label);
    if (!inserted) Error(Join(path, "port"), bind + " is already bound by " + it->second);
  }
  if (network && socket_ok) {
    const std::string socket = std::string(transport) + " socket " + Quote(socket_name);
    auto [it, inserted] = sockets_.emplace(socket, label);
    if (!inserted) {
      Error(Join(path, "socket_name"), socket + " is already adopted by " + it->second);
    }
  }
  if ((type == InputType::kFile || type == InputType::kUnix) && path_ok) {
    auto [it, inserted] = input_files_.emplace(path_key, label);
    if (!inserted) {
      Error(Join(path, "path"), std::string(type == InputType::kFile ? "file is already read by "
                                                                     : "path is already used by ") +
                                    it->second);
    } else if (auto out = output_files_.find(path_key); out != output_files_.end()) {
      Error(Join(path, "path"),
            "file is written by " + out->second + "; reading it would feed events back in");
    }
  }
  config.inputs.push_back(std::move(in));
}

bool Validator::UniqueName(const std::string& p, const std::string& name,
                           std::map<std::string, std::string>& names) {
  auto [it, inserted] = names.emplace(name, p.substr(0, p.rfind('.')));
  if (!inserted) {
    Error(p, "duplicate name " + Quote(name) + " (also used by " + it->second + ")");
    return false;
  }
  return true;
}

void Validator::Engine(const Json& v, const std::string& path, EngineConfig& engine) {
  MergerOptions& m = engine.merger;
  bool window_ok = false, max_hold_ok = false;
  std::string window_text, max_hold_text;
  Walk(v, path,
       {
           {"max_distance",
            [&](const Json& j, const std::string& p) { Integer(j, p, 0, 31, m.max_distance); }},
           {"window",
            [&](const Json& j, const std::string& p) {
              window_ok = Duration(j, p, 1, kMaxTime, m.window_us);
              window_text = Dump(j);
            }},
           {"max_hold",
            [&](const Json& j, const std::string& p) {
              max_hold_ok = Duration(j, p, 1, kMaxTime, m.max_hold_us);
              max_hold_text = Dump(j);
            }},
           {"max_groups",
            [&](const Json& j, const std::string& p) {
              Integer(j, p, 1, 100'000'000, m.max_groups);
            }},
           {"scope", [&](const Json& j, const std::string& p) { Scope(j, p, m.scope); }},
           {"max_summary_hosts",
            [&](const Json& j, const std::string& p) {
              Integer(j, p, 0, 1024, m.max_summary_hosts);
            }},
           {"mode", [&](const Json& j, const std::string& p) { Enum(j, p, kModes, m.annotate); }},
           {"confirm", [&](const Json& j, const std::string& p) { Bool(j, p, m.confirm); }},
           {"variable_after_values",
            [&](const Json& j, const std::string& p) {
              // 1 or 2 values would make every changed word a variable: refused.
              if (Integer(j, p, 0, 8, m.variable_after_values) &&
                  (m.variable_after_values == 1 || m.variable_after_values == 2)) {
                Error(p, "must be 0 (off) or between 3 and 8, got " + Dump(j));
              }
            }},
           {"protected_words",
            [&](const Json& j, const std::string& p) { Words(j, p, m.protected_words); }},
           {"time",
            [&](const Json& j, const std::string& p) { Enum(j, p, kTimeSources, engine.time); }},
       });
  // Reported on whichever of the two keys was written; a default is not the user's error.
  const bool has_window = !window_text.empty(), has_max_hold = !max_hold_text.empty();
  if ((window_ok || !has_window) && (max_hold_ok || !has_max_hold) &&
      (has_window || has_max_hold) && m.max_hold_us < m.window_us) {
    if (has_max_hold) {
      Error(Join(path, "max_hold"),
            "must be at least window (" + FormatDuration(m.window_us) + "), got " + max_hold_text);
    } else {
      Error(Join(path, "window"),
            "must not exceed max_hold (" + FormatDuration(m.max_hold_us) + "), got " + window_text);
    }
  }
}

void Validator::Scope(const Json& v, const std::string& path, std::vector<ScopeField>& scope) {
  if (!v.is_array()) {
    TypeError(path, "an array", v);
    return;
  }
  scope.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    ScopeField field = ScopeField::kHost;
    if (!Enum(v[i], Index(path, i), kScopeFields, field)) continue;
    if (std::find(scope.begin(), scope.end(), field) != scope.end()) {
      Error(Index(path, i), "duplicate scope field " + Quote(NameOf(kScopeFields, field)));
      continue;
    }
    scope.push_back(field);
  }
}

// Permissions as an octal string, e.g. "0660" or "666".
bool Validator::FileMode(const Json& v, const std::string& p, std::uint32_t& out) {
  std::string s;
  if (!String(v, p, s)) return false;
  const bool octal =
      !s.empty() && s.size() <= 4 && s.find_first_not_of("01234567") == std::string::npos;
  if (!octal) {
    Error(p, "expected permissions as an octal string such as \"0666\", got " + Dump(v));
    return false;
  }
  out = static_cast<std::uint32_t>(std::stoul(s, nullptr, 8));
  return true;
}

void Validator::Words(const Json& v, const std::string& path, std::vector<std::string>& words) {
  if (!v.is_array()) {
    TypeError(path, "an array", v);
    return;
  }
  words.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string word;
    if (NonEmptyString(v[i], Index(path, i), word)) words.push_back(std::move(word));
  }
}

void Validator::Workers(const Json& v, const std::string& path, WorkersConfig& workers) {
  Walk(v, path,
       {
           {"threads",
            [&](const Json& j, const std::string& p) { Integer(j, p, 0, 256, workers.threads); }},
           {"queue_capacity",
            [&](const Json& j, const std::string& p) {
              Integer(j, p, 1024, 16'777'216, workers.queue_capacity);
            }},
           {"flush_interval",
            [&](const Json& j, const std::string& p) {
              Duration(j, p, kMillisecond, 10 * kSecond, workers.flush_interval_us);
            }},
           {"shutdown_timeout",
            [&](const Json& j, const std::string& p) {
              Duration(j, p, kSecond, kHour, workers.shutdown_timeout_us);
            }},
       });
}

void Validator::Metrics(const Json& v, const std::string& path, MetricsConfig& metrics) {
  Walk(v, path,
       {
           {"enabled", [&](const Json& j, const std::string& p) { Bool(j, p, metrics.enabled); }},
           {"address",
            [&](const Json& j, const std::string& p) { IpLiteral(j, p, metrics.address); }},
           {"port",
            [&](const Json& j, const std::string& p) { Integer(j, p, 0, 65535, metrics.port); }},
           {"allowed_senders",
            [&](const Json& j, const std::string& p) { Cidrs(j, p, metrics.allowed_senders); }},
           {"tls",
            [&](const Json& j, const std::string& p) {
              metrics.tls = true;
              TlsInput(j, p, metrics.tls_options);
            }},
       });
}

void Validator::Limits(const Json& v, const std::string& path, LimitsConfig& limits) {
  Walk(v, path,
       {
           {"memory",
            [&](const Json& j, const std::string& p) {
              if (j.is_string() && j.get<std::string>() == "auto") {
                limits.memory.reset();
                return;
              }
              std::uint64_t bytes = 0;
              if (Size(j, p, 0, 1024 * kGiB, bytes)) {
                if (bytes != 0 && bytes < 16 * kMiB) {
                  Error(p, "must be \"auto\", 0 or at least 16MiB, got " + j.dump());
                  return;
                }
                limits.memory = bytes;
              }
            }},
       });
}

void Validator::State(const Json& v, const std::string& path, StateOptions& state) {
  Walk(v, path,
       {
           {"directory",
            [&](const Json& j, const std::string& p) { String(j, p, state.directory); }},
           {"checkpoint_interval",
            [&](const Json& j, const std::string& p) {
              Duration(j, p, 10 * kMillisecond, kHour, state.checkpoint_interval_us);
            }},
           {"journal", [&](const Json& j, const std::string& p) { Bool(j, p, state.journal); }},
           {"journal_segment_size",
            [&](const Json& j, const std::string& p) {
              Size(j, p, kMiB, kGiB, state.journal_segment_bytes);
            }},
       });
  if (state.journal && state.directory.empty()) {
    Error(Join(path, "journal"), "needs state.directory (the journal is kept there)");
  }
}

void Validator::TlsInput(const Json& v, const std::string& path, TlsServerConfig& t) {
  const std::optional<TlsClientAuth> auth =
      v.is_object() && Has(v, "client_auth") ? Peek(v, "client_auth", kClientAuths) : t.client_auth;
  const std::string peers_rule =
      auth == TlsClientAuth::kNone ? "only allowed when client_auth is \"optional\" or \"required\""
                                   : "";
  bool pinned = false;  // a fingerprint in permitted_peers vouches without a CA
  Walk(v, path,
       {
           {"cert_file",
            [&](const Json& j, const std::string& p) { NonEmptyString(j, p, t.cert_file); }, true},
           {"key_file",
            [&](const Json& j, const std::string& p) { NonEmptyString(j, p, t.key_file); }, true},
           {"password_file",
            [&](const Json& j, const std::string& p) { NonEmptyString(j, p, t.password_file); }},
           {"ca_file",
            [&](const Json& j, const std::string& p) { NonEmptyString(j, p, t.ca_file); }},
           {"min_version",
            [&](const Json& j, const std::string& p) { Enum(j, p, kTlsVersions, t.min_version); }},
           {"ciphers",
            [&](const Json& j, const std::string& p) { NonEmptyString(j, p, t.ciphers); }},
           {"client_auth",
            [&](const Json& j, const std::string& p) { Enum(j, p, kClientAuths, t.client_auth); }},
           {"permitted_peers",
            [&](const Json& j, const std::string& p) {
              pinned = PermittedPeers(j, p, t.permitted_peers);
            },
            false, peers_rule},
       });
  if (v.is_object() && auth && *auth != TlsClientAuth::kNone && t.ca_file.empty() && !pinned) {
    Error(Join(path, "ca_file"),
          "required when client_auth is " + Quote(NameOf(kClientAuths, *auth)) +
              " (or pin client certificates by \"sha256:\" fingerprint in permitted_peers)");
  }
}

bool Validator::PermittedPeers(const Json& v, const std::string& path,
                               std::vector<std::string>& out) {
  if (!v.is_array()) {
    TypeError(path, "an array", v);
    return false;
  }
  out.clear();
  bool fingerprint = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string entry;
    if (!NonEmptyString(v[i], Index(path, i), entry)) continue;
    const std::string reason = PeerEntryError(entry);
    if (!reason.empty()) {
      Error(Index(path, i), reason + ", got " + Quote(entry));
      continue;
    }
    fingerprint = fingerprint || IsFingerprint(entry);
    out.push_back(std::move(entry));
  }
  return fingerprint;
}

std::string Validator::PeerEntryError(std::string_view e) {
  if (IsFingerprint(e)) {
    std::size_t digits = 0;
    for (char c : e.substr(7)) {
      if (c == ':') continue;
      if (!std::isxdigit(static_cast<unsigned char>(c))) digits = 1000;
      ++digits;
    }
    return digits == 64 ? "" : "not a SHA-256 fingerprint (\"sha256:\" and 64 hex digits)";
  }
  for (char c : e) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != '*') {
      return "a peer name may hold letters, digits, '-', '_', '.' and '*' only";
    }
  }
  if (e.front() == '.' || e.back() == '.' || e.find("..") != std::string_view::npos) {
    return "a peer name must not have an empty label";
  }
  return "";
}

void Validator::Cidrs(const Json& v, const std::string& path, std::vector<std::string>& out) {
  if (!v.is_array()) {
    TypeError(path, "an array", v);
    return;
  }
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string cidr;
    if (!NonEmptyString(v[i], Index(path, i), cidr)) continue;
    const std::size_t slash = cidr.find('/');
    const std::string address = cidr.substr(0, slash);
    const std::optional<std::string> ip = ParseIp(address);
    const int max_prefix = ip && ip->front() == '[' ? 128 : 32;
    bool ok = ip.has_value();
    if (ok && slash != std::string::npos) {
      const std::string digits = cidr.substr(slash + 1);
      ok = !digits.empty() && digits.size() <= 3 &&
           digits.find_first_not_of("0123456789") == std::string::npos &&
           std::stoi(digits) <= max_prefix;
    }
    if (!ok) {
      Error(Index(path, i),
            "must be an IP address or CIDR block such as \"10.0.0.0/8\" or \"::1\", got " +
                Quote(cidr));
      continue;
    }
    out.push_back(std::move(cidr));
  }
}

}  // namespace config_internal
}  // namespace logfold
