// Variables learned from the stream (MergerOptions::variable_after_values): a free argument
// folds after K distinct words, enumerations keep splitting, scopes keep their own evidence,
// memory stays bounded under unique garbage, and every line is counted exactly once.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/event.h"
#include "pipeline/log_record.h"
#include "pipeline/sibling_table.h"
#include "pipeline/window_merger.h"

namespace logfold {
namespace {

constexpr TimeUs kMs = 1'000;

// Counts what the merger emits: per group, its annotated lines (annotate mode) or the lines
// its first and summary events account for (fold mode), and the templates by group.
class CountingSink : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    template_of[e.group_id] = std::string(e.template_text);
    switch (e.kind) {
      case EventKind::kFirst:
      case EventKind::kAnnotate:
        ++lines_of[e.group_id];
        order.push_back(e.group_id);
        break;
      case EventKind::kSummary:
        lines_of[e.group_id] += e.count;
        break;
      default:
        break;
    }
  }
  std::uint64_t Total() const {
    std::uint64_t n = 0;
    for (const auto& [id, c] : lines_of) n += c;
    return n;
  }
  std::map<std::uint64_t, std::uint64_t> lines_of;
  std::map<std::uint64_t, std::string> template_of;
  std::vector<std::uint64_t> order;  // group of each `first`/`annotate`, in order
};

class Stream {
 public:
  explicit Stream(std::size_t k, bool annotate = true) {
    MergerOptions o;
    o.variable_after_values = k;
    o.annotate = annotate;
    merger = std::make_unique<WindowMerger>(o);
  }
  // Adds a line; returns the group it went to (annotate mode).
  std::uint64_t Add(const std::string& message, const std::string& host = "h1") {
    record.hostname = host;
    record.app_name = "app";
    record.message = message;
    now += kMs;
    merger->Add(record, now, sink);
    return sink.order.empty() ? 0 : sink.order.back();
  }
  std::unique_ptr<WindowMerger> merger;
  CountingSink sink;
  LogRecord record;
  TimeUs now = 1'000'000'000;
};

const std::vector<std::string> kServices = {"chargen", "echo",  "daytime", "discard",
                                            "time",    "ftp",   "telnet",  "finger",
                                            "gopher",  "rsync", "tftp",    "whois"};

TEST(SiblingVariablesTest, FreeArgumentFoldsAfterKDistinctValues) {
  Stream s(6);
  std::set<std::uint64_t> before;
  for (std::size_t i = 0; i < 5; ++i) before.insert(s.Add("xinetd: removing " + kServices[i]));
  EXPECT_EQ(before.size(), 5u) << "five values are not yet evidence of a variable";
  const std::uint64_t anchor = s.Add("xinetd: removing " + kServices[5]);
  EXPECT_EQ(s.merger->last_decision().path, MergeDecision::kSibling);
  EXPECT_EQ(s.merger->last_decision().sibling_values, 6u);
  EXPECT_EQ(s.merger->last_decision().sibling_position, 2);
  EXPECT_EQ(anchor, *s.sink.order.begin()) << "the first sibling takes the lines";
  EXPECT_EQ(s.sink.template_of[anchor], "xinetd: removing <*>");
  // New values, and values whose own group opened before the position flipped, join it.
  for (std::size_t i = 6; i < kServices.size(); ++i) {
    EXPECT_EQ(s.Add("xinetd: removing " + kServices[i]), anchor) << kServices[i];
  }
  EXPECT_EQ(s.Add("xinetd: removing echo"), anchor);
  EXPECT_EQ(s.Add("xinetd: removing chargen"), anchor);
  // Other messages of the scope are untouched.
  EXPECT_NE(s.Add("xinetd: starting chargen"), anchor);
}

