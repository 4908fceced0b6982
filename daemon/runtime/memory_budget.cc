// MemoryBudget's sum and metrics, and the cgroup limit that `limits.memory` defaults to.
#include "daemon/runtime/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace logfold {

std::uint64_t MemoryBudget::used() const {
  std::int64_t sum = 0;
  for (const auto& p : parts_) sum += p.load(std::memory_order_relaxed);
  return sum > 0 ? static_cast<std::uint64_t>(sum) : 0;
}

void MemoryBudget::ExportTo(Metrics& metrics) const {
  metrics.AddGauge("logfold_memory_budget_bytes", "limits.memory (0: no budget).", "",
                   [this] { return static_cast<double>(limit_); });
  static constexpr const char* kNames[] = {"groups", "queued", "frames", "outputs"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(Part::kCount_));
  for (int i = 0; i < static_cast<int>(Part::kCount_); ++i) {
    metrics.AddGauge(
        "logfold_memory_accounted_bytes", "Bytes held, by part, as counted against limits.memory.",
        std::string("part=\"") + kNames[i] + "\"",
        [this, i] { return static_cast<double>(parts_[i].load(std::memory_order_relaxed)); });
  }
}

std::uint64_t CgroupMemoryLimit() {
  // The process's own cgroup: "0::/system.slice/logfold.service" (v2).
  std::ifstream self("/proc/self/cgroup");
  std::string line, v2_path;
  while (std::getline(self, line)) {
    if (line.rfind("0::", 0) == 0) v2_path = line.substr(3);
  }
  auto read_limit = [](const std::string& file) -> std::uint64_t {
    std::ifstream in(file);
    std::string value;
    if (!(in >> value) || value == "max") return 0;
    try {
      const unsigned long long v = std::stoull(value);
      // cgroup v1 reports "no limit" as a huge page-rounded number.
      return v >= (1ULL << 60) ? 0 : static_cast<std::uint64_t>(v);
    } catch (const std::exception&) {
      return 0;
    }
  };
  if (!v2_path.empty()) {
    const std::string dir = "/sys/fs/cgroup" + v2_path;
    const std::uint64_t max = read_limit(dir + "/memory.max");
    const std::uint64_t high = read_limit(dir + "/memory.high");
    if (max != 0 || high != 0) return max == 0 ? high : high == 0 ? max : std::min(max, high);
  }
  return read_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes");
}

std::uint64_t ResolveMemoryBudget(std::optional<std::uint64_t> configured) {
  if (configured) return *configured;
  // The budget covers what grows with traffic; a quarter is left for the fixed cost.
  if (const std::uint64_t cgroup = CgroupMemoryLimit()) return cgroup / 4 * 3;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * page / 2 : 0;
}

}  // namespace logfold
