// Template matching: does a line fit an open group's template? The structural confirmation the
// WindowMerger runs on each candidate group, on its own: a line's tokens and a template in;
// accept or reject, with the reason and the positions, out. Used by `logfold explain` too.
#ifndef LOGFOLD_PIPELINE_TEMPLATE_MATCH_H_
#define LOGFOLD_PIPELINE_TEMPLATE_MATCH_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/fingerprinter.h"
#include "pipeline/group_tokens.h"
#include "pipeline/message_header.h"
#include "pipeline/shape_map.h"
#include "pipeline/sibling_table.h"
#include "pipeline/tokenizer.h"

namespace logfold {

// Per-position flags of a group's template (kept in its GroupTokens).
struct TemplateFlag {
  static constexpr std::uint8_t kWild = 1;      // tokens here differed structurally: out of the
                                                // fingerprint
  static constexpr std::uint8_t kVaried = 2;    // texts here differed: shown as <*>
  static constexpr std::uint8_t kGapAfter = 4;  // lines had extra tokens after this one
};

// A line and a template whose token counts differ by more than this never match.
inline constexpr std::size_t kMaxTokenCountChange = 6;

// A line as matching sees it. Token offsets are into `message`; `body` is where the message
// proper starts (after the application's own header; 0 without one).
struct MatchLine {
  std::string_view message;
  std::span<const Token> tokens;
  std::span<const std::uint64_t> hashes;  // Fingerprinter::TokenHash of each token
  std::size_t body = 0;
  std::uint32_t dashes = 0;  // its empty values written '-' (kEmpty of one byte)
  // Words its scope has written as a key's value (the merger's, or none), keyed with `scope`:
  // a template's plain word among them is a value, which a learned name may take the place of.
  const ValueWords* values = nullptr;
  std::uint64_t scope = 0;
  bool learned = false;  // holds a learned name (asked before any of its tokens is)
  bool IsValueWord(std::uint64_t word_hash) const {
    return values != nullptr && !values->Empty() &&
           values->Holds(ValueWords::Key(scope, word_hash));
  }
};

// A group's template: its first line's message and that line's tokens with the flags the
// lines that joined since have set.
struct MatchTemplate {
  std::string_view message;
  const GroupTokens& tokens;
};

class TemplateMatcher;

// The hash of every host token (the tokenizer's kHostPort tokens are hashed by their class).
inline const std::uint64_t kHostClassHash = Fingerprinter::ClassHashOf(TokenClass::kHostPort);
// A name the merger learned as a value (WindowMerger's MaskValues gives it the host class and
// keeps its word's hash): it agrees, and is evidence of a position's values, as the plain word
// it was, and every host has the class's hash instead.
inline bool IsLearnedName(TokenClass cls, std::uint64_t hash) {
  return cls == TokenClass::kHostPort && hash != kHostClassHash;
}
// Fields learned from the stream to hold names (the merger's, window_merger_siblings.cc): a
// field (a word before `=`) whose values have been many different words in its scope.
class NameFields {
 public:
  // Does the field whose name hashes to `field_hash` (Fingerprinter::TokenHash), in the
  // current line's scope, hold names?
  virtual bool HoldsNames(std::uint64_t field_hash) = 0;

