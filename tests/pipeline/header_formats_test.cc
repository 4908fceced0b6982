// Whole lines in the publicly documented formats of widely used software (Android logcat,
// Apache and nginx error logs, syslog files, oslo.log, Windows CBS, pipe-separated fields,
// log4j/logback, Spring Boot, Elasticsearch, Ruby's Logger, klog, zap, Python logging, the
// kernel) fold exactly as their bare messages.
// Every line here is synthetic: its header varies (times, pids, threads, request ids, hosts)
// while the message comes from a handful of templates with varying values.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "pipeline/event.h"
#include "pipeline/log_record.h"
#include "pipeline/message_header.h"
#include "pipeline/window_merger.h"

namespace logfold {
namespace {

constexpr TimeUs kT0 = 1'709'251'200'000'000;  // 2024-03-01T00:00:00Z

// What annotate mode says of each line.
struct Annotated {
  std::vector<std::uint64_t> ids;
  std::vector<std::string> templates, levels;
};

class AnnotateSink : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    if (e.kind != EventKind::kAnnotate) return;
    out.ids.push_back(e.group_id);
    out.templates.emplace_back(e.template_text);
    out.levels.emplace_back(e.level);
  }
  Annotated out;
};

// Each line's group, template and level, folded in one scope in annotate mode.
Annotated Fold(const std::vector<std::string>& lines) {
  MergerOptions options;
  options.annotate = true;
  WindowMerger merger(options);
  AnnotateSink sink;
  LogRecord r;
  r.hostname = "host";
  r.app_name = "app";
  TimeUs t = kT0;
  for (const std::string& line : lines) {
    r.message = line;
    merger.Add(r, t++, sink);
  }
  return std::move(sink.out);
}

// Is `a` the same partition of the lines as `b` (group ids aside)?
::testing::AssertionResult SamePartition(const std::vector<std::uint64_t>& a,
                                         const std::vector<std::uint64_t>& b,
                                         const std::vector<std::string>& lines) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes differ";
  std::map<std::uint64_t, std::uint64_t> ab, ba;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto [x, new_x] = ab.emplace(a[i], b[i]);
    const auto [y, new_y] = ba.emplace(b[i], a[i]);
    if (x->second != b[i] || y->second != a[i]) {
      return ::testing::AssertionFailure() << "line " << i << " groups differently: " << lines[i];
    }
  }
  return ::testing::AssertionSuccess();
}

std::string Format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

struct Rng {
  std::mt19937 gen{20261125};
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); }
  std::string Ip() { return Format("10.%d.%d.%d", Int(0, 255), Int(0, 255), Int(1, 254)); }
  std::string Hex(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "0123456789abcdef"[Int(0, 15)];
    return s;
  }
  std::string Uuid() { return Hex(8) + "-" + Hex(4) + "-" + Hex(4) + "-" + Hex(4) + "-" + Hex(12); }
};

// One message template: its level (0 info, 1 warning, 2 error), the tag or logger its
// application writes it under, and its text with fresh values.
struct Template {
  int level;
  const char* tag;
  std::function<std::string(Rng&)> text;
};