// Past the first kMaxSiblingPositions words, evidence is kept where a candidate group differs
// from the line in that word alone: a free argument after a long fixed prefix folds too.
TEST(SiblingVariablesTest, ArgumentAfterALongPrefixFoldsAfterKDistinctValues) {
  // (The words before the argument introduce no value: Match alone keeps the lines apart.)
  const std::string prefix = "session manager closed connection for remote peer because of ";
  Stream s(6);
  std::set<std::uint64_t> before;
  for (std::size_t i = 0; i < 5; ++i) before.insert(s.Add(prefix + kServices[i]));
  EXPECT_EQ(before.size(), 5u);
  const std::uint64_t anchor = s.Add(prefix + kServices[5]);
  EXPECT_EQ(s.merger->last_decision().path, MergeDecision::kSibling);
  EXPECT_EQ(s.merger->last_decision().sibling_position, 9);
  EXPECT_EQ(s.merger->last_decision().sibling_values, 6u);
  EXPECT_EQ(anchor, *s.sink.order.begin());
  EXPECT_EQ(s.sink.template_of[anchor], prefix + "<*>");
  for (std::size_t i = 6; i < kServices.size(); ++i) {
    EXPECT_EQ(s.Add(prefix + kServices[i]), anchor) << kServices[i];
  }
  EXPECT_EQ(s.Add(prefix + kServices[1]), anchor);
  // The same words in the middle of a longer line: the position is found there as well.
  const std::string head = "worker pool of the session manager closed connection with ";
  const std::string tail = " because the remote peer went away";
  std::set<std::uint64_t> middle;
  for (std::size_t i = 0; i < 8; ++i) {
    middle.insert(s.Add(head + kServices[i] + tail));
    if (i == 5) {
      EXPECT_EQ(s.merger->last_decision().sibling_position, 9);
    }
  }
  EXPECT_EQ(middle.size(), 5u) << "five groups before the flip; the rest join the first";
  EXPECT_EQ(s.sink.template_of[s.sink.order.back()], head + "<*>" + tail);
}

TEST(SiblingVariablesTest, LongPrefixWithTwoChangingWordsNeverFolds) {
  // Two plain words change in every line: no two lines are siblings, and every line is a
  // group of its own (the crowd is turned away by one check at a rejected word: that check
  // is exact, template_match_test's fixture verifies it on every match).
  Stream s(6);
  // Letter words unique to each line (digits would make them variables).
  auto word = [](std::size_t n, char first) {
    std::string w(1, first);
    for (; n > 0; n /= 26) w += static_cast<char>('a' + n % 26);
    return w;
  };
  std::set<std::uint64_t> groups;
  constexpr std::size_t kLines = 200;
  for (std::size_t i = 0; i < kLines; ++i) {
    groups.insert(s.Add("worker " + word(i, 'q') + " closed the connection because of " +
                        word(i, 'z') + " at once"));
  }
  EXPECT_EQ(groups.size(), kLines);
}

TEST(SiblingVariablesTest, OffMeansEverySingleWordValueSplits) {
  Stream s(0);
  std::set<std::uint64_t> groups;
  for (const std::string& v : kServices) groups.insert(s.Add("Starting daemon " + v));
  EXPECT_EQ(groups.size(), kServices.size());
}

TEST(SiblingVariablesTest, RecurringEnumerationStillSplits) {
  // 2 to 4 values that recur, in separate groups that close and open again (the window
  // passes between rounds): never K distinct values.
  for (std::size_t values = 2; values <= 4; ++values) {
    Stream s(6, /*annotate=*/false);
    const std::vector<std::string> actions = {"ACTION_DOWN", "ACTION_UP", "ACTION_MOVE",
                                              "ACTION_CANCEL"};
    for (int round = 0; round < 20; ++round) {
      for (std::size_t v = 0; v < values; ++v) s.Add("dispatch event " + actions[v] + " to view");
      s.now += 60'000'000;  // past the window: every group closes
      s.merger->Flush(s.now, s.sink);
    }
    std::set<std::string> templates;
    for (const auto& [id, t] : s.sink.template_of) templates.insert(t);
    EXPECT_EQ(templates.size(), values) << values << " values";
    EXPECT_EQ(templates.count("dispatch event <*> to view"), 0u);
    EXPECT_EQ(s.sink.Total(), 20 * values);
  }
}