 protected:
  ~NameFields() = default;
};

// The text between a field's name and its value, `=` and at most two opening brackets or
// quotes (`pool=closed`, `subs=[closed]`, `subs="[a b]"`), when `value` is the first word of
// the value of the field `key` names; empty otherwise.
std::string_view FieldValueGap(std::string_view message, const Token& key, const Token& value);

// Is the double quote at `p` escaped (an odd number of backslashes right before it)?
bool EscapedQuote(std::string_view message, std::size_t p);

// The first double quote at or after `from` that is escaped (`escaped`) or not, or npos.
std::size_t NextQuote(std::string_view message, std::size_t from, bool escaped);

// A line prepared the way the merger matches it: the tokens of its body (after its own header
// when header inference is on; offsets relative to the whole message), their hashes, runs of
// values of one kind ("1 2 3", "node-1, node-2") collapsed into one token, and so is a
// double-quoted text from its first variable, after at most one plain word ("GET /a?b=1
// HTTP/1.1": GET and one path token), unless it holds one of the matcher's protected words or
// is a JSON line's message field (`"msg":"<id> became leader"`, `"message":...`: the message);
// a quoted "-" is an empty value (kEmpty, though one byte long), and so is a '-' standing alone
// in a line of fields unless it stands between two plain words (MarkEmptyDashes); a stack
// frame's call site (a qualified name with its source position in parentheses,
// `a.B.run(B.java:42)`) is one kPath token, and so is a bracketed context opening the body
// (`[raft-expiration-reaper]:`, or after its one plain first word, `[LogLoader partition=t-0]`).
struct PreparedLine {
  std::vector<Token> tokens;
  std::vector<std::uint64_t> hashes;
  MessageHeader header;
  std::uint32_t dashes = 0;            // tokens that are a '-' standing for an empty value
  const ValueWords* values = nullptr;  // see MatchLine
  std::uint64_t scope = 0;
  // A peer's endpoint that opened the message (SkipPeerEndpoint), kept out of the tokens as
  // context: its offset in the message and its length (0: none).
  std::uint32_t peer = 0;
  std::uint16_t peer_size = 0;
  bool learned = false;
  MatchLine View(std::string_view message) const {
    return {message, tokens, hashes, header.body, dashes, values, scope, learned};
  }
};
void PrepareLine(const Tokenizer& tokenizer, const TemplateMatcher& matcher, bool infer_header,
                 std::string_view message, PreparedLine& out);
// The same with the header already found (by a scope's HeaderLearner).
void PrepareLine(const Tokenizer& tokenizer, const TemplateMatcher& matcher,
                 const MessageHeader& header, std::string_view message, PreparedLine& out);
// The number of items of a bracketed list that PrepareLine made one token (`Set(a-0, a-1)`:
// 2), or 0 when `t` is none: for `explain`, which says a list slot decided.
std::size_t ListItems(std::string_view message, const Token& t);

enum class MatchReason : std::uint8_t {
  kFits,         // accepted: same token count, every difference a variable
  kFitsAligned,  // accepted: a variable written with a different number of tokens
  kProtectedWhereVaried,
  kDigitWordLetters,
  kProtectedWordDiffers,
  kPlainWordOutOfContext,
  kWordOutOfContextUnsupported,
  kTooFewAgreeingWords,
  kTokenCountsTooFar,
  kExtraTokensAtEnd,
  kStretchWithoutVariable,
  kTooFewAligned,
  kNothingKept,
  kFieldNameDiffers,
  kTermDiffers,
  kNegatedState,
};
// One sentence saying what the reason means (the text `logfold explain` prints).
std::string_view MatchReasonText(MatchReason reason);

struct MatchResult {
  static constexpr std::uint32_t kNoPosition = UINT32_MAX;
  bool accepted = false;
  MatchReason reason = MatchReason::kFits;
  // A rejection's line token (for an unaligned stretch, its first line token, or the line's
  // last token when the stretch lies past the line's end); kNoPosition when no one token
  // decided it (token counts, too few agreeing words).
  std::uint32_t position = kNoPosition;
};

// RuledOut's verdict without the template, for most lines that fit none of a crowd of
// templates (a flood of unique lines: a bucket scan reads 16 cold groups a line, three or four
// cache misses each). A 64-bit digest of a template's first kPositions positions, one byte
// each (0 when wild or past the end, else kKnown, the word bit and 6 bits of the hash), and
// of its token count (top byte) sits where the caller finds it without reading the template.
// A differing 6-bit hash is a differing token, so RulesOut counts at most RuledOut's changed
// words and at least its agreeing ones: true only where RuledOut is true.
class RuledOutDigest {
 public:
  static constexpr std::size_t kPositions = 7;