const std::vector<Template>& Templates() {
  static const std::vector<Template> templates = {
      {0, "ConnManager",
       [](Rng& r) {
         return "Connection from " + r.Ip() + " port " + std::to_string(r.Int(1024, 65535)) +
                " closed";
       }},
      {0, "Auth",
       [](Rng& r) {
         return "Accepted publickey for user" + std::to_string(r.Int(1, 9)) + " from " + r.Ip();
       }},
      {1, "DiskMonitor",
       [](Rng& r) {
         return Format("disk /dev/sd%c%d is %d%% full", 'a' + r.Int(0, 3), r.Int(1, 4),
                       r.Int(80, 99));
       }},
      {0, "http",
       [](Rng& r) {
         return "Request " + r.Uuid() + " completed in " + std::to_string(r.Int(1, 900)) + " ms";
       }},
      {2, "Storage",
       [](Rng& r) {
         return "Failed to open /var/lib/app/" + r.Hex(6) + ".dat: No such file or directory";
       }},
      {0, "Scheduler",
       [](Rng& r) { return Format("%d tasks queued for worker %d", r.Int(2, 90), r.Int(1, 16)); }},
      {0, "Compute", [](Rng& r) { return "Instance " + r.Uuid() + " spawned successfully"; }},
      {0, "Compute", [](Rng& r) { return "Instance " + r.Uuid() + " destroyed"; }},
      {1, "Client",
       [](Rng& r) {
         return Format("Retrying request to backend-%d (attempt %d of 5)", r.Int(1, 40),
                       r.Int(1, 5));
       }},
      {2, "Cache",
       [](Rng& r) {
         return Format("cache miss ratio %d.%02d exceeds the limit", r.Int(0, 1), r.Int(0, 99));
       }},
  };
  return templates;
}

// A header format: writes line `i` of a template (level 0-2, tag) before `msg`.
using Writer = std::function<std::string(Rng&, int level, const char* tag, const std::string&)>;

struct HeaderFormat {
  const char* name;
  Writer write;
  bool writes_level = true;
};

std::string Time(Rng& r, const char* fmt) {
  return Format(fmt, r.Int(10, 23), r.Int(10, 59), r.Int(10, 59), r.Int(100, 999));
}

