// Crash-state tests: open groups survive a checkpoint round trip (WindowMerger export, the
// file format, import) with the same events as an uninterrupted engine; changed grouping
// settings summarise restored groups at once; the journal reads back what was appended;
// corrupt and partial files are set aside without failing the start; the writer thread
// commits what workers offer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/runtime/metrics.h"
#include "daemon/state/checkpoint_file.h"
#include "daemon/state/journal_file.h"
#include "daemon/state/state_store.h"
#include "pipeline/event.h"
#include "pipeline/window_merger.h"

namespace logfold {
namespace {

namespace fs = std::filesystem;
constexpr TimeUs kSec = 1'000'000;
constexpr TimeUs kT0 = 1'709'251'200 * kSec;

struct Summary {
  SummaryReason reason;
  std::uint64_t count, count_total;
  std::string template_text, last_message;
  std::vector<std::string> hosts;
  std::string level, logger;        // of the message's own header
  std::vector<std::string> slots;   // per-slot statistics, one string each
  std::string peer;                 // the peer endpoints' statistics, as one string
  std::string first_tag, last_tag;  // of the samples
  LineOrigin origin;                // of its first line (its event_id)
  bool operator==(const Summary&) const = default;
};

class Collect : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    if (e.kind == EventKind::kFirst) {
      firsts.push_back(e.group_id);
      return;
    }
    auto describe = [](const SlotSummary& st) {
      std::string s = std::to_string(st.token) + " distinct " + std::to_string(st.distinct) +
                      " lines " + std::to_string(st.lines) + ":";
      for (const SlotValueCount& v : st.top)
        s += " " + std::string(v.value) + "=" + std::to_string(v.count);
      return s;
    };
    std::vector<std::string> slots;
    for (const SlotSummary& st : e.slots) slots.push_back(describe(st));
    summaries[e.group_id].push_back({e.reason, e.count, e.count_total, std::string(e.template_text),
                                     e.last_record != nullptr ? e.last_record->message : "",
                                     std::vector<std::string>(e.hosts.begin(), e.hosts.end()),
                                     std::string(e.level), std::string(e.logger), std::move(slots),
                                     e.peer != nullptr ? describe(*e.peer) : "",
                                     e.record != nullptr ? e.record->tag : "",
                                     e.last_record != nullptr ? e.last_record->tag : "", e.origin});
  }
  std::vector<std::uint64_t> firsts;
  std::map<std::uint64_t, std::vector<Summary>> summaries;
};

LogRecord Line(const std::string& host, const std::string& message, TimeUs t) {
  LogRecord r;
  r.hostname = host;
  r.app_name = "app";
  r.message = message;
  r.arrival_us = t;
  r.has_timestamp = true;
  r.timestamp_us = t - kSec;
  r.facility = 3;
  r.severity = 6;
  return r;
}

