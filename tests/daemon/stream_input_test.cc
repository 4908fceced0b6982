// Tests for StreamInput: files and pipes read line by line, blocking (never dropping) while
// the target is full, completion callback, truncation and Stop().
#include "daemon/inputs/stream_input.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "daemon/inputs/ingest_target.h"
#include "daemon/runtime/metrics.h"
#include "tests/support/listener_test_util.h"
#include "tests/support/recording_target.h"

namespace logfold {
namespace {

using test::WaitUntil;

using namespace std::chrono_literals;

// Records delivered lines. SetFull(true) refuses every delivery; set_flaky(true) refuses every
// other one and signals writability from another thread, like a queue draining concurrently.
using test::RecordingTarget;

// Records the done callback.
class Done {
 public:
  StreamInput::DoneCallback Callback() {
    return [this](bool eof) {
      std::lock_guard lock(mu_);
      ++calls_;
      eof_ = eof;
      cv_.notify_all();
    };
  }
  std::optional<bool> Wait(std::chrono::milliseconds timeout = 20s) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return calls_ > 0; })) return std::nullopt;
    return eof_;
  }
  int calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int calls_ = 0;
  bool eof_ = false;
};

class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    char name[] = "/tmp/logfold_stream_input_XXXXXX";
    const int fd = mkstemp(name);
    path_ = name;
    std::string_view rest = content;
    while (!rest.empty()) {
      const ssize_t n = write(fd, rest.data(), rest.size());
      if (n <= 0) break;
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    close(fd);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string NumberedLines(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "<13>line " + std::to_string(i) + "\n";
  return s;
}

void ExpectNumbered(const std::vector<std::string>& lines, int n) {
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(lines[i], "<13>line " + std::to_string(i));
}

class StreamInputTest : public ::testing::Test {
 protected:
  std::string Labels(const char* proto) const {
    return std::string(R"(input="s0",proto=")") + proto + "\"";
  }

  Metrics metrics_;
  RecordingTarget target_{RecordingTarget::Resume::kOnOtherThread};
  Done done_;
};

TEST_F(StreamInputTest, ReadsFileLineByLine) {
  TempFile file("<13>first\r\n\n<13>second\n\n<13>last without newline");
  StreamInput input(1, "s0", {.path = file.path()}, target_, metrics_, done_.Callback());
  input.Start();
  EXPECT_EQ(done_.Wait(), true);
  EXPECT_EQ(target_.Lines(),
            (std::vector<std::string>{"<13>first", "<13>second", "<13>last without newline"}));
  EXPECT_EQ(metrics_.Value("logfold_received_total", Labels("file")), 3u);
  EXPECT_EQ(metrics_.Value("logfold_received_bytes_total", Labels("file")), 48u);
  input.Join();
  EXPECT_TRUE(input.finished());
  EXPECT_EQ(done_.calls(), 1);
}

TEST_F(StreamInputTest, FinishedIsVisibleFromTheDoneCallback) {
  TempFile file("<13>x\n");
  std::atomic<int> seen{-1};
  std::unique_ptr<StreamInput> input;
  input = std::make_unique<StreamInput>(1, "s0", StreamInput::Options{.path = file.path()}, target_,
                                        metrics_, [&](bool) { seen = input->finished() ? 1 : 0; });
  input->Start();
  ASSERT_TRUE(WaitUntil([&] { return seen.load() != -1; }));
  EXPECT_EQ(seen.load(), 1);
}

TEST_F(StreamInputTest, EmptyFileCompletesAtOnce) {
  TempFile file("");
  StreamInput input(1, "s0", {.path = file.path()}, target_, metrics_, done_.Callback());
  input.Start();
  EXPECT_EQ(done_.Wait(), true);
  EXPECT_TRUE(target_.Lines().empty());
}

TEST_F(StreamInputTest, WaitsWhileTargetIsFullAndNeverDrops) {
  constexpr int kLines = 50000;  // several reads' worth
  TempFile file(NumberedLines(kLines));
  target_.SetFull(true);
  StreamInput input(1, "s0", {.path = file.path()}, target_, metrics_, done_.Callback());
  input.Start();
  ASSERT_TRUE(WaitUntil([&] { return target_.registrations() >= 1; }));
  EXPECT_EQ(done_.calls(), 0);
  EXPECT_TRUE(target_.Lines().empty());
  target_.SetFull(false);
  EXPECT_EQ(done_.Wait(), true);
  ExpectNumbered(target_.Lines(), kLines);
  EXPECT_EQ(metrics_.Sum("logfold_dropped_total"), 0u);
}

TEST_F(StreamInputTest, RetriesThroughARefusingTarget) {
  constexpr int kLines = 30000;
  TempFile file(NumberedLines(kLines));
  target_.set_flaky(true);
  StreamInput input(1, "s0", {.path = file.path()}, target_, metrics_, done_.Callback());
  input.Start();
  EXPECT_EQ(done_.Wait(), true);
  ExpectNumbered(target_.Lines(), kLines);
  EXPECT_GE(target_.registrations(), 2u);
}

TEST_F(StreamInputTest, PipeUntilEof) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  StreamInput input(1, "s0", {.path = {}, .fd = fds[0]}, target_, metrics_, done_.Callback());
  input.Start();
  const std::string first = "<13>one\n<13>tw";
  ASSERT_EQ(write(fds[1], first.data(), first.size()), static_cast<ssize_t>(first.size()));
  ASSERT_TRUE(target_.WaitForLines(1));
  EXPECT_EQ(done_.calls(), 0);
  const std::string second = "o\n<13>three";
  ASSERT_EQ(write(fds[1], second.data(), second.size()), static_cast<ssize_t>(second.size()));
  close(fds[1]);
  EXPECT_EQ(done_.Wait(), true);
  EXPECT_EQ(target_.Lines(), (std::vector<std::string>{"<13>one", "<13>two", "<13>three"}));
  EXPECT_EQ(metrics_.Value("logfold_received_total", Labels("fd")), 3u);
  input.Join();
  close(fds[0]);
}

