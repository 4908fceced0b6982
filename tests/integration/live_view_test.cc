// The live view and per-output routing against a running `logfold serve`: GET /api/groups and
// /api/stats with real HTTP requests, `logfold top` driven in tmux, the page at / rendered by a
// real headless Chromium, and two outputs with different selections counted event by event.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::HttpGet;
using daemon_test::Json;
using daemon_test::RunCommand;
using daemon_test::TcpClient;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<Json> Events(const std::filesystem::path& path) {
  std::vector<Json> events;
  std::string error;
  EXPECT_TRUE(daemon_test::ParseNdjson(daemon_test::ReadFile(path), events, error)) << error;
  return events;
}

// Three groups of different sizes from two hosts and three apps.
constexpr int kRequests = 300, kRefused = 40, kJobs = 5;
constexpr char kRequestTemplate[] = "request <*> took <*> ms";
constexpr char kRefusedTemplate[] = "connection from <*> refused";
constexpr char kJobTemplate[] = "job <*> done";

class LiveViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    Json config = daemon_test::LoopbackConfig(dir_ / "events.ndjson");
    config["inputs"] = Json::array({{{"name", "tcp-in"}, {"type", "tcp"}, {"port", 0}}});
    daemon_test::WriteFile(dir_ / "config.json", config.dump());
    ASSERT_TRUE(daemon_.Start(dir_ / "config.json")) << daemon_.Stderr();
    port_ = daemon_.InputPort("tcp-in", "tcp");
    metrics_ = daemon_.MetricsPort();
    ASSERT_NE(port_, 0);
    ASSERT_NE(metrics_, 0);
  }

  void SendLines(const std::string& host, const std::string& app, int n,
                 const std::string& (*text)(int, std::string&)) {
    TcpClient c(port_);
    ASSERT_TRUE(c.connected());
    std::string out, buf;
    for (int i = 0; i < n; ++i) {
      out += "<11>Nov 25 13:00:00 " + host + " " + app + ": " + text(i, buf) + "\n";
    }
    ASSERT_TRUE(c.Send(out));
  }
  void SendAll() {
    SendLines("web1", "api", kRequests, [](int i, std::string& b) -> const std::string& {
      return b = "request " + std::to_string(i) + " took " + std::to_string(i * 7) + " ms";
    });
    SendLines("web2", "db", kRefused, [](int i, std::string& b) -> const std::string& {
      return b = "connection from 10.0.0." + std::to_string(i) + " refused";
    });
    SendLines("web1", "cron", kJobs, [](int i, std::string& b) -> const std::string& {
      return b = "job " + std::to_string(i) + " done";
    });
  }

  // GET /api/groups?QUERY, parsed; fails the test on a non-200 answer.
  Json Groups(const std::string& query) {
    const auto r = HttpGet(metrics_, "/api/groups?" + query);
    EXPECT_EQ(r.status, 200) << r.body;
    return Json::parse(r.body, nullptr, false);
  }
  static std::vector<std::string> Templates(const Json& answer) {
    std::vector<std::string> t;
    for (const Json& g : answer["groups"]) t.push_back(g.value("template", ""));
    return t;
  }
  // Waits until the snapshots list every group with its whole count.
  bool WaitAllListed(std::uint64_t total) {
    return WaitUntil(
               [&] {
                 std::uint64_t n = 0;
                 const Json answer = Groups("sort=count&limit=1000");
                 for (const Json& g : answer["groups"]) n += g.value("count", std::uint64_t{0});
                 return n == total;
               },
               milliseconds(15000), milliseconds(100)) ||
           (ADD_FAILURE() << Groups("sort=count&limit=1000").dump(), false);
  }

  TempDir dir_;
  DaemonProcess daemon_{dir_};
  std::uint16_t port_ = 0, metrics_ = 0;
};

