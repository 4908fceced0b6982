// Integration tests of the local inputs of `logfold serve` as a real process: followed files
// (rotation by rename and by copytruncate under load, restarts by SIGTERM and kill -9, every
// line exactly once), multi-line joining, the unix syslog socket (logger, Python's
// SysLogHandler; datagram and stream) and the journald input on a private journal directory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"

namespace logfold {
namespace {

using daemon_test::DaemonProcess;
using daemon_test::Json;
using daemon_test::ReadFile;
using daemon_test::RunCommand;
using daemon_test::TempDir;
using daemon_test::WaitUntil;
using daemon_test::WriteFile;
using std::chrono::milliseconds;

#if defined(__SANITIZE_THREAD__)
constexpr int kSlowdown = 4;
#else
constexpr int kSlowdown = 1;
#endif

// The events of an NDJSON file, skipping a last line still being written.
std::vector<Json> Events(const std::string& path) {
  std::vector<Json> out;
  const std::string text = ReadFile(path);
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) break;
    Json j = Json::parse(text.substr(start, nl - start), nullptr, false);
    if (j.is_object()) out.push_back(std::move(j));
    start = nl + 1;
  }
  return out;
}

// Every event annotates one line: `annotate` mode makes the output a line-by-line record.
Json AnnotateConfig(const std::string& events, Json inputs) {
  return Json{{"log", {{"level", "info"}, {"stats_interval", "0"}}},
              {"inputs", std::move(inputs)},
              {"engine", {{"mode", "annotate"}}},
              {"workers", {{"threads", 2}}},
              {"outputs", Json::array({{{"name", "events"}, {"type", "file"}, {"path", events}}})},
              {"metrics", {{"port", 0}}}};
}

std::string WriteConfig(const TempDir& dir, const Json& config) {
  const std::string path = dir / "logfold.json";
  WriteFile(path, config.dump(2));
  return path;
}

class LocalInputsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }
  TempDir dir_;
};

// ------------------------------------------------------------------ followed files

