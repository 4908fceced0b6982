// WithinDistanceMask kernels. POPCNT, AVX2 and AVX-512 are compiled per function (target
// attributes) for a baseline x86-64 build and picked with __builtin_cpu_supports.
#include "pipeline/within_distance_mask.h"

#include <bit>
#include <initializer_list>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LOGFOLD_X86_SIMD 1
#endif

namespace logfold {
namespace {

// Four independent masks, so consecutive entries' popcounts overlap instead of chaining
// through one register. Always inlined, so each caller's target decides what popcount is.
[[gnu::always_inline]] inline std::uint64_t MaskScalar(const std::uint64_t* fps, std::size_t n,
                                                       std::uint64_t q, int k) {
  std::uint64_t m0 = 0, m1 = 0, m2 = 0, m3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    m0 |= std::uint64_t{std::popcount(fps[i] ^ q) <= k} << i;
    m1 |= std::uint64_t{std::popcount(fps[i + 1] ^ q) <= k} << (i + 1);
    m2 |= std::uint64_t{std::popcount(fps[i + 2] ^ q) <= k} << (i + 2);
    m3 |= std::uint64_t{std::popcount(fps[i + 3] ^ q) <= k} << (i + 3);
  }
  for (; i < n; ++i) m0 |= std::uint64_t{std::popcount(fps[i] ^ q) <= k} << i;
  return m0 | m1 | m2 | m3;
}

std::uint64_t MaskPortable(const std::uint64_t* fps, std::size_t n, std::uint64_t q, int k) {
  return MaskScalar(fps, n, q, k);
}

#if defined(LOGFOLD_X86_SIMD)
// The same loop; the target attribute turns std::popcount into the instruction.
__attribute__((target("popcnt"))) std::uint64_t MaskPopcnt(const std::uint64_t* fps, std::size_t n,
                                                           std::uint64_t q, int k) {
  return MaskScalar(fps, n, q, k);
}

// Four entries per step: byte popcounts from a nibble table (PSHUFB), summed per 64-bit lane
// by PSADBW, compared with k.
__attribute__((target("avx2,popcnt"))) std::uint64_t MaskAvx2(const std::uint64_t* fps,
                                                              std::size_t n, std::uint64_t q,
                                                              int k) {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2,
                                         1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m256i query = _mm256_set1_epi64x(static_cast<long long>(q));
  const __m256i limit = _mm256_set1_epi64x(k + 1);
  std::uint64_t mask = 0;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i x =
        _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(fps + i)), query);
    const __m256i bytes =
        _mm256_add_epi8(_mm256_shuffle_epi8(table, _mm256_and_si256(x, low)),
                        _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(x, 4), low)));
    const __m256i counts = _mm256_sad_epu8(bytes, _mm256_setzero_si256());
    const __m256i near = _mm256_cmpgt_epi64(limit, counts);
    mask |= static_cast<std::uint64_t>(_mm256_movemask_pd(_mm256_castsi256_pd(near))) << i;
  }
  for (; i < n; ++i) mask |= std::uint64_t{std::popcount(fps[i] ^ q) <= k} << i;
  return mask;
}

// Eight entries per step with VPOPCNTQ; the tail is a masked load.
__attribute__((target("avx512f,avx512vpopcntdq"))) std::uint64_t MaskAvx512(
    const std::uint64_t* fps, std::size_t n, std::uint64_t q, int k) {
  const __m512i query = _mm512_set1_epi64(static_cast<long long>(q));
  const __m512i limit = _mm512_set1_epi64(k);
  std::uint64_t mask = 0;
  for (std::size_t i = 0; i < n; i += 8) {
    const std::size_t left = n - i;
    const __mmask8 load = left >= 8 ? 0xff : static_cast<__mmask8>((1u << left) - 1);
    const __m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi64(load, fps + i), query);
    const __mmask8 near = _mm512_mask_cmple_epu64_mask(load, _mm512_popcnt_epi64(x), limit);
    mask |= static_cast<std::uint64_t>(near) << i;
  }
  return mask;
}
#endif  // LOGFOLD_X86_SIMD

using MaskFn = std::uint64_t (*)(const std::uint64_t*, std::size_t, std::uint64_t, int);

MaskFn Resolve(WithinDistanceKernel kernel) {
  if (!WithinDistanceKernelSupported(kernel)) return MaskPortable;
  switch (kernel) {
#if defined(LOGFOLD_X86_SIMD)
    case WithinDistanceKernel::kPopcnt:
      return MaskPopcnt;
    case WithinDistanceKernel::kAvx2:
      return MaskAvx2;
    case WithinDistanceKernel::kAvx512:
      return MaskAvx512;
#endif
    default:
      return MaskPortable;
  }
}

WithinDistanceKernel Best() {
  for (WithinDistanceKernel k : {WithinDistanceKernel::kAvx512, WithinDistanceKernel::kAvx2,
                                 WithinDistanceKernel::kPopcnt}) {
    if (WithinDistanceKernelSupported(k)) return k;
  }
  return WithinDistanceKernel::kPortable;
}

}  // namespace

bool WithinDistanceKernelSupported(WithinDistanceKernel kernel) {
  switch (kernel) {
    case WithinDistanceKernel::kAuto:
    case WithinDistanceKernel::kPortable:
      return true;
#if defined(LOGFOLD_X86_SIMD)
    case WithinDistanceKernel::kPopcnt:
      __builtin_cpu_init();  // may run before libgcc's own initialiser
      return __builtin_cpu_supports("popcnt");
    case WithinDistanceKernel::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    case WithinDistanceKernel::kAvx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
#endif
    default:
      return false;
  }
}

std::uint64_t WithinDistanceMask(const std::uint64_t* fps, std::size_t n, std::uint64_t q, int k,
                                 WithinDistanceKernel kernel) {
  static const MaskFn best = Resolve(Best());  // a local static: safe during static init
  const MaskFn fn = kernel == WithinDistanceKernel::kAuto ? best : Resolve(kernel);
  return fn(fps, n, q, k);
}

}  // namespace logfold
