// Merge-quality rules of issue #14 that hold for any log: the over-merge classes (an action,
// a level, a status or a function name changing must not fold), list slots, new values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/event.h"
#include "pipeline/log_record.h"
#include "pipeline/window_merger.h"

namespace logfold {
namespace {

constexpr TimeUs kT0 = 1'709'251'200'000'000;  // 2024-03-01T00:00:00Z

struct Copied {
  EventKind kind;
  std::uint64_t group_id;
  std::string message;
  std::string level;
  std::uint64_t count_total;
};

class CopyingSink : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    events.push_back({e.kind, e.group_id, e.record != nullptr ? e.record->message : "",
                      std::string(e.level), e.count_total});
  }
  std::vector<Copied> events;
};

// Folds `lines` (one scope, 1 us apart) and returns the groups they opened.
std::size_t GroupsFor(const std::vector<std::string>& lines, MergerOptions options = {}) {
  WindowMerger merger(std::move(options));
  CopyingSink sink;
  LogRecord r;
  r.hostname = "host";
  r.app_name = "app";
  TimeUs t = kT0;
  for (const std::string& line : lines) {
    r.message = line;
    merger.Add(r, t++, sink);
  }
  return merger.stats().groups_opened;
}

// Two values that begin differently are two fields, not a list: a path then a protocol
// folds with a plain-word path then a protocol (the token counts stay equal).
TEST(MergeQualityTest, AListNeedsValuesThatBeginAlike) {
  const std::string timed_out =
      "upstream timed out (110: Connection timed out) while reading response header from "
      "upstream, client: 10.0.0.1, request: ";
  EXPECT_EQ(
      GroupsFor({timed_out + "\"GET /api/v1/cart HTTP/1.1\"", timed_out + "\"GET /login HTTP/1.1\"",
                 timed_out + "\"GET /api/v2/orders HTTP/1.1\""}),
      1u);
  // Signed numbers are one list with unsigned ones ("132,+1": a channel and its offset).
  EXPECT_EQ(GroupsFor({"en0: channel changed to 1", "en0: channel changed to 132,+1",
                       "en0: channel changed to 6"}),
            1u);
}

}  // namespace
}  // namespace logfold
