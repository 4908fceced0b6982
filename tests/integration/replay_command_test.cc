// `logfold replay` end-to-end tests: runs the built binary on temporary input files and checks
// its NDJSON output, exit codes and error messages.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace logfold {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "logfold_replay_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const std::string& f : files_) std::remove(f.c_str());
    rmdir(dir_.c_str());
  }

  std::string WriteInput(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    files_.push_back(path);
    return path;
  }

  // Runs `logfold replay args...` with stdin from `stdin_path` (or /dev/null).
  RunResult Run(const std::vector<std::string>& args, const std::string& stdin_path = "") {
    const std::string out_path = dir_ + "/stdout", err_path = dir_ + "/stderr";
    files_.push_back(out_path);
    files_.push_back(err_path);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(
        &actions, 0, stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    std::vector<std::string> argv_s = {LOGFOLD_BINARY, "replay"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    RunResult r;
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, LOGFOLD_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "cannot run " << LOGFOLD_BINARY;
    if (rc != 0) return r;
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status)) << "killed by a signal: " << status;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = ReadFile(out_path);
    r.err = ReadFile(err_path);
    return r;
  }

  std::string dir_;
  std::vector<std::string> files_;
};

// Each output line must be one JSON object.
std::vector<json> ParseLines(const std::string& out) {
  std::vector<json> events;
  std::size_t pos = 0;
  while (pos < out.size()) {
    const std::size_t nl = out.find('\n', pos);
    EXPECT_NE(nl, std::string::npos) << "output does not end in a newline";
    if (nl == std::string::npos) break;
    const std::string line = out.substr(pos, nl - pos);
    EXPECT_TRUE(json::accept(line)) << line;
    if (json::accept(line)) events.push_back(json::parse(line));
    pos = nl + 1;
  }
  return events;
}

bool IsHex16(const json& v) {
  static const std::regex re("^[0-9a-f]{16}$");
  return v.is_string() && std::regex_match(v.get<std::string>(), re);
}

std::string Lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

