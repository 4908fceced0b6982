// Internal to daemon/config: the Validator that maps a JSON document onto Config, key by
// key, reporting every problem with its path. Its readers and the inputs, engine, workers,
// log and metrics sections are in validator.cc, the outputs section in validate_outputs.cc.
#ifndef LOGFOLD_DAEMON_CONFIG_VALIDATOR_H_
#define LOGFOLD_DAEMON_CONFIG_VALIDATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/config/config_names.h"
#include "daemon/config/http_url.h"

namespace logfold {
namespace config_internal {

inline std::string Quote(std::string_view s) {
  // Through the JSON encoder so that control characters in user text stay readable.
  return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

inline std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

inline std::string Join(const std::string& path, std::string_view key) {
  if (path.empty()) return std::string(key);
  std::string out = path;
  out.push_back('.');
  out.append(key);
  return out;
}

inline std::string Index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// A key of an object in the schema. `not_allowed` non-empty marks a key that exists in the
// schema but does not apply here (e.g. "path" on a udp input), and is the reason reported.
struct Field {
  std::string_view key;
  std::function<void(const Json& value, const std::string& path)> read;
  bool required = false;
  std::string not_allowed = {};
};

// Optimal string alignment distance between two names (for "did you mean").
std::size_t EditDistance(std::string_view a, std::string_view b);

class Validator {
 public:
  explicit Validator(std::vector<ConfigError>& errors) : errors_(errors) {}

  void Document(const Json& root, Config& config);

 private:
  void Error(std::string path, std::string reason) {
    errors_.push_back(ConfigError{std::move(path), std::move(reason)});
  }
  void TypeError(const std::string& path, std::string_view expected, const Json& value) {
    Error(path, "expected " + std::string(expected) + ", got " + value.type_name());
  }

  // Reads an object key by key, in document order: duplicates, unknown keys and keys not
  // allowed here are reported where they occur, missing required keys at the end.
  void Walk(const Json& object, const std::string& path, const std::vector<Field>& fields);

  static std::string UnknownKey(std::string_view key, const std::vector<Field>& fields);

  // ---- Typed readers. Each reports its own error and returns whether `out` was set. ----

  bool String(const Json& v, const std::string& p, std::string& out);

  bool NonEmptyString(const Json& v, const std::string& p, std::string& out);

  bool Bool(const Json& v, const std::string& p, bool& out);

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

  bool Duration(const Json& v, const std::string& p, TimeUs min, TimeUs max, TimeUs& out);

  bool Size(const Json& v, const std::string& p, std::uint64_t min, std::uint64_t max,
            std::uint64_t& out);

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
    const std::string& given = v.get_ref<const std::string&>();
    std::string reason = "must be one of: ";
    for (std::size_t i = 0; i < N; ++i) {
      if (i > 0) reason.append(", ");
      reason.append(table[i].name);
    }
    if constexpr (std::is_same_v<E, OutputType>) {
      if (ValueOf(kHttpFormats, given)) {
        Error(p, reason + "; \"" + given +
                     "\" is a format of the http output: {\"type\": \"http\", \"format\": \"" +
                     given + "\", \"url\": ...}");
        return false;
      }
      if (given == "tls") {  // TLS is a block of the stream outputs, not a type
        Error(p, reason +
                     "; for TLS give a tcp or syslog output a \"tls\" block (or an http "
                     "output an https:// url)");
        return false;
      }
    }
    std::string_view best;
    std::size_t best_distance = 3;  // suggest only names within two edits
    for (std::size_t i = 0; i < N; ++i) {
      const std::size_t d = EditDistance(given, table[i].name);
      if (d < best_distance) {
        best_distance = d;
        best = table[i].name;
      }
    }
    if (!best.empty()) reason += "; did you mean \"" + std::string(best) + "\"?";
    Error(p, reason);
    return false;
  }

  bool IpLiteral(const Json& v, const std::string& p, std::string& out);

  bool HostOrIp(const Json& v, const std::string& p, std::string& out);

  // Names label metrics and log lines, so they are kept to a safe character set.
  bool Name(const Json& v, const std::string& p, std::string& out);

  // Canonical text of an IP literal (so "::0001" and "::1" compare equal), or nullopt.
  static std::optional<std::string> ParseIp(const std::string& s);

  static bool IsHostName(std::string_view s) { return IsValidHostName(s); }

  // The first value of `key` in `object`, or null.
  static const Json* Find(const Json& object, std::string_view key);

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

  void Log(const Json& v, const std::string& path, LogConfig& log);

  void Inputs(const Json& v, const std::string& path, Config& config);

  void Input(const Json& v, const std::string& path, Config& config);

  bool UniqueName(const std::string& p, const std::string& name,
                  std::map<std::string, std::string>& names);

  void Engine(const Json& v, const std::string& path, EngineConfig& engine);

  void Scope(const Json& v, const std::string& path, std::vector<ScopeField>& scope);

  // Permissions as an octal string, e.g. "0660" or "666".
  bool FileMode(const Json& v, const std::string& p, std::uint32_t& out);

  void Words(const Json& v, const std::string& path, std::vector<std::string>& words);
  // librdkafka properties (validate_kafka.cc): each name and value is tried on a librdkafka
  // configuration object of `kind` ("consumer" or "producer"), so a misspelt name or a bad
  // value is refused at its own path; names in `reserved` are set by logfold and refused.
  void KafkaProperties(const Json& v, const std::string& path,
                       std::map<std::string, std::string>& out,
                       std::initializer_list<std::string_view> reserved);

  void Workers(const Json& v, const std::string& path, WorkersConfig& workers);

  void Outputs(const Json& v, const std::string& path, Config& config);
  void ExactlyOnceOutputs(const Json& root, const Config& config);
  void KafkaInputsWithState(const Json& root);

  void Output(const Json& v, const std::string& path, Config& config);
  // An output's `select`: which events it receives.
  void Selection(const Json& v, const std::string& path, EventSelection& sel);
  void EventKinds(const Json& v, const std::string& path, EventSelection& sel);
  // A syslog severity by name (RFC 5424 keywords, as rsyslog spells them) or number 0..7.
  void Severity(const Json& v, const std::string& path, int& out);

  // A pair of durations where the first must not exceed the second; reported on the key
  // that was written (the other kept its default), only when both values are valid.
  void OrderedDurations(const std::string& path, std::string_view min_key, std::string_view max_key,
                        TimeUs min_us, TimeUs max_us, bool min_ok, bool max_ok,
                        const std::string& min_text, const std::string& max_text);

  bool Url(const Json& v, const std::string& p, HttpUrl& out);

  // A ClickHouse table, optionally with its database: name or db.name, each [A-Za-z_][A-Za-z0-9_]*
  // (it goes into the INSERT query unquoted).
  bool TableName(const Json& v, const std::string& p, std::string& out);

  // Elasticsearch index naming rules: lowercase, no \ / * ? " < > | space , #, not starting
  // with - _ +, not . or .., at most 255 bytes.
  bool IndexName(const Json& v, const std::string& p, std::string& out);

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

  void LokiLabels(const Json& v, const std::string& p, StringPairs& out);

  void Headers(const Json& v, const std::string& p, StringPairs& out);

  // Header values read from files (secrets kept out of the config): names as in `headers`,
  // values paths.
  void HeaderFiles(const Json& v, const std::string& p, StringPairs& out);

  // An HTTP header name (RFC 9110 token) that logfold does not set itself; "" when fine.
  static std::string HeaderNameError(const std::string& name);

  // The "tls" block of an output.
  void TlsOutput(const Json& v, const std::string& path, TlsClientConfig& t);

  // The "tls" block of a tls input.
  void TlsInput(const Json& v, const std::string& path, TlsServerConfig& t);

  // Returns whether any entry is a fingerprint.
  bool PermittedPeers(const Json& v, const std::string& path, std::vector<std::string>& out);

  static bool IsFingerprint(std::string_view e) {
    return e.size() >= 7 && (e.substr(0, 7) == "sha256:" || e.substr(0, 7) == "SHA256:");
  }

  // The same rules as runtime/peer_match.h's PeerPatternError, which the TLS input applies;
  // the config part may not include runtime, so the syntax is checked here too.
  static std::string PeerEntryError(std::string_view e);

  // allowed_senders: IP addresses or CIDR blocks.
  void Cidrs(const Json& v, const std::string& path, std::vector<std::string>& out);

  // RFC 5424 APP-NAME: 1*48PRINTUSASCII.
  bool AppName(const Json& v, const std::string& p, std::string& out);

  void Metrics(const Json& v, const std::string& path, MetricsConfig& metrics);
  void State(const Json& v, const std::string& path, StateOptions& state);

  // limits.memory: "auto", 0 (no budget) or a size of at least 16MiB.
  void Limits(const Json& v, const std::string& path, LimitsConfig& limits);

  std::vector<ConfigError>& errors_;
  // Cross-entry checks, keyed by what must be unique; values say who holds it.
  std::map<std::string, std::string> input_names_, output_names_;
  std::map<std::string, std::string> binds_, sockets_, input_files_, output_files_, disk_buffers_;
  std::string stdin_input_, stdout_output_;
};

}  // namespace config_internal
}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_VALIDATOR_H_
