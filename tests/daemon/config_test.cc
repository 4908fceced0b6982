// Tests of the `logfold serve` configuration: the shipped files, the exact error texts of
// every kind of validation failure, the canonical round trip, and duration/size units.
#include "daemon/config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "daemon/config/units.h"

namespace logfold {

// Lets gtest print errors readably when an expectation fails (found by ADL, so not in the
// anonymous namespace).
void PrintTo(const ConfigError& e, std::ostream* os) { *os << e.path << ": " << e.reason; }

namespace {

using ::testing::ElementsAre;
using Json = nlohmann::ordered_json;

ConfigError E(std::string path, std::string reason) {
  return ConfigError{std::move(path), std::move(reason)};
}

// A small valid document with every section present (in schema order, so that keys patched
// in by a test keep that order); tests patch it to provoke errors.
Json Minimal() {
  return Json::parse(R"({
    "log": {},
    "inputs": [{"name": "in", "type": "udp", "port": 5514}],
    "engine": {},
    "workers": {},
    "outputs": [{"name": "out", "type": "stdout"}],
    "metrics": {}
  })");
}

std::vector<ConfigError> Errors(std::string_view text) {
  Config config;
  std::vector<ConfigError> errors;
  EXPECT_FALSE(ParseConfig(text, config, errors)) << text;
  return errors;
}
std::vector<ConfigError> DocErrors(const Json& doc) { return Errors(doc.dump()); }

Config Parsed(std::string_view text) {
  Config config;
  std::vector<ConfigError> errors;
  EXPECT_TRUE(ParseConfig(text, config, errors)) << FormatConfigErrors(errors);
  EXPECT_TRUE(errors.empty());
  return config;
}
Config DocParsed(const Json& doc) { return Parsed(doc.dump()); }

// ---- Shipped configuration files ----

TEST(ConfigTest, EmbeddedDefaultGivesTheDocumentedValues) {
  const Config config = Parsed(DefaultConfigJson());
  ASSERT_EQ(config.inputs.size(), 2u);
  EXPECT_EQ(config.inputs[0].name, "udp-local");
  EXPECT_EQ(config.inputs[0].type, InputType::kUdp);
  EXPECT_EQ(config.inputs[1].name, "tcp-local");
  EXPECT_EQ(config.inputs[1].type, InputType::kTcp);
  for (const InputConfig& in : config.inputs) {
    EXPECT_EQ(in.type == InputType::kTcp ? in.tcp.address : in.udp.address, "127.0.0.1");
    EXPECT_EQ(in.type == InputType::kTcp ? in.tcp.port : in.udp.port, 5514);
    EXPECT_EQ(in.parser.format, InputFormat::kSyslog);
  }
  ASSERT_EQ(config.outputs.size(), 1u);
  EXPECT_EQ(config.outputs[0].type, OutputType::kStdout);
  EXPECT_TRUE(config.metrics.enabled);
  EXPECT_EQ(config.metrics.address, "127.0.0.1");
  EXPECT_EQ(config.metrics.port, 9514);
  // Everything else is the built-in default.
  EXPECT_EQ(config.engine, EngineConfig{});
  EXPECT_EQ(config.workers, WorkersConfig{});
  EXPECT_EQ(config.log, LogConfig{});
}

TEST(ConfigTest, EmbeddedDefaultRoundTripsThroughCanonicalJson) {
  const Config config = Parsed(DefaultConfigJson());
  const std::string canonical = ConfigToJson(config);
  const Config reparsed = Parsed(canonical);
  EXPECT_EQ(reparsed, config);
  EXPECT_EQ(ConfigToJson(reparsed), canonical);
}

TEST(ConfigTest, CanonicalJsonFillsInDefaultsInHumanUnits) {
  const Json canonical = Json::parse(ConfigToJson(DocParsed(Minimal())));
  EXPECT_EQ(canonical["log"]["level"], "info");
  EXPECT_EQ(canonical["log"]["stats_interval"], "1m");
  EXPECT_EQ(canonical["inputs"][0], Json::parse(R"({"name": "in", "type": "udp", "format": "syslog",
                            "max_message_size": "64KiB", "address": "127.0.0.1",
                            "port": 5514, "allowed_senders": [], "receive_buffer": "4MiB"})"));
  EXPECT_EQ(canonical["engine"]["window"], "10s");
  EXPECT_EQ(canonical["engine"]["max_hold"], "1m");
  EXPECT_EQ(canonical["engine"]["scope"], Json::parse(R"(["host", "app"])"));
  EXPECT_EQ(canonical["engine"]["mode"], "fold");
  EXPECT_EQ(canonical["engine"]["time"], "arrival");
  EXPECT_EQ(canonical["engine"]["protected_words"].size(),
            MergerOptions::DefaultProtectedWords().size());
  EXPECT_EQ(canonical["workers"]["flush_interval"], "100ms");
  EXPECT_EQ(
      canonical["outputs"][0],
      Json::parse(R"({"name": "out", "type": "stdout", "buffer": "64MiB", "when_full": "block"})"));
  EXPECT_EQ(canonical["metrics"]["port"], 9514);
}

TEST(ConfigTest, ExampleFileLoadsAndUsesEveryInputAndOutputType) {
  Config config;
  std::vector<ConfigError> errors;
  ASSERT_TRUE(LoadConfigFile(LOGFOLD_SOURCE_DIR "/config/example.json", config, errors))
      << FormatConfigErrors(errors);
  std::vector<InputType> input_types;
  for (const InputConfig& in : config.inputs) input_types.push_back(in.type);
  EXPECT_THAT(input_types,
              ::testing::IsSupersetOf({InputType::kUdp, InputType::kTcp, InputType::kStdin,
                                       InputType::kFile, InputType::kUnix, InputType::kJournald}));
  std::vector<OutputType> output_types;
  for (const OutputConfig& out : config.outputs) output_types.push_back(out.type);
  EXPECT_THAT(output_types,
              ::testing::IsSupersetOf({OutputType::kStdout, OutputType::kFile, OutputType::kTcp,
                                       OutputType::kSyslog, OutputType::kHttp}));
  EXPECT_EQ(config.engine.merger.window_us, 30 * kSecond);
  EXPECT_EQ(config.engine.time, TimeSource::kEvent);
  EXPECT_EQ(Parsed(ConfigToJson(config)), config);
}

// ---- Values reach the struct ----

TEST(ConfigTest, EveryKeyIsMappedOntoTheStruct) {
  const Config c = Parsed(R"({
    "log": {"level": "debug", "stats_interval": "0"},
    "inputs": [
      {"name": "u", "type": "udp", "format": "raw", "address": "::", "port": 0,
       "max_message_size": "2KiB", "receive_buffer": 0},
      {"name": "t", "type": "tcp", "format": "json", "json_message_field": "msg",
       "address": "10.0.0.1", "port": 601, "framing": "newline", "nul_terminator": true,
       "max_connections": 10, "idle_timeout": "90s"},
      {"name": "a", "type": "tcp", "socket_name": "syslog", "framing": "octet-counted"},
      {"name": "f", "type": "file", "path": "/tmp/in.log"},
      {"name": "s", "type": "stdin"}
    ],
    "engine": {"max_distance": 0, "window": "1.5s", "max_hold": "2m", "max_groups": 7,
               "scope": [], "max_summary_hosts": 0, "mode": "annotate", "confirm": false,
               "variable_after_values": 0, "protected_words": ["ERROR"], "time": "event"},
    "workers": {"threads": 3, "queue_capacity": 1024, "flush_interval": "1ms"},
    "outputs": [
      {"name": "o1", "type": "file", "path": "/tmp/out", "fsync": "interval",
       "fsync_interval": "2s", "buffer": 65536},
      {"name": "o2", "type": "tcp", "address": "collector.example.org", "port": 9000,
       "reconnect_min": "1s", "reconnect_max": "1s"},
      {"name": "o3", "type": "syslog", "address": "::1", "port": 514, "protocol": "udp",
       "app_name": "fold"}
    ],
    "metrics": {"enabled": false, "address": "0.0.0.0", "port": 0}
  })");
  EXPECT_EQ(c.log.level, LogLevel::kDebug);
  EXPECT_EQ(c.log.stats_interval_us, 0);
  EXPECT_EQ(c.inputs[0].parser.format, InputFormat::kRaw);
  EXPECT_EQ(c.inputs[0].udp.max_message_size, 2048u);
  EXPECT_EQ(c.inputs[0].udp.receive_buffer, 0u);
  EXPECT_EQ(c.inputs[1].parser.format, InputFormat::kJson);
  EXPECT_EQ(c.inputs[1].parser.json_message_field, "msg");
  EXPECT_EQ(c.inputs[1].tcp.framing, Framing::kNewline);
  EXPECT_TRUE(c.inputs[1].tcp.nul_terminator);
  EXPECT_EQ(c.inputs[1].tcp.max_connections, 10u);
  EXPECT_EQ(c.inputs[1].tcp.idle_timeout_us, 90 * kSecond);
  EXPECT_EQ(c.inputs[2].tcp.socket_name, "syslog");
  EXPECT_EQ(c.inputs[2].tcp.framing, Framing::kOctetCounted);
  EXPECT_EQ(c.inputs[3].file.path, "/tmp/in.log");
  EXPECT_EQ(c.inputs[4].type, InputType::kStdin);
  const MergerOptions& m = c.engine.merger;
  EXPECT_EQ(m.max_distance, 0);
  EXPECT_EQ(m.window_us, 1'500'000);
  EXPECT_EQ(m.max_hold_us, 2 * kMinute);
  EXPECT_EQ(m.max_groups, 7u);
  EXPECT_TRUE(m.scope.empty());
  EXPECT_EQ(m.max_summary_hosts, 0u);
  EXPECT_TRUE(m.annotate);
  EXPECT_FALSE(m.confirm);
  EXPECT_EQ(m.variable_after_values, 0u);
  EXPECT_THAT(m.protected_words, ElementsAre("ERROR"));
  EXPECT_EQ(c.engine.time, TimeSource::kEvent);
  EXPECT_EQ(c.workers.threads, 3u);
  EXPECT_EQ(c.workers.queue_capacity, 1024u);
  EXPECT_EQ(c.workers.flush_interval_us, kMillisecond);
  EXPECT_EQ(c.outputs[0].file.fsync, FsyncPolicy::kInterval);
  EXPECT_EQ(c.outputs[0].file.fsync_interval_us, 2 * kSecond);
  EXPECT_EQ(c.outputs[0].sink.buffer, 64 * kKiB);
  EXPECT_EQ(c.outputs[1].tcp.address, "collector.example.org");
  EXPECT_EQ(c.outputs[1].tcp.reconnect_min_us, kSecond);
  EXPECT_EQ(c.outputs[2].syslog.protocol, SyslogProtocol::kUdp);
  EXPECT_EQ(c.outputs[2].syslog.app_name, "fold");
  EXPECT_FALSE(c.metrics.enabled);
  EXPECT_EQ(c.metrics.port, 0);
  EXPECT_EQ(Parsed(ConfigToJson(c)), c);
}

