// SimHash vote kernels. AVX2 and AVX-512 are compiled per function (target attributes) for a
// baseline x86-64 build and picked with __builtin_cpu_supports, so one binary runs anywhere.
#include "pipeline/simhash_votes.h"

#include <algorithm>
#include <initializer_list>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LOGFOLD_X86_SIMD 1
#endif

namespace logfold {
namespace {

void AddPortable(const std::uint64_t* hashes, const std::int32_t* weights, std::size_t n,
                 std::int32_t* sums) {
  for (std::size_t f = 0; f < n; ++f) {
    const std::uint64_t h = hashes[f];
    const std::int32_t w = weights[f];
    for (int bit = 0; bit < 64; ++bit) sums[bit] += w & -static_cast<std::int32_t>((h >> bit) & 1);
  }
}

void AddUniformPortable(const std::uint64_t* hashes, std::size_t n, std::int32_t weight,
                        std::int32_t* sums) {
  for (int bit = 0; bit < 64; ++bit) {
    std::int32_t count = 0;
    for (std::size_t f = 0; f < n; ++f) count += static_cast<std::int32_t>((hashes[f] >> bit) & 1);
    sums[bit] += count * weight;
  }
}

#if defined(LOGFOLD_X86_SIMD)

// For each byte value, per bit: -1 where the bit is set, so `w & mask` is the bit's vote.
// constexpr, so it is ready even for callers running during static initialisation.
struct ByteMasks {
  alignas(16) std::int32_t v[256][8];
};
constexpr ByteMasks MakeByteMasks() {
  ByteMasks m{};
  for (int b = 0; b < 256; ++b) {
    for (int k = 0; k < 8; ++k) m.v[b][k] = ((b >> k) & 1) ? -1 : 0;
  }
  return m;
}
constexpr ByteMasks kByteMasks = MakeByteMasks();

void AddSse2(const std::uint64_t* hashes, const std::int32_t* weights, std::size_t n,
             std::int32_t* sums) {
  __m128i acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm_load_si128(reinterpret_cast<const __m128i*>(sums) + i);
  for (std::size_t f = 0; f < n; ++f) {
    const __m128i w = _mm_set1_epi32(weights[f]);
    std::uint64_t h = hashes[f];
    for (int byte = 0; byte < 8; ++byte, h >>= 8) {
      const auto* m = reinterpret_cast<const __m128i*>(kByteMasks.v[h & 0xff]);
      acc[2 * byte] = _mm_add_epi32(acc[2 * byte], _mm_and_si128(w, _mm_load_si128(m)));
      acc[2 * byte + 1] = _mm_add_epi32(acc[2 * byte + 1], _mm_and_si128(w, _mm_load_si128(m + 1)));
    }
  }
  for (int i = 0; i < 16; ++i) _mm_store_si128(reinterpret_cast<__m128i*>(sums) + i, acc[i]);
}

// Lane j of group g holds bit 8g+j: a variable shift moves it to the sign bit, an arithmetic
// shift spreads it into a mask.
__attribute__((target("avx2"))) void AddAvx2(const std::uint64_t* hashes,
                                             const std::int32_t* weights, std::size_t n,
                                             std::int32_t* sums) {
  __m256i acc[8];
  for (int i = 0; i < 8; ++i)
    acc[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(sums) + i);
  __m256i to_sign[4];
  for (int g = 0; g < 4; ++g) {
    const int top = 31 - 8 * g;
    to_sign[g] =
        _mm256_setr_epi32(top, top - 1, top - 2, top - 3, top - 4, top - 5, top - 6, top - 7);
  }
  for (std::size_t f = 0; f < n; ++f) {
    const __m256i w = _mm256_set1_epi32(weights[f]);
    const std::uint64_t h = hashes[f];
    const __m256i lo = _mm256_set1_epi32(static_cast<std::int32_t>(h));
    const __m256i hi = _mm256_set1_epi32(static_cast<std::int32_t>(h >> 32));
    for (int g = 0; g < 4; ++g) {
      const __m256i mlo = _mm256_srai_epi32(_mm256_sllv_epi32(lo, to_sign[g]), 31);
      const __m256i mhi = _mm256_srai_epi32(_mm256_sllv_epi32(hi, to_sign[g]), 31);
      acc[g] = _mm256_add_epi32(acc[g], _mm256_and_si256(w, mlo));
      acc[g + 4] = _mm256_add_epi32(acc[g + 4], _mm256_and_si256(w, mhi));
    }
  }
  for (int i = 0; i < 8; ++i) _mm256_store_si256(reinterpret_cast<__m256i*>(sums) + i, acc[i]);
}

// The hash's bits are the lane masks of four masked adds. The four accumulators are named,
// not an array indexed in a loop: GCC kept such an array on the stack and paid a store and a
// reload per add.
__attribute__((target("avx512f"))) void AddAvx512(const std::uint64_t* hashes,
                                                  const std::int32_t* weights, std::size_t n,
                                                  std::int32_t* sums) {
  __m512i acc0 = _mm512_load_si512(sums);
  __m512i acc1 = _mm512_load_si512(sums + 16);
  __m512i acc2 = _mm512_load_si512(sums + 32);
  __m512i acc3 = _mm512_load_si512(sums + 48);
  for (std::size_t f = 0; f < n; ++f) {
    const __m512i w = _mm512_set1_epi32(weights[f]);
    const std::uint64_t h = hashes[f];
    acc0 = _mm512_mask_add_epi32(acc0, static_cast<__mmask16>(h), acc0, w);
    acc1 = _mm512_mask_add_epi32(acc1, static_cast<__mmask16>(h >> 16), acc1, w);
    acc2 = _mm512_mask_add_epi32(acc2, static_cast<__mmask16>(h >> 32), acc2, w);
    acc3 = _mm512_mask_add_epi32(acc3, static_cast<__mmask16>(h >> 48), acc3, w);
  }
  _mm512_store_si512(sums, acc0);
  _mm512_store_si512(sums + 16, acc1);
  _mm512_store_si512(sums + 32, acc2);
  _mm512_store_si512(sums + 48, acc3);
}

// counts[j] = how many of the n <= 255 hashes have bit j set. Byte lane j of the two counters
// counts bit j (lo) or 32 + j (hi): a shuffle copies hash byte j / 8 into the lane, an AND with
// 1 << (j % 8) and a compare turn it into 0 or -1, and subtracting that counts.
__attribute__((target("avx2"))) inline void CountBitsAvx2(const std::uint64_t* hashes,
                                                          std::size_t n, std::uint8_t* counts) {
  const __m256i spread_lo = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                             2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i spread_hi = _mm256_setr_epi8(4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5,  //
                                             6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7);
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  __m256i count_lo = _mm256_setzero_si256();
  __m256i count_hi = _mm256_setzero_si256();
  for (std::size_t f = 0; f < n; ++f) {
    const __m256i h = _mm256_set1_epi64x(static_cast<long long>(hashes[f]));
    const __m256i lo = _mm256_and_si256(_mm256_shuffle_epi8(h, spread_lo), bit);
    const __m256i hi = _mm256_and_si256(_mm256_shuffle_epi8(h, spread_hi), bit);
    count_lo = _mm256_sub_epi8(count_lo, _mm256_cmpeq_epi8(lo, bit));
    count_hi = _mm256_sub_epi8(count_hi, _mm256_cmpeq_epi8(hi, bit));
  }
  _mm256_store_si256(reinterpret_cast<__m256i*>(counts), count_lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(counts + 32), count_hi);
}

// Bits 8g..8g+7 of counts (bytes), widened to int32 and multiplied by the weight.
__attribute__((target("avx2"))) inline __m256i WeightedCountsAvx2(const std::uint8_t* counts, int g,
                                                                  std::int32_t weight) {
  const __m256i c =
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(counts + 8 * g)));
  return _mm256_mullo_epi32(c, _mm256_set1_epi32(weight));
}

