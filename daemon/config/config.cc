// Parsing, validation and canonical printing of the `logfold serve` configuration. The
// schema lives in config/README.md; every rule enforced here is documented there.
#include "daemon/config/config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "daemon/config/http_url.h"

namespace logfold {
namespace {

// Ordered, so that errors come out in document order and ConfigToJson keeps schema order.
using Json = nlohmann::ordered_json;

constexpr TimeUs kMaxTime = std::numeric_limits<TimeUs>::max();

template <typename E>
struct EnumName {
  std::string_view name;
  E value;
};

constexpr EnumName<LogLevel> kLogLevels[] = {
    {"trace", LogLevel::kTrace}, {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo},
    {"warn", LogLevel::kWarn},   {"error", LogLevel::kError}, {"critical", LogLevel::kCritical},
    {"off", LogLevel::kOff},
};
constexpr EnumName<InputType> kInputTypes[] = {
    {"udp", InputType::kUdp},
    {"tcp", InputType::kTcp},
    {"stdin", InputType::kStdin},
    {"file", InputType::kFile},
};
constexpr EnumName<InputFormat> kInputFormats[] = {
    {"syslog", InputFormat::kSyslog},
    {"raw", InputFormat::kRaw},
    {"json", InputFormat::kJson},
};
constexpr EnumName<Framing> kTcpFramings[] = {
    {"auto", Framing::kAuto},
    {"octet-counted", Framing::kOctetCounted},
    {"newline", Framing::kNewline},
};
constexpr EnumName<ScopeField> kScopeFields[] = {
    {"host", ScopeField::kHost},         {"app", ScopeField::kApp},
    {"procid", ScopeField::kProcId},     {"msgid", ScopeField::kMsgId},
    {"severity", ScopeField::kSeverity}, {"facility", ScopeField::kFacility},
};
constexpr EnumName<bool> kModes[] = {{"fold", false}, {"annotate", true}};
constexpr EnumName<TimeSource> kTimeSources[] = {
    {"arrival", TimeSource::kArrival},
    {"event", TimeSource::kEvent},
};
constexpr EnumName<OutputType> kOutputTypes[] = {
    {"stdout", OutputType::kStdout}, {"file", OutputType::kFile}, {"tcp", OutputType::kTcp},
    {"syslog", OutputType::kSyslog}, {"http", OutputType::kHttp},
};
constexpr EnumName<FsyncPolicy> kFsyncPolicies[] = {
    {"never", FsyncPolicy::kNever},
    {"interval", FsyncPolicy::kInterval},
    {"always", FsyncPolicy::kAlways},
};
constexpr EnumName<WhenFull> kWhenFull[] = {
    {"block", WhenFull::kBlock},
    {"drop", WhenFull::kDrop},
};
constexpr EnumName<SyslogProtocol> kSyslogProtocols[] = {
    {"tcp", SyslogProtocol::kTcp},
    {"udp", SyslogProtocol::kUdp},
};
constexpr EnumName<SyslogFraming> kSyslogFramings[] = {
    {"octet-counted", SyslogFraming::kOctetCounted},
    {"newline", SyslogFraming::kNewline},
};

constexpr EnumName<HttpFormat> kHttpFormats[] = {
    {"clickhouse", HttpFormat::kClickHouse},
    {"elasticsearch", HttpFormat::kElasticsearch},
    {"loki", HttpFormat::kLoki},
};
constexpr EnumName<HttpCompression> kHttpCompressions[] = {
    {"none", HttpCompression::kNone},
    {"gzip", HttpCompression::kGzip},
};
// Headers the http output writes itself; setting them in `headers` would break requests.
constexpr std::string_view kManagedHeaders[] = {
    "host",
    "content-length",
    "content-type",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "te",
    "upgrade",
    "trailer",
    "keep-alive",
    "expect",
};
// Loki labels the http output takes from each event.
constexpr std::string_view kEventLabels[] = {"kind", "host", "app"};

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

std::string Quote(std::string_view s) {
  // Through the JSON encoder so that control characters in user text stay readable.
  return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Join(const std::string& path, std::string_view key) {
  if (path.empty()) return std::string(key);
  std::string out = path;
  out.push_back('.');
  out.append(key);
  return out;
}

std::string Index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

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

// Builds an ordered_json document like nlohmann's own DOM parser, except that a repeated
// object key is kept as a second entry instead of silently replacing the first, so that
// validation can report it where it occurs.
class DomBuilder : public nlohmann::json_sax<Json> {
 public:
  explicit DomBuilder(std::string_view text) : text_(text) {}

  bool null() override { return Add(Json(nullptr)); }
  bool boolean(bool val) override { return Add(Json(val)); }
  bool number_integer(number_integer_t val) override { return Add(Json(val)); }
  bool number_unsigned(number_unsigned_t val) override { return Add(Json(val)); }
  bool number_float(number_float_t val, const string_t&) override { return Add(Json(val)); }
  bool string(string_t& val) override { return Add(Json(std::move(val))); }
  bool binary(binary_t& val) override { return Add(Json::binary(std::move(val))); }
  bool start_object(std::size_t) override { return Open(Json::object()); }
  bool key(string_t& val) override {
    key_ = std::move(val);
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(Json::array()); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    // Located from the byte offset rather than taken from the message, because only syntax
    // errors carry a location in their text (a number overflow does not).
    const std::string_view consumed = text_.substr(0, std::min(position, text_.size()));
    const std::size_t newline = consumed.rfind('\n');
    const std::size_t line =
        static_cast<std::size_t>(std::count(consumed.begin(), consumed.end(), '\n')) + 1;
    // `position` counts an end of input as a character read, so it may exceed the text.
    const std::size_t column = position - (newline == std::string_view::npos ? 0 : newline + 1);
    // Drop "[json.exception.parse_error.101] " and "parse error at line L, column C: ".
    std::string detail = ex.what();
    if (const std::size_t close = detail.find("] "); close != std::string::npos) {
      detail.erase(0, close + 2);
    }
    if (detail.rfind("parse error", 0) == 0) {
      if (const std::size_t colon = detail.find(": "); colon != std::string::npos) {
        detail.erase(0, colon + 2);
      }
    }
    error_ = "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(column) +
             ": " + detail;
    return false;
  }

  Json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  Json* Insert(Json&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      auto& array = parent.get_ref<Json::array_t&>();
      array.push_back(std::move(value));
      return &array.back();
    }
    // The underlying vector's emplace_back, which (unlike ordered_map::emplace) never merges
    // a repeated key into the existing entry.
    auto& object = parent.get_ref<Json::object_t&>();
    object.Container::emplace_back(std::move(key_), std::move(value));
    return &object.back().second;
  }
  bool Add(Json&& value) {
    Insert(std::move(value));
    return true;
  }
  // Pointers on the stack stay valid: a container only grows while it is the innermost one.
  bool Open(Json&& value) {
    stack_.push_back(Insert(std::move(value)));
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  std::string_view text_;
  Json root_;
  std::vector<Json*> stack_;
  std::string key_;
  std::string error_;
};

// A key of an object in the schema. `not_allowed` non-empty marks a key that exists in the
// schema but does not apply here (e.g. "path" on a udp input), and is the reason reported.
struct Field {
  std::string_view key;
  std::function<void(const Json& value, const std::string& path)> read;
  bool required = false;
  std::string not_allowed = {};
};

class Validator {
 public:
  explicit Validator(std::vector<ConfigError>& errors) : errors_(errors) {}

  void Document(const Json& root, Config& config) {
    Walk(root, "",
         {
             {"log", [&](const Json& v, const std::string& p) { Log(v, p, config.log); }},
             {"inputs", [&](const Json& v, const std::string& p) { Inputs(v, p, config); }, true},
             {"engine", [&](const Json& v, const std::string& p) { Engine(v, p, config.engine); }},
             {"workers",
              [&](const Json& v, const std::string& p) { Workers(v, p, config.workers); }},
             {"outputs", [&](const Json& v, const std::string& p) { Outputs(v, p, config); }, true},
             {"metrics",
              [&](const Json& v, const std::string& p) { Metrics(v, p, config.metrics); }},
             {"state", [&](const Json& v, const std::string& p) { State(v, p, config.state); }},
         });
  }

 private:
  void Error(std::string path, std::string reason) {
    errors_.push_back(ConfigError{std::move(path), std::move(reason)});
  }
  void TypeError(const std::string& path, std::string_view expected, const Json& value) {
    Error(path, "expected " + std::string(expected) + ", got " + value.type_name());
  }

  // Reads an object key by key, in document order: duplicates, unknown keys and keys not
  // allowed here are reported where they occur, missing required keys at the end.
  void Walk(const Json& object, const std::string& path, const std::vector<Field>& fields) {
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

  static std::string UnknownKey(std::string_view key, const std::vector<Field>& fields) {
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

  // ---- Typed readers. Each reports its own error and returns whether `out` was set. ----

  bool String(const Json& v, const std::string& p, std::string& out) {
    if (!v.is_string()) {
      TypeError(p, "a string", v);
      return false;
    }
    out = v.get<std::string>();
    return true;
  }

  bool NonEmptyString(const Json& v, const std::string& p, std::string& out) {
    std::string s;
    if (!String(v, p, s)) return false;
    if (s.empty()) {
      Error(p, "must not be empty");
      return false;
    }
    out = std::move(s);
    return true;
  }

  bool Bool(const Json& v, const std::string& p, bool& out) {
    if (!v.is_boolean()) {
      TypeError(p, "a boolean", v);
      return false;
    }
    out = v.get<bool>();
    return true;
  }

  template <typename T>
  bool Integer(const Json& v, const std::string& p, std::int64_t min, std::int64_t max, T& out) {
    if (v.is_number_float()) {
      Error(p, "expected an integer, got number " + Dump(v));
      return false;
    }
    if (!v.is_number_integer()) {
      TypeError(p, "an integer", v);
      return false;
    }
    bool in_range = false;
    if (v.is_number_unsigned()) {
      // Compared unsigned: values above INT64_MAX must not wrap into range.
      const std::uint64_t u = v.get<std::uint64_t>();
      in_range = u <= static_cast<std::uint64_t>(max) &&
                 (min <= 0 || u >= static_cast<std::uint64_t>(min));
    } else {
      const std::int64_t s = v.get<std::int64_t>();
      in_range = s >= min && s <= max;
    }
    if (!in_range) {
      Error(p, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                   Dump(v));
      return false;
    }
    out = static_cast<T>(v.get<std::int64_t>());
    return true;
  }

  bool Duration(const Json& v, const std::string& p, TimeUs min, TimeUs max, TimeUs& out) {
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

  bool Size(const Json& v, const std::string& p, std::uint64_t min, std::uint64_t max,
            std::uint64_t& out) {
    std::uint64_t bytes = 0;
    if (v.is_number_unsigned()) {
      bytes = v.get<std::uint64_t>();
    } else if (v.is_number_integer()) {
      // Negative (non-negative integers are stored as unsigned): below any minimum.
      Error(p,
            "must be between " + FormatSize(min) + " and " + FormatSize(max) + ", got " + Dump(v));
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
      Error(p,
            "must be between " + FormatSize(min) + " and " + FormatSize(max) + ", got " + Dump(v));
      return false;
    }
    out = bytes;
    return true;
  }

  template <typename E, std::size_t N>
  bool Enum(const Json& v, const std::string& p, const EnumName<E> (&table)[N], E& out) {
    if (!v.is_string()) {
      TypeError(p, "a string", v);
      return false;
    }
    if (auto value = ValueOf(table, v.get_ref<const std::string&>())) {
      out = *value;
      return true;
    }
    std::string reason = "must be one of: ";
    for (std::size_t i = 0; i < N; ++i) {
      if (i > 0) reason.append(", ");
      reason.append(table[i].name);
    }
    Error(p, reason);
    return false;
  }

  bool IpLiteral(const Json& v, const std::string& p, std::string& out) {
    std::string s;
    if (!String(v, p, s)) return false;
    if (!ParseIp(s)) {
      Error(p, "must be an IPv4 or IPv6 address literal (no brackets, no host names), got " +
                   Quote(s));
      return false;
    }
    out = std::move(s);
    return true;
  }

  bool HostOrIp(const Json& v, const std::string& p, std::string& out) {
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
  bool Name(const Json& v, const std::string& p, std::string& out) {
    std::string s;
    if (!String(v, p, s)) return false;
    bool valid = !s.empty();
    for (char c : s) {
      valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-');
    }
    if (!valid) {
      Error(p, "must match [A-Za-z0-9_.-]+, got " + Quote(s));
      return false;
    }
    out = std::move(s);
    return true;
  }

  // Canonical text of an IP literal (so "::0001" and "::1" compare equal), or nullopt.
  static std::optional<std::string> ParseIp(const std::string& s) {
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

  static bool IsHostName(std::string_view s) { return IsValidHostName(s); }

  // The first value of `key` in `object`, or null.
  static const Json* Find(const Json& object, std::string_view key) {
    for (const auto& entry : object.get_ref<const Json::object_t&>()) {
      if (entry.first == key) return &entry.second;
    }
    return nullptr;
  }

  static bool Has(const Json& object, std::string_view key) { return Find(object, key) != nullptr; }

  // Peeks at a key that decides which other keys apply. nullopt when the key is absent or
  // invalid (its own reader reports that); then the dependent keys are all accepted.
  template <typename E, std::size_t N>
  static std::optional<E> Peek(const Json& object, std::string_view key,
                               const EnumName<E> (&table)[N]) {
    const Json* value = Find(object, key);
    if (value == nullptr || !value->is_string()) return std::nullopt;
    return ValueOf(table, value->get_ref<const std::string&>());
  }

  // ---- Sections ----

  void Log(const Json& v, const std::string& path, LogConfig& log) {
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

  void Inputs(const Json& v, const std::string& path, Config& config) {
    if (!v.is_array()) {
      TypeError(path, "an array", v);
      return;
    }
    if (v.empty()) Error(path, "must contain at least one input");
    for (std::size_t i = 0; i < v.size(); ++i) Input(v[i], Index(path, i), config);
  }

  void Input(const Json& v, const std::string& path, Config& config) {
    if (!v.is_object()) {
      TypeError(path, "an object", v);
      return;
    }
    InputConfig in;
    const std::optional<InputType> type = Peek(v, "type", kInputTypes);
    const std::optional<InputFormat> format =
        Has(v, "format") ? Peek(v, "format", kInputFormats) : in.parser.format;
    const bool adopts_socket = Has(v, "socket_name");
    const bool network = type == InputType::kUdp || type == InputType::kTcp;
    // The keys udp and tcp share land in the options of the input's type.
    const bool tcp = type == InputType::kTcp;
    std::string& address = tcp ? in.tcp.address : in.udp.address;
    std::uint16_t& port = tcp ? in.tcp.port : in.udp.port;
    std::string& socket_name = tcp ? in.tcp.socket_name : in.udp.socket_name;
    std::uint64_t& max_message_size = tcp       ? in.tcp.max_message_size
                                      : network ? in.udp.max_message_size
                                                : in.stream.max_message_size;

    auto only_for = [&](std::initializer_list<InputType> types) -> std::string {
      if (!type || std::find(types.begin(), types.end(), *type) != types.end()) return {};
      return "not allowed for type " + std::string(NameOf(kInputTypes, *type));
    };
    std::string bind_rule = only_for({InputType::kUdp, InputType::kTcp});
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
             false, only_for({InputType::kUdp, InputType::kTcp})},
            {"address",
             [&](const Json& j, const std::string& p) { address_ok = IpLiteral(j, p, address); },
             false, bind_rule},
            {"port",
             [&](const Json& j, const std::string& p) { port_ok = Integer(j, p, 0, 65535, port); },
             network && !adopts_socket, bind_rule},
            {"receive_buffer",
             [&](const Json& j, const std::string& p) {
               Size(j, p, 0, kGiB, in.udp.receive_buffer);
             },
             false, only_for({InputType::kUdp})},
            {"framing",
             [&](const Json& j, const std::string& p) { Enum(j, p, kTcpFramings, in.tcp.framing); },
             false, only_for({InputType::kTcp})},
            {"nul_terminator",
             [&](const Json& j, const std::string& p) { Bool(j, p, in.tcp.nul_terminator); }, false,
             only_for({InputType::kTcp})},
            {"max_connections",
             [&](const Json& j, const std::string& p) {
               Integer(j, p, 1, 65535, in.tcp.max_connections);
             },
             false, only_for({InputType::kTcp})},
            {"idle_timeout",
             [&](const Json& j, const std::string& p) {
               Duration(j, p, 0, kMaxTime, in.tcp.idle_timeout_us);
             },
             false, only_for({InputType::kTcp})},
            {"path",
             [&](const Json& j, const std::string& p) {
               path_ok = NonEmptyString(j, p, in.stream.path);
             },
             type == InputType::kFile, only_for({InputType::kFile})},
        });

    const std::string label = name_ok ? "input " + Quote(in.name) : path;
    if (type == InputType::kStdin) {
      if (!stdin_input_.empty()) {
        Error(Join(path, "type"),
              "only one stdin input is allowed; " + stdin_input_ + " reads stdin already");
      } else {
        stdin_input_ = label;
      }
    }
    if (network && port_ok && address_ok && !adopts_socket && port != 0) {
      const std::string bind = std::string(NameOf(kInputTypes, *type)) + " " + *ParseIp(address) +
                               ":" + std::to_string(port);
      auto [it, inserted] = binds_.emplace(bind, label);
      if (!inserted) Error(Join(path, "port"), bind + " is already bound by " + it->second);
    }
    if (network && socket_ok) {
      const std::string socket =
          std::string(NameOf(kInputTypes, *type)) + " socket " + Quote(socket_name);
      auto [it, inserted] = sockets_.emplace(socket, label);
      if (!inserted) {
        Error(Join(path, "socket_name"), socket + " is already adopted by " + it->second);
      }
    }
    if (type == InputType::kFile && path_ok) {
      auto [it, inserted] = input_files_.emplace(in.stream.path, label);
      if (!inserted) {
        Error(Join(path, "path"), "file is already read by " + it->second);
      } else if (auto out = output_files_.find(in.stream.path); out != output_files_.end()) {
        Error(Join(path, "path"),
              "file is written by " + out->second + "; reading it would feed events back in");
      }
    }
    config.inputs.push_back(std::move(in));
  }

  bool UniqueName(const std::string& p, const std::string& name,
                  std::map<std::string, std::string>& names) {
    auto [it, inserted] = names.emplace(name, p.substr(0, p.rfind('.')));
    if (!inserted) {
      Error(p, "duplicate name " + Quote(name) + " (also used by " + it->second + ")");
      return false;
    }
    return true;
  }

  void Engine(const Json& v, const std::string& path, EngineConfig& engine) {
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
        Error(Join(path, "max_hold"), "must be at least window (" + FormatDuration(m.window_us) +
                                          "), got " + max_hold_text);
      } else {
        Error(Join(path, "window"), "must not exceed max_hold (" + FormatDuration(m.max_hold_us) +
                                        "), got " + window_text);
      }
    }
  }

  void Scope(const Json& v, const std::string& path, std::vector<ScopeField>& scope) {
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

  void Words(const Json& v, const std::string& path, std::vector<std::string>& words) {
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

  void Workers(const Json& v, const std::string& path, WorkersConfig& workers) {
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
         });
  }

  void Outputs(const Json& v, const std::string& path, Config& config) {
    if (!v.is_array()) {
      TypeError(path, "an array", v);
      return;
    }
    if (v.empty()) Error(path, "must contain at least one output");
    for (std::size_t i = 0; i < v.size(); ++i) Output(v[i], Index(path, i), config);
  }

  void Output(const Json& v, const std::string& path, Config& config) {
    if (!v.is_object()) {
      TypeError(path, "an object", v);
      return;
    }
    OutputConfig out;
    const std::optional<OutputType> type = Peek(v, "type", kOutputTypes);
    const std::optional<FsyncPolicy> fsync =
        Has(v, "fsync") ? Peek(v, "fsync", kFsyncPolicies) : out.file.fsync;
    const std::optional<SyslogProtocol> protocol =
        Has(v, "protocol") ? Peek(v, "protocol", kSyslogProtocols) : out.syslog.protocol;
    const bool remote = type == OutputType::kTcp || type == OutputType::kSyslog;
    // tcp and syslog share the connection keys; they land in the options of the type.
    TcpSinkOptions& target = type == OutputType::kSyslog ? out.syslog.target : out.tcp;
    const std::optional<WhenFull> when_full =
        Has(v, "when_full") ? Peek(v, "when_full", kWhenFull) : out.sink.when_full;
    const std::string block_timeout_rule =
        when_full && *when_full != WhenFull::kDrop ? "only allowed when when_full is \"drop\"" : "";

    auto only_for = [&](std::initializer_list<OutputType> types) -> std::string {
      if (!type || std::find(types.begin(), types.end(), *type) != types.end()) return {};
      return "not allowed for type " + std::string(NameOf(kOutputTypes, *type));
    };
    std::string fsync_interval_rule = only_for({OutputType::kFile});
    if (fsync_interval_rule.empty() && fsync && *fsync != FsyncPolicy::kInterval) {
      fsync_interval_rule = "only allowed when fsync is \"interval\"";
    }
    // Reconnecting and stream framing only exist for a connection.
    std::string reconnect_rule = only_for({OutputType::kTcp, OutputType::kSyslog});
    if (reconnect_rule.empty() && type == OutputType::kSyslog && protocol &&
        *protocol != SyslogProtocol::kTcp) {
      reconnect_rule = "only allowed when protocol is \"tcp\"";
    }
    std::string framing_rule = only_for({OutputType::kSyslog});
    if (framing_rule.empty() && protocol && *protocol != SyslogProtocol::kTcp) {
      framing_rule = "only allowed when protocol is \"tcp\"";
    }

    const bool http = type == OutputType::kHttp;
    const std::optional<HttpFormat> http_format = Peek(v, "format", kHttpFormats);
    auto only_for_format = [&](HttpFormat f) -> std::string {
      std::string rule = only_for({OutputType::kHttp});
      if (rule.empty() && http_format && *http_format != f) {
        rule = "only allowed when format is " + Quote(NameOf(kHttpFormats, f));
      }
      return rule;
    };
    const std::string http_rule = only_for({OutputType::kHttp});

    bool name_ok = false, path_ok = false, min_ok = false, max_ok = false;
    std::string min_text, max_text;
    bool retry_min_ok = false, retry_max_ok = false, batch_bytes_ok = false;
    std::string retry_min_text, retry_max_text;
    Walk(
        v, path,
        {
            {"name",
             [&](const Json& j, const std::string& p) {
               name_ok = Name(j, p, out.sink.name) && UniqueName(p, out.sink.name, output_names_);
             },
             true},
            {"type",
             [&](const Json& j, const std::string& p) { Enum(j, p, kOutputTypes, out.type); },
             true},
            {"buffer",
             [&](const Json& j, const std::string& p) {
               Size(j, p, 64 * kKiB, 4 * kGiB, out.sink.buffer);
             }},
            {"when_full", [&](const Json& j,
                              const std::string& p) { Enum(j, p, kWhenFull, out.sink.when_full); }},
            {"block_timeout",
             [&](const Json& j, const std::string& p) {
               Duration(j, p, kMillisecond, kHour, out.sink.block_timeout_us);
             },
             false, block_timeout_rule},
            {"path",
             [&](const Json& j, const std::string& p) {
               path_ok = NonEmptyString(j, p, out.file.path);
             },
             type == OutputType::kFile, only_for({OutputType::kFile})},
            {"fsync",
             [&](const Json& j, const std::string& p) {
               Enum(j, p, kFsyncPolicies, out.file.fsync);
             },
             false, only_for({OutputType::kFile})},
            {"fsync_interval",
             [&](const Json& j, const std::string& p) {
               Duration(j, p, kMillisecond, kHour, out.file.fsync_interval_us);
             },
             false, fsync_interval_rule},
            {"address",
             [&](const Json& j, const std::string& p) { HostOrIp(j, p, target.address); }, remote,
             only_for({OutputType::kTcp, OutputType::kSyslog})},
            {"port",
             [&](const Json& j, const std::string& p) { Integer(j, p, 1, 65535, target.port); },
             remote, only_for({OutputType::kTcp, OutputType::kSyslog})},
            {"reconnect_min",
             [&](const Json& j, const std::string& p) {
               min_ok = Duration(j, p, kMillisecond, kHour, target.reconnect_min_us);
               min_text = Dump(j);
             },
             false, reconnect_rule},
            {"reconnect_max",
             [&](const Json& j, const std::string& p) {
               max_ok = Duration(j, p, kMillisecond, kHour, target.reconnect_max_us);
               max_text = Dump(j);
             },
             false, reconnect_rule},
            {"protocol",
             [&](const Json& j, const std::string& p) {
               Enum(j, p, kSyslogProtocols, out.syslog.protocol);
             },
             false, only_for({OutputType::kSyslog})},
            {"framing",
             [&](const Json& j, const std::string& p) {
               Enum(j, p, kSyslogFramings, out.syslog.framing);
             },
             false, framing_rule},
            {"app_name",
             [&](const Json& j, const std::string& p) { AppName(j, p, out.syslog.app_name); },
             false, only_for({OutputType::kSyslog})},
            {"url", [&](const Json& j, const std::string& p) { Url(j, p, out.http.url); }, http,
             http_rule},
            {"format",
             [&](const Json& j, const std::string& p) {
               Enum(j, p, kHttpFormats, out.http.format);
             },
             http, http_rule},
            {"table", [&](const Json& j, const std::string& p) { TableName(j, p, out.http.table); },
             http && http_format == HttpFormat::kClickHouse,
             only_for_format(HttpFormat::kClickHouse)},
            {"index", [&](const Json& j, const std::string& p) { IndexName(j, p, out.http.index); },
             http && http_format == HttpFormat::kElasticsearch,
             only_for_format(HttpFormat::kElasticsearch)},
            {"labels",
             [&](const Json& j, const std::string& p) { LokiLabels(j, p, out.http.labels); }, false,
             only_for_format(HttpFormat::kLoki)},
            {"headers",
             [&](const Json& j, const std::string& p) { Headers(j, p, out.http.headers); }, false,
             http_rule},
            {"compression",
             [&](const Json& j, const std::string& p) {
               Enum(j, p, kHttpCompressions, out.http.compression);
             },
             false, http_rule},
            {"batch_max_events",
             [&](const Json& j, const std::string& p) {
               Integer(j, p, 1, 1'000'000, out.http.batch_max_events);
             },
             false, http_rule},
            {"batch_max_bytes",
             [&](const Json& j, const std::string& p) {
               batch_bytes_ok = Size(j, p, kKiB, 256 * kMiB, out.http.batch_max_bytes);
             },
             false, http_rule},
            {"batch_max_delay",
             [&](const Json& j, const std::string& p) {
               Duration(j, p, 0, kHour, out.http.batch_max_delay_us);
             },
             false, http_rule},
            {"request_timeout",
             [&](const Json& j, const std::string& p) {
               Duration(j, p, kMillisecond, kHour, out.http.request_timeout_us);
             },
             false, http_rule},
            {"retry_initial_backoff",
             [&](const Json& j, const std::string& p) {
               retry_min_ok =
                   Duration(j, p, kMillisecond, kHour, out.http.retry_initial_backoff_us);
               retry_min_text = Dump(j);
             },
             false, http_rule},
            {"retry_max_backoff",
             [&](const Json& j, const std::string& p) {
               retry_max_ok = Duration(j, p, kMillisecond, kHour, out.http.retry_max_backoff_us);
               retry_max_text = Dump(j);
             },
             false, http_rule},
            {"max_retries",
             [&](const Json& j, const std::string& p) {
               Integer(j, p, 0, 1000, out.http.max_retries);
             },
             false, http_rule},
        });

    OrderedDurations(path, "reconnect_min", "reconnect_max", target.reconnect_min_us,
                     target.reconnect_max_us, min_ok, max_ok, min_text, max_text);
    OrderedDurations(path, "retry_initial_backoff", "retry_max_backoff",
                     out.http.retry_initial_backoff_us, out.http.retry_max_backoff_us, retry_min_ok,
                     retry_max_ok, retry_min_text, retry_max_text);
    // The batch being sent stays in the buffer until the store has it.
    if (http && batch_bytes_ok && out.http.batch_max_bytes > out.sink.buffer) {
      Error(Join(path, "batch_max_bytes"), "must not exceed buffer (" +
                                               FormatSize(out.sink.buffer) + "), got " +
                                               FormatSize(out.http.batch_max_bytes));
    }
    const std::string label = name_ok ? "output " + Quote(out.sink.name) : path;
    if (type == OutputType::kStdout) {
      if (!stdout_output_.empty()) {
        Error(Join(path, "type"),
              "only one stdout output is allowed; " + stdout_output_ + " writes stdout already");
      } else {
        stdout_output_ = label;
      }
    }
    if (type == OutputType::kFile && path_ok) {
      auto [it, inserted] = output_files_.emplace(out.file.path, label);
      if (!inserted) {
        Error(Join(path, "path"), "file is already written by " + it->second);
      } else if (auto in = input_files_.find(out.file.path); in != input_files_.end()) {
        Error(Join(path, "path"),
              "file is read by " + in->second + "; writing it would feed events back in");
      }
    }
    config.outputs.push_back(std::move(out));
  }

  // A pair of durations where the first must not exceed the second; reported on the key
  // that was written (the other kept its default), only when both values are valid.
  void OrderedDurations(const std::string& path, std::string_view min_key, std::string_view max_key,
                        TimeUs min_us, TimeUs max_us, bool min_ok, bool max_ok,
                        const std::string& min_text, const std::string& max_text) {
    const bool has_min = !min_text.empty(), has_max = !max_text.empty();
    if ((min_ok || !has_min) && (max_ok || !has_max) && (has_min || has_max) && max_us < min_us) {
      if (has_max) {
        Error(Join(path, max_key), "must be at least " + std::string(min_key) + " (" +
                                       FormatDuration(min_us) + "), got " + max_text);
      } else {
        Error(Join(path, min_key), "must not exceed " + std::string(max_key) + " (" +
                                       FormatDuration(max_us) + "), got " + min_text);
      }
    }
  }

  bool Url(const Json& v, const std::string& p, HttpUrl& out) {
    std::string s;
    if (!String(v, p, s)) return false;
    HttpUrl url;
    std::string error;
    if (!HttpUrl::Parse(s, url, error)) {
      Error(p, "invalid URL " + Quote(s) + ": " + error);
      return false;
    }
    out = std::move(url);
    return true;
  }

  // A ClickHouse table, optionally with its database: name or db.name, each [A-Za-z_][A-Za-z0-9_]*
  // (it goes into the INSERT query unquoted).
  bool TableName(const Json& v, const std::string& p, std::string& out) {
    std::string s;
    if (!String(v, p, s)) return false;
    bool valid = !s.empty() && s.front() != '.' && s.back() != '.' &&
                 std::count(s.begin(), s.end(), '.') <= 1;
    char previous = '.';
    for (char c : s) {
      const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
      const bool digit = c >= '0' && c <= '9';
      valid = valid && (letter || c == '.' || (digit && previous != '.'));
      previous = c;
    }
    if (!valid) {
      Error(p,
            "must be a table name or database.table, each [A-Za-z_][A-Za-z0-9_]*, got " + Quote(s));
      return false;
    }
    out = std::move(s);
    return true;
  }

  // Elasticsearch index naming rules: lowercase, no \ / * ? " < > | space , #, not starting
  // with - _ +, not . or .., at most 255 bytes.
  bool IndexName(const Json& v, const std::string& p, std::string& out) {
    std::string s;
    if (!String(v, p, s)) return false;
    bool valid = !s.empty() && s.size() <= 255 && s != "." && s != ".." &&
                 std::string_view("-_+").find(s.front()) == std::string_view::npos;
    for (char c : s) {
      valid = valid && !(c >= 'A' && c <= 'Z') && static_cast<unsigned char>(c) > 0x20 &&
              std::string_view("\\/*?\"<>|,#:").find(c) == std::string_view::npos;
    }
    if (!valid) {
      Error(p,
            "must be an index name: lowercase, without \\ / * ? \" < > | , # : or spaces, "
            "not starting with - _ +, at most 255 bytes, got " +
                Quote(s));
      return false;
    }
    out = std::move(s);
    return true;
  }

  // Reads an object of string values into name/value pairs (document order), checking each
  // name with `name_rule` (returns a reason, "" when fine) and each value with `value_rule`.
  template <typename NameRule, typename ValueRule>
  void StringMap(const Json& v, const std::string& p, StringPairs& out, NameRule name_rule,
                 ValueRule value_rule) {
    if (!v.is_object()) {
      TypeError(p, "an object", v);
      return;
    }
    StringPairs pairs;
    bool ok = true;
    for (const auto& [key, value] : v.get_ref<const Json::object_t&>()) {
      const std::string key_path = Join(p, key);
      std::string lower = key;
      for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
      bool seen = false;
      for (const auto& pair : pairs) {
        std::string other = pair.first;
        for (char& c : other) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
        seen = seen || other == lower;
      }
      if (seen) {
        Error(key_path, "duplicate key");
        ok = false;
        continue;
      }
      if (std::string reason = name_rule(key); !reason.empty()) {
        Error(key_path, reason);
        ok = false;
      }
      std::string text;
      if (!String(value, key_path, text)) {
        ok = false;
      } else if (std::string reason = value_rule(text); !reason.empty()) {
        Error(key_path, reason);
        ok = false;
      }
      pairs.emplace_back(key, std::move(text));
    }
    if (ok) out = std::move(pairs);
  }

  void LokiLabels(const Json& v, const std::string& p, StringPairs& out) {
    StringMap(
        v, p, out,
        [](const std::string& name) -> std::string {
          bool valid =
              !name.empty() && !(name[0] >= '0' && name[0] <= '9') && !name.starts_with("__");
          for (char c : name) {
            valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                              (c >= '0' && c <= '9') || c == '_');
          }
          if (!valid) return "label name must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __";
          for (std::string_view taken : kEventLabels) {
            if (name == taken) return "label " + Quote(name) + " is taken from each event";
          }
          return "";
        },
        [](const std::string& value) -> std::string {
          return value.empty() ? "label value must not be empty" : "";
        });
  }

  void Headers(const Json& v, const std::string& p, StringPairs& out) {
    StringMap(
        v, p, out,
        [](const std::string& name) -> std::string {
          // RFC 9110 token.
          bool valid = !name.empty();
          for (char c : name) {
            valid = valid &&
                    ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos);
          }
          if (!valid) return "header name must be an HTTP token (letters, digits, !#$%&'*+-.^_`|~)";
          std::string lower = name;
          for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
          for (std::string_view managed : kManagedHeaders) {
            if (lower == managed) return "header " + Quote(name) + " is set by logfold itself";
          }
          return "";
        },
        [](const std::string& value) -> std::string {
          for (char c : value) {
            const auto u = static_cast<unsigned char>(c);
            if ((u < 0x20 && c != '\t') || u == 0x7f) {
              return "header value must not contain control characters (CR, LF, NUL...)";
            }
          }
          return value.size() > 8 * kKiB ? "header value must be at most 8KiB" : "";
        });
  }

  // RFC 5424 APP-NAME: 1*48PRINTUSASCII.
  bool AppName(const Json& v, const std::string& p, std::string& out) {
    std::string s;
    if (!String(v, p, s)) return false;
    bool valid = !s.empty() && s.size() <= 48;
    for (char c : s) valid = valid && c >= 33 && c <= 126;
    if (!valid) {
      Error(p, "must be 1 to 48 printable ASCII characters without spaces, got " + Quote(s));
      return false;
    }
    out = std::move(s);
    return true;
  }

  void State(const Json& v, const std::string& path, StateOptions& state) {
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

  void Metrics(const Json& v, const std::string& path, MetricsConfig& metrics) {
    Walk(v, path,
         {
             {"enabled", [&](const Json& j, const std::string& p) { Bool(j, p, metrics.enabled); }},
             {"address",
              [&](const Json& j, const std::string& p) { IpLiteral(j, p, metrics.address); }},
             {"port",
              [&](const Json& j, const std::string& p) { Integer(j, p, 0, 65535, metrics.port); }},
         });
  }

  std::vector<ConfigError>& errors_;
  // Cross-entry checks, keyed by what must be unique; values say who holds it.
  std::map<std::string, std::string> input_names_, output_names_;
  std::map<std::string, std::string> binds_, sockets_, input_files_, output_files_;
  std::string stdin_input_, stdout_output_;
};

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
      j["receive_buffer"] = FormatSize(in.udp.receive_buffer);
      break;
    case InputType::kTcp:
      j["max_message_size"] = FormatSize(in.tcp.max_message_size);
      bind(in.tcp.socket_name, in.tcp.address, in.tcp.port);
      j["framing"] = NameOf(kTcpFramings, in.tcp.framing);
      j["nul_terminator"] = in.tcp.nul_terminator;
      j["max_connections"] = in.tcp.max_connections;
      j["idle_timeout"] = FormatDuration(in.tcp.idle_timeout_us);
      break;
    case InputType::kStdin:
      j["max_message_size"] = FormatSize(in.stream.max_message_size);
      break;
    case InputType::kFile:
      j["max_message_size"] = FormatSize(in.stream.max_message_size);
      j["path"] = in.stream.path;
      break;
  }
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
      break;
    case OutputType::kHttp: {
      const HttpSinkOptions& h = out.http;
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
  return j;
}

}  // namespace

bool ParseConfig(std::string_view json_text, Config& out, std::vector<ConfigError>& errors) {
  const std::size_t errors_before = errors.size();
  try {
    DomBuilder builder(json_text);
    if (!Json::sax_parse(json_text, &builder, Json::input_format_t::json, /*strict=*/true,
                         /*ignore_comments=*/false)) {
      errors.push_back(ConfigError{"", builder.error()});
      return false;
    }
    Config config;
    Validator(errors).Document(builder.root(), config);
    if (errors.size() != errors_before) return false;
    out = std::move(config);
    return true;
  } catch (const std::exception& e) {
    // Only allocation failure can get here; the caller is promised no exceptions.
    errors.push_back(ConfigError{"", std::string("cannot parse the configuration: ") + e.what()});
    return false;
  }
}

bool LoadConfigFile(const std::string& path, Config& out, std::vector<ConfigError>& errors) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  std::string text;
  int error = file == nullptr ? errno : 0;
  if (file != nullptr) {
    char buffer[65536];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, n);
    // A directory opens fine and fails on read (EISDIR).
    if (std::ferror(file)) error = errno != 0 ? errno : EIO;
    std::fclose(file);
  }
  if (error != 0) {
    errors.push_back(ConfigError{"", "cannot read " + Quote(path) + ": " + std::strerror(error)});
    return false;
  }
  return ParseConfig(text, out, errors);
}

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
  engine["protected_words"] = m.protected_words;
  engine["time"] = NameOf(kTimeSources, config.engine.time);

  root["workers"]["threads"] = config.workers.threads;
  root["workers"]["queue_capacity"] = config.workers.queue_capacity;
  root["workers"]["flush_interval"] = FormatDuration(config.workers.flush_interval_us);

  root["outputs"] = Json::array();
  for (const OutputConfig& out : config.outputs) root["outputs"].push_back(OutputToJson(out));

  root["metrics"]["enabled"] = config.metrics.enabled;
  root["metrics"]["address"] = config.metrics.address;
  root["metrics"]["port"] = config.metrics.port;

  root["state"]["directory"] = config.state.directory;
  root["state"]["checkpoint_interval"] = FormatDuration(config.state.checkpoint_interval_us);
  root["state"]["journal"] = config.state.journal;
  root["state"]["journal_segment_size"] = FormatSize(config.state.journal_segment_bytes);
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string FormatConfigErrors(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const ConfigError& error : errors) {
    if (!error.path.empty()) out.append(error.path).append(": ");
    out.append(error.reason).push_back('\n');
  }
  return out;
}

std::string_view LogLevelName(LogLevel level) { return NameOf(kLogLevels, level); }
std::string_view InputTypeName(InputType type) { return NameOf(kInputTypes, type); }
std::string_view OutputTypeName(OutputType type) { return NameOf(kOutputTypes, type); }
std::string_view HttpFormatName(HttpFormat format) { return NameOf(kHttpFormats, format); }

}  // namespace logfold
