// WindowMerger tests: first/summary events, window and max_hold timing, accounting, eviction,
// scope, confirmation, annotate, reconfiguration, hostile input (events copied by a sink).
#include "pipeline/window_merger.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/event.h"
#include "pipeline/event_json.h"
#include "pipeline/fingerprinter.h"
#include "pipeline/log_record.h"
#include "pipeline/tokenizer.h"

namespace logfold {
namespace {

constexpr TimeUs kSec = 1'000'000;
constexpr TimeUs kT0 = 1'709'251'200 * kSec;  // 2024-03-01T00:00:00Z

// A deep copy of an Event.
struct Rec {
  EventKind kind;
  SummaryReason reason;
  bool closed;
  std::uint64_t group_id;
  std::uint64_t fingerprint;
  std::string message;       // record->message ("" when no record)
  std::string host;          // record->hostname
  std::string last_message;  // last_record->message
  std::string template_text;
  std::uint64_t count;
  std::uint64_t count_total;
  TimeUs first_seen;
  TimeUs last_seen;
  std::vector<std::string> hosts;
  bool hosts_truncated;
  std::string json;  // AppendEventJson output
};

class RecordingSink : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    Rec r{e.kind,
          e.reason,
          e.closed,
          e.group_id,
          e.fingerprint,
          e.record ? e.record->message : "",
          e.record ? e.record->hostname : "",
          e.last_record ? e.last_record->message : "",
          std::string(e.template_text),
          e.count,
          e.count_total,
          e.first_seen_us,
          e.last_seen_us,
          std::vector<std::string>(e.hosts.begin(), e.hosts.end()),
          e.hosts_truncated,
          {}};
    AppendEventJson(e, r.json);
    events.push_back(std::move(r));
  }
  std::vector<Rec> Take() {
    std::vector<Rec> out;
    out.swap(events);
    return out;
  }
  std::vector<Rec> events;
};

// Owns a merger, a sink and a reused record; lines arrive with arrival time = now.
class Harness {
 public:
  explicit Harness(MergerOptions options = {}) : merger(std::move(options)) {}

  void Add(std::string_view message, TimeUs now, std::string_view host = "web01",
           std::string_view app = "app") {
    record.Clear();
    record.message = message;
    record.hostname = host;
    record.app_name = app;
    record.arrival_us = now;
    record.raw = record.message;
    merger.Add(record, now, sink);
    ++added;
  }
  void Flush(TimeUs now) { merger.Flush(now, sink); }
  void FlushAll() { merger.FlushAll(sink); }

  WindowMerger merger;
  RecordingSink sink;
  LogRecord record;
  std::uint64_t added = 0;
};

std::uint64_t Fingerprint(std::string_view message) {
  std::vector<Token> tokens;
  Tokenizer().Tokenize(message, tokens);
  Fingerprinter fingerprinter;
  return fingerprinter.Fingerprint(message, tokens);
}

// Checks the accounting invariant over all events seen and the per-group event sequences:
// one first event per group, before anything else; summaries count lines since the previous
// event of their group; nothing after a closing summary.
void ExpectConsistent(const std::vector<Rec>& events, std::uint64_t lines_added) {
  std::uint64_t total = 0;
  struct GroupState {
    std::uint64_t accounted = 0;
    bool closed = false;
  };
  std::map<std::uint64_t, GroupState> groups;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Rec& e = events[i];
    GroupState& g = groups[e.group_id];
    ASSERT_FALSE(g.closed) << "event " << i << " after its group closed";
    if (e.kind == EventKind::kFirst) {
      ASSERT_EQ(g.accounted, 0u) << "second first event for group, event " << i;
      ASSERT_EQ(e.count_total, 1u);
      g.accounted = 1;
      ++total;
    } else {
      ASSERT_EQ(e.kind, EventKind::kSummary);
      ASSERT_GT(g.accounted, 0u) << "summary before first, event " << i;
      ASSERT_GT(e.count, 0u) << "empty summary, event " << i;
      g.accounted += e.count;
      ASSERT_EQ(e.count_total, g.accounted) << "event " << i;
      ASSERT_LE(e.first_seen, e.last_seen);
      g.closed = e.closed;
      total += e.count;
    }
  }
  EXPECT_EQ(total, lines_added);
}

// --- basics ----------------------------------------------------------------------------------

TEST(WindowMergerTest, FirstEventAtOnceAndSummaryWhenTheWindowPasses) {
  Harness h;
  h.Add("worker 3 processed 17 items in 250 ms", kT0);
  std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::kFirst);
  EXPECT_EQ(ev[0].message, "worker 3 processed 17 items in 250 ms");
  EXPECT_EQ(ev[0].count_total, 1u);
  EXPECT_EQ(ev[0].fingerprint, Fingerprint("worker 3 processed 17 items in 250 ms"));
  const std::uint64_t id = ev[0].group_id;

  constexpr int kN = 6;
  for (int i = 1; i < kN; ++i) {
    h.Add("worker " + std::to_string(i * 7) + " processed " + std::to_string(i * 100) +
              " items in 250 ms",
          kT0 + i * kSec);
  }
  EXPECT_TRUE(h.sink.events.empty()) << "near-duplicates must fold silently";
  EXPECT_EQ(h.merger.open_groups(), 1u);
  const TimeUs last = kT0 + (kN - 1) * kSec;
  h.Flush(last + h.merger.options().window_us - 1);
  EXPECT_TRUE(h.sink.events.empty());
  h.Flush(last + h.merger.options().window_us);
  ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  const Rec& s = ev[0];
  EXPECT_EQ(s.kind, EventKind::kSummary);
  EXPECT_EQ(s.reason, SummaryReason::kIdle);
  EXPECT_TRUE(s.closed);
  EXPECT_EQ(s.group_id, id);
  EXPECT_EQ(s.count, kN - 1u);
  EXPECT_EQ(s.count_total, kN + 0u);
  EXPECT_EQ(s.first_seen, kT0);
  EXPECT_EQ(s.last_seen, last);
  EXPECT_EQ(s.template_text, "worker <*> processed <*> items in 250 ms");
  EXPECT_EQ(s.message, "worker 3 processed 17 items in 250 ms");
  EXPECT_EQ(s.last_message, "worker 35 processed 500 items in 250 ms");
  EXPECT_EQ(h.merger.open_groups(), 0u);
  const MergerStats& st = h.merger.stats();
  EXPECT_EQ(st.lines, kN + 0u);
  EXPECT_EQ(st.lines_merged, kN - 1u);
  EXPECT_EQ(st.groups_opened, 1u);
  EXPECT_EQ(st.groups_closed, 1u);
  EXPECT_EQ(st.events_first, 1u);
  EXPECT_EQ(st.events_summary, 1u);
}

// Events carry the origin of the first line they cover: a first event its line's, a summary
// the first line absorbed since the group's previous event (after a max_hold summary, the
// next line's). Lines without an origin give events without one.
TEST(WindowMergerTest, EventsCarryTheOriginOfTheFirstLineTheyCover) {
  MergerOptions o;
  o.window_us = 10 * kSec;
  o.max_hold_us = 5 * kSec;
  WindowMerger merger(o);
  std::vector<LineOrigin> origins;
  struct OriginSink : EventSink {
    std::vector<LineOrigin>* out;
    void OnEvent(const Event& e) override { out->push_back(e.origin); }
  } origin_sink;
  origin_sink.out = &origins;
  LogRecord r;
  auto add = [&](std::int64_t offset, TimeUs now) {
    r.Clear();
    r.message = "connection from 10.0.0." + std::to_string(offset) + " closed";
    r.hostname = "web01";
    r.raw = r.message;
    r.arrival_us = now;
    r.origin = {77, offset};
    merger.Add(r, now, origin_sink);
  };
  add(100, kT0);             // first: 100
  add(101, kT0 + 1 * kSec);  // summary 1 starts here
  add(102, kT0 + 2 * kSec);
  merger.Flush(kT0 + 5 * kSec, origin_sink);  // max_hold summary of 101..102
  add(103, kT0 + 6 * kSec);                   // the next summary starts here
  merger.FlushAll(origin_sink);
  ASSERT_EQ(origins.size(), 3u);
  EXPECT_EQ(origins[0], (LineOrigin{77, 100}));
  EXPECT_EQ(origins[1], (LineOrigin{77, 101}));
  EXPECT_EQ(origins[2], (LineOrigin{77, 103}));

  Harness h;  // lines without an origin
  h.Add("disk full on /var", kT0);
  h.Add("disk full on /var", kT0 + 1);
  h.FlushAll();
  for (const Rec& e : h.sink.events) EXPECT_EQ(e.json.find("event_id"), std::string::npos);
}

TEST(WindowMergerTest, DifferentMessagesOpenDifferentGroups) {
  Harness h;
  h.Add("disk quota exceeded on volume 3", kT0);
  h.Add("fan speed changed to 1200 rpm now", kT0 + 1);
  h.Add("certificate for www will expire in 12 days", kT0 + 2);
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 3u);
  std::set<std::uint64_t> ids;
  for (const Rec& e : ev) {
    EXPECT_EQ(e.kind, EventKind::kFirst);
    ids.insert(e.group_id);
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(h.merger.open_groups(), 3u);
}

// A message without a token is its own text: an empty line and a rule of '=' are two events,
// while two empty lines (blanks aside) and two equal rules fold.
TEST(WindowMergerTest, MessagesWithoutATokenFoldOnlyWithTheSameText) {
  Harness h;
  h.Add("", kT0);
  h.Add("====================", kT0 + 1);
  h.Add("  ", kT0 + 2);
  h.Add("====================", kT0 + 3);
  h.Add("--------------------", kT0 + 4);
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].message, "");
  EXPECT_EQ(ev[1].message, "====================");
  EXPECT_EQ(ev[2].message, "--------------------");
  EXPECT_EQ(h.merger.open_groups(), 3u);
}

