// SimHash vote accumulation: adds the quantised weights of 64-bit feature hashes into per-bit
// sums, with the widest SIMD the CPU offers (AVX-512, AVX2, SSE2), chosen once at run time.
#ifndef LOGFOLD_PIPELINE_SIMHASH_VOTES_H_
#define LOGFOLD_PIPELINE_SIMHASH_VOTES_H_

#include <cstddef>
#include <cstdint>

namespace logfold {

// Per-bit sums of the weights of the features that have the bit set, and the total weight.
// Bit i of the SimHash is set when the features with bit i set outweigh those without it:
// sums[i] > total - sums[i]. Integer weights make this exact on every implementation.
struct SimHashVotes {
  alignas(64) std::int32_t sums[64] = {};
  std::int64_t total = 0;

  std::uint64_t Fingerprint() const;
};

// The implementations; each gives identical sums. kAuto is the best one the CPU supports.
enum class SimHashKernel { kAuto, kPortable, kSse2, kAvx2, kAvx512 };

bool SimHashKernelSupported(SimHashKernel kernel);

// Adds features (hashes[i], weights[i]) to `votes`; weights are >= 0. An unsupported kernel
// falls back to kPortable.
void AddSimHashVotes(const std::uint64_t* hashes, const std::int32_t* weights, std::size_t n,
                     SimHashVotes& votes, SimHashKernel kernel = SimHashKernel::kAuto);

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_SIMHASH_VOTES_H_
