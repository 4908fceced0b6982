// Tests for the HTTP sink against a real HTTP server on loopback (tests/http_test_server.h):
// batching, keep-alive, gzip, each store's body format, retries, rejections and Stop.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/config/http_url.h"
#include "daemon/outputs/http/http_body_format.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"
#include "tests/support/http_test_server.h"
#include "tests/support/listener_test_util.h"

namespace logfold {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using test::ReceivedRequest;
using test::Reply;
using test::ScriptedResponse;
using test::TestHttpServer;
using test::WaitUntil;

constexpr std::string_view kLabels = R"(sink="store")";

Clock::time_point In(Clock::duration d) { return Clock::now() + d; }

// One NDJSON event line (with '\n') carrying `seq`, padded to about `size` bytes.
std::string Event(int seq, std::size_t size = 100) {
  std::string r = "{\"kind\":\"first\",\"seq\":" + std::to_string(seq) + ",\"pad\":\"";
  if (r.size() + 3 < size) r.append(size - r.size() - 3, 'x');
  r += "\"}\n";
  return r;
}

std::string Events(int from, int to, std::size_t size = 100) {
  std::string out;
  for (int i = from; i < to; ++i) out += Event(i, size);
  return out;
}

OutputConfig HttpConfig(const std::string& url, HttpFormat format = HttpFormat::kClickHouse) {
  OutputConfig c;
  c.sink.name = "store";
  c.type = OutputType::kHttp;
  std::string error;
  EXPECT_TRUE(HttpUrl::Parse(url, c.http.url, error)) << error;
  c.http.format = format;
  c.http.table = "logs.events";
  c.http.index = "logfold";
  c.http.batch_max_delay_us = 3'600'000'000;  // batches close by count, bytes or Stop unless set
  c.http.retry_initial_backoff_us = 10'000;
  c.http.retry_max_backoff_us = 50'000;
  c.http.request_timeout_us = 5'000'000;
  return c;
}

std::unique_ptr<Sink> Make(const OutputConfig& config, Metrics& metrics) {
  std::string error;
  auto sink = MakeSink(config, metrics, error);
  EXPECT_NE(sink, nullptr) << error;
  return sink;
}

std::string Bodies(const std::vector<ReceivedRequest>& requests) {
  std::string all;
  for (const auto& r : requests) all += r.body;
  return all;
}

std::uint64_t Count(const Metrics& m, std::string_view name) { return m.Value(name, kLabels); }

std::uint64_t Requests(const Metrics& m, std::string_view status) {
  return m.Value("logfold_sink_http_requests_total",
                 std::string(kLabels) + ",status=\"" + std::string(status) + "\"");
}

// ---------------------------------------------------------------------------------------
// URL parsing

TEST(HttpUrlTest, ParsesHostPortPathAndQuery) {
  HttpUrl u;
  std::string error;
  ASSERT_TRUE(HttpUrl::Parse("http://ch.example:8123/db?user=x", u, error)) << error;
  EXPECT_EQ(u.host, "ch.example");
  EXPECT_EQ(u.port, 8123);
  EXPECT_EQ(u.path, "/db");
  EXPECT_EQ(u.query, "user=x");
  EXPECT_EQ(u.host_header, "ch.example:8123");
  ASSERT_TRUE(HttpUrl::Parse("http://[::1]:9200", u, error)) << error;
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.path, "/");
  EXPECT_EQ(u.host_header, "[::1]:9200");
  ASSERT_TRUE(HttpUrl::Parse("HTTP://10.0.0.1", u, error)) << error;
  EXPECT_EQ(u.port, 80);
  EXPECT_EQ(u.host_header, "10.0.0.1");
}

