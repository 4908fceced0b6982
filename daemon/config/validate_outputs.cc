// Validator: the outputs section of the configuration and the rules of each output type's
// keys (URLs, table and index names, Loki labels, HTTP headers, syslog APP-NAME).
#include <algorithm>
#include <initializer_list>
#include <regex>
#include <string>
#include <utility>

#include "daemon/config/validator.h"

namespace logfold {
namespace config_internal {
namespace {

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

}  // namespace

void Validator::Outputs(const Json& v, const std::string& path, Config& config) {
  if (!v.is_array()) {
    TypeError(path, "an array", v);
    return;
  }
  if (v.empty()) Error(path, "must contain at least one output");
  for (std::size_t i = 0; i < v.size(); ++i) Output(v[i], Index(path, i), config);
}

void Validator::Output(const Json& v, const std::string& path, Config& config) {
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
  const bool remote =
      type == OutputType::kTcp || type == OutputType::kSyslog || type == OutputType::kRelp;
  // tcp, syslog and relp share the connection keys; they land in the options of the type.
  TcpSinkOptions& target = type == OutputType::kSyslog ? out.syslog.target
                           : type == OutputType::kRelp ? out.relp.target
                                                       : out.tcp;
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
  std::string reconnect_rule = only_for({OutputType::kTcp, OutputType::kSyslog, OutputType::kRelp});
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
  // A connection: tcp, syslog over tcp (the RELP client has no TLS).
  std::string tls_rule = type == OutputType::kRelp ? only_for({OutputType::kTcp}) : reconnect_rule;
  if (http) {
    const Json* url = Find(v, "url");
    const bool https = url != nullptr && url->is_string() &&
                       url->get_ref<const std::string&>().rfind("https://", 0) == 0;
    tls_rule = https ? "" : "only allowed when url is https://";
  }

  bool name_ok = false, path_ok = false, min_ok = false, max_ok = false, disk_ok = false;
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
          {"type", [&](const Json& j, const std::string& p) { Enum(j, p, kOutputTypes, out.type); },
           true},
          {"buffer",
           [&](const Json& j, const std::string& p) {
             Size(j, p, 64 * kKiB, 4 * kGiB, out.sink.buffer);
           }},
          {"when_full",
           [&](const Json& j, const std::string& p) { Enum(j, p, kWhenFull, out.sink.when_full); }},
          {"block_timeout",
           [&](const Json& j, const std::string& p) {
             Duration(j, p, kMillisecond, kHour, out.sink.block_timeout_us);
           },
           false, block_timeout_rule},
          {"disk_buffer",
           [&](const Json& j, const std::string& p) {
             disk_ok = NonEmptyString(j, p, out.sink.disk_buffer.directory);
           }},
          {"disk_buffer_max_size",
           [&](const Json& j, const std::string& p) {
             Size(j, p, kMiB, 1024 * kGiB, out.sink.disk_buffer.max_size);
           },
           false, Has(v, "disk_buffer") ? "" : "only allowed with disk_buffer"},
          {"path",
           [&](const Json& j, const std::string& p) {
             path_ok = NonEmptyString(j, p, out.file.path);
           },
           type == OutputType::kFile, only_for({OutputType::kFile})},
          {"fsync",
           [&](const Json& j, const std::string& p) { Enum(j, p, kFsyncPolicies, out.file.fsync); },
           false, only_for({OutputType::kFile})},
          {"fsync_interval",
           [&](const Json& j, const std::string& p) {
             Duration(j, p, kMillisecond, kHour, out.file.fsync_interval_us);
           },
           false, fsync_interval_rule},
          {"address", [&](const Json& j, const std::string& p) { HostOrIp(j, p, target.address); },
           remote, only_for({OutputType::kTcp, OutputType::kSyslog, OutputType::kRelp})},
          {"port",
           [&](const Json& j, const std::string& p) { Integer(j, p, 1, 65535, target.port); },
           remote, only_for({OutputType::kTcp, OutputType::kSyslog, OutputType::kRelp})},
          {"window",
           [&](const Json& j, const std::string& p) { Integer(j, p, 1, 65535, out.relp.window); },
           false, only_for({OutputType::kRelp})},
          {"ack_timeout",
           [&](const Json& j, const std::string& p) {
             Duration(j, p, kSecond, kHour, out.relp.ack_timeout_us);
           },
           false, only_for({OutputType::kRelp})},
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
           [&](const Json& j, const std::string& p) { AppName(j, p, out.syslog.app_name); }, false,
           only_for({OutputType::kSyslog})},
          {"url", [&](const Json& j, const std::string& p) { Url(j, p, out.http.url); }, http,
           http_rule},
          {"tls",
           [&](const Json& j, const std::string& p) {
             if (http) {
               TlsOutput(j, p, out.http.tls);
             } else {
               target.tls = true;
               TlsOutput(j, p, target.tls_options);
             }
           },
           false, tls_rule},
          {"format",
           [&](const Json& j, const std::string& p) { Enum(j, p, kHttpFormats, out.http.format); },
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
          {"header_files",
           [&](const Json& j, const std::string& p) { HeaderFiles(j, p, out.http.header_files); },
           false, http_rule},
          {"headers", [&](const Json& j, const std::string& p) { Headers(j, p, out.http.headers); },
           false, http_rule},
          {"compression",
           [&](const Json& j, const std::string& p) {
             if (type == OutputType::kKafka) {
               Enum(j, p, kKafkaCompressions, out.kafka.compression);
             } else {
               Enum(j, p, kHttpCompressions, out.http.compression);
             }
           },
           false, only_for({OutputType::kHttp, OutputType::kKafka})},
          {"brokers",
           [&](const Json& j, const std::string& p) { NonEmptyString(j, p, out.kafka.brokers); },
           type == OutputType::kKafka, only_for({OutputType::kKafka})},
          {"topic",
           [&](const Json& j, const std::string& p) { NonEmptyString(j, p, out.kafka.topic); },
           type == OutputType::kKafka, only_for({OutputType::kKafka})},
          {"key",
           [&](const Json& j, const std::string& p) { Enum(j, p, kKafkaKeys, out.kafka.key); },
           false, only_for({OutputType::kKafka})},
          {"properties",
           [&](const Json& j, const std::string& p) {
             KafkaProperties(j, p, out.kafka.properties,
                             {"bootstrap.servers", "metadata.broker.list", "acks",
                              "request.required.acks", "enable.idempotence", "compression.codec",
                              "compression.type", "transactional.id", "dr_cb", "dr_msg_cb"});
           },
           false, only_for({OutputType::kKafka})},
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
             retry_min_ok = Duration(j, p, kMillisecond, kHour, out.http.retry_initial_backoff_us);
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
          {"select",
           [&](const Json& j, const std::string& p) { Selection(j, p, out.sink.select); }},
      });

