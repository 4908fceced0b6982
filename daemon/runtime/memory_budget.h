// MemoryBudget: what the daemon's growing parts hold, in bytes, against `limits.memory`, and
// the thresholds at which workers close their oldest groups and inputs stop taking lines.
#ifndef LOGFOLD_DAEMON_RUNTIME_MEMORY_BUDGET_H_
#define LOGFOLD_DAEMON_RUNTIME_MEMORY_BUDGET_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "daemon/runtime/metrics.h"

namespace logfold {

class MemoryBudget {
 public:
  // The parts accounted; each is updated by its owner as it grows and shrinks.
  enum class Part : std::uint8_t {
    kGroups,   // the workers' open groups and samples (WindowMerger::MemoryUsage)
    kQueued,   // lines delivered to a worker queue and not yet folded
    kFrames,   // TCP connections' unfinished frames and lines held back by backpressure
    kOutputs,  // encoded events in the outputs' buffers
    kCount_,
  };

  // `limit` 0: no budget (everything is still accounted and exported).
  explicit MemoryBudget(std::uint64_t limit) : limit_(limit) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  void Add(Part part, std::int64_t delta) {
    parts_[static_cast<int>(part)].fetch_add(delta, std::memory_order_relaxed);
  }
  void Set(Part part, std::int64_t value) {
    parts_[static_cast<int>(part)].store(value, std::memory_order_relaxed);
  }
  std::uint64_t used() const;
  std::uint64_t limit() const { return limit_; }

  // Past 80 % of the limit, workers close their least recently active groups.
  bool GroupsOverLimit() const { return limit_ > 0 && used() > limit_ / 10 * 8; }
  // Past 90 %, inputs take nothing more: TCP connections stop reading, datagrams are dropped
  // and counted. The 10 % between the two is room for what is already in flight.
  bool IntakeAllowed(std::uint64_t more) const {
    return limit_ == 0 || used() + more <= limit_ / 10 * 9;
  }

  // logfold_memory_budget_bytes and logfold_memory_accounted_bytes{part=...}.
  void ExportTo(Metrics& metrics) const;

 private:
  const std::uint64_t limit_;
  std::array<std::atomic<std::int64_t>, static_cast<int>(Part::kCount_)> parts_{};
};

// The memory limit of this process's cgroup (v2: the lower of memory.max and memory.high;
// v1: memory.limit_in_bytes), 0 when there is none or it cannot be read.
std::uint64_t CgroupMemoryLimit();

// The budget `limits.memory` stands for: `configured` when set (0: none), else 3/4 of the
// cgroup's limit, else half the physical memory.
std::uint64_t ResolveMemoryBudget(std::optional<std::uint64_t> configured);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_RUNTIME_MEMORY_BUDGET_H_
