// logfold and a real, private ClickHouse (clickhouse-server 18.16): the documented table
// (config/clickhouse.sql) and example queries (config/clickhouse_queries.sql) on logfold's
// own events, and the fixture's restart on the same port and data.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tests/clickhouse_server.h"
#include "tests/daemon_process.h"

namespace logfold {
namespace {

using clickhouse_test::ClickHouseServer;
using daemon_test::HttpResponse;
using daemon_test::Json;
using daemon_test::TempDir;
using std::chrono::milliseconds;

const std::string kSourceDir = LOGFOLD_SOURCE_DIR;
// What an http output with "format": "clickhouse" sends: the NDJSON events unchanged.
constexpr std::string_view kInsertSettings =
    "input_format_skip_unknown_fields=1&date_time_input_format=best_effort";
constexpr std::string_view kInsertEvents = "INSERT INTO logfold.events FORMAT JSONEachRow";

// One generated syslog line and the header fields it carries.
struct Line {
  std::string host, app;
  int severity = -1;  // -1: no PRI (a raw line)
  std::string text;   // without its LF
};

// A deterministic corpus of RFC 5424 lines from four hosts and five kinds of message whose
// numbers vary, so that each kind folds into one group per host; every 500th line has no
// header at all. Timestamps are `now` minus a few minutes, so "last hour" queries see them.
std::vector<Line> MakeCorpus(int count, std::uint32_t seed) {
  static constexpr const char* kHosts[] = {"web-01", "web-02", "db-01", "mail-01"};
  struct Kind {
    const char* app;
    int facility, severity;
    const char* format;  // one %u, the varying number
  };
  static constexpr Kind kKinds[] = {
      {"sshd", 4, 6, "Accepted publickey for deploy from 10.0.0.1 port %u ssh2"},
      {"nginx", 23, 3, "upstream timed out while reading response header, request id %u"},
      {"kernel", 0, 4, "TCP: request_sock_TCP: Possible SYN flooding on port %u"},
      {"postgres", 16, 4, "checkpoint complete: wrote %u buffers"},
      {"billing-api", 17, 2, "payment %u declined by gateway"},
  };
  std::mt19937 rng(seed);
  const std::time_t start = std::time(nullptr) - 300;
  std::vector<Line> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    Line l;
    if (i % 500 == 499) {
      l.text = "no header here, just text " + std::to_string(rng() % 100000);
      out.push_back(std::move(l));
      continue;
    }
    const Kind& k = kKinds[rng() % 5];
    l.host = kHosts[rng() % 4];
    l.app = k.app;
    l.severity = k.severity;
    char msg[160], stamp[32];
    std::snprintf(msg, sizeof msg, k.format, static_cast<unsigned>(rng() % 100000));
    const std::time_t t = start + i / 100;
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    l.text = "<" + std::to_string(k.facility * 8 + k.severity) + ">1 " + stamp + "." +
             std::to_string(100 + i % 900) + "Z " + l.host + " " + l.app + " " +
             std::to_string(1000 + i % 50) + " - - " + msg;
    out.push_back(std::move(l));
  }
  return out;
}

std::string JoinLines(const std::vector<Line>& corpus) {
  std::string s;
  for (const Line& l : corpus) s += l.text + "\n";
  return s;
}

class ClickHouseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    if (clickhouse_test::ServerBinary().empty()) {
      GTEST_SKIP() << "clickhouse-server is not installed (scripts/install-deps installs it)";
    }
    ASSERT_TRUE(clickhouse_.Start()) << clickhouse_.error();
    ASSERT_TRUE(clickhouse_.ApplySqlFile(kSourceDir + "/config/clickhouse.sql"))
        << clickhouse_.error();
  }
  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "--- clickhouse ---\n%s\n", clickhouse_.Log().c_str());
  }

  // `SELECT count(), sum(lines)` over the events table.
  std::string CountAndLines() {
    return clickhouse_.QueryValue("SELECT count(), sum(lines) FROM logfold.events FORMAT TSV");
  }

  TempDir dir_;
  ClickHouseServer clickhouse_{dir_};
};