TEST(WindowMergerTest, ExpiryBoundaryIsExactlyTheWindow) {
  MergerOptions o;
  o.window_us = 5 * kSec;
  Harness h(o);
  h.Add("job 1 done", kT0);
  h.Add("job 2 done", kT0 + 2 * kSec);
  h.sink.Take();
  const TimeUs last = kT0 + 2 * kSec;
  h.Flush(last + o.window_us - 1);  // idle for window - 1us: still open
  EXPECT_EQ(h.merger.open_groups(), 1u);
  EXPECT_TRUE(h.sink.events.empty());
  h.Flush(last + o.window_us);  // idle for exactly window: closes
  EXPECT_EQ(h.merger.open_groups(), 0u);
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].reason, SummaryReason::kIdle);
  EXPECT_EQ(ev[0].count, 1u);
  EXPECT_EQ(ev[0].count_total, 2u);
}

TEST(WindowMergerTest, LineArrivingExactlyAtTheWindowStartsANewGroup) {
  MergerOptions o;
  o.window_us = 5 * kSec;
  Harness h(o);
  h.Add("job 1 done", kT0);
  h.Add("job 2 done", kT0 + o.window_us - 1);      // joins
  h.Add("job 3 done", kT0 + 2 * o.window_us - 1);  // exactly window after the last: new group
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].kind, EventKind::kFirst);
  EXPECT_EQ(ev[1].kind, EventKind::kSummary);  // the old group closes first
  EXPECT_EQ(ev[1].group_id, ev[0].group_id);
  EXPECT_EQ(ev[1].count, 1u);
  EXPECT_EQ(ev[2].kind, EventKind::kFirst);
  EXPECT_EQ(ev[2].message, "job 3 done");
  EXPECT_NE(ev[2].group_id, ev[0].group_id);
}

TEST(WindowMergerTest, SingleLineGroupClosesWithoutASummary) {
  Harness h;
  h.Add("lonely line here", kT0);
  h.sink.Take();
  h.Flush(kT0 + h.merger.options().window_us);
  EXPECT_EQ(h.merger.open_groups(), 0u);
  EXPECT_TRUE(h.sink.events.empty());
  EXPECT_EQ(h.merger.stats().groups_closed, 1u);
}

TEST(WindowMergerTest, NextDeadline) {
  MergerOptions o;
  o.window_us = 10 * kSec;
  o.max_hold_us = 60 * kSec;
  Harness h(o);
  EXPECT_EQ(h.merger.NextDeadline(), INT64_MAX);
  h.Add("job 1 done", kT0);
  EXPECT_EQ(h.merger.NextDeadline(), kT0 + 10 * kSec);
  h.Add("job 2 done", kT0 + 3 * kSec);
  EXPECT_EQ(h.merger.NextDeadline(), kT0 + 13 * kSec);
  h.Add("another thing entirely", kT0 + 4 * kSec);
  EXPECT_EQ(h.merger.NextDeadline(), kT0 + 13 * kSec);  // the least recently active group
  // Nothing happens before the deadline; something does at it.
  h.Flush(h.merger.NextDeadline() - 1);
  EXPECT_EQ(h.merger.open_groups(), 2u);
  h.Flush(h.merger.NextDeadline());
  EXPECT_EQ(h.merger.open_groups(), 1u);
  EXPECT_EQ(h.merger.NextDeadline(), kT0 + 14 * kSec);
  h.FlushAll();
  EXPECT_EQ(h.merger.NextDeadline(), INT64_MAX);
}

TEST(WindowMergerTest, NextDeadlineIncludesMaxHold) {
  MergerOptions o;
  o.window_us = 10 * kSec;
  o.max_hold_us = 4 * kSec;
  Harness h(o);
  h.Add("job 1 done", kT0);
  EXPECT_EQ(h.merger.NextDeadline(), kT0 + 4 * kSec);
  h.Add("job 2 done", kT0 + 1 * kSec);
  h.sink.Take();
  h.Flush(kT0 + 4 * kSec - 1);
  EXPECT_TRUE(h.sink.events.empty());
  h.Flush(kT0 + 4 * kSec);
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].reason, SummaryReason::kMaxHold);
  EXPECT_FALSE(ev[0].closed);
  EXPECT_EQ(h.merger.NextDeadline(), kT0 + 8 * kSec);  // hold restarts at the summary
}

TEST(WindowMergerTest, MaxHoldSummariesWhileAStormContinues) {
  MergerOptions o;
  o.window_us = 10 * kSec;
  o.max_hold_us = 60 * kSec;
  Harness h(o);
  constexpr int kLines = 200;
  for (int i = 0; i < kLines; ++i) {
    h.Add("GET /api/v1/items/" + std::to_string(i) + " took " + std::to_string(i % 17) + " ms",
          kT0 + i * kSec);
  }
  h.Flush(kT0 + (kLines - 1) * kSec + o.window_us);
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0].kind, EventKind::kFirst);
  const std::uint64_t expected_counts[] = {59, 60, 60};
  const std::uint64_t expected_totals[] = {60, 120, 180};
  for (int k = 0; k < 3; ++k) {
    const Rec& s = ev[1 + k];
    EXPECT_EQ(s.kind, EventKind::kSummary);
    EXPECT_EQ(s.reason, SummaryReason::kMaxHold);
    EXPECT_FALSE(s.closed);
    EXPECT_EQ(s.group_id, ev[0].group_id);
    EXPECT_EQ(s.count, expected_counts[k]);
    EXPECT_EQ(s.count_total, expected_totals[k]);
    EXPECT_EQ(s.first_seen, kT0);
  }
  EXPECT_EQ(ev[4].reason, SummaryReason::kIdle);
  EXPECT_TRUE(ev[4].closed);
  EXPECT_EQ(ev[4].count, 20u);
  EXPECT_EQ(ev[4].count_total, 200u);
  ExpectConsistent(ev, kLines);
}

TEST(WindowMergerTest, MaxHoldOfAQuietGroupEmitsNothing) {
  MergerOptions o;
  o.window_us = 10 * kSec;
  o.max_hold_us = 10 * kSec;
  Harness h(o);
  for (int i = 0; i < 30; ++i) h.Add("tick " + std::to_string(i), kT0 + i * 5 * kSec);
  h.FlushAll();
  const std::vector<Rec> ev = h.sink.Take();
  for (const Rec& e : ev) {
    if (e.kind == EventKind::kSummary) {
      EXPECT_GT(e.count, 0u);
    }
  }
  ExpectConsistent(ev, 30);
}

// --- accounting ------------------------------------------------------------------------------

TEST(WindowMergerTest, AccountingInvariantOverALongRandomizedRun) {
  const std::vector<std::string> templates = {
      "Accepted password for {w} from {ip} port {n} ssh2",
      "worker {n} processed {n} items in {n} ms",
      "GET /api/v1/users/{n} status {n} bytes {n}",
      "disk {w} usage at {n} percent on /dev/sda{n}",
      "connection from {ip} closed after {n} seconds",
      "cache miss key=user:{n}:profile ttl={n}s",
      "job {uuid} finished queue=default attempts={n}",
      "kernel: eth{n}: link up, {n} Mbps",
  };
  const std::vector<std::string> words = {"alice", "bob", "carol", "root", "admin"};
  const std::vector<std::string> hosts = {"web01", "db01"};
  const std::vector<std::string> apps = {"sshd", "app"};
  std::mt19937_64 rng(20240301);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };

  MergerOptions o;
  o.window_us = 10 * kSec;
  o.max_hold_us = 15 * kSec;
  o.max_groups = 24;  // fewer than the template x host x app combinations: evictions
  Harness h(o);
  TimeUs now = kT0;
  constexpr int kLines = 20000;
  for (int i = 0; i < kLines; ++i) {
    const std::uint64_t r = rng() % 1000;
    if (r < 3) {
      now += 3600 * kSec;  // a long silence
    } else if (r < 8) {
      now += 12 * kSec;  // longer than the window
    } else if (r < 12) {
      now -= 20 * kSec;  // the clock goes backwards
    } else {
      now += static_cast<TimeUs>(rng() % (kSec / 5));
    }
    std::string msg;
    const std::string& t = templates[pick(templates.size())];
    for (std::size_t p = 0; p < t.size();) {
      if (t.compare(p, 3, "{n}") == 0) {
        msg += std::to_string(rng() % 100000);
        p += 3;
      } else if (t.compare(p, 3, "{w}") == 0) {
        msg += words[pick(words.size())];
        p += 3;
      } else if (t.compare(p, 4, "{ip}") == 0) {
        msg += "10.0." + std::to_string(pick(4)) + "." + std::to_string(1 + pick(250));
        p += 4;
      } else if (t.compare(p, 6, "{uuid}") == 0) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%08llx-0000-4000-8000-%012llx",
                      static_cast<unsigned long long>(rng() & 0xffffffffULL),
                      static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
        msg += buf;
        p += 6;
      } else {
        msg += t[p++];
      }
    }
    h.Add(msg, now, hosts[pick(hosts.size())], apps[pick(apps.size())]);
    EXPECT_LE(h.merger.open_groups(), o.max_groups);
    if (rng() % 50 == 0) h.Flush(now + static_cast<TimeUs>(rng() % (20 * kSec)));
  }
  h.FlushAll();
  const std::vector<Rec> ev = h.sink.Take();
  ExpectConsistent(ev, kLines);
  const MergerStats& st = h.merger.stats();
  std::uint64_t firsts = 0, summaries = 0, evicted = 0, max_hold = 0;
  for (const Rec& e : ev) {
    if (e.kind == EventKind::kFirst) ++firsts;
    if (e.kind == EventKind::kSummary) ++summaries;
    if (e.kind == EventKind::kSummary && e.reason == SummaryReason::kEvicted) ++evicted;
    if (e.kind == EventKind::kSummary && e.reason == SummaryReason::kMaxHold) ++max_hold;
  }
  EXPECT_EQ(st.lines, static_cast<std::uint64_t>(kLines));
  EXPECT_EQ(st.events_first, firsts);
  EXPECT_EQ(st.events_summary, summaries);
  EXPECT_EQ(st.groups_opened, firsts);
  EXPECT_EQ(st.groups_closed, st.groups_opened);
  EXPECT_EQ(st.lines_merged + st.groups_opened, st.lines);
  EXPECT_EQ(h.merger.open_groups(), 0u);
  EXPECT_GT(st.clock_backwards, 0u);
  EXPECT_GT(st.groups_evicted, 0u);
  EXPECT_GE(st.groups_evicted, evicted);
  EXPECT_GT(max_hold, 0u);
  EXPECT_GT(st.lines_merged, st.lines / 2) << "the run should fold most lines";
}