const std::vector<HeaderFormat>& Formats() {
  static const char* kLetter[] = {"I", "W", "E"};
  static const char* kUpper[] = {"INFO", "WARN", "ERROR"};
  static const char* kLower[] = {"info", "warn", "error"};
  static const std::vector<HeaderFormat> formats = {
      {"android threadtime",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         return Format("03-17 %s %5d %5d %s %-8s: %s", Time(r, "%d:%d:%d.%d").c_str(),
                       r.Int(1, 30000), r.Int(1, 30000), kLetter[l], tag, m.c_str());
       }},
      {"android brief",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         return Format("%s/%-8s(%5d): %s", kLetter[l], tag, r.Int(1, 30000), m.c_str());
       }},
      {"android time",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         return Format("03-17 %s %s/%s(%5d): %s", Time(r, "%d:%d:%d.%d").c_str(), kLetter[l], tag,
                       r.Int(1, 30000), m.c_str());
       }},
      {"apache 2.2 error_log",
       [](Rng& r, int l, const char*, const std::string& m) {
         static const char* level[] = {"notice", "warn", "error"};
         const std::string client = r.Int(0, 1) ? "[client " + r.Ip() + "] " : "";
         return Format("[Sun Dec %02d %s 2005] [%s] %s%s", r.Int(1, 28),
                       Time(r, "%d:%d:%d").c_str(), level[l], client.c_str(), m.c_str());
       }},
      {"apache 2.4 error_log",
       [](Rng& r, int l, const char*, const std::string& m) {
         static const char* level[] = {"core:notice", "ssl:warn", "proxy:error"};
         return Format("[Wed Oct %02d %s.%06d 2000] [%s] [pid %d:tid %d] [client %s:%d] %s",
                       r.Int(1, 28), Time(r, "%d:%d:%d").c_str(), r.Int(0, 999999), level[l],
                       r.Int(100, 99999), r.Int(1000000, 9999999), r.Ip().c_str(),
                       r.Int(1024, 65535), m.c_str());
       }},
      {"syslog file",
       [](Rng& r, int, const char* tag, const std::string& m) {
         static const char* host[] = {"combo", "web-01", "db2"};
         return Format("Jun %2d %s %s %s%s[%d]: %s", r.Int(1, 30), Time(r, "%d:%d:%d").c_str(),
                       host[r.Int(0, 2)], tag, r.Int(0, 1) ? "(pam_unix)" : "", r.Int(2, 40000),
                       m.c_str());
       },
       false},
      {"syslog file, ISO stamp",
       [](Rng& r, int, const char* tag, const std::string& m) {
         return Format("2024-03-%02dT%s+01:00 node%d %s[%d]: %s", r.Int(1, 30),
                       Time(r, "%d:%d:%d.%d").c_str(), r.Int(1, 9), tag, r.Int(2, 40000),
                       m.c_str());
       },
       false},
      {"syslog file after a collector's prefix",
       [](Rng& r, int, const char* tag, const std::string& m) {
         const std::string host = Format("dn%d", r.Int(1, 999));
         return Format("- %d 2005.11.09 %s Nov 9 %s %s/%s %s[%d]: %s",
                       r.Int(1131566461, 1131999999), host.c_str(), Time(r, "%d:%d:%d").c_str(),
                       host.c_str(), host.c_str(), tag, r.Int(2, 40000), m.c_str());
       },
       false},
      {"oslo.log",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         static const char* level[] = {"INFO", "WARNING", "ERROR"};
         const std::string context =
             r.Int(0, 3) == 0 ? "[-]"
                              : "[req-" + r.Uuid() + " " + r.Hex(32) + " " + r.Hex(32) + " - - -]";
         return Format("2017-05-16 %s %d %s nova.%s %s %s", Time(r, "%d:%d:%d.%d").c_str(),
                       r.Int(1000, 30000), level[l], tag, context.c_str(), m.c_str());
       }},
      {"oslo.log after a file name",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         static const char* level[] = {"INFO", "WARNING", "ERROR"};
         return Format(
             "nova-api.log.1.2017-05-16_13:53:08 2017-05-16 %s %d %s nova.%s "
             "[req-%s - - - - -] %s",
             Time(r, "%d:%d:%d.%d").c_str(), r.Int(1000, 30000), level[l], tag, r.Uuid().c_str(),
             m.c_str());
       }},
      {"windows CBS",
       [](Rng& r, int l, const char*, const std::string& m) {
         static const char* level[] = {"Info", "Warning", "Error"};
         static const char* component[] = {"CBS", "CSI"};
         return Format("2016-09-28 %s, %-21s %-6s %s", Time(r, "%d:%d:%d").c_str(), level[l],
                       component[r.Int(0, 1)], m.c_str());
       }},
      {"pipe-separated",
       [](Rng& r, int, const char* tag, const std::string& m) {
         return Format("20171223-%d:%02d:%02d:%03d|Step_%s|%d|%s", r.Int(0, 23), r.Int(0, 59),
                       r.Int(0, 59), r.Int(0, 999), tag, r.Int(30002312, 30009999), m.c_str());
       },
       false},
      {"log4j",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         static const char* thread[] = {"main", "RMCommunicator Allocator", "pool-1-thread-3",
                                        "IPC Server handler 7 on 9000"};
         return Format("2015-10-18 %s %s [%s] org.example.%s: %s", Time(r, "%d:%d:%d,%d").c_str(),
                       kUpper[l], thread[r.Int(0, 3)], tag, m.c_str());
       }},
      {"logback",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         return Format("%s [http-nio-8080-exec-%d] %-5s c.e.%s - %s",
                       Time(r, "%d:%d:%d.%d").c_str(), r.Int(1, 200), kUpper[l], tag, m.c_str());
       }},
      {"Spring Boot",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         static const char* thread[] = {"main", "nio-8080-exec-1", "scheduling-1"};
         return Format("2024-05-09 %s %5s %d --- [%15s] o.s.%-30s : %s",
                       Time(r, "%d:%d:%d.%d").c_str(), kUpper[l], r.Int(100, 99999),
                       thread[r.Int(0, 2)], tag, m.c_str());
       }},
      {"Elasticsearch",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         return Format("[2024-05-09T%s][%-5s][o.e.%-20s] [node-%d] %s",
                       Time(r, "%d:%d:%d,%d").c_str(), kUpper[l], tag, r.Int(1, 9), m.c_str());
       }},
      {"Ruby Logger",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         static const char* level[] = {"INFO", "WARN", "ERROR"};
         return Format("%c, [2024-05-09T%s%03d #%d] %5s -- %s: %s", level[l][0],
                       Time(r, "%d:%d:%d.%d").c_str(), r.Int(0, 999), r.Int(100, 99999), level[l],
                       r.Int(0, 1) ? tag : "", m.c_str());
       }},
      {"klog",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         return Format("%s%02d%02d %s%03d %7d %s.go:%d] %s", kLetter[l], r.Int(1, 12), r.Int(1, 28),
                       Time(r, "%d:%d:%d.%d").c_str(), r.Int(0, 999), r.Int(1, 99999), tag,
                       r.Int(10, 900), m.c_str());
       }},
      {"zap console",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         return Format("2024-05-09T%s.%03dZ\t%s\t%s/run.go:%d\t%s", Time(r, "%d:%d:%d").c_str(),
                       r.Int(0, 999), kLower[l], tag, r.Int(10, 900), m.c_str());
       }},
      {"nginx error_log",
       [](Rng& r, int l, const char*, const std::string& m) {
         static const char* level[] = {"notice", "warn", "error"};
         const int pid = r.Int(100, 9999);
         return Format("2024/05/09 %s [%s] %d#%d: %s", Time(r, "%d:%d:%d").c_str(), level[l], pid,
                       pid, m.c_str());
       }},
      {"python logging",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         static const char* level[] = {"INFO", "WARNING", "ERROR"};
         return Format("2024-05-09 %s - app.%s - %s - %s", Time(r, "%d:%d:%d,%d").c_str(), tag,
                       level[l], m.c_str());
       }},
      {"python basicConfig",
       [](Rng&, int l, const char* tag, const std::string& m) {
         static const char* level[] = {"INFO", "WARNING", "ERROR"};
         return Format("%s:app.%s:%s", level[l], tag, m.c_str());
       }},
      {"kernel",
       [](Rng& r, int, const char*, const std::string& m) {
         return Format("[%5d.%06d] %s", r.Int(0, 99999), r.Int(0, 999999), m.c_str());
       },
       false},
      // The formats of real programs run here (tests/pipeline/message_header_test.cc holds
      // their own lines).
      {"clickhouse-server",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         static const char* level[] = {"<Information>", "<Warning>", "<Error>"};
         const std::string query = r.Int(0, 1) ? r.Uuid() : "";
         return Format("2026.11.27 %s.%06d [ %d ] {%s} %s %s: %s", Time(r, "%d:%d:%d").c_str(),
                       r.Int(0, 999999), r.Int(1, 60), query.c_str(), level[l], tag, m.c_str());
       }},
      {"chromium",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         static const char* level[] = {"INFO", "WARNING", "ERROR"};
         return Format("[%d:%d:1127/%02d%02d%02d.%06d:%s:%s.cc(%d)] %s", r.Int(100, 99999),
                       r.Int(100, 99999), r.Int(0, 23), r.Int(0, 59), r.Int(0, 59),
                       r.Int(0, 999999), level[l], tag, r.Int(1, 900), m.c_str());
       }},
      {"mariadb",
       [](Rng& r, int l, const char*, const std::string& m) {
         static const char* level[] = {"Note", "Warning", "ERROR"};
         return Format("2026-11-27 %s %d [%s] %s", Time(r, "%d:%d:%d").c_str(), r.Int(0, 400),
                       level[l], m.c_str());
       }},
      {"postgresql",
       [](Rng& r, int l, const char*, const std::string& m) {
         static const char* level[] = {"INFO", "WARNING", "ERROR"};
         return Format("2026-11-27 %s.%03d UTC [%d] %s:  %s", Time(r, "%d:%d:%d").c_str(),
                       r.Int(0, 999), r.Int(100, 99999), level[l], m.c_str());
       }},
      {"log4j, the logger after the message (Kafka)",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         return Format("[2024-05-09 %s] %s %s (org.example.%s.Handler)",
                       Time(r, "%d:%d:%d,%d").c_str(), kUpper[l], m.c_str(), tag);
       }},
      {"python, thread with spaces",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         static const char* level[] = {"INFO    ", "WARNING ", "ERROR   "};
         return Format("2026-11-27 %s %s[Worker pool %d] app.%s - %s",
                       Time(r, "%d:%d:%d,%d").c_str(), level[l], r.Int(0, 9), tag, m.c_str());
       }},
      // One message written at a level word no grammar knows ("AUDIT"): the scope's
      // confirmed header shape strips its header too.
      {"logback, an unknown level word",
       [](Rng& r, int l, const char* tag, const std::string& m) {
         static const char* level[] = {"INFO ", "WARN ", "ERROR"};
         const char* word = std::string_view(tag) == "Auth" ? "AUDIT" : level[l];
         return Format("2026-11-27 %s %s [main] c.e.%s: %s", Time(r, "%d:%d:%d.%d").c_str(), word,
                       tag, m.c_str());
       },
       false},
  };
  return formats;
}