TEST(HttpUrlTest, RefusesWhatItCannotSpeakWithAReason) {
  HttpUrl u;
  std::string error;
  EXPECT_TRUE(HttpUrl::Parse("https://ch/", u, error)) << error;
  EXPECT_TRUE(u.tls);
  EXPECT_EQ(u.port, 443);
  EXPECT_EQ(u.host_header, "ch");
  EXPECT_TRUE(HttpUrl::Parse("HTTPS://ch:8443/", u, error)) << error;
  EXPECT_EQ(u.host_header, "ch:8443");
  for (const char* bad : {"ch:8123", "ftp://x/", "http://", "http://::1:80/", "http://[::1/",
                          "http://h:0/", "http://h:99999/", "http://h:/", "http://u:p@h/",
                          "http://h/#frag", "http://h/a b", "http://bad_host/", "http://h/%zz"}) {
    error.clear();
    EXPECT_FALSE(HttpUrl::Parse(bad, u, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

// ---------------------------------------------------------------------------------------
// Body formats, exactly as documented by each store

TEST(HttpSinkTest, ClickHouseInsertsJsonEachRowWithSettingsAndHeaders) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_events = 3;
  config.http.headers = {{"Authorization", "Basic dTpw"}, {"X-ClickHouse-Database", "logs"}};
  auto sink = Make(config, metrics);
  const std::string body = Events(0, 3);
  ASSERT_TRUE(sink->Submit(body, In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 1u);
  const ReceivedRequest& r = requests[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.target,
            "/?query=INSERT%20INTO%20logs.events%20FORMAT%20JSONEachRow"
            "&input_format_skip_unknown_fields=1&date_time_input_format=best_effort");
  EXPECT_EQ(r.body, body);
  EXPECT_EQ(r.headers.at("host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(r.headers.at("authorization"), "Basic dTpw");
  EXPECT_EQ(r.headers.at("x-clickhouse-database"), "logs");
  EXPECT_EQ(r.headers.count("content-encoding"), 0u);
  EXPECT_EQ(Count(metrics, "logfold_sink_delivered_events_total"), 3u);
  EXPECT_EQ(Count(metrics, "logfold_sink_http_batches_total"), 1u);
  EXPECT_EQ(Requests(metrics, "2xx"), 1u);
  EXPECT_EQ(Count(metrics, "logfold_sink_http_body_bytes_total"), body.size());
  EXPECT_TRUE(sink->Stop(In(5s)));
}

TEST(HttpSinkTest, ClickHouseUrlQueryIsKept) {
  std::string error;
  HttpSinkOptions options;
  ASSERT_TRUE(HttpUrl::Parse("http://ch:8123/?database=x", options.url, error));
  options.table = "t";
  auto format = MakeHttpBodyFormat(options);
  ASSERT_NE(format, nullptr);
  EXPECT_EQ(format->target(),
            "/?database=x&query=INSERT%20INTO%20t%20FORMAT%20JSONEachRow"
            "&input_format_skip_unknown_fields=1&date_time_input_format=best_effort");
}

TEST(HttpSinkTest, ElasticsearchBulkHasAnIndexActionBeforeEachEvent) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript([](const ReceivedRequest&, std::size_t) {
    return Reply(
        200,
        R"({"took":1,"errors":false,"items":[{"index":{"status":201}},{"index":{"status":201}}]})");
  });
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/es/"), HttpFormat::kElasticsearch);
  config.http.index = "logfold-events";
  config.http.batch_max_events = 2;
  auto sink = Make(config, metrics);
  ASSERT_TRUE(sink->Submit(Events(0, 2), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/es/_bulk");
  EXPECT_EQ(requests[0].headers.at("content-type"), "application/x-ndjson");
  const std::string action = R"({"index":{"_index":"logfold-events"}})"
                             "\n";
  EXPECT_EQ(requests[0].body, action + Event(0) + action + Event(1));
  EXPECT_EQ(Count(metrics, "logfold_sink_delivered_events_total"), 2u);
}

TEST(HttpSinkTest, ElasticsearchItemsAreRetriedOrRejectedOneByOne) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript([](const ReceivedRequest&, std::size_t index) {
    if (index == 0) {
      return Reply(200,
                   R"({"took":3,"errors":true,"items":[)"
                   R"({"index":{"status":201}},)"
                   R"({"index":{"status":429,"error":{"type":"es_rejected_execution_exception"}}},)"
                   R"({"index":{"status":400,"error":{"type":"mapper_parsing_exception"}}}]})");
    }
    return Reply(200, R"({"errors":false,"items":[{"create":{"status":201}}]})");
  });
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"), HttpFormat::kElasticsearch);
  config.http.batch_max_events = 3;
  auto sink = Make(config, metrics);
  ASSERT_TRUE(sink->Submit(Events(0, 3), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].body, R"({"index":{"_index":"logfold"}})"
                              "\n" +
                                  Event(1));
  EXPECT_EQ(Count(metrics, "logfold_sink_delivered_events_total"), 2u);
  EXPECT_EQ(Count(metrics, "logfold_sink_rejected_events_total"), 1u);
  EXPECT_EQ(Count(metrics, "logfold_sink_retries_total"), 1u);
}

TEST(HttpSinkTest, LokiGroupsEventsIntoStreamsByLabels) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript([](const ReceivedRequest&, std::size_t) { return Reply(204, ""); });
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"), HttpFormat::kLoki);
  config.http.labels = {{"job", "logfold"}};
  config.http.batch_max_events = 3;
  auto sink = Make(config, metrics);
  const std::string a =
      R"({"kind":"first","time":"2024-03-01T00:00:01.000002Z","host":"web1","app":"sshd","message":"x"})";
  const std::string b =
      R"({"kind":"summary","first_seen":"2024-03-01T00:00:01Z","last_seen":"2024-03-01T00:00:09.5Z","host":"web1","app":"sshd","count":4})";
  const std::string c =
      R"({"kind":"first","time":"1970-01-01T00:00:00.000001Z","host":"db1","app":"sshd"})";
  ASSERT_TRUE(sink->Submit(a + "\n" + b + "\n" + c + "\n", In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/loki/api/v1/push");
  EXPECT_EQ(requests[0].headers.at("content-type"), "application/json");
  auto quoted = [](const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
      if (ch == '"') out += '\\';
      out += ch;
    }
    return out + "\"";
  };
  EXPECT_EQ(requests[0].body,
            R"({"streams":[)"
            R"({"stream":{"job":"logfold","kind":"first","host":"web1","app":"sshd"},)"
            R"("values":[["1709251201000002000",)" +
                quoted(a) + "]]}," +
                R"({"stream":{"job":"logfold","kind":"summary","host":"web1","app":"sshd"},)"
                R"("values":[["1709251209500000000",)" +
                quoted(b) + "]]}," +
                R"({"stream":{"job":"logfold","kind":"first","host":"db1","app":"sshd"},)"
                R"("values":[["1000",)" +
                quoted(c) + "]]}]}");
}

TEST(HttpSinkTest, LokiUsesTheSendingTimeForAnEventWithoutOne) {
  std::string error;
  HttpSinkOptions options;
  ASSERT_TRUE(HttpUrl::Parse("http://loki:3100", options.url, error));
  options.format = HttpFormat::kLoki;
  auto format = MakeHttpBodyFormat(options);
  ASSERT_NE(format, nullptr);
  std::string body;
  const std::vector<std::string_view> events = {R"({"kind":"first","message":"m"})", "not json"};
  format->AppendBody(events, 1'700'000'000'123'456, body);
  EXPECT_EQ(
      body,
      R"({"streams":[{"stream":{"kind":"first"},"values":[["1700000000123456000","{\"kind\":\"first\",\"message\":\"m\"}"]]},)"
      R"({"stream":{},"values":[["1700000000123456000","not json"]]}]})");
}

TEST(HttpSinkTest, GzipBodyInflatesToTheExactBody) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.compression = HttpCompression::kGzip;
  config.http.batch_max_events = 50;
  auto sink = Make(config, metrics);
  const std::string body = Events(0, 50);
  ASSERT_TRUE(sink->Submit(body, In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].headers.at("content-encoding"), "gzip");
  EXPECT_LT(requests[0].raw_body.size(), body.size() / 4);
  EXPECT_EQ(requests[0].body, body);
  EXPECT_EQ(Count(metrics, "logfold_sink_http_body_bytes_total"), requests[0].raw_body.size());
}

// ---------------------------------------------------------------------------------------
// Batching and connections

TEST(HttpSinkTest, BatchesByCount) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_events = 10;
  auto sink = Make(config, metrics);
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(sink->Submit(Event(i), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return server.request_count() == 2; }));
  const auto requests = server.Requests();
  EXPECT_EQ(requests[0].body, Events(0, 10));
  EXPECT_EQ(requests[1].body, Events(10, 20));
  // The last five wait for more.
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == Events(20, 25).size(); }));
  EXPECT_TRUE(sink->Stop(In(5s)));  // sends the partial batch
  ASSERT_EQ(server.request_count(), 3u);
  EXPECT_EQ(server.Requests()[2].body, Events(20, 25));
}

