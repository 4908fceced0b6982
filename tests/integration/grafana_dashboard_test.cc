// config/grafana-dashboard.json: parses, is shaped as Grafana imports it, and names only
// metrics (and labels) that a running daemon exports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "tests/support/daemon_process.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::TempDir;

TEST(GrafanaDashboardTest, ParsesAndNamesOnlyExportedMetrics) {
  const Json dash = Json::parse(
      daemon_test::ReadFile(std::string(LOGFOLD_SOURCE_DIR) + "/config/grafana-dashboard.json"),
      nullptr, false);
  ASSERT_TRUE(dash.is_object()) << "config/grafana-dashboard.json is not a JSON object";
  EXPECT_EQ(dash.value("uid", ""), "logfold");
  ASSERT_TRUE(dash.contains("panels") && dash["panels"].is_array());
  ASSERT_FALSE(dash["panels"].empty());

  // Every metric family a daemon with syslog inputs, a file and an http output exports.
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Json config = daemon_test::LoopbackConfig(dir / "events.ndjson");
  config["outputs"].push_back({{"name", "store"},
                               {"type", "http"},
                               {"url", "http://127.0.0.1:1/"},
                               {"format", "clickhouse"},
                               {"table", "logs"},
                               {"when_full", "drop"}});
  daemon_test::WriteFile(dir / "config.json", config.dump());
  DaemonProcess daemon(dir);
  ASSERT_TRUE(daemon.Start(dir / "config.json")) << daemon.Stderr();
  const std::string metrics = daemon.Metrics();
  std::set<std::string> families;
  const std::regex type_line(R"(# TYPE (logfold_[a-z0-9_]+) )");
  for (std::sregex_iterator it(metrics.begin(), metrics.end(), type_line), end; it != end; ++it) {
    families.insert((*it)[1]);
  }
  ASSERT_FALSE(families.empty()) << metrics;

  const std::regex metric_name(R"(logfold_[a-z0-9_]+)");
  const std::regex by_labels(R"(by \(([a-z_, ]+)\))");
  std::set<int> ids;
  for (const Json& panel : dash["panels"]) {
    const std::string title = panel.value("title", "");
    EXPECT_FALSE(title.empty());
    EXPECT_TRUE(ids.insert(panel.value("id", -1)).second) << "duplicate panel id: " << title;
    EXPECT_TRUE(panel.contains("gridPos")) << title;
    ASSERT_TRUE(panel.contains("targets") && !panel["targets"].empty()) << title;
    for (const Json& target : panel["targets"]) {
      const std::string expr = target.value("expr", "");
      ASSERT_FALSE(expr.empty()) << title;
      bool named = false;
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric_name), end; it != end; ++it) {
        named = true;
        EXPECT_TRUE(families.count(it->str())) << title << ": " << it->str() << " is not exported";
      }
      EXPECT_TRUE(named) << title << ": " << expr;
      for (std::sregex_iterator it(expr.begin(), expr.end(), by_labels), end; it != end; ++it) {
        std::string labels = (*it)[1];
        for (std::size_t start = 0; start < labels.size();) {
          std::size_t comma = labels.find(',', start);
          if (comma == std::string::npos) comma = labels.size();
          std::string label = labels.substr(start, comma - start);
          label.erase(0, label.find_first_not_of(' '));
          label.erase(label.find_last_not_of(' ') + 1);
          EXPECT_NE(metrics.find(label + "=\""), std::string::npos)
              << title << ": no exported sample has the label " << label;
          start = comma + 1;
        }
      }
    }
  }
}

}  // namespace
}  // namespace logfold
