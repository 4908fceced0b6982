// A slow, plainly written reference of the fingerprint algorithm documented in README.md and
// pipeline/fingerprinter.h, independent of Fingerprinter's code: the differential fuzz target
// and fingerprint_reference_test compare the fast implementation against it bit for bit.
#ifndef LOGFOLD_TESTS_FUZZ_REFERENCE_FINGERPRINT_H_
#define LOGFOLD_TESTS_FUZZ_REFERENCE_FINGERPRINT_H_

#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/tokenizer.h"

namespace logfold::reference {

// The tokenizer's definition, a byte at a time: tokens are maximal runs of bytes that are not
// separators, less trailing ':' '.' '!' '?' (a token left empty is dropped), classed by
// Tokenizer::Classify, at most max_tokens of them.
inline std::vector<Token> Tokenize(std::string_view message, std::uint32_t max_tokens) {
  constexpr std::string_view kSeparators(" \t\r\n\v\f,;=()[]{}\"'<>|\0", 21);
  const auto trailing = [](char c) { return c == ':' || c == '.' || c == '!' || c == '?'; };
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < message.size() && out.size() < max_tokens) {
    if (kSeparators.find(message[i]) != std::string_view::npos) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < message.size() && kSeparators.find(message[i]) == std::string_view::npos) ++i;
    std::size_t end = i;
    while (end > start && trailing(message[end - 1])) --end;
    if (end == start) continue;
    out.push_back(Token{static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(end - start),
                        Tokenizer::Classify(message.substr(start, end - start))});
  }
  return out;
}

// The seeds are part of the fingerprint's definition ("logfold" + 1 and + 2), so stored
// fingerprints stay valid: they are spelled out here rather than taken from the library.
constexpr std::uint64_t kClassSeed = 0x6c6f67666f6c6401ULL;
constexpr std::uint64_t kPairSeed = 0x6c6f67666f6c6402ULL;

// Weights as the number of 1/1024 steps, indexed by TokenClass (kWord first).
struct Weights {
  std::int64_t by_class[static_cast<int>(TokenClass::kCount_)] = {
      1024, 102, 102, 102, 102, 102, 102, 102, 102, 102, 102, 102, 102, 205};
  bool pairs = true;
};

// A weight in [0, 1] as steps of 1/1024, rounded half up (clamped first).
inline std::int64_t WeightSteps(double w) {
  if (w < 0) w = 0;
  if (w > 1) w = 1;
  return static_cast<std::int64_t>(w * 1024 + 0.5);
}

// A variable of any class but kDigitWord stands for its class: the hash of the class's
// number as one byte.
inline std::uint64_t ClassHash(TokenClass cls) {
  const unsigned char byte = static_cast<unsigned char>(cls);
  return XXH3_64bits_withSeed(&byte, 1, kClassSeed);
}

// A word stands for its text; a digit-bearing word for its shape (each run of digits
// replaced by one '#'), unless it has three or more digit runs or is longer than 64 bytes,
// when it is an opaque identifier and stands for its class.
inline std::uint64_t TokenHash(std::string_view text, TokenClass cls) {
  if (cls == TokenClass::kWord) return XXH3_64bits(text.data(), text.size());
  if (cls != TokenClass::kDigitWord) return ClassHash(cls);
  std::string shape;
  int digit_runs = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool digit = text[i] >= '0' && text[i] <= '9';
    const bool previous_digit = i > 0 && text[i - 1] >= '0' && text[i - 1] <= '9';
    if (!digit) {
      shape += text[i];
    } else if (!previous_digit) {
      shape += '#';
      ++digit_runs;
    }
  }
  if (digit_runs >= 3 || text.size() > 64) return ClassHash(TokenClass::kDigitWord);
  return XXH3_64bits_withSeed(shape.data(), shape.size(), kClassSeed);
}

struct WeightedHash {
  std::uint64_t hash;
  std::int64_t weight;
};

// Every token is a feature; with pairs on, so is every adjacent pair of tokens, hashed as the
// two token hashes' 16 bytes (native byte order) and weighing as the lighter of the two.
// Skipped positions (skip[i] != 0; an empty vector skips none) give no feature and no pair.
inline std::vector<WeightedHash> Features(std::string_view message,
                                          const std::vector<Token>& tokens, const Weights& weights,
                                          const std::vector<std::uint8_t>& skip = {}) {
  std::vector<WeightedHash> features;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!skip.empty() && skip[i] != 0) continue;
    const Token& t = tokens[i];
    const std::uint64_t hash = TokenHash(message.substr(t.offset, t.length), t.cls);
    const std::int64_t weight = weights.by_class[static_cast<int>(t.cls)];
    features.push_back({hash, weight});
    const bool previous_kept = i > 0 && (skip.empty() || skip[i - 1] == 0);
    if (weights.pairs && previous_kept) {
      const Token& p = tokens[i - 1];
      const std::uint64_t previous_hash = TokenHash(message.substr(p.offset, p.length), p.cls);
      unsigned char bytes[16];
      std::memcpy(bytes, &previous_hash, 8);
      std::memcpy(bytes + 8, &hash, 8);
      const std::int64_t previous_weight = weights.by_class[static_cast<int>(p.cls)];
      features.push_back({XXH3_64bits_withSeed(bytes, sizeof bytes, kPairSeed),
                          previous_weight < weight ? previous_weight : weight});
    }
  }
  return features;
}

// Charikar's SimHash: each feature votes +weight on the bits set in its hash and -weight on
// the others; a bit of the fingerprint is 1 when its total is positive.
inline std::uint64_t SimHash(const std::vector<WeightedHash>& features) {
  std::int64_t votes[64] = {};
  for (const WeightedHash& f : features) {
    for (int bit = 0; bit < 64; ++bit) {
      if ((f.hash >> bit) & 1) {
        votes[bit] += f.weight;
      } else {
        votes[bit] -= f.weight;
      }
    }
  }
  std::uint64_t fingerprint = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (votes[bit] > 0) fingerprint |= std::uint64_t{1} << bit;
  }
  return fingerprint;
}

inline std::uint64_t Fingerprint(std::string_view message, const std::vector<Token>& tokens,
                                 const Weights& weights = Weights()) {
  return SimHash(Features(message, tokens, weights));
}

}  // namespace logfold::reference

#endif  // LOGFOLD_TESTS_FUZZ_REFERENCE_FINGERPRINT_H_
