// The fingerprint equals the slow reference implementation of the documented algorithm
// (tests/fuzz/reference_fingerprint.h) on generated corpus lines, the fuzz seeds and edge
// cases: the normal suite's share of tests/fuzz/fingerprint_fuzz, and the regression home for
// any mismatch that target finds.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench/corpus_lines.h"
#include "pipeline/fingerprinter.h"
#include "pipeline/syslog_parser.h"
#include "pipeline/tokenizer.h"
#include "tests/fuzz/reference_fingerprint.h"

namespace logfold {
namespace {

// Compares Fingerprint, the merger's TokenHash + FingerprintFromHashes path (also with every
// other position skipped) and FeaturesFromHashes + SimHash with the reference, for `weights`
// (multiples of 1/1024, so both agree on their integer steps).
void ExpectMatchesReference(const std::string& message, const FeatureWeights& weights,
                            const reference::Weights& reference_weights) {
  const Tokenizer tokenizer;
  std::vector<Token> tokens;
  tokenizer.Tokenize(message, tokens);
  const std::uint64_t expected =
      reference::SimHash(reference::Features(message, tokens, reference_weights));
  Fingerprinter fingerprinter(weights);
  EXPECT_EQ(fingerprinter.Fingerprint(message, tokens), expected) << message;
  std::vector<std::uint64_t> hashes;
  for (const Token& t : tokens) hashes.push_back(Fingerprinter::TokenHash(message, t));
  std::vector<Feature> features;
  fingerprinter.FeaturesFromHashes(tokens, hashes, {}, features);
  EXPECT_EQ(Fingerprinter::SimHash(features), expected) << message;
  EXPECT_EQ(fingerprinter.FingerprintFromHashes(tokens, hashes, {}), expected) << message;
  std::vector<std::uint8_t> skip(tokens.size());
  for (std::size_t i = 0; i < skip.size(); i += 2) skip[i] = 1;
  EXPECT_EQ(fingerprinter.FingerprintFromHashes(tokens, hashes, skip),
            reference::SimHash(reference::Features(message, tokens, reference_weights, skip)))
      << message;
}

void ExpectMatchesReference(const std::string& message) {
  ExpectMatchesReference(message, FeatureWeights(), reference::Weights());
}

TEST(FingerprintReferenceTest, GeneratedCorpusLines) {
  for (const corpus::Line& line : corpus::Load(5000)) ExpectMatchesReference(line.message);
}

TEST(FingerprintReferenceTest, ParserSeedCorpusMessages) {
  const std::filesystem::path dir =
      std::filesystem::path(LOGFOLD_SOURCE_DIR) / "tests/fuzz/corpus/syslog_parser";
  const SyslogParser parser;
  LogRecord record;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    parser.Parse(line, 0, record);
    ExpectMatchesReference(record.message);
    ++files;
  }
  EXPECT_GT(files, 20);
}

TEST(FingerprintReferenceTest, EdgeCases) {
  for (const char* message : {
           "",
           "a",
           "a b",
           "en0 en1 awdl0 veth58b7fff a1b2c3 x1y2z3w4",
           "0123456789012345678901234567890123456789012345678901234567890123x",
           "x123456789012345678901234567890123456789012345678901234567890123",
           "key=value (7) [a,b] {c} \"q\" 'r' <s> t|u v:",
           "0x1f 3.14 -7 +3 1e-3 10.0.0.1:80",
           "fe80::1 [::1]:514 00:1a:2b:3c:4d:5e 123e4567-e89b-12d3-a456-426614174000",
           "2024-03-01T10:00:00Z 12:34:56 /var/log/x.1 https://a.b/1 bob@example.org h.io:5070",
       }) {
    ExpectMatchesReference(message);
  }
}

TEST(FingerprintReferenceTest, OtherWeightsAndNoPairs) {
  FeatureWeights weights;
  reference::Weights reference_weights;
  for (int c = 0; c < static_cast<int>(TokenClass::kCount_); ++c) {
    const int steps = (c * 211) % 1025;  // every class a different multiple of 1/1024
    reference_weights.by_class[c] = steps;
    (c == 0 ? weights.word : weights.by_class[static_cast<std::size_t>(c)]) =
        static_cast<float>(steps) / 1024.0f;
  }
  for (const bool pairs : {true, false}) {
    weights.pairs = reference_weights.pairs = pairs;
    for (const corpus::Line& line : corpus::Load(500)) {
      ExpectMatchesReference(line.message, weights, reference_weights);
    }
  }
}

}  // namespace
}  // namespace logfold