// --- time going backwards --------------------------------------------------------------------

TEST(WindowMergerTest, ClockGoingBackwardsIsCountedAndLosesNothing) {
  MergerOptions o;
  o.window_us = 10 * kSec;
  Harness h(o);
  h.Add("job 1 done", kT0 + 100 * kSec);
  h.Add("job 2 done", kT0 + 50 * kSec);  // earlier than the latest time seen
  EXPECT_EQ(h.merger.stats().clock_backwards, 1u);
  h.Flush(kT0);
  EXPECT_EQ(h.merger.stats().clock_backwards, 2u);
  EXPECT_EQ(h.merger.open_groups(), 1u);
  h.sink.Take();
  // The backwards line counted as arriving at the latest time: the window runs from there.
  h.Flush(kT0 + 110 * kSec - 1);
  EXPECT_TRUE(h.sink.events.empty());
  h.Flush(kT0 + 110 * kSec);
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].count, 1u);
  EXPECT_EQ(ev[0].count_total, 2u);
  EXPECT_EQ(ev[0].first_seen, kT0 + 50 * kSec);  // event times are kept as they were
  EXPECT_EQ(ev[0].last_seen, kT0 + 100 * kSec);
}

TEST(WindowMergerTest, ClockJumpingFarBackAndForthKeepsAccounting) {
  Harness h;
  const TimeUs times[] = {kT0, 0, kT0 + kSec, -kT0, kT0 + 2 * kSec, kT0 + 3600 * kSec, kT0};
  int i = 0;
  for (TimeUs t : times) h.Add("request " + std::to_string(i++) + " handled", t);
  h.FlushAll();
  ExpectConsistent(h.sink.Take(), 7);
  EXPECT_EQ(h.merger.stats().clock_backwards, 3u);
}

// --- eviction --------------------------------------------------------------------------------

TEST(WindowMergerTest, MaxGroupsEvictsTheLeastRecentlyActive) {
  MergerOptions o;
  o.max_groups = 3;
  Harness h(o);
  h.Add("disk quota exceeded on volume 3", kT0);                 // A
  h.Add("fan speed changed to 1200 rpm now", kT0 + 1);           // B
  h.Add("certificate for www will expire in 12 days", kT0 + 2);  // C
  h.Add("fan speed changed to 1300 rpm now", kT0 + 3);           // B joins
  h.Add("disk quota exceeded on volume 4", kT0 + 4);             // A joins: LRU is C, B, A
  std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 3u);
  const std::uint64_t id_a = ev[0].group_id, id_b = ev[1].group_id;

  h.Add("backup of share home completed in 17 minutes flat", kT0 + 5);  // D evicts C (silent)
  ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::kFirst);
  EXPECT_EQ(h.merger.stats().groups_evicted, 1u);
  EXPECT_EQ(h.merger.open_groups(), 3u);

  h.Add("temperature sensor 4 reads 71 C", kT0 + 6);  // E evicts B, which has a line to report
  ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, EventKind::kSummary);
  EXPECT_EQ(ev[0].reason, SummaryReason::kEvicted);
  EXPECT_TRUE(ev[0].closed);
  EXPECT_EQ(ev[0].group_id, id_b);
  EXPECT_EQ(ev[0].count, 1u);
  EXPECT_EQ(ev[1].kind, EventKind::kFirst);
  EXPECT_EQ(h.merger.stats().groups_evicted, 2u);

  // A is still open: its near-duplicate joins it instead of opening a group.
  h.Add("disk quota exceeded on volume 5", kT0 + 7);
  EXPECT_TRUE(h.sink.events.empty());
  h.FlushAll();
  ev = h.sink.Take();
  bool saw_a = false;
  for (const Rec& e : ev) {
    EXPECT_EQ(e.reason, SummaryReason::kShutdown);
    if (e.group_id == id_a) {
      saw_a = true;
      EXPECT_EQ(e.count_total, 3u);
    }
  }
  EXPECT_TRUE(saw_a);
}

// The memory budget's lever: the least recently active group is summarised now, with reason
// "memory", and the bytes it held leave MemoryUsage.
TEST(WindowMergerTest, CloseOldestSummarisesTheLeastRecentlyActiveGroup) {
  Harness h;
  EXPECT_EQ(h.merger.CloseOldest(h.sink), 0u);          // nothing open
  h.Add("disk quota exceeded on volume 3", kT0);        // A
  h.Add("fan speed changed to 1200 rpm now", kT0 + 1);  // B
  h.Add("disk quota exceeded on volume 4", kT0 + 2);    // A joins: B is now the oldest
  h.Add("fan speed changed to 1300 rpm now", kT0 + 3);  // B joins: A is the oldest
  std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 2u);
  const std::uint64_t id_a = ev[0].group_id;
  const std::size_t before = h.merger.MemoryUsage();
  const std::size_t freed = h.merger.CloseOldest(h.sink);
  EXPECT_GT(freed, 0u);
  EXPECT_LE(h.merger.MemoryUsage(), before - freed);  // its index entries went too
  ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].group_id, id_a);
  EXPECT_EQ(ev[0].reason, SummaryReason::kMemory);
  EXPECT_TRUE(ev[0].closed);
  EXPECT_EQ(ev[0].count, 1u);
  EXPECT_EQ(h.merger.open_groups(), 1u);
  EXPECT_EQ(h.merger.stats().groups_closed_memory, 1u);
  EXPECT_EQ(SummaryReasonName(SummaryReason::kMemory), "memory");
}

// --- scope -----------------------------------------------------------------------------------

TEST(WindowMergerTest, DefaultScopeKeepsHostsAndAppsApart) {
  Harness h;
  h.Add("job 1 done", kT0, "web01", "app");
  h.Add("job 2 done", kT0 + 1, "web02", "app");
  h.Add("job 3 done", kT0 + 2, "web01", "other");
  h.Add("job 4 done", kT0 + 3, "web01", "app");  // joins the first
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[1].host, "web02");
  EXPECT_EQ(h.merger.open_groups(), 3u);
  h.FlushAll();
  const std::vector<Rec> sums = h.sink.Take();
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(sums[0].group_id, ev[0].group_id);
  EXPECT_TRUE(sums[0].hosts.empty());  // host in scope: no host list
}

TEST(WindowMergerTest, EmptyScopeMergesAcrossHostsAndListsThemBounded) {
  MergerOptions o;
  o.scope = {};
  o.max_summary_hosts = 3;
  Harness h(o);
  const std::vector<std::string> hosts = {"h1", "h2", "h1", "h3", "h2", "h4", "h5"};
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    h.Add("job " + std::to_string(i) + " done", kT0 + static_cast<TimeUs>(i), hosts[i],
          i % 2 ? "a" : "b");
  }
  EXPECT_EQ(h.merger.open_groups(), 1u);
  h.FlushAll();
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 2u);
  const Rec& s = ev[1];
  EXPECT_EQ(s.count, 6u);
  EXPECT_EQ(s.hosts, (std::vector<std::string>{"h1", "h2", "h3"}));
  EXPECT_TRUE(s.hosts_truncated);
  const nlohmann::json j = nlohmann::json::parse(s.json);
  EXPECT_EQ(j.at("hosts"), nlohmann::json::array({"h1", "h2", "h3"}));
  EXPECT_EQ(j.at("hosts_truncated"), true);
  EXPECT_FALSE(j.contains("host"));
}

TEST(WindowMergerTest, EmptyScopeHostListNotTruncatedWhenItFits) {
  MergerOptions o;
  o.scope = {};
  Harness h(o);
  h.Add("job 1 done", kT0, "h1");
  h.Add("job 2 done", kT0 + 1, "h2");
  h.Add("job 3 done", kT0 + 2, "h1");
  h.FlushAll();
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].hosts, (std::vector<std::string>{"h1", "h2"}));
  EXPECT_FALSE(ev[1].hosts_truncated);
}

// --- confirmation ----------------------------------------------------------------------------

std::size_t GroupsFor(const std::vector<std::string>& lines, MergerOptions o = {}) {
  Harness h(std::move(o));
  TimeUs t = kT0;
  for (const std::string& line : lines) h.Add(line, t++);
  return h.merger.stats().groups_opened;
}

TEST(WindowMergerTest, ProtectedWordsPreventMerges) {
  EXPECT_EQ(GroupsFor({"Service started", "Service stopped"}), 2u);
  // Here the changed word follows '=' (a value context) among many agreeing words, so only
  // its protection keeps the lines apart.
  const std::vector<std::string> lines = {"backup job state=started for volume data on node alpha",
                                          "backup job state=stopped for volume data on node alpha"};
  EXPECT_EQ(GroupsFor(lines), 2u);
  MergerOptions unprotected;
  unprotected.protected_words = {};
  EXPECT_EQ(GroupsFor(lines, unprotected), 1u);
  // Custom words, compared case-insensitively.
  const std::vector<std::string> roles = {"replica role=primary for shard users on node alpha",
                                          "replica role=standby for shard users on node alpha"};
  EXPECT_EQ(GroupsFor(roles), 1u);
  MergerOptions custom;
  custom.protected_words = {"PRIMARY"};
  EXPECT_EQ(GroupsFor(roles, custom), 2u);
}

