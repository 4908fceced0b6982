// Tests for TemplateMatcher on its own: which lines fit a template, the reason and position of
// each rejection, the marks an accepted line adds, and that RuledOut never rejects a fit.
#include "pipeline/template_match.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "pipeline/window_merger.h"

namespace logfold {
namespace {

constexpr std::uint8_t kWild = TemplateFlag::kWild;
constexpr std::uint8_t kVaried = TemplateFlag::kVaried;
constexpr std::uint8_t kGapAfter = TemplateFlag::kGapAfter;

using MarkList = std::vector<std::pair<std::uint32_t, std::uint8_t>>;

// A template made from one line (as a group's first line makes it), and lines matched to it
// the way the merger prepares them.
class TemplateMatchTest : public ::testing::Test {
 protected:
  TemplateMatchTest() {
    matcher_.SetWords(MergerOptions::DefaultProtectedWords(), MergerOptions::DefaultValueKeys());
  }

  void SetTemplate(const std::string& first) {
    template_message_ = first;
    PrepareLine(tokenizer_, matcher_, true, template_message_, template_line_);
    template_.Assign(template_line_.tokens, template_line_.hashes);
  }

  MatchResult Match(const std::string& message) {
    message_ = message;
    PrepareLine(tokenizer_, matcher_, true, message_, line_);
    const MatchResult r = matcher_.Match(line_.View(message_), {template_message_, template_});
    // The cheap pre-check may only turn away lines that Match rejects.
    const bool ruled_out = matcher_.RuledOut(line_.View(message_), template_);
    if (ruled_out) {
      EXPECT_FALSE(r.accepted) << "RuledOut rejected a line that fits: " << message;
    }
    // The digest may only turn away lines that RuledOut does.
    RuledOutDigest digest;
    digest.SetLine(line_.View(message_));
    if (digest.RulesOut(RuledOutDigest::Of(template_))) {
      EXPECT_TRUE(ruled_out) << "the digest rules out a line RuledOut keeps: " << message;
    }
    // Nor may a change at a position where the line rejects any change, to a plain word of a
    // template without a DNS name (the merger's rigid-word shortcut leaves the others to
    // Match: a value by its kind may take a plain name in its place).
    const bool dns = TemplateMatcher::HoldsDnsWord(template_line_.View(template_message_));
    for (std::size_t i = 0; i < line_.tokens.size() && template_.size() == line_.tokens.size();
         ++i) {
      if (!(template_.flags(i) & kWild) && template_.hash(i) != line_.hashes[i] &&
          template_.cls(i) == TokenClass::kWord && !dns &&
          matcher_.RejectsAnyChangeAt(line_.View(message_), i)) {
        EXPECT_FALSE(r.accepted) << "a change at " << i << " fits: " << message;
      }
    }
    return r;
  }

  MarkList Marks() const {
    MarkList v;
    for (const TemplateMark& m : matcher_.marks()) v.emplace_back(m.position, m.flags);
    return v;
  }

  Tokenizer tokenizer_;
  TemplateMatcher matcher_;
  std::string template_message_, message_;
  PreparedLine template_line_, line_;
  GroupTokens template_;
};

TEST_F(TemplateMatchTest, NumbersVaryAndAreMarked) {
  SetTemplate("Accepted password for root from 10.0.0.1 port 22 ssh2");
  const MatchResult r = Match("Accepted password for root from 10.0.0.7 port 2201 ssh2");
  EXPECT_TRUE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kFits);
  EXPECT_EQ(r.position, MatchResult::kNoPosition);
  // Same classes, other texts: the positions vary in the template, the fingerprint keeps them.
  EXPECT_EQ(Marks(), (MarkList{{5, kVaried}, {7, kVaried}}));
}

TEST_F(TemplateMatchTest, IdenticalLineFitsWithoutMarks) {
  SetTemplate("session opened for user alice");
  const MatchResult r = Match("session opened for user alice");
  EXPECT_TRUE(r.accepted);
  EXPECT_TRUE(Marks().empty());
}

TEST_F(TemplateMatchTest, WordAfterValueKeyIsAVariable) {
  SetTemplate("session opened for user alice by cron");
  const MatchResult r = Match("session opened for user bob by cron");
  EXPECT_TRUE(r.accepted);
  EXPECT_EQ(Marks(), (MarkList{{4, kVaried | kWild}}));
}

TEST_F(TemplateMatchTest, ProtectedWordRejectsAtItsPosition) {
  SetTemplate("Connection accepted from host 10.1.1.1 on port 8080");
  const MatchResult r = Match("Connection refused from host 10.1.1.1 on port 8080");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kProtectedWordDiffers);
  EXPECT_EQ(r.position, 1u);
  EXPECT_EQ(MatchReasonText(r.reason), "a protected word differs");
}

TEST_F(TemplateMatchTest, PlainWordOutsideValueContextRejects) {
  SetTemplate("worker spawn completed for pool main in 12 ms");
  const MatchResult r = Match("worker destroy completed for pool main in 12 ms");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  EXPECT_EQ(r.position, 1u);
}

// A JSON line's value glued to its key's ':' (`"status":503`) is the value alone, read after its
// key: a status after a status key is a word (another status another event), a size and a
// duration numbers (variables), `true` a literal; a quoted value keeps its ':' (`":8443"`).
TEST_F(TemplateMatchTest, JsonValueAfterItsKeysColonIsTheValueAlone) {
  const std::string line =
      R"({"msg":"handled request","duration":0.000052,"size":0,"status":503,"tls":true,)"
      R"("addr":":8443"})";
  PreparedLine p;
  PrepareLine(tokenizer_, matcher_, true, line, p);
  std::vector<std::pair<std::string, TokenClass>> got;
  for (const Token& t : p.tokens) got.emplace_back(line.substr(t.offset, t.length), t.cls);
  EXPECT_EQ(got,
            (std::vector<std::pair<std::string, TokenClass>>{{"msg", TokenClass::kWord},
                                                             {"handled", TokenClass::kWord},
                                                             {"request", TokenClass::kWord},
                                                             {"duration", TokenClass::kWord},
                                                             {"0.000052", TokenClass::kFloat},
                                                             {"size", TokenClass::kWord},
                                                             {"0", TokenClass::kInteger},
                                                             {"status", TokenClass::kWord},
                                                             {"503", TokenClass::kWord},
                                                             {"tls", TokenClass::kWord},
                                                             {"true", TokenClass::kLiteral},
                                                             {"addr", TokenClass::kWord},
                                                             {":8443", TokenClass::kDigitWord}}));
  SetTemplate(R"({"msg":"handled request","duration":0.000052,"size":0,"status":503})");
  EXPECT_TRUE(
      Match(R"({"msg":"handled request","duration":0.0071,"size":15,"status":503})").accepted);
  EXPECT_FALSE(
      Match(R"({"msg":"handled request","duration":0.0071,"size":15,"status":500})").accepted);
}

// A field's value that is a word and the same word negated by a prefix (healthy / unhealthy)
// is a state's two values, another event; other words there stay values, and so does a
// negated word that is no field's whole value (`zone a (signed)` / `zone a (unsigned)`).
TEST_F(TemplateMatchTest, NegatedStateIsAnotherEvent) {
  SetTemplate(R"({"msg":"event","name":"healthy","id":"6e9c","data":{"host":"127.0.0.1:8490"}})");
  const MatchResult r =
      Match(R"({"msg":"event","name":"unhealthy","id":"7adb","data":{"host":"127.0.0.1:8491"}})");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kNegatedState);
  EXPECT_EQ(r.position, 3u);
  EXPECT_TRUE(
      Match(R"({"msg":"event","name":"alice","id":"7adb","data":{"host":"127.0.0.1:8491"}})")
          .accepted);
  SetTemplate("link state=reachable peer=10.0.0.1");
  EXPECT_EQ(Match("link state=unreachable peer=10.0.0.2").reason, MatchReason::kNegatedState);
  SetTemplate("socket io=blocking peer=10.0.0.1");
  EXPECT_EQ(Match("socket io=nonblocking peer=10.0.0.2").reason, MatchReason::kNegatedState);
  SetTemplate("zone a.test/IN (signed): loaded serial 7");
  EXPECT_TRUE(Match("zone a.test/IN (unsigned): loaded serial 7").accepted);
}

// A JSON string's whole value is data its key names: a digit-bearing id drawn at random is one
// more value whatever its letters; the same words outside a JSON value keep their letters.
TEST_F(TemplateMatchTest, JsonStringValueIdIsAValueWhateverItsLetters) {
  SetTemplate(R"({"msg":"not authenticated","status":401,"err_id":"qetfvj5r9","x":"y"})");
  EXPECT_TRUE(
      Match(R"({"msg":"not authenticated","status":401,"err_id":"5y99xmwwv","x":"y"})").accepted);
  SetTemplate("request failed with id qetfvj5r9 now");
  EXPECT_EQ(Match("request failed with id 5y99xmwwv now").reason, MatchReason::kDigitWordLetters);
}

// A field whose name says it holds an id (`id`, `err_id`, `traceId`) holds values drawn at
// random: a digit-bearing one may change its letters; another field's may not.
TEST_F(TemplateMatchTest, IdFieldsValueIsAValueWhateverItsLetters) {
  SetTemplate("{id=hsqxh39ns} fileserver.notFound (staticfiles.go:579): HTTP 404");
  EXPECT_TRUE(Match("{id=yams85egn} fileserver.notFound (staticfiles.go:579): HTTP 404").accepted);
  SetTemplate("lookup done trace_id=hsqxh39ns in 3 ms");
  EXPECT_TRUE(Match("lookup done trace_id=yams85egn in 3 ms").accepted);
  SetTemplate("lookup done mode=hsqxh39ns in 3 ms");
  EXPECT_EQ(Match("lookup done mode=yams85egn in 3 ms").reason, MatchReason::kDigitWordLetters);
  SetTemplate("lookup done paid=hsqxh39ns in 3 ms");
  EXPECT_EQ(Match("lookup done paid=yams85egn in 3 ms").reason, MatchReason::kDigitWordLetters);
}

// A JSON string's whole value that is an identifier of lower-case words joined by '_' is a
// constant (an event's name), never a value, even where values varied; a plain word is.
TEST_F(TemplateMatchTest, JsonIdentifierValueIsNoValue) {
  SetTemplate(R"({"msg":"event","name":"cert_obtaining","id":"6e9c","origin":"tls"})");
  EXPECT_FALSE(
      Match(R"({"msg":"event","name":"cert_obtained","id":"7adb","origin":"tls"})").accepted);
  EXPECT_FALSE(Match(R"({"msg":"event","name":"alice","id":"7adb","origin":"tls"})").accepted);
  SetTemplate(R"({"msg":"event","name":"alice","id":"6e9c","origin":"tls"})");
  EXPECT_TRUE(Match(R"({"msg":"event","name":"bob","id":"7adb","origin":"tls"})").accepted);
  EXPECT_FALSE(
      Match(R"({"msg":"event","name":"cert_obtained","id":"7adb","origin":"tls"})").accepted);
}

