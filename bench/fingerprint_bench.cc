// Fingerprint throughput on 100k generated syslog messages (bench/corpus_lines.h): tokenize
// only, tokenize + TokenHash, tokenize + Features, and the full fingerprint, in lines/s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/corpus_lines.h"
#include "pipeline/fingerprinter.h"
#include "pipeline/tokenizer.h"

namespace logfold {
namespace {

constexpr std::size_t kLines = 100'000;

const std::vector<corpus::Line>& Lines() {
  static const std::vector<corpus::Line> lines = corpus::Load(kLines);
  return lines;
}

// Shared bookkeeping: lines/s as items, message bytes/s, and tokens per line.
void Report(benchmark::State& state, std::size_t bytes, std::size_t tokens) {
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["tokens/line"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kAvgIterations);
}

void BM_Tokenize(benchmark::State& state) {
  const std::vector<corpus::Line>& lines = Lines();
  const Tokenizer tokenizer;
  std::vector<Token> tokens;
  std::size_t i = 0, bytes = 0, ntokens = 0;
  for (auto _ : state) {
    const std::string& m = lines[i].message;
    tokenizer.Tokenize(m, tokens);
    benchmark::DoNotOptimize(tokens.data());
    bytes += m.size();
    ntokens += tokens.size();
    if (++i == lines.size()) i = 0;
  }
  Report(state, bytes, ntokens);
}
BENCHMARK(BM_Tokenize);

void BM_TokenizeHash(benchmark::State& state) {
  const std::vector<corpus::Line>& lines = Lines();
  const Tokenizer tokenizer;
  std::vector<Token> tokens;
  std::size_t i = 0, bytes = 0, ntokens = 0;
  for (auto _ : state) {
    const std::string& m = lines[i].message;
    tokenizer.Tokenize(m, tokens);
    std::uint64_t acc = 0;
    for (const Token& t : tokens) acc ^= Fingerprinter::TokenHash(m, t);
    benchmark::DoNotOptimize(acc);
    bytes += m.size();
    ntokens += tokens.size();
    if (++i == lines.size()) i = 0;
  }
  Report(state, bytes, ntokens);
}
BENCHMARK(BM_TokenizeHash);

void BM_TokenizeFeatures(benchmark::State& state) {
  const std::vector<corpus::Line>& lines = Lines();
  const Tokenizer tokenizer;
  const Fingerprinter fingerprinter;
  std::vector<Token> tokens;
  std::vector<Feature> features;
  std::size_t i = 0, bytes = 0, ntokens = 0;
  for (auto _ : state) {
    const std::string& m = lines[i].message;
    tokenizer.Tokenize(m, tokens);
    fingerprinter.Features(m, tokens, features);
    benchmark::DoNotOptimize(features.data());
    bytes += m.size();
    ntokens += tokens.size();
    if (++i == lines.size()) i = 0;
  }
  Report(state, bytes, ntokens);
}
BENCHMARK(BM_TokenizeFeatures);

// The full fingerprint: tokenize + Features + SimHash.
void BM_Fingerprint(benchmark::State& state) {
  const std::vector<corpus::Line>& lines = Lines();
  const Tokenizer tokenizer;
  Fingerprinter fingerprinter;
  std::vector<Token> tokens;
  std::size_t i = 0, bytes = 0, ntokens = 0;
  for (auto _ : state) {
    const std::string& m = lines[i].message;
    tokenizer.Tokenize(m, tokens);
    benchmark::DoNotOptimize(fingerprinter.Fingerprint(m, tokens));
    bytes += m.size();
    ntokens += tokens.size();
    if (++i == lines.size()) i = 0;
  }
  Report(state, bytes, ntokens);
}
BENCHMARK(BM_Fingerprint);

// SimHash alone over the features of the first 10k lines, precomputed.
void BM_SimHashOnly(benchmark::State& state) {
  const std::vector<corpus::Line>& lines = Lines();
  const Tokenizer tokenizer;
  const Fingerprinter fingerprinter;
  std::vector<Token> tokens;
  std::vector<std::vector<Feature>> all(std::min<std::size_t>(10'000, lines.size()));
  std::size_t nfeatures = 0;
  for (std::size_t k = 0; k < all.size(); ++k) {
    tokenizer.Tokenize(lines[k].message, tokens);
    fingerprinter.Features(lines[k].message, tokens, all[k]);
  }
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(Fingerprinter::SimHash(all[i]));
    nfeatures += all[i].size();
    if (++i == all.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["features/line"] =
      benchmark::Counter(static_cast<double>(nfeatures), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_SimHashOnly);

}  // namespace
}  // namespace logfold

BENCHMARK_MAIN();