TEST(WindowMergerTest, WordChangeMergesOnlyInAValueContext) {
  Harness h;
  h.Add("Accepted password for alice from 10.0.0.1 port 22 ssh2", kT0);
  h.Add("Accepted password for bob from 10.0.0.1 port 22 ssh2", kT0 + 1);
  EXPECT_EQ(h.merger.stats().groups_opened, 1u);
  h.FlushAll();
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].template_text, "Accepted password for <*> from 10.0.0.1 port 22 ssh2");

  EXPECT_EQ(GroupsFor({"connection open through proxy gw.example.org:5070 HTTPS",
                       "connection open through proxy gw.example.org:5070 SOCKS5"}),
            2u);
  EXPECT_EQ(
      GroupsFor({"relay session uses cipher chacha now", "relay session uses cipher aes now"}), 2u);
  EXPECT_EQ(
      GroupsFor({"relay session uses cipher=chacha now", "relay session uses cipher=aes now"}), 1u);
  EXPECT_EQ(GroupsFor({"relay session uses cipher \"chacha\" now",
                       "relay session uses cipher \"aes\" now"}),
            1u);
}

TEST(WindowMergerTest, DigitWordsMustKeepTheirLetters) {
  EXPECT_EQ(GroupsFor({"link en0 is up", "link en1 is up"}), 1u);
  EXPECT_EQ(GroupsFor({"link en0 is up", "link awdl0 is up"}), 2u);
  // A trailing hex id is not part of the word: veth58b7fff ~ veth1a2c3d4.
  EXPECT_EQ(GroupsFor({"eth0: renamed from veth58b7fff", "eth0: renamed from veth1a2c3d4"}), 1u);
  EXPECT_EQ(GroupsFor({"read blk_-123 from disk", "read blk_4567 from disk"}), 1u);
}

// A name in place of a value by its kind (a DNS name, a name with a number) is one more value,
// whichever came first and whatever rejected the line before: groups of constants at that
// place (which turn the plain name away) must not hide the DNS name's group from it.
TEST(WindowMergerTest, ANameInPlaceOfAValueByItsKindJoinsItsGroup) {
  EXPECT_EQ(GroupsFor({"forwarded svc.corp.example to 10.0.0.1#53",
                       "forwarded localhost to 10.0.0.1#53", "forwarded gw to 10.0.0.1#53"}),
            1u);
  EXPECT_EQ(GroupsFor({"Connect app@127.0.0.1 on shop using TCP/IP",
                       "Connect app@127.0.0.1 on nodb1 using TCP/IP"}),
            1u);
  EXPECT_EQ(
      GroupsFor({"forwarded ALPHA to 10.0.0.1#53", "forwarded svc.corp.example to 10.0.0.1#53",
                 "forwarded BRAVO to 10.0.0.1#53", "forwarded CHARLIE to 10.0.0.1#53",
                 "forwarded localhost to 10.0.0.1#53"}),
      4u);
  // Two plain words there are an action or a state, and so is a name in capitals.
  EXPECT_EQ(GroupsFor({"worker spawn completed on node1", "worker destroy completed on node1"}),
            2u);
  EXPECT_EQ(GroupsFor({"query type A for www.example.org", "query type MX for www.example.org"}),
            2u);
}

TEST(WindowMergerTest, ConfirmFalseBehavesAsPlainSimHash) {
  const std::string a = "connection open through proxy gw.example.org:5070 HTTPS";
  const std::string b = "connection open through proxy gw.example.org:5070 SOCKS5";
  const int d = HammingDistance(Fingerprint(a), Fingerprint(b));
  ASSERT_GT(d, 0);
  ASSERT_LE(d, 31);
  MergerOptions plain;
  plain.confirm = false;
  plain.max_distance = d;
  EXPECT_EQ(GroupsFor({a, b}, plain), 1u);  // within distance: joined, whatever differs
  plain.max_distance = d - 1;
  EXPECT_EQ(GroupsFor({a, b}, plain), 2u);  // one bit too far
  MergerOptions confirmed;
  confirmed.max_distance = d;
  EXPECT_EQ(GroupsFor({a, b}, confirmed), 2u);

  // Confirmation finds same-shape groups beyond max_distance; plain SimHash does not.
  const std::string c = "Accepted password for alice from 10.0.0.1 port 22 ssh2";
  const std::string e = "Accepted password for bob from 10.0.0.1 port 22 ssh2";
  ASSERT_GT(HammingDistance(Fingerprint(c), Fingerprint(e)), 4);
  EXPECT_EQ(GroupsFor({c, e}), 1u);
  MergerOptions plain4;
  plain4.confirm = false;
  EXPECT_EQ(GroupsFor({c, e}, plain4), 2u);
}

TEST(WindowMergerTest, ConfirmFalseJoinsLinesOfDifferentLength) {
  MergerOptions plain;
  plain.confirm = false;
  plain.max_distance = 31;
  Harness h(plain);
  const std::string a = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
  const std::string b = a + " lambda";
  ASSERT_LE(HammingDistance(Fingerprint(a), Fingerprint(b)), 31);
  h.Add(a, kT0);
  h.Add(b, kT0 + 1);
  EXPECT_EQ(h.merger.stats().groups_opened, 1u);
  EXPECT_EQ(GroupsFor({a, b}), 2u);  // confirmation needs the same token count
}

TEST(WindowMergerTest, ABareWordChangeNeedsEightAgreeingWords) {
  // Outside a value context one changed compound name is accepted only with >= 8 agreeing
  // words.
  EXPECT_EQ(GroupsFor({"alpha beta gamma delta com.epsilon zeta eta theta iota",
                       "alpha beta gamma delta com.omega zeta eta theta iota"}),
            1u);
  EXPECT_EQ(GroupsFor({"alpha beta gamma delta com.epsilon zeta eta theta",
                       "alpha beta gamma delta com.omega zeta eta theta"}),
            2u);
  // Two changed words outside a value context never merge, however long the line.
  EXPECT_EQ(GroupsFor({"alpha beta gamma a.delta a.epsilon zeta eta theta iota kappa lambda mu",
                       "alpha beta gamma a.omega a.epsilon zeta eta theta iota kappa lambda nu"}),
            2u);
}

TEST(WindowMergerTest, APlainWordOutsideAValueContextNeverChanges) {
  // Actions, states and function names: however many words agree.
  EXPECT_EQ(GroupsFor({"[instance: 3edec1e4-9678-4a3a-a21b-a145a4ee5e61] Took 19.84 seconds to "
                       "spawn the instance on the hypervisor.",
                       "[instance: 3edec1e4-9678-4a3a-a21b-a145a4ee5e61] Took 0.41 seconds to "
                       "destroy the instance on the hypervisor."}),
            2u);
  EXPECT_EQ(GroupsFor({"ViewRootImpl dispatch touch event ACTION_DOWN on the main window view now",
                       "ViewRootImpl dispatch touch event ACTION_UP on the main window view now"}),
            2u);
  // A unit after a number may change.
  EXPECT_EQ(GroupsFor({"Block rdd_2_2 stored as bytes in memory (estimated size 850.0 B, free "
                       "320.3 KB)",
                       "Block rdd_2_3 stored as bytes in memory (estimated size 5.2 KB, free "
                       "5.2 KB)"}),
            1u);
  // HTTP methods are protected: GET and POST of one path are different requests.
  EXPECT_EQ(GroupsFor({"10.11.10.1 \"GET /v2/servers/detail HTTP/1.1\" status: 200 len: 1893",
                       "10.11.10.1 \"POST /v2/servers/detail HTTP/1.1\" status: 200 len: 1893"}),
            2u);
}

TEST(WindowMergerTest, LinesOfNearbyLengthAlignOnAMultiTokenVariable) {
  Harness h;
  h.Add("sent 0 bytes to peer alpha", kT0);
  h.Add("sent 1190 bytes (1.16 KB) to peer alpha", kT0 + 1);
  EXPECT_EQ(h.merger.stats().groups_opened, 1u);
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kBucket);
  h.FlushAll();
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].count_total, 2u);
  // The extra tokens show as a gap after "bytes".
  EXPECT_NE(ev[1].template_text.find("bytes <*> to peer alpha"), std::string::npos)
      << ev[1].template_text;
  // Extra tokens at one end are another message's field, not a variable.
  EXPECT_EQ(GroupsFor({"job done ok", "job done ok user=alice"}), 2u);
  // Up to 6 tokens more or fewer are aligned; 7 are too many. (Values of alternating kinds:
  // a list of one kind would be one slot.)
  EXPECT_EQ(
      GroupsFor({"sent 0 bytes to peer alpha", "sent 1 0x2 3 0x4 5 0x6 7 bytes to peer alpha"}),
      1u);
  EXPECT_EQ(
      GroupsFor({"sent 0 bytes to peer alpha", "sent 1 0x2 3 0x4 5 0x6 7 0x8 bytes to peer alpha"}),
      2u);
}

TEST(WindowMergerTest, LastDecisionExplainsThePath) {
  Harness h;
  h.merger.ExplainRejections(true);
  h.Add("job 1 done", kT0);
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kNew);
  EXPECT_EQ(h.merger.last_decision().fingerprint, Fingerprint("job 1 done"));
  h.Add("job 2 done", kT0 + 1);
  const MergeDecision& d = h.merger.last_decision();
  EXPECT_EQ(d.path, MergeDecision::kExact);
  EXPECT_EQ(d.group_id, h.sink.events.at(0).group_id);
  EXPECT_EQ(d.distance, 0);
  EXPECT_FALSE(d.reason.empty());
  h.Add("Accepted password for alice from 10.0.0.1 port 22 ssh2", kT0 + 2);
  h.Add("Accepted password for bob from 10.0.0.1 port 22 ssh2", kT0 + 3);
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kBucket);
  EXPECT_GT(h.merger.last_decision().distance, 0);
  h.Add("Service started", kT0 + 4);
  h.Add("Service stopped", kT0 + 5);
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kNew);
  EXPECT_GE(h.merger.last_decision().candidates, 1u);
  EXPECT_EQ(h.merger.last_decision().reason, "a protected word differs");
}

