// `logfold explain` implementation: runs the real engine (the same WindowMerger as serve and
// replay, default settings) on the two lines and prints what it saw and decided.
#include "daemon/commands/explain_command.h"

#include <optional>

#include "daemon/config/config.h"
#include "pipeline/event_json.h"
#include "pipeline/fingerprinter.h"
#include "pipeline/group_tokens.h"
#include "pipeline/message_header.h"
#include "pipeline/slot_stats.h"
#include "pipeline/syslog_parser.h"
#include "pipeline/template_match.h"
#include "pipeline/tokenizer.h"
#include "pipeline/window_merger.h"

namespace logfold {
namespace {

constexpr char kUsage[] =
    "usage: logfold explain [--config FILE] [--format raw|syslog|json] [--max-distance K] "
    "[--no-confirm] LINE_A [LINE...] LINE_B\n"
    "Shows each line's tokens, classes and weights, both fingerprints, their Hamming distance,\n"
    "whether LINE_B fits the template of LINE_A's group (the reason, and the position that\n"
    "rejected it or the positions it makes vary) and whether LINE_B joins LINE_A's group,\n"
    "with the reason. Lines between A and B go through the engine first, as the stream\n"
    "before B (the evidence of variables learned from the stream: distinct words seen at a\n"
    "position of otherwise-identical lines). Exit 0: merged, 1: not.\n"
    "--config FILE uses that configuration's engine settings (scope, protected_words,\n"
    "max_distance, confirm); the other options override them.\n";

class NullSink : public EventSink {
 public:
  void OnEvent(const Event&) override {}
};

std::string Hex(std::uint64_t v) {
  std::string s;
  AppendHex64(v, s);
  return s;
}

std::uint64_t PrintLine(const char* label, const LogRecord& r, const MergerOptions& o,
                        std::FILE* out) {
  Tokenizer tokenizer(o.tokenizer);
  Fingerprinter fingerprinter(o.weights);
  std::vector<Token> tokens;
  tokenizer.Tokenize(r.message, tokens);
  std::fprintf(out, "line %s: %s\n", label, r.message.c_str());
  if (r.flavor != SyslogFlavor::kNone || r.outcome != ParseOutcome::kOk) {
    std::fprintf(out, "  header: format=%s parse=%s host=%s app=%s%s%s\n",
                 std::string(SyslogFlavorName(r.flavor)).c_str(),
                 std::string(ParseOutcomeName(r.outcome)).c_str(), r.hostname.c_str(),
                 r.app_name.c_str(), r.tag.empty() ? "" : " tag=", r.tag.c_str());
  }
  std::fprintf(out, "  %-4s %-32s %-10s %s\n", "pos", "token", "class", "weight");
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    std::fprintf(out, "  %-4zu %-32s %-10s %.2f\n", i, r.message.substr(t.offset, t.length).c_str(),
                 std::string(TokenClassName(t.cls)).c_str(),
                 static_cast<double>(o.weights.Of(t.cls)));
  }
  const std::uint64_t fp = fingerprinter.Fingerprint(r.message, tokens);
  std::fprintf(out, "  fingerprint %s\n", Hex(fp).c_str());
  return fp;
}

std::string TokenText(std::string_view message, const Token& t) {
  return "\"" + std::string(message.substr(t.offset, t.length)) + "\"";
}

// Matches B against the template of A's group as it stood when B arrived (A's tokens, nothing
// varied yet), with the engine's own matcher, and prints the verdict, the reason and the
// positions: where B was rejected, or which template positions B makes vary.
void PrintTemplateMatch(const LogRecord& a, const LogRecord& b, const MergerOptions& o,
                        std::FILE* out) {
  const Tokenizer tokenizer(o.tokenizer);
  TemplateMatcher matcher;
  matcher.SetWords(o.protected_words, o.value_keys);
  PreparedLine line_a, line_b;
  PrepareLine(tokenizer, matcher, o.infer_header, a.message, line_a);
  PrepareLine(tokenizer, matcher, o.infer_header, b.message, line_b);
  GroupTokens tmpl;
  tmpl.Assign(line_a.tokens, line_a.hashes);
  const MatchResult m = matcher.Match(line_b.View(b.message), {a.message, tmpl});
  std::fprintf(out,
               "template match (B against the template of A's group, %zu vs %zu tokens): %s — %s\n",
               line_b.tokens.size(), tmpl.size(), m.accepted ? "ACCEPT" : "REJECT",
               std::string(MatchReasonText(m.reason)).c_str());
  if (!m.accepted) {
    if (m.position != MatchResult::kNoPosition) {
      std::fprintf(out, "  at B token %u %s\n", m.position,
                   TokenText(b.message, line_b.tokens[m.position]).c_str());
    }
    return;
  }
  for (const TemplateMark& mark : matcher.marks()) {
    const std::string token = TokenText(a.message, tmpl.token(mark.position));
    if (mark.flags & TemplateFlag::kGapAfter) {
      std::fprintf(out, "  template position %u %s: B has extra tokens after it\n", mark.position,
                   token.c_str());
    } else {
      std::fprintf(out, "  template position %u %s varies%s\n", mark.position, token.c_str(),
                   (mark.flags & TemplateFlag::kWild)
                       ? " (another word or shape: left out of the fingerprint)"
                       : "");
      // A bracketed list is one slot whatever its length: say so when one decided.
      const std::size_t a_items = ListItems(a.message, tmpl.token(mark.position));
      const std::size_t b_items = line_b.tokens.size() == tmpl.size()
                                      ? ListItems(b.message, line_b.tokens[mark.position])
                                      : 0;
      if (a_items > 0 || b_items > 0) {
        std::fprintf(
            out,
            "    a list slot decided: %zu item(s) in A, %zu in B (one value whatever its length)\n",
            a_items > 0 ? a_items : 1, b_items > 0 ? b_items : 1);
      }
    }
  }
}

// The evidence outside the template: each line's own header level (the level separates
// groups), and, when B joined, the group's slot statistics as its summaries will show them.
void PrintLevels(const LogRecord& a, const LogRecord& b, const MergerOptions& o, std::FILE* out) {
  if (!o.infer_header) return;
  const MessageHeader ha = ParseMessageHeader(a.message), hb = ParseMessageHeader(b.message);
  if (ha.level.empty() && hb.level.empty()) return;
  const int sa = LevelSeverity(ha.level), sb = LevelSeverity(hb.level);
  std::fprintf(out, "levels: A %s (severity %d), B %s (severity %d)%s\n",
               ha.level.empty() ? "-" : std::string(ha.level).c_str(), sa,
               hb.level.empty() ? "-" : std::string(hb.level).c_str(), sb,
               sa != sb ? ": different levels never share a group" : "");
}

void PrintSlots(const LogRecord& a, const LogRecord& b, MergerOptions o, std::FILE* out) {
  o.annotate = false;  // slot statistics are kept when folding
  WindowMerger merger(o);
  NullSink sink;
  merger.Add(a, 0, sink);
  merger.Add(b, 1000, sink);
  std::uint32_t handle = 0;
  merger.VisitOpenGroups([&](const OpenGroupInfo& g) { handle = g.handle; });
  const std::span<const SlotSummary> slots = merger.OpenGroupSlots(handle);
  if (slots.empty()) return;
  std::fprintf(out,
               "slot statistics (a slot with at most %zu values over at least %llu lines is an "
               "enumeration: a new value there is emitted at once as new_value):\n",
               SlotStats::kEnumValues, static_cast<unsigned long long>(SlotStats::kEnumLines));
  for (const SlotSummary& slot : slots) {
    std::fprintf(out, "  token %u: %llu distinct over %llu lines:", slot.token,
                 static_cast<unsigned long long>(slot.distinct),
                 static_cast<unsigned long long>(slot.lines));
    for (const SlotValueCount& v : slot.top) {
      std::fprintf(out, " \"%s\" x%llu", std::string(v.value).c_str(),
                   static_cast<unsigned long long>(v.count));
    }
    std::fputc('\n', out);
  }
}

}  // namespace