TEST(HttpSinkTest, BatchesByBytesKeepingEventsWhole) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_bytes = 1024;  // 10 events of 100 bytes fit, 11 do not
  auto sink = Make(config, metrics);
  ASSERT_TRUE(sink->Submit(Events(0, 25), In(5s)));
  ASSERT_TRUE(sink->Submit(Event(25, 3000), In(5s)));  // larger than a batch: sent alone
  EXPECT_TRUE(sink->Stop(In(5s)));
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0].body, Events(0, 10));
  EXPECT_EQ(requests[1].body, Events(10, 20));
  EXPECT_EQ(requests[2].body, Events(20, 25));
  EXPECT_EQ(requests[3].body, Event(25, 3000));
}

TEST(HttpSinkTest, BatchesByTime) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_delay_us = 50'000;
  auto sink = Make(config, metrics);
  const auto submitted = Clock::now();
  ASSERT_TRUE(sink->Submit(Events(0, 2), In(5s)));
  ASSERT_TRUE(sink->Submit(Events(2, 3), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return server.request_count() == 1; }));
  const auto requests = server.Requests();
  EXPECT_GE(requests[0].at - submitted, 50ms);  // held for the delay, not sent at once
  EXPECT_EQ(requests[0].body, Events(0, 3));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
}

TEST(HttpSinkTest, KeepAliveReusesOneConnection) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_events = 1;
  auto sink = Make(config, metrics);
  ASSERT_TRUE(sink->Submit(Events(0, 30), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  EXPECT_EQ(server.request_count(), 30u);
  EXPECT_EQ(server.connection_count(), 1);
  EXPECT_EQ(Count(metrics, "logfold_sink_connects_total"), 1u);
}

TEST(HttpSinkTest, ReconnectsWhenTheServerClosesTheConnection) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript([](const ReceivedRequest&, std::size_t) {
    ScriptedResponse r;
    r.close = true;
    return r;
  });
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_events = 1;
  auto sink = Make(config, metrics);
  ASSERT_TRUE(sink->Submit(Events(0, 5), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  EXPECT_EQ(Bodies(server.Requests()), Events(0, 5));
  EXPECT_EQ(server.connection_count(), 5);
  EXPECT_EQ(Count(metrics, "logfold_sink_retries_total"), 0u);
}

// ---------------------------------------------------------------------------------------
// Failures

TEST(HttpSinkTest, ServiceUnavailableIsRetriedAndDeliveredOnce) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript([](const ReceivedRequest&, std::size_t index) {
    return index == 0 ? Reply(503, "busy") : ScriptedResponse{};
  });
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_events = 4;
  auto sink = Make(config, metrics);
  ASSERT_TRUE(sink->Submit(Events(0, 4), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].body, Events(0, 4));
  EXPECT_EQ(requests[1].body, Events(0, 4));
  EXPECT_EQ(Count(metrics, "logfold_sink_retries_total"), 1u);
  EXPECT_EQ(Requests(metrics, "5xx"), 1u);
  EXPECT_EQ(Requests(metrics, "2xx"), 1u);
  EXPECT_EQ(Count(metrics, "logfold_sink_delivered_events_total"), 4u);
  EXPECT_EQ(Count(metrics, "logfold_sink_rejected_events_total"), 0u);
}

TEST(HttpSinkTest, ConnectionRefusedUntilTheServerAppears) {
  std::uint16_t port = 0;
  {
    TestHttpServer probe;  // learn a free port, then free it
    port = probe.port();
  }
  Metrics metrics;
  OutputConfig config = HttpConfig("http://127.0.0.1:" + std::to_string(port) + "/");
  config.http.batch_max_events = 3;
  auto sink = Make(config, metrics);
  ASSERT_TRUE(sink->Submit(Events(0, 3), In(5s)));
  ASSERT_TRUE(
      WaitUntil([&] { return Count(metrics, "logfold_sink_connect_failures_total") >= 2; }));
  EXPECT_EQ(sink->buffered_bytes(), Events(0, 3).size());
  TestHttpServer server(port);
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  EXPECT_EQ(Bodies(server.Requests()), Events(0, 3));
  EXPECT_GE(Requests(metrics, "failed"), 2u);
  EXPECT_GE(Count(metrics, "logfold_sink_retries_total"), 2u);
}

TEST(HttpSinkTest, BadRequestIsNotRetriedButCounted) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript(
      [](const ReceivedRequest&, std::size_t) { return Reply(400, "Cannot parse input"); });
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_events = 1;
  auto sink = Make(config, metrics);
  ASSERT_TRUE(sink->Submit(Event(0), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_EQ(Count(metrics, "logfold_sink_rejected_events_total"), 1u);
  EXPECT_EQ(Count(metrics, "logfold_sink_retries_total"), 0u);
  EXPECT_EQ(Requests(metrics, "4xx"), 1u);
  // The sink carries on with the next event.
  server.SetScript([](const ReceivedRequest&, std::size_t) { return ScriptedResponse{}; });
  ASSERT_TRUE(sink->Submit(Event(1), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  EXPECT_EQ(Count(metrics, "logfold_sink_delivered_events_total"), 1u);
}

// ClickHouse 18.16 answers a bad row with HTTP 500 and "Code: N" in the body.
ScriptedResponse ClickHouseRefusingPoison(const ReceivedRequest& r, std::size_t) {
  if (r.body.find("poison") != std::string::npos) {
    return Reply(500,
                 "Code: 49, e.displayText() = DB::Exception: Unknown element 'zzz' "
                 "for type Enum8('first' = 1, 'summary' = 2), e.what() = "
                 "DB::Exception\n");
  }
  return Reply(200, "");
}

TEST(HttpSinkTest, PoisonEventIsIsolatedBySplittingAndOnlyItIsLost) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript(ClickHouseRefusingPoison);
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_events = 8;
  config.http.max_retries = 100;  // a data error must not be retried at all
  auto sink = Make(config, metrics);
  std::string batch = Events(0, 5) + "{\"kind\":\"first\",\"poison\":1}\n" + Events(5, 7);
  ASSERT_TRUE(sink->Submit(batch, In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  std::string delivered;
  for (const auto& r : server.Requests()) {
    if (r.body.find("poison") == std::string::npos) delivered += r.body;
  }
  EXPECT_EQ(delivered, Events(0, 7));
  EXPECT_EQ(Count(metrics, "logfold_sink_rejected_events_total"), 1u);
  EXPECT_EQ(Count(metrics, "logfold_sink_delivered_events_total"), 7u);
  // 8 -> 4+4 -> (4 ok) 2+2 -> (2 ok) 1+1: 1 + 2 + 2 + 2 requests.
  EXPECT_EQ(server.request_count(), 7u);
}

TEST(HttpSinkTest, TransientClickHouseErrorIsRetried) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript([](const ReceivedRequest&, std::size_t index) {
    return index < 2 ? Reply(500,
                             "Code: 252, e.displayText() = DB::Exception: Too "
                             "many parts (300). Merges are processing "
                             "significantly slower than inserts")
                     : Reply(200, "");
  });
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_events = 2;
  config.http.max_retries = 0;  // transient errors are not limited by max_retries
  auto sink = Make(config, metrics);
  ASSERT_TRUE(sink->Submit(Events(0, 2), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_EQ(Count(metrics, "logfold_sink_delivered_events_total"), 2u);
  EXPECT_EQ(Count(metrics, "logfold_sink_rejected_events_total"), 0u);
}

TEST(HttpSinkTest, UnexplainedServerErrorIsRetriedUpToMaxRetriesThenRejected) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript(
      [](const ReceivedRequest&, std::size_t) { return Reply(500, "internal error"); });
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_events = 1;
  config.http.max_retries = 2;
  auto sink = Make(config, metrics);
  ASSERT_TRUE(sink->Submit(Event(0), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_EQ(Count(metrics, "logfold_sink_retries_total"), 2u);
  EXPECT_EQ(Count(metrics, "logfold_sink_rejected_events_total"), 1u);
}

TEST(HttpSinkTest, TooManyRequestsWaitsForRetryAfter) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript([](const ReceivedRequest&, std::size_t index) {
    ScriptedResponse r;
    if (index == 0) {
      r.status = 429;
      r.headers = {{"Retry-After", "1"}};
    }
    return r;
  });
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.http.batch_max_events = 1;
  auto sink = Make(config, metrics);  // backoff 10-50 ms: the wait comes from Retry-After
  ASSERT_TRUE(sink->Submit(Event(0), In(5s)));
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_GE(requests[1].at - requests[0].at, 1s);
  EXPECT_EQ(requests[1].body, Event(0));
  EXPECT_EQ(Count(metrics, "logfold_sink_rejected_events_total"), 0u);
}

TEST(HttpSinkTest, StalledServerFillsTheBufferThenEverythingAcceptedIsDelivered) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetStalled(true);
  Metrics metrics;
  OutputConfig config = HttpConfig(server.url("/"));
  config.sink.buffer = 64 << 10;
  config.http.batch_max_events = 100;
  config.http.request_timeout_us = 3'600'000'000;
  config.http.batch_max_delay_us = 20'000;
  auto sink = Make(config, metrics);
  int accepted = 0;
  while (accepted < 10'000 && sink->Submit(Event(accepted), In(50ms))) ++accepted;
  EXPECT_LT(accepted, 10'000);  // Submit refused: backpressure
  EXPECT_LE(sink->buffered_bytes(), config.sink.buffer);
  // One batch in flight, unanswered: the client waits for its answer.
  ASSERT_TRUE(WaitUntil([&] { return server.request_count() == 1; }));
  server.SetStalled(false);
  ASSERT_TRUE(WaitUntil([&] { return sink->buffered_bytes() == 0; }));
  EXPECT_EQ(Bodies(server.Requests()), Events(0, accepted));
}

TEST(HttpSinkTest, StopSendsThePartialBatch) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  Metrics metrics;
  auto sink = Make(HttpConfig(server.url("/")), metrics);
  ASSERT_TRUE(sink->Submit(Events(0, 3), In(5s)));
  EXPECT_EQ(server.request_count(), 0u);
  EXPECT_TRUE(sink->Stop(In(5s)));
  EXPECT_EQ(Bodies(server.Requests()), Events(0, 3));
  EXPECT_EQ(Count(metrics, "logfold_sink_discarded_bytes_total"), 0u);
}

TEST(HttpSinkTest, StopGivesUpOnADownStoreAtTheDeadlineAndCountsTheLoss) {
  TestHttpServer server;
  ASSERT_TRUE(server.ok());
  server.SetScript([](const ReceivedRequest&, std::size_t) { return Reply(503, ""); });
  Metrics metrics;
  auto sink = Make(HttpConfig(server.url("/")), metrics);
  ASSERT_TRUE(sink->Submit(Events(0, 3), In(5s)));
  const auto started = Clock::now();
  EXPECT_FALSE(sink->Stop(In(300ms)));
  EXPECT_LT(Clock::now() - started, 3s);
  EXPECT_GE(server.request_count(), 1u);
  EXPECT_EQ(Count(metrics, "logfold_sink_discarded_bytes_total"), Events(0, 3).size());
}

// Settings are validated by the config layer; what the factory still refuses is a TLS file it
// cannot load.
TEST(HttpSinkTest, FactoryRefusesUnreadableTlsFiles) {
  Metrics metrics;
  std::string error;
  OutputConfig config = HttpConfig("https://ch:8443/");
  config.http.tls.ca_file = "/nonexistent/ca.pem";
  EXPECT_EQ(MakeSink(config, metrics, error), nullptr);
  EXPECT_NE(error.find("CA bundle /nonexistent/ca.pem"), std::string::npos) << error;
}

TEST(HttpVerdictTest, StatusesAndClickHouseCodes) {
  EXPECT_EQ(ClassifyHttpStatus(200), HttpVerdict::kDelivered);
  EXPECT_EQ(ClassifyHttpStatus(204), HttpVerdict::kDelivered);
  for (unsigned s : {408u, 429u, 502u, 503u, 504u}) {
    EXPECT_EQ(ClassifyHttpStatus(s), HttpVerdict::kRetry) << s;
  }
  for (unsigned s : {400u, 401u, 404u, 413u}) {
    EXPECT_EQ(ClassifyHttpStatus(s), HttpVerdict::kRejected) << s;
  }
  EXPECT_EQ(ClassifyHttpStatus(500), HttpVerdict::kRetryLimited);
  EXPECT_EQ(ClassifyHttpStatus(301), HttpVerdict::kRetryLimited);
  for (int code : {252, 241, 202, 159, 209, 210, 242}) {
    EXPECT_EQ(ClassifyClickHouseError(code), HttpVerdict::kRetry) << code;
  }
  for (int code : {49, 26, 27, 117}) {
    EXPECT_EQ(ClassifyClickHouseError(code), HttpVerdict::kRejected) << code;
  }
}

// ClickHouse's code decides at any error status: 18.16 answers a missing table with 404 and
// a wrong password with 401, which the events cannot fix, so they wait rather than drop.
TEST(HttpVerdictTest, ClickHouseCodeDecidesAtAnyErrorStatus) {
  std::string error;
  HttpSinkOptions options;
  ASSERT_TRUE(HttpUrl::Parse("http://127.0.0.1:8123/", options.url, error));
  options.table = "t";
  auto format = MakeHttpBodyFormat(options);
  ASSERT_NE(format, nullptr);
  EXPECT_EQ(format->Classify(404,
                             "Code: 60, e.displayText() = DB::Exception: Table "
                             "logfold.events doesn't exist., e.what() = DB::Exception\n"),
            HttpVerdict::kRetry);
  EXPECT_EQ(format->Classify(404,
                             "Code: 81, e.displayText() = DB::Exception: Database "
                             "logfold doesn't exist, e.what() = DB::Exception\n"),
            HttpVerdict::kRetry);
  EXPECT_EQ(format->Classify(401,
                             "Code: 193, e.displayText() = DB::Exception: Wrong password "
                             "for user default, e.what() = DB::Exception\n"),
            HttpVerdict::kRetry);
  EXPECT_EQ(format->Classify(500,
                             "Code: 49, e.displayText() = DB::Exception: Unknown element "
                             "'x' for type Enum8('a' = 1), e.what() = DB::Exception\n"),
            HttpVerdict::kRejected);
  // Without a ClickHouse body (say a proxy in front), the status alone decides.
  EXPECT_EQ(format->Classify(404, "<html>not found</html>"), HttpVerdict::kRejected);
  EXPECT_EQ(format->Classify(503, "busy"), HttpVerdict::kRetry);
}

}  // namespace
}  // namespace logfold
