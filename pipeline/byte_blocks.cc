// Byte block kernels: a scalar table walk, and AVX2 classifying 32 bytes per step with two
// nibble-table lookups (vpshufb), compiled per function so a baseline x86-64 build runs anywhere.
#include "pipeline/byte_blocks.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LOGFOLD_X86_SIMD 1
#endif

namespace logfold {
namespace {

constexpr std::uint8_t kSeparatorBit = 1;
constexpr std::uint8_t kCandidateBit = 2;

constexpr std::array<std::uint8_t, 256> MakeByteKinds() {
  std::array<std::uint8_t, 256> t{};
  for (char c : kTokenSeparators) t[static_cast<unsigned char>(c)] = kSeparatorBit;
  for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = kCandidateBit;
  for (char c : {':', '/', '@'}) t[static_cast<unsigned char>(c)] = kCandidateBit;
  return t;
}
constexpr std::array<std::uint8_t, 256> kByteKinds = MakeByteKinds();

ByteBlock ScanScalar(const char* data, std::size_t len) {
  ByteBlock b{len < 64 ? ~std::uint64_t{0} << len : 0, 0};
  for (std::size_t j = 0; j < len; ++j) {
    const std::uint64_t kind = kByteKinds[static_cast<unsigned char>(data[j])];
    b.separators |= (kind & kSeparatorBit) << j;
    b.candidates |= ((kind & kCandidateBit) >> 1) << j;
  }
  return b;
}

#if defined(LOGFOLD_X86_SIMD)

// A byte belongs to a group when lo_table[low nibble] & hi_table[high nibble] has the group's
// bit. Each group is "high nibble h, low nibble in a set", so eight groups cover the 21
// separators (by high nibble 0, 2, 3, 5, 7) and the candidates (digits with ':', '/', '@').
// Bytes >= 0x80 have no group (their high-nibble entry is 0). A test checks every byte value
// against the scalar table.
struct NibbleGroup {
  int hi;
  std::uint16_t lo_set;  // bit l: low nibble l belongs
  std::uint8_t bit;
};
constexpr std::uint8_t kSeparatorGroups = 0x1f;  // bits 0-4
constexpr std::uint8_t kCandidateGroups = 0xe0;  // bits 5-7
constexpr NibbleGroup kGroups[] = {
    {0x0, 0b0011'1110'0000'0001, 0x01},  // \0 \t \n \v \f \r
    {0x2, 0b0001'0011'1000'0101, 0x02},  // ' ' " ' ( ) ,
    {0x3, 0b0111'1000'0000'0000, 0x04},  // ; < = >
    {0x5, 0b0010'1000'0000'0000, 0x08},  // [ ]
    {0x7, 0b0011'1000'0000'0000, 0x10},  // { | }
    {0x3, 0b0000'0111'1111'1111, 0x20},  // 0-9 :
    {0x2, 0b1000'0000'0000'0000, 0x40},  // /
    {0x4, 0b0000'0000'0000'0001, 0x80},  // @
};
struct NibbleTables {
  alignas(32) std::uint8_t lo[32];  // the 16 entries twice: vpshufb looks up per 128-bit lane
  alignas(32) std::uint8_t hi[32];
};
constexpr NibbleTables MakeNibbleTables() {
  NibbleTables t{};
  for (const NibbleGroup& g : kGroups) {
    for (int l = 0; l < 16; ++l) {
      if ((g.lo_set >> l) & 1) t.lo[l] = t.lo[l + 16] = static_cast<std::uint8_t>(t.lo[l] | g.bit);
    }
    t.hi[g.hi] = t.hi[g.hi + 16] = static_cast<std::uint8_t>(t.hi[g.hi] | g.bit);
  }
  return t;
}
constexpr NibbleTables kNibbleTables = MakeNibbleTables();

// A short block (every message's last) is read in place when its 64 bytes lie in one page:
// bytes past `len` are then loaded (from the same page, so the load cannot fault) and masked
// out of the bitmaps. Copying it into a zeroed buffer instead cost a memset, a libc memcpy
// and a failed store-to-load forward on every line. glibc's own AVX2 memchr and strlen read
// past the end within a page the same way. The sanitizers would report the over-read (ASan)
// or a race on the neighbour's bytes it loads but never uses (TSan), so they do not
// instrument this function.
__attribute__((target("avx2"), no_sanitize("address", "thread"))) ByteBlock ScanAvx2(
    const char* data, std::size_t len) {
  alignas(32) char padded[64];
  constexpr std::uintptr_t kPage = 4096;
  const bool short_block = len < 64;
  if (short_block && (reinterpret_cast<std::uintptr_t>(data) & (kPage - 1)) > kPage - 64) {
    // Crosses a page: copied into zeros, which are separators, as the contract wants.
    std::memset(padded, 0, sizeof padded);
    std::memcpy(padded, data, len);
    data = padded;
  }
  const __m256i lo_table = _mm256_load_si256(reinterpret_cast<const __m256i*>(kNibbleTables.lo));
  const __m256i hi_table = _mm256_load_si256(reinterpret_cast<const __m256i*>(kNibbleTables.hi));
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i zero = _mm256_setzero_si256();
  const __m256i separator_groups = _mm256_set1_epi8(static_cast<char>(kSeparatorGroups));
  const __m256i candidate_groups = _mm256_set1_epi8(static_cast<char>(kCandidateGroups));
  ByteBlock b{0, 0};
  for (int half = 0; half < 2; ++half) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + 32 * half));
    const __m256i lo = _mm256_shuffle_epi8(lo_table, _mm256_and_si256(v, nibble));
    // No byte-wide shift exists: shift 16-bit lanes and mask off what crossed in.
    const __m256i hi =
        _mm256_shuffle_epi8(hi_table, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble));
    const __m256i groups = _mm256_and_si256(lo, hi);
    // movemask of "no group bit" is the complement of the wanted mask.
    const auto not_sep = static_cast<std::uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(groups, separator_groups), zero)));
    const auto not_cand = static_cast<std::uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(groups, candidate_groups), zero)));
    b.separators |= std::uint64_t{~not_sep} << (32 * half);
    b.candidates |= std::uint64_t{~not_cand} << (32 * half);
  }
  if (short_block) {
    const std::uint64_t past_end = ~std::uint64_t{0} << len;
    b.separators |= past_end;
    b.candidates &= ~past_end;
  }
  return b;
}