// The counts a candidate is ruled out by before the full confirmation, at their limits: two
// changed words need five agreeing ones, or three when each is the value of a value key
// (user, host) that both lines write the same way; three never merge; lines of different
// length need two aligned words.
TEST(WindowMergerTest, ConfirmationLimitsOnChangedAndAlignedWords) {
  EXPECT_EQ(GroupsFor({"relay session now owner=alice zone=alpha",
                       "relay session now owner=bob zone=beta"}),
            1u);
  EXPECT_EQ(
      GroupsFor({"relay session owner=alice zone=alpha", "relay session owner=bob zone=beta"}), 2u);
  EXPECT_EQ(GroupsFor({"relay user=alice host=alpha", "relay user=bob host=beta"}), 1u);
  EXPECT_EQ(GroupsFor({"user=alice host=alpha", "user=bob host=beta"}), 2u);
  EXPECT_EQ(GroupsFor({"relay session now then user=alice host=alpha peer=gamma",
                       "relay session now then user=bob host=beta peer=delta"}),
            2u);
  EXPECT_EQ(GroupsFor({"push 0 bytes 5", "push 1190 bytes 1.16 KB 5"}), 1u);
  EXPECT_EQ(GroupsFor({"push 0 items 5", "push 1190 bytes 1.16 KB 5"}), 2u);
}

// A candidate ruled out by the cheap counts still explains itself with the full check's reason.
TEST(WindowMergerTest, LastDecisionReasonOfACandidateRuledOutEarly) {
  Harness h;
  h.merger.ExplainRejections(true);
  h.Add("alpha beta error gamma delta", kT0);
  h.Add("alpha beta info zeta omega", kT0 + 1);
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kNew);
  EXPECT_GE(h.merger.last_decision().candidates, 1u);
  EXPECT_EQ(h.merger.last_decision().reason, "a protected word differs");
}

// Unless asked to explain, a merger skips the full match that would name that reason; the
// decision itself and what it counted are the same.
TEST(WindowMergerTest, RejectionOfACandidateRuledOutEarlyIsExplainedOnlyWhenAsked) {
  Harness h;
  h.Add("alpha beta error gamma delta", kT0);
  h.Add("alpha beta info zeta omega", kT0 + 1);
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kNew);
  EXPECT_GE(h.merger.last_decision().candidates, 1u);
  EXPECT_EQ(h.merger.last_decision().reason, "");
  EXPECT_EQ(h.merger.stats().groups_opened, 2u);
}

// Closing groups out of the middle of a scope's bucket keeps the scan newest-opened first.
TEST(WindowMergerTest, BucketScanStaysNewestFirstAfterClosingSome) {
  MergerOptions options;
  options.max_distance = 0;  // only the bucket scan finds a probe that differs by a word
  Harness h(options);
  // Each line differs from the probe by one word out of a value context (accepted with 8 or
  // more agreeing words), and from each other by two (rejected): four separate groups.
  // Compound names: only those may change outside a value context.
  const std::vector<std::string> words = {"cargo-a",  "ship-b",    "north-c",  "harbor-d",
                                          "loaded-e", "crates-f",  "beside-g", "green-h",
                                          "cranes-i", "tonight-j", "quietly-k"};
  auto line = [&](std::size_t changed) {
    std::string m;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (i > 0) m += ' ';
      m += i == changed ? "zebra-z" : words[i];
    }
    return m;
  };
  for (std::size_t i = 1; i <= 4; ++i) h.Add(line(i), kT0 + static_cast<TimeUs>(i));
  ASSERT_EQ(h.merger.open_groups(), 4u);
  const std::vector<Rec> firsts = h.sink.Take();
  ASSERT_EQ(firsts.size(), 4u);
  // Keep groups 1 and 3 active; 2 and 4 close when the window passes.
  h.Add(line(1), kT0 + 5 * kSec);
  h.Add(line(3), kT0 + 5 * kSec);
  h.Flush(kT0 + 11 * kSec);
  ASSERT_EQ(h.merger.open_groups(), 2u);
  h.Add(line(99), kT0 + 12 * kSec);  // the probe: fits groups 1 and 3
  EXPECT_EQ(h.merger.open_groups(), 2u);
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kBucket);
  EXPECT_EQ(h.merger.last_decision().group_id, firsts[2].group_id);
}

// An event whose lines each bring a new shape (a package name and version masked by their
// letters) is found only by the bucket scan, which reads the newest 16 groups of the line's
// length: the group it finds moves to the newest end, so it stays within reach however many
// other events of that length open after it.
TEST(WindowMergerTest, AGroupTheBucketScanFindsStaysWithinIt) {
  MergerOptions options;
  options.window_us = 3600 * kSec;
  options.variable_after_values = 0;
  Harness h(options);
  const std::vector<std::string> packages = {
      "libsystemd0:amd64 252.38-1~deb12u1", "libudev1:amd64 252.38-1~deb12u1",
      "libssl3:amd64 3.0.16-1~deb12u1",     "libgc1:amd64 1:8.2.2-3",
      "perl-modules-5.36:all 5.36.0-7",     "libcurl4:amd64 7.88.1-10+deb12u12",
      "libexpat1:amd64 2.5.0-1+deb12u1",    "libksba8:amd64 1.6.3-2",
      "libnss3:amd64 2:3.87.1-1+deb12u1",   "gpg-wks-client:amd64 2.2.40-1.1",
      "libkmod2:amd64 30+20221128-1",       "libtirpc3:amd64 1.3.3+ds-1"};
  TimeUs t = kT0;
  for (std::size_t i = 0; i < packages.size(); ++i) {
    h.Add("configure " + packages[i] + " <none>", ++t);
    // Two other events of four tokens each, words only: each opens a group of its own.
    for (int k = 0; k < 2; ++k) {
      std::string other = "startup";
      for (std::size_t w = 0, v = 3 * (2 * i + k); w < 3; ++w, ++v) {
        other += ' ';
        other += static_cast<char>('a' + v % 26);
        other += static_cast<char>('a' + v / 26);
        other += "word";
      }
      h.Add(other, ++t);
    }
  }
  std::set<std::uint64_t> configure_groups;
  for (const Rec& e : h.sink.Take()) {
    if (e.message.rfind("configure ", 0) == 0) configure_groups.insert(e.group_id);
  }
  EXPECT_EQ(configure_groups.size(), 1u);
  EXPECT_EQ(h.merger.open_groups(), 1u + 2u * packages.size());
}

// A group that keeps taking lines by its exact shape stays within the bucket scan's reach
// however many groups of its length open after it: a line only the scan can bring to it (a
// user where the group's lines have the empty value '-') still joins it.
TEST(WindowMergerTest, ABusyGroupStaysWithinTheBucketScan) {
  MergerOptions options;
  options.window_us = 3600 * kSec;
  options.variable_after_values = 0;
  Harness h(options);
  const std::string busy =
      "0 10.0.0.1 TCP_MEM_HIT/200 1724 GET http://www.example.test/app.js - HIER_NONE/- text/css";
  TimeUs t = kT0;
  for (int i = 0; i < 40; ++i) {
    h.Add(busy, ++t);
    // Another event of nine tokens, words only: each opens a group of its own.
    std::string other = "startup";
    for (int w = 0; w < 8; ++w) {
      other += ' ';
      other += static_cast<char>('a' + (8 * i + w) % 26);
      other += static_cast<char>('a' + (8 * i + w) / 26);
      other += "word";
    }
    h.Add(other, ++t);
  }
  ASSERT_EQ(h.merger.open_groups(), 41u);
  const std::uint64_t busy_id = h.sink.Take().front().group_id;
  h.Add(
      "0 10.0.0.1 TCP_MEM_HIT/200 1722 GET http://members.example.test/m.css alice HIER_NONE/- "
      "text/css",
      ++t);
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kBucket);
  EXPECT_EQ(h.merger.last_decision().group_id, busy_id);
  // The nearest line that must not join: another method.
  h.Add(
      "0 10.0.0.1 TCP_MEM_HIT/200 1722 DELETE http://members.example.test/m.css alice "
      "HIER_NONE/- text/css",
      ++t);
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kNew);
}

// A line whose masked shape and fingerprint are new to its event (another kind of value in a
// slot) reaches the event's group by its words in their places, however many groups of its
// token count opened after the event's: the bucket scan reads only the newest 16. Match still
// decides: the same words around a digit-bearing word of other letters stay apart.
TEST(WindowMergerTest, ALineReachesTheGroupWithItsWordsInTheSamePlaces) {
  MergerOptions options;
  options.window_us = 3600 * kSec;
  options.max_distance = 0;  // the SimHash index finds only the same fingerprint
  options.variable_after_values = 0;
  Harness h(options);
  TimeUs t = kT0;
  h.Add("probe event took 5 ms on en0", ++t);
  h.Add("probe event took 7 ms on en1", ++t);  // the group has taken a line: its words are keyed
  ASSERT_EQ(h.merger.open_groups(), 1u);
  const std::uint64_t probe_group = h.merger.last_decision().group_id;
  // 20 other events of seven tokens, each its own group (one plain word changed out of a
  // value context among four agreeing ones never fits).
  for (int k = 0; k < 20; ++k) {
    std::string word = "filler";
    word += static_cast<char>('a' + k);
    h.Add(word + " check passed after 5 ms today", ++t);
    h.Add(word + " check passed after 9 ms today", ++t);
  }
  ASSERT_EQ(h.merger.open_groups(), 21u);
  h.Add("probe event took 5.5 ms on en0", ++t);  // a float where the group has an integer
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kBucket);
  EXPECT_EQ(h.merger.last_decision().group_id, probe_group);
  EXPECT_EQ(h.merger.open_groups(), 21u);
  // Same words in the same places, but an interface of other letters: another event.
  h.Add("probe event took 5 ms on awdl0", ++t);
  EXPECT_EQ(h.merger.last_decision().path, MergeDecision::kNew);
  EXPECT_EQ(h.merger.open_groups(), 22u);
  h.FlushAll();
  ExpectConsistent(h.sink.Take(), h.added);
}