  // The template's digest: redo it whenever a position turns wild.
  static std::uint64_t Of(const GroupTokens& tmpl) {
    const std::size_t n = tmpl.size();
    std::uint64_t digest = static_cast<std::uint64_t>(n & 0xff) << 56;
    for (std::size_t i = 0; i < n && i < kPositions; ++i) {
      if (!(tmpl.flags(i) & TemplateFlag::kWild)) {
        digest |= Byte(tmpl.hash(i), tmpl.cls(i)) << (8 * i);
      }
    }
    return digest;
  }

  // The line that RulesOut then judges.
  void SetLine(const MatchLine& line) {
    const std::size_t n = line.tokens.size();
    line_ = static_cast<std::uint64_t>(n & 0xff) << 56;
    judged_ = kBit6;
    words_past_ = line.dashes;  // a dash may agree as a word does (Match counts one)
    for (std::size_t i = 0; i < n; ++i) {
      if (i < kPositions) {
        line_ |= Byte(line.hashes[i], line.tokens[i].cls) << (8 * i);
      } else {
        words_past_ += line.tokens[i].cls == TokenClass::kWord;
      }
    }
    if (line.learned) {
      // A learned name may take a learned value's place (Match asks the scope), and one
      // that agrees counts as a word: its position is not judged, and counts as agreeing.
      for (std::size_t i = 0; i < n; ++i) {
        if (!IsLearnedName(line.tokens[i].cls, line.hashes[i])) continue;
        if (i < kPositions) judged_ &= ~(kWordBit << (8 * i));
        ++words_past_;
      }
    }
  }

  // True only if RuledOut(line, template) is: for a template of the line's token count.
  // Per byte at once (a scan asks 16 times a line): bit 6 of each byte flags a position.
  bool RulesOut(std::uint64_t digest) const {
    if ((digest ^ line_) >> 56) return false;  // other counts: RuledOut aligns
    // Wild or past the end: RuledOut skips the position too.
    const std::uint64_t known = (digest >> 1) & judged_;
    // (hash bits differing) + 63 carries into bit 6 exactly when some bit differs.
    const std::uint64_t differs = (((digest ^ line_) & kLow6) + kLow6) & kBit6;
    const std::uint64_t changed = known & differs & (digest | line_);
    const std::uint64_t agreeing = known & ~differs & line_;
    const int c = Count(changed), a = words_past_ + Count(agreeing);
    return c > 2 || (c > 0 && a < c + 1);
  }

 private:
  static constexpr std::uint64_t kKnown = 0x80, kWordBit = 0x40, kHashBits = 0x3f;
  static constexpr std::uint64_t kBit6 = 0x0040404040404040ULL, kLow6 = 0x003f3f3f3f3f3f3fULL;
  static std::uint64_t Byte(std::uint64_t hash, TokenClass cls) {
    return kKnown | (cls == TokenClass::kWord ? kWordBit : 0) | (hash & kHashBits);
  }
  // The bytes' bit 6 set, summed into the top byte (no popcount call on baseline x86-64).
  static int Count(std::uint64_t bit6) {
    return static_cast<int>(((bit6 >> 6) * 0x0101010101010101ULL) >> 56);
  }

  std::uint64_t line_ = 0;
  std::uint64_t judged_ = kBit6;  // bit 6 of the positions judged: all but learned names'
  int words_past_ =
      0;  // the line's words past kPositions, its dashes and learned names: each may agree
};

// What an accepted line adds to the template at one template position.
struct TemplateMark {
  std::uint32_t position;
  std::uint8_t flags;  // TemplateFlag bits
};

// Case-insensitive word set (protected words, value keys). Most words looked up are not in
// it, and a mask of the members' lengths and first letters turns most of them away before
// the lowercase hash and the table probe.
class WordSet {
 public:
  void Assign(const std::vector<std::string>& words);
  bool Contains(std::string_view word) const {
    if (!(lengths_ & LengthBit(word)) || !(initials_ & InitialBit(word))) return false;
    return hashes_.Find(LowerHash(word)) != 0;
  }

