// A full disk caused for real: outputs and disk buffers on a small tmpfs that the test fills,
// then frees. Nothing is lost, no event is written in part, and the errors are counted.
// Needs permission to mount a tmpfs (root, as CI runs); skipped otherwise, saying why.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/late_collector.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::LateCollector;
using daemon_test::TcpClient;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using std::chrono::milliseconds;

#if defined(__SANITIZE_THREAD__)
constexpr int kSlowdown = 4;
#else
constexpr int kSlowdown = 1;
#endif

constexpr int kLines = 2000;  // ~0.7 MB of annotate events: more than the free space left

// A tmpfs of `size` mounted on `path` for the test's lifetime.
class SmallDisk {
 public:
  SmallDisk(const std::filesystem::path& path, const std::string& size) : path_(path) {
    std::filesystem::create_directories(path_);
    const std::string options = "size=" + size + ",mode=0755";
    if (::mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) == 0) {
      mounted_ = true;
    } else {
      error_ = std::strerror(errno);
    }
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

  // Fills the disk with a file until `keep_free` bytes are left; true on success.
  bool FillLeaving(std::uintmax_t keep_free) {
    std::ofstream out(path_ / "filler", std::ios::binary);
    const std::string block(4096, 'f');
    while (std::filesystem::space(path_).available > keep_free + block.size()) {
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
      out.flush();
      if (!out) return false;
    }
    return true;
  }
  void Free() { std::filesystem::remove(path_ / "filler"); }

 private:
  std::filesystem::path path_;
  bool mounted_ = false;
  std::string error_;
};

class DiskFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    disk_ = std::make_unique<SmallDisk>(dir_ / "disk", "4m");
    if (!disk_->mounted()) {
      GTEST_SKIP() << "cannot mount a tmpfs here (" << disk_->error()
                   << "); this test needs root, as CI has";
    }
    ASSERT_TRUE(disk_->FillLeaving(64 * 1024));
  }
  void TearDown() override {
    if (HasFailure() && daemon_ != nullptr)
      std::fprintf(stderr, "--- daemon stderr (tail) ---\n%s\n", LogTail().c_str());
  }

  std::string LogTail() const {
    const std::string log = daemon_->Stderr();
    return log.size() > 6000 ? log.substr(log.size() - 6000) : log;
  }

  bool Start(const Json& config) {
    daemon_test::WriteFile(dir_ / "logfold.json", config.dump(2));
    daemon_ = std::make_unique<DaemonProcess>(dir_);
    return daemon_->Start(dir_ / "logfold.json");
  }

  void SendLines() {
    TcpClient client(daemon_->InputPort("tcp-in", "tcp"));
    std::string payload;
    for (int i = 0; i < kLines; ++i) {
      payload += "<13>1 2024-05-01T12:00:00.000Z f-host f-app - - - seq=" + std::to_string(i) +
                 " pad " + std::string(200, 'p') + "\n";
    }
    ASSERT_TRUE(client.Send(payload));
    client.Close();
  }

  // How often each seq number is in `text` (one JSON event per line). Sets `torn` when a line
  // is not a whole JSON object: an event written in part.
  static std::vector<int> SeqCounts(const std::string& text, bool& torn) {
    std::vector<int> counts(kLines, 0);
    torn = false;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) break;  // the last line may still be in the writing
      const std::string line = text.substr(start, end - start);
      start = end + 1;
      const Json event = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (event.is_discarded() || !event.is_object()) {
        torn = true;
        continue;
      }
      const std::string message = event.value("message", "");
      if (message.rfind("seq=", 0) != 0) continue;
      const long seq = std::strtol(message.c_str() + 4, nullptr, 10);
      if (seq >= 0 && seq < kLines) ++counts[static_cast<std::size_t>(seq)];
    }
    return counts;
  }

  static int Distinct(const std::vector<int>& counts) {
    return static_cast<int>(std::count_if(counts.begin(), counts.end(), [](int n) { return n; }));
  }

  // Lines of the daemon's log that contain `text`.
  int LogLinesWith(const std::string& text) const {
    const std::string log = daemon_->Stderr();
    int n = 0;
    for (std::size_t at = 0; (at = log.find(text, at)) != std::string::npos; at += text.size()) ++n;
    return n;
  }

  TempDir dir_;
  std::unique_ptr<SmallDisk> disk_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(DiskFullTest, AFileOutputOnAFullDiskWaitsForSpaceAndLosesNothing) {
  const std::filesystem::path events = dir_ / "disk" / "events.ndjson";
  Json config = daemon_test::LoopbackConfig(events.string());
  config["engine"]["mode"] = "annotate";  // one event per line, so each line is visible
  config["workers"]["shutdown_timeout"] = "5s";
  ASSERT_TRUE(Start(config));
  SendLines();

  // The disk fills: the output reports the write error and counts it.
  ASSERT_TRUE(daemon_->WaitMetricAtLeast("logfold_sink_errors_total", {"sink=\"events\""}, 1,
                                         milliseconds(20000 * kSlowdown)))
      << daemon_->Metrics();
  bool torn = false;
  const int before = Distinct(SeqCounts(daemon_test::ReadFile(events), torn));
  EXPECT_LT(before, kLines) << "the disk was not full";
  EXPECT_GT(daemon_->Metric("logfold_sink_buffered_bytes", {"sink=\"events\""}), 0)
      << "what did not fit waits in the output's buffer";

  disk_->Free();
  std::vector<int> counts;
  EXPECT_TRUE(WaitUntil(
      [&] {
        counts = SeqCounts(daemon_test::ReadFile(events), torn);
        return Distinct(counts) == kLines;
      },
      milliseconds(30000 * kSlowdown)))
      << Distinct(counts) << " of " << kLines;
  EXPECT_EQ(std::count(counts.begin(), counts.end(), 1), kLines) << "each event exactly once";
  // A write cut by ENOSPC continues where it stopped, so no event is broken in two.
  EXPECT_FALSE(torn) << "an event was written in part";
  // The retries back off: the log says so a bounded number of times, it is not flooded.
  EXPECT_LT(LogLinesWith("No space left on device"), 50);

  EXPECT_TRUE(daemon_->Signal(SIGTERM));
  EXPECT_EQ(daemon_->WaitExit(milliseconds(20000)), std::optional<int>(0));
}