// A writer appends numbered lines to app.log while it is rotated by rename twice and by
// copytruncate twice, and the daemon is restarted by SIGTERM under load and by kill -9
// mid-file (the writer paused until the output caught up, then resumed while the daemon was
// down). Every line must come out exactly once.
TEST_F(LocalInputsTest, FollowedFileRotationsAndRestartsDeliverEveryLineExactlyOnce) {
  const std::string log = dir_ / "app.log";
  const std::string events = dir_ / "events.ndjson";
  const Json inputs = Json::array({{{"name", "app"},
                                    {"type", "file"},
                                    {"format", "raw"},
                                    {"path", log + "*"},
                                    {"state_directory", std::string(dir_ / "state")},
                                    {"poll_interval", "200ms"}}});
  const std::string config = WriteConfig(dir_, AnnotateConfig(events, inputs));
  constexpr int kLines = 40000;
  std::atomic<int> written{0};
  std::atomic<bool> paused{false};
  std::atomic<bool> resume{false};
  int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  auto write_lines = [&](int n) {
    std::string batch;
    for (int i = 0; i < n; ++i) {
      char line[96];
      const int seq = written.load() + i;
      std::snprintf(line, sizeof line, "seq=%06d user-%d requested /items/%d from 10.0.%d.%d\n",
                    seq, seq % 97, seq % 1013, seq % 256, seq % 199);
      batch += line;
    }
    ASSERT_EQ(write(fd, batch.data(), batch.size()), static_cast<ssize_t>(batch.size()));
    written.fetch_add(n);
  };
  auto rotate_by_rename = [&](const std::string& to) {
    ASSERT_EQ(rename(log.c_str(), to.c_str()), 0);
    close(fd);
    fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
  };
  auto copytruncate = [&](const std::string& to) {
    std::filesystem::copy_file(log, to);
    ASSERT_EQ(ftruncate(fd, 0), 0);
  };
  DaemonProcess daemon(dir_);
  ASSERT_TRUE(daemon.Start(config)) << daemon.Stderr();
  std::thread writer([&] {
    while (written.load() < kLines) {
      const int at = written.load();
      if (at == kLines / 5) rotate_by_rename(log + ".1");
      if (at == kLines / 2) copytruncate(log + ".c1");
      if (at == 13 * kLines / 20) {
        paused.store(true);
        while (!resume.load()) std::this_thread::sleep_for(milliseconds(5));
        rotate_by_rename(log + ".2");  // while the daemon is down
        write_lines(1000);
      }
      if (at == 4 * kLines / 5) copytruncate(log + ".c2");
      write_lines(100);
      // Paced, so that the rotations and the restart below happen while lines flow.
      std::this_thread::sleep_for(milliseconds(2));
    }
  });
  // SIGTERM while lines flow, then a restart.
  ASSERT_TRUE(WaitUntil([&] { return written.load() >= kLines / 3; }, milliseconds(60000)));
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  ASSERT_EQ(daemon.WaitExit(milliseconds(30000)), std::optional<int>(0)) << daemon.Stderr();
  std::string logs = daemon.Stderr();  // every run's log, for a failure's message
  ASSERT_TRUE(daemon.Start(config)) << daemon.Stderr();
  // kill -9 once the output holds every line written so far (the writer pauses mid-file).
  ASSERT_TRUE(WaitUntil([&] { return paused.load(); }, milliseconds(60000)));
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() >= std::size_t(written.load()); },
                        milliseconds(30000 * kSlowdown)))
      << Events(events).size() << " of " << written.load();
  ASSERT_TRUE(daemon.Signal(SIGKILL));
  daemon.WaitExit(milliseconds(10000));
  logs += "--- killed\n" + daemon.Stderr();
  resume.store(true);
  ASSERT_TRUE(
      WaitUntil([&] { return written.load() > 13 * kLines / 20 + 1000; }, milliseconds(10000)));
  ASSERT_TRUE(daemon.Start(config)) << daemon.Stderr();
  writer.join();
  close(fd);
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() >= std::size_t(kLines); },
                        milliseconds(30000 * kSlowdown)))
      << Events(events).size() << " of " << kLines << "\n"
      << daemon.Stderr();
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  ASSERT_EQ(daemon.WaitExit(milliseconds(30000)), std::optional<int>(0)) << daemon.Stderr();
  std::vector<int> seen(kLines, 0);
  std::size_t other = 0;
  for (const Json& e : Events(events)) {
    const std::string m = e.value("message", "");
    int seq = -1;
    if (std::sscanf(m.c_str(), "seq=%d user-", &seq) == 1 && seq >= 0 && seq < kLines) {
      ++seen[static_cast<std::size_t>(seq)];
    } else {
      ++other;
      ADD_FAILURE() << "unexpected line: " << m;
    }
  }
  int missing = 0, repeated = 0;
  for (int i = 0; i < kLines; ++i) {
    if (seen[static_cast<std::size_t>(i)] == 0 && ++missing <= 5) ADD_FAILURE() << "missing " << i;
    if (seen[static_cast<std::size_t>(i)] > 1 && ++repeated <= 5) {
      ADD_FAILURE() << "seq " << i << " seen " << seen[static_cast<std::size_t>(i)] << " times";
    }
  }
  logs += "--- last run\n" + daemon.Stderr();
  EXPECT_EQ(missing, 0) << logs;
  EXPECT_EQ(repeated, 0) << logs;
  EXPECT_EQ(other, 0u);
  // The last run saw the second copytruncate (the first was seen by an earlier run).
  EXPECT_NE(daemon.Stderr().find("was truncated"), std::string::npos) << daemon.Stderr();
  EXPECT_NE(daemon.Stderr().find("is a copy of a truncated file"), std::string::npos)
      << daemon.Stderr();
}