TEST(ConfigTest, FailedParseLeavesOutputUntouched) {
  Config config = Parsed(DefaultConfigJson());
  const Config before = config;
  std::vector<ConfigError> errors;
  EXPECT_FALSE(ParseConfig(R"({"inputs": []})", config, errors));
  EXPECT_EQ(config, before);
}

// ---- Exact error texts ----

TEST(ConfigErrorTest, SyntaxErrorHasLineAndColumn) {
  EXPECT_THAT(Errors("{\n  \"inputs\": [,\n}"),
              ElementsAre(E("",
                            "invalid JSON at line 2, column 14: syntax error while parsing "
                            "value - unexpected ','; expected '[', '{', or a literal")));
  EXPECT_THAT(Errors(""),
              ElementsAre(E("",
                            "invalid JSON at line 1, column 1: syntax error while parsing "
                            "value - unexpected end of input; expected '[', '{', or a "
                            "literal")));
  EXPECT_THAT(Errors("{\"engine\": {\"max_distance\": 1e400}}"),
              ElementsAre(E("",
                            "invalid JSON at line 1, column 33: number overflow parsing "
                            "'1e400'")));
  EXPECT_THAT(Errors("{} {}"),
              ElementsAre(E("",
                            "invalid JSON at line 1, column 4: syntax error while parsing "
                            "value - unexpected '{'; expected end of input")));
}

// Issue #21: a user's typo and a format used as an output type got only the list of names.
TEST(ConfigErrorTest, EnumTyposGetASuggestion) {
  Json doc = Minimal();
  doc["inputs"][0]["type"] = "udpp";
  doc["inputs"][0]["format"] = "Syslog";
  doc["outputs"][0]["type"] = "elasticsearch";
  EXPECT_THAT(
      DocErrors(doc),
      ElementsAre(
          E("inputs[0].type",
            "must be one of: udp, tcp, stdin, file, unix, journald, relp, kafka, tls; did you mean "
            "\"udp\"?"),
          E("inputs[0].format", "must be one of: syslog, raw, json; did you mean \"syslog\"?"),
          E("outputs[0].type",
            "must be one of: stdout, file, tcp, syslog, http, relp, kafka; \"elasticsearch\" is a "
            "format "
            "of "
            "the http output: {\"type\": \"http\", \"format\": \"elasticsearch\", \"url\": "
            "...}")));
}

TEST(ConfigErrorTest, CommentsAreNamedAsTheCause) {
  for (const char* text : {"{\n  // inputs\n  \"inputs\": []\n}", "{\n  /* x */ \"inputs\": []}",
                           "{\n  # inputs\n}"}) {
    const std::vector<ConfigError> errors = Errors(text);
    ASSERT_EQ(errors.size(), 1u) << text;
    EXPECT_THAT(errors[0].reason, ::testing::StartsWith("invalid JSON at line 2, column 3: "));
    EXPECT_THAT(errors[0].reason,
                ::testing::EndsWith("(JSON has no comments: remove the comment; config/README.md "
                                    "documents every key)"))
        << text;
  }
}

TEST(ConfigErrorTest, DocumentMustBeAnObject) {
  EXPECT_THAT(Errors("[1]"), ElementsAre(E("", "expected an object, got array")));
}

TEST(ConfigErrorTest, UnknownKeysWithAndWithoutSuggestion) {
  Json doc = Minimal();
  doc["engine"]["widow"] = "10s";
  doc["engine"]["widnow"] = "10s";
  doc["engine"]["frobnicate"] = 1;
  doc["ouputs"] = Json::array();
  EXPECT_THAT(DocErrors(doc),
              ElementsAre(E("engine.widow", "unknown key; did you mean \"window\"?"),
                          E("engine.widnow", "unknown key; did you mean \"window\"?"),
                          E("engine.frobnicate", "unknown key"),
                          E("ouputs", "unknown key; did you mean \"outputs\"?")));
}

TEST(ConfigTest, StateSectionMapsOntoStateOptions) {
  EXPECT_EQ(DocParsed(Minimal()).state, StateOptions{});  // no state unless asked for
  Json doc = Minimal();
  doc["state"] = {{"directory", "/var/lib/logfold"},
                  {"checkpoint_interval", "250ms"},
                  {"journal", true},
                  {"journal_segment_size", "8MiB"}};
  const StateOptions s = DocParsed(doc).state;
  EXPECT_EQ(s.directory, "/var/lib/logfold");
  EXPECT_EQ(s.checkpoint_interval_us, 250'000);
  EXPECT_TRUE(s.journal);
  EXPECT_EQ(s.journal_segment_bytes, 8u << 20);
}

TEST(ConfigErrorTest, StateValuesOutOfRangeAndJournalWithoutDirectory) {
  Json doc = Minimal();
  doc["state"] = {{"checkpoint_interval", "1ms"}, {"journal", true}, {"journal_segment_size", 10}};
  EXPECT_THAT(
      DocErrors(doc),
      ElementsAre(E("state.checkpoint_interval", "must be between 10ms and 1h, got \"1ms\""),
                  E("state.journal_segment_size", "must be between 1MiB and 1GiB, got 10"),
                  E("state.journal", "needs state.directory (the journal is kept there)")));
}

TEST(ConfigErrorTest, SuggestionsOnlyNameKeysAllowedForTheType) {
  Json doc = Minimal();
  doc["inputs"][0]["pth"] = "/x";  // "path" exists, but not for udp
  doc["inputs"][0]["prot"] = 1;
  EXPECT_THAT(DocErrors(doc),
              ElementsAre(E("inputs[0].pth", "unknown key"),
                          E("inputs[0].prot", "unknown key; did you mean \"port\"?")));
}

TEST(ConfigErrorTest, DuplicateKeyIsReportedWhereItRepeats) {
  EXPECT_THAT(Errors(R"({"inputs": [{"name": "a", "type": "udp", "port": 1, "port": 2}],
                         "outputs": [{"name": "o", "type": "stdout"}]})"),
              ElementsAre(E("inputs[0].port", "duplicate key")));
}

TEST(ConfigErrorTest, WrongTypes) {
  Json doc = Minimal();
  doc["log"] = Json::array();
  doc["inputs"][0]["name"] = 5;
  doc["inputs"][0]["port"] = "514";
  doc["engine"]["confirm"] = "yes";
  doc["engine"]["window"] = 10;
  doc["engine"]["max_groups"] = 1.5;
  doc["engine"]["scope"] = "host";
  doc["engine"]["protected_words"] = Json::parse(R"(["ok", 3, ""])");
  doc["workers"]["threads"] = nullptr;
  doc["outputs"][0]["buffer"] = true;
  EXPECT_THAT(
      DocErrors(doc),
      ElementsAre(E("log", "expected an object, got array"),
                  E("inputs[0].name", "expected a string, got number"),
                  E("inputs[0].port", "expected an integer, got string"),
                  E("engine.confirm", "expected a boolean, got string"),
                  E("engine.window", "expected a duration string such as \"10s\", got number"),
                  E("engine.max_groups", "expected an integer, got number 1.5"),
                  E("engine.scope", "expected an array, got string"),
                  E("engine.protected_words[1]", "expected a string, got number"),
                  E("engine.protected_words[2]", "must not be empty"),
                  E("workers.threads", "expected an integer, got null"),
                  E("outputs[0].buffer",
                    "expected a size (a string such as \"64KiB\" or an integer number of "
                    "bytes), got boolean")));
}