// An event split before its group generalised (one agreeing word does not carry a changed
// name, even in the place of a value by its kind) is one group again
// once the other group's position becomes a learned variable: the group whose first line the
// general template takes, with the same words in the same places, takes no more lines. A group
// whose first line that template does not take (another interface's letters) keeps its own.
TEST(WindowMergerTest, AGroupTheGeneralisedTemplateTakesRetires) {
  MergerOptions options;
  options.window_us = 3600 * kSec;
  options.annotate = true;  // every line's event names its group
  Harness h(options);
  TimeUs t = kT0;
  auto group_of = [&](const std::string& line) {
    h.Add(line, ++t);
    const std::vector<Rec> events = h.sink.Take();
    EXPECT_EQ(events.size(), 1u) << line;
    return events.empty() ? 0 : events.back().group_id;
  };
  const std::uint64_t general = group_of("forwarded svc.corp.example 127.0.0.2#55355");
  const std::uint64_t split = group_of("forwarded rnd13.example.com 127.0.0.1#55354");
  ASSERT_NE(split, general);
  ASSERT_EQ(group_of("forwarded rnd14.example.com 127.0.0.1#55354"), split);  // keys it
  // Its own event: en0 is no address.
  const std::uint64_t other = group_of("forwarded rnd15.example.com en0");
  ASSERT_NE(other, split);
  ASSERT_NE(other, general);
  // Seven names without a digit: the position becomes a learned variable of the first group.
  std::uint64_t last = 0;
  for (const char* name : {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"}) {
    last = group_of(std::string("forwarded ") + name + ".corp.example 127.0.0.2#55355");
  }
  EXPECT_EQ(last, general);
  EXPECT_EQ(group_of("forwarded rnd16.example.com 127.0.0.1#55354"), general);
  EXPECT_EQ(group_of("forwarded rnd17.example.com en0"), other);
}

// Lines of one long prefix and a unique last word (a plain word: no two fit each other) open a
// group each, and every group of the cluster lies within SimHash distance of the next line:
// the groups a line is confirmed against stay bounded however large the cluster grows.
TEST(WindowMergerTest, AClusterLineConfirmsABoundedNumberOfGroups) {
  MergerOptions options;
  options.window_us = 3600 * kSec;
  options.max_groups = 2000;  // groups out of the index (a crowd's) are evicted too
  // Learned variables off: they would fold this crowd after 6 values (sibling_variables_test
  // has that); the bound must hold for a crowd that does not fold.
  options.variable_after_values = 0;
  Harness h(options);
  auto line = [](std::uint32_t i) {
    std::string word;
    for (std::uint32_t v = i + 26 * 26 * 26; v != 0; v /= 26)
      word += static_cast<char>('a' + v % 26);
    return "session manager closed connection for remote peer because of " + word;
  };
  std::uint64_t most = 0;
  for (std::uint32_t i = 0; i < 3000; ++i) {
    h.Add(line(i), kT0 + static_cast<TimeUs>(i));
    most = std::max<std::uint64_t>(most, h.merger.last_decision().candidates);
  }
  EXPECT_EQ(h.merger.open_groups(), 2000u);
  // The exact shape, 32 SimHash candidates, the group of the line's words, 16 of the bucket
  // scan, one learned sibling.
  EXPECT_LE(most, 1u + 32u + 1u + 16u + 1u);
  EXPECT_GE(most, 32u);  // the cluster is dense: the SimHash bound is reached
  // Every open group, in the index or not, still takes its own lines.
  for (std::uint32_t i = 1000; i < 3000; i += 7) {
    h.Add(line(i), kT0 + 3000 + static_cast<TimeUs>(i));
    ASSERT_EQ(h.merger.last_decision().path, MergeDecision::kExact) << i;
  }
  EXPECT_EQ(h.merger.open_groups(), 2000u);
  h.FlushAll();
  ExpectConsistent(h.sink.Take(), h.added);
}

TEST(WindowMergerTest, ScopeHashFollowsTheScopeFields) {
  LogRecord a, b;
  a.hostname = "web01";
  a.app_name = "sshd";
  b = a;
  const std::vector<ScopeField> host_app = {ScopeField::kHost, ScopeField::kApp};
  EXPECT_EQ(ScopeHash(a, host_app), ScopeHash(b, host_app));
  b.hostname = "web02";
  EXPECT_NE(ScopeHash(a, host_app), ScopeHash(b, host_app));
  EXPECT_EQ(ScopeHash(a, {ScopeField::kApp}), ScopeHash(b, {ScopeField::kApp}));
  EXPECT_EQ(ScopeHash(a, {}), ScopeHash(b, {}));
  b = a;
  b.severity = 3;
  EXPECT_EQ(ScopeHash(a, host_app), ScopeHash(b, host_app));
  EXPECT_NE(ScopeHash(a, {ScopeField::kSeverity}), ScopeHash(b, {ScopeField::kSeverity}));
  // A field's value does not leak into another field's slot.
  LogRecord c, d;
  c.hostname = "x";
  d.app_name = "x";
  EXPECT_NE(ScopeHash(c, host_app), ScopeHash(d, host_app));
}

// --- annotate --------------------------------------------------------------------------------

TEST(WindowMergerTest, AnnotateEmitsExactlyOneEventPerLineInOrder) {
  MergerOptions o;
  o.annotate = true;
  o.window_us = 10 * kSec;
  o.max_hold_us = 20 * kSec;
  Harness h(o);
  std::vector<std::string> lines;
  for (int i = 0; i < 60; ++i) {
    if (i % 3 == 0) {
      lines.push_back("worker " + std::to_string(i) + " processed " + std::to_string(i * 3));
    } else if (i % 3 == 1) {
      lines.push_back("Accepted password for root from 10.0.0." + std::to_string(i));
    } else {
      lines.push_back("unique message number " + std::string(1, static_cast<char>('a' + i % 26)) +
                      "x" + std::string(1, static_cast<char>('a' + i / 26)));
    }
  }
  std::map<std::uint64_t, std::uint64_t> totals;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    h.Add(lines[i], kT0 + static_cast<TimeUs>(i) * kSec);
    const std::vector<Rec> ev = h.sink.Take();
    ASSERT_EQ(ev.size(), 1u) << "line " << i;
    EXPECT_EQ(ev[0].kind, EventKind::kAnnotate);
    EXPECT_EQ(ev[0].message, lines[i]);
    EXPECT_FALSE(ev[0].template_text.empty());
    EXPECT_EQ(ev[0].count_total, ++totals[ev[0].group_id]);
    const nlohmann::json j = nlohmann::json::parse(ev[0].json);
    EXPECT_EQ(j.at("cluster_id"), j.at("group_id"));
  }
  h.Flush(kT0 + 1000 * kSec);
  h.FlushAll();
  EXPECT_TRUE(h.sink.events.empty());
  const MergerStats& st = h.merger.stats();
  EXPECT_EQ(st.events_annotate, lines.size());
  EXPECT_EQ(st.events_first, 0u);
  EXPECT_EQ(st.events_summary, 0u);
  // Lines of one template share a group: fewer groups than lines.
  EXPECT_LT(totals.size(), lines.size());
  EXPECT_EQ(totals.size(), st.groups_opened);
}

// --- shutdown and reconfiguration ------------------------------------------------------------

TEST(WindowMergerTest, FlushAllClosesEverythingWithReasonShutdown) {
  Harness h;
  h.Add("job 1 done", kT0);
  h.Add("job 2 done", kT0 + 1);
  h.Add("disk quota exceeded on volume 3", kT0 + 2);
  h.Add("disk quota exceeded on volume 4", kT0 + 3);
  h.Add("disk quota exceeded on volume 5", kT0 + 4);
  h.Add("a line that stays alone", kT0 + 5);
  h.sink.Take();
  h.FlushAll();
  EXPECT_EQ(h.merger.open_groups(), 0u);
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 2u);  // the lone line has nothing to report
  for (const Rec& e : ev) {
    EXPECT_EQ(e.kind, EventKind::kSummary);
    EXPECT_EQ(e.reason, SummaryReason::kShutdown);
    EXPECT_TRUE(e.closed);
  }
  EXPECT_EQ(ev[0].count + ev[1].count, 3u);
  EXPECT_EQ(h.merger.stats().groups_closed, 3u);
  h.FlushAll();  // idempotent
  EXPECT_TRUE(h.sink.events.empty());
}

// FlushAll empties the SimHash index at once, after every group closed: the next lines must
// find nothing of the closed groups there and be settled as by a new merger, through every
// path (a scope of a few thousand groups has its index in tables, not a scanned array).
TEST(WindowMergerTest, AfterFlushAllLinesAreSettledAsByANewMerger) {
  const std::vector<std::string> vocabulary = {"alpha", "bravo", "delta", "echo",  "golf",
                                               "hotel", "india", "kilo",  "lima",  "mike",
                                               "oscar", "papa",  "romeo", "sierra"};
  std::vector<std::string> lines;
  std::mt19937 rng(11);
  // Users of their own: a word written after `user` is learned as a value wherever the scope
  // writes it, and words that were both would let a line fit several open groups.
  const std::vector<std::string> users = {"ann", "ben", "cid", "dora", "eve", "finn"};
  const auto word = [&] { return vocabulary[rng() % vocabulary.size()]; };
  for (int i = 0; i < 3000; ++i) {
    std::string words;
    for (int w = 0; w < 4; ++w) words += " " + word();
    lines.push_back("worker" + words + " took " + std::to_string(rng() % 1000) + " ms for user " +
                    users[rng() % users.size()]);
  }
  const auto decisions = [&](Harness& h) {
    std::vector<int> paths;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      h.Add(lines[i], kT0 + static_cast<TimeUs>(i));
      paths.push_back(h.merger.last_decision().path);
    }
    return paths;
  };
  Harness fresh, flushed;
  const std::vector<int> want = decisions(fresh);
  decisions(flushed);
  ASSERT_GT(flushed.merger.open_groups(), 1000u);
  flushed.FlushAll();
  EXPECT_EQ(flushed.merger.open_groups(), 0u);
  EXPECT_EQ(decisions(flushed), want);
  EXPECT_EQ(flushed.merger.open_groups(), fresh.merger.open_groups());
  EXPECT_TRUE(std::count(want.begin(), want.end(), MergeDecision::kIndex) > 0);
}