// A stack trace is one record: continuation lines join the line that matched the start
// pattern; a new file found after the first scan is read from its start even with
// read_from "end", while a file present at the first scan is read from its end.
TEST_F(LocalInputsTest, MultiLineRecordsAndReadFromEnd) {
  const std::string old_log = dir_ / "old.log";
  const std::string log = dir_ / "svc.log";
  const std::string events = dir_ / "events.ndjson";
  WriteFile(old_log, "2024-05-01 before start, never read\n");
  const Json inputs = Json::array({{{"name", "svc"},
                                    {"type", "file"},
                                    {"format", "raw"},
                                    {"path", std::string(dir_ / "*.log")},
                                    {"read_from", "end"},
                                    {"multiline_start", "^\\d{4}-\\d{2}-\\d{2} "},
                                    {"multiline_timeout", "300ms"},
                                    {"poll_interval", "100ms"}}});
  DaemonProcess daemon(dir_);
  ASSERT_TRUE(daemon.Start(WriteConfig(dir_, AnnotateConfig(events, inputs)))) << daemon.Stderr();
  {
    std::FILE* f = std::fopen(old_log.c_str(), "a");
    std::fputs("2024-05-01 appended after start\n", f);
    std::fclose(f);
  }
  WriteFile(log,
            "2024-05-01 12:00:00 ERROR request failed\n"
            "java.lang.IllegalStateException: boom\n"
            "\tat com.example.Handler.run(Handler.java:42)\n"
            "2024-05-01 12:00:01 INFO next request\n");
  // The last record is complete only when its idle timeout passes.
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() >= 3; }, milliseconds(10000)))
      << daemon.Stderr();
  std::set<std::string> messages;
  for (const Json& e : Events(events)) messages.insert(e.value("message", ""));
  EXPECT_EQ(messages, (std::set<std::string>{"2024-05-01 appended after start",
                                             "2024-05-01 12:00:00 ERROR request failed\n"
                                             "java.lang.IllegalStateException: boom\n"
                                             "\tat com.example.Handler.run(Handler.java:42)",
                                             "2024-05-01 12:00:01 INFO next request"}));
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  EXPECT_EQ(daemon.WaitExit(milliseconds(30000)), std::optional<int>(0));
}

// With only a file input the daemon keeps following (it used to exit at end of file), a
// SIGHUP reload leaves it following, and SIGTERM stops it cleanly.
TEST_F(LocalInputsTest, FileOnlyDaemonKeepsFollowingAcrossReload) {
  const std::string log = dir_ / "a.log";
  const std::string events = dir_ / "events.ndjson";
  WriteFile(log, "first line\n");
  const Json inputs =
      Json::array({{{"name", "a"}, {"type", "file"}, {"format", "raw"}, {"path", log}}});
  DaemonProcess daemon(dir_);
  ASSERT_TRUE(daemon.Start(WriteConfig(dir_, AnnotateConfig(events, inputs)))) << daemon.Stderr();
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() == 1; }, milliseconds(10000)));
  ASSERT_TRUE(daemon.Signal(SIGHUP));
  ASSERT_TRUE(daemon.WaitForStderr("reload applied"));
  {
    std::FILE* f = std::fopen(log.c_str(), "a");
    std::fputs("second line\n", f);
    std::fclose(f);
  }
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() == 2; }, milliseconds(10000)))
      << daemon.Stderr();
  EXPECT_EQ(Events(events)[1].value("message", ""), "second line");
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  EXPECT_EQ(daemon.WaitExit(milliseconds(30000)), std::optional<int>(0));
}

// A wildcard in the directory part leaves inotify out (no single directory to watch): the
// rescan every poll_interval finds new files and new lines.
TEST_F(LocalInputsTest, PollingFollowsWhereInotifyCannotWatch) {
  std::filesystem::create_directories(dir_ / "svc-a");
  const std::string events = dir_ / "events.ndjson";
  const Json inputs = Json::array({{{"name", "polled"},
                                    {"type", "file"},
                                    {"format", "raw"},
                                    {"path", std::string(dir_ / "svc-*" / "*.log")},
                                    {"poll_interval", "100ms"}}});
  DaemonProcess daemon(dir_);
  ASSERT_TRUE(daemon.Start(WriteConfig(dir_, AnnotateConfig(events, inputs)))) << daemon.Stderr();
  WriteFile(dir_ / "svc-a" / "a.log", "from a\n");
  std::filesystem::create_directories(dir_ / "svc-b");
  WriteFile(dir_ / "svc-b" / "b.log", "from b\n");
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() >= 2; }, milliseconds(10000)))
      << daemon.Stderr();
  {
    std::FILE* f = std::fopen((dir_ / "svc-a" / "a.log").c_str(), "a");
    std::fputs("more from a\n", f);
    std::fclose(f);
  }
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() >= 3; }, milliseconds(10000)));
  std::set<std::string> messages;
  for (const Json& e : Events(events)) messages.insert(e.value("message", ""));
  EXPECT_EQ(messages, (std::set<std::string>{"from a", "from b", "more from a"}));
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  EXPECT_EQ(daemon.WaitExit(milliseconds(30000)), std::optional<int>(0));
}

// ------------------------------------------------------------------ unix socket