TEST(ConfigErrorTest, SectionShapes) {
  EXPECT_THAT(Errors(R"({"inputs": {}, "outputs": [3]})"),
              ElementsAre(E("inputs", "expected an array, got object"),
                          E("outputs[0]", "expected an object, got number")));
  EXPECT_THAT(Errors(R"({"inputs": [], "outputs": []})"),
              ElementsAre(E("inputs", "must contain at least one input"),
                          E("outputs", "must contain at least one output")));
}

TEST(ConfigErrorTest, OutOfRangeValues) {
  Json doc = Minimal();
  doc["inputs"][0]["port"] = 70000;
  doc["inputs"][0]["max_message_size"] = "32MiB";
  doc["inputs"][0]["receive_buffer"] = -1;
  doc["engine"]["max_distance"] = 32;
  doc["engine"]["window"] = "0s";
  doc["engine"]["max_groups"] = 18446744073709551615u;
  doc["engine"]["max_summary_hosts"] = -3;
  doc["engine"]["variable_after_values"] = 2;
  doc["workers"]["flush_interval"] = "20s";
  doc["workers"]["queue_capacity"] = 1000;
  doc["outputs"][0]["buffer"] = "8GiB";
  doc["metrics"]["port"] = 65536;
  EXPECT_THAT(
      DocErrors(doc),
      ElementsAre(
          E("inputs[0].port", "must be between 0 and 65535, got 70000"),
          E("inputs[0].max_message_size", "must be between 1KiB and 16MiB, got \"32MiB\""),
          E("inputs[0].receive_buffer", "must be between 0B and 1GiB, got -1"),
          E("engine.max_distance", "must be between 0 and 31, got 32"),
          E("engine.window", "must be greater than 0, got \"0s\""),
          E("engine.max_groups", "must be between 1 and 100000000, got 18446744073709551615"),
          E("engine.max_summary_hosts", "must be between 0 and 1024, got -3"),
          E("engine.variable_after_values", "must be 0 (off) or between 3 and 8, got 2"),
          E("workers.flush_interval", "must be between 1ms and 10s, got \"20s\""),
          E("workers.queue_capacity", "must be between 1024 and 16777216, got 1000"),
          E("outputs[0].buffer", "must be between 64KiB and 4GiB, got \"8GiB\""),
          E("metrics.port", "must be between 0 and 65535, got 65536")));
}

TEST(ConfigErrorTest, BadUnitTextIsReportedWithTheKey) {
  Json doc = Minimal();
  doc["log"]["stats_interval"] = "5 parsecs";
  doc["inputs"][0]["max_message_size"] = "1.5B";
  EXPECT_THAT(DocErrors(doc),
              ElementsAre(E("log.stats_interval",
                            "invalid duration \"5 parsecs\": unknown unit \"parsecs\" (us, ms, "
                            "s, m, h or d)"),
                          E("inputs[0].max_message_size",
                            "invalid size \"1.5B\": not a whole number of bytes")));
}

TEST(ConfigErrorTest, MaxHoldMustNotBeShorterThanWindow) {
  Json doc = Minimal();
  doc["engine"]["window"] = "30s";
  doc["engine"]["max_hold"] = "20s";
  EXPECT_THAT(DocErrors(doc),
              ElementsAre(E("engine.max_hold", "must be at least window (30s), got \"20s\"")));
  // Only window written: the default max_hold (60s) is what it conflicts with.
  doc["engine"].erase("max_hold");
  doc["engine"]["window"] = "2m";
  EXPECT_THAT(DocErrors(doc),
              ElementsAre(E("engine.window", "must not exceed max_hold (1m), got \"2m\"")));
}

TEST(ConfigErrorTest, ReconnectMaxMustNotBeBelowReconnectMin) {
  Json doc = Minimal();
  doc["outputs"].push_back(Json::parse(R"({"name": "c", "type": "tcp", "address": "h",
      "port": 1, "reconnect_min": "2s", "reconnect_max": "1s"})"));
  EXPECT_THAT(DocErrors(doc), ElementsAre(E("outputs[1].reconnect_max",
                                            "must be at least reconnect_min (2s), got \"1s\"")));
}

TEST(ConfigTest, HttpOutputKeysAreMappedOntoTheStruct) {
  const Config c = Parsed(R"({
    "inputs": [{"name": "u", "type": "udp", "port": 1}],
    "outputs": [
      {"name": "ch", "type": "http", "url": "http://[::1]:8123/?database=logs",
       "format": "clickhouse", "table": "logs.events",
       "headers": {"Authorization": "Basic dTpw", "X-Tenant": "a b"}, "compression": "gzip",
       "header_files": {"X-ClickHouse-Key": "/run/credentials/logfold.service/ch-key"},
       "batch_max_events": 100, "batch_max_bytes": "64KiB", "batch_max_delay": "0",
       "request_timeout": "5s", "retry_initial_backoff": "1s", "retry_max_backoff": "1m",
       "max_retries": 0, "buffer": "1MiB", "when_full": "drop"},
      {"name": "es", "type": "http", "url": "http://es.example:9200", "format": "elasticsearch",
       "index": "logfold-events"},
      {"name": "loki", "type": "http", "url": "http://loki:3100", "format": "loki",
       "labels": {"job": "logfold", "env": "prod"}}
    ]
  })");
  const OutputConfig& ch = c.outputs[0];
  EXPECT_EQ(ch.type, OutputType::kHttp);
  EXPECT_EQ(ch.http.url.text, "http://[::1]:8123/?database=logs");
  EXPECT_EQ(ch.http.format, HttpFormat::kClickHouse);
  EXPECT_EQ(ch.http.table, "logs.events");
  EXPECT_EQ(ch.http.headers, (StringPairs{{"Authorization", "Basic dTpw"}, {"X-Tenant", "a b"}}));
  EXPECT_EQ(ch.http.header_files,
            (StringPairs{{"X-ClickHouse-Key", "/run/credentials/logfold.service/ch-key"}}));
  EXPECT_EQ(ch.http.compression, HttpCompression::kGzip);
  EXPECT_EQ(ch.http.batch_max_events, 100u);
  EXPECT_EQ(ch.http.batch_max_bytes, 64 * kKiB);
  EXPECT_EQ(ch.http.batch_max_delay_us, 0);
  EXPECT_EQ(ch.http.request_timeout_us, 5 * kSecond);
  EXPECT_EQ(ch.http.retry_initial_backoff_us, kSecond);
  EXPECT_EQ(ch.http.retry_max_backoff_us, kMinute);
  EXPECT_EQ(ch.http.max_retries, 0u);
  const OutputConfig& es = c.outputs[1];
  EXPECT_EQ(es.http.format, HttpFormat::kElasticsearch);
  EXPECT_EQ(es.http.index, "logfold-events");
  EXPECT_EQ(es.http.compression, HttpCompression::kNone);
  EXPECT_EQ(es.http.batch_max_events, 5000u);
  EXPECT_EQ(es.http.batch_max_bytes, kMiB);
  EXPECT_EQ(es.http.batch_max_delay_us, kSecond);
  EXPECT_EQ(es.http.request_timeout_us, 30 * kSecond);
  EXPECT_EQ(es.http.retry_initial_backoff_us, 100 * kMillisecond);
  EXPECT_EQ(es.http.retry_max_backoff_us, 30 * kSecond);
  EXPECT_EQ(es.http.max_retries, 5u);
  EXPECT_EQ(c.outputs[2].http.labels, (StringPairs{{"job", "logfold"}, {"env", "prod"}}));
  EXPECT_EQ(Parsed(ConfigToJson(c)), c);
  const Json canonical = Json::parse(ConfigToJson(c));
  EXPECT_EQ(canonical["outputs"][1],
            Json::parse(R"({"name": "es", "type": "http", "buffer": "64MiB",
                            "when_full": "block", "url": "http://es.example:9200",
                            "format": "elasticsearch", "index": "logfold-events",
                            "headers": {}, "header_files": {}, "compression": "none",
                            "batch_max_events": 5000,
                            "batch_max_bytes": "1MiB", "batch_max_delay": "1s",
                            "request_timeout": "30s", "retry_initial_backoff": "100ms",
                            "retry_max_backoff": "30s", "max_retries": 5})"));
}