// Each package passes through the same eight states once (dpkg's `status <state> <package>
// <version>`): in one package's otherwise-identical lines every state is new, but the states
// come back package after package, so their groups have taken other packages' lines. An
// enumeration's values recur across contexts: the position is never learned. The nearest
// case that folds: the same frame where the words are new in every package too.
TEST(SiblingVariablesTest, ValuesThatRecurAcrossContextsStayAnEnumeration) {
  const std::vector<std::string> states = {"half-installed", "unpacked",         "half-configured",
                                           "installed",      "triggers-pending", "triggers-awaited",
                                           "config-files",   "not-installed"};
  const std::vector<std::string> packages = {"libfoo1:amd64", "libbar2:amd64", "libbaz3:i386"};
  Stream s(6);
  std::set<std::uint64_t> groups;
  for (std::size_t k = 0; k < states.size(); ++k) {
    for (const std::string& p : packages) {
      groups.insert(s.Add("status " + states[k] + " " + p + " 1.0-1"));
      EXPECT_NE(s.merger->last_decision().path, MergeDecision::kSibling) << states[k];
      // The first package's seventh state is past K values (the sixth, `triggers-awaited`,
      // names what happened and is never learned): the evidence says why it is no variable
      // (what `logfold explain` prints).
      if (k == 6 && p == packages[0]) {
        EXPECT_NE(s.merger->last_decision().reason.find("also came in lines that differ"),
                  std::string::npos)
            << s.merger->last_decision().reason;
        EXPECT_EQ(s.merger->last_decision().sibling_position, 1);
      }
    }
  }
  EXPECT_EQ(groups.size(), states.size());
  for (const auto& [id, t] : s.sink.template_of)
    EXPECT_EQ(t.find("status <*>"), std::string::npos) << t;

  Stream f(6);
  std::set<std::uint64_t> folded;
  for (std::size_t r = 0; r < states.size(); ++r) {
    for (std::size_t p = 0; p < packages.size(); ++p) {
      const std::size_t w = r * packages.size() + p;  // a new plain word every line
      folded.insert(f.Add("status " + kServices[w % kServices.size()] +
                          std::string(1, static_cast<char>('a' + w / kServices.size())) + " " +
                          packages[p] + " 1.0-1"));
    }
  }
  // Each package's five first words open groups; from the sixth on its lines fold.
  EXPECT_EQ(folded.size(), 5 * packages.size());
  const std::uint64_t last = f.sink.order.back();
  EXPECT_EQ(f.sink.template_of[last], "status <*> <*> 1.0-1");
  EXPECT_EQ(f.sink.lines_of[last], states.size() * packages.size() - 5 * packages.size() + 1);
}

// An enumeration's few values each come back while their groups are open (`VCL_return fetch`,
// `hash`, `fetch`, `deliver`...): when the position reaches K values and more than half of the
// values before the line's own have taken a second line, it is no variable. Values that come
// once each fold (FreeArgumentFoldsAfterKDistinctValues), and so do values that recur but are
// quoted alone, names the program was given (`LoadModule: "glx"` at every start).
TEST(SiblingVariablesTest, ValuesThatComeBackInTheirOwnLinesStayAnEnumeration) {
  const std::vector<std::string> returns = {"fetch", "lookup", "hash",    "purge",
                                            "synth", "pipe",   "deliver", "pass"};
  Stream s(6);
  std::set<std::uint64_t> groups;
  for (std::size_t k = 0; k < returns.size(); ++k) {
    groups.insert(s.Add("VCL_return " + returns[k] + " now"));
    EXPECT_NE(s.merger->last_decision().path, MergeDecision::kSibling) << returns[k];
    if (k == 5) {
      EXPECT_NE(s.merger->last_decision().reason.find("came back in lines of their own"),
                std::string::npos)
          << s.merger->last_decision().reason;
      EXPECT_EQ(s.merger->last_decision().sibling_position, 1);
    }
    groups.insert(s.Add("VCL_return " + returns[k] + " now"));
  }
  EXPECT_EQ(groups.size(), returns.size());

  // One value of five repeated is no enumeration yet: the sixth folds.
  Stream once(6);
  std::set<std::uint64_t> before;
  for (std::size_t i = 0; i < 5; ++i) {
    before.insert(once.Add("xinetd: removing " + kServices[i]));
    if (i == 0) once.Add("xinetd: removing " + kServices[i]);
  }
  EXPECT_EQ(before.size(), 5u);
  once.Add("xinetd: removing " + kServices[5]);
  EXPECT_EQ(once.merger->last_decision().path, MergeDecision::kSibling);

  Stream quoted(6);
  std::set<std::uint64_t> modules;
  for (std::size_t k = 0; k < returns.size(); ++k) {
    modules.insert(quoted.Add("LoadModule: \"" + returns[k] + "\""));
    modules.insert(quoted.Add("LoadModule: \"" + returns[k] + "\""));
  }
  // A name quoted alone right after the word that says what it is is a value from its first
  // line (template_match.cc, CollapseQuotedText): no learning needed, one group.
  EXPECT_EQ(modules.size(), 1u) << "quoted alone after its word, a name is a value";
}