TEST_F(LiveViewTest, GroupsApiSortsFiltersAndLimits) {
  SendAll();
  ASSERT_TRUE(WaitAllListed(kRequests + kRefused + kJobs));

  const Json by_count = Groups("sort=count");
  EXPECT_THAT(Templates(by_count),
              ::testing::ElementsAre(kRequestTemplate, kRefusedTemplate, kJobTemplate));
  EXPECT_EQ(by_count["groups"][0]["count"], kRequests);
  EXPECT_EQ(by_count["groups"][0]["host"], "web1");
  EXPECT_EQ(by_count["groups"][0]["app"], "api");
  EXPECT_EQ(by_count["open_groups"], 3);
  EXPECT_EQ(Groups("sort=count&limit=2")["groups"].size(), 2u);
  EXPECT_THAT(Templates(Groups("host=web2")), ::testing::ElementsAre(kRefusedTemplate));
  EXPECT_THAT(Templates(Groups("app=cron")), ::testing::ElementsAre(kJobTemplate));
  EXPECT_THAT(Templates(Groups("q=REFUSED")), ::testing::ElementsAre(kRefusedTemplate));
  EXPECT_THAT(Templates(Groups("q=took+%3C*%3E")), ::testing::ElementsAre(kRequestTemplate));
  EXPECT_TRUE(Groups("host=nobody")["groups"].empty());

  // A burst of the smallest group makes it the fastest now, whatever the totals say.
  SendLines("web1", "cron", 400, [](int i, std::string& b) -> const std::string& {
    return b = "job " + std::to_string(i) + " done";
  });
  ASSERT_TRUE(WaitUntil(
      [&] {
        const Json top = Groups("sort=rate&limit=1");
        return !top["groups"].empty() && top["groups"][0]["template"] == kJobTemplate &&
               top["groups"][0]["rate"].get<double>() > 0 &&
               top["groups"][0]["count"] == kJobs + 400;
      },
      milliseconds(15000), milliseconds(100)));
  EXPECT_EQ(Groups("sort=recent&limit=1")["groups"][0]["template"], kJobTemplate);

  const Json stats = Json::parse(HttpGet(metrics_, "/api/stats").body, nullptr, false);
  EXPECT_EQ(stats["lines_received"], kRequests + kRefused + kJobs + 400);
  EXPECT_EQ(stats["events_first"], 3);
  EXPECT_EQ(stats["open_groups"], 3);
}

TEST_F(LiveViewTest, BadParametersAreRefusedWithAMessage) {
  const struct {
    const char* query;
    const char* says;
  } cases[] = {
      {"sort=size", "sort"},
      {"limit=0", "limit"},
      {"limit=1001", "limit"},
      {"limit=ten", "limit"},
      {"color=red", "unknown parameter \\\"color\\\""},
      {"q=%ZZ", "percent-encoding"},
  };
  for (const auto& c : cases) {
    const auto r = HttpGet(metrics_, std::string("/api/groups?") + c.query);
    EXPECT_EQ(r.status, 400) << c.query;
    EXPECT_THAT(r.body, HasSubstr(c.says)) << c.query;
    EXPECT_THAT(r.body, HasSubstr("\"error\"")) << c.query;
  }
  EXPECT_EQ(HttpGet(metrics_, "/api/stats?x=1").status, 400);
  EXPECT_EQ(daemon_.Metric("logfold_api_bad_requests_total"), std::size(cases) + 1);
  EXPECT_EQ(HttpGet(metrics_, "/api/nothing").status, 404);
  const auto page = HttpGet(metrics_, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_THAT(page.body, HasSubstr("<title>logfold"));
  EXPECT_THAT(page.body, Not(HasSubstr("http://")));  // self-contained: nothing fetched elsewhere
}

// tmux with a private server socket, so that the test neither sees nor disturbs a user's.
class Tmux {
 public:
  explicit Tmux(const TempDir& dir) : dir_(dir), socket_((dir / "tmux.sock").string()) {}
  ~Tmux() { Run({"kill-server"}); }
  daemon_test::CommandResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), {"tmux", "-S", socket_});
    return RunCommand(args, dir_);
  }
  std::string Screen() { return Run({"capture-pane", "-p", "-t", "top"}).out; }
  bool WaitScreen(const std::function<bool(const std::string&)>& pred) {
    return WaitUntil([&] { return pred(Screen()); }, milliseconds(15000), milliseconds(100));
  }

 private:
  const TempDir& dir_;
  std::string socket_;
};

