// logfold and a real, private ClickHouse (clickhouse-server 18.16): the documented table
// (config/clickhouse.sql) and example queries (config/clickhouse_queries.sql) on logfold's
// own events, and `logfold serve` delivering to it through an http output with format
// clickhouse: exact accounting, a ClickHouse restart mid-run, and a row ClickHouse rejects.
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

#include "tests/support/base64.h"
#include "tests/support/clickhouse_server.h"
#include "tests/support/daemon_process.h"
#include "tests/support/test_pki.h"

namespace logfold {
namespace {

using clickhouse_test::ClickHouseServer;
using daemon_test::DaemonProcess;
using daemon_test::HttpResponse;
using daemon_test::Json;
using daemon_test::TcpClient;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
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

using test::FromBase64;

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

  // The first events of lines with a header in logfold.events are one per kind of line and
  // host (5 x 4), each with the message, host, app and severity of a line in `corpus`.
  void ExpectFirstEventsAreLinesSent(const std::vector<Line>& corpus) {
    std::set<Json> sent;
    for (const Line& l : corpus) {
      if (l.severity < 0) continue;
      sent.insert(
          Json::array({l.text.substr(l.text.find(" - - ") + 5), l.host, l.app, l.severity}));
    }
    const HttpResponse r = clickhouse_.Query(
        "SELECT message, host, app, severity FROM logfold.events WHERE kind = 'first' AND "
        "parse_error = '' FORMAT JSONCompact");
    ASSERT_EQ(r.status, 200) << r.body;
    const Json rows = Json::parse(r.body)["data"];
    EXPECT_EQ(rows.size(), 20u) << "5 kinds of line on 4 hosts";
    for (const Json& row : rows) EXPECT_TRUE(sent.contains(row)) << row.dump();
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
  ExpectFirstEventsAreLinesSent(corpus);
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

  // The walkthrough's copy of it (docs/clickhouse.md) gives the same answer.
  const std::string readme = daemon_test::ReadFile(kSourceDir + "/docs/clickhouse.md");
  const std::size_t sql_at = readme.find("```sql\n");
  ASSERT_NE(sql_at, std::string::npos) << "docs/clickhouse.md has no sql block";
  const std::size_t sql_end = readme.find("```", sql_at + 7);
  const HttpResponse readme_top =
      clickhouse_.Query(readme.substr(sql_at + 7, sql_end - sql_at - 7) + " FORMAT JSONCompact");
  ASSERT_EQ(readme_top.status, 200) << readme_top.body;
  EXPECT_EQ(Json::parse(readme_top.body)["data"], top_rows);

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

// An RFC 3164 tag that says more than its program name ("postfix/smtpd", app "postfix")
// reaches the table's `tag` column; a plain tag leaves it empty.
TEST_F(ClickHouseTest, TagColumnKeepsATagLongerThanItsApp) {
  daemon_test::WriteFile(dir_ / "tags.log",
                         "<22>May  1 12:00:00 mx01 postfix/smtpd[991]: connect from unknown\n"
                         "<38>May  1 12:00:01 web01 sshd[77]: Accepted publickey\n");
  const daemon_test::CommandResult replay = daemon_test::RunCommand(
      {LOGFOLD_BINARY, "replay", dir_ / "tags.log"}, dir_, milliseconds(30000));
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const HttpResponse insert = clickhouse_.Insert(kInsertEvents, replay.out, kInsertSettings);
  ASSERT_EQ(insert.status, 200) << insert.body;
  const HttpResponse r = clickhouse_.Query(
      "SELECT app, tag, procid FROM logfold.events WHERE kind = 'first' ORDER BY app "
      "FORMAT JSONCompact");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json::parse(r.body)["data"],
            Json::parse(R"([["postfix", "postfix/smtpd", "991"], ["sshd", "", "77"]])"))
      << r.body;
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

// ------------------------------------------------------------ logfold serve -> ClickHouse

// `logfold serve` with a TCP syslog input and an http output in ClickHouse format. Groups
// close after 1 s without lines, so summaries reach ClickHouse while the daemon runs.
class DeliveryTest : public ClickHouseTest {
 protected:
  void TearDown() override {
    if (HasFailure())
      std::fprintf(stderr, "--- logfold stderr ---\n%s\n", daemon_.Stderr().c_str());
    ClickHouseTest::TearDown();
  }

  // Starts logfold with its output inserting into `table`, with `extra` output keys; a fatal
  // failure if it did not come up.
  void StartLogfold(std::string_view table, const Json& extra = Json::object()) {
    Json config = {
        {"log", {{"level", "info"}, {"stats_interval", "0"}}},
        {"inputs", Json::array({{{"name", "tcp-in"}, {"type", "tcp"}, {"port", 0}}})},
        {"engine", {{"window", "1s"}, {"max_hold", "10m"}}},
        {"workers", {{"threads", 2}}},
        {"outputs",
         Json::array({{{"name", "clickhouse"},
                       {"type", "http"},
                       {"format", "clickhouse"},
                       {"url", "http://127.0.0.1:" + std::to_string(clickhouse_.http_port())},
                       {"table", table},
                       {"batch_max_events", 2000},
                       {"batch_max_delay", "200ms"},
                       {"retry_initial_backoff", "50ms"},
                       {"retry_max_backoff", "500ms"},
                       {"request_timeout", "10s"}}})},
        {"metrics", {{"port", 0}}}};
    config["outputs"][0].update(extra);
    const std::string path = dir_ / "logfold.json";
    daemon_test::WriteFile(path, config.dump(2));
    ASSERT_TRUE(daemon_.Start(path)) << "logfold serve did not start";
    tcp_port_ = daemon_.InputPort("tcp-in", "tcp");
    ASSERT_NE(tcp_port_, 0);
  }

  // Sends `lines` (LF-framed) on one connection and waits until logfold has read them all.
  void Send(const std::vector<Line>& lines, std::size_t from, std::size_t to) {
    std::string data;
    for (std::size_t i = from; i < to; ++i) data += lines[i].text + "\n";
    TcpClient client(tcp_port_);
    ASSERT_TRUE(client.connected());
    ASSERT_TRUE(client.Send(data));
    client.Close();
    sent_ += to - from;
    ASSERT_TRUE(daemon_.WaitMetricAtLeast("logfold_received_total", {}, static_cast<double>(sent_),
                                          milliseconds(30000)))
        << "logfold received " << daemon_.Metric("logfold_received_total") << " of " << sent_;
  }

  // Waits until the rows in `table` stand for at least `lines` lines; false after `timeout`.
  bool WaitLines(std::string_view table, std::uint64_t lines,
                 milliseconds timeout = milliseconds(60000)) {
    const std::string sql = "SELECT sum(lines) FROM " + std::string(table);
    return WaitUntil(
        [&] {
          const std::string v = clickhouse_.QueryValue(sql);
          return !v.empty() && std::stoull(v) >= lines;
        },
        timeout, milliseconds(100));
  }

  // SIGTERM: logfold drains (every open group's summary goes out) and exits 0.
  void StopLogfold() {
    ASSERT_TRUE(daemon_.Signal(SIGTERM));
    const std::optional<int> code = daemon_.WaitExit(milliseconds(60000));
    ASSERT_TRUE(code.has_value()) << "logfold did not exit within 60 s of SIGTERM";
    EXPECT_EQ(*code, 0);
  }

  // Rows in `table` that are not unique events (a batch inserted twice would add some).
  std::string DuplicateRows(std::string_view table) {
    return clickhouse_.QueryValue("SELECT count() - uniqExact(kind, group_id, count_total) FROM " +
                                  std::string(table));
  }

  static constexpr int kRestartLines = 20000;

  // Half the lines, ClickHouse stopped (or killed) once it has rows, the other half while it
  // is down, ClickHouse started again; returns when logfold has exited after every line
  // reached ClickHouse.
  void RestartMidRun(bool crash) {
    const std::vector<Line> corpus = MakeCorpus(kRestartLines, 13);
    ASSERT_NO_FATAL_FAILURE(StartLogfold("logfold.events"));
    ASSERT_NO_FATAL_FAILURE(Send(corpus, 0, kRestartLines / 2));
    ASSERT_TRUE(WaitUntil(
        [&] { return clickhouse_.QueryValue("SELECT count() FROM logfold.events") != "0"; },
        milliseconds(30000), milliseconds(50)));
    ASSERT_TRUE(clickhouse_.Stop(/*kill=*/crash)) << "clickhouse-server did not exit";

    ASSERT_NO_FATAL_FAILURE(Send(corpus, kRestartLines / 2, kRestartLines));
    // The output has met the outage (a failed attempt counted) before ClickHouse returns.
    EXPECT_TRUE(daemon_.WaitMetricAtLeast("logfold_sink_retries_total", {"sink=\"clickhouse\""}, 1,
                                          milliseconds(30000)))
        << daemon_.Metrics();
    ASSERT_TRUE(clickhouse_.Start()) << clickhouse_.error();

    EXPECT_TRUE(WaitLines("logfold.events", kRestartLines)) << CountAndLines();
    EXPECT_EQ(Rejected(), 0);
    ASSERT_NO_FATAL_FAILURE(StopLogfold());
  }

  double Rejected() const {
    return daemon_.Metric("logfold_sink_rejected_events_total", {"sink=\"clickhouse\""});
  }

  DaemonProcess daemon_{dir_};
  std::uint16_t tcp_port_ = 0;
  std::size_t sent_ = 0;
};

TEST_F(DeliveryTest, EveryLineArrivesWithItsHeader) {
  constexpr int kLines = 30000;
  const std::vector<Line> corpus = MakeCorpus(kLines, 11);
  // As the deployment in docs/clickhouse.md: a user with a password, given in ClickHouse's
  // headers; and compressed: ClickHouse takes gzip request bodies as they are.
  ASSERT_NO_FATAL_FAILURE(StartLogfold(
      "logfold.events", {{"compression", "gzip"},
                         {"headers",
                          {{"X-ClickHouse-User", "logfold"},
                           {"X-ClickHouse-Key", std::string(ClickHouseServer::kPassword)}}}}));
  ASSERT_NO_FATAL_FAILURE(Send(corpus, 0, corpus.size()));
  // A line whose bytes are not UTF-8 (issue #21): stored exactly, in message_base64.
  Line raw;
  raw.text = "raw bytes \xff\xfe\xc3\x28 from a legacy sender";
  ASSERT_NO_FATAL_FAILURE(Send({raw}, 0, 1));
  // Live: groups close after 1 s idle, so every line is in ClickHouse before any shutdown.
  EXPECT_TRUE(WaitLines("logfold.events", kLines + 1)) << CountAndLines();
  EXPECT_EQ(Rejected(), 0);
  ASSERT_NO_FATAL_FAILURE(StopLogfold());

  EXPECT_EQ(clickhouse_.QueryValue("SELECT sum(lines) FROM logfold.events"),
            std::to_string(kLines + 1));
  // ClickHouse 18.16 has no base64Decode: the stored text is decoded here.
  EXPECT_EQ(FromBase64(clickhouse_.QueryValue(
                "SELECT message_base64 FROM logfold.events WHERE message_base64 != ''")),
            raw.text);
  EXPECT_EQ(DuplicateRows("logfold.events"), "0");
  // Near-duplicates folded: a group per kind of line and host, not a row per line.
  const std::string firsts =
      clickhouse_.QueryValue("SELECT count() FROM logfold.events WHERE kind = 'first'");
  EXPECT_LE(std::stoi(firsts), 100) << firsts;
  // host, app and severity survive: every first event is a line sent with exactly those.
  ExpectFirstEventsAreLinesSent(corpus);
  EXPECT_EQ(clickhouse_.QueryValue("SELECT arraySort(groupUniqArray(host)) FROM logfold.events "
                                   "WHERE kind = 'summary'"),
            "['','db-01','mail-01','web-01','web-02']");
}

// ClickHouse stopped (SIGTERM, as by its administrator) while logfold keeps receiving, then
// started again on the same port and data: the output retries until it is back, and every
// line is there exactly once.
TEST_F(DeliveryTest, NothingIsLostWhileClickHouseRestarts) {
  ASSERT_NO_FATAL_FAILURE(RestartMidRun(/*crash=*/false));
  EXPECT_EQ(clickhouse_.QueryValue("SELECT sum(lines) FROM logfold.events"),
            std::to_string(kRestartLines));
  EXPECT_EQ(DuplicateRows("logfold.events"), "0");
}

// The same with ClickHouse killed (SIGKILL, a crash): an insert it committed but could not
// answer is sent again, so rows may come twice (at least once), but none is missing.
TEST_F(DeliveryTest, NothingIsLostWhenClickHouseCrashes) {
  ASSERT_NO_FATAL_FAILURE(RestartMidRun(/*crash=*/true));
  EXPECT_EQ(clickhouse_.QueryValue("SELECT sum(l) FROM (SELECT any(lines) AS l FROM "
                                   "logfold.events GROUP BY kind, group_id, count_total)"),
            std::to_string(kRestartLines));
  std::fprintf(stderr, "rows inserted twice after the crash: %s\n",
               DuplicateRows("logfold.events").c_str());
}

// A table whose `app` column takes only the corpus's apps: ClickHouse refuses the one event
// of a line from another app. That event alone is counted, logged and dropped (its batch is
// split), every other line arrives, and nothing is retried forever.
TEST_F(DeliveryTest, ARejectedRowIsCountedAndTheRestDelivered) {
  std::string sql = daemon_test::ReadFile(kSourceDir + "/config/clickhouse.sql");
  const std::string app_column = "    app             String,";
  ASSERT_NE(sql.find(app_column), std::string::npos) << "config/clickhouse.sql changed";
  sql.replace(sql.find(app_column), app_column.size(),
              "    app Enum8('' = 0, 'sshd' = 1, 'nginx' = 2, 'kernel' = 3, 'postgres' = 4, "
              "'billing-api' = 5),");
  const std::string table = "CREATE TABLE IF NOT EXISTS logfold.events";
  ASSERT_NE(sql.find(table), std::string::npos);
  sql.replace(sql.find(table), table.size(), "CREATE TABLE logfold.strict");
  for (const std::string& statement : clickhouse_test::SplitSqlStatements(sql)) {
    const HttpResponse r = clickhouse_.Query(statement);
    ASSERT_EQ(r.status, 200) << r.body;
  }

  constexpr int kLines = 10000;
  std::vector<Line> corpus = MakeCorpus(kLines, 17);
  // One line from an app the table does not know, in the middle of the stream.
  Line rogue = corpus[kLines / 2 + 1];
  ASSERT_GE(rogue.severity, 0);
  rogue.text.replace(rogue.text.find(" " + rogue.app + " "), rogue.app.size() + 2, " rogue ");
  rogue.text += " (the only line of app rogue)";
  corpus.insert(corpus.begin() + kLines / 2, rogue);

  ASSERT_NO_FATAL_FAILURE(StartLogfold("logfold.strict"));
  ASSERT_NO_FATAL_FAILURE(Send(corpus, 0, corpus.size()));
  EXPECT_TRUE(WaitLines("logfold.strict", kLines)) << CountAndLines();
  EXPECT_TRUE(daemon_.WaitMetricAtLeast("logfold_sink_rejected_events_total",
                                        {"sink=\"clickhouse\""}, 1, milliseconds(30000)));
  EXPECT_EQ(Rejected(), 1);
  EXPECT_NE(daemon_.Stderr().find("Unknown element 'rogue'"), std::string::npos)
      << "the rejection is logged with ClickHouse's reason";
  ASSERT_NO_FATAL_FAILURE(StopLogfold());

  EXPECT_EQ(clickhouse_.QueryValue("SELECT sum(lines) FROM logfold.strict"),
            std::to_string(kLines));
  EXPECT_EQ(DuplicateRows("logfold.strict"), "0");
  EXPECT_EQ(clickhouse_.QueryValue("SELECT count() FROM logfold.strict WHERE message LIKE "
                                   "'%only line of app rogue%'"),
            "0");
}

// logfold started before the table exists (ClickHouse answers 404, "Code: 60 ... doesn't
// exist"): that is not the events' fault, so they wait for the table instead of being
// dropped as rejected.
TEST_F(DeliveryTest, EventsWaitForAMissingTable) {
  ASSERT_EQ(clickhouse_.QueryValue("DROP TABLE logfold.events"), "");
  ASSERT_EQ(clickhouse_.error(), "");
  constexpr int kLines = 5000;
  const std::vector<Line> corpus = MakeCorpus(kLines, 19);
  ASSERT_NO_FATAL_FAILURE(StartLogfold("logfold.events"));
  ASSERT_NO_FATAL_FAILURE(Send(corpus, 0, corpus.size()));
  EXPECT_TRUE(daemon_.WaitMetricAtLeast("logfold_sink_retries_total", {"sink=\"clickhouse\""}, 1,
                                        milliseconds(30000)))
      << daemon_.Metrics();
  EXPECT_EQ(Rejected(), 0);
  ASSERT_TRUE(clickhouse_.ApplySqlFile(kSourceDir + "/config/clickhouse.sql"))
      << clickhouse_.error();
  EXPECT_TRUE(WaitLines("logfold.events", kLines)) << CountAndLines();
  EXPECT_EQ(Rejected(), 0);
  ASSERT_NO_FATAL_FAILURE(StopLogfold());
  EXPECT_EQ(clickhouse_.QueryValue("SELECT sum(lines) FROM logfold.events"),
            std::to_string(kLines));
}

// The http output over HTTPS: ClickHouse's https_port with a certificate from a test CA.
class HttpsDeliveryTest : public DeliveryTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    ASSERT_TRUE(pki_.MakeCa()) << pki_.error();
    ASSERT_TRUE(pki_.MakeLeaf("clickhouse", "localhost")) << pki_.error();
    clickhouse_.EnableHttps(pki_.Cert("clickhouse"), pki_.Key("clickhouse"));
    DeliveryTest::SetUp();
  }