// logger(1) and Python's SysLogHandler, each over a datagram and a stream socket. A
// datagram is one message even when it spans lines; the socket files get the configured
// mode and are removed at exit.
TEST_F(LocalInputsTest, UnixSocketDatagramAndStreamFromLoggerAndPython) {
  const std::string dgram = dir_ / "dgram.sock";
  const std::string stream = dir_ / "stream.sock";
  const std::string events = dir_ / "events.ndjson";
  const Json inputs = Json::array(
      {{{"name", "dev-log"}, {"type", "unix"}, {"path", dgram}, {"socket_mode", "0620"}},
       {{"name", "dev-log-stream"},
        {"type", "unix"},
        {"path", stream},
        {"socket_type", "stream"}}});
  DaemonProcess daemon(dir_);
  ASSERT_TRUE(daemon.Start(WriteConfig(dir_, AnnotateConfig(events, inputs)))) << daemon.Stderr();
  struct stat st {};
  ASSERT_EQ(stat(dgram.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0620u);
  ASSERT_EQ(stat(stream.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0666u);

  EXPECT_EQ(RunCommand({"logger", "-u", dgram, "-t", "lg-dgram", "logger over a datagram"}, dir_)
                .exit_code,
            0);
  EXPECT_EQ(
      RunCommand({"logger", "-u", stream, "-T", "-t", "lg-stream", "logger over a stream"}, dir_)
          .exit_code,
      0);
  const std::string py =
      "import logging, logging.handlers, socket, sys\n"
      "for path, kind, name in ((sys.argv[1], socket.SOCK_DGRAM, 'py-dgram'),\n"
      "                         (sys.argv[2], socket.SOCK_STREAM, 'py-stream')):\n"
      "    h = logging.handlers.SysLogHandler(address=path, socktype=kind)\n"
      "    h.setFormatter(logging.Formatter(name + ': %(message)s'))\n"
      "    log = logging.getLogger(name); log.addHandler(h)\n"
      "    log.error('python over %s', name)\n"
      "    log.error('trace line one\\n  continued')\n"
      "    h.close()\n";
  EXPECT_EQ(RunCommand({"python3", "-c", py, dgram, stream}, dir_).exit_code, 0);
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() >= 7; }, milliseconds(10000)))
      << ReadFile(events) << daemon.Stderr();
  // Events whose parsed app is `tag` and whose message is `text`: the parser reads the tag
  // of `<PRI>tag: msg` without a timestamp (Python) as it does after one (logger).
  auto count = [&](std::string_view tag, std::string_view text) {
    int n = 0;
    for (const Json& e : Events(events)) {
      if (e.value("app", "") == tag && e.value("message", "") == text) ++n;
    }
    return n;
  };
  EXPECT_EQ(count("lg-dgram", "logger over a datagram"), 1) << ReadFile(events);
  EXPECT_EQ(count("lg-stream", "logger over a stream"), 1) << ReadFile(events);
  EXPECT_EQ(count("py-dgram", "python over py-dgram"), 1) << ReadFile(events);
  EXPECT_EQ(count("py-stream", "python over py-stream"), 1) << ReadFile(events);
  // A datagram keeps its lines together; on a stream a line feed ends a message.
  EXPECT_EQ(count("py-dgram", "trace line one\n  continued"), 1) << ReadFile(events);
  EXPECT_EQ(count("py-stream", "trace line one"), 1) << ReadFile(events);
  EXPECT_EQ(Events(events).size(), 7u) << ReadFile(events);
  // A reload keeps both sockets serving.
  ASSERT_TRUE(daemon.Signal(SIGHUP));
  ASSERT_TRUE(daemon.WaitForStderr("reload applied"));
  EXPECT_EQ(
      RunCommand({"logger", "-u", dgram, "-t", "lg-dgram", "after the reload"}, dir_).exit_code, 0);
  EXPECT_EQ(RunCommand({"logger", "-u", stream, "-T", "-t", "lg-stream", "after the reload"}, dir_)
                .exit_code,
            0);
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() >= 9; }, milliseconds(10000)))
      << ReadFile(events);
  EXPECT_EQ(count("lg-dgram", "after the reload"), 1);
  EXPECT_EQ(count("lg-stream", "after the reload"), 1);
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  EXPECT_EQ(daemon.WaitExit(milliseconds(30000)), std::optional<int>(0));
  EXPECT_FALSE(std::filesystem::exists(dgram));
  EXPECT_FALSE(std::filesystem::exists(stream));
}

// ------------------------------------------------------------------ journald

