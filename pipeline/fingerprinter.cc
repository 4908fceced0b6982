// SimHash over weighted XXH3 features. Weights are quantised to integers so a fingerprint is
// bit-for-bit the same on every build and platform: users store fingerprints.
#include "pipeline/fingerprinter.h"

// Inlined XXH3: per-token hashes of a few bytes are dominated by the call through the shared
// library's PLT otherwise. Same algorithm and results as libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cmath>

#include "pipeline/simhash_votes.h"

namespace logfold {
namespace {

constexpr std::uint64_t kClassSeed = 0x6c6f67666f6c6401ULL;  // "logfold" + version 1
constexpr std::uint64_t kPairSeed = 0x6c6f67666f6c6402ULL;
constexpr std::uint64_t kLiteralKeySeed = 0x6c6f67666f6c6403ULL;

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

}  // namespace

Fingerprinter::Fingerprinter(const FeatureWeights& weights) : weights_(weights) {
  std::array<std::int32_t, kClasses> quantised;
  for (std::size_t c = 0; c < kClasses; ++c) {
    quantised[c] = Quantise(weights_.Of(static_cast<TokenClass>(c)));
  }
  std::array<std::int32_t, kClasses> distinct = quantised;
  std::sort(distinct.begin(), distinct.end());
  slots_ =
      static_cast<std::size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  std::copy_n(distinct.begin(), slots_, slot_weight_.begin());
  for (std::size_t c = 0; c < kClasses; ++c) {
    slot_of_class_[c] = static_cast<std::uint8_t>(
        std::lower_bound(distinct.begin(), distinct.begin() + slots_, quantised[c]) -
        distinct.begin());
  }
}

namespace {

// TokenHash's body, inlined into the fingerprint's token loop.
// `text` is the token's text.
[[gnu::always_inline]] inline std::uint64_t TokenHashOf(std::string_view text, const Token& token) {
  if (token.cls == TokenClass::kWord) return XXH3_64bits(text.data(), text.size());
  if (token.cls != TokenClass::kDigitWord) {
    if (token.cls != TokenClass::kLiteral)
      return kClassHashes.v[static_cast<std::size_t>(token.cls)];
    // A literal stands for its key (overlap:true ~ overlap:false, not visible:true); a bare one
    // (enabled=null) for the empty key.
    const std::size_t colon = text.rfind(':');
    const std::size_t key = colon == std::string_view::npos ? 0 : colon + 1;
    return XXH3_64bits_withSeed(text.data(), key, kLiteralKeySeed);
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

}  // namespace

std::uint64_t Fingerprinter::ClassHashOf(TokenClass cls) { return ClassHash(cls); }

std::uint64_t Fingerprinter::TokenHash(std::string_view message, const Token& token) {
  return TokenHashOf(message.substr(token.offset, token.length), token);
}

void Fingerprinter::TokenHashes(std::string_view message, std::span<const Token> tokens,
                                std::vector<std::uint64_t>& out) {
  out.resize(tokens.size());
  // The tokens lie inside the message (as Tokenize gives them): no substr bounds check and
  // clamp per token.
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    out[i] = TokenHashOf(std::string_view(message.data() + tokens[i].offset, tokens[i].length),
                         tokens[i]);
  }
}

void Fingerprinter::Features(std::string_view message, const std::vector<Token>& tokens,
                             std::vector<Feature>& out) const {
  TokenHashes(message, tokens, hashes_scratch_);
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
  // Quantised a chunk at a time into arrays the vote kernels stream over.
  constexpr std::size_t kChunk = 256;
  std::uint64_t hashes[kChunk];
  std::int32_t weights[kChunk];
  SimHashVotes votes;
  for (std::size_t start = 0; start < features.size(); start += kChunk) {
    const std::size_t n = std::min(kChunk, features.size() - start);
    for (std::size_t i = 0; i < n; ++i) {
      hashes[i] = features[start + i].hash;
      weights[i] = Quantise(features[start + i].weight);
    }
    AddSimHashVotes(hashes, weights, n, votes);
  }
  return votes.Fingerprint();
}

// Features and SimHash in one pass: the same votes as SimHash(Features(...)), since
// quantising is monotonic (the quantised minimum of a pair is the minimum of the quantised
// weights) and integer sums do not depend on the order features are added in.
template <typename HashOf>
std::uint64_t Fingerprinter::FoldFeatures(std::span<const Token> tokens, HashOf hash_of,
                                          std::span<const std::uint8_t> skip) {
  const std::size_t stride = 2 * tokens.size();
  if (by_weight_stride_ < stride) {
    by_weight_stride_ = stride;
    by_weight_.resize(slots_ * stride);
  }
  std::uint64_t* const by_weight = by_weight_.data();
  const std::size_t row = by_weight_stride_;
  std::array<std::uint32_t, kClasses> counts{};
  bool have_prev = false;
  std::uint64_t prev_hash = 0;
  std::size_t prev_slot = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!skip.empty() && skip[i] != 0) {
      have_prev = false;
      continue;
    }
    const std::uint64_t h = hash_of(i);
    const std::size_t slot = slot_of_class_[static_cast<std::size_t>(tokens[i].cls)];
    by_weight[slot * row + counts[slot]++] = h;
    if (weights_.pairs && have_prev) {
      const std::uint64_t pair[2] = {prev_hash, h};
      const std::size_t pair_slot = std::min(prev_slot, slot);
      by_weight[pair_slot * row + counts[pair_slot]++] =
          XXH3_64bits_withSeed(pair, sizeof pair, kPairSeed);
    }
    have_prev = true;
    prev_hash = h;
    prev_slot = slot;
  }
  std::array<UniformFeatures, kClasses> runs;
  std::size_t n_runs = 0;
  for (std::size_t slot = 0; slot < slots_; ++slot) {
    if (counts[slot] != 0 && slot_weight_[slot] != 0) {
      runs[n_runs++] = {by_weight + slot * row, counts[slot], slot_weight_[slot]};
    }
  }
  return SimHashOfUniformRuns({runs.data(), n_runs});
}

std::uint64_t Fingerprinter::Fingerprint(std::string_view message,
                                         const std::vector<Token>& tokens) {
  return FoldFeatures(tokens,
                      [&](std::size_t i) {
                        return TokenHashOf(message.substr(tokens[i].offset, tokens[i].length),
                                           tokens[i]);
                      },
                      {});
}

std::uint64_t Fingerprinter::FingerprintFromHashes(std::span<const Token> tokens,
                                                   std::span<const std::uint64_t> hashes,
                                                   std::span<const std::uint8_t> skip) {
  return FoldFeatures(
      tokens, [&](std::size_t i) { return hashes[i]; }, skip);
}

}  // namespace logfold