  // The output's url and tls block; ca_file is a copy the test may replace.
  Json Https() const {
    return {{"url", "https://localhost:" + std::to_string(clickhouse_.https_port())},
            {"tls", {{"ca_file", (dir_ / "trusted-ca.pem").string()}}}};
  }

  daemon_test::TestPki pki_{dir_};
  daemon_test::TestPki other_pki_{dir_, "other-ca"};
};

// As a managed store would be used: HTTPS, and the password read from a file (a systemd
// credential) rather than written in the config.
TEST_F(HttpsDeliveryTest, EveryLineArrivesOverHttps) {
  std::filesystem::copy_file(pki_.CaCert(), dir_ / "trusted-ca.pem");
  daemon_test::WriteFile(dir_ / "ch-key", std::string(ClickHouseServer::kPassword) + "\n");
  constexpr int kLines = 20000;
  const std::vector<Line> corpus = MakeCorpus(kLines, 23);
  Json extra = Https();
  extra["headers"] = {{"X-ClickHouse-User", "logfold"}};
  extra["header_files"] = {{"X-ClickHouse-Key", (dir_ / "ch-key").string()}};
  ASSERT_NO_FATAL_FAILURE(StartLogfold("logfold.events", extra));
  ASSERT_NO_FATAL_FAILURE(Send(corpus, 0, corpus.size()));
  EXPECT_TRUE(WaitLines("logfold.events", kLines)) << CountAndLines();
  EXPECT_EQ(Rejected(), 0);
  ASSERT_NO_FATAL_FAILURE(StopLogfold());
  EXPECT_EQ(clickhouse_.QueryValue("SELECT sum(lines) FROM logfold.events"),
            std::to_string(kLines));
  EXPECT_EQ(DuplicateRows("logfold.events"), "0");
  ExpectFirstEventsAreLinesSent(corpus);
}

// The output trusts the wrong CA: every attempt fails with the verification reason, the
// events wait; once the CA file is fixed and logfold reloaded (SIGHUP), they all arrive.
TEST_F(HttpsDeliveryTest, WrongCaFailsClearlyAndEventsWaitForTheFix) {
  ASSERT_TRUE(other_pki_.MakeCa()) << other_pki_.error();
  std::filesystem::copy_file(other_pki_.CaCert(), dir_ / "trusted-ca.pem");
  constexpr int kLines = 5000;
  const std::vector<Line> corpus = MakeCorpus(kLines, 29);
  ASSERT_NO_FATAL_FAILURE(StartLogfold("logfold.events", Https()));
  ASSERT_NO_FATAL_FAILURE(Send(corpus, 0, corpus.size()));
  EXPECT_TRUE(daemon_.WaitMetricAtLeast("logfold_sink_tls_verify_failures_total",
                                        {"sink=\"clickhouse\""}, 2, milliseconds(30000)))
      << daemon_.Metrics();
  EXPECT_TRUE(
      daemon_.WaitForStderr("server certificate refused: certificate verify failed "
                            "(unable to get local issuer certificate)"))
      << daemon_.Stderr();
  EXPECT_EQ(clickhouse_.QueryValue("SELECT count() FROM logfold.events"), "0");
  EXPECT_EQ(Rejected(), 0);

  std::filesystem::copy_file(pki_.CaCert(), dir_ / "trusted-ca.pem",
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_TRUE(daemon_.Signal(SIGHUP));
  EXPECT_TRUE(WaitLines("logfold.events", kLines)) << CountAndLines();
  EXPECT_EQ(Rejected(), 0);
  ASSERT_NO_FATAL_FAILURE(StopLogfold());
  EXPECT_EQ(clickhouse_.QueryValue("SELECT sum(lines) FROM logfold.events"),
            std::to_string(kLines));
}

}  // namespace
}  // namespace logfold
