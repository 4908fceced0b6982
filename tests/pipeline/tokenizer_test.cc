// Tokenizer tests: splitting (separators, trailing punctuation, exact offsets), the class of
// every TokenClass with positive and negative examples, max_tokens, hostile input, reuse.
#include "pipeline/tokenizer.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/corpus_lines.h"
#include "tests/fuzz/reference_fingerprint.h"

namespace logfold {
namespace {

// The text of each token, for readable expectations.
std::vector<std::string> Texts(std::string_view message, const std::vector<Token>& tokens) {
  std::vector<std::string> out;
  for (const Token& t : tokens) out.emplace_back(message.substr(t.offset, t.length));
  return out;
}

std::vector<Token> Tok(std::string_view message, Tokenizer::Options options = {}) {
  std::vector<Token> out;
  Tokenizer(options).Tokenize(message, out);
  return out;
}

// The class of the token whose text is `token` in `msg` (a test failure if there is none).
TokenClass ClassOf(std::string_view msg, std::string_view token) {
  for (const Token& t : Tok(msg)) {
    if (msg.substr(t.offset, t.length) == token) return t.cls;
  }
  ADD_FAILURE() << "no token " << token << " in " << msg;
  return TokenClass::kCount_;
}

// Every token must lie inside the message, in order, and contain no separator.
void ExpectWellFormed(std::string_view message, const std::vector<Token>& tokens) {
  std::size_t prev_end = 0;
  for (const Token& t : tokens) {
    ASSERT_GE(t.offset, prev_end);
    if (t.cls == TokenClass::kEmpty) {
      ASSERT_EQ(t.length, 0u);  // an empty value
    } else {
      ASSERT_GT(t.length, 0u);
    }
    ASSERT_LE(std::size_t{t.offset} + t.length, message.size());
    for (char c : message.substr(t.offset, t.length)) {
      ASSERT_NE(c, ' ');
      ASSERT_NE(c, '\0');
      ASSERT_NE(c, '\n');
    }
    prev_end = t.offset + t.length;
  }
}

TEST(TokenizerSplitTest, WhiteSpaceRunsSeparateTokensWithExactOffsets) {
  const std::string_view msg = "  alpha\tbeta \r\n gamma\v\fdelta  ";
  const std::vector<Token> tokens = Tok(msg);
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].offset, 2u);
  EXPECT_EQ(tokens[0].length, 5u);
  EXPECT_EQ(tokens[1].offset, 8u);
  EXPECT_EQ(tokens[1].length, 4u);
  EXPECT_EQ(tokens[2].offset, 16u);
  EXPECT_EQ(tokens[2].length, 5u);
  EXPECT_EQ(tokens[3].offset, 23u);
  EXPECT_EQ(tokens[3].length, 5u);
  EXPECT_EQ(Texts(msg, tokens), (std::vector<std::string>{"alpha", "beta", "gamma", "delta"}));
}

TEST(TokenizerSplitTest, PunctuationSeparatorsAreNotPartOfTokens) {
  const std::string_view msg = "a, b; c=(d) [e] {f} \"g\" 'h' <i> j|k";
  EXPECT_EQ(Texts(msg, Tok(msg)),
            (std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}));
}

TEST(TokenizerSplitTest, KeyValueExposesTheValueAsItsOwnToken) {
  const std::string_view msg = "status=200 user=\"alice\" rt=(0.25)";
  const std::vector<Token> tokens = Tok(msg);
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(Texts(msg, tokens),
            (std::vector<std::string>{"status", "200", "user", "alice", "rt", "0.25"}));
  EXPECT_EQ(tokens[1].offset, 7u);
  EXPECT_EQ(tokens[1].length, 3u);
  EXPECT_EQ(tokens[1].cls, TokenClass::kInteger);
  EXPECT_EQ(tokens[3].offset, 17u);
  EXPECT_EQ(tokens[5].cls, TokenClass::kFloat);
}

