// Fingerprinter tests: pinned fingerprints of fixed messages (users store them), SimHash
// properties (digit masking, word sensitivity), TokenHash shapes, weights and skipping.
#include "pipeline/fingerprinter.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/simhash_votes.h"
#include "pipeline/tokenizer.h"

namespace logfold {
namespace {

std::uint64_t Fp(std::string_view message, const FeatureWeights& weights = {}) {
  std::vector<Token> tokens;
  Tokenizer().Tokenize(message, tokens);
  Fingerprinter fingerprinter(weights);
  return fingerprinter.Fingerprint(message, tokens);
}

// The hash of the single token `text`, classified as the tokenizer would.
std::uint64_t Th(std::string_view text) {
  const Token t{0, static_cast<std::uint32_t>(text.size()), Tokenizer::Classify(text)};
  return Fingerprinter::TokenHash(text, t);
}

// PINNED VALUES. Fingerprints are stored by users (in their event archives, alert rules and
// dashboards). If this test fails, the fingerprint of existing lines has changed: that breaks
// every stored fingerprint and must be a deliberate, versioned decision (bump the seed
// version in fingerprinter.cc, document it, update these constants) - never a side effect.
TEST(FingerprinterPinnedTest, KnownMessagesKeepTheirFingerprints) {
  struct Pin {
    const char* message;
    std::uint64_t fingerprint;
  };
  const Pin pins[] = {
      {"Accepted password for alice from 10.0.0.1 port 22 ssh2", 0x73a31cc68063ebb8ULL},
      {"Failed password for invalid user admin from 192.168.1.7 port 50122 ssh2",
       0x3323dcd0b9622a10ULL},
      {"Started nginx.service.", 0xc87437dad0faa76dULL},
      {"pam_unix(sshd:session): session opened for user root(uid=0) by (uid=0)",
       0x5989dbfed4d26ce0ULL},
      {"kernel: eth0: link up, 1000 Mbps, full duplex", 0xd6098cf322196be4ULL},
      {"request completed method=GET path=/api/v1/users status=200 duration_ms=12 "
       "req_id=123e4567-e89b-12d3-a456-426614174000",
       0xf981319713293df7ULL},
      {"DHCPACK of 10.1.2.3 from 10.1.0.1 (xid=0x1a2b3c)", 0xaead99f237e6a302ULL},
      {"12345", 0xf387033219a3ac7aULL},
      {"upstream timed out (110: Connection timed out) while reading response header from "
       "upstream, client: 203.0.113.9",
       0x87c2a41258256961ULL},
  };
  for (const Pin& pin : pins) {
    EXPECT_EQ(Fp(pin.message), pin.fingerprint) << "message: " << pin.message;
  }
}

TEST(FingerprinterPinnedTest, WordTokenHashIsPlainXxh3OfTheText) {
  // Also pinned: a word's hash is XXH3-64 (seed 0) of its bytes.
  const Token t{0, 3, TokenClass::kWord};
  EXPECT_EQ(Fingerprinter::TokenHash("foo", t), 0xab6e5f64077e7d8aULL);
  EXPECT_EQ(Fingerprinter::TokenHash("foo", t), XXH3_64bits("foo", 3));
}

// --- properties ------------------------------------------------------------------------------

TEST(FingerprinterTest, IdenticalLinesHaveIdenticalFingerprints) {
  const std::string a = "Accepted publickey for bob from 10.2.3.4 port 4711 ssh2";
  const std::string b = a;  // a different buffer with the same bytes
  EXPECT_EQ(Fp(a), Fp(b));
  // The Fingerprinter has no state that leaks between lines.
  std::vector<Token> tokens;
  Tokenizer tokenizer;
  Fingerprinter fingerprinter;
  tokenizer.Tokenize(a, tokens);
  const std::uint64_t first = fingerprinter.Fingerprint(a, tokens);
  tokenizer.Tokenize("something else entirely 42", tokens);
  fingerprinter.Fingerprint("something else entirely 42", tokens);
  tokenizer.Tokenize(b, tokens);
  EXPECT_EQ(fingerprinter.Fingerprint(b, tokens), first);
}

TEST(FingerprinterTest, LinesDifferingOnlyInNumbersShareTheFingerprint) {
  EXPECT_EQ(Fp("worker 3 processed 17 items in 250 ms"),
            Fp("worker 12 processed 90210 items in 7 ms"));
  EXPECT_EQ(Fp("connect from 10.0.0.1 port 5022"), Fp("connect from 192.168.7.200 port 80"));
  EXPECT_EQ(Fp("took 0.25 s at 2024-03-01T00:00:00Z"), Fp("took 13.5 s at 2025-12-31T23:59:59Z"));
  EXPECT_EQ(Fp("job 123e4567-e89b-12d3-a456-426614174000 done"),
            Fp("job 00000000-0000-0000-0000-000000000000 done"));
  EXPECT_EQ(Fp("link eth0 up"), Fp("link eth1 up"));  // digit words keep their shape
}

TEST(FingerprinterTest, LinesDifferingInAWordDiffer) {
  EXPECT_NE(Fp("Service nginx started"), Fp("Service nginx stopped"));
  EXPECT_NE(Fp("Accepted password for alice"), Fp("Failed password for alice"));
  EXPECT_NE(Fp("link eth0 up"), Fp("link eth0 down"));
  // Word order matters through the pair features.
  EXPECT_NE(Fp("alpha beta gamma delta"), Fp("delta gamma beta alpha"));
}

TEST(FingerprinterTest, NumberOfDifferentClassDiffers) {
  // An integer and an IPv4 address are different variables.
  EXPECT_NE(Fp("peer 42 connected"), Fp("peer 10.0.0.1 connected"));
}

TEST(FingerprinterTest, TokenHashOfDigitWordsUsesTheirShape) {
  EXPECT_EQ(Th("en0"), Th("en1"));
  EXPECT_EQ(Th("en0"), Th("en1234"));
  EXPECT_NE(Th("en0"), Th("awdl0"));
  EXPECT_NE(Th("en0"), Th("0en"));
  EXPECT_EQ(Th("blk_-123"), Th("blk_-4567"));
  // Three or more digit runs: an opaque identifier, hashed as its class only.
  EXPECT_EQ(Th("a1b2c3"), Th("zz9yy8xx7"));
  EXPECT_NE(Th("a1b2"), Th("zz9yy8"));
  // Longer than the shape buffer: the class.
  const std::string long_a = "x1" + std::string(80, 'a');
  const std::string long_b = "y2" + std::string(90, 'b');
  EXPECT_EQ(Th(long_a), Th(long_b));
  EXPECT_EQ(Th(long_a), Th("a1b2c3"));
}

TEST(FingerprinterTest, TokenHashOfMaskedClassesIgnoresTheText) {
  EXPECT_EQ(Th("10.0.0.1"), Th("192.168.1.1:22"));
  EXPECT_EQ(Th("42"), Th("-7"));
  EXPECT_NE(Th("42"), Th("4.2"));
  EXPECT_NE(Th("10.0.0.1"), Th("fe80::1"));
  EXPECT_NE(Th("hello"), Th("Hello"));  // words are case-sensitive
  EXPECT_NE(Th("42"), Th("hello"));
}

TEST(FingerprinterTest, AllWeightsZeroGivesFingerprintZero) {
  FeatureWeights zero;
  zero.word = 0.0f;
  for (float& w : zero.by_class) w = 0.0f;
  EXPECT_EQ(Fp("1 2 3 4.5 10.0.0.1 0x1f 42", zero), 0u);
  EXPECT_EQ(Fp("words only here", zero), 0u);
  // Zero only for the numeric classes: a line of numbers is 0, a line with words is not.
  FeatureWeights numbers_off;
  numbers_off.by_class[static_cast<std::size_t>(TokenClass::kInteger)] = 0.0f;
  numbers_off.by_class[static_cast<std::size_t>(TokenClass::kFloat)] = 0.0f;
  EXPECT_EQ(Fp("1 2 3 4.5 99", numbers_off), 0u);
  EXPECT_NE(Fp("1 2 3 4.5 99"), 0u);
  EXPECT_NE(Fp("answer 42", numbers_off), 0u);
}

TEST(FingerprinterTest, WeightsOutOfRangeAreClamped) {
  FeatureWeights big;
  big.word = 7.0f;  // clamped to 1
  EXPECT_EQ(Fp("alpha beta gamma", big), Fp("alpha beta gamma"));
  FeatureWeights negative;
  negative.word = -3.0f;  // clamped to 0
  for (float& w : negative.by_class) w = -1.0f;
  EXPECT_EQ(Fp("alpha 1 beta", negative), 0u);
}

TEST(FingerprinterTest, PairsOffChangesTheFingerprint) {
  FeatureWeights no_pairs;
  no_pairs.pairs = false;
  EXPECT_NE(Fp("alpha beta gamma delta", no_pairs), Fp("alpha beta gamma delta"));
  // Without pairs a line is a bag of tokens: order no longer matters.
  EXPECT_EQ(Fp("alpha beta gamma delta", no_pairs), Fp("delta gamma beta alpha", no_pairs));
}

TEST(FingerprinterTest, FeaturesHoldOnePerTokenAndOnePerAdjacentPair) {
  const std::string_view msg = "alpha 42 beta";
  std::vector<Token> tokens;
  Tokenizer().Tokenize(msg, tokens);
  ASSERT_EQ(tokens.size(), 3u);
  const Fingerprinter fingerprinter;
  std::vector<Feature> features;
  fingerprinter.Features(msg, tokens, features);
  // token0, token1, pair(0,1), token2, pair(1,2)
  ASSERT_EQ(features.size(), 5u);
  EXPECT_EQ(features[0].hash, Fingerprinter::TokenHash(msg, tokens[0]));
  EXPECT_FLOAT_EQ(features[0].weight, 1.0f);
  EXPECT_EQ(features[1].hash, Fingerprinter::TokenHash(msg, tokens[1]));
  EXPECT_FLOAT_EQ(features[1].weight, 0.1f);
  EXPECT_FLOAT_EQ(features[2].weight, 0.1f);  // a pair weighs as its weaker member
  EXPECT_EQ(features[3].hash, Fingerprinter::TokenHash(msg, tokens[2]));
  EXPECT_FLOAT_EQ(features[4].weight, 0.1f);
  EXPECT_NE(features[2].hash, features[4].hash);
  EXPECT_EQ(Fingerprinter::SimHash(features), Fp(msg));
}

TEST(FingerprinterTest, FeaturesFromHashesWithSkipDropsFeaturesAndPairs) {
  const std::string_view msg = "a b c d";
  std::vector<Token> tokens;
  Tokenizer().Tokenize(msg, tokens);
  std::vector<std::uint64_t> hashes;
  for (const Token& t : tokens) hashes.push_back(Fingerprinter::TokenHash(msg, t));
  const Fingerprinter fingerprinter;

  std::vector<Feature> all;
  fingerprinter.FeaturesFromHashes(tokens, hashes, {}, all);
  EXPECT_EQ(all.size(), 7u);  // 4 tokens + 3 pairs
  std::vector<Feature> via_text;
  fingerprinter.Features(msg, tokens, via_text);
  ASSERT_EQ(via_text.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(via_text[i].hash, all[i].hash);

  // Skipping "b" removes it and both pairs touching it: a, c, d and the pair (c, d).
  const std::vector<std::uint8_t> skip_b = {0, 1, 0, 0};
  std::vector<Feature> some;
  fingerprinter.FeaturesFromHashes(tokens, hashes, skip_b, some);
  ASSERT_EQ(some.size(), 4u);
  EXPECT_EQ(some[0].hash, hashes[0]);
  EXPECT_EQ(some[1].hash, hashes[2]);
  EXPECT_EQ(some[2].hash, hashes[3]);
  EXPECT_EQ(some[3].hash, all[6].hash);  // pair (c, d) is unchanged

  // Weights follow the kept tokens.
  for (const Feature& f : some) EXPECT_FLOAT_EQ(f.weight, 1.0f);

  const std::vector<std::uint8_t> skip_all = {1, 1, 1, 1};
  fingerprinter.FeaturesFromHashes(tokens, hashes, skip_all, some);
  EXPECT_TRUE(some.empty());
  EXPECT_EQ(Fingerprinter::SimHash(some), 0u);
}

TEST(FingerprinterTest, SimHashBasics) {
  EXPECT_EQ(Fingerprinter::SimHash({}), 0u);
  // One feature: the fingerprint is its hash.
  EXPECT_EQ(Fingerprinter::SimHash({{0x0123456789abcdefULL, 1.0f}}), 0x0123456789abcdefULL);
  // Zero weight votes nothing.
  EXPECT_EQ(Fingerprinter::SimHash({{~0ULL, 0.0f}}), 0u);
  // Opposite features of equal weight cancel (a tie is not positive).
  EXPECT_EQ(Fingerprinter::SimHash({{0xff00ff00ff00ff00ULL, 0.5f}, {0x00ff00ff00ff00ffULL, 0.5f}}),
            0u);
  // The heavier feature wins every bit.
  EXPECT_EQ(Fingerprinter::SimHash({{0xff00ff00ff00ff00ULL, 0.6f}, {0x00ff00ff00ff00ffULL, 0.5f}}),
            0xff00ff00ff00ff00ULL);
  // Majority per bit.
  EXPECT_EQ(Fingerprinter::SimHash({{0b1100, 1.0f}, {0b1010, 1.0f}, {0b1001, 1.0f}}), 0b1000u);
  // Empty message.
  EXPECT_EQ(Fp(""), 0u);
  EXPECT_EQ(Fp("   ...  "), 0u);
}

TEST(FingerprinterTest, HammingDistance) {
  EXPECT_EQ(HammingDistance(0, 0), 0);
  EXPECT_EQ(HammingDistance(0, ~0ULL), 64);
  EXPECT_EQ(HammingDistance(0b1011, 0b0001), 2);
}

// The vote kernels this CPU supports; the others are named on stdout, so a run on a CPU
// without AVX-512 says what it did not check.
std::vector<SimHashKernel> SupportedKernels() {
  std::vector<SimHashKernel> kernels;
  for (SimHashKernel kernel : {SimHashKernel::kAuto, SimHashKernel::kPortable, SimHashKernel::kSse2,
                               SimHashKernel::kAvx2, SimHashKernel::kAvx512}) {
    if (SimHashKernelSupported(kernel)) {
      kernels.push_back(kernel);
    } else {
      std::printf("kernel %d not supported by this CPU: not checked\n", static_cast<int>(kernel));
    }
  }
  return kernels;
}

// Every vote kernel the CPU supports gives the SimHash by its definition (bit i set when the
// weighted votes for it are positive), on random features.
TEST(SimHashVotesTest, EveryKernelMatchesTheDefinition) {
  std::mt19937_64 rng(99);
  for (SimHashKernel kernel : SupportedKernels()) {
    for (std::size_t n : {0, 1, 2, 3, 17, 255, 1000}) {
      std::vector<std::uint64_t> hashes(n);
      std::vector<std::int32_t> weights(n);
      std::int64_t expected_votes[64] = {};
      for (std::size_t f = 0; f < n; ++f) {
        hashes[f] = rng();
        weights[f] = static_cast<std::int32_t>(rng() % 1025);
        for (int bit = 0; bit < 64; ++bit) {
          expected_votes[bit] += ((hashes[f] >> bit) & 1) ? weights[f] : -weights[f];
        }
      }
      std::uint64_t expected = 0;
      for (int bit = 0; bit < 64; ++bit) {
        if (expected_votes[bit] > 0) expected |= std::uint64_t{1} << bit;
      }
      // Split in two calls: votes accumulate across calls.
      SimHashVotes votes;
      AddSimHashVotes(hashes.data(), weights.data(), n / 2, votes, kernel);
      AddSimHashVotes(hashes.data() + n / 2, weights.data() + n / 2, n - n / 2, votes, kernel);
      EXPECT_EQ(votes.Fingerprint(), expected)
          << "kernel " << static_cast<int>(kernel) << ", n " << n;
    }
  }
}

// Features grouped in runs of one weight give the same SimHash on every kernel, including runs
// longer than a byte counter holds (255) and more runs than the AVX2 fast path takes (16).
TEST(SimHashVotesTest, UniformRunsMatchTheDefinition) {
  std::mt19937_64 rng(7);
  for (SimHashKernel kernel : SupportedKernels()) {
    for (const std::vector<std::size_t>& run_sizes :
         std::vector<std::vector<std::size_t>>{{},
                                               {1},
                                               {0, 3},
                                               {11, 10, 2},
                                               {254, 255, 256},
                                               {1000},
                                               std::vector<std::size_t>(20, 5)}) {
      std::vector<std::vector<std::uint64_t>> hashes;
      std::vector<UniformFeatures> runs;
      std::int64_t expected_votes[64] = {};
      for (std::size_t size : run_sizes) {
        hashes.emplace_back(size);
        const auto weight = static_cast<std::int32_t>(rng() % 1025);
        for (std::uint64_t& h : hashes.back()) {
          // Long runs all ones, so a byte counter that wrapped at 256 loses every vote; short
          // ones skewed, so that votes are close and a wrong count shows.
          h = size >= 254 ? ~std::uint64_t{0} : rng() & rng();
          for (int bit = 0; bit < 64; ++bit)
            expected_votes[bit] += ((h >> bit) & 1) ? weight : -weight;
        }
        runs.push_back({hashes.back().data(), size, weight});
      }
      std::uint64_t expected = 0;
      for (int bit = 0; bit < 64; ++bit) {
        if (expected_votes[bit] > 0) expected |= std::uint64_t{1} << bit;
      }
      EXPECT_EQ(SimHashOfUniformRuns(runs, kernel), expected)
          << "kernel " << static_cast<int>(kernel) << ", " << run_sizes.size() << " runs";
      SimHashVotes votes;
      for (const UniformFeatures& run : runs) {
        AddUniformSimHashVotes(run.hashes, run.n, run.weight, votes, kernel);
      }
      EXPECT_EQ(votes.Fingerprint(), expected) << "kernel " << static_cast<int>(kernel);
    }
  }
}

// The one-pass fingerprint (features grouped by weight) equals SimHash(Features(...)) for
// every weight table, including ones where classes share a weight or weigh nothing.
TEST(FingerprinterTest, OnePassFingerprintEqualsFeaturesThenSimHash) {
  const std::vector<std::string> messages = {
      "Accepted password for alice from 10.0.0.1 port 22 ssh2",
      "job 4b47901c-eec1-4e69-87b2-dfdc2f90efbb finished queue=default attempts=2 elapsed=0.244s",
      "a", "", "x 1 y 2.5 z 0xff /var/log/a1 en0 user@example.org host.example.org:514"};
  std::mt19937_64 rng(3);
  for (int round = 0; round < 50; ++round) {
    FeatureWeights weights;
    for (float& w : weights.by_class) w = static_cast<float>(rng() % 4) / 3.0f;
    weights.word = static_cast<float>(rng() % 5) / 4.0f;
    weights.pairs = round % 3 != 0;
    Fingerprinter fingerprinter(weights);
    const Tokenizer tokenizer;
    std::vector<Token> tokens;
    std::vector<Feature> features;
    for (const std::string& m : messages) {
      tokenizer.Tokenize(m, tokens);
      fingerprinter.Features(m, tokens, features);
      EXPECT_EQ(fingerprinter.Fingerprint(m, tokens), Fingerprinter::SimHash(features)) << m;
    }
  }
}

}  // namespace
}  // namespace logfold
