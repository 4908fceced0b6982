// Merge-quality rules of issue #14 that hold for any log: the over-merge classes (an action,
// a level, a status or a function name changing must not fold), list slots, new values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/event.h"
#include "pipeline/event_json.h"
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
  std::uint64_t count;
  std::string json;
};

class CopyingSink : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    std::string json;
    AppendEventJson(e, json);
    events.push_back({e.kind, e.group_id, e.record != nullptr ? e.record->message : "",
                      std::string(e.level), e.count_total, e.count, std::move(json)});
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

// The level separates events: an INFO and a FATAL line with the same text are two groups
// (whatever case or abbreviation writes the level), while the same level still folds.
TEST(MergeQualityTest, TheLevelSeparatesGroups) {
  EXPECT_EQ(GroupsFor({"2024-03-01 10:00:00,123 INFO [main] Storage - disk /dev/sda1 is full",
                       "2024-03-01 10:00:01,456 FATAL [main] Storage - disk /dev/sda1 is full"}),
            2u);
  EXPECT_EQ(GroupsFor({"2024-03-01 10:00:00,123 INFO [main] Storage - disk /dev/sda1 is full",
                       "2024-03-01 10:00:01,456 Info [main] Storage - disk /dev/sdb2 is full",
                       "03-01 10:00:02.789 I [main] Storage - disk /dev/sdc3 is full"}),
            1u);
  EXPECT_EQ(GroupsFor({"ERROR: could not write block 7 of relation base/16384/2619",
                       "WARNING: could not write block 7 of relation base/16384/2619"}),
            2u);
  // Without header inference the level is a word of the message, protected as before.
  MergerOptions no_header;
  no_header.infer_header = false;
  EXPECT_EQ(GroupsFor({"2024-03-01 10:00:00 INFO disk sda1 is full",
                       "2024-03-01 10:00:01 FATAL disk sda1 is full"},
                      no_header),
            2u);
}

// The over-merge classes, each a rule for any log: an action word, a constant, a
// function name or a quoted request's method changing is another message.
TEST(MergeQualityTest, ActionsConstantsFunctionsAndMethodsDoNotMerge) {
  // "to spawn" vs "to destroy": a plain word outside a value context never changes.
  EXPECT_EQ(GroupsFor({"[instance: 3edec1e4-9678-4a3a-a21b-a145a4ee5e61] Took 19.84 seconds to "
                       "spawn the instance on the hypervisor.",
                       "[instance: 3edec1e4-9678-4a3a-a21b-a145a4ee5e61] Took 0.41 seconds to "
                       "destroy the instance on the hypervisor."}),
            2u);
  // ACTION_DOWN vs ACTION_UP: an identifier-like constant is not a value.
  EXPECT_EQ(GroupsFor({"ViewRootImpl dispatch touch event ACTION_DOWN on the main window view now",
                       "ViewRootImpl dispatch touch event ACTION_UP on the main window view now"}),
            2u);
  // Two function names before the same argument list.
  EXPECT_EQ(GroupsFor({"WindowManager: relayoutWindow(token=0x7f1a, width=1080, height=1920) ok",
                       "WindowManager: removeWindow(token=0x7f1a, width=1080, height=1920) ok"}),
            2u);
  EXPECT_EQ(GroupsFor({"kernel: vfs_read(fd=3, count=4096) returned -5 after 3 retries on dev",
                       "kernel: vfs_write(fd=3, count=4096) returned -5 after 3 retries on dev"}),
            2u);
  // The HTTP method inside a quoted request line.
  EXPECT_EQ(GroupsFor({"10.0.0.1 - - [01/Mar/2024:10:00:00 +0000] \"GET /api/v1/orders/17 "
                       "HTTP/1.1\" 200 512 \"-\" \"curl/8.0\"",
                       "10.0.0.2 - - [01/Mar/2024:10:00:01 +0000] \"DELETE /api/v1/orders/17 "
                       "HTTP/1.1\" 200 512 \"-\" \"curl/8.0\""}),
            2u);
}