TEST(ConfigErrorTest, HttpOutputErrors) {
  EXPECT_THAT(
      Errors(R"({
        "inputs": [{"name": "u", "type": "udp", "port": 1}],
        "outputs": [
          {"name": "a", "type": "http", "url": "ftp://ch:8443/", "format": "clickhouse",
           "table": "t"},
          {"name": "b", "type": "http", "format": "clickhouse", "index": "x"},
          {"name": "c", "type": "http", "url": "http://h/", "format": "loki",
           "labels": {"job": "x", "host": "y", "9x": "z", "e": ""}},
          {"name": "d", "type": "http", "url": "http://h/", "format": "elasticsearch",
           "index": "Logs", "labels": {"a": "b"}},
          {"name": "e", "type": "http", "url": "http://h/", "format": "clickhouse",
           "table": "x; DROP", "headers": {"Content-Type": "x", "Bad Name": "x",
           "X-A": "a\r\nb", "x-a": "again"}},
          {"name": "f", "type": "http", "url": "http://h/", "format": "clickhouse",
           "table": "t", "buffer": "64KiB", "batch_max_bytes": "1MiB",
           "batch_max_events": 0, "retry_initial_backoff": "2s", "retry_max_backoff": "1s",
           "max_retries": 1001, "request_timeout": "0", "compression": "zstd"},
          {"name": "g", "type": "tcp", "address": "h", "port": 1, "url": "http://h/",
           "batch_max_events": 5},
          {"name": "h", "type": "http", "url": "http://u:p@h/", "format": "splunk"}
        ]})"),
      ElementsAre(
          E("outputs[0].url",
            "invalid URL \"ftp://ch:8443/\": scheme must be http or https, not \"ftp\""),
          E("outputs[1].index", "only allowed when format is \"elasticsearch\""),
          E("outputs[1].url", "required key missing"),
          E("outputs[1].table", "required key missing"),
          E("outputs[2].labels.host", "label \"host\" is taken from each event"),
          E("outputs[2].labels.9x",
            "label name must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __"),
          E("outputs[2].labels.e", "label value must not be empty"),
          E("outputs[3].index",
            "must be an index name: lowercase, without \\ / * ? \" < > | , # : or spaces, not "
            "starting with - _ +, at most 255 bytes, got \"Logs\""),
          E("outputs[3].labels", "only allowed when format is \"loki\""),
          E("outputs[4].table",
            "must be a table name or database.table, each [A-Za-z_][A-Za-z0-9_]*, got "
            "\"x; DROP\""),
          E("outputs[4].headers.Content-Type", "header \"Content-Type\" is set by logfold itself"),
          E("outputs[4].headers.Bad Name",
            "header name must be an HTTP token (letters, digits, !#$%&'*+-.^_`|~)"),
          E("outputs[4].headers.X-A",
            "header value must not contain control characters (CR, LF, NUL...)"),
          E("outputs[4].headers.x-a", "duplicate key"),
          E("outputs[5].batch_max_events", "must be between 1 and 1000000, got 0"),
          E("outputs[5].max_retries", "must be between 0 and 1000, got 1001"),
          E("outputs[5].request_timeout", "must be between 1ms and 1h, got \"0\""),
          E("outputs[5].compression", "must be one of: none, gzip"),
          E("outputs[5].retry_max_backoff",
            "must be at least retry_initial_backoff (2s), got \"1s\""),
          E("outputs[5].batch_max_bytes", "must not exceed buffer (64KiB), got 1MiB"),
          E("outputs[6].url", "not allowed for type tcp"),
          E("outputs[6].batch_max_events", "not allowed for type tcp"),
          E("outputs[7].url",
            "invalid URL \"http://u:p@h/\": must not contain user info ('user:password@'); "
            "send credentials in headers, e.g. \"Authorization\""),
          E("outputs[7].format", "must be one of: clickhouse, elasticsearch, loki")));
}

TEST(ConfigErrorTest, BadEnumValues) {
  Json doc = Minimal();
  doc["log"]["level"] = "verbose";
  doc["inputs"][0]["format"] = "xml";
  doc["inputs"][0]["type"] = "sctp";
  doc["engine"]["scope"] = Json::parse(R"(["host", "pid", "host"])");
  doc["engine"]["mode"] = "merge";
  doc["engine"]["time"] = "wall";
  doc["outputs"][0]["type"] = "amqp";
  EXPECT_THAT(
      DocErrors(doc),
      ElementsAre(
          E("log.level", "must be one of: trace, debug, info, warn, error, critical, off"),
          E("inputs[0].type",
            "must be one of: udp, tcp, stdin, file, unix, journald, relp, kafka, tls; did you mean "
            "\"tcp\"?"),
          E("inputs[0].format", "must be one of: syslog, raw, json"),
          E("engine.scope[1]", "must be one of: host, app, procid, msgid, severity, facility"),
          E("engine.scope[2]", "duplicate scope field \"host\""),
          E("engine.mode", "must be one of: fold, annotate"),
          E("engine.time", "must be one of: arrival, event"),
          E("outputs[0].type", "must be one of: stdout, file, tcp, syslog, http, relp, kafka")));
}

TEST(ConfigErrorTest, RequiredKeysMissing) {
  EXPECT_THAT(Errors(R"({})"), ElementsAre(E("inputs", "required key missing"),
                                           E("outputs", "required key missing")));
  EXPECT_THAT(Errors(R"({"inputs": [{"type": "udp"}, {"name": "t", "type": "tcp"},
                                    {"name": "f", "type": "file"}, {"name": "x"}],
                         "outputs": [{"name": "o", "type": "tcp"},
                                     {"name": "p", "type": "syslog", "address": "h"},
                                     {"name": "q", "type": "file"}]})"),
              ElementsAre(E("inputs[0].name", "required key missing"),
                          E("inputs[0].port", "required key missing"),
                          E("inputs[1].port", "required key missing"),
                          E("inputs[2].path", "required key missing"),
                          E("inputs[3].type", "required key missing"),
                          E("outputs[0].address", "required key missing"),
                          E("outputs[0].port", "required key missing"),
                          E("outputs[1].port", "required key missing"),
                          E("outputs[2].path", "required key missing")));
}

TEST(ConfigErrorTest, WhenFullPolicy) {
  EXPECT_THAT(Errors(R"({
        "inputs": [{"name": "u", "type": "udp", "port": 1}],
        "outputs": [
          {"name": "a", "type": "stdout", "when_full": "spill"},
          {"name": "b", "type": "file", "path": "/b", "block_timeout": "1s"},
          {"name": "c", "type": "file", "path": "/c", "when_full": "drop", "block_timeout": "0s"}
        ]})"),
              ElementsAre(E("outputs[0].when_full", "must be one of: block, drop"),
                          E("outputs[1].block_timeout", "only allowed when when_full is \"drop\""),
                          E("outputs[2].block_timeout", "must be between 1ms and 1h, got \"0s\"")));
  Config c;
  std::vector<ConfigError> errors;
  ASSERT_TRUE(ParseConfig(R"({
        "inputs": [{"name": "u", "type": "udp", "port": 1}],
        "outputs": [{"name": "f", "type": "file", "path": "/f", "when_full": "drop",
                     "block_timeout": "250ms"}]})",
                          c, errors))
      << FormatConfigErrors(errors);
  EXPECT_EQ(c.outputs[0].sink.when_full, WhenFull::kDrop);
  EXPECT_EQ(c.outputs[0].sink.block_timeout_us, 250 * kMillisecond);
}

TEST(ConfigErrorTest, DiskBufferAndShutdownTimeout) {
  EXPECT_THAT(
      Errors(R"({
        "inputs": [{"name": "u", "type": "udp", "port": 1}],
        "workers": {"shutdown_timeout": "100ms"},
        "outputs": [
          {"name": "a", "type": "file", "path": "/a", "disk_buffer_max_size": "1GiB"},
          {"name": "b", "type": "file", "path": "/b", "disk_buffer": "/q",
           "disk_buffer_max_size": "1KiB"},
          {"name": "c", "type": "stdout", "disk_buffer": "/q"}
        ]})"),
      ElementsAre(
          E("workers.shutdown_timeout", "must be between 1s and 1h, got \"100ms\""),
          E("outputs[0].disk_buffer_max_size", "only allowed with disk_buffer"),
          E("outputs[1].disk_buffer_max_size", "must be between 1MiB and 1TiB, got \"1KiB\""),
          E("outputs[2].disk_buffer", "directory is already the disk buffer of output \"b\"")));
  Config c;
  std::vector<ConfigError> errors;
  ASSERT_TRUE(ParseConfig(R"({
        "inputs": [{"name": "u", "type": "udp", "port": 1}],
        "workers": {"shutdown_timeout": "5s"},
        "outputs": [{"name": "f", "type": "file", "path": "/f", "disk_buffer": "/var/q",
                     "disk_buffer_max_size": "2GiB"}]})",
                          c, errors))
      << FormatConfigErrors(errors);
  EXPECT_EQ(c.workers.shutdown_timeout_us, 5 * kSecond);
  EXPECT_EQ(c.outputs[0].sink.disk_buffer.directory, "/var/q");
  EXPECT_EQ(c.outputs[0].sink.disk_buffer.max_size, 2 * kGiB);
  EXPECT_EQ(Config{}.workers.shutdown_timeout_us, 30 * kSecond);
}

