// FileInput in-process, against the RecordingTarget fake: line cutting, and the saved
// position (only delivered lines count; a damaged position file is reported and ignored).
#include "daemon/inputs/file_input.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/runtime/metrics.h"
#include "tests/support/recording_target.h"

namespace logfold {
namespace {

using test::RecordingTarget;

// Polls `pred` until it holds or 10 s pass.
template <typename Pred>
bool WaitFor(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class FileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("logfold-file-input-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    log_ = (dir_ / "app.log").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Append(const std::string& text) {
    std::ofstream out(log_, std::ios::binary | std::ios::app);
    out << text;
  }
  FileInput::Options Options() const {
    FileInput::Options o;
    o.path = log_;
    o.state_directory = (dir_ / "state").string();
    o.poll_interval_us = 50'000;
    o.multiline_timeout_us = 100'000;
    o.max_message_size = 1024;
    return o;
  }
  static std::string Labels() { return "input=\"app\",proto=\"file\""; }

  std::filesystem::path dir_;
  std::string log_;
};

TEST_F(FileInputTest, LongLinesAreCutAndCrlfEndsTrimmed) {
  Append("a\r\n" + std::string(3000, 'x') + "\nb\n");
  RecordingTarget target;
  Metrics metrics;
  FileInput input(0, "app", Options(), target, metrics);
  input.Start();
  ASSERT_TRUE(target.WaitForLines(3));
  EXPECT_EQ(target.Lines(), (std::vector<std::string>{"a", std::string(1024, 'x'), "b"}));
  EXPECT_EQ(metrics.Value("logfold_truncated_total", Labels()), 1u);
  // Counted once the delivery returned, just after the target saw the lines.
  EXPECT_TRUE(WaitFor([&] { return metrics.Value("logfold_received_total", Labels()) == 3; }));
}

TEST_F(FileInputTest, OnlyDeliveredLinesMoveTheSavedPosition) {
  Append("one\ntwo\nthree\n");
  {
    // The engine refuses everything: the lines are read, never delivered, never saved.
    RecordingTarget full;
    full.SetFull(true);
    Metrics metrics;
    FileInput input(0, "app", Options(), full, metrics);
    input.Start();
    ASSERT_TRUE(WaitFor([&] { return full.registrations() >= 1; }));
  }
  {
    RecordingTarget target;
    Metrics metrics;
    FileInput input(0, "app", Options(), target, metrics);
    input.Start();
    ASSERT_TRUE(target.WaitForLines(3));
    EXPECT_EQ(target.Lines(), (std::vector<std::string>{"one", "two", "three"}));
  }
  Append("four\n");
  RecordingTarget target;
  Metrics metrics;
  FileInput input(0, "app", Options(), target, metrics);
  input.Start();
  ASSERT_TRUE(target.WaitForLines(1));
  // Nothing else arrives: wait for a later line rather than for time to pass.
  Append("five\n");
  ASSERT_TRUE(target.WaitForLines(2));
  EXPECT_EQ(target.Lines(), (std::vector<std::string>{"four", "five"}));
}

// logrotate's copytruncate while the daemon is down: the copy (matched by the pattern)
// continues from the original's saved position, the truncated original starts afresh.
TEST_F(FileInputTest, CopytruncateWhileStoppedResumesInTheCopy) {
  Append("one\ntwo\n");
  FileInput::Options options = Options();
  options.path = log_ + "*";
  {
    RecordingTarget target;
    Metrics metrics;
    FileInput input(0, "app", options, target, metrics);
    input.Start();
    ASSERT_TRUE(target.WaitForLines(2));
  }
  Append("three\n");
  std::filesystem::copy_file(log_, log_ + ".1");
  std::filesystem::resize_file(log_, 0);
  Append("four\n");
  RecordingTarget target;
  Metrics metrics;
  FileInput input(0, "app", options, target, metrics);
  input.Start();
  ASSERT_TRUE(target.WaitForLines(2));
  Append("five\n");
  ASSERT_TRUE(target.WaitForLines(3));
  std::vector<std::string> lines = target.Lines();
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"five", "four", "three"}));
}

TEST_F(FileInputTest, DamagedPositionFileIsCountedAndTheFileReadFromItsStart) {
  Append("one\ntwo\n");
  {
    RecordingTarget target;
    Metrics metrics;
    FileInput input(0, "app", Options(), target, metrics);
    input.Start();
    ASSERT_TRUE(target.WaitForLines(2));
  }
  int damaged = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ / "state" / "file-app")) {
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "lfpos1 garbage\n";
    ++damaged;
  }
  ASSERT_EQ(damaged, 1);
  RecordingTarget target;
  Metrics metrics;
  FileInput input(0, "app", Options(), target, metrics);
  input.Start();
  ASSERT_TRUE(target.WaitForLines(2));
  EXPECT_EQ(target.Lines(), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(metrics.Value("logfold_input_errors_total", Labels() + ",error=\"checkpoint\""), 1u);
}

}  // namespace
}  // namespace logfold