 private:
  static std::uint64_t LowerHash(std::string_view word);
  static std::uint64_t LengthBit(std::string_view w) {
    return std::uint64_t{1} << (w.size() < 63 ? w.size() : 63);
  }
  // Letters fold to their lowercase bit; anything else shares bit 31.
  static std::uint32_t InitialBit(std::string_view w) {
    if (w.empty()) return 1u << 31;
    const unsigned c = static_cast<unsigned char>(w[0]) | 0x20u;
    return c >= 'a' && c <= 'z' ? 1u << (c - 'a') : 1u << 31;
  }

  // Lowercase XXH3 hashes (uniform low bits, FlatMap64's home) -> 1: one probe of one array
  // (a node-based set's modulo and node load were 1 % of a replay).
  FlatMap64<std::uint8_t, 0> hashes_;
  std::uint64_t lengths_ = 0;
  std::uint32_t initials_ = 0;
};

// The matcher: a line fits a template when it aligns with it token by token (or, with a few
// tokens more or fewer, across a multi-token variable), every differing token looks variable,
// and no protected word differs. Holds the word sets and reusable scratch, so matching
// allocates nothing once warm. Not thread-safe.
class TemplateMatcher {
 public:
  // Words whose change must never merge two lines, and words after which a plain word is a
  // value ("user alice"); both compared case-insensitively.
  void SetWords(const std::vector<std::string>& protected_words,
                const std::vector<std::string>& value_keys);
  // Where Match asks which fields hold names (none when null): a protected word as the value
  // of such a field, in place of a plain word, is one more name (`pool=closed` / `pool=files`).
  void SetNameFields(NameFields* fields) { name_fields_ = fields; }

  // Does the line fit the template? When accepted, marks() holds the flags the line adds, by
  // template position.
  MatchResult Match(const MatchLine& line, const MatchTemplate& tmpl);

  // A necessary condition for Match, checked without hashing a word or looking one up: true
  // only where Match rejects (exact, so that skipping Match on it changes no result).
  bool RuledOut(const MatchLine& line, const GroupTokens& tmpl) const;

  // Does Match reject every template of the line's token count whose position i is not wild
  // and holds another plain word than the line's, where the template holds no DNS name? True
  // when the line's token there is a plain word (not a compound name) outside a value
  // context, not after a number or a host key: Match turns such a change away unless the
  // template's token is a value by its kind (a masked host or name with a number, or a DNS
  // name: HoldsDnsWord), which the caller leaves to Match. One check then rules out a crowd
  // of lines that differ from this one in that word (exact, like RuledOut).
  bool RejectsAnyChangeAt(const MatchLine& line, std::size_t i) const;

  // Is line token i a plain word written as a value key's value, one blank after it
  // (`user alice`, `by root`)?
  bool KeysValue(const MatchLine& line, std::size_t i) const;
  bool IsValueKey(std::string_view word) const { return value_keys_.Contains(word); }

  // Without confirmation (plain SimHash), marks the overlapping positions whose text differs,
  // so the template still shows what varied.
  void MarkDifferences(const MatchLine& line, const MatchTemplate& tmpl);