// Bits counted 255 features at a time, each count multiplied by the weight once.
__attribute__((target("avx2"))) void AddUniformAvx2(const std::uint64_t* hashes, std::size_t n,
                                                    std::int32_t weight, std::int32_t* sums) {
  alignas(32) std::uint8_t counts[64];
  while (n > 0) {
    const std::size_t chunk = n < 255 ? n : 255;
    CountBitsAvx2(hashes, chunk, counts);
    for (int g = 0; g < 8; ++g) {
      __m256i* out = reinterpret_cast<__m256i*>(sums) + g;
      _mm256_store_si256(
          out, _mm256_add_epi32(_mm256_load_si256(out), WeightedCountsAvx2(counts, g, weight)));
    }
    hashes += chunk;
    n -= chunk;
  }
}

// Up to kMaxRuns runs of up to 255 features each: each run's per-bit counts go to a byte row,
// then each group of 8 bits sums its rows times their weights and compares with the total
// (bit i is set when 2 * sums[i] > total; exact in int32 while total < 2^30, which the caller
// checks). Only a few registers stay live, so nothing spills and no sums array is zeroed.
constexpr std::size_t kMaxRuns = 16;

__attribute__((target("avx2"))) std::uint64_t SimHashOfUniformRunsAvx2(
    std::span<const UniformFeatures> runs, std::int32_t total) {
  alignas(32) std::uint8_t counts[kMaxRuns][64];
  for (std::size_t r = 0; r < runs.size(); ++r) CountBitsAvx2(runs[r].hashes, runs[r].n, counts[r]);
  const __m256i t = _mm256_set1_epi32(total);
  std::uint64_t fp = 0;
  for (int g = 0; g < 8; ++g) {
    __m256i sums = _mm256_setzero_si256();
    for (std::size_t r = 0; r < runs.size(); ++r) {
      sums = _mm256_add_epi32(sums, WeightedCountsAvx2(counts[r], g, runs[r].weight));
    }
    const __m256i gt = _mm256_cmpgt_epi32(_mm256_add_epi32(sums, sums), t);
    fp |= static_cast<std::uint64_t>(_mm256_movemask_ps(_mm256_castsi256_ps(gt))) << (8 * g);
  }
  return fp;
}

