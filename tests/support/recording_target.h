// RecordingTarget: an IngestTarget fake for the input suites. It records every delivered line
// (with its input index and the last arrival time), can refuse deliveries (full, or every
// other one when flaky) and resumes the registered readers when it is no longer full.
#ifndef LOGFOLD_TESTS_SUPPORT_RECORDING_TARGET_H_
#define LOGFOLD_TESTS_SUPPORT_RECORDING_TARGET_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/inputs/ingest_target.h"

namespace logfold::test {

class RecordingTarget : public IngestTarget {
 public:
  // How OnWritable resumes a reader while the target has room: at once on the caller's thread,
  // or from a thread of its own (as a worker would, later and elsewhere).
  enum class Resume { kInline, kOnOtherThread };
  explicit RecordingTarget(Resume resume = Resume::kInline) : resume_(resume) {}

  bool TryDeliver(std::uint32_t input, std::span<const std::string_view> lines,
                  TimeUs arrival_us) override {
    std::lock_guard lock(mu_);
    ++attempts_;
    if (full_ || (flaky_ && attempts_ % 2 == 1)) return false;
    for (std::string_view line : lines) {
      lines_.emplace_back(line);
      inputs_.push_back(input);
    }
    last_arrival_ = arrival_us;
    cv_.notify_all();
    return true;
  }
  void OnWritable(std::function<void()> resume) override {
    std::unique_lock lock(mu_);
    ++registrations_;
    if (full_) {
      waiters_.push_back(std::move(resume));
      return;
    }
    if (resume_ == Resume::kOnOtherThread) {
      signalers_.emplace_back(std::move(resume));
      return;
    }
    lock.unlock();
    resume();
  }
  void SetFull(bool full) {
    std::vector<std::function<void()>> fire;
    {
      std::lock_guard lock(mu_);
      full_ = full;
      if (!full) fire.swap(waiters_);
    }
    for (auto& f : fire) f();
  }
  void set_flaky(bool flaky) {
    std::lock_guard lock(mu_);
    flaky_ = flaky;
  }
  bool WaitForLines(std::size_t n,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(20000)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return lines_.size() >= n; });
  }
  std::vector<std::string> Lines() {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::size_t LineCount() {
    std::lock_guard lock(mu_);
    return lines_.size();
  }
  std::vector<std::uint32_t> Inputs() {
    std::lock_guard lock(mu_);
    return inputs_;
  }
  TimeUs last_arrival() {
    std::lock_guard lock(mu_);
    return last_arrival_;
  }
  std::uint64_t attempts() {
    std::lock_guard lock(mu_);
    return attempts_;
  }
  std::uint64_t registrations() {
    std::lock_guard lock(mu_);
    return registrations_;
  }

 private:
  const Resume resume_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool full_ = false;
  bool flaky_ = false;
  std::uint64_t attempts_ = 0;
  std::uint64_t registrations_ = 0;
  std::vector<std::string> lines_;
  std::vector<std::uint32_t> inputs_;
  TimeUs last_arrival_ = 0;
  std::vector<std::function<void()>> waiters_;
  std::vector<std::jthread> signalers_;  // joined on destruction, before the members above
};

}  // namespace logfold::test

#endif  // LOGFOLD_TESTS_SUPPORT_RECORDING_TARGET_H_