// Folding hides nothing: the first exit code 3 after a run of 0s and 1s goes out at once as a
// new_value notice (the line still counts in the group's summary); a known value, a slot that
// is a true variable (a new value every line) and a young group emit nothing. (An HTTP status
// is a word of its own, so a 500 among 200s opens a group: ValueClassesTest.)
TEST(MergeQualityTest, ANewValueOfAnEnumerationLikeSlotGoesOutAtOnce) {
  WindowMerger merger(MergerOptions{});
  CopyingSink sink;
  LogRecord r;
  r.hostname = "batch1";
  r.app_name = "runner";
  TimeUs t = kT0;
  auto add = [&](int client, int code) {
    r.message = "job for 10.0.0." + std::to_string(client) + " exited with code " +
                std::to_string(code) + " after 512 ms";
    merger.Add(r, t++, sink);
  };
  for (int i = 1; i <= 30; ++i) add(i, i % 2);  // two codes, 30 lines
  ASSERT_EQ(sink.events.size(), 1u);            // the first only
  add(31, 3);
  ASSERT_EQ(sink.events.size(), 2u);
  const Copied& notice = sink.events[1];
  EXPECT_EQ(notice.kind, EventKind::kNewValue);
  EXPECT_EQ(notice.group_id, sink.events[0].group_id);
  EXPECT_NE(notice.message.find("code 3 after"), std::string::npos);
  EXPECT_NE(notice.json.find("\"kind\":\"new_value\""), std::string::npos) << notice.json;
  EXPECT_NE(notice.json.find("{\"value\":\"3\",\"count\":1}"), std::string::npos) << notice.json;
  EXPECT_EQ(notice.json.find("10.0.0.31\",\"count"), std::string::npos)  // the client slot
      << notice.json;                                                    // is a variable
  add(32, 3);                                                            // known now
  add(33, 0);
  EXPECT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(merger.stats().events_new_value, 1u);
  merger.FlushAll(sink);
  ASSERT_EQ(sink.events.size(), 3u);
  EXPECT_EQ(sink.events[2].kind, EventKind::kSummary);
  EXPECT_EQ(sink.events[2].count, 32u);  // every line after the first, the 500s included
}

TEST(MergeQualityTest, NoNewValueNoticeBeforeTheSlotIsKnown) {
  WindowMerger merger(MergerOptions{});
  CopyingSink sink;
  LogRecord r;
  r.hostname = "web1";
  r.app_name = "nginx";
  TimeUs t = kT0;
  // A young group (fewer than 16 lines) and a slot with more than 4 values are not known
  // enumerations: nothing but the first goes out.
  for (int i = 1; i <= 10; ++i) {
    r.message =
        "request done status " + std::to_string(200 + i % 2) + " for client " + std::to_string(i);
    merger.Add(r, t++, sink);
  }
  for (int i = 0; i < 40; ++i) {
    r.message = "request done status 200 for client " + std::to_string(100 + i);
    merger.Add(r, t++, sink);
  }
  EXPECT_EQ(merger.stats().events_new_value, 0u);
  EXPECT_EQ(sink.events.size(), 1u);
}

// The frames of a native stack trace (glibc's backtrace_symbols) are one event whatever their
// objects and symbols; a frame's parentheses without an offset (a function's arguments) are
// another line's. Sizes with their units fold whatever the unit; another word does not.
TEST(MergeQualityTest, NativeFramesAndSizesWithUnitsFold) {
  EXPECT_EQ(GroupsFor({"0. /usr/lib/libdb.so.18(StackTrace::StackTrace()+0x16) [0x7f6fecf798a6]",
                       "1. /usr/lib/libdb.so.18(+0x18f95d2) [0x7f6feaef95d2]",
                       "2. dbserver(+0x74508) [0x55ffaf2ab508]",
                       "3. /usr/lib/libdb.so.18(db::Context::setUser(std::basic_string<char, "
                       "std::char_traits<char> > const&, unsigned long)+0x3a1) [0x7f6feb0c1a21]",
                       "4. /lib/x86_64-linux-gnu/libc.so.6(+0x891f5) [0x7f6fe8aa71f5]"}),
            1u);
  EXPECT_EQ(GroupsFor({"0. /usr/lib/libdb.so.18(StackTrace::StackTrace()+0x16) [0x7f6fecf798a6]",
                       "1. /usr/lib/libdb.so.18(db::Context::setUser) [0x7f6feaef95d2]"}),
            2u);
  EXPECT_EQ(
      GroupsFor({"Peak memory usage (total): 1.00 MiB.", "Peak memory usage (total): 12.05 KiB.",
                 "Peak memory usage (total): 121.00 B."}),
      1u);
  EXPECT_EQ(
      GroupsFor({"Peak memory usage (total): 1.00 MiB.", "Peak memory usage (total): 3 pages."}),
      2u);
}

}  // namespace
}  // namespace logfold