// Journal entries in the export format, turned into a journal file by
// systemd-journal-remote (the test's own directory; no system journal involved).
bool AppendJournal(const TempDir& dir, const std::string& journal_dir, int first, int count,
                   const std::string& unit) {
  std::string text;
  for (int i = first; i < first + count; ++i) {
    const std::uint64_t usec = 1714564800000000ULL + static_cast<std::uint64_t>(i) * 1000;
    text += "__REALTIME_TIMESTAMP=" + std::to_string(usec) + "\n";
    text += "__MONOTONIC_TIMESTAMP=" + std::to_string(1000 + i) + "\n";
    text += "_BOOT_ID=8b1f6f6a5b3c4d2e9f0a1b2c3d4e5f60\n";
    text += "_HOSTNAME=jhost\nSYSLOG_IDENTIFIER=japp\n_PID=4242\nPRIORITY=3\n";
    text += "_SYSTEMD_UNIT=" + unit + "\n";
    text += "MESSAGE=entry " + std::to_string(i) + " done\n\n";
  }
  const std::string export_file = dir / "entries.export";
  WriteFile(export_file, text);
  const std::string remote = "/lib/systemd/systemd-journal-remote";
  const auto r = RunCommand(
      {remote, "--output=" + journal_dir + "/remote.journal", "--split-mode=none", export_file},
      dir);
  return r.exit_code == 0;
}

TEST_F(LocalInputsTest, JournaldEntriesFieldsUnitFilterAndCursorAcrossRestart) {
  if (!std::filesystem::exists("/lib/systemd/systemd-journal-remote")) {
    GTEST_SKIP() << "systemd-journal-remote is not installed (scripts/install-deps)";
  }
  const std::string journal = dir_ / "journal";
  std::filesystem::create_directories(journal);
  const std::string events = dir_ / "events.ndjson";
  ASSERT_TRUE(AppendJournal(dir_, journal, 0, 20, "web.service"));
  ASSERT_TRUE(AppendJournal(dir_, journal, 100, 5, "other.service"));
  const Json inputs = Json::array({{{"name", "journal"},
                                    {"type", "journald"},
                                    {"journal_directory", journal},
                                    {"units", Json::array({"web.service"})},
                                    {"state_directory", std::string(dir_ / "state")}}});
  const std::string config = WriteConfig(dir_, AnnotateConfig(events, inputs));
  DaemonProcess daemon(dir_);
  ASSERT_TRUE(daemon.Start(config)) << daemon.Stderr();
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() >= 20; }, milliseconds(10000)))
      << daemon.Stderr();
  const Json first = Events(events)[0];
  EXPECT_EQ(first.value("host", ""), "jhost");
  EXPECT_EQ(first.value("app", ""), "japp");
  EXPECT_EQ(first.value("procid", ""), "4242");
  EXPECT_EQ(first.value("severity", -1), 3);
  EXPECT_EQ(first.value("time", ""), "2024-05-01T12:00:00.000000Z") << first.dump();
  EXPECT_EQ(first.value("message", ""), "entry 0 done");
  // Followed: entries appended while running arrive.
  ASSERT_TRUE(AppendJournal(dir_, journal, 20, 10, "web.service"));
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() >= 30; }, milliseconds(10000)))
      << daemon.Stderr();
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  ASSERT_EQ(daemon.WaitExit(milliseconds(30000)), std::optional<int>(0));
  // Restarted: only what was written while it was down.
  ASSERT_TRUE(AppendJournal(dir_, journal, 30, 10, "web.service"));
  ASSERT_TRUE(daemon.Start(config)) << daemon.Stderr();
  ASSERT_TRUE(WaitUntil([&] { return Events(events).size() >= 40; }, milliseconds(10000)))
      << daemon.Stderr();
  ASSERT_TRUE(daemon.Signal(SIGTERM));
  ASSERT_EQ(daemon.WaitExit(milliseconds(30000)), std::optional<int>(0));
  std::vector<int> seen(40, 0);
  for (const Json& e : Events(events)) {
    int n = -1;
    ASSERT_EQ(std::sscanf(e.value("message", "").c_str(), "entry %d done", &n), 1);
    ASSERT_TRUE(n >= 0 && n < 40) << "unit filter let through: " << e.dump();
    ++seen[static_cast<std::size_t>(n)];
  }
  for (int i = 0; i < 40; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], 1) << "entry " << i;
}

}  // namespace
}  // namespace logfold