#endif  // LOGFOLD_X86_SIMD

using AddFn = void (*)(const std::uint64_t*, const std::int32_t*, std::size_t, std::int32_t*);

AddFn Resolve(SimHashKernel kernel) {
  if (!SimHashKernelSupported(kernel)) return AddPortable;
  switch (kernel) {
#if defined(LOGFOLD_X86_SIMD)
    case SimHashKernel::kSse2:
      return AddSse2;
    case SimHashKernel::kAvx2:
      return AddAvx2;
    case SimHashKernel::kAvx512:
      return AddAvx512;
#endif
    default:
      return AddPortable;
  }
}

SimHashKernel Best() {
  for (SimHashKernel k : {SimHashKernel::kAvx512, SimHashKernel::kAvx2, SimHashKernel::kSse2}) {
    if (SimHashKernelSupported(k)) return k;
  }
  return SimHashKernel::kPortable;
}

}  // namespace

std::uint64_t SimHashVotes::Fingerprint() const {
#if defined(LOGFOLD_X86_SIMD)
  // 2 * sums[i] > total, four bits at a time; int32 is exact while the total is below 2^30
  // (a million features of full weight), and the scalar loop below takes over beyond.
  if (total < (std::int64_t{1} << 30)) {
    const __m128i t = _mm_set1_epi32(static_cast<std::int32_t>(total));
    std::uint64_t fp = 0;
    for (int i = 0; i < 16; ++i) {
      const __m128i s = _mm_load_si128(reinterpret_cast<const __m128i*>(sums) + i);
      const __m128i gt = _mm_cmpgt_epi32(_mm_add_epi32(s, s), t);
      fp |= static_cast<std::uint64_t>(_mm_movemask_ps(_mm_castsi128_ps(gt))) << (4 * i);
    }
    return fp;
  }
#endif
  std::uint64_t fp = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (2 * std::int64_t{sums[bit]} > total) fp |= std::uint64_t{1} << bit;
  }
  return fp;
}

