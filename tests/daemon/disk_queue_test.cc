// DiskQueue: order across segments and restarts, damaged records counted and skipped,
// PushFront, the size limit.
#include "daemon/outputs/disk_queue.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon/runtime/metrics.h"

namespace logfold {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class DiskQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/logfold-disk-queue-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<DiskQueue> Open(std::uint64_t max_bytes = 1 << 20) {
    DiskQueue::Options o;
    o.dir = dir_.string();
    o.max_bytes = max_bytes;
    o.segment_bytes = 300;  // a few records per segment
    o.sink_name = "q";
    std::string error;
    auto q = DiskQueue::Open(o, metrics_, error);
    EXPECT_NE(q, nullptr) << error;
    return q;
  }

  static std::string Rec(int i) {
    return "record " + std::to_string(i) + " " + std::string(40, 'x');
  }

  static std::vector<std::string> ReadAll(DiskQueue& q) {
    std::vector<std::string> out;
    std::string r;
    for (int i = 0; i < 10000 && q.Peek(r, Clock::now()); ++i) {
      out.push_back(r);
      q.Commit();
    }
    return out;
  }

  std::vector<std::filesystem::path> Segments() const {
    std::vector<std::filesystem::path> v;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      if (e.path().extension() == ".seg") v.push_back(e.path());
    }
    std::sort(v.begin(), v.end());
    return v;
  }

  std::uint64_t Corrupt() {
    return metrics_.Value("logfold_disk_buffer_corrupt_records_total", "sink=\"q\"");
  }

  std::filesystem::path dir_;
  Metrics metrics_;
};

TEST_F(DiskQueueTest, KeepsOrderAcrossSegmentsAndARestart) {
  {
    auto q = Open();
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(q->Push(Rec(i), Clock::now()));
    EXPECT_GT(Segments().size(), 5u);
    std::string r;
    for (int i = 0; i < 15; ++i) {
      ASSERT_TRUE(q->Peek(r, Clock::now()));
      EXPECT_EQ(r, Rec(i));
      q->Commit();
    }
    ASSERT_TRUE(q->Peek(r, Clock::now()));  // peeked, not committed: read again after restart
  }
  auto q = Open();
  const std::vector<std::string> rest = ReadAll(*q);
  ASSERT_EQ(rest.size(), 25u);
  for (int i = 0; i < 25; ++i) EXPECT_EQ(rest[i], Rec(15 + i));
  EXPECT_TRUE(q->empty());
  EXPECT_EQ(Corrupt(), 0u);
  EXPECT_TRUE(Segments().size() <= 1u) << "read segments are deleted";
}

TEST_F(DiskQueueTest, ADamagedRecordIsCountedAndSkippedAndTheRestDelivered) {
  {
    auto q = Open();
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(q->Push(Rec(i), Clock::now()));
  }
  auto segments = Segments();
  ASSERT_EQ(segments.size(), 1u);
  {
    std::fstream f(segments[0], std::ios::in | std::ios::out | std::ios::binary);
    const std::size_t record = kRecordHeaderSize + Rec(0).size();
    f.seekp(static_cast<std::streamoff>(kSegmentMagic.size() + record + kRecordHeaderSize + 3));
    f.put('#');  // record 1's payload
    f.seekp(static_cast<std::streamoff>(kSegmentMagic.size() + 2 * record + 4));
    f.put('\x7f');  // record 2's length
  }
  auto q = Open();
  EXPECT_EQ(ReadAll(*q), (std::vector<std::string>{Rec(0), Rec(3)}));
  EXPECT_EQ(Corrupt(), 2u);
  EXPECT_TRUE(q->empty());
}

TEST_F(DiskQueueTest, ATornTailAndADamagedCursorNeverStopTheStart) {
  {
    auto q = Open();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(q->Push(Rec(i), Clock::now()));
  }
  const auto segment = Segments().at(0);
  std::filesystem::resize_file(segment, std::filesystem::file_size(segment) - 10);
  std::ofstream(dir_ / "cursor", std::ios::trunc) << "garbage\n";
  auto q = Open();
  EXPECT_EQ(ReadAll(*q), (std::vector<std::string>{Rec(0), Rec(1)}));
  EXPECT_EQ(Corrupt(), 1u);
}

TEST_F(DiskQueueTest, PushFrontGoesBeforeEverythingAndSurvivesARestart) {
  {
    auto q = Open();
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(q->Push(Rec(i), Clock::now()));
    std::string r;
    ASSERT_TRUE(q->Peek(r, Clock::now()));
    q->Commit();  // record 0 delivered
    ASSERT_TRUE(q->PushFront("older"));
  }
  auto q = Open();
  std::vector<std::string> want{"older"};
  for (int i = 1; i < 10; ++i) want.push_back(Rec(i));
  EXPECT_EQ(ReadAll(*q), want);
}

TEST_F(DiskQueueTest, PushWaitsAtTheSizeLimitUntilItsDeadline) {
  auto q = Open(/*max_bytes=*/3 * (kRecordHeaderSize + Rec(0).size()));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q->Push(Rec(i), Clock::now()));
  const auto start = Clock::now();
  EXPECT_FALSE(q->Push(Rec(3), Clock::now() + 100ms));
  EXPECT_GE(Clock::now() - start, 90ms);
  std::string r;
  ASSERT_TRUE(q->Peek(r, Clock::now()));
  q->Commit();
  EXPECT_TRUE(q->Push(Rec(3), Clock::now()));
  EXPECT_EQ(ReadAll(*q).size(), 3u);
}

TEST_F(DiskQueueTest, OneConsumerAtATimeHoldsTheOldestRecord) {
  auto q = Open();
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(q->Push(Rec(i), Clock::now()));
  int a = 0, b = 0;  // two sinks sharing the queue after a reload
  std::string r;
  ASSERT_TRUE(q->Peek(r, Clock::now(), &a));
  EXPECT_FALSE(q->Peek(r, Clock::now() + 20ms, &b)) << "a holds record 0";
  q->Commit(&b);  // not b's to commit: nothing happens
  q->Release(&a);
  ASSERT_TRUE(q->Peek(r, Clock::now(), &b));
  EXPECT_EQ(r, Rec(0));
  q->Commit(&b);
  ASSERT_TRUE(q->Peek(r, Clock::now(), &a));
  EXPECT_EQ(r, Rec(1));
}

TEST_F(DiskQueueTest, OneProcessHoldsADirectory) {
  auto q = Open();
  std::string error;
  DiskQueue::Options o;
  o.dir = dir_.string();
  EXPECT_EQ(DiskQueue::Open(o, metrics_, error), q) << "the same process shares the queue";
}

}  // namespace
}  // namespace logfold