// Lines of every format, each with a varying header, fold exactly as the same messages
// without headers, with the same templates (the header is out of them), and carry their
// header's level.
TEST(HeaderFormatsTest, WholeLinesFoldAsTheirBareMessages) {
  for (const HeaderFormat& format : Formats()) {
    Rng rng;
    std::vector<std::string> bare, whole;
    std::vector<int> levels;
    for (int i = 0; i < 120; ++i) {
      const Template& t = Templates()[static_cast<std::size_t>(rng.Int(0, 9))];
      bare.push_back(t.text(rng));
      whole.push_back(format.write(rng, t.level, t.tag, bare.back()));
      levels.push_back(t.level);
    }
    const Annotated a = Fold(bare), b = Fold(whole);
    EXPECT_TRUE(SamePartition(a.ids, b.ids, whole)) << format.name;
    ASSERT_EQ(a.templates.size(), b.templates.size()) << format.name;
    for (std::size_t i = 0; i < whole.size(); ++i) {
      static constexpr int kSeverity[] = {6, 4, 3};
      const int severity = LevelSeverity(b.levels[i]);
      // "notice" is 5: Apache's and nginx's informational lines.
      const bool level_ok = !format.writes_level || severity == kSeverity[levels[i]] ||
                            (levels[i] == 0 && severity == 5);
      if (a.templates[i] != b.templates[i] || !a.levels[i].empty() || !level_ok) {
        ADD_FAILURE() << format.name << ": " << whole[i] << "\n  template " << b.templates[i]
                      << "\n  bare     " << a.templates[i] << "\n  level " << b.levels[i];
        break;  // one line per format
      }
    }
  }
}