TEST_F(ReplayTest, RawInputFolds) {
  std::vector<std::string> lines;
  for (int i = 0; i < 20; ++i) {
    lines.push_back("worker " + std::to_string(i) + " processed " + std::to_string(i * 37) +
                    " items");
    if (i % 4 == 0) lines.push_back("disk quota exceeded on volume " + std::to_string(i));
  }
  lines.push_back("a single unrelated line");
  const std::string input = WriteInput("raw.log", Lines(lines));
  const RunResult r = Run({"--format", "raw", input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<json> events = ParseLines(r.out);
  std::uint64_t firsts = 0, accounted = 0;
  std::map<std::string, json> summary_by_group;
  for (const json& e : events) {
    EXPECT_TRUE(IsHex16(e.at("group_id")));
    EXPECT_TRUE(IsHex16(e.at("fingerprint")));
    if (e.at("kind") == "first") {
      ++firsts;
      ++accounted;
      EXPECT_EQ(e.at("format"), "raw");
    } else {
      ASSERT_EQ(e.at("kind"), "summary");
      EXPECT_EQ(e.at("reason"), "shutdown");  // line i arrives at i ms: all within 10 s
      accounted += e.at("count").get<std::uint64_t>();
      summary_by_group[e.at("group_id").get<std::string>()] = e;
    }
  }
  EXPECT_EQ(firsts, 3u);
  EXPECT_EQ(accounted, lines.size());
  ASSERT_EQ(summary_by_group.size(), 2u);
  std::map<std::string, std::uint64_t> totals;
  for (const auto& [id, s] : summary_by_group) {
    totals[s.at("template").get<std::string>()] = s.at("count_total").get<std::uint64_t>();
  }
  EXPECT_EQ(totals["worker <*> processed <*> items"], 20u);
  EXPECT_EQ(totals["disk quota exceeded on volume <*>"], 5u);
}

TEST_F(ReplayTest, AnnotatePrintsOneObjectPerLineInOrder) {
  std::vector<std::string> lines;
  for (int i = 0; i < 30; ++i) {
    if (i % 3 == 0) {
      lines.push_back("Accepted password for root from 10.0.0." + std::to_string(i) +
                      " port 22 ssh2");
    } else if (i % 3 == 1) {
      lines.push_back("job " + std::to_string(i) + " finished in " + std::to_string(i * 3) + " ms");
    } else {
      lines.push_back("line with \"quotes\" and \\ backslash " + std::to_string(i));
    }
  }
  const std::string input = WriteInput("annotate.log", Lines(lines));
  const RunResult r = Run({"--format", "raw", "--annotate", input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> events = ParseLines(r.out);
  ASSERT_EQ(events.size(), lines.size());
  std::map<int, std::string> cluster_of_template;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json& e = events[i];
    EXPECT_EQ(e.at("kind"), "annotate");
    EXPECT_EQ(e.at("message"), lines[i]);
    EXPECT_TRUE(IsHex16(e.at("cluster_id")));
    EXPECT_TRUE(IsHex16(e.at("fingerprint")));
    EXPECT_TRUE(e.at("template").is_string());
    const std::string cluster = e.at("cluster_id");
    auto [it, inserted] = cluster_of_template.emplace(static_cast<int>(i % 3), cluster);
    EXPECT_EQ(it->second, cluster) << "line " << i << " left its template's cluster";
  }
  EXPECT_EQ(events.back().at("count_total"), 10);
  std::set<std::string> distinct;
  for (const auto& [k, c] : cluster_of_template) distinct.insert(c);
  EXPECT_EQ(distinct.size(), 3u);
}

// Input is read in 1 MiB blocks: lines that straddle a block's end, and one longer than a
// block, come out whole and in order (from a file and from stdin).
TEST_F(ReplayTest, LinesAcrossReadBlocksComeOutWhole) {
  std::vector<std::string> lines;
  for (int i = 0; i < 15000; ++i) {
    lines.push_back("request " + std::to_string(i) + " served in " + std::to_string(i % 97) +
                    " ms by worker-" + std::to_string(i % 13) + " of the frontend pool");
  }
  lines[7000] = "long " + std::string(1200 * 1024, 'x');  // more than a block on its own
  const std::string input = WriteInput("blocks.log", Lines(lines));
  for (const bool from_stdin : {false, true}) {
    const RunResult r = from_stdin ? Run({"--format", "raw", "--annotate"}, input)
                                   : Run({"--format", "raw", "--annotate", input});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<json> events = ParseLines(r.out);
    ASSERT_EQ(events.size(), lines.size()) << (from_stdin ? "stdin" : "file");
    for (std::size_t i = 0; i < lines.size(); ++i) {
      ASSERT_EQ(events[i].at("message"), lines[i]) << "line " << i;
    }
  }
}

TEST_F(ReplayTest, SyslogFormatParsesHeaders) {
  const std::vector<std::string> lines = {
      "<38>Mar  1 00:00:01 web01 sshd[123]: Accepted password for alice from 10.0.0.1 port 22 "
      "ssh2",
      "<38>Mar  1 00:00:02 web01 sshd[123]: Accepted password for alice from 10.0.0.2 port 22 "
      "ssh2",
      "<165>1 2024-03-01T00:00:00.000Z db01.example.com postgres 77 ID47 - checkpoint complete",
  };
  const std::string input = WriteInput("syslog.log", Lines(lines));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--format", "syslog", input}, std::vector<std::string>{input}}) {
    const RunResult r = Run(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<json> events = ParseLines(r.out);
    ASSERT_EQ(events.size(), 3u) << r.out;  // 2 firsts and the sshd summary
    std::map<std::string, json> first_by_host;
    for (const json& e : events) {
      if (e.at("kind") == "first") first_by_host[e.at("host").get<std::string>()] = e;
    }
    ASSERT_EQ(first_by_host.count("web01"), 1u) << r.out;
    ASSERT_EQ(first_by_host.count("db01.example.com"), 1u) << r.out;
    const json& a = first_by_host["web01"];
    EXPECT_EQ(a.at("app"), "sshd");
    EXPECT_EQ(a.at("procid"), "123");
    EXPECT_EQ(a.at("format"), "rfc3164");
    EXPECT_EQ(a.at("message"), "Accepted password for alice from 10.0.0.1 port 22 ssh2");
    const json& b = first_by_host["db01.example.com"];
    EXPECT_EQ(b.at("app"), "postgres");
    EXPECT_EQ(b.at("msgid"), "ID47");
    EXPECT_EQ(b.at("format"), "rfc5424");
    EXPECT_EQ(b.at("time"), "2024-03-01T00:00:00.000000Z");
    EXPECT_EQ(b.at("message"), "checkpoint complete");
    const json& s = events.back();
    EXPECT_EQ(s.at("kind"), "summary");
    EXPECT_EQ(s.at("host"), "web01");
    EXPECT_EQ(s.at("app"), "sshd");
    EXPECT_EQ(s.at("count"), 1);
  }
}

TEST_F(ReplayTest, WindowOptionClosesIdleGroups) {
  std::vector<std::string> lines;
  for (int i = 0; i < 10; ++i) lines.push_back("job " + std::to_string(i) + " done");
  for (int i = 0; i < 10; ++i)
    lines.push_back("disk quota exceeded on volume " + std::to_string(i));
  const std::string input = WriteInput("window.log", Lines(lines));
  // Line i arrives at i ms: the job group is idle for 5 ms by line 14.
  const RunResult r = Run({"--format", "raw", "--window", "5ms", "--max-hold", "1s", input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> events = ParseLines(r.out);
  ASSERT_EQ(events.size(), 4u) << r.out;
  EXPECT_EQ(events[0].at("kind"), "first");
  EXPECT_EQ(events[1].at("kind"), "first");
  EXPECT_EQ(events[2].at("kind"), "summary");
  EXPECT_EQ(events[2].at("reason"), "idle");
  EXPECT_EQ(events[2].at("count_total"), 10);
  EXPECT_EQ(events[3].at("reason"), "shutdown");
}

TEST_F(ReplayTest, StdinIsReadForDashOrNoFile) {
  const std::string input = WriteInput("stdin.log", Lines({"alpha 1", "alpha 2", "alpha 3"}));
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--format", "raw", "-"},
                                               std::vector<std::string>{"--format", "raw"}}) {
    const RunResult r = Run(args, input);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<json> events = ParseLines(r.out);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].at("count_total"), 3);
  }
}

TEST_F(ReplayTest, HelpGoesToStdout) {
  const RunResult r = Run({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: logfold replay"));
  EXPECT_EQ(r.err, "");
}

TEST_F(ReplayTest, BadArgumentsFailWithAMessage) {
  const std::string input = WriteInput("ok.log", "x 1\n");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--bogus", input}, "unknown option --bogus"},
      {{"--max-distance", "99", input}, "--max-distance must be 0..31"},
      {{"--max-distance", "-1", input}, "--max-distance must be 0..31"},
      {{"--window", "abc", input}, "--window"},
      {{"--window", "0s", input}, "--window must be greater than 0"},
      {{"--window"}, "--window needs a duration"},
      {{"--format", "xml", input}, "--format must be raw, syslog or json, got \"xml\""},
      {{"--format"}, "--format needs a value"},
      {{"--scope", "host,planet", input}, "unknown scope field \"planet\""},
      {{"--max-groups", "0", input}, "--max-groups must be"},
      {{"--time", "wall", input}, "--time must be order or event"},
  };
  for (const Case& c : cases) {
    const RunResult r = Run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0];
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args[0];
    EXPECT_THAT(r.err, HasSubstr("usage: logfold replay")) << c.args[0];
    EXPECT_EQ(r.out, "") << c.args[0];
  }
}

TEST_F(ReplayTest, MissingFileExitsOneWithAMessage) {
  const std::string missing = dir_ + "/does-not-exist.log";
  RunResult r = Run({"--format", "raw", missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot open " + missing));
  EXPECT_THAT(r.err, HasSubstr("No such file or directory"));
  // The other files are still replayed.
  const std::string input = WriteInput("present.log", "beta 1\nbeta 2\n");
  r = Run({"--format", "raw", missing, input});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot open " + missing));
  const std::vector<json> events = ParseLines(r.out);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].at("count_total"), 2);
}

TEST_F(ReplayTest, HostileInputStillGivesValidJson) {
  std::string content = "bad \xff\xfe utf8\n";
  content += std::string("nul\0byte 1\n", 11);
  content += "\n";
  content += std::string(200000, 'x') + " 7\n";
  content += "no trailing newline \xc3";
  const std::string input = WriteInput("hostile.log", content);
  const RunResult r = Run({"--format", "raw", "--annotate", input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> events = ParseLines(r.out);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].at("message"), "bad \xef\xbf\xbd\xef\xbf\xbd utf8");
  EXPECT_EQ(events[1].at("message"), std::string("nul\0byte 1", 10));
  EXPECT_EQ(events[2].at("message"), "");
  EXPECT_EQ(events[4].at("message"), "no trailing newline \xef\xbf\xbd");
}

}  // namespace
}  // namespace logfold