TEST(SiblingVariablesTest, ManyRepeatsBeforeNewValuesMarkAnEnumeration) {
  // Four values seen many times (each round a new group: the window passes) and then new
  // ones: most sightings repeated a value, so the position stays an enumeration.
  Stream s(6);
  const std::vector<std::string> verbs = {"spawn", "destroy", "pause", "resume"};
  for (int round = 0; round < 5; ++round) {
    for (const std::string& v : verbs) s.Add("took 3.5 seconds to " + v + " the instance");
    s.now += 60'000'000;
  }
  std::set<std::uint64_t> late;
  for (const char* v : {"rebuild", "resize", "migrate"}) {
    late.insert(s.Add("took 3.5 seconds to " + std::string(v) + " the instance"));
  }
  EXPECT_EQ(late.size(), 3u);
  EXPECT_NE(s.merger->last_decision().path, MergeDecision::kSibling);
}

// A name written in capitals is a constant of an enumeration (record types, signals, states),
// however many of them come: never a learned variable. The same position in lower case is.
TEST(SiblingVariablesTest, NamesInCapitalsStayAnEnumeration) {
  Stream s(6);
  std::set<std::uint64_t> groups;
  for (const char* type : {"A", "MX", "TXT", "AAAA", "PTR", "SRV", "NS", "ANY", "CAA", "SOA"}) {
    groups.insert(s.Add(std::string("lookup ") + type + " for www.example.org answered"));
  }
  EXPECT_EQ(groups.size(), 10u);
  EXPECT_EQ(s.sink.template_of[s.Add("lookup SOA for www.example.org answered")],
            "lookup SOA for www.example.org answered");
  std::set<std::uint64_t> lower;
  for (const std::string& service : kServices) {
    lower.insert(s.Add("lookup " + service + " for www.example.org answered"));
  }
  EXPECT_LT(lower.size(), kServices.size());
}

// So is a qualified name whose last part is in capitals (net::ERR_TIMED_OUT): the
// enumeration's namespace does not make its constants values. A lower-case last part is.
TEST(SiblingVariablesTest, QualifiedNamesInCapitalsStayAnEnumeration) {
  Stream s(6);
  std::set<std::uint64_t> groups;
  for (const char* error :
       {"ERR_TIMED_OUT", "ERR_CONNECTION_REFUSED", "ERR_NAME_NOT_RESOLVED", "ERR_FILE_NOT_FOUND",
        "ERR_TOO_MANY_REDIRECTS", "ERR_INVALID_HTTP_RESPONSE", "ERR_SSL_PROTOCOL_ERROR"}) {
    groups.insert(s.Add(std::string("Page load failed: net::") + error));
  }
  EXPECT_EQ(groups.size(), 7u);
  std::set<std::uint64_t> lower;
  for (const std::string& service : kServices) {
    lower.insert(s.Add("Page load failed: net::" + service));
  }
  EXPECT_LT(lower.size(), kServices.size());
}

TEST(SiblingVariablesTest, ProtectedWordsNeverTakeTheSlot) {
  Stream s(3);
  std::set<std::uint64_t> groups;
  for (const char* m : {"GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"}) {
    groups.insert(s.Add(std::string("request method ") + m + " accepted"));
  }
  EXPECT_EQ(groups.size(), 6u);
  // A plain word there makes the position a variable, but the protected words' groups keep
  // their lines and none of them becomes <*>.
  const std::uint64_t foo = s.Add("request method foo accepted");
  EXPECT_EQ(groups.count(foo), 0u);
  EXPECT_EQ(s.merger->last_decision().path, MergeDecision::kNew);
  EXPECT_EQ(s.sink.template_of[foo], "request method <*> accepted");
  EXPECT_EQ(s.Add("request method bar accepted"), foo);
  const std::uint64_t get = s.Add("request method GET accepted");
  EXPECT_NE(get, foo);
  EXPECT_EQ(s.sink.template_of[get], "request method GET accepted");
}

