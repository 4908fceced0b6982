// `logfold replay` implementation: argument parsing, line reading with a reused buffer, and an
// EventSink that batches NDJSON into large writes.
#include "daemon/commands/replay_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/units.h"
#include "daemon/runtime/wall_clock.h"
#include "pipeline/event_json.h"
#include "pipeline/syslog_parser.h"
#include "pipeline/window_merger.h"

namespace logfold {
namespace {

// The defaults shown are those of MergerOptions and SyslogParser::Options, where they live.
std::string Usage() {
  const MergerOptions m;
  const SyslogParser::Options p;
  constexpr std::string_view kScopeNames[] = {"host",  "app",      "procid",
                                              "msgid", "severity", "facility"};
  std::string scope;
  for (ScopeField f : m.scope) {
    if (!scope.empty()) scope += ',';
    scope += kScopeNames[static_cast<std::size_t>(f)];
  }
  const char* format = p.format == InputFormat::kRaw    ? "raw"
                       : p.format == InputFormat::kJson ? "json"
                                                        : "syslog";
  return std::string(
             "usage: logfold replay [options] [FILE...]\n"
             "Folds the lines of FILEs (or stdin, also for '-') and writes NDJSON events to "
             "stdout.\n"
             "  --format raw|syslog|json   how to read each line (default ") +
         format +
         ")\n"
         "  --json-field NAME          JSON input: the field holding the message (default " +
         p.json_message_field +
         ")\n"
         "  --annotate                 one event per input line, in order, with its group\n"
         "  --window DUR               close a group after DUR without lines (default " +
         FormatDuration(m.window_us) +
         ")\n"
         "  --max-hold DUR             summarise a busy group every DUR (default " +
         FormatDuration(m.max_hold_us) +
         ")\n"
         "  --max-distance K           SimHash candidate distance, 0..31 (default " +
         std::to_string(m.max_distance) +
         ")\n"
         "  --max-groups N             open groups before the least recent closes (default " +
         std::to_string(m.max_groups) +
         ")\n"
         "  --scope FIELDS             comma list of host,app,procid,msgid,severity,facility,\n"
         "                             or '' to merge across all (default " +
         scope +
         ")\n"
         "  --variable-after N         a word position is learned to be a variable after N\n"
         "                             distinct values in otherwise-identical lines, 0 (off)\n"
         "                             or 3..8 (default " +
         std::to_string(m.variable_after_values) +
         ")\n"
         "  --no-confirm               plain SimHash: join the nearest candidate without checks\n"
         "  --time order|event         clock driving windows: line order (line i arrives i ms\n"
         "                             after the start) or the lines' own timestamps (default "
         "order)\n";
}

class BufferedNdjsonSink : public EventSink {
 public:
  explicit BufferedNdjsonSink(std::FILE* out) : out_(out) { buf_.reserve(kFlushAt + 4096); }
  ~BufferedNdjsonSink() override { Flush(); }
  void OnEvent(const Event& event) override {
    AppendEventJson(event, buf_);
    if (buf_.size() >= kFlushAt) Flush();
  }
  bool Flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), out_) != buf_.size()) {
      ok_ = false;
    }
    buf_.clear();
    return ok_;
  }
  bool ok() const { return ok_ && !std::ferror(out_); }

 private:
  static constexpr std::size_t kFlushAt = 1 << 16;
  std::FILE* out_;
  std::string buf_;
  bool ok_ = true;
};

// Reads newline-terminated lines in large blocks (getline's per-line locking and copying
// was 2 % of a replay's instructions). A line is valid until the next call.
class LineReader {
 public:
  explicit LineReader(std::FILE* in) : fd_(fileno(in)), buf_(kBlock) {}
  bool error() const { return error_; }
  // The next line without its '\n' (the last line may lack one); false at the end or on a
  // read error (error() tells which).
  bool Next(std::string_view& line) {
    for (;;) {
      if (const void* nl = std::memchr(buf_.data() + begin_, '\n', end_ - begin_)) {
        const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(nl) - buf_.data());
        line = std::string_view(buf_.data() + begin_, at - begin_);
        begin_ = at + 1;
        return true;
      }
      if (eof_) {
        if (begin_ == end_) return false;
        line = std::string_view(buf_.data() + begin_, end_ - begin_);
        begin_ = end_;
        return true;
      }
      // Keep the partial line at the front, and room for a block after it.
      std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      if (buf_.size() - end_ < kBlock) buf_.resize(end_ + kBlock);
      // read(), not fread(): a pipe's lines are folded as they come, not a block later.
      const ssize_t n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof_ = true;
        error_ = n < 0;
        continue;
      }
      end_ += static_cast<std::size_t>(n);
    }
  }

 private:
  static constexpr std::size_t kBlock = 1 << 20;
  int fd_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false, error_ = false;
};