// A JSON object nested as a key's value that holds no object is one value, whatever keys it
// holds in whatever order; one holding a key that names an outcome or a kind keeps its tokens.
TEST_F(TemplateMatchTest, JsonInnermostObjectIsOneValue) {
  SetTemplate(
      R"({"msg":"handled request","request":{"method":"GET","headers":{"Accept":["*/*"],)"
      R"("User-Agent":["curl/7.88.1"]}},"status":404,"resp_headers":{"Server":["Caddy"]}})");
  EXPECT_TRUE(Match(R"({"msg":"handled request","request":{"method":"GET","headers":{"User-Agent":)"
                    R"(["Wget/1.21.3"],"Authorization":[],"Accept":["*/*"]}},"status":404,)"
                    R"("resp_headers":{"Content-Type":[],"Server":["Caddy"],"X-Round":["7"]}})")
                  .accepted);
  EXPECT_FALSE(
      Match(R"({"msg":"handled request","request":{"method":"POST","headers":{"User-Agent":)"
            R"(["Wget/1.21.3"],"Accept":["*/*"]}},"status":404,"resp_headers":{"Server":[]}})")
          .accepted);
  SetTemplate(R"({"msg":"open failed","error":{"code":"ENOENT","path":"/srv/a"},"n":1})");
  EXPECT_FALSE(
      Match(R"({"msg":"open failed","error":{"code":"EACCES","path":"/srv/b"},"n":2})").accepted);
}

// A term written in parts (capitalised parts joined by '-') is an operation or a kind, not a
// value, even after a value key (`for`); a name in parts in lower case or with a digit is.
TEST_F(TemplateMatchTest, TermInPartsIsNoValue) {
  SetTemplate("Returning IPP successful-ok for CUPS-Add-Modify-Printer (ipp://h/p/office) from h");
  const MatchResult r = Match("Returning IPP successful-ok for Send-Document (ipp://h/p/a) from h");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kTermDiffers);
  EXPECT_EQ(r.position, 4u);
  EXPECT_FALSE(Match("Returning IPP successful-ok for alice (ipp://h/p/a) from h").accepted);
  SetTemplate("Node to controller channel manager for alter-partition shutdown");
  EXPECT_TRUE(Match("Node to controller channel manager for heartbeat shutdown").accepted);
  EXPECT_TRUE(TemplateMatcher::IsTermInParts("Get-Printer-Attributes"));
  EXPECT_TRUE(TemplateMatcher::IsTermInParts("CUPS-Get-Default"));
  for (const char* w :
       {"job-progress", "Web-1", "-V", "A-", "A--B", "Com.Apple", "Plain", "Get-jobs", "X-2B"}) {
    EXPECT_FALSE(TemplateMatcher::IsTermInParts(w)) << w;
  }
}

// A name in capitals alone in brackets or quotes opened after a blank is a code, an
// enumeration's constant (an outcome, a kind): another code is another event, on either side.
TEST_F(TemplateMatchTest, ACodeAloneInBracketsIsNoValue) {
  SetTemplate("client 10.0.0.1#53: request has invalid signature: tsig verify failure (BADSIG)");
  MatchResult r =
      Match("client 10.0.0.2#41: request has invalid signature: tsig verify failure (BADKEY)");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  EXPECT_FALSE(Match("client 10.0.0.2#41: request has invalid signature: tsig verify failure "
                     "(alice)")
                   .accepted);
  SetTemplate("Unable to create allocation for 'VCPU' on resource provider 'a1'");
  EXPECT_FALSE(
      Match("Unable to create allocation for 'MEMORY_MB' on resource provider 'a1'").accepted);
  // The nearest values: a name in lower case there, a bracket glued to a name (an argument)
  // and a name of parts, whose parts vary.
  SetTemplate("tsig verify failure for key (alice) on zone example");
  EXPECT_TRUE(Match("tsig verify failure for key (bob) on zone example").accepted);
  SetTemplate("Created acceptor and processors for endpoint : ListenerName(CONTROLLER)");
  EXPECT_TRUE(
      Match("Created acceptor and processors for endpoint : ListenerName(PLAINTEXT)").accepted);
  SetTemplate("shut down hung fetch while resolving 'org/DS/IN'");
  EXPECT_TRUE(Match("shut down hung fetch while resolving 'com/NS/IN'").accepted);
}

// A number of at most three digits after `=` and a name that names an outcome (err, rc,
// status, a name ending in code or error) is a result code: another code is another outcome,
// even inside a run of `name=count` fields; any other number there is a value.
TEST_F(TemplateMatchTest, AResultCodeIsNoValue) {
  SetTemplate("conn=1000 op=0 RESULT tag=97 err=0 qtime=0.000012 etime=0.000100 text=");
  MatchResult r = Match("conn=1001 op=3 RESULT tag=97 err=49 qtime=0.000013 etime=0.000107 text=");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kProtectedWordDiffers);
  SetTemplate("child 4121 exited rc=0 after 3 s");
  EXPECT_FALSE(Match("child 4188 exited rc=1 after 9 s").accepted);
  SetTemplate("request done exit_code=0 bytes=120");
  EXPECT_FALSE(Match("request done exit_code=2 bytes=120").accepted);
  // The nearest values: the same code with other numbers changed, a number after another
  // name, and a long number after an outcome's name (not a code of a handful).
  SetTemplate("conn=1000 op=0 RESULT tag=97 err=0 qtime=0.000012 etime=0.000100 text=");
  EXPECT_TRUE(
      Match("conn=1001 op=3 RESULT tag=97 err=0 qtime=0.000013 etime=0.000107 text=").accepted);
  SetTemplate("session opened uid=0 tries=1 by cron");
  EXPECT_TRUE(Match("session opened uid=1000 tries=3 by cron").accepted);
  SetTemplate("request done result=20481 bytes=120");
  EXPECT_TRUE(Match("request done result=73312 bytes=120").accepted);
}

// A field's value ends at its blank: the word after a number written as a field's value (or
// after a list of counters) opens the line's next part, an operation, never the number's unit.
TEST_F(TemplateMatchTest, AWordAfterAFieldsNumberIsNoUnit) {
  SetTemplate("conn=1059 op=1 MOD dn=\"uid=carol,ou=people,dc=example,dc=org\"");
  MatchResult r = Match("conn=1060 op=2 DEL dn=\"uid=carol,ou=people,dc=example,dc=org\"");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  SetTemplate("worker pid=4121 started queue mail");
  EXPECT_FALSE(Match("worker pid=4188 stopped queue mail").accepted);
  // The nearest values: a unit after a number standing alone changes, and the operation
  // itself repeated with another number.
  SetTemplate("cache grew by 512 KB after the flush of queue mail");
  EXPECT_TRUE(Match("cache grew by 3 MB after the flush of queue mail").accepted);
  SetTemplate("conn=1059 op=1 MOD dn=\"uid=carol,ou=people,dc=example,dc=org\"");
  EXPECT_TRUE(Match("conn=1071 op=4 MOD dn=\"uid=carol,ou=people,dc=example,dc=org\"").accepted);
}

// A name in capitals as a field's whole value (`mech=SIMPLE`) is a code, as in JSON
// (`"type":"SNAPSHOT"`): another one is another event; a name in lower case there is a value.
TEST_F(TemplateMatchTest, ACapitalNameAsAFieldsValueIsACode) {
  SetTemplate("conn=1027 op=0 BIND dn=\"cn=manager,dc=example,dc=org\" mech=SIMPLE ssf=0");
  MatchResult r =
      Match("conn=1029 op=0 BIND dn=\"cn=manager,dc=example,dc=org\" mech=EXTERNAL ssf=0");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  SetTemplate("session opened for the user proto=TCP");
  EXPECT_FALSE(Match("session opened for the user proto=UDP").accepted);
  // The nearest values: a name in lower case as the value, and a constant of parts joined by
  // '_', a thing the program enumerates (a segment, a target), which varies as a name does.
  SetTemplate("session opened for the user name=alice");
  EXPECT_TRUE(Match("session opened for the user name=bob").accepted);
  SetTemplate("GetCachedModelScore: segment=TARGET_SEARCH_USER has expired or unavailable result.");
  EXPECT_TRUE(
      Match("GetCachedModelScore: segment=TARGET_LOW_USER_ENGAGEMENT has expired or unavailable "
            "result.")
          .accepted);
}

// A number of at most three digits after a name that says its field is a kind (`type`, `kind`,
// `class`, `method`, `mode`, `tag`) is a kind's code, as an outcome's is.
TEST_F(TemplateMatchTest, AKindsNumberIsACode) {
  SetTemplate("conn=1000 op=0 RESULT tag=97 err=0 qtime=0.000012 etime=0.000100 text=");
  MatchResult r = Match("conn=1001 op=3 RESULT tag=105 err=0 qtime=0.000013 etime=0.000107 text=");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kProtectedWordDiffers);
  SetTemplate("conn=1001 op=0 BIND dn=\"cn=admin,dc=example,dc=org\" method=128");
  EXPECT_FALSE(Match("conn=1002 op=0 BIND dn=\"cn=admin,dc=example,dc=org\" method=163").accepted);
  // The nearest values: the same kind with other numbers changed, and a number after a name
  // that says nothing of a kind (`op`, a sequence number).
  SetTemplate("conn=1001 op=0 BIND dn=\"cn=admin,dc=example,dc=org\" method=128");
  EXPECT_TRUE(Match("conn=1002 op=7 BIND dn=\"cn=admin,dc=example,dc=org\" method=128").accepted);
  SetTemplate("request queued slot=3 by cron");
  EXPECT_TRUE(Match("request queued slot=17 by cron").accepted);
}

// After a key word a verb's past form says what happened to the thing the key names
// (`Job released` / `Job purged`): another event, not the key's value; a name there is one.
TEST_F(TemplateMatchTest, APastFormAfterAKeyIsNoValue) {
  SetTemplate("[Job 3] Job released by user.");
  MatchResult r = Match("[Job 19] Job purged by user.");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  // The nearest values: a name after the key, and a short one ending in "ed".
  SetTemplate("[Job 3] job backup started by cron.");
  EXPECT_TRUE(Match("[Job 19] job restore started by cron.").accepted);
  SetTemplate("[Job 3] job backup started by user ted.");
  EXPECT_TRUE(Match("[Job 19] job backup started by user ned.").accepted);
}

// Right after `for` or `by` a name in capitals is a kind and a name scoped by `:` a rule's:
// another one is another event, on either side; a name in lower case there is a value.
TEST_F(TemplateMatchTest, AKindAfterForIsNoValue) {
  SetTemplate("Over capacity for VCPU on resource provider 8e15. Needed: 200, Used: 0");
  MatchResult r =
      Match("Over capacity for MEMORY_MB on resource provider 8e15. Needed: 2, Used: 0");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  EXPECT_FALSE(
      Match("Over capacity for alice on resource provider 8e15. Needed: 2, Used: 0").accepted);
  SetTemplate("Policy check for placement:usages failed with credentials {'user_id': 'u1'}");
  EXPECT_FALSE(
      Match("Policy check for placement:traits:delete failed with credentials {'user_id': 'u1'}")
          .accepted);
  // The nearest values: a user's name after `for`, and a name in capitals after another key.
  SetTemplate("session opened for alice on resource provider 8e15 by cron");
  EXPECT_TRUE(Match("session opened for bob on resource provider 8e15 by cron").accepted);
  SetTemplate("Overriding API key GOOGLE_API_KEY with value abc from environment variable");
  EXPECT_TRUE(Match("Overriding API key GOOGLE_CLIENT_ID with value abc from environment variable")
                  .accepted);
}

TEST_F(TemplateMatchTest, DigitWordThatChangesItsLettersRejects) {
  SetTemplate("link state changed on interface en0 to active now");
  const MatchResult r = Match("link state changed on interface awdl0 to active now");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kDigitWordLetters);
  EXPECT_EQ(r.position, 5u);
}

// As a field's value on both sides, a name with a number is the field's value whatever its
// letters (mailboxes `Archive0` / `Old8`); written bare, or as an outcome's code, or with
// more than letters and digits, it keeps its letters.
TEST_F(TemplateMatchTest, ANameWithANumberAsAFieldsValueMayChangeItsLetters) {
  SetTemplate("copy from INBOX: box=Archive0, uid=1, size=300, flags=()");
  EXPECT_TRUE(Match("copy from INBOX: box=Old8, uid=2, size=9103, flags=()").accepted);
  SetTemplate("link state changed on interface en0 to active now");
  EXPECT_EQ(Match("link state changed on interface awdl0 to active now").reason,
            MatchReason::kDigitWordLetters);
  SetTemplate("request done: err=E42, uid=1, size=300, flags=()");
  EXPECT_EQ(Match("request done: err=W17, uid=2, size=9103, flags=()").reason,
            MatchReason::kDigitWordLetters);
  SetTemplate("copy from INBOX: box=Archive0, uid=1, size=300, flags=()");
  EXPECT_EQ(Match("copy from INBOX: box=v2.tls1, uid=2, size=9103, flags=()").reason,
            MatchReason::kDigitWordLetters);
}

// Names and versions made of parts (runs joined by '.', '-', ':', '+' or '~', with a digit)
// are one kind of variable whatever their letters and their masked class (a package, a
// version with an epoch, a bare "6.4"); a single name with a number, a plain word, a protected
// word or a bare number there is still another thing.
TEST_F(TemplateMatchTest, NamesAndVersionsMadeOfPartsAreOneKind) {
  SetTemplate("configure libsystemd0:amd64 252.38-1~deb12u1 <none>");
  EXPECT_TRUE(Match("configure less:amd64 590-2.1~deb12u2 <none>").accepted);
  EXPECT_TRUE(Match("configure libgc1:amd64 1:8.2.2-3 <none>").accepted);
  EXPECT_TRUE(Match("configure libjs-sphinxdoc5:all 6.4 <none>").accepted);
  EXPECT_TRUE(Match("configure perl-modules-5.36:all 5.36.0-7+deb12u2 <none>").accepted);
  const MatchResult single = Match("configure eth0 252.38-1~deb12u1 <none>");
  EXPECT_FALSE(single.accepted);
  EXPECT_EQ(single.position, 1u);
  EXPECT_FALSE(Match("configure libsystemd0:amd64 17 <none>").accepted);
  EXPECT_FALSE(Match("configure libsystemd0:amd64 failed <none>").accepted);
  EXPECT_FALSE(Match("configure ACTION_UP 252.38-1~deb12u1 <none>").accepted);
  // A time and a version are still two values of one slot, as a number and a time are.
  SetTemplate("link state of wlan0 changed to up at 12:30:01 after 3 tries");
  EXPECT_FALSE(Match("link state of awdl0 changed to up at 12:30:01 after 3 tries").accepted);
}

// A name qualified in three or more dotted parts may hold '_' in its parts and still is one
// kind (a database's tables); '_' in a name of two parts (a function and a line number) or in
// parts joined otherwise (an enumerated code) keeps the letters apart.
TEST_F(TemplateMatchTest, QualifiedNamesWithUnderscoresAreOneKind) {
  SetTemplate("automatic analyze of table \"template1.pg_catalog.pg_type\"");
  EXPECT_TRUE(Match("automatic analyze of table \"template1.pg_catalog.pg_attribute\"").accepted);
  SetTemplate("tcp_tls_error_callback 1977 __tcp_callback_write_block_invoke.434 error 22");
  const MatchResult function =
      Match("tcp_tls_error_callback 2210 tcp_handle_read_error.790 error 22");
  EXPECT_FALSE(function.accepted);
  EXPECT_EQ(function.reason, MatchReason::kDigitWordLetters);
  SetTemplate("captureLog Received Capture notice id: 14989.759, reason = AuthFail:sts:5_rsn:0");
  const MatchResult code =
      Match("captureLog Received Capture notice id: 14991.914, reason = DeauthInd:sts:0_rsn:7");
  EXPECT_FALSE(code.accepted);
  EXPECT_EQ(code.reason, MatchReason::kDigitWordLetters);
}

// Two message codes are two events, with or without the client field before them; the
// same code with another client and address is one.
TEST_F(TemplateMatchTest, MessageCodesAreTwoEvents) {
  SetTemplate("proxy_util.c(2941): AH10480: http: 127.0.0.1 resolved to 127.0.0.1:58099");
  EXPECT_TRUE(
      Match("proxy_util.c(2941): AH10480: http: 10.0.0.2 resolved to 10.0.0.2:80").accepted);
  EXPECT_FALSE(
      Match("proxy_util.c(2941): AH10479: http: 127.0.0.1 resolved to 127.0.0.1:58099").accepted);
  EXPECT_FALSE(Match("proxy_util.c(2936): [client 127.0.0.1:41792] AH10479: http: 127.0.0.1 "
                     "resolved to 127.0.0.1:58099")
                   .accepted);
  // A name with a short number before the ':' stays a variable.
  SetTemplate("CPU0: Core temperature above threshold, cpu clock throttled (total events 1)");
  EXPECT_TRUE(Match("CPU3: Core temperature above threshold, cpu clock throttled (total events 7)")
                  .accepted);
}

TEST_F(TemplateMatchTest, DigitWordThatChangesOnlyDigitsFits) {
  SetTemplate("Receiving block blk_-1608999687919862906 src: /10.250.19.102:54106");
  const MatchResult r = Match("Receiving block blk_7503483334202473044 src: /10.250.10.6:40524");
  EXPECT_TRUE(r.accepted);
}

TEST_F(TemplateMatchTest, ProtectedWordWhereTheGroupVariedRejects) {
  SetTemplate("job 17 state is queued now");
  // Position 4 ("queued") varied structurally in earlier lines.
  template_.AddFlags(4, kWild | kVaried);
  EXPECT_TRUE(Match("job 18 state is running now").accepted);
  const MatchResult r = Match("job 18 state is failed now");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kProtectedWhereVaried);
  EXPECT_EQ(r.position, 4u);
}

// A protected word as a field's value (right after '=') where the field's words already
// differed is one more value of it (redis's client dump: cmd=ping, cmd=set, then cmd=get);
// where the field kept one value, or without the '=', it is still another event.
TEST_F(TemplateMatchTest, ProtectedWordAsAVariedFieldsValueFits) {
  SetTemplate("Client closed connection id=3 flags=N cmd=ping user=default");
  // cmd= (token 8 after "Client closed connection id 3 flags N cmd") took other words.
  ASSERT_EQ(template_line_.tokens.size(), 11u);
  template_.AddFlags(8, kWild | kVaried);
  EXPECT_TRUE(Match("Client closed connection id=9 flags=N cmd=get user=default").accepted);
  EXPECT_TRUE(Match("Client closed connection id=9 flags=N cmd=debug user=default").accepted);
  // The field that never varied keeps its value: flags=N is no <*>.
  const MatchResult kept =
      Match("Client closed connection id=9 flags=failed cmd=ping user=default");
  EXPECT_FALSE(kept.accepted);
  EXPECT_EQ(kept.reason, MatchReason::kProtectedWordDiffers);
  EXPECT_EQ(kept.position, 6u);
  // Not a field's value: a protected word where the group varied still rejects.
  SetTemplate("Client closed connection id=3 flags=N cmd ping user=default");
  template_.AddFlags(8, kWild | kVaried);
  const MatchResult bare = Match("Client closed connection id=3 flags=N cmd get user=default");
  EXPECT_FALSE(bare.accepted);
  EXPECT_EQ(bare.reason, MatchReason::kProtectedWhereVaried);
  EXPECT_EQ(bare.position, 8u);
}

// Fields the stream has shown to hold names: a protected word as such a field's value, in
// place of a plain word (`pool=closed` / `pool=files`), is one more name; two protected words
// there, another field, a field not learned, or a word that is no field's value still split.
TEST_F(TemplateMatchTest, AProtectedWordAsANameFieldsValueFits) {
  struct Learned final : NameFields {
    bool HoldsNames(std::uint64_t field_hash) override { return field_hash == pool; }
    std::uint64_t pool = 0;
  } learned;
  matcher_.SetNameFields(&learned);
  SetTemplate("pool=closed target=http://h:1/m msg=\"Scrape failed\" err=\"connection refused\"");
  learned.pool = template_line_.hashes[0];
  EXPECT_TRUE(
      Match("pool=files target=http://h:2/m msg=\"Scrape failed\" err=\"connection refused\"")
          .accepted);
  const MatchResult two =
      Match("pool=open target=http://h:2/m msg=\"Scrape failed\" err=\"connection refused\"");
  EXPECT_FALSE(two.accepted);
  EXPECT_EQ(two.reason, MatchReason::kProtectedWordDiffers);
  SetTemplate("pool=files target=http://h:1/m subs=[files] msg=\"Starting provider\" now");
  EXPECT_TRUE(
      Match("pool=closed target=http://h:1/m subs=[files] msg=\"Starting provider\" now").accepted);
  // subs= is not learned to hold names.
  const MatchResult other =
      Match("pool=files target=http://h:1/m subs=[closed] msg=\"Starting provider\" now");
  EXPECT_FALSE(other.accepted);
  EXPECT_EQ(other.reason, MatchReason::kProtectedWordDiffers);
  learned.pool = 0;
  EXPECT_FALSE(
      Match("pool=closed target=http://h:1/m subs=[files] msg=\"Starting provider\" now").accepted);
  matcher_.SetNameFields(nullptr);
}

// The message field's text is the event's (`msg=`, `message=`): its first word heads it as in
// any quoted text; another field's quoted value is a value (`name="alice smith"`).
TEST_F(TemplateMatchTest, TheMessageFieldsFirstWordHeadsIt) {
  SetTemplate("msg=\"Scrape discovery manager stopped\" took=1s");
  const MatchResult r = Match("msg=\"Notify discovery manager stopped\" took=1s");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  EXPECT_EQ(r.position, 1u);
  SetTemplate("name=\"alice smith\" signed the discovery manager form");
  EXPECT_TRUE(Match("name=\"bob smith\" signed the discovery manager form").accepted);
}

// In a line of fields with a message field, a name of a few words quoted as another field's
// value is the context's value, any of its words (`component="discovery manager scrape"` /
// `"... notify"`); the message field's own text, a text with punctuation (an error's) and a
// line without a message field keep their words.
TEST_F(TemplateMatchTest, AContextFieldsQuotedNameIsAValue) {
  SetTemplate(
      "component=\"discovery manager scrape\" msg=\"Discoverer channel closed\" provider=static/0");
  EXPECT_TRUE(Match("component=\"discovery manager notify\" msg=\"Discoverer channel closed\" "
                    "provider=static/0")
                  .accepted);
  SetTemplate("msg=\"discovery manager scrape\" component=\"rule manager\" provider=static/0");
  const MatchResult text =
      Match("msg=\"discovery manager notify\" component=\"rule manager\" provider=static/0");
  EXPECT_FALSE(text.accepted);
  EXPECT_EQ(text.reason, MatchReason::kPlainWordOutOfContext);
  SetTemplate("err=\"dial tcp: connection reset\" msg=\"Scrape failed\" target=http://h:1/m");
  EXPECT_FALSE(
      Match("err=\"dial tcp: connection aborted\" msg=\"Scrape failed\" target=http://h:1/m")
          .accepted);
  SetTemplate("component=\"discovery manager scrape\" went away from the cluster");
  EXPECT_FALSE(Match("component=\"discovery manager notify\" went away from the cluster").accepted);
}

// A changed word right after a value key that both sides write the same way needs, besides
// the key, one more agreeing word (a short line: `user bob authenticated`); after a key
// written otherwise (`address:` / `address space`) it needs two, as any changed word.
TEST_F(TemplateMatchTest, AValueKeysValueNeedsOneMoreAgreeingWord) {
  SetTemplate("user bob authenticated");
  EXPECT_TRUE(Match("user alice authenticated").accepted);
  SetTemplate("user bob");
  const MatchResult alone = Match("user alice");
  EXPECT_FALSE(alone.accepted);
  EXPECT_EQ(alone.reason, MatchReason::kTooFewAgreeingWords);
  SetTemplate("instruction address: 0x00004ed8");
  const MatchResult other_gap = Match("instruction address space");
  EXPECT_FALSE(other_gap.accepted);
  EXPECT_EQ(other_gap.reason, MatchReason::kTooFewAgreeingWords);
}

TEST_F(TemplateMatchTest, TooFewAgreeingWords) {
  SetTemplate("user alice host web1");
  // Two changed values, each right after its key, need three agreeing words; two agree.
  const MatchResult r = Match("user bob host db");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kTooFewAgreeingWords);
  EXPECT_EQ(r.position, MatchResult::kNoPosition);
}

// A variable needs a token that stays: a message that is one name (a function's name, each
// its own log call) does not fold with another name, however the group varied before. A lone
// number does fold with another number: its masked class stays.
TEST_F(TemplateMatchTest, LineMadeOfVariablesOnlyNeedsAKeptToken) {
  SetTemplate("MutablePO2TS::MutablePO2TS");
  MatchResult r = Match("MutablePO2TS::~MutablePO2TS");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kNothingKept);
  template_.AddFlags(0, kWild | kVaried);
  r = Match("AccountReconcilor::~AccountReconcilor");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kNothingKept);
  SetTemplate("17");
  EXPECT_TRUE(Match("42").accepted);
  // One kept token is enough: beside a fixed word, the varied name is a variable.
  SetTemplate("MutablePO2TS::MutablePO2TS done");
  template_.AddFlags(0, kWild | kVaried);
  r = Match("AccountReconcilor::~AccountReconcilor done");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
}

// A word before '=' names a field: where another format has another field, even in brackets
// where values go, the lines are two events. The values after the '=' still vary.
TEST_F(TemplateMatchTest, AFieldNameDoesNotChange) {
  SetTemplate("Histogram: Net.A recorded 3 samples, mean = 0.7");
  template_.AddFlags(1, kWild | kVaried);  // the histogram's name varied before
  MatchResult r = Match("Histogram: Net.B recorded 5 samples, mean = 1.25");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  r = Match("Histogram: Net.B recorded 1 samples (flags = 0x1)");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kFieldNameDiffers);
  EXPECT_EQ(r.position, 5u);
  // The same with the field glued to its '=' on one side only.
  r = Match("Histogram: Net.B recorded 1 samples (flags=0x1)");
  EXPECT_FALSE(r.accepted);
}

// Nor is a field's name part of a value written in more tokens: an extra `, mean = M` is
// another format's field, where an extra number with its unit is one value in more pieces.
TEST_F(TemplateMatchTest, AFieldNameIsNoPartOfAStretch) {
  SetTemplate("Histogram: Net.A recorded 1 samples (flags = 0x1)");
  template_.AddFlags(1, kWild | kVaried);
  MatchResult r = Match("Histogram: Net.B recorded 1 samples, mean = 1280.0 (flags = 0x1)");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kFieldNameDiffers);
  r = Match("Histogram: Net.B recorded 1 (1.16 KB) samples (flags = 0x1)");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  EXPECT_EQ(r.reason, MatchReason::kFitsAligned);
}

// Words in place of words, with a value on one side only, are another clause: the stretch is
// no one value written in more tokens. A value on both sides, or none replaced, still aligns.
TEST_F(TemplateMatchTest, WordsInPlaceOfWordsAreAnotherClause) {
  SetTemplate("InnoDB: Using AVX512 instructions for the checksum");
  MatchResult r = Match("InnoDB: Using io_uring for the checksum");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kStretchWithoutVariable);
  r = Match("InnoDB: Using SSE4 2.0 instructions for the checksum");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
}

// A field printed empty leaves its two separators side by side: the line with a word there is
// the same event, either way round. A word missing with one separator, two words, or a gap that
// is not the word's two gaps joined (padding) is another line.
TEST_F(TemplateMatchTest, AFieldPrintedEmptyIsAValue) {
  SetTemplate("Connect root@localhost on  using Socket");
  MatchResult r = Match("Connect root@localhost on shop using Socket");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  SetTemplate("Connect root@localhost on shop using Socket");
  EXPECT_TRUE(Match("Connect root@localhost on  using Socket").accepted);
  EXPECT_FALSE(Match("Connect root@localhost on using Socket").accepted);
  EXPECT_FALSE(Match("Connect root@localhost on   using Socket").accepted);
  SetTemplate("Connect root@localhost on  using Socket");
  EXPECT_FALSE(Match("Connect root@localhost on shop db using Socket").accepted);
  EXPECT_FALSE(Match("Connect root@localhost on error using Socket").accepted);
}

// Where a token more elsewhere (here a leading "[main]" or a number) makes the counts differ,
// a stretch of as many tokens on each side is tokens that changed in place: a plain word
// there (HTTPS / SOCKS5) is another message, as it is on lines of equal token counts.
TEST_F(TemplateMatchTest, AWordChangedInPlaceBesideAnExtraTokenIsAnotherMessage) {
  SetTemplate("proxy.cse.cuhk.edu.hk open through proxy proxy.cse.cuhk.edu.hk:5070 HTTPS");
  MatchResult r = Match("183.62.156.108 open through proxy socks.cse.cuhk.edu.hk:5070 SOCKS5");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  r = Match("[main] 183.62.156.108 open through proxy socks.cse.cuhk.edu.hk:5070 SOCKS5");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  EXPECT_EQ(r.position, 6u);
  r = Match("183.62.156.108 open through proxy 42 socks.cse.cuhk.edu.hk:5070 SOCKS5");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  // The same extra tokens before the same last word still fold.
  r = Match("[main] 183.62.156.108 open through proxy socks.cse.cuhk.edu.hk:5070 HTTPS");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  EXPECT_EQ(r.reason, MatchReason::kFitsAligned);
  r = Match("183.62.156.108 open through proxy 42 socks.cse.cuhk.edu.hk:5070 HTTPS");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
}

TEST_F(TemplateMatchTest, MultiTokenVariableAligns) {
  SetTemplate("transfer of file report done after 0 bytes in total for job 7");
  const MatchResult r =
      Match("transfer of file report done after 1190 bytes (1.16 KB) in total for job 7");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  EXPECT_EQ(r.reason, MatchReason::kFitsAligned);
  // The extra tokens come after template position 7 ("bytes").
  bool gap = false;
  for (const auto& [pos, flags] : Marks()) gap |= pos == 7 && (flags & kGapAfter) != 0;
  EXPECT_TRUE(gap);
}

// The text after a key's '=' up to the next white space is one value, written in one piece
// or several (cmd=ping, cmd=client|kill); words outside it or spread over spaces are not.
TEST_F(TemplateMatchTest, KeyedValueInSeveralPiecesAligns) {
  SetTemplate("client closed id=7 flags=N cmd=ping user=default resp=2");
  const MatchResult r = Match("client closed id=9 flags=N cmd=client|kill user=default resp=2");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  EXPECT_EQ(r.reason, MatchReason::kFitsAligned);
  EXPECT_TRUE(Match("client closed id=9 flags=N cmd=config|set|x user=default resp=2").accepted);
  // Two words after '=' with a space between are not one value.
  EXPECT_FALSE(Match("client closed id=9 flags=N cmd=client kill user=default resp=2").accepted);
  // A protected word inside still rejects.
  EXPECT_FALSE(Match("client closed id=9 flags=N cmd=client|error user=default resp=2").accepted);
}

// A DNS name (three or more labels, the last lower-case letters) names a host: it may change
// anywhere, digits or not. Two labels on both sides, or a Java class name, are still words.
TEST_F(TemplateMatchTest, DnsNameMayChangeAnywhere) {
  SetTemplate("upstream lookup www.example.org was forwarded to 10.0.0.1 at once");
  EXPECT_TRUE(Match("upstream lookup api.github.com was forwarded to 10.0.0.1 at once").accepted);
  EXPECT_TRUE(
      Match("upstream lookup host-1.lab.internal was forwarded to 10.0.0.1 at once").accepted);
  SetTemplate("upstream lookup example.org was forwarded to 10.0.0.1 at once");
  EXPECT_FALSE(Match("upstream lookup example.net was forwarded to 10.0.0.1 at once").accepted);
  SetTemplate("loaded com.example.Reader from the class path at once");
  EXPECT_FALSE(Match("loaded com.example.Writer from the class path at once").accepted);
  // A label may begin with '_' (a service's: SRV names); names with a '_' inside a label are
  // no DNS names, and two such stay two words.
  SetTemplate("upstream lookup _ldap._tcp.corp.test was forwarded to 10.0.0.1 at once");
  EXPECT_TRUE(
      Match("upstream lookup _kerberos._udp.corp.test was forwarded to 10.0.0.1 at once").accepted);
  SetTemplate("upstream lookup my_pkg.sub_mod.run was forwarded to 10.0.0.1 at once");
  EXPECT_FALSE(
      Match("upstream lookup my_pkg.sub_mod.stop was forwarded to 10.0.0.1 at once").accepted);
}

// A name that is a value by its kind (a DNS name, a host, a name with a number) makes its
// place a value's: another name in lower case there is one more value, keyed by that kind (a
// key's value needs the key and one more agreeing word). The nearest cases keep apart: plain
// words on both sides (an action), a name in capitals (a constant), a protected word, two
// names with numbers whose letters differ, and a name on its own without agreeing words.
TEST_F(TemplateMatchTest, ANameInPlaceOfAValueByItsKindIsAValue) {
  SetTemplate("forwarded svc.corp.example to 127.0.0.2#55355");
  EXPECT_TRUE(Match("forwarded localhost to 127.0.0.1#55354").accepted);
  EXPECT_TRUE(Match("forwarded blocked.test to 127.0.0.1#55354").accepted);
  EXPECT_TRUE(Match("forwarded host-10-1-2-3.isp.example.net to 127.0.0.1#55354").accepted);
  EXPECT_FALSE(Match("forwarded MX to 127.0.0.1#55354").accepted);
  EXPECT_FALSE(Match("forwarded error to 127.0.0.1#55354").accepted);
  SetTemplate("reply api.github.com is 140.82.112.3");
  EXPECT_TRUE(Match("reply www.example.org is 93.184.216.34").accepted);
  SetTemplate("forwarded localhost to 127.0.0.1#55354");
  EXPECT_TRUE(Match("forwarded svc.corp.example to 127.0.0.2#55355").accepted);
  EXPECT_FALSE(Match("forwarded gateway to 127.0.0.1#55354").accepted);  // two plain words

  SetTemplate("Connect app@127.0.0.1 on shop using TCP/IP");
  EXPECT_TRUE(Match("Connect app@127.0.0.1 on nodb1 using TCP/IP").accepted);
  EXPECT_FALSE(Match("Connect app@127.0.0.1 on shopping using TCP/IP").accepted);
  SetTemplate("Connect app@127.0.0.1 on nodb1 using TCP/IP");
  EXPECT_TRUE(Match("Connect app@127.0.0.1 on shop using TCP/IP").accepted);
  EXPECT_FALSE(Match("Connect app@127.0.0.1 on webdb1 using TCP/IP").accepted);  // en0 / awdl0
  EXPECT_FALSE(Match("Connect app@127.0.0.1 on SHOP using TCP/IP").accepted);

  SetTemplate("link eth0 up");
  EXPECT_TRUE(Match("link lo up").accepted);
  SetTemplate("eth0 up");  // a value needs its key's place and one more agreeing word
  EXPECT_FALSE(Match("lo up").accepted);
}

TEST_F(TemplateMatchTest, ExtraFieldAtTheEndIsAnotherMessage) {
  SetTemplate("login succeeded for account 42 via web");
  const MatchResult r = Match("login succeeded for account 42 via web user=alice");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kExtraTokensAtEnd);
}

TEST_F(TemplateMatchTest, TokenCountsTooFarApart) {
  SetTemplate("short line");
  const MatchResult r = Match("short line with very many more tokens than the template ever had");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kTokenCountsTooFar);
  EXPECT_EQ(r.position, MatchResult::kNoPosition);
}

TEST_F(TemplateMatchTest, ListsOfValuesCollapseIntoOneToken) {
  PreparedLine a, b;
  const std::string ma = "removed nodes 1 2 3 from ring";
  const std::string mb = "removed nodes 4, 5, 6, 7, 8 from ring";
  PrepareLine(tokenizer_, matcher_, true, ma, a);
  PrepareLine(tokenizer_, matcher_, true, mb, b);
  ASSERT_EQ(a.tokens.size(), 5u);
  ASSERT_EQ(b.tokens.size(), 5u);
  EXPECT_EQ(ma.substr(a.tokens[2].offset, a.tokens[2].length), "1 2 3");
  SetTemplate(ma);
  EXPECT_TRUE(Match(mb).accepted);
}

// A run of `name=count` pairs is one list of counters whatever its names and length; a pair
// alone, or pairs whose values are no counts (`status=sent`), keep their tokens.
TEST_F(TemplateMatchTest, CounterListsCollapseIntoOneToken) {
  PreparedLine a, b, c;
  const std::string ma = "disconnect from h ehlo=1 mail=1 rcpt=0/1 quit=1 commands=3/4";
  const std::string mb = "disconnect from h helo=1 unknown=0/1 commands=1/2";
  const std::string mc = "disconnect from h ehlo=1 status=sent quit=1";
  PrepareLine(tokenizer_, matcher_, true, ma, a);
  PrepareLine(tokenizer_, matcher_, true, mb, b);
  PrepareLine(tokenizer_, matcher_, true, mc, c);
  ASSERT_EQ(a.tokens.size(), 4u);
  ASSERT_EQ(b.tokens.size(), 4u);
  EXPECT_EQ(ma.substr(a.tokens[3].offset, a.tokens[3].length),
            "ehlo=1 mail=1 rcpt=0/1 quit=1 commands=3/4");
  EXPECT_EQ(a.tokens[3].cls, TokenClass::kInteger);
  EXPECT_EQ(a.hashes, b.hashes);
  EXPECT_EQ(c.tokens.size(), 9u);  // no two counts in a row: every token stays
  SetTemplate(ma);
  EXPECT_TRUE(Match(mb).accepted);
  // The words around the list still decide: another action is another event.
  EXPECT_FALSE(Match("disconnect to h ehlo=1 mail=1 commands=2").accepted);
}

// A name quoted alone right after the word or key that says what it is is a value; a name in
// capitals (a code), a protected word, a quoted text with a blank, and a quoted name after
// another punctuation (an item of a list, `, "x"`) keep their word.
TEST_F(TemplateMatchTest, NameQuotedAloneAfterItsWordIsAValue) {
  SetTemplate("LoadModule: \"glx\"");
  MatchResult r = Match("LoadModule: \"ramdac\"");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  SetTemplate("Acquiring lock \"trait_sync\"");
  r = Match("Acquiring lock \"resource_classes_sync\"");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  SetTemplate("Processing section \"[global]\"");
  r = Match("Processing section \"[public]\"");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  SetTemplate("Acquiring lock \"trait_sync\"");
  EXPECT_FALSE(Match("Releasing lock \"resource_classes_sync\"").accepted);
  SetTemplate("Setting mode \"ASCII\"");
  EXPECT_FALSE(Match("Setting mode \"BINARY\"").accepted);
  SetTemplate("interface state \"up\"");
  EXPECT_FALSE(Match("interface state \"down\"").accepted);
  const auto cls = [this](const std::string& m) {
    PreparedLine p;
    PrepareLine(tokenizer_, matcher_, true, m, p);
    return p.tokens.back().cls;
  };
  EXPECT_EQ(cls("Loading module \"glx\""), TokenClass::kPath);
  EXPECT_EQ(cls("Client 1, \"ftpbob\""), TokenClass::kWord);
}

// A bracketed list of items of one shape, each holding a value, is one token whatever its
// length, and a lone item stands where the list does; a record's fields, a list of words alone
// or of constants, and items of different shapes keep their tokens.
TEST_F(TemplateMatchTest, BracketedListsCollapseIntoOneToken) {
  PreparedLine a;
  const std::string ma =
      "Removed fetcher for partitions Set(payments-0, payments-2, scratch-1, auto-7-1)";
  PrepareLine(tokenizer_, matcher_, true, ma, a);
  ASSERT_EQ(a.tokens.size(), 6u);
  EXPECT_EQ(ma.substr(a.tokens[5].offset, a.tokens[5].length),
            "payments-0, payments-2, scratch-1, auto-7-1");
  SetTemplate(ma);
  EXPECT_TRUE(Match("Removed fetcher for partitions Set(orders-0, orders-1)").accepted);
  MatchResult r = Match("Removed fetcher for partitions Set(audit-0)");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  // Items with a bracket of their own: one shape, `name (count)`.
  SetTemplate(
      "AddKeepAlive(Default, kBrowserWindow). keep_alives=[kBrowserWindow (1), "
      "kHeadlessCommand (1)]");
  r = Match(
      "AddKeepAlive(Default, kBrowserWindow). keep_alives=[kBrowserWindow (1), "
      "kSessionDataDeleter (1), kHeadlessCommand (1)]");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  // The words around the list still decide.
  SetTemplate(ma);
  EXPECT_FALSE(Match("Added fetcher for partitions Set(orders-0, orders-1)").accepted);
  // The nearest cases keep their tokens: no token spans an item's ", ".
  const auto listed = [this](const std::string& m) {
    PreparedLine p;
    PrepareLine(tokenizer_, matcher_, true, m, p);
    for (const Token& t : p.tokens) {
      if (m.substr(t.offset, t.length).find(", ") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(listed("flags (a1, b2) set"));
  EXPECT_FALSE(listed("signal (code=11, addr=0x0) raised"));  // fields
  EXPECT_FALSE(listed("flags (Seen, Deleted) set"));          // words alone: constants
  EXPECT_FALSE(listed("flags (SEEN 1, DELETED 2) set"));      // constants' names
  EXPECT_FALSE(listed("at (order: a1, b2 bytes, linear)"));   // items of different shapes
  EXPECT_FALSE(listed("flags (a1,b2) set"));                  // no ", " between them
}

// A list of counters is printed by one format with one separator: a list whose fields are
// apart by commas and one whose fields are apart by blanks are two formats' (an IMAP and a
// POP3 session's end), and a comma list is no number; two comma lists are one list.
TEST_F(TemplateMatchTest, CounterListsWithOtherSeparatorsAreTwoFormats) {
  SetTemplate("Disconnected: Logged out in=539 out=1714 deleted=1 expunged=1");
  EXPECT_TRUE(Match("Disconnected: Logged out in=32 out=817 deleted=0 expunged=0").accepted);
  MatchResult r = Match("Disconnected: Logged out top=0/0, retr=1/325, del=0/1, size=309");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kFieldNameDiffers);
  SetTemplate("Disconnected: Logged out top=0/0, retr=1/325, del=0/1, size=309");
  EXPECT_TRUE(Match("Disconnected: Logged out top=1/1, retr=0/0, del=0/0, size=0").accepted);
  EXPECT_FALSE(Match("Disconnected: Logged out in=32 out=817 deleted=0 expunged=0").accepted);
  EXPECT_FALSE(Match("Disconnected: Logged out 42").accepted);
}

// A dump of bytes (two hex digits each, apart by blanks, a byte marked in angle brackets among
// them) is one value whatever its bytes, which fall in three classes as tokens; fewer than
// eight such bytes, or decimal numbers alone, stay as they were.
TEST_F(TemplateMatchTest, ByteDumpIsOneValue) {
  PreparedLine a;
  const std::string ma = "Code: 48 89 45 f8 c7 45 ec 00 00 00 00 48 8b <c7> 00 01 00 ff";
  PrepareLine(tokenizer_, matcher_, true, ma, a);
  ASSERT_EQ(a.tokens.size(), 2u);
  EXPECT_EQ(a.tokens[1].cls, TokenClass::kHex);
  SetTemplate(ma);
  const MatchResult r = Match("Code: ec 00 00 00 c7 00 01 00 00 00 48 8b 45 <f8> 48 8d 15 58 79");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  EXPECT_FALSE(Match("Data: 48 89 45 f8 c7 45 ec 00 00 00 00 48 8b <c7> 00 01").accepted);
  PreparedLine b;
  PrepareLine(tokenizer_, matcher_, true, "set 10 to ab cd ef 01 now", b);
  EXPECT_EQ(b.tokens.size(), 8u);  // four bytes: no dump
  PrepareLine(tokenizer_, matcher_, true, "channels 36 40 44 48 52 56 60 64 100 104", b);
  ASSERT_EQ(b.tokens.size(), 2u);  // decimal numbers: one list of numbers
  EXPECT_EQ(b.tokens[1].cls, TokenClass::kInteger);
}

// A `name=value` field present on some lines only, among fields every line has, is an
// optional field of one format string; at the end of the fields, or written with blanks
// around '=', or with a word for its value, it is another message's.
TEST_F(TemplateMatchTest, AnOptionalFieldAmongFieldsAligns) {
  SetTemplate("A1: to=<bob@example.test>, relay=local, delay=0.1, status=sent (delivered)");
  MatchResult r = Match(
      "B2: to=<bob@example.test>, orig_to=<u2@relay.test>, relay=local, delay=0.3, "
      "status=sent (delivered)");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  EXPECT_EQ(r.reason, MatchReason::kFitsAligned);
  // A word in brackets is a value too (a local address).
  r = Match(
      "B3: to=<carol@example.test>, orig_to=<carol>, relay=local, delay=0.3, "
      "status=sent (delivered)");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  // The other way round: the template has the field, the line not.
  SetTemplate("A1: to=<bob@example.test>, orig_to=<u2@relay.test>, relay=local, status=sent");
  r = Match("B2: to=<bob@example.test>, relay=local, status=sent");
  EXPECT_TRUE(r.accepted) << MatchReasonText(r.reason);
  // The nearest cases that stay apart.
  SetTemplate("authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=10.0.0.1");
  EXPECT_FALSE(Match("authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=10.0.0.1 "
                     "user=root")
                   .accepted);
  SetTemplate("A1: to=<bob@example.test>, relay=local, status=sent");
  EXPECT_FALSE(Match("A1: to=<bob@example.test>, mode=fast, relay=local, status=sent").accepted);
  EXPECT_FALSE(Match("A1: to=<bob@example.test>, mean = 0.5, relay=local, status=sent").accepted);
  EXPECT_FALSE(Match("A1: to=<bob@example.test>, relay=local, status=bounced").accepted);
}

// A double-quoted text is one slot whatever its number of words (a user agent, a referer, a
// request target with a query string), after its first word when that is a plain word.
TEST_F(TemplateMatchTest, QuotedTextOfAnyLengthIsOneSlot) {
  PreparedLine a, b;
  const std::string ma = "\"GET /static/page2.html HTTP/1.1\" 200 7 \"-\" \"Wget/1.21.3\"";
  const std::string mb =
      "\"GET /search?q=a&b=2 HTTP/1.1\" 200 7 \"http://example.com/from/1\" \"Mozilla/5.0 (X11; "
      "Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0\"";
  PrepareLine(tokenizer_, matcher_, true, ma, a);
  PrepareLine(tokenizer_, matcher_, true, mb, b);
  ASSERT_EQ(a.tokens.size(), 6u);
  ASSERT_EQ(b.tokens.size(), 6u);
  EXPECT_EQ(mb.substr(b.tokens[0].offset, b.tokens[0].length), "GET");
  // The request target is a path, digits or not, and the rest of the text joins it.
  EXPECT_EQ(ma.substr(a.tokens[1].offset, a.tokens[1].length), "/static/page2.html HTTP/1.1");
  EXPECT_EQ(a.tokens[1].cls, TokenClass::kPath);
  EXPECT_EQ(mb.substr(b.tokens[1].offset, b.tokens[1].length), "/search?q=a&b=2 HTTP/1.1");
  EXPECT_EQ(b.hashes[1], a.hashes[1]);
  EXPECT_EQ(mb.substr(b.tokens[5].offset, b.tokens[5].length),
            "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0");
  // A quoted "-" is an empty value, as "" is.
  EXPECT_EQ(a.tokens[4].cls, TokenClass::kEmpty);
  SetTemplate(ma);
  EXPECT_TRUE(Match(mb).accepted);
  EXPECT_TRUE(Match("\"GET / HTTP/1.0\" 200 7 \"-\" \"-\"").accepted);
}

// A stack frame's call site, a qualified name with its source position in parentheses, is one
// value: the frames of a trace are one event whatever their functions.
TEST_F(TemplateMatchTest, CallSiteWithItsSourcePositionIsOneValue) {
  PreparedLine a;
  const std::string ma = "at org.apache.jsp.index_jsp._jspService(index_jsp.java:148)";
  PrepareLine(tokenizer_, matcher_, true, ma, a);
  ASSERT_EQ(a.tokens.size(), 2u);
  EXPECT_EQ(ma.substr(a.tokens[1].offset, a.tokens[1].length),
            "org.apache.jsp.index_jsp._jspService(index_jsp.java:148");
  EXPECT_EQ(a.tokens[1].cls, TokenClass::kPath);
  SetTemplate(ma);
  EXPECT_TRUE(Match("at org.apache.coyote.http11.Http11Processor.service(Http11Processor.java:410)")
                  .accepted);
  EXPECT_TRUE(Match("at java.base/java.lang.Thread.run(Thread.java:840)").accepted);
  // A frame written with a space and a path, a column after the line (JavaScript).
  SetTemplate("at Server.emit (/srv/app/server.js:10:5)");
  EXPECT_TRUE(Match("at Module._compile (/srv/app/loader.js:1256:14)").accepted);
  // Another word before the frame is another message.
  SetTemplate("at org.apache.jsp.index_jsp._jspService(index_jsp.java:148)");
  EXPECT_FALSE(Match("in org.apache.jsp.index_jsp._jspService(index_jsp.java:148)").accepted);
}

// A native stack frame's call site (glibc's backtrace_symbols: an object, then in parentheses
// a symbol or nothing and a `+0x` offset) is one value of a path's kind, however many tokens
// the symbol's demangled signature holds: the frames of a trace are one event.
TEST_F(TemplateMatchTest, NativeCallSiteIsOneValue) {
  const std::vector<std::string> frames = {
      "11. /lib/x86_64-linux-gnu/libc.so.6(+0x1098ec) [0x7f6fe8b278ec]",
      "4. clickhouse-server(+0x74508) [0x55ffaf2ab508]",
      "6. /lib/x86_64-linux-gnu/libPocoNet.so.80(Poco::Net::TCPServerConnection::start()+0x7) "
      "[0x7f6fe8fd4367]",
      "3. /usr/lib/libapp.so.1(app::Builder::get(std::vector<std::pair<int, int>, "
      "std::allocator<std::pair<int, int> > > const&) const+0x52) [0x7f6feb3ad4a2]"};
  std::vector<PreparedLine> prepared(frames.size());
  for (std::size_t k = 0; k < frames.size(); ++k) {
    PrepareLine(tokenizer_, matcher_, true, frames[k], prepared[k]);
    ASSERT_EQ(prepared[k].tokens.size(), 3u) << frames[k];
    EXPECT_EQ(prepared[k].tokens[1].cls, TokenClass::kPath) << frames[k];
    EXPECT_EQ(prepared[k].hashes, prepared[0].hashes) << frames[k];
  }
  EXPECT_EQ(frames[0].substr(prepared[0].tokens[1].offset, prepared[0].tokens[1].length),
            "/lib/x86_64-linux-gnu/libc.so.6(+0x1098ec");
  // Parentheses that hold no offset, or an offset not glued to a name, are no call site.
  PreparedLine p;
  PrepareLine(tokenizer_, matcher_, true, "11. /lib/libc.so.6(write) [0x7f6fe8b278ec]", p);
  EXPECT_EQ(p.tokens.size(), 4u);
  PrepareLine(tokenizer_, matcher_, true, "11. moved by (+0x1098ec) [0x7f6fe8b278ec]", p);
  EXPECT_EQ(p.tokens.size(), 5u);
  // A word beside the frame still decides: another word is another message.
  SetTemplate("frame 11. /lib/x86_64-linux-gnu/libc.so.6(+0x1098ec) [0x7f6fe8b278ec]");
  EXPECT_TRUE(Match("frame 6. /lib/libPocoNet.so.80(Poco::Net::TCPServerConnection::start()+0x7) "
                    "[0x7f6fe8fd4367]")
                  .accepted);
  EXPECT_FALSE(Match("caller 6. /lib/libPocoNet.so.80(Poco::Net::TCPServerConnection::start()+0x7) "
                     "[0x7f6fe8fd4367]")
                   .accepted);
}

// A size written with its unit of data is one value whatever the unit (`1.00 MiB`, `12.05
// KiB`, `121.00 B`, a rate `9.87 MiB/sec`): the unit changes with the magnitude. Another
// word after the number is no unit of data and still decides.
TEST_F(TemplateMatchTest, ASizeWithItsUnitIsOneValue) {
  PreparedLine p;
  const std::string m = "Read 1 rows, 1.00 B in 0.000 sec., 3.20 KiB/sec.";
  PrepareLine(tokenizer_, matcher_, true, m, p);
  ASSERT_EQ(p.tokens.size(), 8u);
  EXPECT_EQ(m.substr(p.tokens[3].offset, p.tokens[3].length), "1.00 B");
  EXPECT_EQ(m.substr(p.tokens[7].offset, p.tokens[7].length), "3.20 KiB/sec");
  SetTemplate(m);
  EXPECT_TRUE(Match("Read 500 rows, 10.50 KiB in 0.001 sec., 9.87 MiB/sec.").accepted);
  SetTemplate("Peak memory usage (total): 1.00 MiB.");
  EXPECT_TRUE(Match("Peak memory usage (total): 12.05 KiB.").accepted);
  EXPECT_TRUE(Match("Peak memory usage (total): 121 B.").accepted);
  EXPECT_TRUE(Match("Peak memory usage (total): 2 GB.").accepted);
  // Not a unit of data: the count of something else, or the number alone.
  EXPECT_FALSE(Match("Peak memory usage (total): 12 pages.").accepted);
  SetTemplate("cache holds 12 entries now");
  EXPECT_FALSE(Match("cache holds 12 MB now").accepted);
  SetTemplate("cache holds 1.5 MB now");
  EXPECT_FALSE(Match("cache holds 1.5 now").accepted);
}

// A set of one-letter flags written as one field (a sign and capitals, digits in parentheses
// among them) is one value whatever its letters: a query's `+E(0)K`, `-E(0)DK`, `-S` fold.
// The nearest case stays another event: a word in capitals without a sign (a constant: `A` /
// `MX`). (The tokenizer makes the set one token: tokenizer_test.)
TEST_F(TemplateMatchTest, AFlagSetIsOneValue) {
  PreparedLine p;
  const std::string m = "query: www.a.test IN A +E(0)K (127.0.0.1)";
  PrepareLine(tokenizer_, matcher_, true, m, p);
  ASSERT_EQ(p.tokens.size(), 6u);
  EXPECT_EQ(m.substr(p.tokens[4].offset, p.tokens[4].length), "+E(0)K");
  EXPECT_EQ(p.tokens[4].cls, TokenClass::kHex);
  SetTemplate("client 127.0.0.1#53353: query: www.a.test IN A +E(0)K (127.0.0.1)");
  EXPECT_TRUE(Match("client 127.0.0.1#53354: query: www.a.test IN A -E(0)DK (127.0.0.1)").accepted);
  EXPECT_TRUE(Match("client 127.0.0.1#53354: query: www.a.test IN A -S (127.0.0.1)").accepted);
  EXPECT_FALSE(
      Match("client 127.0.0.1#53354: query: www.a.test IN MX +E(0)K (127.0.0.1)").accepted);
}

// A value a message writes twice (a name in parentheses, then again after `query:`) changes
// the same way in both places: one change, which needs the agreeing words of one. Two values
// that change apart still need the words two changes need.
TEST_F(TemplateMatchTest, AValueWrittenTwiceIsOneChange) {
  SetTemplate(
      "client @0x7f6d1af96098 127.0.0.1#33089 (www.example.test): query: www.example.test "
      "IN A (127.0.0.1)");
  EXPECT_TRUE(Match("client @0x7f6d1af97c98 127.0.0.1#59823 (txt.example.test): query: "
                    "txt.example.test IN A (127.0.0.1)")
                  .accepted);
  EXPECT_TRUE(Match("client @0x7f6d1af97c98 127.0.0.1#59823 (example.test): query: example.test "
                    "IN A (127.0.0.1)")
                  .accepted);
  EXPECT_FALSE(Match("client @0x7f6d1af97c98 127.0.0.1#59823 (txt.example.test): query: "
                     "api.example.test IN A (127.0.0.1)")
                   .accepted);
  EXPECT_FALSE(Match("client @0x7f6d1af97c98 127.0.0.1#59823 (txt.example.test): query: "
                     "txt.example.test IN MX (127.0.0.1)")
                   .accepted);
}

// The nearest names that stay words: a function with its arguments (two functions are two
// events), a name without a qualifier, a code in parentheses whose "extension" is capitalised.
TEST_F(TemplateMatchTest, NameBeforeOtherParenthesesStaysAWord) {
  PreparedLine p;
  const std::string args = "calling Widget.resize(width) now";
  PrepareLine(tokenizer_, matcher_, true, args, p);
  EXPECT_EQ(p.tokens.size(), 4u);
  const std::string bare = "calling resize(widget.cc:12) now";
  PrepareLine(tokenizer_, matcher_, true, bare, p);
  EXPECT_EQ(p.tokens.size(), 4u);
  const std::string code = "calling Widget.resize(ImportBailout.Error:1331) now";
  PrepareLine(tokenizer_, matcher_, true, code, p);
  EXPECT_EQ(p.tokens.size(), 4u);
  SetTemplate("job failed in Widget.resize(width) after 3 s");
  EXPECT_FALSE(Match("job failed in Widget.redraw(width) after 3 s").accepted);
}

// A bracketed text that opens a message names its context (a thread, or a component and its
// instance): one slot whatever its words, so one message of two threads, two components or two
// instances is one event.
TEST_F(TemplateMatchTest, LeadingBracketedContextIsOneSlot) {
  PreparedLine a;
  const std::string ma =
      "[LogLoader partition=orders-0, dir=/tmp/data] Reloading from producer snapshot at 12";
  PrepareLine(tokenizer_, matcher_, true, ma, a);
  ASSERT_EQ(a.tokens.size(), 7u);
  EXPECT_EQ(ma.substr(a.tokens[0].offset, a.tokens[0].length),
            "LogLoader partition=orders-0, dir=/tmp/data");
  EXPECT_EQ(a.tokens[0].cls, TokenClass::kPath);
  SetTemplate(ma);
  EXPECT_TRUE(Match("[LogLoader partition=__cluster_metadata-0, dir=/tmp/data] Reloading from "
                    "producer snapshot at 0")
                  .accepted);
  SetTemplate("[kafka-1-raft-outbound-request-thread]: Starting");
  EXPECT_TRUE(Match("[raft-expiration-reaper]: Starting").accepted);
  EXPECT_TRUE(Match("[ExpirationReaper-1-AlterAcls]: Starting").accepted);
  // The words after the context tell two messages apart.
  EXPECT_FALSE(Match("[raft-expiration-reaper]: Stopped").accepted);
  EXPECT_FALSE(Match("[raft-expiration-reaper]: Shutting down").accepted);
  // A thread's bracket and a component's are one slot.
  SetTemplate("[broker-1-to-controller-heartbeat-channel-manager]: Shutting down");
  EXPECT_TRUE(Match("[ReplicaManager broker=1] Shutting down").accepted);
  EXPECT_TRUE(Match("[SocketServer listenerType=BROKER, nodeId=1] Shutting down").accepted);
  // The closing '.' tells two writers apart (`Shutting down` / `Shutting down.`).
  EXPECT_FALSE(Match("[TransactionCoordinator id=1] Shutting down.").accepted);
  SetTemplate("[GroupCoordinator 1]: Shutting down.");
  EXPECT_TRUE(Match("[TransactionCoordinator id=1] Shutting down.").accepted);
}

// A message that closes with a '.' right after a word and one that closes with the word alone
// are two format strings; a '.' inside the message, or after a value, changes nothing.
TEST_F(TemplateMatchTest, ClosingPeriodAfterAWordIsPartOfTheMessage) {
  SetTemplate("Log manager shutting down.");
  EXPECT_TRUE(Match("Log manager shutting down. ").accepted);
  EXPECT_FALSE(Match("Log manager shutting down").accepted);
  SetTemplate("Recovered 3 segments for orders-0.");
  EXPECT_TRUE(Match("Recovered 12 segments for payments-1.").accepted);
  SetTemplate("Loaded config. Starting the log cleaner");
  EXPECT_TRUE(Match("Loaded config. Starting the log cleaner").accepted);
  EXPECT_FALSE(Match("Loaded config. Starting the log cleaner.").accepted);
}

// A bracket later in the message holding fields after a first word prints an object's state:
// one value after that word, whatever flags follow its fields.
TEST_F(TemplateMatchTest, BracketedStateDumpIsOneValueAfterItsKind) {
  SetTemplate(
      "1a failed to send message to 8a because it is unreachable [StateProbe match=0 "
      "next=540 paused inactive]");
  EXPECT_TRUE(Match("1a failed to send message to 75c because it is unreachable [StateProbe "
                    "match=0 next=544 learner paused inactive]")
                  .accepted);
  EXPECT_TRUE(Match("1a failed to send message to fd4 because it is unreachable [StateProbe "
                    "match=545 next=546]")
                  .accepted);
  // The object's kind or state, its first word, stays a word of its own.
  PreparedLine p;
  const std::string line = "unreachable [StateProbe match=0 next=540 paused inactive]";
  PrepareLine(tokenizer_, matcher_, true, line, p);
  ASSERT_EQ(p.tokens.size(), 3u);
  EXPECT_EQ(line.substr(p.tokens[1].offset, p.tokens[1].length), "StateProbe");
  EXPECT_EQ(p.tokens[1].cls, TokenClass::kWord);
  EXPECT_EQ(line.substr(p.tokens[2].offset, p.tokens[2].length),
            "match=0 next=540 paused inactive");
  EXPECT_EQ(p.tokens[2].cls, TokenClass::kPath);
}

// The nearest brackets that keep their tokens: no field inside, a field first (no kind before
// it), words before the first field, a bracket that does not close the message.
TEST_F(TemplateMatchTest, BracketWithoutAKindAndFieldsKeepsItsTokens) {
  SetTemplate("worker stopped [pool main paused inactive]");
  EXPECT_FALSE(Match("worker stopped [pool main paused active]").accepted);
  SetTemplate("worker stopped [state=paused inactive]");
  EXPECT_FALSE(Match("worker stopped [state=paused active]").accepted);
  PreparedLine p;
  for (const std::string line : {"worker stopped [n=1 pool]", "worker stopped [pool main n=1]",
                                 "worker stopped [pool n=1 paused] after 3 s"}) {
    PrepareLine(tokenizer_, matcher_, true, line, p);
    for (const Token& t : p.tokens) EXPECT_NE(t.cls, TokenClass::kPath) << line;
  }
}

// A key whose ':' closes the message printed its value empty: the empty value a key's '=' that
// nothing follows gives, which a value may take the place of.
TEST_F(TemplateMatchTest, KeyClosingTheMessageHasAnEmptyValue) {
  PreparedLine p;
  const std::string bare = "  extension id: ";
  PrepareLine(tokenizer_, matcher_, true, bare, p);
  ASSERT_EQ(p.tokens.size(), 3u);
  EXPECT_EQ(p.tokens[2].cls, TokenClass::kEmpty);
  SetTemplate("  extension id:           (none)");
  EXPECT_TRUE(Match("  extension id: ").accepted);
  SetTemplate("  extension id: ");
  EXPECT_TRUE(Match("  extension id: abcdefgh").accepted);
  // A ':' inside the message, or after a value, adds nothing; another key is another field.
  PrepareLine(tokenizer_, matcher_, true, "Traceback: most recent call last", p);
  EXPECT_EQ(p.tokens.size(), 5u);
  PrepareLine(tokenizer_, matcher_, true, "listening on port 8080:", p);
  EXPECT_EQ(p.tokens.size(), 4u);
  EXPECT_FALSE(Match("  effective extension id: ").accepted);
}

// A line of one setting alone, a name, ' = ' and a value, is a settings dump's row: the name
// and the value are one value each, so every row of a dump is one event.
TEST_F(TemplateMatchTest, SettingsDumpRowIsOneEvent) {
  PreparedLine p;
  const std::string row = "sasl.enabled.mechanisms = [GSSAPI]";
  PrepareLine(tokenizer_, matcher_, true, row, p);
  ASSERT_EQ(p.tokens.size(), 3u);
  EXPECT_EQ(p.tokens[0].cls, TokenClass::kPath);
  EXPECT_EQ(row.substr(p.tokens[1].offset, p.tokens[1].length), "=");
  EXPECT_EQ(row.substr(p.tokens[2].offset, p.tokens[2].length), "GSSAPI");
  SetTemplate("offsets.topic.replication.factor = 1");
  EXPECT_TRUE(Match("group.consumer.migration.policy = disabled").accepted);
  EXPECT_TRUE(Match("sasl.enabled.mechanisms = [GSSAPI]").accepted);
  EXPECT_TRUE(Match("ssl.principal.mapping.rules = DEFAULT").accepted);
  EXPECT_TRUE(Match("remote.log.storage.manager.impl.prefix = rsm.config.").accepted);
  SetTemplate("log_color                      = False");
  EXPECT_TRUE(Match("logging_default_format_string  = %(asctime)s %(process)d %(levelname)s "
                    "%(name)s [-] %(message)s")
                  .accepted);
}

// The nearest lines that are no dump's rows keep their tokens: a program's statement (a
// traceback's source line calls a function), a value that reads as prose, two settings in one
// line, words before the name, a field glued to its '='.
TEST_F(TemplateMatchTest, LineThatIsNoSettingsRowKeepsItsTokens) {
  PreparedLine p;
  for (const std::string line :
       {"    result = conn.execute(", "res = ctx.session.execute(sel).fetchall()",
        "Page = 612x792; 18,36 to 594,756", "job_canceled = 1.",
        "last_pfn = 0xffd7 max_arch_pfn = 0x400000000", "Histogram: mean = 0.7", "cmd=get"}) {
    PrepareLine(tokenizer_, matcher_, true, line, p);
    for (const Token& t : p.tokens) {
      EXPECT_NE(line.substr(t.offset, t.length), "=") << line;
    }
  }
  SetTemplate("    result = conn.execute(");
  EXPECT_FALSE(Match("    ret = self._execute_context(").accepted);
  SetTemplate("log_color = False");
  EXPECT_FALSE(Match("    result = conn.execute(").accepted);
  SetTemplate("job_canceled = 1.");
  EXPECT_FALSE(Match("cups_version = 2.").accepted);
}

// The nearest brackets that stay tokens: one holding a protected word, one name in capitals
// (an enumeration's constant), a bracket that is the whole message, one later in the line.
TEST_F(TemplateMatchTest, BracketOfAConstantOrAProtectedWordStaysTokens) {
  SetTemplate("[OK] Started the disk service");
  EXPECT_FALSE(Match("[FAILED] Started the disk service").accepted);
  SetTemplate("[UFW BLOCK] IN=eth0 OUT= SRC=203.0.4.210 DST=10.0.0.187 LEN=258 PROTO=TCP");
  EXPECT_FALSE(
      Match("[UFW ALLOW] IN=eth0 OUT= SRC=203.0.4.210 DST=10.0.0.187 LEN=258 PROTO=TCP").accepted);
  EXPECT_TRUE(
      Match("[UFW BLOCK] IN=eth0 OUT= SRC=203.0.8.236 DST=10.0.0.53 LEN=1071 PROTO=TCP").accepted);
  SetTemplate("[worker failed] Started the disk service");
  EXPECT_FALSE(Match("[worker ready] Started the disk service").accepted);
  PreparedLine p;
  const std::string whole = "[worker main]";
  PrepareLine(tokenizer_, matcher_, true, whole, p);
  EXPECT_EQ(p.tokens.size(), 2u);
  const std::string later = "Started [worker main] now";
  PrepareLine(tokenizer_, matcher_, true, later, p);
  EXPECT_EQ(p.tokens.size(), 4u);
}

// A proxy's result code with its status (TCP_MISS/200) is an enumeration's value: another
// code or status is another event, while the values around it vary.
TEST_F(TemplateMatchTest, NameWithItsCodeNeverChanges) {
  SetTemplate(
      "27 127.0.0.1 TCP_MISS/200 1718 GET http://www.example.test:8089/static/app.js - "
      "HIER_DIRECT/127.0.0.1 text/css");
  EXPECT_TRUE(Match("3 10.0.0.7 TCP_MISS/200 266 GET http://www.example.test:8089/crash? - "
                    "HIER_DIRECT/10.0.0.9 text/css")
                  .accepted);
  EXPECT_FALSE(Match("3 10.0.0.7 TCP_MISS/500 266 GET http://www.example.test:8089/crash? - "
                     "HIER_DIRECT/10.0.0.9 text/css")
                   .accepted);
  EXPECT_FALSE(Match("3 10.0.0.7 TCP_REFRESH_UNMODIFIED/200 266 GET "
                     "http://www.example.test:8089/crash? - HIER_DIRECT/10.0.0.9 text/css")
                   .accepted);
}

// A '-' standing alone in a line of fields is a columnar log's missing value: a value of any
// kind, a word included, may take its place. A dash between two words or in a line of words is
// prose, and one inside a token is no value: neither licenses a change.
TEST_F(TemplateMatchTest, LoneDashIsAnEmptyValue) {
  const std::string squid =
      "27 10.0.0.1 TCP_MEM_HIT/200 1724 GET http://www.example.test:8089/static/app.js - "
      "HIER_NONE/- text/css";
  PreparedLine line;
  PrepareLine(tokenizer_, matcher_, true, squid, line);
  ASSERT_EQ(line.tokens.size(), 9u);
  EXPECT_EQ(line.tokens[6].cls, TokenClass::kEmpty);  // the user column
  EXPECT_EQ(line.tokens[7].cls, TokenClass::kWord);   // HIER_NONE/-: a dash inside a token
  SetTemplate(squid);
  // A user where the template has none, a media type where it has '-', and the reverse.
  EXPECT_TRUE(Match("0 10.0.0.1 TCP_MEM_HIT/200 1724 GET http://www.example.test:8089/a.js alice "
                    "HIER_NONE/- text/css")
                  .accepted);
  EXPECT_TRUE(Match("0 10.0.0.1 TCP_MEM_HIT/200 1724 GET http://www.example.test:8089/a.js - "
                    "HIER_NONE/- -")
                  .accepted);
  SetTemplate(
      "0 10.0.0.1 TCP_MEM_HIT/200 1724 GET http://www.example.test:8089/a.js alice HIER_NONE/- "
      "text/css");
  EXPECT_TRUE(Match(squid).accepted);
  // The nearest that must not fold: the dash licenses its own column only (another result
  // code elsewhere), and a protected word never takes an empty value's place.
  EXPECT_FALSE(Match("0 10.0.0.1 TCP_MISS/200 1724 GET http://www.example.test:8089/a.js - "
                     "HIER_NONE/- text/css")
                   .accepted);
  SetTemplate("10.0.0.1 7 - 512 GET queued");
  EXPECT_TRUE(Match("10.0.0.2 9 alice 512 GET queued").accepted);
  EXPECT_FALSE(Match("10.0.0.2 9 failed 512 GET queued").accepted);
  // Only in a line of fields (more values than words, dashes aside): a prose message's dash is
  // punctuation, a word.
  PrepareLine(tokenizer_, matcher_, true, "Deleted 3 rows - done", line);
  EXPECT_EQ(line.tokens[3].cls, TokenClass::kWord);
  // A dash between two words is punctuation: another word there is another message.
  SetTemplate("reverse mapping for ns.example.org failed - POSSIBLE BREAK-IN ATTEMPT");
  PrepareLine(tokenizer_, matcher_, true, template_message_, line);
  EXPECT_EQ(line.tokens[5].cls, TokenClass::kWord);
  EXPECT_FALSE(
      Match("reverse mapping for ns.example.org failed with POSSIBLE BREAK-IN ATTEMPT").accepted);
  // Three dashes in a row are three empty fields, not a list of values.
  PrepareLine(tokenizer_, matcher_, true, "GET /a - - - 200", line);
  EXPECT_EQ(line.tokens.size(), 6u);
}

// A word saying a value is missing (none, null, nil) where the other line has a value is that
// value printed empty: a value takes its place as it takes a dash's, also where values varied.
TEST_F(TemplateMatchTest, AWordSayingNothingIsAnEmptyValue) {
  SetTemplate("(to alice) root on none");
  EXPECT_TRUE(Match("(to alice) root on pts/0").accepted);
  SetTemplate("(to alice) root on pts/0");
  EXPECT_TRUE(Match("(to alice) root on NULL").accepted);
  template_.AddFlags(4, kVaried | kWild);
  EXPECT_TRUE(Match("(to alice) root on none").accepted);
  // The nearest that must not fold: another word there is another message's, and so is a
  // word in place of the missing value's word (`none` is a protected word).
  SetTemplate("(to alice) root on pts/0");
  EXPECT_FALSE(Match("(to alice) root on console").accepted);
  SetTemplate("(to alice) root on none");
  EXPECT_FALSE(Match("(to alice) root on some").accepted);
  template_.AddFlags(4, kVaried | kWild);
  EXPECT_FALSE(Match("(to alice) root on off").accepted);
}

// A name the merger learned as a value (WindowMerger's MaskValues: the host class, the word's
// own hash) takes the place of a template's plain word that its scope has learned too, and
// of another learned name; it is no host, so a plain word does not take its place.
TEST_F(TemplateMatchTest, ALearnedNameIsAValueButNoHost) {
  const auto learned = [](PreparedLine& p, std::size_t i) {
    p.tokens[i].cls = TokenClass::kHostPort;  // its hash stays the word's
    p.learned = true;
  };
  ValueWords values;
  SetTemplate("(to root) alice on none");
  PreparedLine root;
  const std::string root_line = "root";
  PrepareLine(tokenizer_, matcher_, true, root_line, root);
  message_ = "(to bob) alice on none";
  PrepareLine(tokenizer_, matcher_, true, message_, line_);
  learned(line_, 1);
  line_.values = &values;
  EXPECT_FALSE(matcher_.Match(line_.View(message_), {template_message_, template_}).accepted)
      << "root is not learned yet";
  values.Note(ValueWords::Key(0, root.hashes[0]));
  EXPECT_TRUE(matcher_.Match(line_.View(message_), {template_message_, template_}).accepted);
  EXPECT_FALSE(matcher_.RuledOut(line_.View(message_), template_));
  // A learned name where the template has a plain word: another event, as against a plain
  // word; a host there (a name with a digit after `from`) may take a name's place.
  template_message_ = "loaded from bob file dump.rdb";
  PrepareLine(tokenizer_, matcher_, true, template_message_, template_line_);
  learned(template_line_, 2);
  template_.Assign(template_line_.tokens, template_line_.hashes);
  EXPECT_FALSE(Match("loaded from base file dump.rdb").accepted);
  EXPECT_TRUE(Match("loaded from node7 file dump.rdb").accepted);
}

// A media type is a value wherever it stands; two other words joined by '/' are not.
TEST_F(TemplateMatchTest, MediaTypeMayChange) {
  SetTemplate(
      "27 10.0.0.1 TCP_MISS/200 1718 GET http://www.example.test:8089/static/app.js - "
      "HIER_DIRECT/10.0.0.9 text/css");
  EXPECT_TRUE(Match("27 10.0.0.1 TCP_MISS/200 3278 GET http://cdn.example.test:8089/img/logo1.png "
                    "- HIER_DIRECT/10.0.0.9 image/png")
                  .accepted);
  SetTemplate("unit 7 stalled on load/store at stage 3");
  EXPECT_FALSE(Match("unit 7 stalled on read/write at stage 3").accepted);
}

// A status before the quoted request (HAProxy's HTTP log) never changes either.
TEST_F(TemplateMatchTest, StatusBeforeTheRequestNeverChanges) {
  SetTemplate(
      "10.0.0.1:42960 [28/Nov/2026:05:07:05.338] web app/app2 0/0/0/63/63 200 1602 - - ---- "
      "1/1/0/0/0 0/0 \"GET /static/app.js HTTP/1.1\"");
  EXPECT_TRUE(Match("10.0.0.1:42961 [28/Nov/2026:05:07:06.110] web app/app1 0/0/1/32/33 200 158 - "
                    "- ---- 1/1/0/0/0 0/0 \"GET /crash?id=5 HTTP/1.1\"")
                  .accepted);
  EXPECT_FALSE(Match("10.0.0.1:42961 [28/Nov/2026:05:07:06.110] web app/app1 0/0/1/32/33 500 158 - "
                     "- ---- 1/1/0/0/0 0/0 \"GET /crash?id=5 HTTP/1.1\"")
                   .accepted);
}

// The nearest lines that must not fold: another method (the text's first word), another status
// after the request line, and a quoted text that differs in a protected word.
TEST_F(TemplateMatchTest, QuotedTextKeepsItsFirstWordAndProtectedWords) {
  SetTemplate("\"GET /static/page2.html HTTP/1.1\" 200 7 \"-\" \"Wget/1.21.3\"");
  EXPECT_FALSE(
      Match("\"DELETE /static/page2.html HTTP/1.1\" 200 7 \"-\" \"Wget/1.21.3\"").accepted);
  EXPECT_FALSE(Match("\"GET /static/page2.html HTTP/1.1\" 500 7 \"-\" \"Wget/1.21.3\"").accepted);
  // A plain first word that is no protected word still heads its text: an action.
  SetTemplate("job 7 ran \"compress /var/log/old 3 times\" in 3 s");
  EXPECT_TRUE(Match("job 8 ran \"compress /var/log/x.1 and /var/log/x.2\" in 5 s").accepted);
  EXPECT_FALSE(Match("job 8 ran \"rotate /var/log/old 3 times\" in 3 s").accepted);
  // So does a single-quoted text's first word (a command and its argument), while a
  // single-quoted name alone still varies.
  SetTemplate("received control channel command 'reload example.test'");
  EXPECT_FALSE(Match("received control channel command 'freeze example.test'").accepted);
  SetTemplate("session opened for user 'alice' by admin");
  EXPECT_TRUE(Match("session opened for user 'bob' by admin").accepted);
  // A key's quoted value is a value from its first word.
  SetTemplate("job 7 ran by=\"alice smith\" in 3 s");
  EXPECT_TRUE(Match("job 8 ran by=\"bob smith\" in 5 s").accepted);
  // A text holding a protected word keeps its words, so they never fold into the slot.
  SetTemplate("job 7 said \"disk /dev/sda1 nearly at capacity\" after 3 s");
  EXPECT_TRUE(Match("job 7 said \"disk /dev/sdb2 is nearly at capacity now\" after 3 s").accepted);
  EXPECT_FALSE(Match("job 7 said \"disk /dev/sda1 write failed\" after 3 s").accepted);
  EXPECT_FALSE(Match("job 7 said \"disk /dev/sda1 error\" after 3 s").accepted);
  // A text of plain words is no value: its words stay tokens.
  SetTemplate("job 7 said \"the disk is nearly at capacity\" after 3 s");
  EXPECT_FALSE(Match("job 7 said \"the disk was replaced\" after 3 s").accepted);
}

// The program's own text in double quotes is no value, on either side of a change and where the
// slot already varied: a laid-out text (`" TVFS??"`), one led by a reply's code glued to its
// first word by `-` (`"211-Features:"`, a multi-line reply's first line) and a code in capitals
// alone in its quotes, punctuation aside (`"ASCII??"`). A name quoted alone is a value.
TEST_F(TemplateMatchTest, QuotedProgramTextIsNoValue) {
  const std::string head = "FTP response: Client \"127.0.0.1\", ";
  for (const char* text : {"\" TVFS??\"", "\"211-Features:\"", "\"ASCII??\"",
                           "\"214-The following commands are recognized.\""}) {
    SetTemplate(head + text);
    EXPECT_FALSE(Match(head + "\"ftpbob\"").accepted) << text;
    SetTemplate(head + "\"ftpbob\"");
    EXPECT_FALSE(Match(head + text).accepted) << text;
    template_.AddFlags(4, kWild | kVaried);
    EXPECT_FALSE(Match(head + text).accepted) << text << " where the slot varied";
  }
  SetTemplate(head + "\"ftpalice\"");
  EXPECT_TRUE(Match(head + "\"ftpbob\"").accepted);
  template_.AddFlags(4, kWild | kVaried);
  EXPECT_TRUE(Match(head + "\"4\"").accepted);
}

// A word that opens a parenthesised phrase heads it: the phrase says what happened or why
// (`(height too large for virtual size)` / `(width too large ...)`), another event. A word
// alone in parentheses and one in a bracket glued to a word (its argument) are still values.
TEST_F(TemplateMatchTest, AParenthesisedPhrasesFirstWordHeadsIt) {
  SetTemplate("DUMMY(0): Not using default mode \"1920x1440\" (height too large for virtual size)");
  const MatchResult r =
      Match("DUMMY(0): Not using default mode \"2048x1152\" (width too large for virtual size)");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kPlainWordOutOfContext);
  EXPECT_EQ(r.position, 7u);
  SetTemplate("job 7 finished (alice) in 3 s");
  EXPECT_TRUE(Match("job 8 finished (bob) in 3 s").accepted);
  SetTemplate("job 7 finished for(alice on tty1) in 3 s");
  EXPECT_TRUE(Match("job 8 finished for(bob on tty1) in 3 s").accepted);
}

// A JSON line's keys name its fields: the same message with another key is another call's
// event (a reader's stream and a writer's), while the keys' values vary.
TEST_F(TemplateMatchTest, JsonKeysNameFields) {
  SetTemplate(R"({"msg":"established TCP streaming connection with remote peer",)"
              R"("stream-writer-type":"stream Message","local-member-id":"de047366f18fddbf",)"
              R"("remote-peer-id":"8ae8c4196bc7a18e","user-name":"alice"})");
  EXPECT_TRUE(Match(R"({"msg":"established TCP streaming connection with remote peer",)"
                    R"("stream-writer-type":"stream Message","local-member-id":"de047366f18fddbf",)"
                    R"("remote-peer-id":"75cad2f2e9f51e1a","user-name":"bob"})")
                  .accepted);
  const MatchResult r =
      Match(R"({"msg":"established TCP streaming connection with remote peer",)"
            R"("stream-reader-type":"stream Message","local-member-id":"de047366f18fddbf",)"
            R"("remote-peer-id":"8ae8c4196bc7a18e","user-name":"alice"})");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kFieldNameDiffers);
  // A key of several words, any of them.
  SetTemplate(R"({"msg":"stats","response count":0,"took":"3ms"})");
  EXPECT_TRUE(Match(R"({"msg":"stats","response count":7,"took":"9ms"})").accepted);
  EXPECT_FALSE(Match(R"({"msg":"stats","request count":0,"took":"3ms"})").accepted);
  // A quoted word that ':' follows inside a value is no key: only one opening the object or
  // after its ','.
  SetTemplate(R"(job 7 said "alice": done at 3)");
  EXPECT_TRUE(Match(R"(job 8 said "bob": done at 5)").accepted);
}

// A name in capitals that is a JSON field's whole value is a code (a kind, a state): another
// one is another event, while the other fields' values vary.
TEST_F(TemplateMatchTest, JsonFieldOfACodeNeverChanges) {
  SetTemplate(R"({"msg":"prober detected unhealthy status","round-tripper-name":)"
              R"("ROUND_TRIPPER_SNAPSHOT","remote-peer-id":"8ae8c4196bc7a18e","rtt":"0s"})");
  EXPECT_TRUE(Match(R"({"msg":"prober detected unhealthy status","round-tripper-name":)"
                    R"("ROUND_TRIPPER_SNAPSHOT","remote-peer-id":"75cad2f2e9f51e1a","rtt":"3ms"})")
                  .accepted);
  EXPECT_FALSE(
      Match(R"({"msg":"prober detected unhealthy status","round-tripper-name":)"
            R"("ROUND_TRIPPER_RAFT_MESSAGE","remote-peer-id":"8ae8c4196bc7a18e","rtt":"0s"})")
          .accepted);
  // A name in lower case there is a value.
  SetTemplate(R"({"msg":"user added","user-name":"alice","roles":"reader"})");
  EXPECT_TRUE(Match(R"({"msg":"user added","user-name":"bob","roles":"reader"})").accepted);
}

// A JSON line's message field (`"msg"`, `"message"`) is the message: a message that opens with
// an id keeps its words, which tell events apart, while another field's quoted text is a slot.
TEST_F(TemplateMatchTest, JsonMessageFieldKeepsItsWords) {
  SetTemplate(R"({"msg":"de047366f18fddbf became follower at term 2"})");
  EXPECT_TRUE(Match(R"({"msg":"8ae8c4196bc7a18e became follower at term 5"})").accepted);
  EXPECT_FALSE(Match(R"({"msg":"de047366f18fddbf became leader at term 2"})").accepted);
  SetTemplate(R"({"level":"info","message":"0x1f opened /a at 3","user":"alice"})");
  EXPECT_FALSE(
      Match(R"({"level":"info","message":"0x1f closed /a at 3","user":"alice"})").accepted);
  PreparedLine p;
  const std::string other = R"({"msg":"sent","path":"/a/b is 3 deep"})";
  PrepareLine(tokenizer_, matcher_, true, other, p);
  EXPECT_EQ(p.tokens.size(), 4u);  // msg, sent, path and one slot
  const std::string msg = R"({"msg":"/a/b is 3 deep"})";
  PrepareLine(tokenizer_, matcher_, true, msg, p);
  EXPECT_EQ(p.tokens.size(), 5u);
}

// A duration is one kind whatever its unit (Go prints `738.544µs`, `1.728952ms`, `1m30s`), while
// a number with another unit (a size) is still another kind.
TEST_F(TemplateMatchTest, DurationIsOneKindWhateverItsUnit) {
  SetTemplate("request done in 738.544\u00b5s for client 7");
  EXPECT_TRUE(Match("request done in 1.728952ms for client 9").accepted);
  EXPECT_TRUE(Match("request done in 1m30s for client 9").accepted);
  EXPECT_TRUE(Match("request done in 2h for client 9").accepted);
  const MatchResult r = Match("request done in 12MB for client 9");
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.reason, MatchReason::kDigitWordLetters);
  EXPECT_FALSE(Match("request done in 3ms2 for client 9").accepted);
}

// An RPC method's full name is the operation a request called: another method is another
// event, while the request's values vary, and a file path there is still a value.
TEST_F(TemplateMatchTest, RpcMethodNeverChanges) {
  SetTemplate(R"({"msg":"request stats","remote":"127.0.0.1:44678",)"
              R"("response type":"/etcdserverpb.KV/Put","request count":1})");
  EXPECT_TRUE(Match(R"({"msg":"request stats","remote":"127.0.0.1:5000",)"
                    R"("response type":"/etcdserverpb.KV/Put","request count":3})")
                  .accepted);
  EXPECT_FALSE(Match(R"({"msg":"request stats","remote":"127.0.0.1:44678",)"
                     R"("response type":"/etcdserverpb.KV/Range","request count":1})")
                   .accepted);
  SetTemplate(R"({"msg":"opened backend db","path":"/var/lib/etcd/member/snap/db"})");
  EXPECT_TRUE(Match(R"({"msg":"opened backend db","path":"/tmp/m1/snap/db"})").accepted);
}

// A quoted text that is the whole message is the event, and single quotes (apostrophes in free
// text) pair nothing: neither is a slot. An escaped quote does not end a text.
TEST_F(TemplateMatchTest, OnlyADoubleQuotedTextInsideAMessageIsASlot) {
  PreparedLine p;
  const std::string whole = "\"/usr/sbin/cron started by the system\"";
  PrepareLine(tokenizer_, matcher_, true, whole, p);
  EXPECT_EQ(p.tokens.size(), 5u);
  const std::string single = "reader said '/etc/x.conf can't be parsed by it' at 3";
  PrepareLine(tokenizer_, matcher_, true, single, p);
  EXPECT_EQ(p.tokens.size(), 11u);
  const std::string escaped = "client sent \"/a \\\"hi\\\" twice\" at 3";
  PrepareLine(tokenizer_, matcher_, true, escaped, p);
  ASSERT_EQ(p.tokens.size(), 5u);
  EXPECT_EQ(escaped.substr(p.tokens[2].offset, p.tokens[2].length), "/a \\\"hi\\\" twice");
}

// Whatever quotes, escapes and words a line holds, its prepared tokens stay in order inside the
// message, a collapsed text spans whole tokens, and the line fits the template it makes.
TEST_F(TemplateMatchTest, QuotedTextsOfRandomLinesKeepTheTokensSound) {
  const std::vector<std::string> pieces = {"\"",    "\\", " ",     "GET", "/a",   "-", "x=1",
                                           "error", "3",  "\"-\"", "(",   "word", "'", "\"\""};
  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    // Every other line is a message written as a quoted value (its escaped quotes pair).
    std::string m = round % 2 == 0 ? "" : "time=2026-11-28T00:13:49.012Z level=INFO msg=\"";
    const int n = 1 + static_cast<int>(rng() % 14);
    for (int k = 0; k < n; ++k) m += pieces[rng() % pieces.size()];
    PreparedLine p;
    PrepareLine(tokenizer_, matcher_, true, m, p);
    ASSERT_EQ(p.tokens.size(), p.hashes.size()) << m;
    std::size_t end = 0;
    for (const Token& t : p.tokens) {
      ASSERT_GE(t.offset, end) << m;
      ASSERT_LE(t.offset + std::size_t{t.length}, m.size()) << m;
      end = t.offset + t.length;
    }
    SetTemplate(m);
    EXPECT_TRUE(Match(m).accepted) << m;
  }
}

// A message written as a quoted value after its header (Go's log/slog) pairs its escaped
// quotes as a bare message pairs its quotes, and its closing quote ends it.
TEST_F(TemplateMatchTest, EscapedQuotesOfAQuotedMessagePair) {
  PreparedLine a, b;
  const std::string ma =
      "time=2026-11-28T00:13:49.012Z level=DEBUG msg=\"\\\"GET /static/page2.html HTTP/1.1\\\" "
      "200 7 \\\"-\\\" \\\"Wget/1.21.3\\\"\"";
  const std::string mb =
      "time=2026-11-28T00:13:50.619Z level=DEBUG msg=\"\\\"GET /search?q=a&b=2 HTTP/1.1\\\" 200 6 "
      "\\\"http://example.com/from/1\\\" \\\"Mozilla/5.0 (X11; Linux x86_64) Firefox/115.0\\\"\"";
  PrepareLine(tokenizer_, matcher_, true, ma, a);
  PrepareLine(tokenizer_, matcher_, true, mb, b);
  ASSERT_TRUE(a.header.quoted);
  ASSERT_EQ(a.tokens.size(), b.tokens.size());
  // The request target and the user agent are one slot each, of one class.
  EXPECT_EQ(b.hashes[2], a.hashes[2]);
  EXPECT_EQ(b.hashes.back(), a.hashes.back());
  // The backslash escaping a closing quote is the quote's: the words and "-" are as bare.
  ASSERT_EQ(a.tokens.size(), 10u);
  EXPECT_EQ(ma.substr(a.tokens[8].offset, a.tokens[8].length), "Wget/1.21.3");
  EXPECT_EQ(a.tokens[6].cls, TokenClass::kEmpty);
  SetTemplate(ma);
  EXPECT_TRUE(Match(mb).accepted);
  // The nearest line that must not fold: another method heads the request.
  EXPECT_FALSE(Match("time=2026-11-28T00:13:50.619Z level=DEBUG msg=\"\\\"DELETE "
                     "/static/page2.html HTTP/1.1\\\" 200 7 \\\"-\\\" \\\"Wget/1.21.3\\\"\"")
                   .accepted);
}

// A name in lower case made of parts and holding a digit, a '.' or a '_', right after a host
// key (`to`, `from`), names a peer, a value as a host name is there: a broker's client ids.
// Words joined by '-' alone there are as often a state (read-only / read-write), a plain word
// is still an action, a name of parts after another word is not a peer, and one in capitals
// is a term.
TEST_F(TemplateMatchTest, APeerNameAfterAHostKeyIsAValue) {
  SetTemplate("Sending PUBLISH to dash_bob-east (d0, q0, r0, m0, 'a/b', ... (4 bytes))");
  EXPECT_TRUE(
      Match("Sending PUBLISH to local.vm.bridge-remote (d0, q1, r0, m4, 'a/b', ... (4 bytes))")
          .accepted);
  SetTemplate("Received DISCONNECT from dash_bob-east now");
  EXPECT_TRUE(Match("Received DISCONNECT from sensor-east.lab now").accepted);
  EXPECT_FALSE(Match("Received DISCONNECT from sensor now").accepted);
  EXPECT_FALSE(Match("Received DISCONNECT from Sensor-East now").accepted);
  SetTemplate("EXT4-fs (vda1): changing mode to read-only now");
  EXPECT_FALSE(Match("EXT4-fs (vda1): changing mode to read-write now").accepted);
  SetTemplate("Bridge dash_bob-east sending CONNECT now");
  EXPECT_FALSE(Match("Bridge local.vm.bridge-remote sending CONNECT now").accepted);
}

TEST_F(TemplateMatchTest, HeaderIsLeftOutOfTheTokens) {
  PreparedLine p;
  const std::string m = "2024-03-01 12:00:00,123 INFO [main] Server: started on port 80";
  PrepareLine(tokenizer_, matcher_, true, m, p);
  ASSERT_GT(p.header.body, 0u);
  ASSERT_FALSE(p.tokens.empty());
  EXPECT_GE(p.tokens[0].offset, p.header.body);
  PreparedLine whole;
  PrepareLine(tokenizer_, matcher_, false, m, whole);
  EXPECT_GT(whole.tokens.size(), p.tokens.size());
}

TEST_F(TemplateMatchTest, MarkDifferencesMarksOverlapOnly) {
  SetTemplate("alpha beta 1 gamma");
  message_ = "alpha delta 2 gamma extra";
  PrepareLine(tokenizer_, matcher_, true, message_, line_);
  matcher_.MarkDifferences(line_.View(message_), {template_message_, template_});
  // beta/delta: another word (wild); 1/2: same class, other text (varied only).
  EXPECT_EQ(Marks(), (MarkList{{1, kVaried | kWild}, {2, kVaried}}));
}

// A plain word outside a value context rejects any change; a value, a compound name, a word
// after a value key, a number or a host key, and a masked token do not.
TEST_F(TemplateMatchTest, RejectsAnyChangeAtAPlainWordOutsideAValueContext) {
  auto rigid = [this](const std::string& message, std::size_t i) {
    message_ = message;
    PrepareLine(tokenizer_, matcher_, true, message_, line_);
    return matcher_.RejectsAnyChangeAt(line_.View(message_), i);
  };
  EXPECT_TRUE(rigid("peer closed because of timeout now", 4));
  EXPECT_TRUE(rigid("peer closed because of timeout now", 0));
  EXPECT_FALSE(rigid("connection for alice closed", 2));       // after a value key
  EXPECT_FALSE(rigid("connection closed reason=timeout", 3));  // after '='
  EXPECT_FALSE(rigid("connection to gateway closed", 2));      // after a host key
  EXPECT_FALSE(rigid("sent 12 bytes now", 2));                 // a unit
  EXPECT_FALSE(rigid("loaded com.apple.fmfd now", 1));         // a compound name
  EXPECT_FALSE(rigid("worker 12 stopped", 1));                 // a number
  EXPECT_FALSE(rigid("worker stopped", 5));                    // past the line
  // Where it holds, every template of the line's length that changes the word is rejected
  // (the fixture's Match checks that on each call); the same line with another word there:
  SetTemplate("peer closed because of timeout now");
  EXPECT_FALSE(Match("peer closed because of shutdown now").accepted);
  EXPECT_FALSE(Match("peer opened because of shutdown now").accepted);
}

// RuledOut is exact in one direction: over many pairs of near lines it never turns away one
// that Match accepts (the fixture's Match checks it on every call).
TEST_F(TemplateMatchTest, RuledOutNeverRejectsAFit) {
  const std::vector<std::string> lines = {
      "session opened for user alice by cron",
      "session closed for user alice by cron",
      "session opened for user bob",
      "worker 3 started in 12 ms",
      "worker 4 stopped in 15 ms",
      "worker 4 started in 1.5 s",
      "GET /index.html 200 1234",
      "POST /index.html 200 1234",
      "GET /a/b/c.html 404 0",
      "copied 10 files to /srv/a",
      "copied 10 files (2 MB) to /srv/a",
      "copied files to /srv/a now",
      "\"GET /index.html HTTP/1.1\" 200 12 \"-\" \"curl/8.0\"",
      "\"GET /a?b=1 HTTP/1.1\" 200 12 \"http://x/y\" \"Mozilla/5.0 (X11; Linux) Gecko/1\"",
      "\"DELETE /a HTTP/1.1\" 200 12 \"-\" \"-\"",
  };
  int accepted = 0;
  for (const std::string& t : lines) {
    SetTemplate(t);
    for (const std::string& l : lines) accepted += Match(l).accepted;
  }
  EXPECT_GT(accepted, static_cast<int>(lines.size()));  // not only each line with itself
}

// The digest is exact in one direction too: over many random pairs of lines of one token
// count (words, numbers and digit words from a small vocabulary, so 6-bit hashes collide), and
// templates with random wild positions, it rules out only what RuledOut does, and most of it.
TEST_F(TemplateMatchTest, DigestRulesOutOnlyWhatRuledOutDoes) {
  const std::vector<std::string> vocabulary = {
      "session", "opened", "closed", "for",   "user", "alice", "bob",      "from", "port",
      "to",      "a",      "b",      "xyz",   "qa",   "error", "done",     "job",  "in",
      "ms",      "12",     "7",      "0x1f",  "a1b2", "v2",    "10.0.0.1", "x9",   "node-3",
      "ok",      "the",    "of",     "queue", "file", "path",  "on",       "at",   "by"};
  std::mt19937 rng(19);
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  auto join = [](const std::vector<std::string>& words) {
    std::string s;
    for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
    return s;
  };
  int checked = 0, ruled_out = 0, by_digest = 0;
  for (int round = 0; round < 6000; ++round) {
    const std::size_t n = 1 + pick(12);
    std::vector<std::string> words(n);
    for (std::string& w : words) w = vocabulary[pick(vocabulary.size())];
    SetTemplate(join(words));
    if (template_.size() != n) continue;  // a run of values collapsed: another count
    for (std::size_t i = 0; i < n; ++i) {
      if (pick(5) == 0) template_.AddFlags(i, kWild | kVaried);
    }
    const std::uint64_t of = RuledOutDigest::Of(template_);
    // A near line: the template's words with 0 to 4 of them replaced.
    for (std::size_t k = pick(5); k > 0; --k) words[pick(n)] = vocabulary[pick(vocabulary.size())];
    message_ = join(words);
    PrepareLine(tokenizer_, matcher_, true, message_, line_);
    if (line_.tokens.size() != n) continue;
    RuledOutDigest digest;
    digest.SetLine(line_.View(message_));
    const bool exact = matcher_.RuledOut(line_.View(message_), template_);
    const bool cheap = digest.RulesOut(of);
    ++checked;
    ruled_out += exact;
    by_digest += cheap;
    if (cheap) {
      EXPECT_TRUE(exact) << template_message_ << " | " << message_;
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(ruled_out, checked / 4);
  EXPECT_GT(by_digest, ruled_out / 2);  // it does its job, not only never errs
}

// A phrase, ':' and one field closing the line is a dump's row: every name and value the dump
// lists is one value of one event.
TEST_F(TemplateMatchTest, FieldAfterAPhraseIsADumpRow) {
  PreparedLine p;
  const std::string row = "peer info: IV_CIPHERS=AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305";
  PrepareLine(tokenizer_, matcher_, true, row, p);
  ASSERT_EQ(p.tokens.size(), 3u);
  EXPECT_EQ(p.tokens[2].cls, TokenClass::kPath);
  EXPECT_EQ(row.substr(p.tokens[2].offset), "IV_CIPHERS=AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305");
  SetTemplate("127.0.0.1:46810 peer info: IV_VER=2.6.14");
  EXPECT_TRUE(Match("127.0.0.1:47861 peer info: IV_PLAT=linux").accepted);
  EXPECT_TRUE(Match("127.0.0.1:47861 peer info: IV_COMP_STUBv2=1").accepted);
  EXPECT_TRUE(
      Match("127.0.0.1:59386 peer info: IV_CIPHERS=AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305")
          .accepted);
  EXPECT_FALSE(Match("peer data: IV_PLAT=linux").accepted);
}

// The nearest lines are a field's own messages: a name in lower case (the program's own), after
// a single name (a function's, a component's), a field naming an outcome or holding a
// protected word, two fields, a value of words, a field that does not close the line.
TEST_F(TemplateMatchTest, FieldAfterANameOrOfAnOutcomeIsNoDumpRow) {
  SetTemplate("Report: clients=1");
  EXPECT_FALSE(Match("Report: jobs=0").accepted);
  SetTemplate("job state: STATUS=ok");
  EXPECT_FALSE(Match("job state: STATUS=failed").accepted);
  SetTemplate("peer info: IV_PLAT=linux");
  EXPECT_FALSE(Match("peer info: IV_PLAT=failed").accepted);
  SetTemplate("pool info: base=10.199.0.2 size=253");
  EXPECT_FALSE(Match("pool info: mode=static size=253").accepted);
  SetTemplate("peer info: platform=linux");
  EXPECT_FALSE(Match("peer info: kernel=6.1, extra").accepted);
  SetTemplate("using identifier: hwaddr=00:0c:01:02:03:04");
  EXPECT_FALSE(Match("using identifier: client-id=01:0c:01:02:03:04").accepted);
  SetTemplate("Report: CLIENTS=1");
  EXPECT_FALSE(Match("Report: JOBS=0").accepted);
  PreparedLine p;
  for (const std::string line : {"peer info: IV_PLAT=linux x86_64", "peer info: a=b,c=d",
                                 "peer info: IV_PLAT=", "info: IV_PLAT=linux"}) {
    PrepareLine(tokenizer_, matcher_, true, line, p);
    EXPECT_NE(p.tokens.back().cls, TokenClass::kPath) << line;
  }
}

// A peer's endpoint opening a message is its context: the same message with and without it,
// with a name before it or not, is one event, and the endpoint is no token of it.
TEST_F(TemplateMatchTest, PeerEndpointOpeningTheMessageIsContext) {
  PreparedLine p;
  const std::string line = "alice/127.0.0.1:46810 Timers: ping 2, ping-restart 16";
  PrepareLine(tokenizer_, matcher_, true, line, p);
  EXPECT_EQ(p.header.body, line.find("Timers"));
  ASSERT_FALSE(p.tokens.empty());
  EXPECT_EQ(line.substr(p.tokens[0].offset, p.tokens[0].length), "Timers");
  SetTemplate("alice/127.0.0.1:46810 MULTI_sva: pool returned IPv4=10.199.0.2, IPv6=(Not enabled)");
  EXPECT_TRUE(Match("MULTI_sva: pool returned IPv4=10.199.0.2, IPv6=(Not enabled)").accepted);
  EXPECT_TRUE(Match("127.0.0.1:59386 MULTI_sva: pool returned IPv4=10.199.0.3, IPv6=(Not enabled)")
                  .accepted);
  SetTemplate("wpad:80 error : Could not connect to proxy proxy.cse.cuhk.edu.hk:5070");
  EXPECT_TRUE(
      Match("223.167.104.147:80 error : Could not connect to proxy proxy.cse.cuhk.edu.hk:5070")
          .accepted);
  SetTemplate("182.254.114.110:80 open through proxy proxy.cse.cuhk.edu.hk:5070 HTTPS");
  EXPECT_TRUE(
      Match("mtalk.google.com:5228 open through proxy proxy.cse.cuhk.edu.hk:5070 HTTPS").accepted);
}

// The nearest lines keep the address: written later in the message, or before a bracket; and
// the words after a skipped endpoint still tell messages apart.
TEST_F(TemplateMatchTest, AddressElsewhereOrBeforeABracketStaysAToken) {
  PreparedLine p;
  const std::string line = "127.0.0.1:42960 [28/Nov/2026:05:07:05.338] web app/app2 200";
  PrepareLine(tokenizer_, matcher_, false, line, p);
  EXPECT_EQ(p.header.body, 0u);
  const std::string later = "connect from 127.0.0.1:46810 refused";
  PrepareLine(tokenizer_, matcher_, true, later, p);
  EXPECT_EQ(p.tokens.size(), 4u);
  SetTemplate("127.0.0.1:46810 TLS Error: TLS handshake failed");
  EXPECT_FALSE(Match("TLS Error: TLS handshake started").accepted);
}

// A field printed empty inside a bracket glued to a word is another qualifier of that word,
// not a value printed empty: a signal with no reason and one with a reason are two events.
TEST_F(TemplateMatchTest, EmptyFieldInAQualifyingBracketIsAnotherQualifier) {
  SetTemplate("SIGTERM[soft,delayed-exit] received, client-instance exiting");
  EXPECT_FALSE(Match("SIGTERM[soft,] received, client-instance exiting").accepted);
  SetTemplate("SIGTERM[soft,] received, client-instance exiting");
  EXPECT_FALSE(Match("SIGTERM[soft,delayed-exit] received, client-instance exiting").accepted);
  SetTemplate("Connect root@localhost on shop using Socket");
  EXPECT_TRUE(Match("Connect root@localhost on  using Socket").accepted);
}

// A double-quoted text that opens with blanks is laid out (a listing's indented row): its
// words are the program's, not a value. The nearest case, a quoted word with no blank inside
// the opening quote, stays a value.
TEST_F(TemplateMatchTest, QuotedTextOpeningWithBlanksIsNoValue) {
  SetTemplate("FTP response: Client \"127.0.0.1\", \" EPRT??\"");
  EXPECT_FALSE(Match("FTP response: Client \"127.0.0.1\", \" EPSV??\"").accepted);
  SetTemplate("FTP response: Client \"127.0.0.1\", \"     TYPE: \"");
  EXPECT_FALSE(Match("FTP response: Client \"127.0.0.1\", \"     MODE: \"").accepted);
  SetTemplate("login for user \"alice\" refused");
  EXPECT_TRUE(Match("login for user \"bob\" refused").accepted);
}

}  // namespace
}  // namespace logfold
