// SimHash vote accumulation: adds the quantised weights of 64-bit feature hashes into per-bit
// sums, with the widest SIMD the CPU offers (AVX-512, AVX2, SSE2), chosen once at run time.
#ifndef LOGFOLD_PIPELINE_SIMHASH_VOTES_H_
#define LOGFOLD_PIPELINE_SIMHASH_VOTES_H_

#include <cstddef>
#include <cstdint>
#include <span>

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

// The same for n features that all weigh `weight` (>= 0): the sums AddSimHashVotes gives with
// every weight equal to it. A line's features take only a few distinct weights (words one,
// masked variables another), so the Fingerprinter groups them by weight: the AVX2 kernel then
// counts set bits in byte lanes and multiplies by the weight once per group, not per feature.
void AddUniformSimHashVotes(const std::uint64_t* hashes, std::size_t n, std::int32_t weight,
                            SimHashVotes& votes, SimHashKernel kernel = SimHashKernel::kAuto);

// A run of features that all weigh `weight` (>= 0).
struct UniformFeatures {
  const std::uint64_t* hashes;
  std::size_t n;
  std::int32_t weight;
};

// The SimHash of the features of all runs: what AddUniformSimHashVotes of each run into one
// SimHashVotes gives, without that struct's memory (the AVX2 kernel keeps the 64 sums in
// registers from the first run to the final comparison).
std::uint64_t SimHashOfUniformRuns(std::span<const UniformFeatures> runs,
                                   SimHashKernel kernel = SimHashKernel::kAuto);

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_SIMHASH_VOTES_H_