// A term written in parts (capitalised parts joined by '-': an IPP operation) is the
// program's word, as a name in capitals is: many of them at one position stay apart. A name
// in parts in lower case or with a digit (a key's, a host's) is a value and still folds.
TEST(SiblingVariablesTest, TermsInPartsStayAnEnumeration) {
  Stream s(6);
  std::set<std::uint64_t> groups;
  for (const char* op :
       {"Get-Jobs", "Send-Document", "Create-Job", "Validate-Job", "CUPS-Get-Default",
        "CUPS-Add-Modify-Printer", "Pause-Printer", "Resume-Printer", "Get-Printer-Attributes"}) {
    groups.insert(s.Add(std::string("Returning IPP reply for ") + op + " from localhost"));
  }
  EXPECT_EQ(groups.size(), 9u);
  EXPECT_EQ(s.sink.template_of[s.Add("Returning IPP reply for Get-Jobs from localhost")],
            "Returning IPP reply for Get-Jobs from localhost");
  std::set<std::uint64_t> hosts;
  for (const char* host : {"web-1", "upd-key", "db-7", "other-key", "edge-9", "mail-4", "log-5"}) {
    hosts.insert(s.Add(std::string("Returning IPP reply for ") + host + " from localhost"));
  }
  EXPECT_LT(hosts.size(), 7u);
}

// A field's name (a word with '=' glued after it) is another part of a record, never a value:
// however many names one place has shown, each keeps its group; words there that name no field
// still fold after K.
TEST(SiblingVariablesTest, FieldNamesNeverTakeTheSlot) {
  Stream s(6);
  std::set<std::uint64_t> groups;
  for (const char* field : {"clients", "jobs", "printers", "subscriptions", "pool-bytes",
                            "pool-strings", "pool-total", "printers-local"}) {
    groups.insert(s.Add(std::string("Report: ") + field + "=17"));
  }
  EXPECT_EQ(groups.size(), 8u);
  EXPECT_EQ(s.sink.template_of[s.Add("Report: jobs=3")], "Report: jobs=<*>");
  // The nearest case: the same words without their '=' fold as any free argument does.
  Stream words_stream(6);
  std::set<std::uint64_t> words;
  for (const char* w : {"clients", "jobs", "printers", "subscriptions", "pool-bytes",
                        "pool-strings", "pool-total", "printers-local"}) {
    words.insert(words_stream.Add(std::string("Report: ") + w + " 17"));
  }
  EXPECT_EQ(words.size(), 5u) << "the sixth value and those after it join the first's group";
}

// So is a word with ':' and a blank before a number (`Fetch: 1795885617.70 0.04`): each label
// keeps its group however many one place has shown; the same labels before a word that is no
// number fold after K as free arguments do.
TEST(SiblingVariablesTest, AFieldNameBeforeColonAndANumberNeverTakesTheSlot) {
  Stream s(6);
  std::set<std::uint64_t> groups;
  for (const char* label :
       {"Start", "Req", "Fetch", "Process", "Resp", "Bereq", "Beresp", "Pipe"}) {
    groups.insert(s.Add(std::string("Timestamp ") + label + ": 1795885617.701181 0.044241"));
  }
  EXPECT_EQ(groups.size(), 8u);
  Stream words_stream(6);
  std::set<std::uint64_t> words;
  for (const char* label :
       {"Start", "Req", "Fetch", "Process", "Resp", "Bereq", "Beresp", "Pipe"}) {
    words.insert(words_stream.Add(std::string("Timestamp ") + label + ": pending now"));
  }
  EXPECT_LT(words.size(), 8u);
}

// A name in lower-case parts whose last part is a verb's past form (`job-completed`,
// `printer-state-changed`) names what happened, a kind: it never takes a learned slot, nor
// joins one that a plain name took; names of parts in that place still fold after K.
TEST(SiblingVariablesTest, NamesOfWhatHappenedStayAnEnumeration) {
  Stream s(6);
  std::set<std::uint64_t> groups;
  for (const char* kind : {"server-started", "printer-state-changed", "printer-added",
                           "printer-config-changed", "printer-modified", "job-progress",
                           "job-completed", "job-created", "printer-deleted", "job-stopped"}) {
    groups.insert(s.Add(std::string("Discarding unused ") + kind + " event..."));
  }
  EXPECT_EQ(groups.size(), 10u);
  EXPECT_EQ(s.sink.template_of[s.Add("Discarding unused job-completed event...")],
            "Discarding unused job-completed event...");
  // The nearest case: names of parts that say nothing happened fold as any free argument.
  Stream names(6);
  std::set<std::uint64_t> folded;
  for (const char* name : {"office-queue", "lab-printer", "front-desk", "back-office", "print-room",
                           "mail-room", "copy-center", "top-floor"}) {
    folded.insert(names.Add(std::string("Discarding unused ") + name + " event..."));
  }
  EXPECT_EQ(folded.size(), 5u);
}