// Kafka's "[%d] %p %m (%c)": the logger at the end is header, so one message logged by two
// classes folds, and a method's name before ':' after the level is the message's, so two
// methods' messages do not.
TEST(HeaderFormatsTest, ALoggerAfterTheMessageIsHeaderAndTheMethodBeforeItIsNot) {
  std::vector<std::string> lines;
  for (int i = 0; i < 6; ++i) {
    lines.push_back(Format(
        "[2026-11-28 02:49:%02d,%03d] INFO [MetadataLoader id=%d] %s: The loader finished "
        "catching up to the current high water mark of %d (org.apache.kafka.image.loader.%s)",
        10 + i, 100 + i, 1 + i % 3,
        i % 2 == 0 ? "initializeNewPublishers" : "maybePublishMetadata(LOG_DELTA)", 200 + i,
        i % 3 == 0 ? "MetadataLoader" : "MetadataPublisher"));
  }
  const Annotated a = Fold(lines);
  for (std::size_t i = 2; i < lines.size(); ++i) EXPECT_EQ(a.ids[i], a.ids[i % 2]) << lines[i];
  EXPECT_NE(a.ids[0], a.ids[1]);
  // The bracket opening the message is its context: one slot whole, the component's name
  // with its instance.
  EXPECT_EQ(a.templates[5],
            "[<*>] maybePublishMetadata(LOG_DELTA): The loader finished catching up to the current "
            "high water mark of <*>");
}