bool SimHashKernelSupported(SimHashKernel kernel) {
  switch (kernel) {
    case SimHashKernel::kAuto:
    case SimHashKernel::kPortable:
      return true;
#if defined(LOGFOLD_X86_SIMD)
    case SimHashKernel::kSse2:
      return true;
    case SimHashKernel::kAvx2:
      __builtin_cpu_init();  // may run before libgcc's own initialiser
      return __builtin_cpu_supports("avx2");
    case SimHashKernel::kAvx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f");
#endif
    default:
      return false;
  }
}

void AddSimHashVotes(const std::uint64_t* hashes, const std::int32_t* weights, std::size_t n,
                     SimHashVotes& votes, SimHashKernel kernel) {
  static const AddFn best = Resolve(Best());  // a local static: safe during static init
  const AddFn add = kernel == SimHashKernel::kAuto ? best : Resolve(kernel);
  add(hashes, weights, n, votes.sums);
  for (std::size_t f = 0; f < n; ++f) votes.total += weights[f];
}

void AddUniformSimHashVotes(const std::uint64_t* hashes, std::size_t n, std::int32_t weight,
                            SimHashVotes& votes, SimHashKernel kernel) {
  static const SimHashKernel best = Best();
  if (kernel == SimHashKernel::kAuto) kernel = best;
  if (!SimHashKernelSupported(kernel)) kernel = SimHashKernel::kPortable;
  votes.total += static_cast<std::int64_t>(weight) * static_cast<std::int64_t>(n);
  switch (kernel) {
#if defined(LOGFOLD_X86_SIMD)
    case SimHashKernel::kAvx2:
      AddUniformAvx2(hashes, n, weight, votes.sums);
      return;
    case SimHashKernel::kSse2:
    case SimHashKernel::kAvx512: {
      // Their weighted kernels are as cheap per feature as counting would be (AVX-512: one
      // masked add per 16 bits; SSE2 has no byte shuffle): fed the one weight repeated.
      const AddFn add = Resolve(kernel);
      std::int32_t weights[256];
      std::fill_n(weights, std::min<std::size_t>(256, n), weight);
      for (std::size_t start = 0; start < n; start += 256) {
        add(hashes + start, weights, std::min<std::size_t>(256, n - start), votes.sums);
      }
      return;
    }
#endif
    default:
      AddUniformPortable(hashes, n, weight, votes.sums);
  }
}

std::uint64_t SimHashOfUniformRuns(std::span<const UniformFeatures> runs, SimHashKernel kernel) {
  static const SimHashKernel best = Best();
  if (kernel == SimHashKernel::kAuto) kernel = best;
#if defined(LOGFOLD_X86_SIMD)
  // Every AVX-512 CPU has AVX2, whose byte counters serve there too: the per-run fallback
  // below would build a weight array per run.
  static const bool has_avx2 = SimHashKernelSupported(SimHashKernel::kAvx2);
  if ((kernel == SimHashKernel::kAvx2 || kernel == SimHashKernel::kAvx512) && has_avx2) {
    std::int64_t total = 0;
    for (const UniformFeatures& run : runs) {
      total += static_cast<std::int64_t>(run.weight) * static_cast<std::int64_t>(run.n);
    }
    bool short_runs = runs.size() <= kMaxRuns;
    for (const UniformFeatures& run : runs) short_runs = short_runs && run.n <= 255;
    if (short_runs && total < (std::int64_t{1} << 30)) {
      return SimHashOfUniformRunsAvx2(runs, static_cast<std::int32_t>(total));
    }
  }
#endif
  SimHashVotes votes;
  for (const UniformFeatures& run : runs) {
    AddUniformSimHashVotes(run.hashes, run.n, run.weight, votes, kernel);
  }
  return votes.Fingerprint();
}

}  // namespace logfold