// A field whose values, in the first lines of the scope's most recently active groups, are K
// different words holds names: a protected word as its value (`pool=closed`) is then one more name;
// before that, and for two protected words (`method=GET` / `method=DELETE`), the lines still split.
TEST(SiblingVariablesTest, AFieldOfManyNamesTakesAProtectedWordAsAName) {
  const std::string failed = " target=http://127.0.0.1:9101/m msg=\"Scrape failed\"";
  const auto other_events = [](Stream& s, std::initializer_list<const char*> pools) {
    for (const char* pool : pools) {
      s.Add(std::string("pool=") + pool + " msg=\"Scrape of " + pool + " took too long\"");
    }
  };
  // Four names (K = 6) are not yet evidence: the field may be a state.
  Stream few(6);
  other_events(few, {"slow", "many", "dup"});
  const std::uint64_t few_closed = few.Add("pool=closed" + failed);
  EXPECT_NE(few.Add("pool=files" + failed), few_closed);
  // Seven are: slow, many, dup, garbage, badtype, flip, app.
  Stream s(6);
  other_events(s, {"slow", "many", "dup", "garbage", "badtype", "flip", "app"});
  const std::uint64_t closed = s.Add("pool=closed" + failed);
  EXPECT_EQ(s.Add("pool=files" + failed), closed);
  EXPECT_EQ(s.Add("pool=closed" + failed), closed);
  // Another scope has learned nothing.
  const std::uint64_t other = s.Add("pool=closed" + failed, "h2");
  EXPECT_NE(other, closed);
  EXPECT_NE(s.Add("pool=files" + failed, "h2"), other);
  // A field that has held a text (an error's) holds no names, however many values it had:
  // its words may be the event's.
  Stream texts(6);
  for (const char* e : {"slow", "many", "dup", "garbage", "badtype", "flip", "app"}) {
    texts.Add(std::string("err=") + e + " msg=\"Scrape of " + e + " took too long\"");
  }
  texts.Add("err=\"dial tcp 127.0.0.1:9: connect: connection refused\" msg=\"Send failed\"");
  const std::uint64_t err_closed = texts.Add("err=closed" + failed);
  EXPECT_NE(texts.Add("err=files" + failed), err_closed);
  // Two protected words are two values of an enumeration, whatever the field held.
  Stream states(6);
  other_events(states, {"slow", "many", "dup", "garbage", "badtype", "flip", "app"});
  const std::uint64_t state_closed = states.Add("pool=closed" + failed);
  EXPECT_NE(states.Add("pool=open" + failed), state_closed);
}

TEST(SiblingVariablesTest, ScopesDoNotShareEvidence) {
  Stream s(6);
  // Three values on each of two hosts: six in all, but only three per scope.
  std::set<std::uint64_t> groups;
  for (std::size_t i = 0; i < 3; ++i) groups.insert(s.Add("Starting daemon " + kServices[i], "a"));
  for (std::size_t i = 3; i < 6; ++i) groups.insert(s.Add("Starting daemon " + kServices[i], "b"));
  EXPECT_EQ(groups.size(), 6u);
  EXPECT_LT(s.merger->last_decision().sibling_values, 6u);
  // Three more on host a make six there: it folds, host b's groups stay its own.
  for (std::size_t i = 6; i < 9; ++i) groups.insert(s.Add("Starting daemon " + kServices[i], "a"));
  EXPECT_EQ(s.merger->last_decision().path, MergeDecision::kSibling);
  EXPECT_EQ(groups.size(), 8u);
}