// An HTTP status is an enumeration, so it stays a word (hashed by its text) where a status
// stands: after the protocol that ends a quoted request line or a status line.
// A set of one-letter flags written as one field (a sign, capitals, digits in parentheses
// among them) is one token across its parentheses, of an opaque code's class: `+E(0)K`,
// `-E(0)DK` and `-S` are values of one kind. The nearest tokens stay as they were: a sign
// before lower-case letters (an option), a set glued to more text, a set inside a word.
TEST(TokenizerContextTest, AFlagSetIsOneToken) {
  const std::string_view q = "query: www.a.test IN A +E(0)K (127.0.0.1)";
  EXPECT_EQ(Texts(q, Tok(q)),
            (std::vector<std::string>{"query", "www.a.test", "IN", "A", "+E(0)K", "127.0.0.1"}));
  EXPECT_EQ(ClassOf(q, "+E(0)K"), TokenClass::kHex);
  EXPECT_EQ(ClassOf("query: a.test IN SOA -E(0)DK (127.0.0.1)", "-E(0)DK"), TokenClass::kHex);
  EXPECT_EQ(ClassOf("query: a.test IN SOA -S (127.0.0.1)", "-S"), TokenClass::kHex);
  EXPECT_EQ(ClassOf("flags=+RD,-AD", "+RD"), TokenClass::kHex);
  EXPECT_EQ(ClassOf("running tar -v now", "-v"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("query: a.test IN SOA - (127.0.0.1)", "-"), TokenClass::kWord);
  const std::string_view glued = "flags +E(0)Kx set";
  EXPECT_EQ(Texts(glued, Tok(glued)), (std::vector<std::string>{"flags", "+E", "0", "Kx", "set"}));
  const std::string_view inside = "a-B(0)C b+C";
  EXPECT_EQ(Texts(inside, Tok(inside)), (std::vector<std::string>{"a-B", "0", "C", "b+C"}));
  // Past a 64-byte block: the scan resumes after the set.
  const std::string tail = std::string(60, 'x') + " +E(0)K next";
  EXPECT_EQ(Texts(tail, Tok(tail)),
            (std::vector<std::string>{std::string(60, 'x'), "+E(0)K", "next"}));
}

TEST(TokenizerContextTest, HttpStatusIsAWordWhereAStatusStands) {
  EXPECT_EQ(ClassOf("\"GET /a HTTP/1.1\" 404 153", "404"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("\"GET /a HTTP/1.1\" 404 153", "153"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("HTTP/1.0 503 Service Unavailable", "503"), TokenClass::kWord);
  // Not a status: out of 100-599, not three digits, or not where a status stands (a status
  // key keeps its number a variable: its fingerprint is pinned).
  EXPECT_EQ(ClassOf("HTTP/1.1 600 odd", "600"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("HTTP/1.1 2000 odd", "2000"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("done status=500 in 3 ms", "500"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("sent 200 bytes to peer", "200"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("\"GET /a HTTP/1.1\" - 2000", "2000"), TokenClass::kInteger);
  // Not right after the protocol, but the first integer standing alone outside the request:
  // a status by the rule below.
  EXPECT_EQ(ClassOf("\"GET /a HTTP/1.1\" - 200", "200"), TokenClass::kWord);
}

// A line holding a quoted HTTP request with its status elsewhere (an access log that writes
// the request last): the first integer of a status's shape standing alone outside the request
// is the status, a word; the nearest lines keep their numbers variables.
TEST(TokenizerContextTest, HttpStatusOutsideTheRequestIsAWord) {
  const std::string_view line =
      "10.0.0.1:42960 [28/Nov/2026:05:07:05.338] web app/app2 0/0/0/63/63 503 1602 - - SC-- "
      "1/1/0/0/0 0/0 \"GET /items?id=404 HTTP/1.1\"";
  EXPECT_EQ(ClassOf(line, "503"), TokenClass::kWord);
  EXPECT_EQ(ClassOf(line, "1602"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf(line, "404"), TokenClass::kInteger);  // inside the request
  // Integers of other shapes before it (a pid, a duration) do not hide it; only the first of
  // two is the status.
  EXPECT_EQ(ClassOf("23910 23916 took 2000 ms 503 \"GET /a HTTP/1.1\"", "503"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("23910 23916 took 2000 ms 503 \"GET /a HTTP/1.1\"", "2000"),
            TokenClass::kInteger);
  EXPECT_EQ(ClassOf("web 301 503 \"GET /a HTTP/1.1\"", "301"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("web 301 503 \"GET /a HTTP/1.1\"", "503"), TokenClass::kInteger);
  // Not standing alone, or no quoted request in the line.
  EXPECT_EQ(ClassOf("web x=503 1602 \"GET /a HTTP/1.1\"", "503"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("web 503 1602 GET /a HTTP/1.1", "503"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("sent 200 bytes to peer", "200"), TokenClass::kInteger);
}

// A status written as a key's value after ':' (a request log that writes `status: 409`, JSON's
// `"code": 200`) is an enumeration too, a word; the nearest lines keep their numbers variables.
TEST(TokenizerContextTest, HttpStatusAfterAStatusKeyIsAWord) {
  const std::string_view line =
      "127.0.0.1 \"PUT /allocations/8e15\" status: 409 len: 400 microversion: 1.39";
  EXPECT_EQ(ClassOf(line, "409"), TokenClass::kWord);
  EXPECT_EQ(ClassOf(line, "400"), TokenClass::kInteger);  // a length, after another key
  EXPECT_EQ(ClassOf("{\"statusCode\": 503, \"ms\": 120}", "503"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("upstream http_status: 404 done", "404"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("reply code: 250 ok", "250"), TokenClass::kWord);
  // Not a status: no ':' after the key (running text), another key, another shape, or '='
  // (pinned fingerprints: see HttpStatusIsAWordWhereAStatusStands).
  EXPECT_EQ(ClassOf("cannot connect, status code 403", "403"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("len: 404 status: ok", "404"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("status: 2000 items", "2000"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("status: 600", "600"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("status: x 404", "404"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("done status=500 in 3 ms", "500"), TokenClass::kInteger);
}

// After a key written as an identifier of parts that names a status or a code, a blank is
// separator enough (a record's tag and its value: `RespStatus 503`); a plain word in running
// text is not a key.
TEST(TokenizerContextTest, HttpStatusAfterAnIdentifierKeyAndABlankIsAWord) {
  EXPECT_EQ(ClassOf("RespStatus     503", "503"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("upstream http_status 404 done", "404"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("statusCode 200", "200"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("cannot connect, status code 403", "403"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("exit status 127", "127"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("RespStatus 5000", "5000"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("RespSize 503", "503"), TokenClass::kInteger);
}

// A double-quoted text that opens with a number of a status's shape and a word is a reply: the
// code is a word (`"550 Permission denied."` is not `"530 Permission denied."`), and so is one
// a number follows (`"213 4096"`). Not a number that does not open the text, nor one that a
// word or a number does not follow.
TEST(TokenizerContextTest, ACodeOpeningAQuotedReplyIsAWord) {
  EXPECT_EQ(ClassOf("FTP response: Client \"127.0.0.1\", \"550 Permission denied.\"", "550"),
            TokenClass::kWord);
  EXPECT_EQ(ClassOf("reply=\"250 Ok\"", "250"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("got \"a 550 Permission denied.\"", "550"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("size \"213 4096\"", "213"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("size \"213 -4096\"", "213"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("read \"1200 bytes\"", "1200"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("x\"250 Ok\"", "250"), TokenClass::kInteger);
}

// A name of parts (holding '-' or '.') before an address in parentheses names that peer, as
// one glued to a bracketed address does: a host name. A plain word there stays a word.
TEST(TokenizerContextTest, ANameOfPartsBeforeAnAddressInParenthesesIsItsHost) {
  EXPECT_EQ(ClassOf("Connecting bridge (step 1) bridge-dead (127.0.0.1:51886)", "bridge-dead"),
            TokenClass::kHostPort);
  EXPECT_EQ(ClassOf("peer db.example (::1) gone", "db.example"), TokenClass::kHostPort);
  EXPECT_EQ(ClassOf("connection from (10.0.0.1) closed", "from"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("bridge-dead (127.0.0.1:51886 up)", "bridge-dead"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("bridge-dead  (127.0.0.1)", "bridge-dead"), TokenClass::kWord);
}

// An X.509 subject's common name (`CN=alice`) names whoever holds the certificate: a value, of
// a host name's class. The nearest words stay words: another attribute, a name ending in `CN`,
// `CN` apart from its `=`, and the words after a name that holds a blank.
TEST(TokenizerContextTest, ACertificatesCommonNameIsAName) {
  EXPECT_EQ(ClassOf("VERIFY OK: depth=0, CN=alice", "alice"), TokenClass::kHostPort);
  EXPECT_EQ(ClassOf("VERIFY OK: depth=1, CN=LabCA", "LabCA"), TokenClass::kHostPort);
  EXPECT_EQ(ClassOf("certificate O=Lab, OU=people", "Lab"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("subject_CN=alice accepted", "alice"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("CN = alice", "alice"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("CN=Lab Root CA", "Root"), TokenClass::kWord);
}

// A return or reason code glued to its name (`rc0`, `rc135`; a name ending in "code" or
// "status") and a member of a tuple of one-digit numbers in parentheses (`(0, 5)`) are an
// enumeration's values: words. The nearest tokens stay variables: another name with a number
// (a message id `m135`, a package `liblerc4`), a code of four digits, a tuple holding a
// longer number or glued to a name (a call's arguments), a lone number in parentheses.
TEST(TokenizerContextTest, CodesGluedToTheirNameAndTuplesOfDigitsAreWords) {
  const std::string_view puback = "Sending PUBACK to bob-cli-4 (m135, rc135)";
  EXPECT_EQ(ClassOf(puback, "rc135"), TokenClass::kWord);
  EXPECT_EQ(ClassOf(puback, "m135"), TokenClass::kDigitWord);
  EXPECT_EQ(ClassOf("Sending PUBREC to c1 (m2, rc0)", "rc0"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("child exited, exitcode1 RC7", "exitcode1"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("child exited, exitcode1 RC7", "RC7"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("got httpStatus404 back", "httpStatus404"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("unpacking liblerc4 now", "liblerc4"), TokenClass::kDigitWord);
  EXPECT_EQ(ClassOf("rc1234 returned", "rc1234"), TokenClass::kDigitWord);
  EXPECT_EQ(ClassOf("link src0 up", "src0"), TokenClass::kDigitWord);
  const std::string_view connack = "Sending CONNACK to dash-bob (0, 5)";
  EXPECT_EQ(ClassOf(connack, "0"), TokenClass::kWord);
  EXPECT_EQ(ClassOf(connack, "5"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("flags (1,0,2) set", "2"), TokenClass::kWord);
  EXPECT_EQ(ClassOf("dropping the connection: (12, 1)", "1"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("moved to (3, 40)", "3"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("call f(0, 5) now", "5"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("retry (attempt 2)", "2"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("retry (2)", "2"), TokenClass::kInteger);
  EXPECT_EQ(ClassOf("got 0, 5 left", "5"), TokenClass::kInteger);
}

// A name in capitals glued to a three-digit code is an outcome with its status (a proxy's
// result code): a word. A path, a name with a longer number or in lower case stay variables.
TEST(TokenizerClassifyTest, NameInCapitalsWithItsCodeIsAWord) {
  EXPECT_EQ(Tokenizer::Classify("TCP_MISS/200"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("TCP_MISS_ABORTED/000"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("NONE_NONE/503"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("HIER_DIRECT/127.0.0.1"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("TCP_MISS/2000"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("app/200"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("/ROOT/200"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("A/200"), TokenClass::kPath);
}

// An object identifier (six or more numbers joined by '.', the first 0, 1 or 2) is a registered
// name of a kind of thing, an operation's or an attribute's: a word (protected: it begins with
// a digit). An address, a version, a shorter dotted number or one with a letter stay values.
TEST(TokenizerClassifyTest, ObjectIdentifierIsAWord) {
  EXPECT_EQ(Tokenizer::Classify("1.3.6.1.4.1.4203.1.11.1"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("1.3.6.1.4.1.1466.20037"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("2.16.840.1.101.3.4.2.1"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("10.0.0.1"), TokenClass::kIPv4);
  EXPECT_EQ(Tokenizer::Classify("1.2.3.4.5"), TokenClass::kDigitWord);
  EXPECT_EQ(Tokenizer::Classify("3.6.1.4.1.4203.1"), TokenClass::kDigitWord);
  EXPECT_EQ(Tokenizer::Classify("1.3.6.1.4.1..1"), TokenClass::kDigitWord);
  EXPECT_EQ(Tokenizer::Classify("1.3.6.1.4.1.4203.1.11.1a"), TokenClass::kDigitWord);
}

// An RPC method's full name (gRPC's `/package.Service/Method`) names the operation a request
// called, an enumeration's value: a word. A file path or a route, one more part, a service in
// one part or in lower case stay paths.
TEST(TokenizerClassifyTest, RpcMethodNameIsAWord) {
  EXPECT_EQ(Tokenizer::Classify("/etcdserverpb.KV/Range"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("/grpc.health.v1.Health/Check"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("/etcdserverpb.Lease/LeaseGrant"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("/etcdserverpb.kv/range"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("/index.html/Foo"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("/KV/Range"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("/a.B/C/D"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("/app.V1/Get-x"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("/var/lib/etcd.d/Member"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("/1a.B/C"), TokenClass::kPath);
}

// A media type (a standard top-level type, '/', a subtype) is a value, as a path is; other
// words joined by '/' (load/store, hi/lo) stay words.
TEST(TokenizerClassifyTest, MediaTypeIsAValue) {
  EXPECT_EQ(Tokenizer::Classify("text/css"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("image/png"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("application/vnd.api+json"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("load/store"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("Text/CSS"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("text/"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("text/css/x"), TokenClass::kWord);
}

// A message catalogue code right before a ':' names the event (AH10479 and AH10480 are two
// events): a word. Short numbers after capitals (CPU0:), lower-case names (eth1:) and a code
// that no ':' follows (ED25519, a key type) stay digit-bearing words.
TEST(TokenizerContextTest, MessageCodeBeforeAColonIsAWord) {
  auto class_of = [](std::string_view msg, std::size_t i) {
    const std::vector<Token> tokens = Tok(msg);
    if (i >= tokens.size()) {
      ADD_FAILURE() << "no token " << i << " in " << msg;
      return TokenClass::kCount_;
    }
    return tokens[i].cls;
  };
  EXPECT_EQ(class_of("AH10479: http: 127.0.0.1 resolved", 0), TokenClass::kWord);
  EXPECT_EQ(class_of("proxy_util.c(2936): [client 127.0.0.1:41792] AH10480: http: x", 4),
            TokenClass::kWord);
  EXPECT_EQ(class_of("ORA-00942: table or view does not exist", 0), TokenClass::kWord);
  EXPECT_EQ(class_of("CPU0: Core temperature above threshold", 0), TokenClass::kDigitWord);
  EXPECT_EQ(class_of("CPU123: Core temperature above threshold", 0), TokenClass::kDigitWord);
  EXPECT_EQ(class_of("eth1: link up", 0), TokenClass::kDigitWord);
  EXPECT_EQ(class_of("node-1234: joined", 0), TokenClass::kDigitWord);
  EXPECT_EQ(class_of("key ED25519 SHA256:abc", 1), TokenClass::kDigitWord);
  EXPECT_EQ(class_of("code AH10479 seen", 1), TokenClass::kDigitWord);
}

TEST(TokenizerSplitTest, TrailingColonDotBangQuestionAreStripped) {
  const std::string_view msg = "Error: disk full. Retry! Why? ok:. 10.0.0.1: done...";
  const std::vector<Token> tokens = Tok(msg);
  EXPECT_EQ(Texts(msg, tokens), (std::vector<std::string>{"Error", "disk", "full", "Retry", "Why",
                                                          "ok", "10.0.0.1", "done"}));
  EXPECT_EQ(tokens[0].offset, 0u);
  EXPECT_EQ(tokens[0].length, 5u);
  EXPECT_EQ(tokens[6].cls, TokenClass::kIPv4);
  EXPECT_EQ(tokens[6].offset, 35u);
  EXPECT_EQ(tokens[6].length, 8u);
}

TEST(TokenizerSplitTest, InnerPunctuationStaysInsideTheToken) {
  const std::string_view msg = "nginx.service: a:b c.d 12:34:56";
  EXPECT_EQ(Texts(msg, Tok(msg)),
            (std::vector<std::string>{"nginx.service", "a:b", "c.d", "12:34:56"}));
}

TEST(TokenizerSplitTest, TokensMadeOnlyOfTrailingPunctuationAreDropped) {
  const std::string_view msg = "start ... : ?! end";
  const std::vector<Token> tokens = Tok(msg);
  EXPECT_EQ(Texts(msg, tokens), (std::vector<std::string>{"start", "end"}));
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[1].offset, 15u);
}

TEST(TokenizerSplitTest, TemplateCanBeRebuiltFromOffsets) {
  const std::string_view msg = "Accepted password for alice from 10.0.0.1 port 22 ssh2";
  const std::vector<Token> tokens = Tok(msg);
  std::string rebuilt;
  std::size_t pos = 0;
  for (const Token& t : tokens) {
    rebuilt.append(msg.substr(pos, t.offset - pos));
    rebuilt.append(msg.substr(t.offset, t.length));
    pos = t.offset + t.length;
  }
  rebuilt.append(msg.substr(pos));
  EXPECT_EQ(rebuilt, msg);
  ASSERT_EQ(tokens.size(), 9u);
  EXPECT_EQ(tokens[5].cls, TokenClass::kIPv4);
  EXPECT_EQ(tokens[7].cls, TokenClass::kInteger);
  EXPECT_EQ(tokens[8].cls, TokenClass::kDigitWord);
}

// --- values of issue #14's "splits" classes -----------------------------------------------

// The class of each token of `message`, by name, for readable expectations.
std::vector<std::string> ClassNames(std::string_view message) {
  std::vector<std::string> out;
  for (const Token& t : Tok(message)) out.emplace_back(TokenClassName(t.cls));
  return out;
}

TEST(TokenizerValueClassTest, Base64IdsAreOpaqueIdsWithOrWithoutSlashOrPlus) {
  EXPECT_EQ(Tokenizer::Classify("SHA256:AbCdEf/gh+IjK0LmNoPqRs4TuVwX"), TokenClass::kHex);
  EXPECT_EQ(Tokenizer::Classify("SHA256:ZYx9wvUTsrqPONmlk1jihg7FEDcb"), TokenClass::kHex);
  EXPECT_EQ(Tokenizer::Classify("Kq9xP2mZ7wRb4TnY1vLc"), TokenClass::kHex);
  // Names switch kinds rarely; paths start with '/'; too short is not random enough.
  EXPECT_EQ(Tokenizer::Classify("Http2ServerHandlerFactory"), TokenClass::kDigitWord);
  EXPECT_EQ(Tokenizer::Classify("/Ab1/Cd2/Ef3/Gh4/Ij5"), TokenClass::kPath);
  EXPECT_EQ(Tokenizer::Classify("Kq9xP2mZ7wRb"), TokenClass::kDigitWord);
}

// A random id of 16 base64 characters holds no digit one time in twelve: a '/' and two capitals
// in a row stand in for it; names written in capitalised parts have no such pair. A '+' alone
// does not: a token with no digit, '/', ':' or '@' is a word by the tokenizer's fast path.
TEST(TokenizerValueClassTest, Base64IdsWithoutDigits) {
  EXPECT_EQ(Tokenizer::Classify("qnFuwFZhXLl/AAAB"), TokenClass::kHex);
  EXPECT_EQ(Tokenizer::Classify("LLl+ylZhjLF/AAAB"), TokenClass::kHex);
  EXPECT_EQ(ClassNames("passwd-file(carol,127.0.0.1,<qnFuwFZhXLl/AAAB>): Password mismatch"),
            (std::vector<std::string>{"word", "word", "ipv4", "hex", "word", "word"}));
  EXPECT_EQ(Tokenizer::Classify("HighMem/MovableOnly"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("qnFuwFZhXLlqAAAB"), TokenClass::kWord);     // no '+' nor '/'
  EXPECT_EQ(Tokenizer::Classify("+ivaicWARNliPnkIGmN"), TokenClass::kWord);  // '+' alone
  EXPECT_EQ(ClassNames("id +ivaicWARNliPnkIGmN df"),
            (std::vector<std::string>{"word", "word", "word"}));
  EXPECT_EQ(Tokenizer::Classify("qnFuwFZhXLl/AAA"), TokenClass::kWord);  // too short
}

// A field's name is never a value, glued to its ':' as much as apart: active_anon:418 is
// tokenized as "active_anon: 418" (a word, then the number), so rows of different fields do
// not fold; a host's name with a port holds a '.', a digit or a '-' and stays one value.
TEST(TokenizerContextTest, AFieldsNameGluedToItsNumberIsAWord) {
  const std::string_view msg = "active_anon:418 free:47417 isolated_anon:0";
  const std::vector<Token> tokens = Tok(msg);
  EXPECT_EQ(Texts(msg, tokens), (std::vector<std::string>{"active_anon", "418", "free", "47417",
                                                          "isolated_anon", "0"}));
  EXPECT_EQ(ClassNames(msg),
            (std::vector<std::string>{"word", "int", "word", "int", "word", "int"}));
  EXPECT_EQ(ClassNames("connect db1:5432 kafka-1:9092 example.org:443"),
            (std::vector<std::string>{"word", "hostport", "hostport", "hostport"}));
  EXPECT_EQ(ClassNames("free:15232kB a:b:12"),
            (std::vector<std::string>{"digitword", "digitword"}));
}

// A name holding a digit right before ':' and a number names that number's field (registers
// dumped as R10: 0000000000000246): a word. Before a word it stays a variable (eth1: link up),
// and so does one glued to its value or one starting with a digit.
TEST(TokenizerContextTest, ADigitNameBeforeAColonAndANumberIsAWord) {
  EXPECT_EQ(ClassNames("R10: 0000000000000001 R11: 0x246 RAX: ffff88800a1b2c3d"),
            (std::vector<std::string>{"word", "int", "word", "hex", "word", "hex"}));
  EXPECT_EQ(ClassNames("CPU0: 42"), (std::vector<std::string>{"word", "int"}));
  EXPECT_EQ(ClassNames("eth1: link up"), (std::vector<std::string>{"digitword", "word", "word"}));
  EXPECT_EQ(ClassNames("eth1 42"), (std::vector<std::string>{"digitword", "int"}));
  EXPECT_EQ(ClassNames("1a2: 42"), (std::vector<std::string>{"digitword", "int"}));
}

// A closing tag is markup's word (</TASK>), not a path, so a line of it does not fold with a
// line of one path-like token (a stack frame dump_stack_lvl+0x44/0x5c).
TEST(TokenizerContextTest, AClosingTagIsAWord) {
  EXPECT_EQ(ClassNames(" </TASK>"), (std::vector<std::string>{"word"}));
  EXPECT_EQ(ClassNames("<p>x</p>"), (std::vector<std::string>{"word", "word", "word"}));
  EXPECT_EQ(ClassNames(" dump_stack_lvl+0x44/0x5c"), (std::vector<std::string>{"path"}));
  EXPECT_EQ(ClassNames("GET </health"), (std::vector<std::string>{"word", "path"}));
}

// A tag's name holds no '/' and begins with a letter: a base64 session id in angle brackets
// that begins with '/' is a value, as one beginning with a letter is (session=<Ab3/Cd...>).
TEST(TokenizerContextTest, AnIdInAngleBracketsIsNoClosingTag) {
  EXPECT_EQ(ClassNames("session=</2cx11Zh3ut/AAAB>"), (std::vector<std::string>{"word", "path"}));
  EXPECT_EQ(ClassNames("session=<//KL3lZhDOB/AAAB>"), (std::vector<std::string>{"word", "path"}));
  EXPECT_EQ(ClassNames("session=<wvyrv1Zh6IB/AAAB>"), (std::vector<std::string>{"word", "hex"}));
  EXPECT_EQ(ClassNames("x </ns:tag-1>"), (std::vector<std::string>{"word", "word"}));
  EXPECT_EQ(ClassNames("x </_tag>"), (std::vector<std::string>{"word", "word"}));
}

TEST(TokenizerValueClassTest, LiteralsAreValuesOnlyAfterAKey) {
  EXPECT_EQ(
      ClassNames("overlap:true enabled=null flag: False returned true"),
      (std::vector<std::string>{"literal", "word", "literal", "word", "literal", "word", "word"}));
  EXPECT_EQ(Tokenizer::Classify("visible:FALSE"), TokenClass::kLiteral);
  EXPECT_EQ(Tokenizer::Classify("overlap:truthy"), TokenClass::kWord);
}

TEST(TokenizerValueClassTest, MonthAndWeekdayNamesNextToANumberAreDates) {
  EXPECT_EQ(
      ClassNames("at Mon Jun 12 13:10:01 2005 on"),
      (std::vector<std::string>{"word", "datetime", "datetime", "int", "datetime", "int", "word"}));
  EXPECT_EQ(ClassNames("Date: Sun, 06 Nov 1994 GMT"),
            (std::vector<std::string>{"word", "datetime", "int", "datetime", "int", "word"}));
  EXPECT_EQ(Tokenizer::Classify("12-Jun-2005"), TokenClass::kDateTime);
  EXPECT_EQ(Tokenizer::Classify("12/Jun/2005:13:10:01"), TokenClass::kDateTime);
  // Not next to a number, or not capitalised: words.
  EXPECT_EQ(ClassNames("the May release, may 5"),
            (std::vector<std::string>{"word", "word", "word", "word", "int"}));
  EXPECT_EQ(Tokenizer::Classify("12-Jux-2005"), TokenClass::kDigitWord);
}

TEST(TokenizerValueClassTest, EmptyValuesAreZeroLengthTokens) {
  const std::string_view msg = "set to () [] \"\" {} key= k2=v a=,b";
  const std::vector<Token> tokens = Tok(msg);
  ExpectWellFormed(msg, tokens);
  EXPECT_EQ(Texts(msg, tokens), (std::vector<std::string>{"set", "to", "", "", "", "", "key", "",
                                                          "k2", "v", "a", "", "b"}));
  EXPECT_EQ(tokens[2].offset, msg.find(')'));  // inside its brackets
  EXPECT_EQ(tokens[7].offset, msg.find("key=") + 4);
  EXPECT_EQ(Tok("value=").size(), 2u);  // a key at the end
}

TEST(TokenizerValueClassTest, HostNamesHoldingADigit) {
  EXPECT_EQ(Tokenizer::Classify("host-82-135-142-1.customer.example.net"), TokenClass::kHostPort);
  EXPECT_EQ(Tokenizer::Classify("dsl.static-81-22.kpn.nl"), TokenClass::kHostPort);
  // Java names end in a class name, versions and files in digits or two labels.
  EXPECT_EQ(Tokenizer::Classify("org.apache.hadoop.v2.MRAppMaster"), TokenClass::kDigitWord);
  EXPECT_EQ(Tokenizer::Classify("file1.txt"), TokenClass::kDigitWord);
  // Short names only after a word that introduces a host.
  EXPECT_EQ(
      ClassNames("from node-246 rhost=dn228 on en0"),
      (std::vector<std::string>{"word", "hostport", "word", "hostport", "word", "digitword"}));
}

TEST(TokenizerValueClassTest, NameGluedToABracketedAddressIsItsHost) {
  EXPECT_EQ(ClassNames("connect from localhost[127.0.0.1]"),
            (std::vector<std::string>{"word", "word", "hostport", "ipv4"}));
  EXPECT_EQ(ClassNames("client=unknown[::1]:25 helo=mail-7.example.test[10.0.0.2]"),
            (std::vector<std::string>{"word", "hostport", "ipv6", "digitword", "word", "hostport",
                                      "ipv4"}));
  // Not glued, not closed right after the address, or not an address: the word stays.
  EXPECT_EQ(ClassNames("connect from localhost [127.0.0.1]"),
            (std::vector<std::string>{"word", "word", "word", "ipv4"}));
  EXPECT_EQ(ClassNames("peer localhost[127.0.0.1 x]"),
            (std::vector<std::string>{"word", "word", "ipv4", "word"}));
  EXPECT_EQ(ClassNames("sshd[1234] query[A] x[10.0.0.1 y]"),
            (std::vector<std::string>{"word", "int", "word", "word", "word", "ipv4", "word"}));
}

// --- classification ------------------------------------------------------------------------

struct ClassCase {
  const char* text;
  TokenClass cls;
};

void ExpectClasses(const std::vector<ClassCase>& cases) {
  for (const ClassCase& c : cases) {
    EXPECT_EQ(TokenClassName(Tokenizer::Classify(c.text)), TokenClassName(c.cls))
        << "token: " << c.text;
  }
}

TEST(TokenizerClassifyTest, Words) {
  ExpectClasses({{"hello", TokenClass::kWord},
                 {"Mar", TokenClass::kWord},
                 {"deadbeef", TokenClass::kWord},        // hex letters only, no digit
                 {"var/log/syslog", TokenClass::kWord},  // no digit, no leading '/'
                 {"-", TokenClass::kWord},
                 {"", TokenClass::kWord}});
}

TEST(TokenizerClassifyTest, Integers) {
  ExpectClasses({{"0", TokenClass::kInteger},
                 {"42", TokenClass::kInteger},
                 {"-7", TokenClass::kInteger},
                 {"+3", TokenClass::kInteger},
                 {"18446744073709551616", TokenClass::kInteger}});
  EXPECT_NE(Tokenizer::Classify("4 2"), TokenClass::kInteger);
  EXPECT_NE(Tokenizer::Classify("42a"), TokenClass::kInteger);
  EXPECT_NE(Tokenizer::Classify("--7"), TokenClass::kInteger);
}

TEST(TokenizerClassifyTest, Floats) {
  ExpectClasses({{"3.14", TokenClass::kFloat},
                 {"-0.5", TokenClass::kFloat},
                 {".5", TokenClass::kFloat},
                 {"1e-3", TokenClass::kFloat},
                 {"1e5", TokenClass::kFloat},
                 {"2.5E+10", TokenClass::kFloat}});
  EXPECT_EQ(Tokenizer::Classify("0.5s"), TokenClass::kDigitWord);  // a unit makes a shape
  EXPECT_EQ(Tokenizer::Classify("5."), TokenClass::kDigitWord);
  EXPECT_EQ(Tokenizer::Classify("1e"), TokenClass::kDigitWord);
  EXPECT_EQ(Tokenizer::Classify("2.0.0"), TokenClass::kDigitWord);
}

TEST(TokenizerClassifyTest, Hex) {
  ExpectClasses({{"0x1f", TokenClass::kHex},
                 {"0XDEAD", TokenClass::kHex},
                 {"deadbeef01", TokenClass::kHex},
                 {"0123abcd", TokenClass::kHex},
                 {"A1B2C3D4E5", TokenClass::kHex}});
  EXPECT_EQ(Tokenizer::Classify("0xZZ"), TokenClass::kDigitWord);
  EXPECT_EQ(Tokenizer::Classify("abc123"), TokenClass::kDigitWord);  // too short for hex
  EXPECT_EQ(Tokenizer::Classify("deadbeef"), TokenClass::kWord);     // no digit
}

TEST(TokenizerClassifyTest, IPv4WithAndWithoutPort) {
  ExpectClasses({{"10.0.0.1", TokenClass::kIPv4},
                 {"255.255.255.255", TokenClass::kIPv4},
                 {"0.0.0.0", TokenClass::kIPv4},
                 {"10.0.0.1:8080", TokenClass::kIPv4},
                 {"192.168.1.7:65535", TokenClass::kIPv4}});
  EXPECT_NE(Tokenizer::Classify("999.1.1.1"), TokenClass::kIPv4);
  EXPECT_NE(Tokenizer::Classify("10.0.0.256"), TokenClass::kIPv4);
  EXPECT_NE(Tokenizer::Classify("1.2.3"), TokenClass::kIPv4);
  EXPECT_NE(Tokenizer::Classify("1.2.3.4.5"), TokenClass::kIPv4);
  EXPECT_NE(Tokenizer::Classify("1.2.3.4:123456"), TokenClass::kIPv4);  // port too long
  EXPECT_NE(Tokenizer::Classify("1.2.3.4:http"), TokenClass::kIPv4);
  // Invalid addresses are still variables, never words.
  EXPECT_TRUE(IsVariableClass(Tokenizer::Classify("999.1.1.1")));
}

TEST(TokenizerClassifyTest, IPv6IncludingBracketedWithPort) {
  ExpectClasses({{"fe80::1", TokenClass::kIPv6},
                 {"::1", TokenClass::kIPv6},
                 {"2001:db8::ff00:42:8329", TokenClass::kIPv6},
                 {"2001:0db8:85a3:0000:0000:8a2e:0370:7334", TokenClass::kIPv6},
                 {"::ffff:10.0.0.1", TokenClass::kIPv6},
                 {"fe80::1%eth0", TokenClass::kIPv6},
                 {"[::1]", TokenClass::kIPv6},
                 {"[::1]:514", TokenClass::kIPv6},
                 {"[fe80::1%eth0]:22", TokenClass::kIPv6}});
  EXPECT_NE(Tokenizer::Classify("[::1]:ssh"), TokenClass::kIPv6);
  EXPECT_NE(Tokenizer::Classify("[::1"), TokenClass::kIPv6);
  EXPECT_NE(Tokenizer::Classify("fe80:1"), TokenClass::kIPv6);  // one colon
  EXPECT_NE(Tokenizer::Classify("fe80::g1"), TokenClass::kIPv6);
}

TEST(TokenizerSplitTest, BracketedIPv6InAMessageIsSplitAtTheBrackets) {
  // '[' and ']' are separators, so the bracketed form reaches Classify only without them:
  // the address and the ":port" rest become two variable tokens.
  const std::string_view msg = "listening on [::1]:514 now";
  const std::vector<Token> tokens = Tok(msg);
  EXPECT_EQ(Texts(msg, tokens),
            (std::vector<std::string>{"listening", "on", "::1", ":514", "now"}));
  ASSERT_EQ(tokens.size(), 5u);
  EXPECT_EQ(tokens[2].cls, TokenClass::kIPv6);
  EXPECT_EQ(tokens[2].offset, 14u);
  EXPECT_TRUE(IsVariableClass(tokens[3].cls));
}

TEST(TokenizerClassifyTest, Mac) {
  ExpectClasses({{"00:1a:2b:3c:4d:5e", TokenClass::kMac},
                 {"00-1A-2B-3C-4D-5E", TokenClass::kMac},
                 {"00:11:22:33:44:55", TokenClass::kMac}});
  EXPECT_NE(Tokenizer::Classify("00:1a:2b:3c:4d"), TokenClass::kMac);
  EXPECT_NE(Tokenizer::Classify("00:1a-2b:3c:4d:5e"), TokenClass::kMac);  // mixed separators
  EXPECT_NE(Tokenizer::Classify("00:1g:2b:3c:4d:5e"), TokenClass::kMac);
}

TEST(TokenizerClassifyTest, Uuid) {
  ExpectClasses({{"123e4567-e89b-12d3-a456-426614174000", TokenClass::kUuid},
                 {"123E4567-E89B-12D3-A456-426614174000", TokenClass::kUuid}});
  EXPECT_NE(Tokenizer::Classify("123e4567-e89b-12d3-a456-42661417400"), TokenClass::kUuid);
  EXPECT_NE(Tokenizer::Classify("123e4567e89b-12d3-a456-4266141740000"), TokenClass::kUuid);
  EXPECT_NE(Tokenizer::Classify("123e4567-e89b-12d3-a456-42661417400g"), TokenClass::kUuid);
}

TEST(TokenizerClassifyTest, DatesAndTimes) {
  ExpectClasses({{"2024-03-01", TokenClass::kDateTime},
                 {"2024/03/01", TokenClass::kDateTime},
                 {"12:34", TokenClass::kDateTime},
                 {"12:34:56.789", TokenClass::kDateTime},
                 {"2024-03-01T00:00:00Z", TokenClass::kDateTime},
                 {"2024-03-01T10:00:00.123+01:00", TokenClass::kDateTime}});
  EXPECT_NE(Tokenizer::Classify("12-34"), TokenClass::kDateTime);  // one dash: no date shape
  EXPECT_NE(Tokenizer::Classify("1:2"), TokenClass::kDateTime);    // too few digits
  EXPECT_NE(Tokenizer::Classify("2024-03-01x"), TokenClass::kDateTime);
}

// A path holds a '/' and a digit, or begins with '/' (a file or a request target), digits or
// not; a word with a '/' inside it and no digit is a word (and/or, TCP/IP).
TEST(TokenizerClassifyTest, PathsHoldingDigitsOrBeginningWithASlash) {
  ExpectClasses({{"/var/log/x.1", TokenClass::kPath},
                 {"~/backup2", TokenClass::kPath},
                 {"pts/3", TokenClass::kPath},
                 {"HTTP/1.1", TokenClass::kPath},
                 {"/dev/sda1", TokenClass::kPath},
                 {"/var/log/syslog", TokenClass::kPath},
                 {"/health", TokenClass::kPath},
                 {"/", TokenClass::kPath}});
  EXPECT_EQ(Tokenizer::Classify("and/or"), TokenClass::kWord);
  EXPECT_EQ(Tokenizer::Classify("TCP/IP"), TokenClass::kWord);
}

TEST(TokenizerClassifyTest, Urls) {
  ExpectClasses({{"https://example.org:8443/x", TokenClass::kUrl},
                 {"redis://10.0.0.5:6379", TokenClass::kUrl},
                 {"s3://bkt-1a2b3c/daily/17.tar.gz", TokenClass::kUrl}});
  EXPECT_NE(Tokenizer::Classify("http:/example1.org"), TokenClass::kUrl);
}

TEST(TokenizerClassifyTest, Email) {
  ExpectClasses({{"user@example.org", TokenClass::kEmail},
                 {"alice.smith+tag@mail.example.com", TokenClass::kEmail},
                 {"bob7@example.org", TokenClass::kEmail}});
  EXPECT_NE(Tokenizer::Classify("@example.org"), TokenClass::kEmail);  // nothing before '@'
  // A host of one label is a host too (root@vm, a message id's `<...@vm>`); an object's
  // hash code after '@' (all hex with a digit) or a number is not a host.
  EXPECT_EQ(Tokenizer::Classify("user@host"), TokenClass::kEmail);
  EXPECT_EQ(Tokenizer::Classify("20261128045348.003684@vm"), TokenClass::kEmail);
  EXPECT_NE(Tokenizer::Classify("QuorumServer@33557fe4"), TokenClass::kEmail);
  EXPECT_NE(Tokenizer::Classify("doSaveChannels@286"), TokenClass::kEmail);
  EXPECT_NE(Tokenizer::Classify("user@host-"), TokenClass::kEmail);
  EXPECT_NE(Tokenizer::Classify("a@b.c/d1"), TokenClass::kEmail);  // a slash: not an address
}

TEST(TokenizerClassifyTest, HostPort) {
  ExpectClasses({{"name.example.org:5070", TokenClass::kHostPort},
                 {"host:80", TokenClass::kHostPort},
                 {"db-01.internal:5432", TokenClass::kHostPort}});
  EXPECT_NE(Tokenizer::Classify("host:123456"), TokenClass::kHostPort);
  EXPECT_NE(Tokenizer::Classify("ho/st:80"), TokenClass::kHostPort);
  EXPECT_NE(Tokenizer::Classify("host:8o"), TokenClass::kHostPort);
}

TEST(TokenizerClassifyTest, DigitWords) {
  ExpectClasses({{"en0", TokenClass::kDigitWord},
                 {"awdl0", TokenClass::kDigitWord},
                 {"blk_-123", TokenClass::kDigitWord},
                 {"x86_64", TokenClass::kDigitWord},
                 {"ssh2", TokenClass::kDigitWord},
                 {"v1.2.3", TokenClass::kDigitWord},
                 {"999.1.1.1", TokenClass::kDigitWord}});
}

TEST(TokenizerClassifyTest, EveryClassHasADistinctName) {
  std::vector<std::string_view> names;
  for (int i = 0; i < static_cast<int>(TokenClass::kCount_); ++i) {
    const std::string_view name = TokenClassName(static_cast<TokenClass>(i));
    EXPECT_NE(name, "?");
    for (std::string_view seen : names) EXPECT_NE(seen, name);
    names.push_back(name);
  }
  EXPECT_EQ(TokenClassName(TokenClass::kCount_), "?");
  EXPECT_FALSE(IsVariableClass(TokenClass::kWord));
  EXPECT_TRUE(IsVariableClass(TokenClass::kDigitWord));
}

TEST(TokenizerSplitTest, TokenizeAssignsTheClassOfEachToken) {
  const std::string_view msg =
      "from 10.0.0.1:22 mac 00:1a:2b:3c:4d:5e id 123e4567-e89b-12d3-a456-426614174000 at "
      "2024-03-01T00:00:00Z file /var/log/x.1 url https://x.org/1 mail a@b.org peer "
      "db.example.org:5432 if en0 took 0.25 code 0x1f n 7";
  const std::vector<Token> tokens = Tok(msg);
  std::vector<std::pair<std::string, TokenClass>> got;
  for (const Token& t : tokens) {
    if (t.cls != TokenClass::kWord) got.emplace_back(msg.substr(t.offset, t.length), t.cls);
  }
  const std::vector<std::pair<std::string, TokenClass>> want = {
      {"10.0.0.1:22", TokenClass::kIPv4},
      {"00:1a:2b:3c:4d:5e", TokenClass::kMac},
      {"123e4567-e89b-12d3-a456-426614174000", TokenClass::kUuid},
      {"2024-03-01T00:00:00Z", TokenClass::kDateTime},
      {"/var/log/x.1", TokenClass::kPath},
      {"https://x.org/1", TokenClass::kUrl},
      {"a@b.org", TokenClass::kEmail},
      {"db.example.org:5432", TokenClass::kHostPort},
      {"en0", TokenClass::kDigitWord},
      {"0.25", TokenClass::kFloat},
      {"0x1f", TokenClass::kHex},
      {"7", TokenClass::kInteger}};
  EXPECT_EQ(got, want);
}

// --- limits and hostile input --------------------------------------------------------------

TEST(TokenizerLimitsTest, MaxTokensIsHonoured) {
  std::string msg;
  for (int i = 0; i < 50; ++i) msg += "w" + std::to_string(i) + " ";
  EXPECT_EQ(Tok(msg, {.max_tokens = 10}).size(), 10u);
  EXPECT_EQ(Tok(msg, {.max_tokens = 1}).size(), 1u);
  EXPECT_EQ(Tok(msg, {.max_tokens = 0}).size(), 0u);
  EXPECT_EQ(Tok(msg, {.max_tokens = 50}).size(), 50u);
  EXPECT_EQ(Tok(msg, {.max_tokens = 1000}).size(), 50u);
  // The kept tokens are the first ones.
  const std::vector<Token> first3 = Tok(msg, {.max_tokens = 3});
  EXPECT_EQ(Texts(msg, first3), (std::vector<std::string>{"w0", "w1", "w2"}));
}

TEST(TokenizerLimitsTest, DefaultMaxTokensIs128) {
  std::string msg;
  for (int i = 0; i < 300; ++i) msg += "x ";
  EXPECT_EQ(Tokenizer().options().max_tokens, 128u);
  EXPECT_EQ(Tok(msg).size(), 128u);
}

TEST(TokenizerHostileTest, EmptyAndWhiteSpaceOnly) {
  EXPECT_TRUE(Tok("").empty());
  EXPECT_TRUE(Tok(" ").empty());
  // Separators only: no token but the empty values among them ("=" after no token is not
  // one; (), [], {} are).
  const std::vector<Token> empties = Tok(" \t\r\n\v\f  ,;=()[]{}\"'<>|");
  ASSERT_EQ(empties.size(), 3u);
  for (const Token& t : empties) {
    EXPECT_EQ(t.cls, TokenClass::kEmpty);
    EXPECT_EQ(t.length, 0u);
  }
}

TEST(TokenizerHostileTest, NulBytesSeparateTokens) {
  const std::string msg("ab\0cd\0\0ef", 9);
  const std::vector<Token> tokens = Tok(msg);
  EXPECT_EQ(Texts(msg, tokens), (std::vector<std::string>{"ab", "cd", "ef"}));
  ExpectWellFormed(msg, tokens);
  EXPECT_TRUE(Tok(std::string(64, '\0')).empty());
}

TEST(TokenizerHostileTest, InvalidUtf8IsKeptInsideTokens) {
  const std::string msg = "bad \xff\xfe bytes \xc0\xaf caf\xc3\xa9 \xe2\x82";
  const std::vector<Token> tokens = Tok(msg);
  EXPECT_EQ(Texts(msg, tokens), (std::vector<std::string>{"bad", "\xff\xfe", "bytes", "\xc0\xaf",
                                                          "caf\xc3\xa9", "\xe2\x82"}));
  for (const Token& t : tokens) EXPECT_EQ(t.cls, TokenClass::kWord);
  ExpectWellFormed(msg, tokens);
}

TEST(TokenizerHostileTest, AllByteValuesDoNotBreakTheInvariants) {
  std::string msg;
  for (int round = 0; round < 4; ++round) {
    for (int c = 0; c < 256; ++c) msg += static_cast<char>((c * 37 + round) & 0xff);
  }
  std::vector<Token> tokens;
  Tokenizer({.max_tokens = 100000}).Tokenize(msg, tokens);
  ExpectWellFormed(msg, tokens);
  EXPECT_FALSE(tokens.empty());
}

TEST(TokenizerHostileTest, OneMebibyteMessage) {
  constexpr std::size_t kSize = 1 << 20;
  std::string msg;
  msg.reserve(kSize);
  std::size_t count = 0, last_end = 0;
  while (true) {
    const std::string tok = "tok" + std::to_string(count);
    if (msg.size() + tok.size() + 1 > kSize) break;
    msg += tok;
    last_end = msg.size();
    msg += ' ';
    ++count;
  }
  msg.resize(kSize, ' ');
  std::vector<Token> tokens;
  Tokenizer({.max_tokens = 1u << 20}).Tokenize(msg, tokens);
  EXPECT_EQ(tokens.size(), count);
  ExpectWellFormed(msg, tokens);
  EXPECT_EQ(tokens.back().offset + tokens.back().length, last_end);
  EXPECT_EQ(tokens[1000].cls, TokenClass::kDigitWord);
  // The default limit still applies to a huge message.
  EXPECT_EQ(Tok(msg).size(), 128u);
  // One giant token.
  const std::string giant(1 << 20, 'a');
  const std::vector<Token> one = Tok(giant);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].length, 1u << 20);
  EXPECT_EQ(one[0].cls, TokenClass::kWord);
}

TEST(TokenizerReuseTest, SecondCallWithTheSameLineDoesNotReallocate) {
  const std::string_view msg = "Accepted password for alice from 10.0.0.1 port 22 ssh2";
  const Tokenizer tokenizer;
  std::vector<Token> tokens;
  tokenizer.Tokenize(msg, tokens);
  const Token* data = tokens.data();
  const std::size_t capacity = tokens.capacity();
  const std::size_t size = tokens.size();
  tokenizer.Tokenize(msg, tokens);
  EXPECT_EQ(tokens.data(), data);
  EXPECT_EQ(tokens.capacity(), capacity);
  EXPECT_EQ(tokens.size(), size);
  // A shorter line reuses the same storage too, and the output is cleared first.
  tokenizer.Tokenize("short line", tokens);
  EXPECT_EQ(tokens.data(), data);
  EXPECT_EQ(tokens.size(), 2u);
}

// The shape only skips class tests that would fail: classifying with every test run gives
// the same class, on random tokens made of the characters the class tests look at.
TEST(TokenizerShapeTest, ShapeSkipsOnlyFailingClassTests) {
  static constexpr std::string_view kAlphabet = "0123456789abcdefABCxXTZg.:-/@+~%_,[]";
  std::mt19937_64 rng(12345);
  std::string token;
  int variables = 0;
  for (int i = 0; i < 50'000; ++i) {
    token.clear();
    const std::size_t len = 1 + rng() % 40;
    for (std::size_t j = 0; j < len; ++j) token += kAlphabet[rng() % kAlphabet.size()];
    const TokenClass cls = ClassifyWithShape(token, ShapeOf(token));
    ASSERT_EQ(TokenClassName(cls), TokenClassName(ClassifyUnguarded(token))) << "token: " << token;
    variables += IsVariableClass(cls) && cls != TokenClass::kDigitWord ? 1 : 0;
  }
  EXPECT_GT(variables, 250);  // the random tokens reach the class tests, not only words
  // Structured tokens, where the guards matter most.
  for (std::string_view t :
       {"10.0.0.1:80", "fe80::1%eth0", "00:1a:2b:3c:4d:5e", "2024-03-01T10:00:00Z", "0x1F",
        "123e4567-e89b-12d3-a456-426614174000", "a@b.org", "http://x1.org", "~/x1", "h1.x:80",
        "-1.5e+3", "12:34:56,789", "deadbeef01", "+42"}) {
    EXPECT_EQ(ClassifyWithShape(t, ShapeOf(t)), ClassifyUnguarded(t)) << t;
  }
}

// Every boundary kernel gives the byte-at-a-time definition's tokens: on generated corpus
// lines, and on random lines dense in separators, trailing punctuation and candidate bytes,
// of lengths around the 64-byte blocks, with and without a token limit.
TEST(TokenizerKernelTest, EveryKernelGivesTheDefinitionsTokens) {
  std::vector<std::string> lines;
  for (const corpus::Line& line : corpus::Load(3000)) lines.push_back(line.message);
  static constexpr char kAlphabetBytes[] = "aZ09:./@!? \t,=[]|\0\xff-x";  // one NUL inside
  static constexpr std::string_view kAlphabet(kAlphabetBytes, sizeof kAlphabetBytes - 1);
  std::mt19937_64 rng(2026);
  for (int i = 0; i < 3000; ++i) {
    std::string line;
    const std::size_t len = rng() % 200;
    for (std::size_t j = 0; j < len; ++j) line += kAlphabet[rng() % kAlphabet.size()];
    lines.push_back(line);
  }
  // Random sentences of the words the context rules and empty values look at.
  static constexpr std::string_view kWords[] = {
      "Mon",    "Jun",         "june",     "12",           "13:10:01",    "2005",  ",",
      "from",   "to",          "node-246", "dn228",        "true",        "False", "null",
      "key=",   "=",           ":",        "()",           "[]",          "{}",    "\"\"",
      "''",     "(a",          "b)",       "overlap:true", "12-Jun-2005", "x",     "host",
      "rhost=", "1.5",         "HTTP/1.1", "404",          "\"",          "599",   "status:",
      "Code",   "\"status\":", "(1,",      "0)",           "(0",          "rc12"};
  for (int i = 0; i < 3000; ++i) {
    std::string line;
    const std::size_t words = rng() % 30;
    for (std::size_t j = 0; j < words; ++j) {
      line += kWords[rng() % std::size(kWords)];
      if (rng() % 3 != 0) line += ' ';
    }
    lines.push_back(line);
  }
  lines.push_back(std::string(64, 'a'));
  lines.push_back(std::string(63, 'a') + " b");
  lines.push_back(std::string(64, ' ') + "a1");
  lines.push_back(std::string(128, '9') + ":");
  std::vector<Token> tokens;
  int checked = 0;
  for (ByteBlockKernel kernel :
       {ByteBlockKernel::kAuto, ByteBlockKernel::kScalar, ByteBlockKernel::kAvx2}) {
    if (!ByteBlockKernelSupported(kernel)) {
      std::printf("kernel %d not supported by this CPU: not checked\n", static_cast<int>(kernel));
      continue;
    }
    for (std::uint32_t max_tokens : {128u, 3u}) {
      const Tokenizer tokenizer({.max_tokens = max_tokens, .kernel = kernel});
      for (const std::string& line : lines) {
        tokenizer.Tokenize(line, tokens);
        ASSERT_EQ(tokens, reference::Tokenize(line, max_tokens))
            << "kernel " << static_cast<int>(kernel) << ": " << line;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 2 * 2 * 6000);
}

}  // namespace
}  // namespace logfold