TEST(WindowMergerTest, ReconfigureWindowOnlyKeepsOpenGroups) {
  MergerOptions o;
  o.window_us = 10 * kSec;
  o.max_hold_us = 60 * kSec;
  Harness h(o);
  h.Add("job 1 done", kT0);
  h.Add("job 2 done", kT0 + kSec);
  const std::uint64_t id = h.sink.Take()[0].group_id;
  MergerOptions changed = o;
  changed.window_us = 30 * kSec;
  changed.max_hold_us = 90 * kSec;
  h.merger.Reconfigure(changed, h.sink);
  EXPECT_TRUE(h.sink.events.empty());
  EXPECT_EQ(h.merger.open_groups(), 1u);
  EXPECT_EQ(h.merger.options().window_us, 30 * kSec);
  // 20 s later: past the old window, within the new one, so the line still joins.
  h.Add("job 3 done", kT0 + 21 * kSec);
  EXPECT_TRUE(h.sink.events.empty());
  EXPECT_EQ(h.merger.NextDeadline(), kT0 + 51 * kSec);
  h.Flush(kT0 + 51 * kSec);
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].group_id, id);
  EXPECT_EQ(ev[0].count_total, 3u);
}

TEST(WindowMergerTest, ReconfigureShorterWindowClosesWhatIsNowDue) {
  MergerOptions o;
  o.window_us = 60 * kSec;
  o.max_hold_us = 60 * kSec;
  Harness h(o);
  h.Add("job 1 done", kT0);
  h.Add("job 2 done", kT0 + kSec);
  h.Add("zzz other", kT0 + 20 * kSec);
  h.sink.Take();
  MergerOptions changed = o;
  changed.window_us = 10 * kSec;
  h.merger.Reconfigure(changed, h.sink);
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].reason, SummaryReason::kIdle);
  EXPECT_EQ(ev[0].count_total, 2u);
  EXPECT_EQ(h.merger.open_groups(), 1u);  // "zzz other" arrived at the latest time seen
}

TEST(WindowMergerTest, ReconfigureScopeFlushesOpenGroups) {
  Harness h;
  h.Add("job 1 done", kT0);
  h.Add("job 2 done", kT0 + 1);
  h.Add("lonely line", kT0 + 2);
  const std::uint64_t id = h.sink.Take()[0].group_id;
  MergerOptions changed;
  changed.scope = {ScopeField::kApp};
  h.merger.Reconfigure(changed, h.sink);
  EXPECT_EQ(h.merger.open_groups(), 0u);
  std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].reason, SummaryReason::kShutdown);
  EXPECT_EQ(ev[0].group_id, id);
  EXPECT_EQ(ev[0].count, 1u);
  // The next line opens a new group under the new scope, with a fresh id.
  h.Add("job 3 done", kT0 + 3);
  ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::kFirst);
  EXPECT_NE(ev[0].group_id, id);
}

TEST(WindowMergerTest, ReconfigureLowerMaxGroupsEvicts) {
  Harness h;
  h.Add("disk quota exceeded on volume 3", kT0);
  h.Add("fan speed changed to 1200 rpm now", kT0 + 1);
  h.Add("fan speed changed to 1300 rpm now", kT0 + 2);
  h.Add("certificate for www will expire in 12 days", kT0 + 3);
  h.sink.Take();
  MergerOptions changed;
  changed.max_groups = 1;
  h.merger.Reconfigure(changed, h.sink);
  EXPECT_EQ(h.merger.open_groups(), 1u);
  EXPECT_EQ(h.merger.stats().groups_evicted, 2u);
  const std::vector<Rec> ev = h.sink.Take();
  ASSERT_EQ(ev.size(), 1u);  // only the fan group had lines to report
  EXPECT_EQ(ev[0].reason, SummaryReason::kEvicted);
}

TEST(WindowMergerTest, GroupIdsDependOnTheSeed) {
  MergerOptions a, b;
  a.id_seed = 1;
  b.id_seed = 2;
  Harness ha(a), hb(b);
  ha.Add("job 1 done", kT0);
  hb.Add("job 1 done", kT0);
  EXPECT_NE(ha.sink.events.at(0).group_id, hb.sink.events.at(0).group_id);
  EXPECT_EQ(ha.sink.events.at(0).fingerprint, hb.sink.events.at(0).fingerprint);
}

// --- hostile input ---------------------------------------------------------------------------

TEST(WindowMergerTest, HostileLinesAreProcessedAndAccounted) {
  std::string big;
  big.reserve(1 << 20);
  for (int i = 0; big.size() < (1u << 20); ++i) big += "word" + std::to_string(i % 97) + " x ";
  big.resize(1 << 20);
  std::string big_variant = big;
  big_variant[3] = '9';  // a different number at the front
  const std::vector<std::string> lines = {
      "",
      "",
      std::string("\0\0\0", 3),
      std::string("abc\0def 12", 10),
      std::string("abc\0def 13", 10),
      "bad \xff\xfe utf8 \xc3",
      "bad \xff\xfe utf8 \xc3",
      "\"quoted\\ \x01\x1b control",
      big,
      big_variant,
      std::string(1 << 20, 'a'),
      std::string(1 << 20, ' '),
  };
  for (const bool annotate : {false, true}) {
    MergerOptions o;
    o.annotate = annotate;
    Harness h(o);
    TimeUs t = kT0;
    for (const std::string& line : lines) h.Add(line, t += kSec, std::string("h\xff\0", 3));
    h.FlushAll();
    const std::vector<Rec> ev = h.sink.Take();
    for (const Rec& e : ev) {
      EXPECT_TRUE(nlohmann::json::accept(e.json)) << e.json.substr(0, 200);
    }
    if (annotate) {
      EXPECT_EQ(ev.size(), lines.size());
    } else {
      ExpectConsistent(ev, lines.size());
    }
    EXPECT_EQ(h.merger.stats().lines, lines.size());
    EXPECT_EQ(h.merger.open_groups(), 0u);
  }
}

TEST(WindowMergerTest, MemoryUsageGrowsWithOpenGroups) {
  Harness h;
  const std::size_t empty = h.merger.MemoryUsage();
  for (int i = 0; i < 200; ++i) {
    std::string msg = "message kind";
    for (int k = i; k > 0; k /= 26) msg += " " + std::string(1, static_cast<char>('a' + k % 26));
    h.Add(msg + " tail" + std::string(static_cast<std::size_t>(i % 7), 'z'), kT0 + i);
  }
  EXPECT_GT(h.merger.open_groups(), 100u);
  EXPECT_GT(h.merger.MemoryUsage(), empty + h.merger.open_groups() * 100);
}

}  // namespace
}  // namespace logfold

namespace logfold {
namespace {

// Whole lines as a file-tailing forwarder sends them: the application's own timestamp and
// thread (with spaces) differ, the message is one template, so the lines fold, the template
// holds the message only, and events carry the level and logger. Off, the thread splits them.
TEST(WindowMergerTest, TheApplicationsOwnHeaderStaysOutOfTheGroup) {
  const std::string_view a =
      "2015-10-18 18:05:27,570 WARN [LeaseRenewer:msrabi@msra-sa-41:9000] "
      "org.apache.hadoop.ipc.Client: Address change detected. Old: msra-sa-41/10.190.173.170:9000";
  const std::string_view b =
      "2015-10-18 18:06:02,841 WARN [RMCommunicator Allocator] org.apache.hadoop.ipc.Client: "
      "Address change detected. Old: msra-sa-41/10.190.173.170:8030";
  Harness h;
  h.Add(a, kT0);
  h.Add(b, kT0 + kSec);
  EXPECT_EQ(h.merger.open_groups(), 1u);
  h.FlushAll();
  const std::vector<Rec> events = h.sink.Take();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].template_text, "Address change detected. Old: <*>");
  EXPECT_NE(events[0].json.find("\"level\":\"WARN\",\"logger\":\"org.apache.hadoop.ipc.Client\""),
            std::string::npos)
      << events[0].json;
  EXPECT_NE(events[1].json.find("\"level\":\"WARN\""), std::string::npos) << events[1].json;

  MergerOptions off;
  off.infer_header = false;
  Harness h2(off);
  h2.Add(a, kT0);
  h2.Add(b, kT0 + kSec);
  EXPECT_EQ(h2.merger.open_groups(), 2u);
  EXPECT_EQ(h2.sink.Take()[0].json.find("\"level\""), std::string::npos);
}

// Chromium's VLOG header ("VERBOSE1" and the caller in one bracket) stays out of the group as
// other levels' do: the same statement folds across pids and times, and two function names
// written as whole messages stay apart as their bare messages do.
TEST(WindowMergerTest, AVerboseLevelsHeaderStaysOutOfTheGroup) {
  const auto chromium = [](std::string_view pid, std::string_view time, std::string_view where,
                           std::string_view message) {
    return "[" + std::string(pid) + ":" + std::string(pid) + ":1128/" + std::string(time) +
           ":VERBOSE1:components/signin/" + std::string(where) + "] " + std::string(message);
  };
  EXPECT_EQ(
      GroupsFor(
          {chromium("6113", "024738.308296", "delegate.cc:355", "MutablePO2TS::MutablePO2TS"),
           chromium("6264", "024739.422714", "delegate.cc:355", "MutablePO2TS::MutablePO2TS")}),
      1u);
  EXPECT_EQ(
      GroupsFor(
          {chromium("6113", "024738.308296", "delegate.cc:355", "MutablePO2TS::MutablePO2TS"),
           chromium("6113", "024739.053196", "delegate.cc:370", "MutablePO2TS::~MutablePO2TS"),
           chromium("6113", "024739.057531", "account_reconcilor.cc:151",
                    "AccountReconcilor::~AccountReconcilor")}),
      3u);
}