// A word the scope has written as a value key's value (`for user alice`) in lines that folded
// is a value wherever that scope writes it: in parentheses with nothing to key it, or as a
// message's subject. A word never written so, a name in capitals, a plain word in a learned
// name's place and another scope's lines keep theirs.
TEST(SiblingVariablesTest, WordsWrittenAsAKeysValueAreValuesElsewhere) {
  Stream s(6);
  const std::uint64_t cmd = s.Add("(alice) CMD (/usr/bin/backup --full)");
  EXPECT_NE(s.Add("(dave) CMD (/usr/bin/backup --full)"), cmd) << "nothing says dave is a value";
  const std::uint64_t su = s.Add("(to alice) root on pts/0");
  const std::uint64_t opened = s.Add("session opened for user alice");
  for (const char* user : {"bob", "carol", "root"}) {
    EXPECT_EQ(s.Add(std::string("session opened for user ") + user), opened) << user;
  }
  // The nearest that must not fold: a word the scope never wrote as a value, and a name in
  // capitals (an enumeration's constant, even after a key).
  EXPECT_NE(s.Add("(erin) CMD (/usr/bin/backup --full)"), cmd);
  EXPECT_EQ(s.Add("session opened for user ADMIN"), opened);
  EXPECT_NE(s.Add("(ADMIN) CMD (/usr/bin/backup --full)"), cmd);
  // The learned ones are values of the scope: lines of any message fold on them, also into
  // a group that opened with one of them as a plain word.
  EXPECT_EQ(s.Add("(carol) CMD (/usr/bin/backup --full)"), cmd);
  EXPECT_EQ(s.Add("(bob) CMD (/usr/bin/backup --full)"), cmd);
  EXPECT_EQ(s.Add("(to bob) root on pts/1"), su);
  EXPECT_EQ(s.Add("(to alice) carol on pts/2"), su);
  // Another scope's lines keep their words.
  const std::uint64_t other = s.Add("(alice) CMD (/usr/bin/backup --full)", "h2");
  EXPECT_NE(other, cmd);
  EXPECT_NE(s.Add("(bob) CMD (/usr/bin/backup --full)", "h2"), other);
  // A learned name is no host: a plain word does not take its place as it may take a host's
  // (`loaded from bob file` / `loaded from base file`: two events).
  const std::uint64_t loaded = s.Add("loaded from bob file dump.rdb");
  EXPECT_NE(s.Add("loaded from base file dump.rdb"), loaded);
  // A flush forgets them with the groups: its lines fold as a new merger's would.
  s.merger->FlushAll(s.sink);
  const std::uint64_t again = s.Add("(alice) CMD (/usr/bin/backup --full)");
  EXPECT_NE(s.Add("(carol) CMD (/usr/bin/backup --full)"), again);
}

// What a scope's lines have shown to be values holds at every level of their header: the level
// separates the groups (the same line at INFO and at ERROR is two events), not the evidence of
// what varies. A key's value words learned at INFO are values at ERROR, as they are in the same
// lines without a header.
TEST(SiblingVariablesTest, ValueWordsLearnedAtOneLevelAreValuesAtAnother) {
  Stream s(6);
  const std::string t = "2026-11-28 10:00:00 ";
  const std::uint64_t cmd = s.Add(t + "ERROR (alice) CMD (/usr/bin/backup --full)");
  const std::uint64_t opened = s.Add(t + "INFO session opened for user alice");
  for (const char* user : {"bob", "carol", "root"}) {
    EXPECT_EQ(s.Add(t + "INFO session opened for user " + user), opened) << user;
  }
  EXPECT_EQ(s.Add(t + "ERROR (carol) CMD (/usr/bin/backup --full)"), cmd);
  // The level still separates the events: the same line at INFO is another group.
  EXPECT_NE(s.Add(t + "INFO (bob) CMD (/usr/bin/backup --full)"), cmd);
}

// The same for the names a field holds (K distinct words as a `name=` field's value across the
// scope's open groups): groups at any level of the scope count.
TEST(SiblingVariablesTest, NamesAFieldHoldsAtOneLevelCountAtAnother) {
  Stream s(6);
  const std::string warn = "2026-11-28 10:00:00 WARN component=\"scrape manager\" scrape_pool=";
  const std::vector<std::pair<std::string, std::string>> events = {
      {"scrape", "msg=\"Append failed\" err=\"invalid metric type\""},
      {"rules", "msg=\"Out of bounds metric\" err=\"too old\""},
      {"disk", "msg=\"Error on ingesting samples\" err=\"duplicate sample\""},
      {"files", "msg=\"Scrape timed out\" err=\"context deadline exceeded\""},
      {"flip", "msg=\"Target gone stale\" err=\"no response\""},
      {"nxdomain", "msg=\"Lookup failed\" err=\"no such host\""}};
  std::set<std::uint64_t> warned;
  for (const auto& [pool, rest] : events) {
    warned.insert(s.Add(warn + pool + " target=http://127.0.0.1:59100/metrics " + rest));
  }
  EXPECT_EQ(warned.size(), events.size());
  const auto info = [](const std::string& pool) {
    return "2026-11-28 10:00:01 INFO component=\"scrape manager\" scrape_pool=" + pool +
           " target=http://127.0.0.1:59101/metrics msg=\"Scrape failed\" err=\"connection "
           "refused\"";
  };
  const std::uint64_t closed = s.Add(info("closed"));
  EXPECT_EQ(warned.count(closed), 0u);
  EXPECT_EQ(s.Add(info("slow")), closed);
}