TEST(ConfigErrorTest, KeysThatDoNotApplyToTheType) {
  EXPECT_THAT(
      Errors(R"({
        "inputs": [
          {"name": "u", "type": "udp", "port": 1, "path": "/x", "framing": "auto"},
          {"name": "t", "type": "tcp", "port": 2, "receive_buffer": "1MiB"},
          {"name": "s", "type": "stdin", "address": "::", "port": 3},
          {"name": "j", "type": "tcp", "port": 4, "json_message_field": "m"},
          {"name": "o", "type": "udp", "port": 5, "nul_terminator": false},
          {"name": "a", "type": "udp", "socket_name": "x", "address": "::", "port": 6}
        ],
        "outputs": [
          {"name": "out", "type": "stdout", "path": "/x", "fsync": "always"},
          {"name": "f", "type": "file", "path": "/y", "fsync_interval": "1s"},
          {"name": "u", "type": "syslog", "address": "h", "port": 514, "protocol": "udp",
           "framing": "newline", "reconnect_min": "1s"},
          {"name": "t", "type": "tcp", "address": "h", "port": 1, "app_name": "x"}
        ]})"),
      ElementsAre(
          E("inputs[0].path", "not allowed for type udp"),
          E("inputs[0].framing", "not allowed for type udp"),
          E("inputs[1].receive_buffer", "not allowed for type tcp"),
          E("inputs[2].address", "not allowed for type stdin"),
          E("inputs[2].port", "not allowed for type stdin"),
          E("inputs[3].json_message_field", "only allowed when format is \"json\""),
          E("inputs[4].nul_terminator", "not allowed for type udp"),
          E("inputs[5].address",
            "not allowed together with socket_name (the inherited socket is already bound)"),
          E("inputs[5].port",
            "not allowed together with socket_name (the inherited socket is already bound)"),
          E("outputs[0].path", "not allowed for type stdout"),
          E("outputs[0].fsync", "not allowed for type stdout"),
          E("outputs[1].fsync_interval", "only allowed when fsync is \"interval\""),
          E("outputs[2].framing", "only allowed when protocol is \"tcp\""),
          E("outputs[2].reconnect_min", "only allowed when protocol is \"tcp\""),
          E("outputs[3].app_name", "not allowed for type tcp")));
}

TEST(ConfigTest, RelpInputAndOutput) {
  const Config c = Parsed(R"({
    "inputs": [{"name": "r", "type": "relp", "address": "::1", "port": 2514,
                "max_message_size": "8KiB"}],
    "outputs": [{"name": "o", "type": "relp", "address": "collector", "port": 2514,
                 "window": 16, "ack_timeout": "5s", "reconnect_max": "2s"}]})");
  ASSERT_EQ(c.inputs.size(), 1u);
  EXPECT_EQ(c.inputs[0].type, InputType::kRelp);
  EXPECT_EQ(c.inputs[0].relp.address, "::1");
  EXPECT_EQ(c.inputs[0].relp.port, 2514);
  EXPECT_EQ(c.inputs[0].relp.max_message_size, 8 * kKiB);
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].type, OutputType::kRelp);
  EXPECT_EQ(c.outputs[0].relp.target.address, "collector");
  EXPECT_EQ(c.outputs[0].relp.target.port, 2514);
  EXPECT_EQ(c.outputs[0].relp.window, 16u);
  EXPECT_EQ(c.outputs[0].relp.ack_timeout_us, 5 * kSecond);
  EXPECT_EQ(c.outputs[0].relp.target.reconnect_max_us, 2 * kSecond);
  EXPECT_EQ(c.outputs[0].relp.target.reconnect_min_us, 100 * kMillisecond);
  EXPECT_EQ(Parsed(ConfigToJson(c)), c);
}

TEST(ConfigErrorTest, RelpKeys) {
  EXPECT_THAT(Errors(R"({
        "inputs": [
          {"name": "r", "type": "relp"},
          {"name": "t", "type": "tcp", "port": 2514},
          {"name": "r2", "type": "relp", "port": 2514, "framing": "auto"}
        ],
        "outputs": [
          {"name": "o", "type": "relp", "address": "h", "port": 1, "window": 0,
           "ack_timeout": "10ms", "app_name": "x"},
          {"name": "t", "type": "tcp", "address": "h", "port": 1, "window": 4}
        ]})"),
              ElementsAre(E("inputs[0].port", "required key missing"),
                          E("inputs[2].framing", "not allowed for type relp"),
                          E("inputs[2].port", "tcp 127.0.0.1:2514 is already bound by input \"t\""),
                          E("outputs[0].window", "must be between 1 and 65535, got 0"),
                          E("outputs[0].ack_timeout", "must be between 1s and 1h, got \"10ms\""),
                          E("outputs[0].app_name", "not allowed for type relp"),
                          E("outputs[1].window", "not allowed for type tcp")));
}

TEST(ConfigErrorTest, InvalidTypeStillValidatesTheOtherKeys) {
  EXPECT_THAT(Errors(R"({"inputs": [{"name": "x", "type": "sctp", "port": 99999,
                                     "path": ""}],
                         "outputs": [{"name": "o", "type": "stdout"}]})"),
              ElementsAre(E("inputs[0].type",
                            "must be one of: udp, tcp, stdin, file, unix, journald, relp, kafka, "
                            "tls; did you mean \"tcp\"?"),
                          E("inputs[0].port", "must be between 0 and 65535, got 99999"),
                          E("inputs[0].path", "must not be empty")));
}

TEST(ConfigErrorTest, NamesAddressesAndStrings) {
  Json doc = Minimal();
  doc["inputs"][0]["name"] = "udp local";
  doc["inputs"][0]["address"] = "localhost";
  doc["inputs"].push_back(Json::parse(R"({"name": "v6", "type": "tcp", "address": "[::1]",
                                          "port": 1})"));
  doc["outputs"].push_back(Json::parse(R"({"name": "r", "type": "tcp", "address": "bad host",
                                           "port": 1})"));
  doc["outputs"].push_back(Json::parse(R"({"name": "s", "type": "syslog", "address": "-h",
                                           "port": 1, "app_name": "log fold"})"));
  doc["metrics"]["address"] = "*";
  EXPECT_THAT(
      DocErrors(doc),
      ElementsAre(
          E("inputs[0].name", "must match [A-Za-z0-9_.-]+, got \"udp local\""),
          E("inputs[0].address",
            "must be an IPv4 or IPv6 address literal (no brackets, no host names), got "
            "\"localhost\""),
          E("inputs[1].address",
            "must be an IPv4 or IPv6 address literal (no brackets, no host names), got "
            "\"[::1]\""),
          E("outputs[1].address", "must be a host name or an IP address literal, got \"bad host\""),
          E("outputs[2].address", "must be a host name or an IP address literal, got \"-h\""),
          E("outputs[2].app_name",
            "must be 1 to 48 printable ASCII characters without spaces, got \"log fold\""),
          E("metrics.address",
            "must be an IPv4 or IPv6 address literal (no brackets, no host names), got "
            "\"*\"")));
}

TEST(ConfigErrorTest, DuplicateNames) {
  EXPECT_THAT(Errors(R"({
        "inputs": [{"name": "a", "type": "udp", "port": 1}, {"name": "a", "type": "udp",
                    "port": 2}],
        "outputs": [{"name": "a", "type": "stdout"}, {"name": "b", "type": "file", "path": "/1"},
                    {"name": "b", "type": "file", "path": "/2"}]})"),
              ElementsAre(E("inputs[1].name", "duplicate name \"a\" (also used by inputs[0])"),
                          E("outputs[2].name", "duplicate name \"b\" (also used by outputs[1])")));
}

TEST(ConfigErrorTest, TwoInputsBindingTheSameProtocolAddressAndPort) {
  Json doc = Minimal();
  doc["inputs"] = Json::parse(R"([
      {"name": "u1", "type": "udp", "address": "::1", "port": 514},
      {"name": "t1", "type": "tcp", "address": "::1", "port": 514},
      {"name": "u2", "type": "udp", "address": "0:0::1", "port": 514},
      {"name": "u3", "type": "udp", "address": "127.0.0.1", "port": 5514},
      {"name": "t2", "type": "tcp", "port": 5514},
      {"name": "t3", "type": "tcp", "port": 5514},
      {"name": "e1", "type": "udp", "port": 0},
      {"name": "e2", "type": "udp", "port": 0},
      {"name": "s1", "type": "tcp", "socket_name": "syslog"},
      {"name": "s2", "type": "udp", "socket_name": "syslog"},
      {"name": "s3", "type": "tcp", "socket_name": "syslog"}
  ])");
  EXPECT_THAT(
      DocErrors(doc),
      ElementsAre(
          E("inputs[2].port", "udp [::1]:514 is already bound by input \"u1\""),
          E("inputs[5].port", "tcp 127.0.0.1:5514 is already bound by input \"t2\""),
          E("inputs[10].socket_name", "tcp socket \"syslog\" is already adopted by input \"s1\"")));
}

TEST(ConfigErrorTest, SingleStdioEndpointsAndFileLoops) {
  EXPECT_THAT(
      Errors(R"({
        "inputs": [{"name": "a", "type": "stdin"}, {"name": "b", "type": "stdin"},
                   {"name": "f", "type": "file", "path": "/var/log/x"},
                   {"name": "g", "type": "file", "path": "/var/log/x"}],
        "outputs": [{"name": "o", "type": "stdout"}, {"name": "p", "type": "stdout"},
                    {"name": "w", "type": "file", "path": "/var/log/x"},
                    {"name": "v", "type": "file", "path": "/out"},
                    {"name": "u", "type": "file", "path": "/out"}]})"),
      ElementsAre(
          E("inputs[1].type", "only one stdin input is allowed; input \"a\" reads stdin already"),
          E("inputs[3].path", "file is already read by input \"f\""),
          E("outputs[1].type",
            "only one stdout output is allowed; output \"o\" writes stdout already"),
          E("outputs[2].path", "file is read by input \"f\"; writing it would feed events back in"),
          E("outputs[4].path", "file is already written by output \"v\"")));
}

