// Fuzz target: tokenizer + fingerprinter, differential. The fingerprint of a message must equal
// the slow reference implementation's (reference_fingerprint.h), through every way the engine
// computes it (Fingerprint; TokenHash + FingerprintFromHashes as the merger does, with and
// without skipped positions; FeaturesFromHashes + SimHash), for the default weights and for
// weights chosen by the input.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/fingerprinter.h"
#include "pipeline/tokenizer.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/reference_fingerprint.h"

namespace {

using logfold::Token;
using logfold::TokenClass;

// Token invariants the reference relies on: inside the message, in order, not overlapping,
// no separator inside, at most max_tokens; only an empty value (kEmpty) has no bytes. A class
// is Classify's or a context rule's, so classes are checked against the reference below.
void CheckTokens(std::string_view message, const std::vector<Token>& tokens,
                 std::uint32_t max_tokens) {
  constexpr std::string_view kSeparators(" \t\r\n\v\f,;=()[]{}\"'<>|\0", 21);
  constexpr std::string_view kSeparatorsButParentheses(" \t\r\n\v\f,;=[]{}\"'<>|\0", 19);
  FUZZ_CHECK(tokens.size() <= max_tokens, "at most max_tokens tokens");
  std::size_t end = 0;
  for (const Token& t : tokens) {
    FUZZ_CHECK((t.length > 0) != (t.cls == TokenClass::kEmpty),
               "only an empty value's token is empty");
    FUZZ_CHECK(t.offset >= end && t.offset + std::size_t{t.length} <= message.size(),
               "tokens are ordered and inside the message");
    const std::string_view text = message.substr(t.offset, t.length);
    // A set of one-letter flags is one token across its parentheses (+E(0)K, -XXXX(2)).
    const bool flag_set = t.cls == TokenClass::kHex && (text[0] == '+' || text[0] == '-');
    FUZZ_CHECK(text.find_first_of(flag_set ? kSeparatorsButParentheses : kSeparators) ==
                   std::string_view::npos,
               "no separator inside a token");
    end = t.offset + t.length;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  // Settings come from the input's tail (FuzzedDataProvider takes integers from the end);
  // the rest is the message.
  const bool custom_weights = in.ConsumeBool();
  const bool pairs = !in.ConsumeBool();
  logfold::FeatureWeights weights;
  logfold::reference::Weights reference_weights;
  weights.pairs = reference_weights.pairs = pairs;
  if (custom_weights) {
    // Multiples of 1/1024 are exact in a float, so the reference's integer steps are exact.
    for (int c = 0; c < static_cast<int>(TokenClass::kCount_); ++c) {
      const int steps = in.ConsumeIntegralInRange<int>(0, 1024);
      reference_weights.by_class[c] = steps;
      const float w = static_cast<float>(steps) / 1024.0f;
      if (c == 0) {
        weights.word = w;
      } else {
        weights.by_class[static_cast<std::size_t>(c)] = w;
      }
    }
  }
  logfold::Tokenizer::Options tokenizer_options;
  if (in.ConsumeBool()) tokenizer_options.max_tokens = in.ConsumeIntegralInRange(0u, 16u);
  const std::string message = in.ConsumeRemainingBytesAsString();

  const logfold::Tokenizer tokenizer(tokenizer_options);
  std::vector<Token> tokens;
  tokenizer.Tokenize(message, tokens);
  CheckTokens(message, tokens, tokenizer_options.max_tokens);
  // The same tokens as the byte-at-a-time definition, with every boundary kernel.
  const std::vector<Token> reference_tokens =
      logfold::reference::Tokenize(message, tokenizer_options.max_tokens);
  for (auto kernel : {logfold::ByteBlockKernel::kScalar, logfold::ByteBlockKernel::kAvx2}) {
    logfold::Tokenizer::Options options = tokenizer_options;
    options.kernel = kernel;
    std::vector<Token> kernel_tokens;
    logfold::Tokenizer(options).Tokenize(message, kernel_tokens);
    FUZZ_CHECK(kernel_tokens == reference_tokens, "tokens equal the reference's");
  }

  const std::uint64_t expected =
      logfold::reference::SimHash(logfold::reference::Features(message, tokens, reference_weights));
  logfold::Fingerprinter fingerprinter(weights);
  FUZZ_CHECK(fingerprinter.Fingerprint(message, tokens) == expected,
             "Fingerprint equals the reference");

  // The merger's path, also with positions skipped (positions that varied leave a group's
  // fingerprint): skip each position whose token hash has its lowest bit set.
  std::vector<std::uint64_t> hashes;
  std::vector<std::uint8_t> skip;
  for (const Token& t : tokens) {
    const std::uint64_t h = logfold::Fingerprinter::TokenHash(message, t);
    FUZZ_CHECK(h == logfold::reference::TokenHash(
                        std::string_view(message).substr(t.offset, t.length), t.cls),
               "TokenHash equals the reference");
    hashes.push_back(h);
    skip.push_back(static_cast<std::uint8_t>(h & 1));
  }
  std::vector<logfold::Feature> features;
  fingerprinter.FeaturesFromHashes(tokens, hashes, {}, features);
  FUZZ_CHECK(logfold::Fingerprinter::SimHash(features) == expected,
             "FeaturesFromHashes + SimHash equals the reference");
  fingerprinter.FeaturesFromHashes(tokens, hashes, skip, features);
  const std::uint64_t expected_skipped = logfold::reference::SimHash(
      logfold::reference::Features(message, tokens, reference_weights, skip));
  FUZZ_CHECK(logfold::Fingerprinter::SimHash(features) == expected_skipped,
             "FeaturesFromHashes with skipped positions equals the reference");
  FUZZ_CHECK(fingerprinter.FingerprintFromHashes(tokens, hashes, {}) == expected,
             "FingerprintFromHashes equals the reference");
  FUZZ_CHECK(fingerprinter.FingerprintFromHashes(tokens, hashes, skip) == expected_skipped,
             "FingerprintFromHashes with skipped positions equals the reference");
  return 0;
}