int RunExplain(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  SyslogParser::Options po;
  po.format = InputFormat::kRaw;
  std::optional<std::string> config_path;
  std::optional<int> max_distance;
  bool no_confirm = false;
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, out);
      return 0;
    } else if (a == "--format" && i + 1 < args.size()) {
      const std::string& v = args[++i];
      if (v == "raw") {
        po.format = InputFormat::kRaw;
      } else if (v == "syslog") {
        po.format = InputFormat::kSyslog;
      } else if (v == "json") {
        po.format = InputFormat::kJson;
      } else {
        std::fprintf(err, "logfold explain: --format must be raw, syslog or json\n%s", kUsage);
        return 2;
      }
    } else if (a == "--max-distance" && i + 1 < args.size()) {
      const std::string& v = args[++i];
      char* end = nullptr;
      const long k = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || k < 0 || k > 31) {
        std::fprintf(err, "logfold explain: --max-distance must be 0..31\n%s", kUsage);
        return 2;
      }
      max_distance = static_cast<int>(k);
    } else if (a == "--config" && i + 1 < args.size()) {
      config_path = args[++i];
    } else if (a == "--no-confirm") {
      no_confirm = true;
    } else if (a.size() > 1 && a[0] == '-' && a[1] == '-') {
      std::fprintf(err, "logfold explain: unknown option %s\n%s", a.c_str(), kUsage);
      return 2;
    } else {
      lines.push_back(a);
    }
  }
  if (lines.size() < 2) {
    std::fprintf(err, "logfold explain: needs at least two lines\n%s", kUsage);
    return 2;
  }
  MergerOptions mo;
  if (config_path) {
    Config config;
    std::vector<ConfigError> errors;
    if (!LoadConfigFile(*config_path, config, errors)) {
      std::fprintf(err, "%s: invalid config\n%s", config_path->c_str(),
                   FormatConfigErrors(errors).c_str());
      return 2;
    }
    mo = config.engine.merger;
  }
  mo.annotate = true;
  if (max_distance) mo.max_distance = *max_distance;
  if (no_confirm) mo.confirm = false;
  const SyslogParser parser(po);
  LogRecord a, b, between;
  const TimeUs b_time = static_cast<TimeUs>(lines.size() - 1) * 1000;
  parser.Parse(lines[0], 0, a);
  parser.Parse(lines.back(), b_time, b);
  const std::uint64_t fa = PrintLine("A", a, mo, out);
  const std::uint64_t fb = PrintLine("B", b, mo, out);
  WindowMerger merger(mo);
  merger.ExplainRejections(true);
  NullSink sink;
  merger.Add(a, 0, sink);
  std::uint64_t group_a = 0;
  merger.VisitOpenGroups([&](const OpenGroupInfo& g) { group_a = g.id; });
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
    parser.Parse(lines[i], static_cast<TimeUs>(i) * 1000, between);
    merger.Add(between, static_cast<TimeUs>(i) * 1000, sink);
  }
  if (lines.size() > 2)
    std::fprintf(out, "%zu lines between A and B went first\n", lines.size() - 2);
  merger.Add(b, b_time, sink);
  const MergeDecision& d = merger.last_decision();
  std::fprintf(out, "hamming distance A-B: %d (candidate search radius max_distance=%d)\n",
               HammingDistance(fa, fb), mo.max_distance);
  const bool merged = d.path != MergeDecision::kNew && d.group_id == group_a;
  PrintTemplateMatch(a, b, mo, out);
  const char* path = d.path == MergeDecision::kExact    ? "exact masked shape"
                     : d.path == MergeDecision::kIndex  ? "SimHash index"
                     : d.path == MergeDecision::kBucket ? "same-scope length bucket"
                     : d.path == MergeDecision::kSibling
                         ? "learned variable (otherwise-identical lines)"
                         : "none";
  PrintLevels(a, b, mo, out);
  if (d.sibling_position >= 0) {
    std::fprintf(out,
                 "learned variables: at B token %d, otherwise-identical lines of this scope have "
                 "shown %u distinct word%s; a variable from %zu (engine.variable_after_values)\n",
                 d.sibling_position, d.sibling_values, d.sibling_values == 1 ? "" : "s",
                 mo.variable_after_values);
  }
  if (merged) {
    if (lines.size() == 2) PrintSlots(a, b, mo, out);
    std::fprintf(out, "decision: MERGE via %s — %s (distance to the group's fingerprint %d)\n",
                 path, d.reason.c_str(), HammingDistance(fb, d.group_fingerprint));
  } else {
    std::fprintf(out, "decision: SEPARATE%s — %s (%u candidate%s checked)\n",
                 d.path != MergeDecision::kNew ? " from A (B joined another group)" : "",
                 d.reason.empty() ? "no candidate fitted" : d.reason.c_str(), d.candidates,
                 d.candidates == 1 ? "" : "s");
  }
  return merged ? 0 : 1;
}

}  // namespace logfold