bool ParseScope(std::string_view text, std::vector<ScopeField>& out, std::string& error) {
  out.clear();
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    if (name == "host") {
      out.push_back(ScopeField::kHost);
    } else if (name == "app") {
      out.push_back(ScopeField::kApp);
    } else if (name == "procid") {
      out.push_back(ScopeField::kProcId);
    } else if (name == "msgid") {
      out.push_back(ScopeField::kMsgId);
    } else if (name == "severity") {
      out.push_back(ScopeField::kSeverity);
    } else if (name == "facility") {
      out.push_back(ScopeField::kFacility);
    } else {
      error = "unknown scope field \"" + std::string(name) +
              "\" (host, app, procid, msgid, severity, facility)";
      return false;
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return true;
}

bool ParseInt(std::string_view text, long min, long max, long& out) {
  if (text.empty() || text.size() > 18) return false;
  long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max) return false;
  out = v;
  return true;
}

}  // namespace

int RunReplay(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  SyslogParser::Options parser_options;
  MergerOptions merger_options;
  bool event_time = false;
  std::vector<std::string> files;
  auto fail = [&](const std::string& message) {
    std::fprintf(err, "logfold replay: %s\n%s", message.c_str(), Usage().c_str());
    return 2;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& v) {
      if (i + 1 >= args.size()) return false;
      v = args[++i];
      return true;
    };
    std::string v, error;
    if (a == "-h" || a == "--help") {
      std::fputs(Usage().c_str(), out);
      return 0;
    } else if (a == "--annotate") {
      merger_options.annotate = true;
    } else if (a == "--no-confirm") {
      merger_options.confirm = false;
    } else if (a == "--format") {
      if (!value(v)) return fail("--format needs a value");
      if (v == "raw") {
        parser_options.format = InputFormat::kRaw;
      } else if (v == "syslog") {
        parser_options.format = InputFormat::kSyslog;
      } else if (v == "json") {
        parser_options.format = InputFormat::kJson;
      } else {
        return fail("--format must be raw, syslog or json, got \"" + v + "\"");
      }
    } else if (a == "--json-field") {
      if (!value(v) || v.empty()) return fail("--json-field needs a field name");
      parser_options.json_message_field = v;
    } else if (a == "--window" || a == "--max-hold") {
      TimeUs d = 0;
      if (!value(v)) return fail(a + " needs a duration");
      if (!ParseDuration(v, d, error)) return fail(a + ": " + error);
      if (d <= 0) return fail(a + " must be greater than 0");
      (a == "--window" ? merger_options.window_us : merger_options.max_hold_us) = d;
    } else if (a == "--max-distance") {
      long k = 0;
      if (!value(v) || !ParseInt(v, 0, 31, k)) return fail("--max-distance must be 0..31");
      merger_options.max_distance = static_cast<int>(k);
    } else if (a == "--variable-after") {
      long k = 0;
      if (!value(v) || !ParseInt(v, 0, 8, k) || k == 1 || k == 2) {
        return fail("--variable-after must be 0 (off) or 3..8");
      }
      merger_options.variable_after_values = static_cast<std::size_t>(k);
    } else if (a == "--max-groups") {
      long n = 0;
      if (!value(v) || !ParseInt(v, 1, 100'000'000, n)) {
        return fail("--max-groups must be 1..100000000");
      }
      merger_options.max_groups = static_cast<std::size_t>(n);
    } else if (a == "--scope") {
      if (!value(v)) return fail("--scope needs a value");
      if (!ParseScope(v, merger_options.scope, error)) return fail("--scope: " + error);
    } else if (a == "--time") {
      if (!value(v) || (v != "order" && v != "event")) return fail("--time must be order or event");
      event_time = v == "event";
    } else if (a.size() > 1 && a[0] == '-' && a != "-") {
      return fail("unknown option " + a);
    } else {
      files.push_back(a);
    }
  }
  if (merger_options.max_hold_us < merger_options.window_us) {
    merger_options.max_hold_us = merger_options.window_us;
  }
  if (files.empty()) files.push_back("-");

  const SyslogParser parser(parser_options);
  WindowMerger merger(merger_options);
  BufferedNdjsonSink sink(out);
  LogRecord record;
  std::int64_t line_no = 0;
  // Line i "arrives" i ms after the replay started: wall-clock based, so that RFC 3164
  // timestamps (which have no year) get a sensible year inferred.
  const TimeUs start_us = WallClockNowUs();
  TimeUs clock = 0;
  int status = 0;
  for (const std::string& path : files) {
    std::FILE* in = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (in == nullptr) {
      std::fprintf(err, "logfold replay: cannot open %s: %s\n", path.c_str(), std::strerror(errno));
      status = 1;
      continue;
    }
    LineReader reader(in);
    std::string_view line;
    while (reader.Next(line)) {
      const TimeUs arrival = start_us + line_no++ * 1000;
      parser.Parse(line, arrival, record);
      if (event_time && record.has_timestamp) clock = std::max(clock, record.timestamp_us);
      merger.Add(record, event_time ? clock : arrival, sink);
    }
    if (reader.error()) {
      std::fprintf(err, "logfold replay: read error on %s\n", path.c_str());
      status = 1;
    }
    if (in != stdin) std::fclose(in);
  }
  merger.FlushAll(sink);
  if (!sink.Flush() || !sink.ok() || std::fflush(out) != 0) {
    std::fprintf(err, "logfold replay: write error: %s\n", std::strerror(errno));
    return 1;
  }
  return status;
}

}  // namespace logfold