  std::span<const TemplateMark> marks() const { return marks_; }
  // Does the line (a group's first) hold a DNS name among its plain words (www.example.org)?
  // Match may then take a plain name in its place, as a value by its kind.
  static bool HoldsDnsWord(const MatchLine& line);
  // A word that begins or ends with a digit is one the tokenizer kept as a word for its value,
  // an enumeration's (an HTTP status, a name with its code as TCP_MISS/200, a message code):
  // protected like the listed words.
  // So is a word beginning with '/': the tokenizer keeps only an RPC method's full name so
  // (`/etcdserverpb.KV/Range`), the operation a request called.
  bool IsProtectedWord(std::string_view word) const {
    return (!word.empty() && ((word.front() >= '0' && word.front() <= '9') || word.front() == '/' ||
                              (word.back() >= '0' && word.back() <= '9'))) ||
           protected_words_.Contains(word);
  }
  // A term written in parts: two or more runs of letters joined by single '-', each part
  // capitalised (Get-Jobs, Send-Document, CUPS-Add-Modify-Printer). Protocols and programs
  // name their operations and types so; a name that varies holds a digit, a dot or a slash
  // (msra-sa-41, com.apple.fmfd), and a user's name in parts is written in lower case
  // (upd-key, alter-partition).
  static bool IsTermInParts(std::string_view word) {
    bool joint = false;
    for (std::size_t k = 0; k < word.size(); ++k) {
      const char c = word[k];
      const bool starts = k == 0 || word[k - 1] == '-';
      if (starts
              ? !(c >= 'A' && c <= 'Z')
              : !((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c == '-' && k + 1 < word.size())) {
        return false;
      }
      joint |= c == '-';
    }
    return joint;
  }
  // A name in capitals (A, MX, SIGTERM, NXDOMAIN), or a qualified name whose last part is
  // (net::ERR_TIMED_OUT, Status.NOT_FOUND): by convention an enumeration's constant.
  static bool IsConstantName(std::string_view word) {
    std::size_t last = 0;  // where the last part begins: after a separator something follows
    for (std::size_t k = 0; k + 1 < word.size(); ++k) {
      const auto separator = [](char c) { return c == ':' || c == '.' || c == '/'; };
      if (separator(word[k]) && !separator(word[k + 1])) last = k + 1;
    }
    bool upper = false;
    for (char c : word.substr(last)) {
      if (c >= 'a' && c <= 'z') return false;
      upper |= c >= 'A' && c <= 'Z';
    }
    return upper;
  }
  // A word no learned variable takes (a protected word, a constant's name, a term in parts):
  // the merger's siblings and learned slots leave it to its own group.
  bool NeverLearned(std::string_view word) const {
    return IsProtectedWord(word) || IsConstantName(word) || IsTermInParts(word);
  }
  // A name in lower-case parts joined by '-' whose last part is a verb's past form
  // (`job-completed`, `printer-state-changed`): an event that happened, a kind, not a name.
  static bool NamesWhatHappened(std::string_view word) {
    const std::size_t dash = word.rfind('-');
    if (dash == std::string_view::npos || dash == 0) return false;
    const std::string_view last = word.substr(dash + 1);
    if (last.size() < 5 || !last.ends_with("ed")) return false;
    for (char c : word) {
      if (!((c >= 'a' && c <= 'z') || c == '-')) return false;
    }
    return true;
  }

 private:
  MatchResult MatchAligned(const MatchLine& line, const MatchTemplate& tmpl);
  bool InValueContext(const MatchLine& line, std::size_t i) const;
  bool KeyedByAgreeingWord(const MatchLine& line, const MatchTemplate& tmpl, std::size_t i) const;
  [[gnu::noinline, gnu::cold]] bool NameFieldValue(const MatchLine& line, const MatchTemplate& tmpl,
                                                   std::size_t i) const;
  bool IsProtected(std::string_view message, const Token& t) const {
    return t.cls == TokenClass::kWord && IsProtectedWord(message.substr(t.offset, t.length));
  }
  static bool IsTerm(std::string_view message, const Token& t) {
    return t.cls == TokenClass::kWord && IsTermInParts(message.substr(t.offset, t.length));
  }

  WordSet protected_words_;
  WordSet value_keys_;
  NameFields* name_fields_ = nullptr;
  std::vector<TemplateMark> marks_;
  std::vector<std::uint16_t> lcs_;
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_TEMPLATE_MATCH_H_