TEST_F(DiskFullTest, ADiskBufferOnAFullDiskHoldsBackAndLosesNothing) {
  // The collector is down, so its events spill into a disk buffer on the full disk; the file
  // output (on the roomy disk) shows that the daemon keeps going as far as it can.
  LateCollector collector;
  Json config = daemon_test::LoopbackConfig((dir_ / "events.ndjson").string());
  config["engine"]["mode"] = "annotate";
  config["workers"]["shutdown_timeout"] = "5s";
  config["outputs"].push_back({{"name", "collector"},
                               {"type", "tcp"},
                               {"address", "127.0.0.1"},
                               {"port", collector.port()},
                               {"buffer", "64KiB"},
                               {"reconnect_min", "10ms"},
                               {"reconnect_max", "100ms"},
                               {"disk_buffer", (dir_ / "disk" / "buffer").string()},
                               {"disk_buffer_max_size", "64MiB"}});
  ASSERT_TRUE(Start(config));
  SendLines();

  ASSERT_TRUE(daemon_->WaitMetricAtLeast("logfold_disk_buffer_write_errors_total",
                                         {"sink=\"collector\""}, 1,
                                         milliseconds(20000 * kSlowdown)))
      << daemon_->Metrics();

  // Space comes back, then the collector: every event reaches it once, none in part.
  disk_->Free();
  ASSERT_TRUE(collector.Listen());
  std::vector<int> counts;
  bool torn = false;
  EXPECT_TRUE(WaitUntil(
      [&] {
        counts = SeqCounts(collector.data(), torn);
        return Distinct(counts) == kLines;
      },
      milliseconds(30000 * kSlowdown)))
      << Distinct(counts) << " of " << kLines;
  EXPECT_EQ(std::count(counts.begin(), counts.end(), 1), kLines) << "each event exactly once";
  EXPECT_FALSE(torn) << "an event was delivered in part";
  EXPECT_LT(LogLinesWith("No space left on device"), 50) << "the log is flooded";

  EXPECT_TRUE(daemon_->Signal(SIGTERM));
  EXPECT_EQ(daemon_->WaitExit(milliseconds(20000)), std::optional<int>(0));
  EXPECT_NE(daemon_->Stderr().find("lost events 0, lost lines 0"), std::string::npos) << LogTail();
}

TEST_F(DiskFullTest, JournalModeOnAFullDiskStopsAcceptingAndAKillAfterwardsLosesNoLine) {
  // Every accepted line is journalled first; with the journal's disk full, the daemon must not
  // accept lines it cannot journal. Space comes back, the rest is accepted; then a kill -9,
  // and the restart's replay accounts for every line.
  const std::filesystem::path events = dir_ / "events.ndjson";
  Json config = daemon_test::LoopbackConfig(events.string());
  config["state"] = {{"directory", (dir_ / "disk" / "state").string()},
                     {"journal", true},
                     {"journal_segment_size", "1MiB"}};
  config["workers"]["shutdown_timeout"] = "5s";
  ASSERT_TRUE(Start(config));
  SendLines();
  // A few failed writes in a row: the sender has been held back through several hold-offs.
  ASSERT_TRUE(daemon_->WaitMetricAtLeast("logfold_journal_write_errors_total", {}, 3,
                                         milliseconds(20000 * kSlowdown)))
      << daemon_->Metrics();
  EXPECT_LT(daemon_->Metric("logfold_lines_processed_total"), kLines)
      << "lines were accepted that were not journalled";

  disk_->Free();
  EXPECT_TRUE(daemon_->WaitMetricAtLeast("logfold_lines_processed_total", {}, kLines,
                                         milliseconds(30000 * kSlowdown)));
  ASSERT_TRUE(daemon_->Signal(SIGKILL));
  daemon_->WaitExit(milliseconds(10000));
  const std::string first_log = daemon_->Stderr();

  ASSERT_TRUE(Start(config));
  EXPECT_TRUE(daemon_->Signal(SIGTERM));
  EXPECT_EQ(daemon_->WaitExit(milliseconds(20000)), std::optional<int>(0));
  std::vector<Json> out;
  std::string error;
  ASSERT_TRUE(daemon_test::ParseNdjson(daemon_test::ReadFile(events), out, error)) << error;
  EXPECT_GE(daemon_test::LinesAccounted(out), static_cast<std::uint64_t>(kLines))
      << "a line accepted before the kill is missing; the first run's log:\n"
      << first_log;
}

}  // namespace
}  // namespace logfold
