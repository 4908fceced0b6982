// SimHash over weighted XXH3 features. Weights are quantised to integers so a fingerprint is
// bit-for-bit the same on every build and platform: users store fingerprints.
#include "pipeline/fingerprinter.h"

// Inlined XXH3: per-token hashes of a few bytes are dominated by the call through the shared
// library's PLT otherwise. Same algorithm and results as libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>

namespace logfold {
namespace {

constexpr std::uint64_t kClassSeed = 0x6c6f67666f6c6401ULL;  // "logfold" + version 1
constexpr std::uint64_t kPairSeed = 0x6c6f67666f6c6402ULL;

// Digit-bearing words with this many digit runs are opaque identifiers: their shape is as
// random as their digits, so only the class is hashed.
constexpr int kOpaqueDigitRuns = 3;

std::uint64_t ClassHash(TokenClass cls) {
  const auto c = static_cast<std::uint8_t>(cls);
  return XXH3_64bits_withSeed(&c, 1, kClassSeed);
}

struct ClassHashes {
  std::array<std::uint64_t, static_cast<std::size_t>(TokenClass::kCount_)> v;
  ClassHashes() {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = ClassHash(static_cast<TokenClass>(i));
  }
};
const ClassHashes kClassHashes;

// Round half up of w * 1024 for w in [0, 1] (what lround gives for non-negative values).
std::int32_t Quantise(float w) {
  return static_cast<std::int32_t>(std::clamp(w, 0.0f, 1.0f) * 1024.0f + 0.5f);
}

// For each byte value, per bit: 0 where the bit is set (add w), -1 where it is clear (add -w,
// computed as (w ^ -1) - (-1)). A negate by mask needs no multiply, which SSE2 lacks for int32.
struct ByteSignMasks {
  alignas(16) std::int32_t v[256][8];
  ByteSignMasks() {
    for (int b = 0; b < 256; ++b) {
      for (int k = 0; k < 8; ++k) v[b][k] = ((b >> k) & 1) ? 0 : -1;
    }
  }
};
const ByteSignMasks kByteSignMasks;

}  // namespace

Fingerprinter::Fingerprinter(const FeatureWeights& weights) : weights_(weights) {}

std::uint64_t Fingerprinter::TokenHash(std::string_view message, const Token& token) {
  std::string_view text = message.substr(token.offset, token.length);
  if (token.cls == TokenClass::kWord) return XXH3_64bits(text.data(), text.size());
  if (token.cls != TokenClass::kDigitWord) {
    return kClassHashes.v[static_cast<std::size_t>(token.cls)];
  }
  // Shape: digit runs folded to '#', so en0/en1 agree but en0/awdl0 do not.
  char shape[64];
  std::size_t n = 0;
  int runs = 0;
  bool in_run = false;
  for (char c : text) {
    const bool digit = c >= '0' && c <= '9';
    if (digit) {
      if (!in_run) {
        ++runs;
        if (n < sizeof shape) shape[n++] = '#';
      }
    } else if (n < sizeof shape) {
      shape[n++] = c;
    }
    in_run = digit;
  }
  if (runs >= kOpaqueDigitRuns || text.size() > sizeof shape) {
    return kClassHashes.v[static_cast<std::size_t>(TokenClass::kDigitWord)];
  }
  return XXH3_64bits_withSeed(shape, n, kClassSeed);
}

void Fingerprinter::Features(std::string_view message, const std::vector<Token>& tokens,
                             std::vector<Feature>& out) const {
  hashes_scratch_.clear();
  for (const Token& t : tokens) hashes_scratch_.push_back(TokenHash(message, t));
  FeaturesFromHashes(tokens, hashes_scratch_, {}, out);
}

void Fingerprinter::FeaturesFromHashes(std::span<const Token> tokens,
                                       std::span<const std::uint64_t> hashes,
                                       std::span<const std::uint8_t> skip,
                                       std::vector<Feature>& out) const {
  out.clear();
  bool have_prev = false;
  std::uint64_t prev_hash = 0;
  float prev_weight = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!skip.empty() && skip[i] != 0) {
      have_prev = false;
      continue;
    }
    const std::uint64_t h = hashes[i];
    const float w = weights_.Of(tokens[i].cls);
    out.push_back(Feature{h, w});
    if (weights_.pairs && have_prev) {
      const std::uint64_t pair[2] = {prev_hash, h};
      out.push_back(
          Feature{XXH3_64bits_withSeed(pair, sizeof pair, kPairSeed), std::min(prev_weight, w)});
    }
    have_prev = true;
    prev_hash = h;
    prev_weight = w;
  }
}

std::uint64_t Fingerprinter::SimHash(const std::vector<Feature>& features) {
  // Votes are added a byte of hash at a time from a per-byte table of sign masks: 8 lanes of
  // conditional negate-and-add, done with SSE2 where available (every x86-64).
  alignas(16) std::int32_t votes[64] = {};
#if defined(__SSE2__)
  __m128i acc[16];
  for (auto& a : acc) a = _mm_setzero_si128();
  for (const Feature& f : features) {
    const std::int32_t w = Quantise(f.weight);
    if (w == 0) continue;
    const __m128i wv = _mm_set1_epi32(w);
    std::uint64_t h = f.hash;
    for (int byte = 0; byte < 8; ++byte, h >>= 8) {
      const auto* m = reinterpret_cast<const __m128i*>(kByteSignMasks.v[h & 0xff]);
      const __m128i m0 = _mm_load_si128(m), m1 = _mm_load_si128(m + 1);
      acc[2 * byte] = _mm_add_epi32(acc[2 * byte], _mm_sub_epi32(_mm_xor_si128(wv, m0), m0));
      acc[2 * byte + 1] =
          _mm_add_epi32(acc[2 * byte + 1], _mm_sub_epi32(_mm_xor_si128(wv, m1), m1));
    }
  }
  for (int i = 0; i < 16; ++i) _mm_store_si128(reinterpret_cast<__m128i*>(votes + 4 * i), acc[i]);
#else
  for (const Feature& f : features) {
    const std::int32_t w = Quantise(f.weight);
    if (w == 0) continue;
    std::uint64_t h = f.hash;
    for (int byte = 0; byte < 8; ++byte, h >>= 8) {
      const std::int32_t* masks = kByteSignMasks.v[h & 0xff];
      std::int32_t* v = votes + byte * 8;
      for (int k = 0; k < 8; ++k) v[k] += (w ^ masks[k]) - masks[k];
    }
  }
#endif
  std::uint64_t fp = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (votes[bit] > 0) fp |= std::uint64_t{1} << bit;
  }
  return fp;
}

std::uint64_t Fingerprinter::Fingerprint(std::string_view message,
                                         const std::vector<Token>& tokens) {
  Features(message, tokens, scratch_);
  return SimHash(scratch_);
}

}  // namespace logfold