std::vector<LogRecord> Traffic(int n, TimeUs start) {
  std::vector<LogRecord> lines;
  for (int i = 0; i < n; ++i) {
    const std::string host = "web" + std::to_string(i % 3);
    const TimeUs t = start + i * 10'000;
    // As a Kafka input gives them: one stream, positions in arrival order.
    const LineOrigin origin{0x5eed, (start - kT0) / 10'000 + i};
    if (i % 2 == 0) {
      lines.push_back(
          Line(host,
               "request " + std::to_string(i) + " took " + std::to_string(i * 7 % 100) + " ms", t));
      lines.back().tag = "app/web";  // an RFC 3164 tag longer than its program name
    } else if (i % 5 == 1) {
      // A message with the application's own header (timestamp, level, thread, logger).
      lines.push_back(Line(host,
                           "2024-03-01 10:00:" + std::to_string(10 + i % 50) + ",123 INFO [main] " +
                               "org.example.Jobs: job " + std::to_string(i % 7) + " finished",
                           t));
    } else {
      lines.push_back(Line(host, "session opened for user u" + std::to_string(i), t));
    }
    lines.back().origin = origin;
  }
  return lines;
}

std::string Save(WindowMerger& m, CheckpointHeader h) {
  std::string bytes;
  CheckpointWriter w;
  w.Begin(h, bytes);
  m.ExportGroups([&](const GroupState& g) { w.AddGroup(g); });
  w.Finish();
  return bytes;
}

MergerOptions Options() {
  MergerOptions o;
  o.window_us = 5 * kSec;
  o.max_hold_us = 60 * kSec;
  o.scope = {ScopeField::kApp};  // hosts are listed in summaries, so they are saved too
  return o;
}

// Two engines fed the same lines: `reference` runs on uninterrupted, `crashed` is
// checkpointed and restored into another engine that writes to `out` too.
struct CrashScenario {
  explicit CrashScenario(const std::vector<LogRecord>& before) {
    for (const auto& r : before) {
      reference.Add(r, r.arrival_us, ref);
      crashed.Add(r, r.arrival_us, out);
    }
  }
  WindowMerger reference{Options()}, crashed{Options()};
  Collect ref, out;
};

TEST(StateTest, RestoredGroupsGoOnFoldingExactlyAsWithoutTheCrash) {
  const auto before = Traffic(300, kT0), after = Traffic(200, kT0 + 3 * kSec);
  CrashScenario run(before);
  WindowMerger &reference = run.reference, &crashed = run.crashed;
  Collect &ref = run.ref, &out = run.out;
  CheckpointHeader h;
  h.id_counter = crashed.id_counter();
  const std::string bytes = Save(crashed, h);
  ASSERT_GT(crashed.open_groups(), 0u);

  Checkpoint c;
  ASSERT_EQ(ParseCheckpoint(bytes, c), "");
  EXPECT_EQ(c.groups.size(), crashed.open_groups());
  WindowMerger restored(Options());
  restored.RestoreIdCounter(c.header.id_counter);
  for (const SavedGroup& g : c.groups) restored.ImportGroup(g.View(), true, out);
  EXPECT_EQ(restored.open_groups(), crashed.open_groups());

  for (const auto& r : after) {
    reference.Add(r, r.arrival_us, ref);
    restored.Add(r, r.arrival_us, out);
  }
  reference.FlushAll(ref);
  restored.FlushAll(out);
  // The restored engine joins the same groups (same ids, no new `first`) and summarises them
  // with the same counts, templates, samples, hosts and first-line origins (event ids).
  EXPECT_EQ(out.firsts, ref.firsts);
  EXPECT_EQ(out.summaries, ref.summaries);
  // The comparison covers what groups hold besides counts: slot statistics and the header.
  bool any_slots = false, any_level = false, any_tag = false;
  for (const auto& [id, list] : ref.summaries) {
    for (const Summary& s : list) {
      any_slots = any_slots || !s.slots.empty();
      any_level = any_level || !s.level.empty();
      any_tag = any_tag || (s.first_tag == "app/web" && s.last_tag == "app/web");
    }
  }
  EXPECT_TRUE(any_slots);
  EXPECT_TRUE(any_level);
  EXPECT_TRUE(any_tag);
  for (const auto& [id, list] : out.summaries) {
    for (const Summary& s : list) EXPECT_EQ(s.origin.stream, 0x5eedu);
  }
}

// A peer's endpoint opening a message is kept out of the template; the group counts its values
// (Event::peer), and a restored group goes on counting them, its first line's included when the
// checkpoint came before the group took a second line.
TEST(StateTest, RestoredGroupsKeepTheirPeerStatistics) {
  const std::string create = "MULTI: multi_create_instance called", reset = "Connection reset";
  TimeUs t = kT0;
  const std::vector<LogRecord> before = {Line("vpn", "alice/10.0.0.1:50001 " + create, t += 10'000),
                                         Line("vpn", "alice/10.0.0.1:50001 " + create, t += 10'000),
                                         Line("vpn", "bob/10.0.0.2:50002 " + create, t += 10'000),
                                         Line("vpn", "dave/10.0.0.5:50005 " + reset, t += 10'000)};
  const std::vector<LogRecord> after = {Line("vpn", "carol/10.0.0.4:50004 " + create, t += 10'000),
                                        Line("vpn", reset, t += 10'000),
                                        Line("vpn", "erin/10.0.0.6:50006 " + reset, t += 10'000)};
  CrashScenario run(before);
  CheckpointHeader h;
  h.id_counter = run.crashed.id_counter();
  Checkpoint c;
  ASSERT_EQ(ParseCheckpoint(Save(run.crashed, h), c), "");
  ASSERT_EQ(c.groups.size(), 2u);
  WindowMerger restored(Options());
  restored.RestoreIdCounter(c.header.id_counter);
  for (const SavedGroup& g : c.groups) restored.ImportGroup(g.View(), true, run.out);
  for (const auto& r : after) {
    run.reference.Add(r, r.arrival_us, run.ref);
    restored.Add(r, r.arrival_us, run.out);
  }
  run.reference.FlushAll(run.ref);
  restored.FlushAll(run.out);
  EXPECT_EQ(run.out.firsts, run.ref.firsts);
  EXPECT_EQ(run.out.summaries, run.ref.summaries);
  std::vector<std::string> peers;
  for (const auto& [id, list] : run.out.summaries) {
    for (const Summary& s : list) peers.push_back(s.template_text + " | " + s.peer);
  }
  std::sort(peers.begin(), peers.end());
  EXPECT_EQ(peers,
            (std::vector<std::string>{
                reset + " | 0 distinct 2 lines 2: dave/10.0.0.5:50005=1 erin/10.0.0.6:50006=1",
                create + " | 0 distinct 3 lines 4: alice/10.0.0.1:50001=2 "
                         "bob/10.0.0.2:50002=1 carol/10.0.0.4:50004=1"}));
}

// Lines of one event whose only difference is a word the stream shows taking many values
// (the engine learns the position is a free argument), then words it learns as a key's value.
std::vector<LogRecord> LearningTraffic(const std::vector<std::string>& names, TimeUs start) {
  std::vector<LogRecord> lines;
  TimeUs t = start;
  for (const std::string& name : names) {
    lines.push_back(Line("web1", "removing " + name, t += 10'000));
    lines.push_back(Line("web1", "login accepted for user " + name, t += 10'000));
    lines.push_back(Line("web1", "stopping " + name + " now", t += 10'000));
  }
  return lines;
}

// The siblings' fields a merger reads (not their recency stamps).
std::vector<std::string> Describe(const LearnedEvidence& e) {
  std::vector<std::string> out;
  for (const SiblingTable::Entry& s : e.siblings) {
    std::string d = std::to_string(s.key) + " " + std::to_string(s.anchor_value) + " " +
                    std::to_string(s.sightings) + " " + std::to_string(s.variable);
    for (std::size_t k = 0; k < s.distinct; ++k) d += " " + std::to_string(s.values[k]);
    out.push_back(std::move(d));
  }
  for (std::uint64_t w : e.value_words) out.push_back("word " + std::to_string(w));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(StateTest, RestoredMergerKeepsWhatItLearnedFromTheStream) {
  const auto before = LearningTraffic({"chargen", "echo", "discard", "daytime", "finger", "gopher",
                                       "ident", "netstat", "systat", "whois"},
                                      kT0);
  // After the groups' window: the new names open groups, and fold into them only by what was
  // learned (the positions' many values), which a fresh merger learns again from six names.
  const auto after = LearningTraffic({"telnet", "rlogin", "tftp", "uucp"}, kT0 + 20 * kSec);
  CrashScenario run(before);
  WindowMerger &reference = run.reference, &crashed = run.crashed;
  Collect &ref = run.ref, &out = run.out;
  std::string bytes;
  CheckpointWriter w;
  CheckpointHeader h;
  h.id_counter = crashed.id_counter();
  w.Begin(h, bytes);
  crashed.ExportGroups([&](const GroupState& g) { w.AddGroup(g); });
  LearnedEvidence learned;
  crashed.ExportLearned(learned);
  ASSERT_FALSE(learned.siblings.empty());
  ASSERT_FALSE(learned.value_words.empty());
  w.AddLearned(learned);
  w.Finish();

  Checkpoint c;
  ASSERT_EQ(ParseCheckpoint(bytes, c), "");
  EXPECT_EQ(Describe(c.learned), Describe(learned));
  EXPECT_EQ(c.learned.variable_after_values, Options().variable_after_values);
  WindowMerger restored(Options()), forgetful(Options());
  Collect forgetful_out = out;
  restored.RestoreIdCounter(c.header.id_counter);
  forgetful.RestoreIdCounter(c.header.id_counter);
  restored.ImportLearned(c.learned);
  for (const SavedGroup& g : c.groups) {
    restored.ImportGroup(g.View(), true, out);
    forgetful.ImportGroup(g.View(), true, forgetful_out);
  }
  LearnedEvidence again;
  restored.ExportLearned(again);
  EXPECT_EQ(Describe(again), Describe(learned));

  for (const auto& r : after) {
    reference.Add(r, r.arrival_us, ref);
    restored.Add(r, r.arrival_us, out);
    forgetful.Add(r, r.arrival_us, forgetful_out);
  }
  reference.FlushAll(ref);
  restored.FlushAll(out);
  forgetful.FlushAll(forgetful_out);
  EXPECT_EQ(out.firsts, ref.firsts);
  EXPECT_EQ(out.summaries, ref.summaries);
  // Without the evidence the new names open groups the uninterrupted engine folds.
  EXPECT_GT(forgetful_out.firsts.size(), ref.firsts.size());
  // Evidence learned under another threshold is not taken.
  MergerOptions other = Options();
  other.variable_after_values = 3;
  WindowMerger stricter(other);
  stricter.ImportLearned(c.learned);
  LearnedEvidence none;
  stricter.ExportLearned(none);
  EXPECT_TRUE(none.siblings.empty());
  EXPECT_TRUE(none.value_words.empty());
}

TEST(StateTest, ChangedGroupingSettingsSummariseRestoredGroupsAtOnce) {
  WindowMerger m(Options());
  Collect out;
  std::uint64_t lines = 0;
  for (const auto& r : Traffic(100, kT0)) m.Add(r, r.arrival_us, out), ++lines;
  Checkpoint c;
  ASSERT_EQ(ParseCheckpoint(Save(m, {}), c), "");
  Collect restored_out;
  WindowMerger restored(Options());
  for (const SavedGroup& g : c.groups) restored.ImportGroup(g.View(), false, restored_out);
  EXPECT_EQ(restored.open_groups(), 0u);
  std::uint64_t counted = out.firsts.size();
  for (const auto& [id, list] : restored_out.summaries) {
    for (const Summary& s : list) {
      EXPECT_EQ(s.reason, SummaryReason::kRecovered);
      counted += s.count;
    }
  }
  EXPECT_EQ(counted, lines);  // every line in exactly one first or recovered summary
}

TEST(StateTest, CorruptAndTruncatedCheckpointsAreRefusedWithAReason) {
  WindowMerger m(Options());
  Collect out;
  for (const auto& r : Traffic(50, kT0)) m.Add(r, r.arrival_us, out);
  const std::string good = Save(m, {});
  Checkpoint c;
  ASSERT_EQ(ParseCheckpoint(good, c), "");
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x20;
  EXPECT_EQ(ParseCheckpoint(flipped, c), "checksum mismatch");
  EXPECT_EQ(ParseCheckpoint(good.substr(0, good.size() - 3), c),
            "truncated (body shorter than its length)");
  EXPECT_EQ(ParseCheckpoint("LFJN", c), "not a checkpoint (bad magic)");
}

TEST(StateTest, JournalReadsBackItsRecordsAndStopsAtATornTail) {
  std::string seg;
  AppendJournalHeader({5, 3}, seg);
  const std::vector<std::string_view> a = {"line one", "", "line three"};
  AppendJournalRecord(1, 0, kT0, a, seg);
  AppendJournalRecord(2, 4, kT0 + 1, std::vector<std::string_view>{"x"}, seg);
  const std::size_t whole = seg.size();
  AppendJournalRecord(3, 0, kT0 + 2, std::vector<std::string_view>{"cut short"}, seg);
  JournalReader reader(std::string_view(seg).substr(0, seg.size() - 4));
  JournalSegmentHeader h;
  ASSERT_EQ(reader.ReadHeader(h), "");
  EXPECT_EQ(h.generation, 5u);
  EXPECT_EQ(h.workers, 3u);
  JournalRecord r;
  ASSERT_EQ(reader.Next(r), JournalReader::Status::kRecord);
  EXPECT_EQ(r.seq, 1u);
  EXPECT_EQ(r.lines, a);
  ASSERT_EQ(reader.Next(r), JournalReader::Status::kRecord);
  EXPECT_EQ(r.input, 4u);
  EXPECT_EQ(r.arrival_us, kT0 + 1);
  EXPECT_EQ(reader.Next(r), JournalReader::Status::kTornTail);
  EXPECT_EQ(reader.valid_bytes(), whole);

  std::string corrupt = seg;
  corrupt[whole - 2] ^= 1;  // inside record 2's last line
  JournalReader bad(corrupt);
  ASSERT_EQ(bad.ReadHeader(h), "");
  ASSERT_EQ(bad.Next(r), JournalReader::Status::kRecord);
  EXPECT_EQ(bad.Next(r), JournalReader::Status::kCorrupt);
}

TEST(StateTest, SummaryLogKeepsTheRecordsBeforeATornOrDamagedOne) {
  std::string log;
  AppendSummaryRecord({7, 120, false}, log);
  AppendSummaryRecord({9, 3, true}, log);
  std::vector<SummaryRecord> out;
  EXPECT_EQ(ParseSummaryLog(log, out), "");
  EXPECT_EQ(out, (std::vector<SummaryRecord>{{7, 120, false}, {9, 3, true}}));
  out.clear();
  EXPECT_EQ(ParseSummaryLog(std::string_view(log).substr(0, log.size() - 5), out),
            "incomplete last record");
  EXPECT_EQ(out.size(), 1u);
  log[30] ^= 4;
  out.clear();
  EXPECT_EQ(ParseSummaryLog(log, out), "record checksum mismatch at byte 24");
  EXPECT_EQ(out.size(), 1u);
}

class StateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("logfold-state-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    options_.directory = dir_.string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void WriteFile(const std::string& name, const std::string& bytes) {
    fs::create_directories(dir_);
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }

  fs::path dir_;
  StateOptions options_;
  Metrics metrics_;
};

TEST_F(StateDirTest, CorruptFilesAreSetAsideAndTheStartGoesOn) {
  WindowMerger m(Options());
  Collect out;
  for (const auto& r : Traffic(40, kT0)) m.Add(r, r.arrival_us, out);
  CheckpointHeader h;
  h.workers = 2;
  const std::string good = Save(m, h);
  std::string bad = good;
  bad[30] ^= 0x55;
  WriteFile("worker-0.state", good);
  WriteFile("worker-1.state", bad);
  WriteFile("worker-1.state.tmp", "half a checkpoint");
  WriteFile("journal-0000000000000001-00000000.log", "LFJN garbage");

  StateStore store(options_, 2, metrics_);
  RecoveredState rec;
  std::string error;
  ASSERT_TRUE(store.Open(rec, error)) << error;
  ASSERT_EQ(rec.checkpoints.size(), 1u);
  EXPECT_EQ(rec.checkpoints[0].groups.size(), m.open_groups());
  EXPECT_TRUE(rec.journal.empty());
  EXPECT_FALSE(fs::exists(dir_ / "worker-1.state"));
  EXPECT_FALSE(fs::exists(dir_ / "worker-1.state.tmp"));
  int set_aside = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "corrupt")) set_aside += e.is_regular_file();
  EXPECT_EQ(set_aside, 2);
  EXPECT_EQ(metrics_.GetCounter("logfold_state_files_set_aside_total", "").load(), 2u);

  // A second daemon on the same directory is refused while the first holds it.
  StateStore other(options_, 2, metrics_);
  RecoveredState rec2;
  EXPECT_FALSE(other.Open(rec2, error));
  EXPECT_NE(error.find("locked"), std::string::npos);
}

TEST_F(StateDirTest, WriterCommitsOfferedCheckpointsAndJournalSurvivesUntilCovered) {
  options_.journal = true;
  WindowMerger m(Options());
  Collect out;
  for (const auto& r : Traffic(20, kT0)) m.Add(r, r.arrival_us, out);
  std::uint64_t generation = 0;
  {
    StateStore store(options_, 1, metrics_);
    RecoveredState rec;
    std::string error;
    ASSERT_TRUE(store.Open(rec, error)) << error;
    generation = store.generation();
    std::vector<std::string> empty(1);
    CheckpointWriter w;
    w.Begin({}, empty[0]);
    w.Finish();
    ASSERT_TRUE(store.CommitAll(empty, true, error)) << error;
    store.Start();
    const std::vector<std::string_view> lines = {"<13>Nov 25 12:00:00 h a: hello"};
    EXPECT_EQ(store.JournalAppend(0, kT0, lines), 1u);
    EXPECT_EQ(store.JournalAppend(0, kT0, lines), 2u);
    store.JournalSync();
    CheckpointHeader h;
    h.journal_generation = generation;
    h.journal_watermark = 2;
    std::string bytes = Save(m, h);
    store.Offer(0, bytes, 2, 0);
    store.Stop();  // writes what was offered
  }                // the process "exits": its lock is released, nothing else is cleaned up
  StateStore again(options_, 1, metrics_);
  RecoveredState rec;
  std::string error;
  ASSERT_TRUE(again.Open(rec, error)) << error;
  EXPECT_EQ(again.generation(), generation + 1);
  ASSERT_EQ(rec.checkpoints.size(), 1u);
  EXPECT_EQ(rec.checkpoints[0].groups.size(), m.open_groups());
  EXPECT_EQ(rec.checkpoints[0].header.journal_watermark, 2u);
  ASSERT_EQ(rec.journal.size(), 1u);  // the segment being written is never trimmed
  EXPECT_EQ(rec.journal[0].header.generation, generation);
  JournalReader reader(std::string_view(rec.journal[0].bytes));
  JournalSegmentHeader sh;
  ASSERT_EQ(reader.ReadHeader(sh), "");
  JournalRecord r;
  int records = 0;
  while (reader.Next(r) == JournalReader::Status::kRecord) ++records;
  EXPECT_EQ(records, 2);
}

}  // namespace
}  // namespace logfold