// ---- Hostile-load settings (issue #19) ----

TEST(ConfigTest, LimitsAndPerSourceConnectionsAreMapped) {
  Json doc = Minimal();
  doc["inputs"].push_back(
      {{"name", "t"}, {"type", "tcp"}, {"port", 0}, {"max_connections_per_source", 5}});
  EXPECT_FALSE(DocParsed(doc).limits.memory.has_value());  // "auto" by default
  EXPECT_EQ(DocParsed(doc).inputs[1].tcp.max_connections_per_source, 5u);
  doc["limits"] = {{"memory", "512MiB"}};
  EXPECT_EQ(DocParsed(doc).limits.memory, std::optional<std::uint64_t>(512 * kMiB));
  doc["limits"] = {{"memory", 0}};
  EXPECT_EQ(DocParsed(doc).limits.memory, std::optional<std::uint64_t>(0));
  doc["limits"] = {{"memory", "auto"}};
  const Config c = DocParsed(doc);
  EXPECT_FALSE(c.limits.memory.has_value());
  // The canonical form parses back to the same settings.
  EXPECT_EQ(Parsed(ConfigToJson(c)), c);
  doc["limits"] = {{"memory", "512MiB"}};
  EXPECT_EQ(Parsed(ConfigToJson(DocParsed(doc))), DocParsed(doc));
}

TEST(ConfigErrorTest, BadMemoryLimitIsRefusedWithItsPath) {
  Json doc = Minimal();
  doc["limits"] = {{"memory", "1MiB"}};
  EXPECT_THAT(
      DocErrors(doc),
      ElementsAre(E("limits.memory", "must be \"auto\", 0 or at least 16MiB, got \"1MiB\"")));
  doc["limits"] = {{"memory", "lots"}};
  ASSERT_EQ(DocErrors(doc).size(), 1u);
  EXPECT_EQ(DocErrors(doc)[0].path, "limits.memory");
  doc["limits"] = {{"memroy", "1GiB"}};
  ASSERT_EQ(DocErrors(doc).size(), 1u);
  EXPECT_EQ(DocErrors(doc)[0].path, "limits.memroy");
  doc = Minimal();
  doc["inputs"].push_back(
      {{"name", "t"}, {"type", "tcp"}, {"port", 0}, {"max_connections_per_source", 70000}});
  ASSERT_EQ(DocErrors(doc).size(), 1u);
  EXPECT_EQ(DocErrors(doc)[0].path, "inputs[1].max_connections_per_source");
}

TEST(ConfigWarningsTest, RiskySettingsWarnWithTheirPaths) {
  Json doc = Minimal();
  EXPECT_TRUE(ConfigWarnings(DocParsed(doc), 0).empty());
  doc["inputs"][0]["address"] = "0.0.0.0";
  doc["inputs"].push_back({{"name", "t"},
                           {"type", "tcp"},
                           {"address", "::"},
                           {"port", 0},
                           {"max_connections", 65535},
                           {"max_message_size", "16MiB"}});
  doc["outputs"].push_back({{"name", "store"},
                            {"type", "http"},
                            {"url", "http://10.1.2.3:8123/"},
                            {"format", "clickhouse"},
                            {"table", "logs"},
                            {"headers", {{"authorization", "Basic eDp5"}}},
                            {"buffer", "1MiB"},
                            {"batch_max_bytes", "1MiB"}});
  doc["outputs"].push_back({{"name", "local"},
                            {"type", "http"},
                            {"url", "http://127.0.0.1:8123/"},
                            {"format", "clickhouse"},
                            {"table", "logs"},
                            {"headers", {{"Authorization", "Basic eDp5"}}}});
  doc["metrics"] = {{"address", "::"}};
  std::vector<std::string> paths;
  for (const ConfigError& w : ConfigWarnings(DocParsed(doc), kGiB)) paths.push_back(w.path);
  EXPECT_THAT(paths, ElementsAre("inputs[0].address", "inputs[1].address",
                                 "inputs[1].max_connections", "outputs[1].headers.authorization",
                                 "outputs[1].buffer", "metrics.address"));
  // No budget: no connections x frame size warning. A valid file stays valid.
  EXPECT_EQ(ConfigWarnings(DocParsed(doc), 0).size(), 5u);
}

TEST(ConfigErrorTest, AllErrorsAreReportedInDocumentOrder) {
  // Sections out of their usual order: errors follow the text, not the schema.
  EXPECT_THAT(Errors(R"({
        "metrics": {"port": -1},
        "engine": {"window": "1.5.s", "mode": "fold", "max_distance": 40},
        "outputs": [{"name": "o", "type": "stdout", "bufer": "1MiB"}],
        "inputs": [{"name": "i", "type": "udp", "port": 514, "format": "text"}],
        "workers": {"threads": 1000}
      })"),
              ElementsAre(E("metrics.port", "must be between 0 and 65535, got -1"),
                          E("engine.window", "invalid duration \"1.5.s\": malformed number"),
                          E("engine.max_distance", "must be between 0 and 31, got 40"),
                          E("outputs[0].bufer", "unknown key; did you mean \"buffer\"?"),
                          E("inputs[0].format", "must be one of: syslog, raw, json"),
                          E("workers.threads", "must be between 0 and 256, got 1000")));
}

TEST(ConfigErrorTest, ErrorsAreFormattedOnePerLine) {
  EXPECT_EQ(FormatConfigErrors({E("", "invalid JSON at line 1, column 1: x"),
                                E("engine.window", "must be greater than 0, got \"0s\"")}),
            "invalid JSON at line 1, column 1: x\n"
            "engine.window: must be greater than 0, got \"0s\"\n");
  EXPECT_EQ(FormatConfigErrors({}), "");
}

TEST(ConfigErrorTest, UnreadableFileGivesOneErrorWithTheSystemReason) {
  Config config;
  std::vector<ConfigError> errors;
  EXPECT_FALSE(LoadConfigFile("/nonexistent/logfold.json", config, errors));
  EXPECT_THAT(errors, ElementsAre(E("",
                                    "cannot read \"/nonexistent/logfold.json\": No such "
                                    "file or directory")));
  errors.clear();
  EXPECT_FALSE(LoadConfigFile(LOGFOLD_SOURCE_DIR "/config", config, errors));
  EXPECT_THAT(errors,
              ElementsAre(E("", "cannot read \"" LOGFOLD_SOURCE_DIR "/config\": Is a directory")));
}

// ---- Units ----

struct DurationCase {
  std::string_view text;
  TimeUs us;
};