TEST_F(StreamInputTest, StopInterruptsAnIdlePipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  {
    StreamInput input(1, "s0", {.path = {}, .fd = fds[0]}, target_, metrics_, done_.Callback());
    input.Start();
    input.Stop();
    EXPECT_EQ(done_.Wait(), false);
    input.Join();
  }
  close(fds[1]);
  close(fds[0]);
}

TEST_F(StreamInputTest, StopWhileBlockedOnTargetCountsDropped) {
  TempFile file(NumberedLines(10));
  target_.SetFull(true);
  StreamInput input(1, "s0", {.path = file.path()}, target_, metrics_, done_.Callback());
  input.Start();
  ASSERT_TRUE(WaitUntil([&] { return target_.attempts() >= 1; }));
  input.Stop();
  EXPECT_EQ(done_.Wait(), false);
  EXPECT_EQ(metrics_.Value("logfold_dropped_total", Labels("file") + R"(,reason="shutdown")"), 10u);
  EXPECT_TRUE(target_.Lines().empty());
}

TEST_F(StreamInputTest, DestructorStopsAndJoins) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  {
    StreamInput input(1, "s0", {.path = {}, .fd = fds[0]}, target_, metrics_, done_.Callback());
    input.Start();
  }
  EXPECT_EQ(done_.calls(), 1);
  close(fds[1]);
  close(fds[0]);
}

TEST_F(StreamInputTest, MissingFileThrows) {
  EXPECT_THROW(StreamInput(1, "s0", {.path = "/nonexistent/logfold/input.log"}, target_, metrics_),
               std::system_error);
}

TEST_F(StreamInputTest, LongLinesTruncatedAndCounted) {
  TempFile file("0123456789ABCDEF\nshort\n" + std::string(100000, 'x') + "\n");
  StreamInput input(1, "s0", {.path = file.path(), .max_message_size = 10}, target_, metrics_,
                    done_.Callback());
  input.Start();
  EXPECT_EQ(done_.Wait(), true);
  EXPECT_EQ(target_.Lines(),
            (std::vector<std::string>{"0123456789", "short", std::string(10, 'x')}));
  EXPECT_EQ(metrics_.Value("logfold_truncated_total", Labels("file")), 2u);
}

TEST_F(StreamInputTest, NulTerminatorOption) {
  TempFile file(std::string("<13>a\0<13>b\n", 12));
  StreamInput input(1, "s0", {.path = file.path(), .nul_terminator = true}, target_, metrics_,
                    done_.Callback());
  input.Start();
  EXPECT_EQ(done_.Wait(), true);
  EXPECT_EQ(target_.Lines(), (std::vector<std::string>{"<13>a", "<13>b"}));
}

TEST_F(StreamInputTest, LengthPrefixesAreNotInterpreted) {
  TempFile file("5 hello\n");
  StreamInput input(1, "s0", {.path = file.path()}, target_, metrics_, done_.Callback());
  input.Start();
  EXPECT_EQ(done_.Wait(), true);
  EXPECT_EQ(target_.Lines(), std::vector<std::string>{"5 hello"});
}

}  // namespace
}  // namespace logfold