// logfold's own events (from `logfold replay`, the encoder every output uses) fit the table
// as the http output inserts them, and the derived columns and example queries are right.
TEST_F(ClickHouseTest, TableTakesLogfoldEventsAndExampleQueriesAnswer) {
  constexpr int kLines = 5000;
  const std::vector<Line> corpus = MakeCorpus(kLines, 7);
  daemon_test::WriteFile(dir_ / "corpus.log", JoinLines(corpus));
  const daemon_test::CommandResult replay = daemon_test::RunCommand(
      {LOGFOLD_BINARY, "replay", "--window", "1h", dir_ / "corpus.log"}, dir_, milliseconds(30000));
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  std::vector<Json> events;
  std::string error;
  ASSERT_TRUE(daemon_test::ParseNdjson(replay.out, events, error)) << error;
  ASSERT_EQ(daemon_test::LinesAccounted(events), static_cast<std::uint64_t>(kLines));

  const HttpResponse insert = clickhouse_.Insert(kInsertEvents, replay.out, kInsertSettings);
  ASSERT_EQ(insert.status, 200) << insert.body;
  EXPECT_EQ(CountAndLines(), std::to_string(events.size()) + "\t" + std::to_string(kLines));

  // Derived columns: lines is 1 per first and count per summary; event_time is the first's
  // time or the summary's last_seen (to the second, as DateTime stores it).
  std::uint64_t summary_lines = 0;
  for (const Json& e : events) {
    if (e["kind"] == "summary") summary_lines += e["count"].get<std::uint64_t>();
  }
  EXPECT_EQ(clickhouse_.QueryValue("SELECT sum(lines) FROM logfold.events WHERE kind = 'summary'"),
            std::to_string(summary_lines));
  EXPECT_EQ(clickhouse_.QueryValue("SELECT countIf(event_time != if(kind = 'summary', last_seen, "
                                   "time)), countIf(toYear(event_time) < 2020) "
                                   "FROM logfold.events FORMAT TSV"),
            "0\t0");
  // Header fields of first events survive; a line without PRI has NULL severity, not 0.
  std::set<std::string> sent;  // message, host, app and severity of every line with a header
  for (const Line& l : corpus) {
    if (l.severity < 0) continue;
    sent.insert(
        Json::array({l.text.substr(l.text.find(" - - ") + 5), l.host, l.app, l.severity}).dump());
  }
  const HttpResponse firsts = clickhouse_.Query(
      "SELECT message, host, app, severity FROM logfold.events WHERE kind = 'first' AND "
      "parse_error = '' FORMAT JSONCompact");
  ASSERT_EQ(firsts.status, 200) << firsts.body;
  const Json first_rows = Json::parse(firsts.body)["data"];
  EXPECT_GE(first_rows.size(), 20u) << "5 kinds of message on 4 hosts";
  for (const Json& row : first_rows) EXPECT_TRUE(sent.contains(row.dump())) << row.dump();
  EXPECT_EQ(clickhouse_.QueryValue("SELECT count() FROM logfold.events WHERE kind = 'first' AND "
                                   "parse_error = 'no_header' AND isNull(severity) AND host = ''"),
            "1");

  // The example queries run, and answer what the events say.
  const std::vector<std::string> queries = clickhouse_test::SplitSqlStatements(
      daemon_test::ReadFile(kSourceDir + "/config/clickhouse_queries.sql"));
  ASSERT_EQ(queries.size(), 3u);
  std::map<std::string, std::uint64_t> repeats;  // host/app/group_id -> sum of counts
  std::map<std::string, std::uint64_t> per_host;
  for (const Json& e : events) {
    const std::string host = e.value("host", "");
    if (e["kind"] == "summary") {
      repeats[host + "\t" + e.value("app", "") + "\t" + e.value("group_id", "")] +=
          e["count"].get<std::uint64_t>();
      per_host[host] += e["count"].get<std::uint64_t>();
    } else {
      ++per_host[host];
    }
  }
  std::uint64_t top = 0;
  for (const auto& [key, n] : repeats) top = std::max(top, n);

  const HttpResponse top_groups = clickhouse_.Query(queries[0] + " FORMAT JSONCompact");
  ASSERT_EQ(top_groups.status, 200) << top_groups.body;
  const Json top_rows = Json::parse(top_groups.body)["data"];
  ASSERT_EQ(top_rows.size(), std::min<std::size_t>(10, repeats.size()));
  EXPECT_EQ(top_rows[0][4], std::to_string(top)) << top_groups.body;  // UInt64 is quoted
  const std::string top_key = top_rows[0][0].get<std::string>() + "\t" +
                              top_rows[0][1].get<std::string>() + "\t" +
                              top_rows[0][2].get<std::string>();
  EXPECT_EQ(repeats[top_key], top) << top_key;
  EXPECT_NE(top_rows[0][3].get<std::string>().find("<*>"), std::string::npos) << top_groups.body;

  const HttpResponse hosts = clickhouse_.Query(queries[1] + " FORMAT JSONCompact");
  ASSERT_EQ(hosts.status, 200) << hosts.body;
  std::map<std::string, std::uint64_t> host_rows;
  const Json host_data = Json::parse(hosts.body)["data"];
  for (const Json& row : host_data) {
    host_rows[row[0].get<std::string>()] = std::stoull(row[1].get<std::string>());
  }
  EXPECT_EQ(host_rows, per_host);

  const HttpResponse errors = clickhouse_.Query(queries[2] + " FORMAT JSONCompact");
  ASSERT_EQ(errors.status, 200) << errors.body;
  const Json error_rows = Json::parse(errors.body)["data"];
  EXPECT_GE(error_rows.size(), 4u) << "billing-api (crit) and nginx (err) on every host";
  for (const Json& row : error_rows) EXPECT_LE(row[3].get<int>(), 3) << row.dump();
}

// The fixture's restart keeps the port and the data, as the end-to-end tests rely on.
TEST_F(ClickHouseTest, RestartKeepsPortAndData) {
  const std::string one =
      R"({"kind":"first","group_id":"0000000000000001","fingerprint":"00000000000000ff",)"
      R"("time":"2026-01-02T03:04:05.678901Z","host":"h","app":"a","message":"m"})"
      "\n";
  ASSERT_EQ(clickhouse_.Insert(kInsertEvents, one, kInsertSettings).status, 200);
  const std::uint16_t port = clickhouse_.http_port();
  ASSERT_TRUE(clickhouse_.Stop()) << "clickhouse-server did not exit on SIGTERM";
  EXPECT_EQ(daemon_test::HttpGet(port, "/ping", milliseconds(1000)).status, 0);
  ASSERT_TRUE(clickhouse_.Start()) << clickhouse_.error();
  EXPECT_EQ(clickhouse_.http_port(), port);
  EXPECT_EQ(clickhouse_.QueryValue(
                "SELECT count(), toString(any(event_time)) FROM logfold.events FORMAT TSV"),
            "1\t2026-01-02 03:04:05");
}

}  // namespace
}  // namespace logfold