TEST_F(LiveViewTest, TopShowsTheFloodedGroupSortsFiltersAndQuits) {
  if (!daemon_test::HaveProgram("tmux")) GTEST_SKIP() << "tmux is not installed";
  SendAll();
  ASSERT_TRUE(WaitAllListed(kRequests + kRefused + kJobs));
  const std::string url = "http://127.0.0.1:" + std::to_string(metrics_);

  const auto once =
      RunCommand({LOGFOLD_BINARY, "top", "--once", "--sort", "count", "--url", url}, dir_);
  EXPECT_EQ(once.exit_code, 0) << once.err;
  EXPECT_THAT(once.out, HasSubstr(kRequestTemplate));
  EXPECT_THAT(once.out, HasSubstr("open groups 3"));
  const auto refused =
      RunCommand({LOGFOLD_BINARY, "top", "--once", "--url", "http://127.0.0.1:1"}, dir_);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("cannot connect"));

  Tmux tmux(dir_);
  ASSERT_EQ(tmux.Run({"new-session", "-d", "-s", "top", "-x", "160", "-y", "20",
                      std::string(LOGFOLD_BINARY) + " top --interval 0.3 --url " + url})
                .exit_code,
            0);
  ASSERT_TRUE(tmux.WaitScreen([](const std::string& s) {
    return s.find(kRequestTemplate) != std::string::npos &&
           s.find(kRefusedTemplate) != std::string::npos;
  })) << tmux.Screen();
  // c: by count, so the 300-line group leads the table.
  tmux.Run({"send-keys", "-t", "top", "c"});
  ASSERT_TRUE(tmux.WaitScreen([](const std::string& s) {
    const std::size_t header = s.find("TEMPLATE");
    return s.find("sort: count") != std::string::npos && header != std::string::npos &&
           s.find(kRequestTemplate) < s.find(kRefusedTemplate);
  })) << tmux.Screen();
  // /: a filter keeps only the matching group.
  tmux.Run({"send-keys", "-t", "top", "/"});
  tmux.Run({"send-keys", "-t", "top", "refused", "Enter"});
  ASSERT_TRUE(tmux.WaitScreen([](const std::string& s) {
    return s.find("filter: refused") != std::string::npos &&
           s.find(kRefusedTemplate) != std::string::npos &&
           s.find(kRequestTemplate) == std::string::npos;
  })) << tmux.Screen();
  // q quits: the session (whose only program is top) ends.
  tmux.Run({"send-keys", "-t", "top", "q"});
  EXPECT_TRUE(WaitUntil(
      [&] {
        return tmux.Run({"has-session", "-t", "top"}).exit_code != 0;
      },
      milliseconds(10000)));
}