TEST(UnitsTest, ParsesDurations) {
  const DurationCase cases[] = {
      {"0", 0},
      {"0s", 0},
      {"0.0", 0},
      {"100us", 100},
      {"250ms", 250'000},
      {"10s", 10 * kSecond},
      {"1.5s", 1'500'000},
      {"0.001ms", 1},
      {"1m", kMinute},
      {"2h", 2 * kHour},
      {"1d", kDay},
      {"10 s", 10 * kSecond},
      {"2e3ms", 2 * kSecond},
      {"1.25e-3s", 1250},
      {"007s", 7 * kSecond},
      {"106751991d", 106751991 * kDay},
      {"9223372036854775807us", std::numeric_limits<TimeUs>::max()},
  };
  for (const auto& c : cases) {
    TimeUs us = -1;
    std::string error;
    EXPECT_TRUE(ParseDuration(c.text, us, error)) << c.text << ": " << error;
    EXPECT_EQ(us, c.us) << c.text;
  }
}

struct RejectCase {
  std::string_view text;
  std::string_view error;
};

TEST(UnitsTest, RejectsBadDurations) {
  const RejectCase cases[] = {
      {"", "invalid duration \"\": empty"},
      {"10", "invalid duration \"10\": missing unit (us, ms, s, m, h or d)"},
      {"-1s", "invalid duration \"-1s\": negative"},
      {"1.5.s", "invalid duration \"1.5.s\": malformed number"},
      {"1.s", "invalid duration \"1.s\": malformed number"},
      {".5s", "invalid duration \".5s\": malformed number"},
      {"s", "invalid duration \"s\": malformed number"},
      {" 1s", "invalid duration \" 1s\": malformed number"},
      {"5 parsecs",
       "invalid duration \"5 parsecs\": unknown unit \"parsecs\" (us, ms, s, m, h or d)"},
      {"1S", "invalid duration \"1S\": unknown unit \"S\" (us, ms, s, m, h or d)"},
      {"1s ", "invalid duration \"1s \": unknown unit \"s \" (us, ms, s, m, h or d)"},
      {"1e400s", "invalid duration \"1e400s\": too large"},
      {"9223372036854775808us", "invalid duration \"9223372036854775808us\": too large"},
      {"106751992d", "invalid duration \"106751992d\": too large"},
      {"1.5us", "invalid duration \"1.5us\": finer than 1us"},
      {"1e-400s", "invalid duration \"1e-400s\": finer than 1us"},
      {"1.00000000000000000000000001s",
       "invalid duration \"1.00000000000000000000000001s\": too many significant digits"},
  };
  for (const auto& c : cases) {
    TimeUs us = 42;
    std::string error;
    EXPECT_FALSE(ParseDuration(c.text, us, error)) << c.text;
    EXPECT_EQ(error, c.error);
    EXPECT_EQ(us, 42) << "output must be untouched on failure: " << c.text;
  }
}

TEST(UnitsTest, FormatsDurationsInTheLargestExactUnit) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(1), "1us");
  EXPECT_EQ(FormatDuration(1500), "1500us");
  EXPECT_EQ(FormatDuration(250'000), "250ms");
  EXPECT_EQ(FormatDuration(1'500'000), "1500ms");
  EXPECT_EQ(FormatDuration(90 * kSecond), "90s");
  EXPECT_EQ(FormatDuration(5 * kMinute), "5m");
  EXPECT_EQ(FormatDuration(36 * kHour), "36h");
  EXPECT_EQ(FormatDuration(2 * kDay), "2d");
  EXPECT_EQ(FormatDuration(-3 * kSecond), "-3s");
  const TimeUs samples[] = {
      0, 1, 999, 1'000, 61'000'000, kDay + 1, std::numeric_limits<TimeUs>::max()};
  for (TimeUs us : samples) {
    TimeUs back = -1;
    std::string error;
    ASSERT_TRUE(ParseDuration(FormatDuration(us), back, error)) << error;
    EXPECT_EQ(back, us);
  }
}

struct SizeCase {
  std::string_view text;
  std::uint64_t bytes;
};

TEST(UnitsTest, ParsesSizes) {
  const SizeCase cases[] = {
      {"0", 0},
      {"1000", 1000},
      {"512B", 512},
      {"1KB", 1000},
      {"1kb", 1000},
      {"64KiB", 64 * 1024},
      {"1MB", 1'000'000},
      {"4MiB", 4 * 1024 * 1024},
      {"1GiB", 1ULL << 30},
      {"2TB", 2'000'000'000'000ULL},
      {"1TiB", 1ULL << 40},
      {"1.5KiB", 1536},
      {"16 MiB", 16ULL << 20},
      {"18446744073709551615", std::numeric_limits<std::uint64_t>::max()},
  };
  for (const auto& c : cases) {
    std::uint64_t bytes = 1;
    std::string error;
    EXPECT_TRUE(ParseSize(c.text, bytes, error)) << c.text << ": " << error;
    EXPECT_EQ(bytes, c.bytes) << c.text;
  }
}

TEST(UnitsTest, RejectsBadSizes) {
  const RejectCase cases[] = {
      {"", "invalid size \"\": empty"},
      {"-1KiB", "invalid size \"-1KiB\": negative"},
      {"1..5MiB", "invalid size \"1..5MiB\": malformed number"},
      {"4 parsecs",
       "invalid size \"4 parsecs\": unknown unit \"parsecs\" (B, KB, KiB, MB, MiB, GB, GiB, TB "
       "or TiB)"},
      {"1K", "invalid size \"1K\": unknown unit \"K\" (B, KB, KiB, MB, MiB, GB, GiB, TB or TiB)"},
      {"0.5B", "invalid size \"0.5B\": not a whole number of bytes"},
      {"18446744073709551616", "invalid size \"18446744073709551616\": too large"},
      {"16777216TiB", "invalid size \"16777216TiB\": too large"},
      {"1e400B", "invalid size \"1e400B\": too large"},
  };
  for (const auto& c : cases) {
    std::uint64_t bytes = 42;
    std::string error;
    EXPECT_FALSE(ParseSize(c.text, bytes, error)) << c.text;
    EXPECT_EQ(error, c.error);
    EXPECT_EQ(bytes, 42u) << c.text;
  }
}

TEST(UnitsTest, FormatsSizesInTheLargestExactUnit) {
  EXPECT_EQ(FormatSize(0), "0B");
  EXPECT_EQ(FormatSize(512), "512B");
  EXPECT_EQ(FormatSize(1000), "1KB");
  EXPECT_EQ(FormatSize(1024), "1KiB");
  EXPECT_EQ(FormatSize(1'024'000), "1000KiB");
  EXPECT_EQ(FormatSize(1536), "1536B");
  EXPECT_EQ(FormatSize(64 * kKiB), "64KiB");
  EXPECT_EQ(FormatSize(4 * kMiB), "4MiB");
  EXPECT_EQ(FormatSize(3'000'000), "3MB");
  EXPECT_EQ(FormatSize(kGiB), "1GiB");
  EXPECT_EQ(FormatSize(1ULL << 40), "1TiB");
  EXPECT_EQ(FormatSize(5'000'000'000'000ULL), "5TB");
  const std::uint64_t samples[] = {
      0, 1, 1023, 1025, 1'000'001, 3 * kGiB + 1, std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t bytes : samples) {
    std::uint64_t back = 0;
    std::string error;
    ASSERT_TRUE(ParseSize(FormatSize(bytes), back, error)) << error;
    EXPECT_EQ(back, bytes);
  }
}

// A reload compares the running and the new EngineConfig; a field left out of the
// comparison would be a setting a reload silently ignores. Each mutation changes one field
// of MergerOptions (the file's keys and those it cannot set yet) or the time source.
TEST(EngineConfigTest, ComparisonSeesEveryEngineOption) {
  using Mutation = void (*)(EngineConfig&);
  const Mutation mutations[] = {
      [](EngineConfig& e) { e.merger.max_distance += 1; },
      [](EngineConfig& e) { e.merger.window_us += 1; },
      [](EngineConfig& e) { e.merger.max_hold_us += 1; },
      [](EngineConfig& e) { e.merger.max_groups += 1; },
      [](EngineConfig& e) { e.merger.scope.pop_back(); },
      [](EngineConfig& e) { e.merger.max_summary_hosts += 1; },
      [](EngineConfig& e) { e.merger.annotate = !e.merger.annotate; },
      [](EngineConfig& e) { e.merger.confirm = !e.merger.confirm; },
      [](EngineConfig& e) { e.merger.variable_after_values += 1; },
      [](EngineConfig& e) { e.merger.protected_words.push_back("extra"); },
      [](EngineConfig& e) { e.merger.value_keys.push_back("extra"); },
      [](EngineConfig& e) { e.merger.tokenizer.max_tokens += 1; },
      [](EngineConfig& e) { e.merger.tokenizer.kernel = ByteBlockKernel::kScalar; },
      [](EngineConfig& e) { e.merger.weights.word += 1.0f; },
      [](EngineConfig& e) { e.merger.weights.by_class[1] += 1.0f; },
      [](EngineConfig& e) { e.merger.weights.pairs = !e.merger.weights.pairs; },
      [](EngineConfig& e) { e.merger.id_seed += 1; },
      [](EngineConfig& e) { e.time = TimeSource::kEvent; },
  };
  for (std::size_t i = 0; i < std::size(mutations); ++i) {
    EngineConfig changed;
    mutations[i](changed);
    EXPECT_NE(changed, EngineConfig{}) << "mutation " << i;
    Config running, next;
    next.engine = changed;
    EXPECT_NE(next, running) << "mutation " << i;
  }
}

}  // namespace
}  // namespace logfold

namespace logfold {
namespace {

TEST(ConfigTest, LocalInputKeysAreMappedAndRoundTrip) {
  Config config;
  std::vector<ConfigError> errors;
  ASSERT_TRUE(ParseConfig(R"({
      "inputs": [
        {"name": "f", "type": "file", "path": "/var/log/app/*.log", "state_directory": "/s",
         "read_from": "end", "multiline_start": "^\\d{4}-", "multiline_timeout": "2s",
         "poll_interval": "250ms"},
        {"name": "u", "type": "unix", "path": "/dev/log", "socket_type": "stream",
         "socket_mode": "0660"},
        {"name": "j", "type": "journald", "journal_directory": "/var/log/journal",
         "units": ["ssh.service", "cron.service"], "state_directory": "/s"}],
      "outputs": [{"name": "o", "type": "stdout"}]})",
                          config, errors))
      << FormatConfigErrors(errors);
  const InputConfig& f = config.inputs[0];
  EXPECT_EQ(f.type, InputType::kFile);
  EXPECT_EQ(f.file.path, "/var/log/app/*.log");
  EXPECT_EQ(f.file.state_directory, "/s");
  EXPECT_EQ(f.file.read_from, ReadFrom::kEnd);
  EXPECT_EQ(f.file.multiline_start, "^\\d{4}-");
  EXPECT_EQ(f.file.multiline_timeout_us, 2 * kSecond);
  EXPECT_EQ(f.file.poll_interval_us, 250 * kMillisecond);
  const InputConfig& u = config.inputs[1];
  EXPECT_EQ(u.type, InputType::kUnix);
  EXPECT_EQ(u.unix_socket.socket_type, UnixSocketType::kStream);
  EXPECT_EQ(u.unix_socket.path, "/dev/log");
  EXPECT_EQ(u.unix_socket.mode, 0660u);
  const InputConfig& j = config.inputs[2];
  EXPECT_EQ(j.type, InputType::kJournald);
  EXPECT_EQ(j.journald.directory, "/var/log/journal");
  EXPECT_EQ(j.journald.state_directory, "/s");
  EXPECT_EQ(j.journald.units, (std::vector<std::string>{"ssh.service", "cron.service"}));
  EXPECT_EQ(j.journald.read_from, ReadFrom::kBeginning);
  Config reparsed;
  ASSERT_TRUE(ParseConfig(ConfigToJson(config), reparsed, errors)) << FormatConfigErrors(errors);
  EXPECT_EQ(reparsed, config);
}

