// Labelled value classes of issue #14 (tests/pipeline/value_classes.txt): per class, lines
// that must fold into one group and lines that must stay apart, folded by a real WindowMerger.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "pipeline/event.h"
#include "pipeline/log_record.h"
#include "pipeline/window_merger.h"

namespace logfold {
namespace {

constexpr TimeUs kT0 = 1'709'251'200'000'000;  // 2024-03-01T00:00:00Z

struct Labelled {
  std::string label;
  std::string line;
};

struct Block {
  std::string name;
  std::vector<Labelled> lines;
};

std::vector<Block> LoadBlocks() {
  std::ifstream in(std::string(LOGFOLD_SOURCE_DIR) + "/tests/pipeline/value_classes.txt");
  std::vector<Block> blocks;
  std::string text;
  while (std::getline(in, text)) {
    if (text.rfind("## ", 0) == 0) {
      blocks.push_back({text.substr(3), {}});
    } else if (!text.empty() && text[0] != '#' && !blocks.empty()) {
      const std::size_t space = text.find(' ');
      blocks.back().lines.push_back({text.substr(0, space), text.substr(space + 1)});
    }
  }
  return blocks;
}

// A line that opens a group names it in its `first` event; a line that joins one, in the
// merger's decision.
class FirstIdSink : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    if (e.kind == EventKind::kFirst) last_first = e.group_id;
  }
  std::uint64_t last_first = 0;
};

std::vector<std::uint64_t> GroupOfEachLine(const Block& block) {
  WindowMerger merger{MergerOptions{}};
  FirstIdSink sink;
  LogRecord r;
  r.hostname = "host";
  r.app_name = "app";
  TimeUs t = kT0;
  std::vector<std::uint64_t> groups;
  for (const Labelled& l : block.lines) {
    r.message = l.line;
    merger.Add(r, t++, sink);
    const MergeDecision& d = merger.last_decision();
    groups.push_back(d.path == MergeDecision::kNew ? sink.last_first : d.group_id);
  }
  return groups;
}

TEST(ValueClassesTest, EveryClassFoldsItsValuesAndKeepsOtherEventsApart) {
  const std::vector<Block> blocks = LoadBlocks();
  ASSERT_GE(blocks.size(), 6u) << "tests/pipeline/value_classes.txt not found or cut short";
  for (const Block& block : blocks) {
    const std::vector<std::uint64_t> groups = GroupOfEachLine(block);
    for (std::size_t i = 0; i < block.lines.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        const bool same_label = block.lines[i].label == block.lines[j].label;
        EXPECT_EQ(same_label, groups[i] == groups[j])
            << block.name << ": \"" << block.lines[j].line << "\" and \"" << block.lines[i].line
            << "\" must " << (same_label ? "fold together" : "stay apart");
      }
    }
  }
}

}  // namespace
}  // namespace logfold