// An access log's host, identity and user are its header: a request by "alice" folds with the
// same request by nobody ("-"); another status stays apart.
TEST(WindowMergerTest, AnAccessLogsUserStaysOutOfTheGroup) {
  const auto access = [](std::string_view user, std::string_view status) {
    return "127.0.0.1 - " + std::string(user) +
           " [28/Nov/2026:00:29:11 +0000] \"GET /secret/s.txt HTTP/1.1\" " + std::string(status) +
           " 232 \"-\" \"curl/7.88.1\"";
  };
  EXPECT_EQ(GroupsFor({access("-", "200"), access("alice", "200"), access("mallory5", "200")}), 1u);
  EXPECT_EQ(GroupsFor({access("alice", "200"), access("alice", "401")}), 2u);
}

// A message written as a quoted value (Go's log/slog: msg="...", its quotes escaped) pairs its
// escaped quotes as a bare message pairs its quotes: user agents and request targets of any
// number of words fold; another status or method stays apart.
TEST(WindowMergerTest, EscapedQuotesOfAQuotedMessagePair) {
  const auto slog = [](std::string_view request, std::string_view status, std::string_view agent) {
    return "time=2026-11-28T00:13:49.012Z level=INFO msg=\"\\\"" + std::string(request) +
           " HTTP/1.1\\\" " + std::string(status) + " 7 \\\"-\\\" \\\"" + std::string(agent) +
           "\\\"\"";
  };
  EXPECT_EQ(GroupsFor({slog("GET /a.html", "200", "Wget/1.21.3"),
                       slog("GET /b.html?ref=mail&id=4", "200",
                            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36")}),
            1u);
  EXPECT_EQ(GroupsFor({slog("GET /a.html", "200", "Wget/1.21.3"),
                       slog("GET /a.html", "404", "Wget/1.21.3")}),
            2u);
  EXPECT_EQ(GroupsFor({slog("GET /a.html", "200", "Wget/1.21.3"),
                       slog("DELETE /a.html", "200", "Wget/1.21.3")}),
            2u);
}

// The header's words do not count as agreeing words: two messages that differ in two state
// words stay apart even under a long shared header.
TEST(WindowMergerTest, HeaderWordsAreNotAgreeingWords) {
  Harness h;
  h.Add(
      "2015-10-18 18:01:53,885 INFO [AsyncDispatcher event handler] "
      "org.apache.hadoop.mapreduce.v2.app.job.impl.TaskAttemptImpl: attempt_1_0 TaskAttempt "
      "Transitioned from NEW to UNASSIGNED",
      kT0);
  h.Add(
      "2015-10-18 18:01:57,260 INFO [AsyncDispatcher event handler] "
      "org.apache.hadoop.mapreduce.v2.app.job.impl.TaskAttemptImpl: attempt_1_0 TaskAttempt "
      "Transitioned from UNASSIGNED to ASSIGNED",
      kT0 + kSec);
  EXPECT_EQ(h.merger.open_groups(), 2u);
}

}  // namespace
}  // namespace logfold

namespace logfold {
namespace {

// A list of values of one kind is one slot, however many values it holds.
TEST(WindowMergerTest, AVariableLengthListIsOneSlot) {
  EXPECT_EQ(GroupsFor({"en0: Supported channels 1 2 3 4 5 6 7 8 9 10 11 12 13 36 40 44 48",
                       "en0: Supported channels 1 2 3 4 5 6 7 8 9 10 11 12 13 36 40 44 48 52 56 "
                       "60 64 100 104 108 112 116 120 124 128 132 136 140 144 149 153 157 161"}),
            1u);
  EXPECT_EQ(GroupsFor({"Nodes joined the ring: node-1, node-2, node-3",
                       "Nodes joined the ring: node-4, node-5, node-6, node-7, node-8, node-9, "
                       "node-10, node-11, node-12"}),
            1u);
  // Values of different kinds are not one list, and names with other letters still differ.
  EXPECT_EQ(GroupsFor({"link en0 up", "link awdl0 up"}), 2u);
}

// A double-quoted text is one slot whatever its number of words: access-log lines with user
// agents, referers and request targets of any length and depth fold into one group; another
// method or another status does not join it.
TEST(WindowMergerTest, AQuotedTextOfAnyLengthIsOneSlot) {
  const std::vector<std::string> gets = {
      "\"GET /static/page2.html HTTP/1.1\" 200 7 \"-\" \"Wget/1.21.3\"",
      "\"GET / HTTP/1.1\" 200 6 \"http://example.com/from/1\" \"python-requests/2.28.1\"",
      "\"GET /static/page5.html?ref=mail&id=4 HTTP/1.1\" 200 7 \"-\" \"Mozilla/5.0 (X11; Linux "
      "x86_64; rv:109.0) Gecko/20100101 Firefox/115.0\"",
      "\"GET /docs/ HTTP/1.1\" 200 153 \"-\" \"-\"",
      "\"GET /api/v1/users/2 HTTP/1.1\" 200 8 \"http://example.com/a?b=c&d=e\" \"Mozilla/5.0 "
      "(Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0\""};
  EXPECT_EQ(GroupsFor(gets), 1u);
  std::vector<std::string> mixed = gets;
  mixed.push_back("\"DELETE /static/page2.html HTTP/1.1\" 200 7 \"-\" \"Wget/1.21.3\"");
  mixed.push_back("\"GET /static/page2.html HTTP/1.1\" 500 7 \"-\" \"Wget/1.21.3\"");
  EXPECT_EQ(GroupsFor(mixed), 3u);
}

// A return or reason code is an enumeration's value: acknowledgements that differ in their
// message id and client fold, one with another reason code (a refusal among successes) does
// not; the same for a tuple of one-digit codes.
TEST(WindowMergerTest, AnotherReturnCodeIsAnotherEvent) {
  EXPECT_EQ(
      GroupsFor({"Sending PUBACK to sensor-1 (m1, rc0)", "Sending PUBACK to bob-cli-4 (m17, rc0)",
                 "Sending PUBACK to dash-2 (m5, rc0)"}),
      1u);
  EXPECT_EQ(
      GroupsFor({"Sending PUBACK to sensor-1 (m1, rc0)", "Sending PUBACK to bob-cli-4 (m17, rc0)",
                 "Sending PUBACK to dash-2 (m5, rc135)"}),
      2u);
  EXPECT_EQ(GroupsFor({"Sending CONNACK to sensor-1 (0, 0)", "Sending CONNACK to dash-bob (0, 0)"}),
            1u);
  EXPECT_EQ(GroupsFor({"Sending CONNACK to sensor-1 (0, 0)", "Sending CONNACK to dash-bob (0, 5)"}),
            2u);
}
}  // namespace
}  // namespace logfold

namespace logfold {
namespace {

// Folding hides nothing: the summary says how many lines had each value of a variable slot
// (how many 500s among the 200s), and roughly how many distinct values a busy slot took.
TEST(WindowMergerTest, SummariesCarrySlotStatistics) {
  Harness h;
  for (int i = 1; i <= 30; ++i) {
    const int status = i % 10 == 0 ? 500 : 200;
    h.Add("10.0.0." + std::to_string(i) + " GET /index.html status " + std::to_string(status),
          kT0 + i);
  }
  h.FlushAll();
  const std::vector<Rec> events = h.sink.Take();
  ASSERT_EQ(events.size(), 2u);
  const std::string& json = events[1].json;
  EXPECT_NE(json.find("{\"token\":4,\"distinct\":2,\"lines\":30,\"top\":[{\"value\":\"200\","
                      "\"count\":27},{\"value\":\"500\",\"count\":3}]}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"token\":0,\"distinct\":"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"token\":1,"), std::string::npos) << json;  // GET never varied
  EXPECT_EQ(json.find("\"peer\""), std::string::npos) << json;      // no line opened with one
}

// A peer's endpoint opening a message is context, out of the template (SkipPeerEndpoint), so
// lines from many peers fold into one group; its summary still says which peers, how often.
TEST(WindowMergerTest, SummariesCarryThePeerEndpointsKeptOutOfTheTemplate) {
  Harness h;
  const std::string msg = "MULTI: multi_create_instance called";
  // The group's first line has an endpoint: it is counted when the group takes a line.
  for (const char* peer : {"alice/10.0.0.1:50001 ", "alice/10.0.0.1:50001 ", "",
                           "bob/10.0.0.2:50002 ", "alice/10.0.0.1:50001 ", "10.0.0.3:50003 "}) {
    h.Add(peer + msg, kT0 + static_cast<TimeUs>(h.added));
  }
  // Another group's first line has none: only its lines with one are counted.
  for (const char* peer : {"", "", "carol/10.0.0.4:50004 ", "carol/10.0.0.4:50004 ", ""}) {
    h.Add(std::string(peer) + "Connection reset, restarting", kT0 + static_cast<TimeUs>(h.added));
  }
  h.FlushAll();
  const std::vector<Rec> events = h.sink.Take();
  ExpectConsistent(events, h.added);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2].template_text, msg);
  EXPECT_EQ(events[2].count_total, 6u);
  EXPECT_NE(events[2].json.find("\"peer\":{\"distinct\":3,\"lines\":5,\"top\":["
                                "{\"value\":\"alice/10.0.0.1:50001\",\"count\":3},"
                                "{\"value\":\"bob/10.0.0.2:50002\",\"count\":1},"
                                "{\"value\":\"10.0.0.3:50003\",\"count\":1}]}"),
            std::string::npos)
      << events[2].json;
  EXPECT_EQ(events[3].template_text, "Connection reset, restarting");
  EXPECT_NE(events[3].json.find("\"peer\":{\"distinct\":1,\"lines\":2,\"top\":["
                                "{\"value\":\"carol/10.0.0.4:50004\",\"count\":2}]}"),
            std::string::npos)
      << events[3].json;
}

}  // namespace
}  // namespace logfold