#endif  // LOGFOLD_X86_SIMD

using ScanFn = ByteBlock (*)(const char*, std::size_t);

ScanFn Resolve(ByteBlockKernel kernel) {
  if (kernel == ByteBlockKernel::kAuto) {
    kernel = ByteBlockKernelSupported(ByteBlockKernel::kAvx2) ? ByteBlockKernel::kAvx2
                                                              : ByteBlockKernel::kScalar;
  }
#if defined(LOGFOLD_X86_SIMD)
  if (kernel == ByteBlockKernel::kAvx2 && ByteBlockKernelSupported(kernel)) return ScanAvx2;
#endif
  return ScanScalar;
}

}  // namespace

bool ByteBlockKernelSupported(ByteBlockKernel kernel) {
  switch (kernel) {
    case ByteBlockKernel::kAuto:
    case ByteBlockKernel::kScalar:
      return true;
    case ByteBlockKernel::kAvx2:
#if defined(LOGFOLD_X86_SIMD)
      __builtin_cpu_init();  // may run before libgcc's own initialiser
      return __builtin_cpu_supports("avx2");
#else
      return false;
#endif
  }
  return false;
}

ByteBlock ScanByteBlock(const char* data, std::size_t len, ByteBlockKernel kernel) {
  static const ScanFn best = Resolve(ByteBlockKernel::kAuto);  // a local static: init-safe
  return (kernel == ByteBlockKernel::kAuto ? best : Resolve(kernel))(data, len);
}

}  // namespace logfold