std::string RegexError(const std::string& pattern) {
  try {
    std::regex r(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigErrorTest, LocalInputBadValuesNameTheirPath) {
  EXPECT_THAT(
      Errors(R"({
        "inputs": [
          {"name": "f", "type": "file", "path": "/a", "multiline_start": "(", "read_from": "middle",
           "socket_mode": "0666"},
          {"name": "g", "type": "file", "path": "/b", "multiline_timeout": "1s"},
          {"name": "u", "type": "unix", "path": "/dev/log", "socket_mode": "rw", "socket_type": "seq",
           "poll_interval": "1s"},
          {"name": "v", "type": "unix", "path": "/dev/log"},
          {"name": "j", "type": "journald", "units": [""], "path": "/x"}],
        "outputs": [{"name": "o", "type": "stdout"}]})"),
      ElementsAre(E("inputs[0].multiline_start", "invalid regular expression: " + RegexError("(")),
                  E("inputs[0].read_from", "must be one of: beginning, end"),
                  E("inputs[0].socket_mode", "not allowed for type file"),
                  E("inputs[1].multiline_timeout", "only allowed with multiline_start"),
                  E("inputs[2].socket_mode",
                    "expected permissions as an octal string such as \"0666\", got \"rw\""),
                  E("inputs[2].socket_type", "must be one of: datagram, stream"),
                  E("inputs[2].poll_interval", "not allowed for type unix"),
                  E("inputs[3].path", "path is already used by input \"u\""),
                  E("inputs[4].units[0]", "must not be empty"),
                  E("inputs[4].path", "not allowed for type journald")));
}

}  // namespace
}  // namespace logfold

namespace logfold {
namespace {

// Exactly-once mode needs its changelog topic and exactly one output, a kafka one (its events
// are produced in the input's transactions); isolation.level is logfold's own.
TEST(ConfigKafkaTest, ExactlyOnceNeedsAChangelogAndOneKafkaOutput) {
  EXPECT_THAT(
      Errors(R"({"inputs": [{"name": "k", "type": "kafka", "brokers": "b:9092", "topics": ["t"],
                             "exactly_once": true, "changelog_recovery": "ignore",
                             "properties": {"isolation.level": "read_uncommitted"}}],
                 "outputs": [{"name": "o", "type": "stdout"}]})"),
      ElementsAre(E("inputs[0].exactly_once",
                    "needs exactly one output, of type \"kafka\" (its events are produced in "
                    "the input's transactions)"),
                  E("inputs[0].changelog_recovery", "must be one of: stop, empty"),
                  E("inputs[0].properties.isolation.level",
                    "set by logfold itself; use the input's or output's own keys"),
                  E("inputs[0].changelog_topic", "required when exactly_once is true")));
  Config config;
  std::vector<ConfigError> errors;
  EXPECT_TRUE(ParseConfig(R"({"inputs": [{"name": "k", "type": "kafka", "brokers": "b:9092",
                                          "topics": ["t"], "exactly_once": true,
                                          "changelog_topic": "cl"}],
                              "outputs": [{"name": "o", "type": "kafka", "brokers": "b:9092",
                                           "topic": "e"}]})",
                          config, errors));
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(config.inputs[0].kafka.exactly_once);
  EXPECT_EQ(config.inputs[0].kafka.changelog_topic, "cl");
}

// An at-least-once kafka input reads again from its committed offsets after a restart: the
// groups a state directory restores (or its journal replays) would count those lines twice,
// and the journal does not keep the partitions' salts and the lines' origins either.
TEST(ConfigKafkaTest, AnAtLeastOnceKafkaInputIsRefusedWithAStateDirectory) {
  EXPECT_THAT(Errors(R"({"inputs": [{"name": "k", "type": "kafka", "brokers": "b:9092",
                                     "topics": ["t"]}],
                         "outputs": [{"name": "o", "type": "stdout"}],
                         "state": {"directory": "/var/lib/logfold", "journal": true}})"),
              ElementsAre(E("inputs[0].type",
                            "an at-least-once kafka input cannot be combined with "
                            "state.directory (after a restart it reads the restored groups' "
                            "lines again from its committed offsets, counting them twice); use "
                            "exactly_once, or no state directory")));
  Config config;
  std::vector<ConfigError> errors;
  EXPECT_TRUE(ParseConfig(R"({"inputs": [{"name": "k", "type": "kafka", "brokers": "b:9092",
                                          "topics": ["t"], "exactly_once": true,
                                          "changelog_topic": "cl"},
                                         {"name": "u", "type": "udp", "port": 5514}],
                              "outputs": [{"name": "o", "type": "kafka", "brokers": "b:9092",
                                           "topic": "e"}],
                              "state": {"directory": "/var/lib/logfold"}})",
                          config, errors));
  EXPECT_TRUE(errors.empty());
}

// A kafka input's librdkafka properties are tried on a real client configuration: a name or
// value librdkafka refuses is reported at its own key, and logfold's own settings are refused.
TEST(ConfigKafkaTest, PropertiesAreValidatedByLibrdkafkaAtTheirOwnPath) {
  EXPECT_THAT(
      Errors(R"({"inputs": [{"name": "k", "type": "kafka", "brokers": "b:9092", "topics": [],
                             "commit_interval": "1ms",
                             "properties": {"fetch.max.bytes": "lots", "group.id": "x",
                                            "no.such.thing": "1", "security.protocol": "ssl",
                                            "session.timeout.ms": 10000, "x": []}},
                            {"name": "m", "type": "kafka", "port": 1}],
                 "outputs": [{"name": "o", "type": "stdout"}]})"),
      ElementsAre(E("inputs[0].topics", "must name at least one topic"),
                  E("inputs[0].commit_interval", "must be between 100ms and 1h, got \"1ms\""),
                  E("inputs[0].properties.fetch.max.bytes",
                    "librdkafka: Invalid value for configuration property \"fetch.max.bytes\""),
                  E("inputs[0].properties.group.id",
                    "set by logfold itself; use the input's or output's own keys"),
                  E("inputs[0].properties.no.such.thing",
                    "librdkafka: No such configuration property: \"no.such.thing\""),
                  E("inputs[0].properties.x", "expected a string, number or boolean, got array"),
                  E("inputs[1].port", "not allowed for type kafka"),
                  E("inputs[1].brokers", "required key missing"),
                  E("inputs[1].topics", "required key missing")));
  EXPECT_THAT(
      Errors(R"({"inputs": [{"name": "u", "type": "udp", "port": 1}],
                 "outputs": [{"name": "k", "type": "kafka", "brokers": "b:9092", "topic": "t",
                              "compression": "brotli", "key": "scope",
                              "properties": {"acks": "1", "socket.timeout.ms": "-5"}},
                             {"name": "m", "type": "kafka", "url": "http://x/"}]})"),
      ElementsAre(
          E("outputs[0].compression", "must be one of: none, gzip, snappy, lz4, zstd"),
          E("outputs[0].key", "must be one of: group_id, host, none"),
          E("outputs[0].properties.acks",
            "set by logfold itself; use the input's or output's own keys"),
          E("outputs[0].properties.socket.timeout.ms",
            "librdkafka: Configuration property \"socket.timeout.ms\" value -5 is outside allowed "
            "range 10..300000"),
          E("outputs[1].url", "not allowed for type kafka"),
          E("outputs[1].brokers", "required key missing"),
          E("outputs[1].topic", "required key missing")));
  Config config;
  std::vector<ConfigError> errors;
  ASSERT_TRUE(ParseConfig(R"({"inputs": [{"name": "k", "type": "kafka", "brokers": "b:9092",
                                           "topics": ["logs"],
                                           "properties": {"security.protocol": "ssl",
                                                          "fetch.max.bytes": 1048576}}],
                              "outputs": [{"name": "o", "type": "stdout"}]})",
                          config, errors))
      << FormatConfigErrors(errors);
  const KafkaInputOptions& k = config.inputs[0].kafka;
  EXPECT_EQ(k.topics, std::vector<std::string>{"logs"});
  EXPECT_EQ(k.group_id, "logfold");
  EXPECT_EQ(k.properties.at("fetch.max.bytes"), "1048576");
  Config again;
  ASSERT_TRUE(ParseConfig(ConfigToJson(config), again, errors)) << FormatConfigErrors(errors);
  EXPECT_EQ(again, config);
}

}  // namespace
}  // namespace logfold
