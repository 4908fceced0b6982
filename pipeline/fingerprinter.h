// Fingerprinter: the 64-bit weighted SimHash (Charikar) of a tokenized message. Each feature
// (a token, or a masked class, plus adjacent-token pairs) is hashed with XXH3-64 and weighted.
#ifndef LOGFOLD_PIPELINE_FINGERPRINTER_H_
#define LOGFOLD_PIPELINE_FINGERPRINTER_H_

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "pipeline/tokenizer.h"

namespace logfold {

// Weights are in [0, 1]. Masked classes weigh little, so lines made mostly of variables do not
// collide on their variable parts; a pair weighs as its weaker member.
struct FeatureWeights {
  float word = 1.0f;
  std::array<float, static_cast<std::size_t>(TokenClass::kCount_)> by_class = {
      1.0f,  // kWord (unused: see `word`)
      0.1f,  // kInteger
      0.1f,  // kFloat
      0.1f,  // kHex
      0.1f,  // kIPv4
      0.1f,  // kIPv6
      0.1f,  // kMac
      0.1f,  // kUuid
      0.1f,  // kDateTime
      0.1f,  // kPath
      0.1f,  // kUrl
      0.1f,  // kEmail
      0.1f,  // kHostPort
      0.2f,  // kDigitWord
      0.1f,  // kLiteral
      0.1f,  // kEmpty
  };
  bool pairs = true;  // add adjacent-token pair features
  bool operator==(const FeatureWeights&) const = default;
  float Of(TokenClass cls) const {
    return cls == TokenClass::kWord ? word : by_class[static_cast<std::size_t>(cls)];
  }
};

// One weighted feature, as fed to the SimHash accumulator.
struct Feature {
  std::uint64_t hash;
  float weight;
};

class Fingerprinter {
 public:
  Fingerprinter() : Fingerprinter(FeatureWeights{}) {}
  explicit Fingerprinter(const FeatureWeights& weights);

  // The hash standing for a token: its text for words, its class (and for kDigitWord its
  // shape with digit runs folded to '#'; for kLiteral its key, the text up to its last ':')
  // for variables.
  static std::uint64_t TokenHash(std::string_view message, const Token& token);
  // The hash standing for every token of a class hashed by its class alone (kHostPort, ...).
  static std::uint64_t ClassHashOf(TokenClass cls);
  // TokenHash of every token into `out` (replaced, capacity reused), in one inlined loop.
  static void TokenHashes(std::string_view message, std::span<const Token> tokens,
                          std::vector<std::uint64_t>& out);

  // Builds the weighted features of a tokenized message into `out` (capacity reused).
  void Features(std::string_view message, const std::vector<Token>& tokens,
                std::vector<Feature>& out) const;

  // The same from token hashes already computed with TokenHash. Positions whose `skip` byte
  // is non-zero (an empty span skips none) contribute nothing, nor do pairs touching them.
  void FeaturesFromHashes(std::span<const Token> tokens, std::span<const std::uint64_t> hashes,
                          std::span<const std::uint8_t> skip, std::vector<Feature>& out) const;

  // SimHash of a feature list: bit i is set when the weighted votes for bit i are positive.
  static std::uint64_t SimHash(const std::vector<Feature>& features);

  // SimHash(Features(...)) in one pass, using internal scratch buffers (not thread-safe).
  std::uint64_t Fingerprint(std::string_view message, const std::vector<Token>& tokens);

  // SimHash(FeaturesFromHashes(...)) in one pass, with the same scratch buffers.
  std::uint64_t FingerprintFromHashes(std::span<const Token> tokens,
                                      std::span<const std::uint64_t> hashes,
                                      std::span<const std::uint8_t> skip);

  const FeatureWeights& weights() const { return weights_; }

 private:
  static constexpr std::size_t kClasses = static_cast<std::size_t>(TokenClass::kCount_);

  // Features grouped by weight into `by_weight_`, then each group's votes added at once.
  template <typename HashOf>
  std::uint64_t FoldFeatures(std::span<const Token> tokens, HashOf hash_of,
                             std::span<const std::uint8_t> skip);

  FeatureWeights weights_;
  // The distinct quantised weights in ascending order, and each class's index among them:
  // a pair's weight, the smaller of its members', is then the smaller index.
  std::array<std::int32_t, kClasses> slot_weight_{};
  std::array<std::uint8_t, kClasses> slot_of_class_{};
  std::size_t slots_ = 0;
  mutable std::vector<std::uint64_t> hashes_scratch_;  // Features()
  std::vector<std::uint64_t> by_weight_;  // slot s's features at [s * by_weight_stride_, ...)
  std::size_t by_weight_stride_ = 0;
};

inline int HammingDistance(std::uint64_t a, std::uint64_t b) { return __builtin_popcountll(a ^ b); }

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_FINGERPRINTER_H_
