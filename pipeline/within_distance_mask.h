// WithinDistanceMask: which of up to 64 fingerprints lie within Hamming distance k of a query,
// as a bit mask, with the widest SIMD the CPU offers (chosen once at run time).
#ifndef LOGFOLD_PIPELINE_WITHIN_DISTANCE_MASK_H_
#define LOGFOLD_PIPELINE_WITHIN_DISTANCE_MASK_H_

#include <cstddef>
#include <cstdint>

namespace logfold {

// The implementations; each gives identical masks. kAuto is the best one the CPU supports.
// kPopcnt is the scalar loop with the POPCNT instruction (a baseline x86-64 build otherwise
// calls libgcc per entry); kAvx512 needs AVX512F + VPOPCNTDQ.
enum class WithinDistanceKernel { kAuto, kPortable, kPopcnt, kAvx2, kAvx512 };

bool WithinDistanceKernelSupported(WithinDistanceKernel kernel);

// Bit i is set iff popcount(fps[i] ^ q) <= k, for i < n; n <= 64 (bits n..63 are zero).
// An unsupported kernel falls back to kPortable.
std::uint64_t WithinDistanceMask(const std::uint64_t* fps, std::size_t n, std::uint64_t q, int k,
                                 WithinDistanceKernel kernel = WithinDistanceKernel::kAuto);

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_WITHIN_DISTANCE_MASK_H_