// MySQL's and MariaDB's general query log writes its time column only when the second
// changes ("\t\t" where it is empty): its lines fold as their messages (the command and its
// argument) whether the time is there or not, and different commands do not fold.
TEST(HeaderFormatsTest, AnEmptyTimeColumnFoldsAsAFilledOne) {
  Rng rng;
  std::vector<std::string> bare, whole;
  for (int i = 0; i < 200; ++i) {
    switch (rng.Int(0, 3)) {
      case 0:
        bare.push_back("Connect\tapp@" + rng.Ip() + " on shop using TCP/IP");
        break;
      case 1:
        bare.push_back(Format("Query\tSELECT name FROM items WHERE id = %d", rng.Int(1, 99)));
        break;
      case 2:
        bare.push_back(Format("Query\tDROP TABLE t%d", rng.Int(1, 99)));
        break;
      default:
        bare.push_back("Quit\t");
    }
    const std::string time = rng.Int(0, 3) == 0 ? Time(rng, "261128 %2d:%d:%d") : "\t";
    whole.push_back(Format("%s\t%6d %s", time.c_str(), rng.Int(1, 400), bare.back().c_str()));
  }
  const Annotated a = Fold(bare), b = Fold(whole);
  EXPECT_TRUE(SamePartition(a.ids, b.ids, whole));
  EXPECT_EQ(a.templates, b.templates);
  EXPECT_EQ(std::set<std::uint64_t>(b.ids.begin(), b.ids.end()).size(), 4u);
}

// A group whose header the scope's learned shape decided carries that header's level and
// logger in its summary too (the first line is parsed again when the summary is written).
TEST(HeaderFormatsTest, SummariesCarryTheLearnedLevelAndLogger) {
  class Summaries : public EventSink {
   public:
    void OnEvent(const Event& e) override {
      if (e.kind == EventKind::kSummary && e.count_total > 0) {
        seen[std::string(e.template_text)] = {std::string(e.level), std::string(e.logger)};
      }
    }
    std::map<std::string, std::pair<std::string, std::string>> seen;
  } sink;
  WindowMerger merger{MergerOptions{}};
  LogRecord r;
  r.hostname = "host";
  r.app_name = "app";
  TimeUs t = kT0;
  for (int i = 0; i < 12; ++i) {
    r.message = Format("2026-11-27 10:00:%02d,123 INFO  [main] c.e.Jobs: job %d done", i, i);
    merger.Add(r, t++, sink);
  }
  for (int i = 0; i < 3; ++i) {
    r.message = Format("2026-11-27 10:01:%02d,123 AUDIT [main] c.e.Auth: user u%d logged in", i, i);
    merger.Add(r, t++, sink);
  }
  merger.FlushAll(sink);
  ASSERT_EQ(sink.seen.count("user <*> logged in"), 1u);
  EXPECT_EQ(sink.seen["user <*> logged in"].first, "AUDIT");
  EXPECT_EQ(sink.seen["user <*> logged in"].second, "c.e.Auth");
  ASSERT_EQ(sink.seen.count("job <*> done"), 1u);
  EXPECT_EQ(sink.seen["job <*> done"].first, "INFO");
  EXPECT_EQ(sink.seen["job <*> done"].second, "c.e.Jobs");
}

}  // namespace
}  // namespace logfold