TEST(SiblingVariablesTest, CountsStayExactAcrossTheFlip) {
  // Fold mode: every line is in exactly one first or summary, siblings retired at the flip
  // included, through window closes and a final flush.
  Stream s(5, /*annotate=*/false);
  std::mt19937 rng(7);
  std::uint64_t added = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string& v = kServices[rng() % kServices.size()];
    s.Add(rng() % 3 == 0 ? "user alice removed " + v + " from the list" : "xinetd: removing " + v);
    ++added;
    if (i % 700 == 699) s.now += 20'000'000;  // some groups close, some reopen
  }
  s.merger->FlushAll(s.sink);
  EXPECT_EQ(s.sink.Total(), added);
  EXPECT_EQ(s.merger->stats().lines, added);
  std::set<std::string> templates;
  for (const auto& [id, t] : s.sink.template_of) templates.insert(t);
  EXPECT_TRUE(templates.count("xinetd: removing <*>")) << "the free argument folded";
}

TEST(SiblingVariablesTest, MemoryStaysBoundedUnderUniqueGarbage) {
  MergerOptions o;
  o.max_groups = 1000;
  WindowMerger merger(o);
  CountingSink sink;
  LogRecord r;
  r.hostname = "h";
  r.app_name = "a";
  std::mt19937 rng(1);
  auto word = [&] {
    std::string w;
    for (int i = 0, n = 3 + static_cast<int>(rng() % 6); i < n; ++i) {
      w += static_cast<char>('a' + rng() % 26);
    }
    return w;
  };
  std::size_t peak_after_warmup = 0, at_warmup = 0;
  for (int i = 0; i < 40'000; ++i) {
    r.message = word() + " " + word() + " " + word() + " " + word();
    merger.Add(r, 1'000'000 + i, sink);
    if (i == 4'999) at_warmup = merger.MemoryUsage();
    if (i > 4'999) peak_after_warmup = std::max(peak_after_warmup, merger.MemoryUsage());
  }
  // The sibling table is allocated once, at its fixed size; groups are capped by max_groups.
  EXPECT_LE(peak_after_warmup, at_warmup + at_warmup / 4);
  EXPECT_LT(merger.MemoryUsage(), 4u << 20);
  merger.FlushAll(sink);
  EXPECT_EQ(sink.Total(), 40'000u);
}

TEST(SiblingTableTest, EvictsTheLeastRecentlyUsedOfASet) {
  SiblingTable t;
  EXPECT_EQ(t.MemoryUsage(), 0u);
  constexpr std::uint64_t kSets = SiblingTable::kEntries / SiblingTable::kWays;
  // kWays + 1 keys of one set: the first one touched and not used since goes.
  for (std::uint64_t w = 0; w <= SiblingTable::kWays; ++w) {
    SiblingTable::Entry& e = t.Touch(5 + w * kSets);
    SiblingTable::Note(e, 100 + w);
    if (w == 0) continue;
    ASSERT_NE(t.Find(5 + kSets), nullptr);  // keep the second one recently used
  }
  EXPECT_EQ(t.Find(5), nullptr);
  EXPECT_NE(t.Find(5 + kSets), nullptr);
  EXPECT_EQ(t.evictions(), 1u);
  EXPECT_EQ(t.MemoryUsage(), SiblingTable::kEntries * sizeof(SiblingTable::Entry));
}

TEST(SiblingTableTest, KeysDependOnEveryOtherPositionButNotTheWildOne) {
  const std::uint64_t a[] = {11, 22, 33}, b[] = {11, 99, 33}, c[] = {12, 22, 33};
  auto key = [](const std::uint64_t* h, std::size_t i, std::uint64_t scope) {
    std::uint64_t sum = SiblingKeys::Base(scope, 3);
    for (std::size_t j = 0; j < 3; ++j) sum += SiblingKeys::Term(h[j], j);
    return SiblingKeys::Key(sum, h[i], i);
  };
  EXPECT_EQ(key(a, 1, 7), key(b, 1, 7));  // they differ only at the wild position
  EXPECT_NE(key(a, 1, 7), key(c, 1, 7));  // and elsewhere
  EXPECT_NE(key(a, 1, 7), key(a, 1, 8));  // another scope
  EXPECT_NE(key(a, 0, 7), key(a, 1, 7));  // another position
}

}  // namespace
}  // namespace logfold