TEST_F(LiveViewTest, PageInHeadlessChromiumListsTheFloodedGroupAndUpdates) {
  std::string chromium = daemon_test::FindProgram("chromium");
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  SendAll();
  ASSERT_TRUE(WaitAllListed(kRequests + kRefused + kJobs));
  const std::string url = "http://127.0.0.1:" + std::to_string(metrics_) + "/";
  const std::filesystem::path artifacts =
      std::filesystem::current_path() / "test-artifacts" / "live_view";
  std::filesystem::create_directories(artifacts);
  // The page fetches the API and fills its table in script: Chromium's virtual time lets the
  // fetches finish before the DOM is dumped.
  auto render = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {chromium,
                                     "--headless",
                                     "--no-sandbox",
                                     "--disable-gpu",
                                     "--disable-dev-shm-usage",
                                     "--user-data-dir=" + (dir_ / "chromium").string(),
                                     "--virtual-time-budget=5000",
                                     "--window-size=1280,720"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(url);
    return RunCommand(argv, dir_, milliseconds(60000));
  };
  const double polls_before = daemon_.Metric("logfold_api_requests_total");
  const auto first = render({"--dump-dom"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::size_t table = first.out.find("<tbody id=\"groups\">");
  ASSERT_NE(table, std::string::npos) << first.out;
  EXPECT_THAT(first.out.substr(table), HasSubstr("request &lt;*&gt; took &lt;*&gt; ms"));
  EXPECT_THAT(first.out.substr(table), HasSubstr("web2"));
  EXPECT_THAT(first.out, HasSubstr("open groups"));
  // The page refreshes itself: one load of 5 s (virtual time, 2 s period) asked again.
  EXPECT_GE(daemon_.Metric("logfold_api_requests_total") - polls_before, 3);

  // A new group appears on the next load.
  SendLines("web3", "auth", 50, [](int i, std::string& b) -> const std::string& {
    return b = "login failed for user u" + std::to_string(i);
  });
  ASSERT_TRUE(WaitAllListed(kRequests + kRefused + kJobs + 50));
  const auto second = render({"--dump-dom"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("login failed for user"));
  const auto shot = render({"--screenshot=" + (artifacts / "live_view.png").string()});
  EXPECT_EQ(shot.exit_code, 0) << shot.err;
  EXPECT_GT(std::filesystem::file_size(artifacts / "live_view.png"), 10'000u);
}

// Two outputs with different selections next to one that takes everything: each gets exactly
// what it selected, and the full output still accounts for every line.
TEST(RoutingTest, EachOutputGetsExactlyWhatItSelects) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Json config = daemon_test::LoopbackConfig(dir / "all.ndjson");
  config["outputs"].push_back({{"name", "alerts"},
                               {"type", "file"},
                               {"path", dir / "alerts.ndjson"},
                               {"select", {{"kinds", {"first"}}, {"min_severity", "err"}}}});
  config["outputs"].push_back({{"name", "store"},
                               {"type", "file"},
                               {"path", dir / "store.ndjson"},
                               {"select", {{"kinds", {"summary"}}, {"apps", {"api", "db"}}}}});
  daemon_test::WriteFile(dir / "config.json", config.dump());
  DaemonProcess daemon(dir);
  ASSERT_TRUE(daemon.Start(dir / "config.json")) << daemon.Stderr();
  const std::uint16_t port = daemon.InputPort("tcp-in", "tcp");
  // Severity 3 (err) from api, 6 (info) from db, 2 (crit) from cron: 3 groups.
  std::string lines;
  for (int i = 0; i < 100; ++i) {
    lines += "<11>Nov 25 13:00:00 web1 api: request " + std::to_string(i) + " failed\n";
    lines += "<14>Nov 25 13:00:00 web2 db: query " + std::to_string(i) + " ran\n";
    if (i < 10) lines += "<10>Nov 25 13:00:00 web1 cron: job " + std::to_string(i) + " died\n";
  }
  {
    TcpClient c(port);
    ASSERT_TRUE(c.Send(lines));
  }
  ASSERT_TRUE(daemon.WaitMetricAtLeast("logfold_lines_processed_total", {}, 210));
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  ASSERT_EQ(daemon.WaitExit(), 0) << daemon.Stderr();

  const auto all = Events(dir / "all.ndjson");
  const auto alerts = Events(dir / "alerts.ndjson");
  const auto store = Events(dir / "store.ndjson");
  EXPECT_EQ(daemon_test::LinesAccounted(all), 210u);
  // alerts: the firsts of the err (api) and crit (cron) groups, nothing else.
  ASSERT_EQ(alerts.size(), 2u);
  for (const Json& e : alerts) {
    EXPECT_EQ(e["kind"], "first");
    EXPECT_LE(e["severity"].get<int>(), 3);
  }
  // store: the summaries of api and db, with every line those groups absorbed.
  std::uint64_t summarised = 0;
  for (const Json& e : store) {
    EXPECT_EQ(e["kind"], "summary");
    EXPECT_NE(e["app"], "cron");
    summarised += e.value("count", std::uint64_t{0});
  }
  EXPECT_EQ(summarised, 2u * 99);
}

}  // namespace
}  // namespace logfold