  OrderedDurations(path, "reconnect_min", "reconnect_max", target.reconnect_min_us,
                   target.reconnect_max_us, min_ok, max_ok, min_text, max_text);
  OrderedDurations(path, "retry_initial_backoff", "retry_max_backoff",
                   out.http.retry_initial_backoff_us, out.http.retry_max_backoff_us, retry_min_ok,
                   retry_max_ok, retry_min_text, retry_max_text);
  // The batch being sent stays in the buffer until the store has it.
  if (http && batch_bytes_ok && out.http.batch_max_bytes > out.sink.buffer) {
    Error(Join(path, "batch_max_bytes"), "must not exceed buffer (" + FormatSize(out.sink.buffer) +
                                             "), got " + FormatSize(out.http.batch_max_bytes));
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
  if (disk_ok) {
    auto [it, inserted] = disk_buffers_.emplace(out.sink.disk_buffer.directory, label);
    if (!inserted) {
      Error(Join(path, "disk_buffer"), "directory is already the disk buffer of " + it->second);
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
void Validator::OrderedDurations(const std::string& path, std::string_view min_key,
                                 std::string_view max_key, TimeUs min_us, TimeUs max_us,
                                 bool min_ok, bool max_ok, const std::string& min_text,
                                 const std::string& max_text) {
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

bool Validator::Url(const Json& v, const std::string& p, HttpUrl& out) {
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
bool Validator::TableName(const Json& v, const std::string& p, std::string& out) {
  std::string s;
  if (!String(v, p, s)) return false;
  bool valid =
      !s.empty() && s.front() != '.' && s.back() != '.' && std::count(s.begin(), s.end(), '.') <= 1;
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
bool Validator::IndexName(const Json& v, const std::string& p, std::string& out) {
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

void Validator::LokiLabels(const Json& v, const std::string& p, StringPairs& out) {
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

std::string Validator::HeaderNameError(const std::string& name) {
  // RFC 9110 token.
  bool valid = !name.empty();
  for (char c : name) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos);
  }
  if (!valid) return "header name must be an HTTP token (letters, digits, !#$%&'*+-.^_`|~)";
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  for (std::string_view managed : kManagedHeaders) {
    if (lower == managed) return "header " + Quote(name) + " is set by logfold itself";
  }
  return "";
}

// Header values read from files (secrets kept out of the config): names as in `headers`,
// values paths.
void Validator::HeaderFiles(const Json& v, const std::string& p, StringPairs& out) {
  StringMap(v, p, out, HeaderNameError, [](const std::string& path) -> std::string {
    return path.empty() ? "must be a file path" : "";
  });
}

void Validator::TlsOutput(const Json& v, const std::string& path, TlsClientConfig& t) {
  Walk(v, path,
       {
           {"ca_file",
            [&](const Json& j, const std::string& p) { NonEmptyString(j, p, t.ca_file); }},
           {"verify", [&](const Json& j, const std::string& p) { Bool(j, p, t.verify); }},
           {"cert_file",
            [&](const Json& j, const std::string& p) { NonEmptyString(j, p, t.cert_file); }},
           {"key_file",
            [&](const Json& j, const std::string& p) { NonEmptyString(j, p, t.key_file); }},
           {"password_file",
            [&](const Json& j, const std::string& p) { NonEmptyString(j, p, t.password_file); }},
           {"min_version",
            [&](const Json& j, const std::string& p) { Enum(j, p, kTlsVersions, t.min_version); }},
       });
  if (t.cert_file.empty() != t.key_file.empty()) {
    Error(Join(path, t.cert_file.empty() ? "cert_file" : "key_file"),
          "required together with " + std::string(t.cert_file.empty() ? "key_file" : "cert_file"));
  }
  if (!t.password_file.empty() && t.key_file.empty()) {
    Error(Join(path, "password_file"), "only allowed with key_file");
  }
}

void Validator::Headers(const Json& v, const std::string& p, StringPairs& out) {
  StringMap(v, p, out, HeaderNameError, [](const std::string& value) -> std::string {
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
bool Validator::AppName(const Json& v, const std::string& p, std::string& out) {
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

void Validator::Selection(const Json& v, const std::string& path, EventSelection& sel) {
  Walk(v, path,
       {
           {"kinds", [&](const Json& j, const std::string& p) { EventKinds(j, p, sel); }},
           {"min_severity",
            [&](const Json& j, const std::string& p) { Severity(j, p, sel.min_severity); }},
           {"hosts", [&](const Json& j, const std::string& p) { Words(j, p, sel.hosts); }},
           {"apps", [&](const Json& j, const std::string& p) { Words(j, p, sel.apps); }},
           {"template_contains",
            [&](const Json& j, const std::string& p) {
              NonEmptyString(j, p, sel.template_contains);
            }},
           {"template_regex",
            [&](const Json& j, const std::string& p) {
              std::string re;
              if (!NonEmptyString(j, p, re)) return;
              try {
                std::regex(re, std::regex::ECMAScript);
                sel.template_regex = std::move(re);
              } catch (const std::regex_error& e) {
                Error(p, "not a valid regular expression: " + std::string(e.what()));
              }
            }},
       });
}

void Validator::EventKinds(const Json& v, const std::string& path, EventSelection& sel) {
  if (!v.is_array()) {
    TypeError(path, "an array", v);
    return;
  }
  if (v.empty()) {
    Error(path, "must name at least one of \"first\", \"summary\"");
    return;
  }
  sel.first = sel.summary = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string kind;
    if (!String(v[i], Index(path, i), kind)) continue;
    if (kind == "first") {
      sel.first = true;
    } else if (kind == "summary") {
      sel.summary = true;
    } else {
      Error(Index(path, i), "expected \"first\" or \"summary\", got " + Quote(kind));
    }
  }
}

void Validator::Severity(const Json& v, const std::string& path, int& out) {
  if (v.is_number_integer()) {
    Integer(v, path, 0, 7, out);
    return;
  }
  std::string name;
  if (!String(v, path, name)) return;
  for (int i = 0; i < 8; ++i) {
    if (name == kSeverityNames[i]) {
      out = i;
      return;
    }
  }
  if (name == "error") {
    out = 3;
  } else if (name == "warn") {
    out = 4;
  } else {
    Error(path,
          "expected a severity (emerg, alert, crit, err, warning, notice, info, debug or 0..7), "
          "got " +
              Quote(name));
  }
}

}  // namespace config_internal
}  // namespace logfold
