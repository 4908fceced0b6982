// A reload hands the engine a new MergerOptions (WorkerPool::Reconfigure, on every SIGHUP):
// whichever option changed, the engine must run with the new value afterwards.
#include <gtest/gtest.h>

#include <cstddef>
#include <iterator>
#include <string>

#include "pipeline/event.h"
#include "pipeline/log_record.h"
#include "pipeline/window_merger.h"

namespace logfold {
namespace {

class CountingSink : public EventSink {
 public:
  void OnEvent(const Event& /*event*/) override { ++events; }
  std::size_t events = 0;
};

TEST(MergerReconfigureTest, EveryChangedOptionIsApplied) {
  using Mutation = void (*)(MergerOptions&);
  const Mutation mutations[] = {
      [](MergerOptions& m) { m.max_distance += 1; },
      [](MergerOptions& m) { m.window_us += 1; },
      [](MergerOptions& m) { m.max_hold_us += 1; },
      [](MergerOptions& m) { m.max_groups += 1; },
      [](MergerOptions& m) { m.scope.pop_back(); },
      [](MergerOptions& m) { m.max_summary_hosts += 1; },
      [](MergerOptions& m) { m.annotate = !m.annotate; },
      [](MergerOptions& m) { m.confirm = !m.confirm; },
      [](MergerOptions& m) { m.variable_after_values += 1; },
      [](MergerOptions& m) { m.protected_words.push_back("extra"); },
      [](MergerOptions& m) { m.value_keys.push_back("extra"); },
      [](MergerOptions& m) { m.tokenizer.max_tokens += 1; },
      [](MergerOptions& m) { m.tokenizer.kernel = ByteBlockKernel::kScalar; },
      [](MergerOptions& m) { m.weights.word += 1.0f; },
      [](MergerOptions& m) { m.weights.by_class[1] += 1.0f; },
      [](MergerOptions& m) { m.weights.pairs = !m.weights.pairs; },
  };
  for (std::size_t i = 0; i < std::size(mutations); ++i) {
    const MergerOptions before;
    WindowMerger merger(before);
    CountingSink sink;
    LogRecord line;
    line.hostname = "h";
    line.app_name = "a";
    line.message = "connection from 10.0.0.1 closed";
    merger.Add(line, 1'000'000, sink);  // an open group across the reload

    MergerOptions changed = before;
    mutations[i](changed);
    ASSERT_NE(changed, before) << "mutation " << i << " changes nothing";
    merger.Reconfigure(changed, sink);
    EXPECT_EQ(merger.options(), changed) << "mutation " << i << " was not applied";
  }
}

// Group ids stay unique across a reload: the seed is the engine's own, not the file's.
TEST(MergerReconfigureTest, IdSeedIsKept) {
  MergerOptions seeded;
  seeded.id_seed = 42;
  WindowMerger merger(seeded);
  CountingSink sink;
  merger.Reconfigure(MergerOptions{}, sink);
  EXPECT_EQ(merger.options().id_seed, 42u);
}

}  // namespace
}  // namespace logfold
