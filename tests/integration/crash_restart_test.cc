// `logfold serve` killed with SIGKILL and started again on the same state directory: what the
// engine learned from the stream (a word position seen taking many values) is in the worker
// checkpoints on disk and comes back with the restart, so the restarted daemon folds lines it
// could fold only by that evidence; a daemon started without it (a fresh state directory) splits
// them. Every line sent is counted once over the two runs (firsts plus summary counts).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "daemon/state/checkpoint_file.h"
#include "tests/support/daemon_process.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::LinesAccounted;
using daemon_test::TcpClient;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;

// ThreadSanitizer slows the daemon several times over: deadlines scale.
#if defined(__SANITIZE_THREAD__)
constexpr int kSlowdown = 4;
#else
constexpr int kSlowdown = 1;
#endif

// One service removing one name after another: otherwise-identical lines whose only
// difference is one word. Ten names teach the engine that the word is a variable (it takes
// `engine.variable_after_values`, 6, distinct words before it does).
const std::vector<std::string> kTeach = {"chargen", "echo",  "discard", "daytime", "finger",
                                         "gopher",  "ident", "netstat", "systat",  "whois"};
// Four more names after the restart: one group and a summary of three with the evidence; four
// `first`s without it (four values are too few to learn from).
const std::vector<std::string> kProbe = {"telnet", "rlogin", "tftp", "uucp"};

std::string Line(const std::string& name) {
  return "<30>1 2026-11-28T12:00:00.000Z host1 inetd - - - removing " + name + "\n";
}

// The complete NDJSON lines of a file written so far (a line being written is left out).
std::vector<Json> PeekEvents(const std::filesystem::path& path) {
  std::string text = daemon_test::ReadFile(path);
  text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  std::vector<Json> events;
  std::string error;
  daemon_test::ParseNdjson(text, events, error);
  return events;
}

std::size_t Count(const std::vector<Json>& events, const std::string& kind) {
  std::size_t n = 0;
  for (const Json& e : events) n += e.value("kind", "") == kind ? 1 : 0;
  return n;
}

// What the worker checkpoints in `state` hold: all of them valid, their open groups, and
// whether one holds a word position learned to be a variable.
struct OnDisk {
  bool valid = false;
  std::size_t files = 0, groups = 0;
  bool learned_variable = false;
};

OnDisk ReadCheckpoints(const std::filesystem::path& state) {
  OnDisk d;
  std::error_code ec;
  d.valid = true;
  for (const auto& entry : std::filesystem::directory_iterator(state, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("worker-") || !name.ends_with(".state")) continue;
    Checkpoint c;
    if (!ParseCheckpoint(daemon_test::ReadFile(entry.path()), c).empty()) {
      d.valid = false;  // being replaced as we read: try again
      continue;
    }
    ++d.files;
    d.groups += c.groups.size();
    for (const SiblingTable::Entry& s : c.learned.siblings) {
      d.learned_variable = d.learned_variable || s.variable;
    }
  }
  return d.valid && !ec ? d : OnDisk{};
}

class CrashRestartTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok() && logs1_.ok() && logs2_.ok()); }

  void TearDown() override {
    if (HasFailure()) {
      std::fprintf(stderr, "--- first run's stderr ---\n%s\n--- second run's stderr ---\n%s\n",
                   first_.Stderr().c_str(), second_.Stderr().c_str());
    }
  }

  // Checkpoints every 100 ms; a 500 ms window closes each group soon after its lines, so what
  // carries the folding over the crash is the learned evidence alone, no open group.
  std::string Config(const std::string& name, const std::filesystem::path& state) const {
    Json c = daemon_test::LoopbackConfig(dir_ / (name + ".ndjson"));
    c["inputs"] = Json::array({{{"name", "tcp-in"}, {"type", "tcp"}, {"port", 0}}});
    c["engine"]["window"] = "500ms";
    c["state"] = {{"directory", state.string()}, {"checkpoint_interval", "100ms"}};
    const std::string path = dir_ / (name + ".json");
    daemon_test::WriteFile(path, c.dump(2));
    return path;
  }

  static bool Send(const DaemonProcess& d, const std::vector<std::string>& names) {
    TcpClient client(d.InputPort("tcp-in", "tcp"));
    std::string batch;
    for (const std::string& n : names) batch += Line(n);
    return client.connected() && client.Send(batch);
  }

  // The first run: teach, wait until every line is accounted for in the events and a
  // checkpoint on disk holds the learned variable and no open group, then SIGKILL.
  void TeachAndKill() {
    ASSERT_TRUE(first_.Start(Config("run1", dir_ / "state"))) << first_.Stderr();
    ASSERT_TRUE(Send(first_, kTeach));
    const milliseconds deadline(15000 * kSlowdown);
    ASSERT_TRUE(
        WaitUntil([&] { return LinesAccounted(PeekEvents(dir_ / "run1.ndjson")) == kTeach.size(); },
                  deadline))
        << "the taught lines' events did not all come out";
    ASSERT_TRUE(WaitUntil(
        [&] {
          const OnDisk d = ReadCheckpoints(dir_ / "state");
          return d.files > 0 && d.groups == 0 && d.learned_variable;
        },
        deadline))
        << "no checkpoint with the learned variable and no open group reached the disk";
    // The teaching folded too (the first run learned): fewer `first`s than lines.
    EXPECT_LT(Count(PeekEvents(dir_ / "run1.ndjson"), "first"), kTeach.size());
    ASSERT_TRUE(first_.Signal(SIGKILL));
    EXPECT_EQ(first_.WaitExit(milliseconds(10000)), 128 + SIGKILL);
  }

  // The second run on `state`: the probe lines, then SIGTERM (which summarises every group).
  // Its events.
  std::vector<Json> Probe(const std::filesystem::path& state) {
    if (!second_.Start(Config("run2", state))) {
      ADD_FAILURE() << "the second run did not start";
      return {};
    }
    EXPECT_TRUE(Send(second_, kProbe));
    EXPECT_TRUE(second_.WaitMetricAtLeast("logfold_lines_processed_total", {},
                                          static_cast<double>(kProbe.size()),
                                          milliseconds(15000 * kSlowdown)));
    EXPECT_TRUE(second_.Signal(SIGTERM));
    EXPECT_EQ(second_.WaitExit(milliseconds(30000)), 0);
    std::vector<Json> events;
    std::string error;
    EXPECT_TRUE(
        daemon_test::ParseNdjson(daemon_test::ReadFile(dir_ / "run2.ndjson"), events, error))
        << error;
    return events;
  }

  TempDir dir_, logs1_, logs2_;
  DaemonProcess first_{logs1_}, second_{logs2_};
};

TEST_F(CrashRestartTest, LearnedVariableSurvivesKill9AndFoldsAfterTheRestart) {
  TeachAndKill();
  if (HasFatalFailure()) return;
  const std::vector<Json> after = Probe(dir_ / "state");
  // One group: the first probe line opens it, the other three fold into it by the restored
  // evidence (the restart restored no open group: each had closed).
  ASSERT_EQ(Count(after, "first"), 1u) << "the restarted daemon split what it had learned to fold";
  ASSERT_EQ(Count(after, "summary"), 1u);
  const Json& first = after[0];
  const Json& summary = after[1];
  EXPECT_EQ(first["message"], "removing telnet");
  EXPECT_EQ(summary["group_id"], first["group_id"]);
  EXPECT_EQ(summary["template"], "removing <*>");
  EXPECT_EQ(summary["count"], 3);
  EXPECT_EQ(summary["count_total"], 4);
  // Every line sent is counted once over the two runs: no line lost or repeated by the crash.
  EXPECT_EQ(LinesAccounted(PeekEvents(dir_ / "run1.ndjson")) + LinesAccounted(after),
            kTeach.size() + kProbe.size());
}

// The control: the same probe after the same crash, but started on an empty state directory
// (nothing restored), splits into one group per line. So the fold above is the evidence's.
TEST_F(CrashRestartTest, WithoutTheCheckpointedEvidenceTheSameLinesSplit) {
  TeachAndKill();
  if (HasFatalFailure()) return;
  const std::vector<Json> after = Probe(dir_ / "fresh-state");
  EXPECT_EQ(Count(after, "first"), kProbe.size());
  EXPECT_EQ(Count(after, "summary"), 0u);
  EXPECT_EQ(LinesAccounted(after), kProbe.size());
}

}  // namespace
}  // namespace logfold
