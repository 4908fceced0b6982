// Template matching (structural confirmation): same-count lines compared position by position,
// lines a few tokens longer or shorter aligned on their words first.
#include "pipeline/template_match.h"

// Inlined XXH3, as in the merger: the words hashed here are a few bytes long.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "pipeline/byte_blocks.h"
#include "pipeline/fingerprinter.h"

namespace logfold {
namespace {

constexpr std::uint8_t kWild = TemplateFlag::kWild;
constexpr std::uint8_t kVaried = TemplateFlag::kVaried;
constexpr std::uint8_t kGapAfter = TemplateFlag::kGapAfter;
constexpr int kAnchorsForBareWord = 8;

MatchResult Reject(MatchReason reason, std::size_t position = MatchResult::kNoPosition) {
  return {false, reason, static_cast<std::uint32_t>(position)};
}

// A name or version made of parts: runs of letters and digits joined by '.', '-', ':', '+'
// or '~', holding a digit (libsystemd0:amd64, 2.36-9+deb12u10, 1:2.39.2-1, 6.4); or a name
// qualified in three or more parts joined by dots alone, whose parts may also hold '_'
// (template1.pg_catalog.pg_type: a database's object; not read_error.790, a function, nor
// AuthFail:sts:5_rsn:0, a code).
bool IsPartsValue(std::string_view w) {
  const auto letter = [](char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; };
  bool digit = false, joined = false, underscore = false, other_joint = false;
  int dots = 0;
  const auto part_char = [&letter](char c) {
    return (c >= '0' && c <= '9') || letter(c) || c == '_';
  };
  for (std::size_t k = 0; k < w.size(); ++k) {
    const char c = w[k];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == '.' || c == '-' || c == ':' || c == '+' || c == '~') {
      const bool between = k > 0 && k + 1 < w.size() && part_char(w[k - 1]) && part_char(w[k + 1]);
      joined |= between;
      if (c == '.' && between) {
        ++dots;
      } else {
        other_joint = true;
      }
    } else if (c == '_') {
      underscore = true;
    } else if (!letter(c)) {
      // A list's first item is the list's kind (`orders-0, orders-1`: CollapseListsAt).
      if (c == ',' && k + 1 < w.size() && w[k + 1] == ' ') break;
      return false;
    }
  }
  if (underscore) return digit && !other_joint && dots >= 2;
  return digit && joined;
}

// Two masked tokens are the same variable unless a digit-bearing word changed its letters:
// a variable changes digits, not words (blk_-12 ~ blk_34, but en0 !~ awdl0). Names and
// versions made of parts are one kind whatever their shape: what is named in parts (a
// package, a version, a host) varies, a single name with a number is one of a few.
// A duration as Go's time.Duration and most runtimes print one: numbers each with a unit of
// time, ns, us, µs, ms, s, m or h (`738.544µs`, `1.728952ms`, `1m30s`, `0s`).
bool IsDuration(std::string_view w) {
  // Most digit-bearing words fail here: a duration opens with a digit and ends with its unit.
  if (w.empty() || w.front() < '0' || w.front() > '9' ||
      (w.back() != 's' && w.back() != 'm' && w.back() != 'h')) {
    return false;
  }
  std::size_t i = 0;
  while (i < w.size()) {
    const std::size_t number = i;
    while (i < w.size() && ((w[i] >= '0' && w[i] <= '9') || w[i] == '.')) ++i;
    if (i == number) return false;
    const std::string_view unit = w.substr(i);
    if (unit.starts_with("ns") || unit.starts_with("us") || unit.starts_with("ms")) {
      i += 2;
    } else if (unit.starts_with("\xC2\xB5s")) {
      i += 3;
    } else if (!unit.empty() && (unit[0] == 's' || unit[0] == 'm' || unit[0] == 'h')) {
      i += 1;
    } else {
      return false;
    }
  }
  return !w.empty();
}

// The form of an integer token: 0 a number, 1 a list of counters (CollapseCounterLists)
// whose fields are apart by blanks, 2 one whose fields are apart by commas.
int CounterListForm(std::string_view message, const Token& t) {
  const std::string_view text = message.substr(t.offset, t.length);
  if (text.find('=') == std::string_view::npos) return 0;
  return text.find(',') == std::string_view::npos ? 1 : 2;
}

// Salts a comma list's hash (CounterListForm 2) so that it differs from a number's.
constexpr std::uint64_t kCommaListSalt = 0x2c2c2c2c2c2c2c2cULL;  // ",,,,,,,,"

// A size written with its unit of data, one token (see CollapseSize): a float's class whose
// text ends in the unit's letter, where a number ends in a digit.
bool IsSizeWithUnit(std::string_view message, const Token& t) {
  if (t.cls != TokenClass::kFloat || t.length == 0) return false;
  const char last = message[t.offset + t.length - 1];
  return (last | 0x20) >= 'a' && (last | 0x20) <= 'z';
}

bool SameVariable(std::string_view lm, const Token& lt, std::string_view gm, const Token& gt) {
  if (!IsVariableClass(lt.cls) || !IsVariableClass(gt.cls)) return false;
  // An empty value stands where any value may be.
  if (lt.cls == TokenClass::kEmpty || gt.cls == TokenClass::kEmpty) return true;
  // A literal is a value of its key (overlap:true): the other side must have the same key,
  // the text up to its last ':' (none for a bare literal after '=').
  if (lt.cls == TokenClass::kLiteral || gt.cls == TokenClass::kLiteral) {
    auto key = [](std::string_view t) {
      const std::size_t colon = t.rfind(':');
      return t.substr(0, colon == std::string_view::npos ? 0 : colon + 1);
    };
    return key(lm.substr(lt.offset, lt.length)) == key(gm.substr(gt.offset, gt.length));
  }
  // A size with its unit of data and a bare number are two quantities (`1.00 MiB` / `1.00`).
  if ((lt.cls == TokenClass::kFloat || gt.cls == TokenClass::kFloat) &&
      IsSizeWithUnit(lm, lt) != IsSizeWithUnit(gm, gt)) {
    return false;
  }
  // A list of counters is printed by one format with one separator: fields apart by commas
  // and fields apart by blanks (`in=1 out=2` / `top=0/0, retr=1/2`) are two formats' lists,
  // and neither is a number. (Their hashes differ: CollapseCounterLists salts a comma list's.)
  if (lt.cls == TokenClass::kInteger && gt.cls == TokenClass::kInteger) {
    return CounterListForm(lm, lt) == CounterListForm(gm, gt);
  }
  if (lt.cls != TokenClass::kDigitWord && gt.cls != TokenClass::kDigitWord) return true;
  const std::string_view lw = lm.substr(lt.offset, lt.length), gw = gm.substr(gt.offset, gt.length);
  // Two values made of parts are one kind, and so are two of one class with the same letters;
  // the letters are compared first: equal letters are the common case and the cheaper test.
  auto letters_equal = [](std::string_view a, std::string_view b) {
    auto next = [](std::string_view s, std::size_t& i) {
      while (i < s.size() && !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) {
        ++i;
      }
      return i < s.size();
    };
    std::size_t i = 0, j = 0;
    while (true) {
      const bool ha = next(a, i), hb = next(b, j);
      if (ha != hb) return false;
      if (!ha) return true;
      if (a[i++] != b[j++]) return false;
    }
  };
  // A trailing run of hex digits holding a digit is an id (veth58b7fff), not a word.
  auto without_hex_id = [](std::string_view t) {
    std::size_t end = t.size();
    bool digit = false;
    while (end > 0 && std::isxdigit(static_cast<unsigned char>(t[end - 1]))) {
      digit |= std::isdigit(static_cast<unsigned char>(t[end - 1])) != 0;
      --end;
    }
    return digit ? t.substr(0, end) : t;
  };
  // A collapsed list is compared by its first element. (A loop: find_first_of of a set
  // calls memchr once a character.)
  auto first_element = [](std::string_view t) {
    std::size_t k = 0;
    while (k < t.size() && t[k] != ' ' && t[k] != ',') ++k;
    return t.substr(0, k);
  };
  if (lt.cls == gt.cls &&
      letters_equal(without_hex_id(first_element(lw)), without_hex_id(first_element(gw)))) {
    return true;
  }
  // A duration is one kind whatever its unit: a request took `738.544µs` or `1.728952ms`.
  if (IsDuration(lw) && IsDuration(gw)) return true;
  // An address is a kind of its own, never a name or version made of parts (`0.0.0.0` is not
  // `NODATA-IPv6`).
  const auto address = [](TokenClass c) {
    return c == TokenClass::kIPv4 || c == TokenClass::kIPv6;
  };
  if (address(lt.cls) != address(gt.cls)) return false;
  return IsPartsValue(lw) && IsPartsValue(gw);
}

// A name made of parts ("com.apple.fmfd", "msra-sa-41", "a/b"): such words name things,
// which vary; a single word names an action, a state or a function, which do not.
bool IsCompoundName(std::string_view message, const Token& t) {
  const std::string_view w = message.substr(t.offset, t.length);
  return std::any_of(w.begin(), w.end(), [](char c) { return c == '.' || c == '-' || c == '/'; });
}

// A word that names a field: '=' follows it, after blanks at most (`flags = 0x1`, `user=bob`),
// or it is part of a JSON object's key, a double-quoted text that opens the object or follows
// its ',' and that ':' follows (`{"stream-reader-type":...`, `,"response type":...`): which keys
// a JSON line carries says which call wrote it, as a format string's words do.
bool NamesField(std::string_view message, const Token& t) {
  const std::size_t end = t.offset + t.length;
  for (std::size_t p = end; p < message.size(); ++p) {
    if (message[p] == '=') return true;
    if (message[p] != ' ') break;
  }
  // A key is short: look no further than this for its quotes, the opening one first (a word
  // of prose has none right before it).
  constexpr std::size_t kMaxKey = 64;
  const std::size_t from = t.offset > kMaxKey ? t.offset - kMaxKey : 0;
  std::size_t open = message.substr(from, t.offset - from).rfind('"');
  if (open == std::string_view::npos) return false;
  open += from;
  while (open > 0 && message[open - 1] == ' ') --open;
  if (open == 0 || (message[open - 1] != '{' && message[open - 1] != ',')) return false;
  std::size_t close = message.substr(end, kMaxKey).find('"');
  if (close == std::string_view::npos) return false;
  close += end;
  return close + 1 < message.size() && message[close + 1] == ':' && message[close - 1] != '\\';
}

// A name with a number: letters, then digits (Archive0, Old28).
bool IsNameWithNumber(std::string_view w) {
  std::size_t k = 0;
  while (k < w.size() && ((w[k] | 0x20) >= 'a' && (w[k] | 0x20) <= 'z')) ++k;
  if (k == 0 || k == w.size()) return false;
  for (; k < w.size(); ++k) {
    if (w[k] < '0' || w[k] > '9') return false;
  }
  return true;
}

// A word written right after a key's '=' (`cmd=get`): the value of a named field.
bool FieldValue(std::string_view message, const Token& t) {
  return t.offset > 0 && message[t.offset - 1] == '=';
}

// Is a number (line or template token `t`) followed by its unit (`5 KB`, `3 sec`)? Not when
// it is a field's value (`op=1`, or a list of counters `conn=3 op=1`, one token holding its
// '='): a field's value ends at its blank, and the word after it opens the next part of the
// line (`conn=3 op=1 MOD` / `op=1 DEL`: the operation), never a unit that may change.
bool NumberBeforeUnit(std::string_view message, const Token& t) {
  if (t.cls != TokenClass::kInteger && t.cls != TokenClass::kFloat) return false;
  return !FieldValue(message, t) &&
         message.substr(t.offset, t.length).find('=') == std::string_view::npos;
}

// Does a field's name name an outcome (`err`, `rc`, `status`, `exit_code`, `result`)? Its
// value is one of a handful of codes, each another outcome: an enumeration, however variable
// a number looks (a failed bind's `err=49` among good binds' `err=0`).
bool NamesOutcome(std::string_view k) {
  const auto ends_with = [&](std::string_view suffix) {
    if (k.size() < suffix.size()) return false;
    for (std::size_t j = 0; j < suffix.size(); ++j) {
      if ((k[k.size() - suffix.size() + j] | 0x20) != suffix[j]) return false;
    }
    return true;
  };
  const auto is = [&](std::string_view name) { return k.size() == name.size() && ends_with(name); };
  return ends_with("status") || ends_with("code") || ends_with("error") || is("err") ||
         is("errno") || is("rc") || is("ret") || is("retval") || is("result") || is("reason") ||
         is("exit");
}

// Does a field's name say its value is a kind (`type`, `kind`, `class`, `method`, `mode`,
// `tag`)? A number there is a kind's code, as an outcome's is (`tag=97` / `tag=105`, an LDAP
// response's operation; `method=128` / `method=163`, a bind's).
bool NamesKind(std::string_view k) {
  const auto is = [&](std::string_view name) {
    if (k.size() != name.size()) return false;
    for (std::size_t j = 0; j < name.size(); ++j) {
      if ((k[j] | 0x20) != name[j]) return false;
    }
    return true;
  };
  return is("type") || is("kind") || is("class") || is("method") || is("mode") || is("tag");
}

// A result code as a field's value: a number of at most three digits right after `=` and a
// name that names an outcome or a kind (NamesOutcome, NamesKind).
bool IsResultCode(std::string_view message, const Token& t, const Token& key) {
  if (t.cls != TokenClass::kInteger || t.length > 3 || key.cls != TokenClass::kWord ||
      key.offset + key.length + 1 != t.offset || message[t.offset - 1] != '=') {
    return false;
  }
  const std::string_view name = message.substr(key.offset, key.length);
  return NamesOutcome(name) || NamesKind(name);
}

}  // namespace

std::string_view FieldValueGap(std::string_view message, const Token& key, const Token& value) {
  const std::size_t end = key.offset + key.length;
  if (value.offset <= end || value.offset - end > 3 || message[end] != '=') return {};
  for (std::size_t p = end + 1; p < value.offset; ++p) {
    const char c = message[p];
    if (c != '[' && c != '"' && c != '\'' && c != '(' && c != '{') return {};
  }
  return message.substr(end, value.offset - end);
}

bool EscapedQuote(std::string_view message, std::size_t p) {
  std::size_t backslashes = 0;
  while (p > backslashes && message[p - 1 - backslashes] == '\\') ++backslashes;
  return backslashes % 2 == 1;
}

std::size_t NextQuote(std::string_view message, std::size_t from, bool escaped) {
  std::size_t p = message.find('"', from);
  while (p != std::string_view::npos && EscapedQuote(message, p) != escaped) {
    p = message.find('"', p + 1);
  }
  return p;
}

namespace {

// A DNS name: three or more dot-separated labels of letters, digits and '-', the last of
// lower-case letters (www.example.org, svc.corp.example); it names a host, which varies.
bool IsDnsWord(std::string_view message, const Token& t) {
  const std::string_view w = message.substr(t.offset, t.length);
  const std::size_t last = w.rfind('.');
  if (last == std::string_view::npos || last + 2 > w.size() ||
      std::count(w.begin(), w.end(), '.') < 2) {
    return false;
  }
  for (std::size_t k = 0; k < w.size(); ++k) {
    const char c = w[k];
    const bool lower = c >= 'a' && c <= 'z';
    if (k > last ? !lower
                 : !(lower || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                     (c == '_' && (k == 0 || w[k - 1] == '.')) ||  // `_ldap._tcp.corp.test`
                     (c == '.' && k > 0 && w[k - 1] != '.'))) {
      return false;
    }
  }
  return true;
}

// `none`, `null` or `nil` (any case), a word of 3 or 4 letters: one that says a value is
// missing. Rarely asked (a changed word beside a variable): out of line.
[[gnu::noinline, gnu::cold]] bool IsNothingText(std::string_view w) {
  const auto is = [w](std::string_view lower) {
    return std::equal(w.begin(), w.end(), lower.begin(), lower.end(),
                      [](char a, char b) { return (a | 0x20) == b; });
  };
  return is("none") || is("null") || is("nil");
}
bool IsNothingWord(std::string_view message, const Token& word) {
  return word.cls == TokenClass::kWord && word.length - 3 <= 1 &&
         IsNothingText(message.substr(word.offset, word.length));
}

// Such a word where the other line has a variable: the program printed nothing for that value
// (`root on none` / `root on pts/0`), an empty value written as a word, which a value may
// take the place of as of `-`.
bool SaysNothing(std::string_view message, const Token& word, const Token& other) {
  return IsVariableClass(other.cls) && IsNothingWord(message, word);
}

// A host by its kind: a token the tokenizer took for a host (hashed by its class), or a name
// the scope learned as a value (WindowMerger's MaskValues gives it the host class and keeps
// its word's hash) that holds a digit, a '.' or a ':', or is glued to a bracketed address
// (localhost[127.0.0.1]). A plain learned name is a value, not a host: a plain word never
// takes its place.
[[gnu::noinline]] bool IsLearnedHost(std::string_view message, const Token& t) {
  const std::size_t end = t.offset + t.length;
  return message.substr(t.offset, t.length).find_first_of("0123456789.:") !=
             std::string_view::npos ||
         (end < message.size() && message[end] == '[');
}
inline bool IsHostToken(std::string_view message, const Token& t, std::uint64_t hash) {
  return t.cls == TokenClass::kHostPort && (hash == kHostClassHash || IsLearnedHost(message, t));
}

bool IsNumber(TokenClass cls) { return cls == TokenClass::kInteger || cls == TokenClass::kFloat; }

// A name: a letter, then letters, digits, '.', '-' and '_' (localhost, gw, blocked.test, nodb1,
// db-01, web_2).
bool IsNameText(std::string_view w) {
  const auto letter = [](char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; };
  if (w.empty() || !letter(w.front())) return false;
  return std::all_of(w.begin(), w.end(), [&letter](char c) {
    return letter(c) || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
  });
}

// A name in lower case made of parts (`bridge-2`, `local.vm.bridge-remote`): lower-case letters
// and digits joined by '-', '.' or '_', at least one '-' or '.', and a digit, a '.' or a '_'
// somewhere. Right after a host key (`to`, `from`) it names a peer, a value, as a host name
// does there. Words joined by '-' alone are as often a state (`to read-only` / `to
// read-write`, `to link-up` / `to link-down`): those stay words.
bool IsPeerName(std::string_view message, const Token& t) {
  if (t.cls != TokenClass::kWord) return false;
  const std::string_view w = message.substr(t.offset, t.length);
  if (w.empty() || !(w.front() >= 'a' && w.front() <= 'z')) return false;
  bool joint = false, named = false;
  for (char c : w) {
    if (c == '-' || c == '.') {
      joint = true;
      named |= c == '.';
    } else if ((c >= '0' && c <= '9') || c == '_') {
      named = true;
    } else if (!(c >= 'a' && c <= 'z')) {
      return false;
    }
  }
  return joint && named && w.back() != '-' && w.back() != '.';
}

// Two different tokens in one place: are both hosts (DNS names or masked hosts), and are both
// names, one of them a value by its kind? Then the place holds values, and the other name is
// one more (`forwarded svc.corp.example` / `forwarded localhost`, `on shop` / `on nodb1`). A
// plain word there must be a name not in capitals: a name in capitals is an enumeration's
// constant (MX, SIGTERM). Two names with numbers are left to SameVariable (a number's name
// keeps its letters: en0 is not awdl0).
struct NamePlace {
  bool hosts = false;
  bool names = false;
};
NamePlace PlaceOf(std::string_view lm, const Token& lt, std::uint64_t lh, std::string_view gm,
                  const Token& gt, std::uint64_t gh) {
  const bool l_host = IsHostToken(lm, lt, lh) || IsDnsWord(lm, lt);
  if (l_host && (IsHostToken(gm, gt, gh) || IsDnsWord(gm, gt))) return {true, true};
  // Names are words, hosts and names with numbers (the classes are compared first: most
  // changed tokens are numbers or ids).
  const auto named = [](TokenClass c) {
    return c == TokenClass::kWord || c == TokenClass::kHostPort || c == TokenClass::kDigitWord;
  };
  if (!named(lt.cls) || !named(gt.cls) ||
      (lt.cls == TokenClass::kDigitWord && gt.cls == TokenClass::kDigitWord)) {
    return {};
  }
  const bool g_host = IsHostToken(gm, gt, gh) || IsDnsWord(gm, gt);
  const auto numbered = [](std::string_view m, const Token& t) {
    return t.cls == TokenClass::kDigitWord && IsNameText(m.substr(t.offset, t.length));
  };
  const bool l_value = l_host || numbered(lm, lt), g_value = g_host || numbered(gm, gt);
  if (!l_value && !g_value) return {};
  const auto name = [](std::string_view m, const Token& t) {
    const std::string_view w = m.substr(t.offset, t.length);
    return t.cls == TokenClass::kWord && IsNameText(w) && !TemplateMatcher::IsConstantName(w);
  };
  return {false, (l_value || name(lm, lt)) && (g_value || name(gm, gt))};
}

// A differing word is taken as a variable only with enough agreeing words around it: two more
// than twice the changes, or, for a change right after an agreeing value key (`user bob` /
// `user alice`), which is itself one of them, one more.
bool Enough(int anchors, int word_diffs, int keyed_diffs) {
  const int free_diffs = word_diffs - keyed_diffs;
  return word_diffs == 0 || (anchors >= 2 * free_diffs + keyed_diffs + 1 && word_diffs <= 2);
}

// Do two list elements begin alike: both with a digit or a sign, both with a letter, or with
// the same other byte?
bool BeginAlike(std::string_view message, const Token& a, const Token& b) {
  auto kind = [](char c) -> int {
    if ((c >= '0' && c <= '9') || c == '+' || c == '-') return 256;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return 257;
    return static_cast<unsigned char>(c);
  };
  // Empty values (zero-length, or a lone '-') are not a list.
  if (a.cls == TokenClass::kEmpty || b.cls == TokenClass::kEmpty) return false;
  return kind(message[a.offset]) == kind(message[b.offset]);
}

// The byte that closes a bracket or quote opened by `open`, or 0 when `open` opens none.
char CloserOf(char open) {
  switch (open) {
    case '(':
      return ')';
    case '[':
      return ']';
    case '{':
      return '}';
    case '"':
    case '\'':
      return open;
    default:
      return 0;
  }
}

// Do tokens [from, to) (from > 0) lie inside one pair of brackets or quotes: the gap before
// them holds an opener, the gap after them its closer, and no gap between them that closer?
template <typename TokenAt>
bool Bracketed(std::string_view message, TokenAt at, std::size_t count, std::size_t from,
               std::size_t to) {
  if (from == 0 || from >= to) return false;
  const auto end_of = [&](std::size_t k) { return at(k).offset + at(k).length; };
  char close = 0;
  for (std::size_t p = end_of(from - 1); p < at(from).offset; ++p) {
    if (const char c = CloserOf(message[p])) close = c;
  }
  if (close == 0) return false;
  for (std::size_t k = from; k + 1 < to; ++k) {
    if (message.substr(end_of(k), at(k + 1).offset - end_of(k)).find(close) != message.npos) {
      return false;
    }
  }
  const std::size_t after = to < count ? at(to).offset : message.size();
  return message.substr(end_of(to - 1), after - end_of(to - 1)).find(close) != message.npos;
}

// Do tokens [from, to) (from > 0) make one value after a key's '=' (cmd=client|kill): the gap
// before them is just "=", no gap between them holds white space, and white space or the
// message's end follows them?
template <typename TokenAt>
bool KeyedValue(std::string_view message, TokenAt at, std::size_t count, std::size_t from,
                std::size_t to) {
  if (from == 0 || from >= to) return false;
  const auto end_of = [&](std::size_t k) { return at(k).offset + at(k).length; };
  if (at(from).offset != end_of(from - 1) + 1 || message[end_of(from - 1)] != '=') return false;
  constexpr std::string_view kSpace = " \t";
  for (std::size_t k = from; k + 1 < to; ++k) {
    if (message.substr(end_of(k), at(k + 1).offset - end_of(k)).find_first_of(kSpace) !=
        std::string_view::npos) {
      return false;
    }
  }
  const std::size_t end = end_of(to - 1);
  const std::size_t after = to < count ? at(to).offset : message.size();
  return end == message.size() ||
         message.substr(end, after - end).find_first_of(kSpace) != std::string_view::npos;
}

// Is token k (k + 1 < count) a field's name whose value follows: a word, '=' glued to it, and
// the next token right after the '=' or after '=' and one opening bracket or quote
// (`relay=local`, `to=<bob@example.test>`)?
template <typename TokenAt>
bool NamesValue(std::string_view message, TokenAt at, std::size_t count, std::size_t k) {
  if (k + 1 >= count || at(k).cls != TokenClass::kWord) return false;
  const std::size_t end = at(k).offset + at(k).length;
  if (end >= message.size() || message[end] != '=') return false;
  const std::size_t value = at(k + 1).offset;
  if (value == end + 1) return true;
  const char c = message[end + 1];
  return value == end + 2 && (c == '<' || c == '[' || c == '(' || c == '"');
}

// Are tokens [k, k + 2) an optional field among fields: a name and its value (a variable, or
// any word in brackets or quotes: `<carol>`) written as `name=value`, right after another such
// field's value and right before another such field's name (`to=<a@b>, orig_to=<c@d>,
// relay=local`)? One format string writes such a field on some lines only. Not at either end
// of the run of fields (`... rhost=h user=root` may be another message's field), nor with
// blanks around '=' (`samples, mean = 1.0`), nor with a bare word for its value (`mode=fast`:
// a state).
template <typename TokenAt>
bool OptionalField(std::string_view message, TokenAt at, std::size_t count, std::size_t k) {
  if (k < 2 || k + 2 >= count || !NamesValue(message, at, count, k)) return false;
  const bool bracketed = at(k + 1).offset == at(k).offset + at(k).length + 2;
  return (bracketed || IsVariableClass(at(k + 1).cls)) && NamesValue(message, at, count, k - 2) &&
         NamesValue(message, at, count, k + 2);
}

// Does the quote at `p` open a quoted text: a double quote, or a single quote at the start or
// after a blank or an opening bracket (a single quote after a letter is an apostrophe)?
bool OpensQuotedText(std::string_view message, std::size_t p) {
  if (message[p] == '"') return true;
  if (message[p] != '\'') return false;
  if (p == 0) return true;
  const char c = message[p - 1];
  return c == ' ' || c == '\t' || c == '(' || c == '[' || c == '{';
}

// A name in capitals: capitals, digits and '_', a capital first (VCPU, MEMORY_MB, BADSIG).
// A code: a name in capitals that fills a pair of
// brackets or quotes alone, the pair opened at the message's start or after a blank
// (`verify failure (BADSIG)`, `allocation for 'VCPU'`, `[OK]`), or a field's whole value, JSON's
// (`"type":"ROUND_TRIPPER_SNAPSHOT"`) or a `name=`'s (`mech=SIMPLE`). Logs write an outcome, a kind
// or a state so; a bracket glued to a name holds its argument (`ListenerName(CONTROLLER)`), and
// a qualified name holds parts that vary (`'org/DS/IN'`).
bool IsCapitalName(std::string_view w) {
  if (w.empty() || w[0] < 'A' || w[0] > 'Z') return false;
  return std::all_of(w.begin(), w.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool IsBracketedCode(std::string_view message, const Token& t) {
  if (t.cls != TokenClass::kWord || t.offset == 0 ||
      !IsCapitalName(message.substr(t.offset, t.length))) {
    return false;
  }
  // A field's whole value, right after its name's `=` and ended by a blank, a ',' or the
  // end, one word in capitals (`mech=SIMPLE` / `mech=EXTERNAL`, `proto=TCP`), as a JSON
  // field's is below. A constant of parts joined by '_' there names a thing the program
  // enumerates (`segment=OPTIMIZATION_TARGET_SEARCH_USER`), which varies as a name does.
  if (message[t.offset - 1] == '=') {
    const std::size_t end = t.offset + t.length;
    return t.offset >= 2 && message[t.offset - 2] != ' ' && message[t.offset - 2] != '=' &&
           message.substr(t.offset, t.length).find('_') == std::string_view::npos &&
           (end == message.size() || message[end] == ' ' || message[end] == '\t' ||
            message[end] == ',');
  }
  if (t.offset + t.length >= message.size()) return false;
  const std::size_t open = t.offset - 1;
  const char close = CloserOf(message[open]);
  if (close == 0) return false;
  // Punctuation may follow the name inside the pair (`"ASCII??"`, `(BADSIG.)`): it is still the
  // pair's one word.
  std::size_t end = t.offset + t.length;
  while (end < message.size() && message[end] != close &&
         (message[end] == '?' || message[end] == '.' || message[end] == '!' ||
          message[end] == ':' || message[end] == ';')) {
    ++end;
  }
  if (end >= message.size() || message[end] != close) return false;
  // A JSON field's whole value, right after its key's `":`, is such a pair too
  // (`"round-tripper-name":"ROUND_TRIPPER_SNAPSHOT"`).
  return open == 0 || message[open - 1] == ' ' || message[open - 1] == '\t' ||
         (close == '"' && open >= 2 && message[open - 1] == ':' && message[open - 2] == '"');
}

// A kind or a rule named right after `for` or `by`, which say what a line concerns or who
// acted: there a user's or a host's name is a value (`for alice`, `by root`), but a name in
// capitals is a kind (`Over capacity for VCPU` / `for MEMORY_MB`) and a name scoped by single
// `:` between its parts a rule's (`Policy check for placement:usages` / `...:traits:delete`).
// Read from the text before `t` (no token needed: Match asks it for the template's side too).
bool IsKindAfterFor(std::string_view message, const Token& t) {
  if (t.cls != TokenClass::kWord || t.offset < 3 || message[t.offset - 1] != ' ') return false;
  const auto key_at = [&message, &t](std::string_view key) {
    const std::size_t n = key.size() + 1;  // the key and its blank
    if (t.offset < n) return false;
    for (std::size_t k = 0; k < key.size(); ++k) {
      if ((message[t.offset - n + k] | 0x20) != key[k]) return false;
    }
    if (t.offset == n) return true;
    const char c = message[t.offset - n - 1];
    return !((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != '_';
  };
  if (!key_at("for") && !key_at("by")) return false;
  const std::string_view w = message.substr(t.offset, t.length);
  if (IsCapitalName(w)) return true;
  // Scoped: letters (and '_', '-', '.') in parts joined by single ':'.
  if (w.find(':') == std::string_view::npos || w.front() == ':' || w.back() == ':' ||
      w.find("::") != std::string_view::npos) {
    return false;
  }
  return std::all_of(w.begin(), w.end(), [](char c) {
    return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_' || c == '-' || c == '.' || c == ':';
  });
}

// A verb's past form after a key word (`Job released`, `job purged`, `device detached`): what
// happened to the thing the key names, not its name. Lower-case letters ending in "ed", five
// or more (a short name such as "ted" or "red" stays a value).
bool IsPastForm(std::string_view w) {
  if (w.size() < 5 || !w.ends_with("ed")) return false;
  return std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

// Is `t` the first token of a double-quoted text that opens with blanks (the quote at the
// start or after a blank, `,`, `=` or `:`)? Such a text is laid out, a listing's indented row
// (`" EPRT"`, `"     TYPE: "`): the program's own text, not a value, on either side of a change.
bool OpensLaidOutText(std::string_view message, const Token& t) {
  std::size_t q = t.offset;
  while (q > 0 && message[q - 1] == ' ') --q;
  if (q == t.offset || q == 0 || message[q - 1] != '"') return false;
  --q;
  return q == 0 || message[q - 1] == ' ' || message[q - 1] == ',' || message[q - 1] == '=' ||
         message[q - 1] == ':';
}

// Does `t` open a double-quoted text (the quote at the start or after a blank, `,`, `=` or
// `:`) with a reply's code glued to the reply's first word by `-` (`"211-Features:"`,
// `"214-The following commands are recognized."`: the first line of a multi-line reply, as
// FTP and SMTP servers write it)? A reply's code leads the program's text, not a value.
bool OpensCodedReply(std::string_view message, const Token& t) {
  const std::size_t at = t.offset;
  if (at == 0 || message[at - 1] != '"' || at + 4 >= message.size() || message[at] < '1' ||
      message[at] > '5' || message[at + 1] < '0' || message[at + 1] > '9' ||
      message[at + 2] < '0' || message[at + 2] > '9' || message[at + 3] != '-' ||
      !((message[at + 4] | 0x20) >= 'a' && (message[at + 4] | 0x20) <= 'z')) {
    return false;
  }
  if (at == 1) return true;
  const char c = message[at - 2];
  return c == ' ' || c == ',' || c == '=' || c == ':';
}

// The program's own text in double quotes where a slot varied: a laid-out text, one led by a
// reply's code, or a code in capitals alone in its quotes. Asked for every line at every
// varied position: the first test (a quote or a blank right before the token) turns most away.
bool QuotedProgramText(std::string_view message, const Token& t) {
  if (t.offset == 0) return false;
  const char before = message[t.offset - 1];
  if (before == '"') return OpensCodedReply(message, t) || IsBracketedCode(message, t);
  // Laid out: a blank right before the token, and a blank or the quote before that.
  return before == ' ' && t.offset >= 2 &&
         (message[t.offset - 2] == ' ' || message[t.offset - 2] == '"') &&
         OpensLaidOutText(message, t);
}

// Is one word the other negated by a prefix (`healthy` / `unhealthy`, `reachable` /
// `unreachable`, `connected` / `disconnected`, `valid` / `invalid`, `blocking` /
// `nonblocking`)? Such words are a state's two values, never two values of one variable. Letters
// alone, the shorter of four or more (`to` / `into` are no such pair), any case.
bool NegatedPair(std::string_view a, std::string_view b) {
  if (a.size() > b.size()) std::swap(a, b);
  const std::size_t extra = b.size() - a.size();
  if (a.size() < 4 || extra < 2 || extra > 3) return false;
  const auto lower = [](char c) { return static_cast<char>(c | 0x20); };
  for (std::size_t k = 0; k < a.size(); ++k) {
    const char c = lower(a[k]);
    if (c < 'a' || c > 'z' || c != lower(b[extra + k])) return false;
  }
  const char p0 = lower(b[0]), p1 = lower(b[1]), p2 = extra == 3 ? lower(b[2]) : 0;
  return extra == 2
             ? (p0 == 'u' && p1 == 'n') || (p0 == 'i' && p1 == 'n')
             : (p0 == 'd' && p1 == 'i' && p2 == 's') || (p0 == 'n' && p1 == 'o' && p2 == 'n');
}

// Does a field's name say it holds an id (`id`, `err_id`, `request-id`, `traceId`, `ID`)? Its
// value is drawn at random, whatever its letters (`{id=hsqxh39ns}` / `{id=yams85egn}`).
bool NamesId(std::string_view k) {
  const std::size_t n = k.size();
  if (n < 2 || (k[n - 2] | 0x20) != 'i' || (k[n - 1] | 0x20) != 'd') return false;
  if (n == 2) return true;
  const char c = k[n - 3];
  return c == '_' || c == '-' || c == '.' || (k[n - 2] == 'I' && c >= 'a' && c <= 'z');
}

// Is `t` the whole of a JSON string value (`"name":"unhealthy"`)?
bool JsonStringValue(std::string_view message, const Token& t) {
  const std::size_t end = t.offset + t.length;
  return t.offset >= 3 && message[t.offset - 1] == '"' && message[t.offset - 2] == ':' &&
         message[t.offset - 3] == '"' && end < message.size() && message[end] == '"';
}

// Is `t` a field's whole value: right after a key's `=` and before a blank, a ',', a ';' or
// the end (`state=unhealthy`), or the whole of a JSON string value (`"name":"unhealthy"`)?
bool WholeFieldValue(std::string_view message, const Token& t) {
  const std::size_t end = t.offset + t.length;
  if (t.offset == 0) return false;
  if (message[t.offset - 1] == '=') {
    return end == message.size() || message[end] == ' ' || message[end] == '\t' ||
           message[end] == ',' || message[end] == ';';
  }
  return JsonStringValue(message, t);
}

// A JSON string's whole value that is an identifier of lower-case words joined by '_'
// (`"name":"tls_get_certificate"`, `"state":"in_progress"`): a program's constant, an event's
// or a kind's name, as a name in capitals is (`"type":"ROUND_TRIPPER_SNAPSHOT"`), not a value.
bool IsJsonIdentifier(std::string_view message, const Token& t) {
  if (t.cls != TokenClass::kWord || t.length < 3 || !JsonStringValue(message, t)) return false;
  const std::string_view w = message.substr(t.offset, t.length);
  if (w.front() == '_' || w.back() == '_' || w.find('_') == std::string_view::npos ||
      w.find("__") != std::string_view::npos) {
    return false;
  }
  return std::all_of(w.begin(), w.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

// A code or a kind where values go (`failure (BADSIG)`, `for 'VCPU'`, `for VCPU`): an
// enumeration's constant, not a value. Asked only where a value would otherwise go: most
// changed words are in no such place.
bool NamesNoValue(std::string_view message, const Token& t) {
  return IsBracketedCode(message, t) || IsKindAfterFor(message, t) ||
         OpensLaidOutText(message, t) || OpensCodedReply(message, t) ||
         IsJsonIdentifier(message, t);
}

// Does the line hold a message field (`msg=`, `message=` at its start or after a blank)?
bool HoldsMessageField(std::string_view m) {
  for (const std::string_view key : {std::string_view("msg="), std::string_view("message=")}) {
    for (std::size_t p = m.find(key); p != std::string_view::npos; p = m.find(key, p + 1)) {
      if (p == 0 || m[p - 1] == ' ' || m[p - 1] == '\t') return true;
    }
  }
  return false;
}

// Is the token at `at` inside a name of a few words that a field other than the message
// gives in double quotes (`component="discovery manager scrape"`), in a line of fields that
// has a message field? Structured logs write the event's text in the message field and its
// context in the others: such a name is the context's value, each of its words a value.
bool InContextName(std::string_view m, std::size_t at) {
  // Most lines hold no quote before the word: one memchr says so.
  if (at < 2 || std::memchr(m.data(), '"', at) == nullptr) return false;
  const std::size_t open = m.rfind('"', at - 1);
  if (open == std::string_view::npos || open == 0 || m[open - 1] != '=') return false;
  const std::size_t close = NextQuote(m, at, false);
  if (close == std::string_view::npos) return false;
  // A name: at most three words of letters, digits, '-', '_', '.' and '/'.
  int words = 1;
  for (std::size_t p = open + 1; p < close; ++p) {
    const char c = m[p];
    if (c == ' ') {
      if (p == open + 1 || p + 1 == close || m[p - 1] == ' ' || ++words > 3) return false;
    } else if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != '-' &&
               c != '_' && c != '.' && c != '/') {
      return false;
    }
  }
  std::size_t key = open - 1;
  while (key > 0 && ((m[key - 1] >= 'a' && m[key - 1] <= 'z') || m[key - 1] == '_' ||
                     m[key - 1] == '.' || (m[key - 1] >= '0' && m[key - 1] <= '9'))) {
    --key;
  }
  if (key == open - 1 || IsMessageKey(m.substr(key, open - 1 - key))) return false;
  return HoldsMessageField(m);
}

// Does the double quote at `p` open the value of a JSON object's message field, the key every
// JSON logging library writes the message under (`"msg":"` as zap, bunyan, pino, logrus and
// slog do, `"message":"` as ECS and log4j's JSON layout do)?
bool OpensMessageField(std::string_view message, std::size_t p) {
  while (p > 0 && message[p - 1] == ' ') --p;
  if (p == 0 || message[p - 1] != ':') return false;
  const std::string_view before = message.substr(0, p - 1);
  return before.ends_with("\"msg\"") || before.ends_with("\"message\"");
}

// A double-quoted text inside a message (a request line, a user agent, a referer, a client's
// string) is a value whose number of words varies from line to line. Inside each pair of
// double quotes: a lone '-' is an empty value (the placeholder of a missing field), and the
// tokens from a leading variable (a request target is a path) to the closing quote are one
// token of that variable's class and hash, as a list is. One plain word may come first and
// stays a token of its own: it may be an action ("GET" vs "DELETE"). A text holding a protected
// word keeps its tokens, and a quoted text that is the whole message is left alone (the text is
// then the event). Single quotes pair nothing: a single quote is also an apostrophe in free text.
// A message written as a quoted value (`msg="..."`, `quoted`) pairs its escaped quotes (`\"`)
// instead, and ends at its closing quote.
void CollapseQuotedText(const TemplateMatcher& matcher, std::string_view message, std::size_t body,
                        bool quoted, std::vector<Token>& tokens,
                        std::vector<std::uint64_t>& hashes) {
  std::size_t open = NextQuote(message, body, quoted);
  if (open == std::string_view::npos) return;
  const std::size_t n = tokens.size();
  std::size_t read = 0, kept = 0;  // tokens [read, n) are yet to be moved to [kept, ...)
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t lead = body, tail = message.size();  // the message without its outer blanks
  if (quoted && message.back() == '"' && !EscapedQuote(message, tail - 1)) --tail;
  while (lead < tail && blank(message[lead])) ++lead;
  while (tail > lead && blank(message[tail - 1])) --tail;
  auto keep_until = [&](std::size_t end) {
    for (; read < end; ++read, ++kept) {
      tokens[kept] = tokens[read];
      hashes[kept] = hashes[read];
    }
  };
  auto word = [&](std::size_t k) {
    return tokens[k].cls == TokenClass::kWord ? message.substr(tokens[k].offset, tokens[k].length)
                                              : std::string_view();
  };
  while (open != std::string_view::npos) {
    const std::size_t close = NextQuote(message, open + 1, quoted);
    if (close == std::string_view::npos || close >= tail) break;
    if (open == lead + (quoted ? 1 : 0) && close + 1 == tail) break;  // the whole message
    // A JSON line's message field is the message: its words are the event's, as a quoted
    // text that is the whole message keeps them (`{"msg":"<id> became leader at term 2"}`).
    if (!quoted && OpensMessageField(message, open)) {
      open = NextQuote(message, close + 1, quoted);
      continue;
    }
    std::size_t first = read;  // the tokens inside the pair: [first, end)
    while (first < n && tokens[first].offset <= open) ++first;
    std::size_t end = first;
    while (end < n && tokens[end].offset < close) ++end;
    // The backslash escaping a closing quote is the quote's, not the last word's.
    if (quoted && end > first && tokens[end - 1].length > 1 &&
        tokens[end - 1].offset + tokens[end - 1].length == close) {
      Token& last = tokens[end - 1];
      --last.length;
      last.cls = Tokenizer::Classify(message.substr(last.offset, last.length));
      hashes[end - 1] = Fingerprinter::TokenHash(message, last);
    }
    if (end - first == 1 && word(first) == "-") {
      tokens[first].cls = TokenClass::kEmpty;
      hashes[first] = Fingerprinter::TokenHash(message, tokens[first]);
    }
    // A name quoted alone right after the word or the key's ':' that says what it is, and a
    // blank (`LoadModule: "glx"`, `Acquiring lock "trait_sync"`, `Processing section
    // "[global]"`): the program quotes what it was given, a value. A name in capitals (a code),
    // a protected word and a text with a blank keep their word.
    if (!quoted && end - first == 1 && tokens[first].cls == TokenClass::kWord && open > body + 1 &&
        message[open - 1] == ' ' &&
        (std::isalnum(static_cast<unsigned char>(message[open - 2])) || message[open - 2] == ':')) {
      const std::string_view text = message.substr(open + 1, close - open - 1);
      const std::string_view w = word(first);
      if (text.find_first_of(" \t") == std::string_view::npos &&
          !TemplateMatcher::IsConstantName(w) && !matcher.IsProtectedWord(w)) {
        tokens[first].cls = TokenClass::kPath;
        hashes[first] = Fingerprinter::TokenHash(message, tokens[first]);
      }
    }
    const std::size_t from = first + (first < end && tokens[first].cls == TokenClass::kWord);
    bool collapse = end - from >= 2 && IsVariableClass(tokens[from].cls);
    for (std::size_t k = from; collapse && k < end; ++k) {
      const std::string_view w = word(k);
      collapse = w.empty() || !matcher.IsProtectedWord(w);
    }
    if (collapse) {
      keep_until(from + 1);
      const Token& last = tokens[end - 1];
      tokens[kept - 1].length = last.offset + last.length - tokens[kept - 1].offset;
      read = end;
    }
    open = NextQuote(message, close + 1, quoted);
  }
  if (kept == read) return;  // nothing collapsed
  keep_until(n);
  tokens.resize(kept);
  hashes.resize(kept);
}

// A '-' standing alone (a token of its own) in a line of fields (more values than plain words,
// dashes aside) is what columnar logs (access logs, proxies, CSV-like dumps) write for a
// missing value: an empty value (kEmpty, though one byte long),
// so a line without the value and one with it align there (`URL - HIER_NONE/-` / `URL alice
// HIER_NONE/-`). A dash between two plain words is prose punctuation (`failed - POSSIBLE
// BREAK-IN`, `Class::method - text`): it stays a word. A dash inside a token (`HIER_NONE/-`,
// `-v`, `a-b`, `--`) is no value either.
// Returns how many of the line's tokens are such a dash, quoted ones ("-") included.
std::uint32_t MarkEmptyDashes(std::string_view message, std::size_t body,
                              std::vector<Token>& tokens, std::vector<std::uint64_t>& hashes) {
  std::uint32_t dashes = 0;
  // Is the line one of fields, its values more than its plain words, dashes aside (a prose
  // message's dash, `Deleted 3 rows - done`, is no column's)? -1: not counted yet.
  int columnar = -1;
  // Each '-' that may start a token (dates and names hold theirs inside), then its token by
  // offset: most lines hold none, and a syslog line's few cost no walk over every token.
  const auto by_offset = [](const Token& t, std::size_t at) { return t.offset < at; };
  for (std::size_t p = message.find('-', body); p != std::string_view::npos;
       p = message.find('-', p + 1)) {
    if (p > body && kTokenSeparators.find(message[p - 1]) == std::string_view::npos) continue;
    const auto it = std::lower_bound(tokens.begin(), tokens.end(), p, by_offset);
    if (it == tokens.end() || it->offset != p || it->length != 1) continue;
    if (it->cls == TokenClass::kEmpty) ++dashes;  // quoted: already an empty value
    if (it->cls != TokenClass::kWord) continue;
    if (columnar < 0) {
      int words = 0;
      for (const Token& t : tokens) {
        if (t.length != 1 || message[t.offset] != '-') words += t.cls == TokenClass::kWord ? 1 : -1;
      }
      columnar = words < 0;
    }
    if (columnar == 0) continue;
    const auto k = static_cast<std::size_t>(it - tokens.begin());
    if (k > 0 && tokens[k - 1].cls == TokenClass::kWord && k + 1 < tokens.size() &&
        tokens[k + 1].cls == TokenClass::kWord) {
      continue;
    }
    it->cls = TokenClass::kEmpty;
    hashes[k] = Fingerprinter::TokenHash(message, *it);
    ++dashes;
  }
  return dashes;
}

// The classes a count is given: an integer, `n/m` a path or a date (one bit each).
constexpr unsigned kCountClasses = 1u << static_cast<unsigned>(TokenClass::kInteger) |
                                   1u << static_cast<unsigned>(TokenClass::kPath) |
                                   1u << static_cast<unsigned>(TokenClass::kDateTime);

// A count: digits after an optional sign, or two counts joined by '/' (`rcpt=0/1`: done of
// tried).
bool IsCount(std::string_view w) {
  if (!w.empty() && (w[0] == '-' || w[0] == '+')) w.remove_prefix(1);
  std::size_t k = 0, slashes = 0;
  for (; k < w.size(); ++k) {
    if (w[k] == '/' && k > 0 && k + 1 < w.size() && w[k - 1] != '/' && slashes++ == 0) continue;
    if (w[k] < '0' || w[k] > '9') return false;
  }
  return k > 0;
}

// A run of two or more `name=count` fields (each name a word with '=' glued to it and to the
// count, fields apart by white space or commas alone) is one list of counters, a value whose
// names and length vary from line to line (`ehlo=1 mail=1 rcpt=0/1 quit=1 commands=3/4`):
// one integer token from its first name to its last count. Only a whole run of such fields
// whose every value is a count: a dump of a record's fields, some of which are counts
// (`id=3 addr=10.0.0.1:5 fd=8 age=0 idle=0 flags=N`), keeps its tokens.
// Collapses every such run from token `begin` on (a run may begin before it); returns where the
// first one begins, or SIZE_MAX when there is none.
std::size_t CollapseCounterLists(std::string_view message, std::size_t begin,
                                 std::vector<Token>& tokens, std::vector<std::uint64_t>& hashes) {
  const std::size_t n = tokens.size();
  // Token k names a field: a word, '=' right after it, a value right after that.
  const auto field_at = [&](std::size_t k) {
    if (k + 1 >= n || tokens[k].cls != TokenClass::kWord) return false;
    const std::size_t end = tokens[k].offset + tokens[k].length;
    return tokens[k + 1].offset == end + 1 && message[end] == '=';
  };
  // Is the field at k's value a count? (Its class first: one mask test.)
  const auto count_class = [&](std::size_t k) {
    return ((kCountClasses >> static_cast<unsigned>(tokens[k + 1].cls)) & 1u) != 0;
  };
  // An outcome's code (`err=0`: NamesOutcome) is no count: its run is a record's fields.
  const auto count_at = [&](std::size_t k) {
    const Token& v = tokens[k + 1];
    return count_class(k) && IsCount(message.substr(v.offset, v.length)) &&
           !NamesOutcome(message.substr(tokens[k].offset, tokens[k].length)) &&
           !NamesKind(message.substr(tokens[k].offset, tokens[k].length));
  };
  // Does a field follow the field at k with only white space and commas between?
  const auto next_field = [&](std::size_t k) {
    if (!field_at(k + 2)) return false;
    const std::size_t end = tokens[k + 1].offset + tokens[k + 1].length;
    for (std::size_t p = end; p < tokens[k + 2].offset; ++p) {
      if (message[p] != ' ' && message[p] != '\t' && message[p] != ',') return false;
    }
    return true;
  };
  // Token k + 1 may be a count after a field's name: cheap tests, most tokens fail the first.
  const auto may_count = [&](std::size_t k) {
    return count_class(k) && message[tokens[k + 1].offset - 1] == '=' && field_at(k);
  };
  // Runs of fields to collapse, found before anything is copied: most lines hold none, and a
  // run of a record's fields (some values no counts) changes nothing.
  std::size_t runs[8][2];
  std::size_t found = 0;
  for (std::size_t k = begin; k + 3 < n && found < 8;) {
    if (!(may_count(k) && may_count(k + 2) && next_field(k))) {
      ++k;
      continue;
    }
    std::size_t from = k, to = k + 4;  // the whole run of fields: [from, to)
    const std::size_t floor = found > 0 ? runs[found - 1][1] : 0;
    while (from >= floor + 2 && field_at(from - 2) && next_field(from - 2)) from -= 2;
    while (next_field(to - 2)) to += 2;
    bool counts = true;
    for (std::size_t f = from; counts && f < to; f += 2) counts = count_at(f);
    if (counts) {
      runs[found][0] = from;
      runs[found][1] = to;
      ++found;
    }
    k = to;
  }
  if (found == 0) return SIZE_MAX;
  std::size_t kept = runs[0][0], read = runs[0][0];
  for (std::size_t r = 0; r < found; ++r) {
    for (; read < runs[r][0]; ++read, ++kept) {
      tokens[kept] = tokens[read];
      hashes[kept] = hashes[read];
    }
    const Token& last = tokens[runs[r][1] - 1];
    tokens[kept] = Token{tokens[read].offset, last.offset + last.length - tokens[read].offset,
                         TokenClass::kInteger};
    hashes[kept] = Fingerprinter::TokenHash(message, tokens[kept]);
    // A list written with commas is another format's than one written with blanks.
    if (CounterListForm(message, tokens[kept]) == 2) hashes[kept] ^= kCommaListSalt;
    ++kept;
    read = runs[r][1];
  }
  for (; read < n; ++read, ++kept) {
    tokens[kept] = tokens[read];
    hashes[kept] = hashes[read];
  }
  tokens.resize(kept);
  hashes.resize(kept);
  return runs[0][0];
}

// A position in a source file: a file's name or path with an extension of lower-case letters
// and digits, ':' and a line number, and perhaps ':' and a column (`Thread.java:840`,
// `/srv/app.js:10:5`). Not `ImportBailout.Error:1331`: an extension is written in lower case.
bool IsSourcePosition(std::string_view w) {
  const std::size_t colon = w.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view file = w.substr(0, colon);
  const std::size_t dot = file.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == file.size() ||
      file.size() - dot - 1 > 5) {
    return false;
  }
  const auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!lower(file[dot + 1])) return false;
  for (std::size_t k = dot + 1; k < file.size(); ++k) {
    if (!lower(file[k]) && !digit(file[k])) return false;
  }
  // A line number, and perhaps ':' and a column.
  const std::string_view numbers = w.substr(colon + 1);
  for (std::size_t k = 0, count = 1;; ++count) {
    const std::size_t start = k;
    while (k < numbers.size() && digit(numbers[k])) ++k;
    if (k == start || count > 2) return false;
    if (k == numbers.size()) return true;
    if (numbers[k++] != ':') return false;
  }
}

// A qualified name: parts joined by '.' or '::' (`org.apache.Foo.run`, `Foo::run`).
bool IsQualifiedName(std::string_view w) {
  const auto part = [](char c) { return c != '.' && c != ':'; };
  for (std::size_t k = 1; k + 1 < w.size(); ++k) {
    if (!part(w[k - 1])) continue;
    if (w[k] == '.' && part(w[k + 1])) return true;
    if (w[k] == ':' && w[k + 1] == ':' && k + 2 < w.size() && part(w[k + 2])) return true;
  }
  return false;
}

// A stack frame's call site, a qualified name with its source position in parentheses right
// after it (`org.apache.jsp.index_jsp._jspService(index_jsp.java:148)`, `Foo.bar
// (/srv/app.js:10:5)`), is one value of a path's kind: it says where in the program a line
// was, as a path says where in a file system, so the frames of one trace line (`at ...`) are
// one event whatever their functions. A name before any other parenthesised text
// (`String.length()`, `f(x)`) stays a word: two functions are two events.
// Is tokens[i] a call site's name and tokens[i + 1], after a '(', its position?
bool CallSiteAt(std::string_view message, const std::vector<Token>& tokens, std::size_t i) {
  const Token& name = tokens[i];
  const Token& where = tokens[i + 1];
  const std::size_t end = name.offset + name.length, after = where.offset + where.length;
  return after < message.size() && message[after] == ')' &&
         (end + 1 == where.offset || (end + 2 == where.offset && message[end] == ' ')) &&
         IsQualifiedName(message.substr(name.offset, name.length)) &&
         IsSourcePosition(message.substr(where.offset, where.length));
}

// Collapses every call site from tokens[first] on (tokens[first] is one).
void CollapseCallSites(std::string_view message, std::size_t first, std::vector<Token>& tokens,
                       std::vector<std::uint64_t>& hashes) {
  const std::size_t n = tokens.size();
  std::size_t kept = first;
  for (std::size_t i = first; i < n; ++i, ++kept) {
    tokens[kept] = tokens[i];
    hashes[kept] = hashes[i];
    if (i + 1 < n && message[tokens[i + 1].offset - 1] == '(' && CallSiteAt(message, tokens, i)) {
      const Token& where = tokens[i + 1];
      tokens[kept].length = where.offset + where.length - tokens[kept].offset;
      tokens[kept].cls = TokenClass::kPath;
      hashes[kept] = Fingerprinter::TokenHash(message, tokens[kept]);
      ++i;
    }
  }
  tokens.resize(kept);
  hashes.resize(kept);
}

// Marks a word's hash when a '.' closes the message right after it (see PrepareLine).
constexpr std::uint64_t kClosingPeriodMark = 0x2e2e2e2e2e2e2e2eULL;

// A native stack frame's call site as glibc's backtrace_symbols (and most native unwinders)
// writes it: an object (a library's path or a program's name), then right after it in
// parentheses a symbol or nothing and a `+0x` offset (`libc.so.6(+0x891f5)`,
// `libPocoNet.so.80(Poco::Net::TCPServerConnection::start()+0x7)`). It says where in the
// program a line was, as a Java frame's call site does, whatever the symbol's words (a
// demangled C++ signature holds dozens). tokens[i] is a token right before a ')': when it
// ends in `+0x` and hex digits (`+0x7`, a method's `const+0x52`) and so ends such a call site, the
// tokens from the object's to it become one kPath token (at the object's index, returned), else
// SIZE_MAX.
std::size_t CollapseNativeCallSite(std::string_view message, std::size_t i,
                                   std::vector<Token>& tokens, std::vector<std::uint64_t>& hashes) {
  const Token offset = tokens[i];
  const std::string_view text = message.substr(offset.offset, offset.length);
  const std::size_t plus = text.rfind('+');
  if (plus == std::string_view::npos || plus + 3 >= text.size() || text[plus + 1] != '0' ||
      (text[plus + 2] | 0x20) != 'x') {
    return SIZE_MAX;
  }
  for (std::size_t k = plus + 3; k < text.size(); ++k) {
    if (!std::isxdigit(static_cast<unsigned char>(text[k]))) return SIZE_MAX;
  }
  // The '(' that opens the symbol, past the parentheses of its signature.
  std::size_t open = offset.offset, depth = 0;
  while (true) {
    if (open == 0) return SIZE_MAX;
    const char c = message[--open];
    if (c == ')') {
      ++depth;
    } else if (c == '(') {
      if (depth == 0) break;
      --depth;
    }
  }
  std::size_t object = i;  // the token that ends right at the '('
  while (object > 0 && tokens[object - 1].offset >= open) --object;
  if (object == 0) return SIZE_MAX;
  --object;
  if (tokens[object].offset + tokens[object].length != open) return SIZE_MAX;
  tokens[object].length = offset.offset + offset.length - tokens[object].offset;
  tokens[object].cls = TokenClass::kPath;
  hashes[object] = Fingerprinter::TokenHash(message, tokens[object]);
  const auto from = static_cast<std::ptrdiff_t>(object + 1),
             to = static_cast<std::ptrdiff_t>(i + 1);
  tokens.erase(tokens.begin() + from, tokens.begin() + to);
  hashes.erase(hashes.begin() + from, hashes.begin() + to);
  return object;
}

// Can `c` begin a unit of data (B, or a prefix: k K M G T P E)? One test of a mask.
constexpr bool MayBeginDataUnit(char c) {
  constexpr std::uint64_t kInitials =
      1ULL << ('B' - 'B') | 1ULL << ('E' - 'B') | 1ULL << ('G' - 'B') | 1ULL << ('K' - 'B') |
      1ULL << ('M' - 'B') | 1ULL << ('P' - 'B') | 1ULL << ('T' - 'B') | 1ULL << ('k' - 'B');
  return c >= 'B' && c <= 'k' && ((kInitials >> (c - 'B')) & 1) != 0;
}

// A unit of data written after a size, as human-readable sizes print one whatever their
// magnitude: `B`, `KB`, `kB`, `KiB`, `MB`, `MiB`, `GB`..., or a rate of it per second (`MB/s`,
// `KiB/sec`).
bool IsDataUnit(std::string_view w) {
  std::size_t k = w[0] == 'B' ? 0 : 1;  // past a prefix (MayBeginDataUnit(w[0]) holds)
  if (k == 1 && k < w.size() && w[k] == 'i') ++k;
  if (k >= w.size() || w[k] != 'B') return false;
  const std::string_view rate = w.substr(k + 1);
  return rate.empty() || rate == "/s" || rate == "/sec";
}

// A size written with its unit (`1.00 MiB`, `121.00 B`, `9.87 MiB/sec`) is one value: the
// unit changes with the magnitude, as a duration's does, so `12.05 KiB` and `1.00 MiB` are
// one slot. tokens[i] is a number and tokens[i + 1] a word one blank after it that begins as a
// unit of data may (MayBeginDataUnit); when it is one, the two become one token of a size's
// kind (a float's class, hashed apart from a bare number: a line that writes a unit is not
// one that writes none). True when collapsed.
bool CollapseSize(std::string_view message, std::size_t i, std::vector<Token>& tokens,
                  std::vector<std::uint64_t>& hashes) {
  const Token& unit = tokens[i + 1];
  if (unit.length > 7 || !IsDataUnit(message.substr(unit.offset, unit.length))) return false;
  tokens[i].length = unit.offset + unit.length - tokens[i].offset;
  tokens[i].cls = TokenClass::kFloat;
  constexpr std::uint64_t kSizeSalt = 0x73697a65ULL;  // "size"
  // A '.' closing the message after the unit marked the unit's hash: the size keeps it.
  const std::uint64_t closing =
      hashes[i + 1] != Fingerprinter::TokenHash(message, unit) ? kClosingPeriodMark : 0;
  hashes[i] = Fingerprinter::TokenHash(message, tokens[i]) ^ kSizeSalt ^ closing;
  tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(i + 1));
  hashes.erase(hashes.begin() + static_cast<std::ptrdiff_t>(i + 1));
  return true;
}

// Is tokens[i] (a number) followed, one blank after it, by a word that may be a unit of data?
bool BeforeUnit(std::string_view message, const std::vector<Token>& tokens, std::size_t i) {
  const std::size_t end = tokens[i].offset + tokens[i].length;
  return i + 1 < tokens.size() && tokens[i + 1].offset == end + 1 && message[end] == ' ' &&
         MayBeginDataUnit(message[end + 1]) && tokens[i + 1].cls == TokenClass::kWord;
}

// A bracketed text that opens a message (after its header) names the message's context: a
// thread, or a component with its instance (`[raft-expiration-reaper]: Starting`,
// `[LogLoader partition=orders-0, dir=/data] Loading ...`). Like a quoted text it is one value
// whatever its words, of a path's kind (where in the program): a thread's bracket and a
// component's are one slot, so one message written in two contexts is one event (two writers
// of `Shutting down` and `Shutting down.` are told apart by the closing '.', see
// PrepareLine). A bracket holding a protected word (`[error]`) or a name in capitals (`[OK]`,
// `[UFW BLOCK]`: an enumeration's constants; not as a field's value, `[SocketServer
// listenerType=BROKER]`) keeps its tokens, and so does a message that is only the bracket.
void CollapseLeadingContext(const TemplateMatcher& matcher, std::string_view message,
                            std::size_t body, std::vector<Token>& tokens,
                            std::vector<std::uint64_t>& hashes) {
  if (tokens.size() < 2) return;
  std::size_t open = body;
  while (open < message.size() && (message[open] == ' ' || message[open] == '\t')) ++open;
  if (open >= message.size() || message[open] != '[' || tokens[0].offset <= open) return;
  const std::size_t close = message.find(']', open + 1);
  if (close == std::string_view::npos ||
      message.substr(open + 1, close - open - 1).find('[') != std::string_view::npos) {
    return;
  }
  std::size_t end = 0;  // the tokens inside: [0, end)
  while (end < tokens.size() && tokens[end].offset < close) ++end;
  if (end == 0 || end == tokens.size()) return;
  for (std::size_t k = 0; k < end; ++k) {
    if (tokens[k].cls != TokenClass::kWord) continue;
    const std::string_view w = message.substr(tokens[k].offset, tokens[k].length);
    // A field's value (`listenerType=BROKER`) is the instance's, not the message's constant.
    if ((TemplateMatcher::IsConstantName(w) && message[tokens[k].offset - 1] != '=') ||
        matcher.IsProtectedWord(w)) {
      return;
    }
  }
  const Token& last = tokens[end - 1];
  tokens[0].length = last.offset + last.length - tokens[0].offset;
  tokens[0].cls = TokenClass::kPath;
  hashes[0] = Fingerprinter::TokenHash(message, tokens[0]);
  tokens.erase(tokens.begin() + 1, tokens.begin() + static_cast<std::ptrdiff_t>(end));
  hashes.erase(hashes.begin() + 1, hashes.begin() + static_cast<std::ptrdiff_t>(end));
}

// A bracket that closes the message and holds fields, `name=value`, after a first word
// (`... unreachable [StateProbe match=0 next=540 paused inactive]`, raft's progress) prints an
// object: its first word names the object's kind or state and stays a word; the rest, its
// fields and the flags printed when set, is one value of a path's kind whatever its words and
// length. Called when the message's last token is followed by `]`.
void CollapseClosingStateDump(std::string_view message, std::size_t body,
                              std::vector<Token>& tokens, std::vector<std::uint64_t>& hashes) {
  const std::size_t close = tokens.back().offset + tokens.back().length;
  const std::size_t open = message.rfind('[', close);
  if (open == std::string_view::npos || open <= body) return;
  const std::string_view inside = message.substr(open + 1, close - open - 1);
  if (inside.find('=') == std::string_view::npos) return;
  const auto by_offset = [](const Token& t, std::size_t at) { return t.offset < at; };
  const auto first = std::lower_bound(tokens.begin(), tokens.end(), open + 1, by_offset);
  const auto k = static_cast<std::size_t>(first - tokens.begin()) + 1;
  // A first word, then fields: a word glued to its '=' (`match=0`) opens the rest.
  if (k + 1 >= tokens.size() || first->offset != open + 1 || first->cls != TokenClass::kWord ||
      message[first->offset + first->length] != ' ' || tokens[k].cls != TokenClass::kWord ||
      message[tokens[k].offset + tokens[k].length] != '=') {
    return;
  }
  tokens[k].length = static_cast<std::uint32_t>(close - tokens[k].offset);
  tokens[k].cls = TokenClass::kPath;
  hashes[k] = Fingerprinter::TokenHash(message, tokens[k]);
  tokens.resize(k + 1);
  hashes.resize(k + 1);
}

// A list written in brackets, `Set(orders-0, orders-1, orders-2)` or `[kBrowserWindow (1),
// kHeadlessCommand (1)]`: two or more items apart by ", " inside one pair of brackets,
// parentheses or braces, every item of one shape (the same run of values and words, the same
// punctuation between them, a bracket nested in an item included) and holding a value, is one
// value whatever its length, one token of a path's kind from the first item to the last. An item
// with '=' or ':' of its own is a record's field (`(uid=1001, gid=1001)`: fields are named, a
// list's items are not), and a list of words alone, or with a protected word or a constant's
// name in it (`(Seen, Deleted)`, `[TERM, HUP]`), is an enumeration's constants: they keep their
// tokens. A lone item (`Set(audit-0)`) is a value of its kind, which SameVariable compares with
// the list's first item. Lines without ", " (random text almost never has one) cost one search.
[[gnu::noinline]] void CollapseListsAt(const TemplateMatcher& matcher, std::string_view message,
                                       std::size_t body, std::size_t comma,
                                       std::vector<Token>& tokens,
                                       std::vector<std::uint64_t>& hashes) {
  const std::size_t n = tokens.size();
  // A list's first item is short: its opener lies within this many bytes before the first ", ".
  constexpr std::size_t kMaxItem = 96;
  constexpr std::size_t kMaxLists = 8;
  std::uint32_t spans[2 * kMaxLists];  // token ranges [first, last], in order
  std::size_t nspans = 0;
  const auto mix = [](std::uint64_t h, std::uint64_t c) { return (h ^ c) * 0x100000001b3ull; };
  const auto by_offset = [](const Token& t, std::size_t at) { return t.offset < at; };
  while (comma != std::string_view::npos && nspans < 2 * kMaxLists) {
    std::size_t open = std::string_view::npos;
    int depth = 0;
    for (std::size_t p = comma; p > body && comma - p < kMaxItem;) {
      const char c = message[--p];
      if (c == ')' || c == ']' || c == '}') {
        ++depth;
      } else if (c == '(' || c == '[' || c == '{') {
        if (depth == 0) {
          open = p;
          break;
        }
        --depth;
      }
    }
    std::size_t next = comma + 2;  // where to look for the next ", " when this is no list
    if (open != std::string_view::npos) {
      const char close = CloserOf(message[open]);
      auto k = static_cast<std::size_t>(
          std::lower_bound(tokens.begin(), tokens.end(), open + 1, by_offset) - tokens.begin());
      const std::size_t first = k;
      bool ok = true, value = false, constant = false;
      std::size_t items = 0, close_at = std::string_view::npos;
      std::uint64_t shape = 0, first_shape = 0;
      const auto end_item = [&]() {
        ok &= value;
        if (items++ == 0) {
          first_shape = shape;
        } else {
          ok &= shape == first_shape;
        }
        shape = 0;
        value = false;
      };
      depth = 0;
      std::size_t p = open + 1;
      while (ok && close_at == std::string_view::npos) {
        const std::size_t gap_end = k < n ? tokens[k].offset : message.size();
        for (; p < gap_end; ++p) {
          const char c = message[p];
          if (c == ' ' || c == '\t') continue;
          if (depth == 0) {
            if (c == ',') {
              if (p + 1 >= message.size() || message[p + 1] != ' ') ok = false;  // one separator
              end_item();
              continue;
            }
            if (c == close) {
              end_item();
              close_at = p;
              break;
            }
            if (c == '=' || c == ':' || c == ')' || c == ']' || c == '}') {
              ok = false;  // a field's name, or a closer of nothing open
              break;
            }
          }
          if (c == '(' || c == '[' || c == '{') ++depth;
          if ((c == ')' || c == ']' || c == '}') && --depth < 0) ok = false;
          shape = mix(shape, static_cast<unsigned char>(c));
        }
        if (!ok || close_at != std::string_view::npos || k >= n) break;
        const Token& t = tokens[k];
        if (IsVariableClass(t.cls)) {
          value = true;
          shape = mix(shape, 'V');
        } else {
          const std::string_view w = message.substr(t.offset, t.length);
          constant |= TemplateMatcher::IsConstantName(w) || matcher.IsProtectedWord(w);
          shape = mix(shape, 'W');
        }
        p = t.offset + t.length;
        ++k;
      }
      if (ok && !constant && items >= 2 && close_at != std::string_view::npos && k > first) {
        while (nspans >= 2 && spans[nspans - 2] >= first) nspans -= 2;  // nested in this one
        spans[nspans++] = static_cast<std::uint32_t>(first);
        spans[nspans++] = static_cast<std::uint32_t>(k - 1);
        next = close_at + 1;
      }
    }
    comma = message.find(", ", next);
  }
  if (nspans == 0) return;
  std::size_t kept = 0, at = 0;
  for (std::size_t k = 0; k < n;) {
    if (at < nspans && k == spans[at]) {
      const Token& last = tokens[spans[at + 1]];
      tokens[kept] = tokens[k];
      tokens[kept].length = last.offset + last.length - tokens[k].offset;
      tokens[kept].cls = TokenClass::kPath;
      hashes[kept] = Fingerprinter::TokenHash(message, tokens[kept]);
      k = spans[at + 1] + 1;
      at += 2;
    } else {
      tokens[kept] = tokens[k];
      hashes[kept] = hashes[k];
      ++k;
    }
    ++kept;
  }
  tokens.resize(kept);
  hashes.resize(kept);
}

// A JSON line's value glued to its key's ':' (`"status":503`, `"size":0`, `"tls":true`: the
// tokenizer cuts at blanks and brackets, not at ':', so `:503` is one token, a digit-bearing
// word that hid every status among the others) is the value alone, as `"status": 503` reads:
// its class is the value's, after its key (JsonValueClass: a status after a status key a word,
// a size an integer, a duration a float, `true` a literal). Only a value that opens with a letter
// or a digit right after the key's closing quote and ':' and is not itself quoted (`":8443"`,
// `"::1"` keep their ':').
// The class of `value`, a JSON value right after its key's token `key`, as the tokenizer
// classes a key's value apart from its key (`"status": 503`): its text's class, but a status
// (three digits, 100 to 599) after a key whose name ends in `status` or `code` is a word, an
// enumeration's value, and `true`, `false`, `null`... a literal.
TokenClass JsonValueClass(std::string_view message, const Token& key, const Token& value) {
  const std::string_view text = message.substr(value.offset, value.length);
  const TokenClass cls = Tokenizer::Classify(text);
  if (cls == TokenClass::kInteger && text.size() == 3 && text[0] >= '1' && text[0] <= '5' &&
      key.cls == TokenClass::kWord) {
    const std::string_view k = message.substr(key.offset, key.length);
    const auto ends_with = [&k](std::string_view suffix) {
      if (k.size() < suffix.size()) return false;
      for (std::size_t j = 0; j < suffix.size(); ++j) {
        if ((k[k.size() - suffix.size() + j] | 0x20) != suffix[j]) return false;
      }
      return true;
    };
    if (ends_with("status") || ends_with("code")) return TokenClass::kWord;
  }
  if (cls == TokenClass::kWord && IsLiteralWord(text)) return TokenClass::kLiteral;
  return cls;
}

[[gnu::noinline, gnu::cold]] void SplitJsonKeyColons(std::string_view message,
                                                     std::vector<Token>& tokens,
                                                     std::vector<std::uint64_t>& hashes) {
  const auto alnum = [](char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
  };
  for (std::size_t k = 1; k < tokens.size(); ++k) {
    Token& t = tokens[k];
    if (t.length < 2 || message[t.offset] != ':' || message[t.offset - 1] != '"' ||
        !alnum(message[t.offset + 1])) {
      continue;
    }
    std::size_t after = t.offset + t.length;  // past the trailing ':' '.' '!' '?' cut off
    while (after < message.size() && (message[after] == ':' || message[after] == '.' ||
                                      message[after] == '!' || message[after] == '?')) {
      ++after;
    }
    if (after < message.size() && message[after] == '"') continue;
    ++t.offset;
    --t.length;
    t.cls = JsonValueClass(message, tokens[k - 1], t);
    hashes[k] = Fingerprinter::TokenHash(message, t);
  }
}

// A JSON line's object nested as a key's value that holds no object itself (`"headers":{...}`,
// `"tls":{...}`, `"data":{"host":...}`) is one value of the thing its key names: which keys it
// holds, in which order (Go writes a map's keys in a random one) and what they say vary from
// line to line as a request's headers do, so its tokens become one (of a path's kind, as a
// list's). An object holding a key that names an outcome or a kind (`"code":`, `"status":`,
// `"type":`, `"method":`) or a protected word keeps its tokens: they may be the event.
[[gnu::noinline, gnu::cold]] void CollapseInnermostObjects(const TemplateMatcher& matcher,
                                                           std::string_view message,
                                                           std::size_t body,
                                                           std::vector<Token>& tokens,
                                                           std::vector<std::uint64_t>& hashes) {
  constexpr std::size_t kNone = std::string_view::npos;
  const std::size_t n = tokens.size();
  std::size_t kept = 0, read = 0;  // tokens [read, n) are yet to be moved to [kept, ...)
  std::size_t open = kNone;        // a key's '{' with no '{' after it yet
  bool in_string = false;
  for (std::size_t p = body + 1; p < message.size(); ++p) {
    const char c = message[p];
    if (c == '"') {
      if (!EscapedQuote(message, p)) in_string = !in_string;
      continue;
    }
    if (in_string) continue;
    if (c == '{') {
      open = message[p - 1] == ':' && p - 1 > body && message[p - 2] == '"' ? p : kNone;
      continue;
    }
    if (c != '}' || open == kNone) continue;
    std::size_t first = read;  // the tokens inside the pair: [first, end)
    while (first < n && tokens[first].offset <= open) ++first;
    std::size_t end = first;
    while (end < n && tokens[end].offset < p) ++end;
    open = kNone;
    bool collapse = end - first >= 2;
    for (std::size_t k = first; collapse && k < end; ++k) {
      if (tokens[k].cls != TokenClass::kWord) continue;
      const std::string_view w = message.substr(tokens[k].offset, tokens[k].length);
      const std::size_t after = tokens[k].offset + tokens[k].length;
      const bool key =
          after + 1 < message.size() && message[after] == '"' && message[after + 1] == ':';
      collapse = !(key && (NamesOutcome(w) || NamesKind(w))) && !matcher.IsProtectedWord(w);
    }
    if (!collapse) continue;
    for (; read < first; ++read, ++kept) {
      tokens[kept] = tokens[read];
      hashes[kept] = hashes[read];
    }
    Token object = tokens[first];
    object.length = tokens[end - 1].offset + tokens[end - 1].length - object.offset;
    object.cls = TokenClass::kPath;
    tokens[kept] = object;
    hashes[kept] = Fingerprinter::TokenHash(message, object);
    ++kept;
    read = end;
  }
  if (read == kept) return;  // nothing collapsed
  for (; read < n; ++read, ++kept) {
    tokens[kept] = tokens[read];
    hashes[kept] = hashes[read];
  }
  tokens.resize(kept);
  hashes.resize(kept);
}

void CollapseBracketedLists(const TemplateMatcher& matcher, std::string_view message,
                            std::size_t body, std::vector<Token>& tokens,
                            std::vector<std::uint64_t>& hashes) {
  if (tokens.size() < 2) return;
  if (const std::size_t comma = message.find(", ", body); comma != std::string_view::npos) {
    CollapseListsAt(matcher, message, body, comma, tokens, hashes);
  }
}

// A line that is one setting alone, a name, an '=' set off by blanks and its value
// (`offsets.topic.replication.factor = 1`, `log_color    = False`), is a row of a settings
// dump: a program prints every option of its configuration through one format string, so the
// name and the value are each one value (of a path's kind: where in the configuration) and
// the '=' is the row's word. A name glued to its '=' (`cmd=get`) is a field's; a line of two
// settings or more (`a = 1 b = 2`) or with words before the name is a message's; and so is a
// row whose value calls a function (`ret = self._execute(`: a traceback's source line) or
// reads as prose, going on after a `; ` or closing a number with a sentence's '.' (`Page =
// 612x792; 18,36 to ...`, `job_canceled = 1.`; a name may end in '.', `prefix = rsm.config.`):
// they keep their tokens.
void MarkSettingRow(std::string_view message, std::size_t body, std::vector<Token>& tokens,
                    std::vector<std::uint64_t>& hashes) {
  const Token& name = tokens[0];
  std::size_t p = name.offset + name.length;
  if (name.cls != TokenClass::kWord || p >= message.size() || message[p] != ' ') return;
  for (std::size_t k = body; k < name.offset; ++k) {
    if (message[k] != ' ' && message[k] != '\t') return;
  }
  while (p < message.size() && message[p] == ' ') ++p;
  if (p + 1 >= message.size() || message[p] != '=' || message[p + 1] != ' ') return;
  const std::string_view value = message.substr(p + 2);
  if (value.find(" = ") != std::string_view::npos || value.find("; ") != std::string_view::npos) {
    return;
  }
  const std::size_t end = value.find_last_not_of(" \t");
  if (end == std::string_view::npos ||
      (end > 0 && value[end] == '.' && value[end - 1] >= '0' && value[end - 1] <= '9')) {
    return;
  }
  for (std::size_t k = 1; k < value.size(); ++k) {
    if (value[k] == '(' &&
        (std::isalnum(static_cast<unsigned char>(value[k - 1])) || value[k - 1] == '_')) {
      return;
    }
  }
  tokens[0].cls = TokenClass::kPath;
  hashes[0] = Fingerprinter::TokenHash(message, tokens[0]);
  const Token& last = tokens.back();
  tokens[1].length = last.offset + last.length - tokens[1].offset;
  tokens[1].cls = TokenClass::kPath;
  hashes[1] = hashes[0];
  tokens.resize(2);
  hashes.resize(2);
  const Token equals{static_cast<std::uint32_t>(p), 1, TokenClass::kWord};
  tokens.insert(tokens.begin() + 1, equals);
  hashes.insert(hashes.begin() + 1, Fingerprinter::TokenHash(message, equals));
}

// A line whose words, a phrase of two or more, end in ':' and one field, a name written in
// capitals (opening with two: an environment variable's or a property's, `IV_VER`, `PATH`)
// glued to its '=' and a value of one token closing the line (`peer info: IV_VER=2.6.14`,
// `peer info: IV_PLAT=linux`), is a row of a dump: one format string
// prints each name and value a list holds (a peer's properties, an environment), so the field
// is one value whatever its name. A name in lower case is the program's own field, which it
// names in its format string (`using identifier: hwaddr=...` / `client-id=...`: a kind, an
// enumeration); after a single name (`Report: jobs=0`, `add_job: user=...`: a function's or
// component's name, as a logger's) the field is the message and its name the event; and a
// field naming an outcome (NamesOutcome) or holding a protected word keeps its tokens. `f` is
// the name's token, right before the line's last.
void MarkDumpRow(const TemplateMatcher& matcher, std::string_view message, std::size_t f,
                 std::vector<Token>& tokens, std::vector<std::uint64_t>& hashes) {
  const Token& name = tokens[f];
  const std::size_t eq = name.offset + name.length;
  const Token& label = tokens[f - 1];
  const Token& before = tokens[f - 2];
  if ((name.cls != TokenClass::kWord && name.cls != TokenClass::kDigitWord) ||
      eq + 1 >= message.size() || message[eq] != '=' || tokens[f + 1].offset != eq + 1 ||
      label.cls != TokenClass::kWord || label.offset + label.length + 2 != name.offset ||
      before.cls != TokenClass::kWord || before.offset + before.length + 1 != label.offset ||
      message[label.offset - 1] != ' ' || message[name.offset - 2] != ':') {
    return;
  }
  const Token& value = tokens[f + 1];
  const std::size_t end = value.offset + value.length;
  if (message.find_first_not_of(" \t", end) != std::string_view::npos) return;
  const std::string_view key = message.substr(name.offset, name.length);
  const auto capital = [](char c) { return c >= 'A' && c <= 'Z'; };
  if (key.size() < 2 || !capital(key[0]) || !capital(key[1]) || NamesOutcome(key) ||
      (name.cls == TokenClass::kWord && matcher.IsProtectedWord(key)) ||
      (value.cls == TokenClass::kWord &&
       matcher.IsProtectedWord(message.substr(value.offset, value.length)))) {
    return;
  }
  tokens[f].length = static_cast<std::uint32_t>(end - name.offset);
  tokens[f].cls = TokenClass::kPath;
  hashes[f] = Fingerprinter::TokenHash(message, tokens[f]);
  tokens.resize(f + 1);
  hashes.resize(f + 1);
}

}  // namespace

namespace {

// A dump of bytes, each written as two hex digits apart by blanks (a kernel oops's `Code: 48 89
// 45 f8 <c7> 00 ...`, a packet or a register dump), is one value whatever its bytes: as numbers,
// digit-bearing words and words (`48`, `f8`, `ec`) its tokens fall in three classes, so no
// list of one kind holds it. This many bytes in a row make a dump (prose never has them).
constexpr std::size_t kMinDumpBytes = 8;

bool IsHexByte(std::string_view message, const Token& t) {
  return t.length == 2 && std::isxdigit(static_cast<unsigned char>(message[t.offset])) &&
         std::isxdigit(static_cast<unsigned char>(message[t.offset + 1]));
}

// Are a and b (b right after a) two bytes of a dump: both two hex digits, with blanks between,
// or the angle brackets that mark one byte (the faulting instruction's, `<c7>`)?
bool ByteNeighbours(std::string_view message, const Token& a, const Token& b) {
  if (!IsHexByte(message, a) || !IsHexByte(message, b)) return false;
  const std::size_t end = a.offset + a.length;
  if (b.offset == end) return false;
  for (std::size_t p = end; p < b.offset; ++p) {
    if (message[p] != ' ' && message[p] != '<' && message[p] != '>') return false;
  }
  return true;
}

}  // namespace

void PrepareLine(const Tokenizer& tokenizer, const TemplateMatcher& matcher, bool infer_header,
                 std::string_view message, PreparedLine& out) {
  PrepareLine(tokenizer, matcher, infer_header ? ParseMessageHeader(message) : MessageHeader{},
              message, out);
}

void PrepareLine(const Tokenizer& tokenizer, const TemplateMatcher& matcher,
                 const MessageHeader& header, std::string_view message, PreparedLine& out) {
  std::vector<Token>& tokens = out.tokens;
  std::vector<std::uint64_t>& hashes = out.hashes;
  // Token offsets stay relative to the whole message, which groups keep.
  out.header = header;
  out.peer_size = 0;
  // A logger written after the message (`tail`) is header too: no token of the message.
  message.remove_suffix(std::min<std::size_t>(header.tail, message.size()));
  if (out.header.body == 0) {
    tokenizer.Tokenize(message, tokens);
  } else {
    tokenizer.Tokenize(message.substr(out.header.body), tokens);
    for (Token& t : tokens) t.offset += out.header.body;
  }
  Fingerprinter::TokenHashes(message, tokens, hashes);
  // A peer's endpoint opening the message (`alice/127.0.0.1:46810 MULTI: ...`) is its context,
  // not its words (SkipPeerEndpoint): an address, a host or a path to the tokenizer, or a name
  // and its port (`wpad:80`, read as a field's name and number).
  if (tokens.size() >= 2 &&
      (tokens[0].cls == TokenClass::kIPv4 || tokens[0].cls == TokenClass::kPath ||
       tokens[0].cls == TokenClass::kHostPort ||
       (tokens[0].cls == TokenClass::kWord && tokens[1].cls == TokenClass::kInteger &&
        tokens[1].offset == tokens[0].offset + tokens[0].length + 1 &&
        message[tokens[1].offset - 1] == ':'))) {
    if (const std::size_t at = SkipPeerEndpoint(message, out.header.body); at != out.header.body) {
      std::size_t k = 0;
      while (k < tokens.size() && tokens[k].offset < at) ++k;
      if (k < tokens.size() && tokens[k].offset == at) {
        // The endpoint: the word after the blanks at the body, up to the blank before `at`.
        std::size_t p = out.header.body;
        while (message[p] == ' ' || message[p] == '\t') ++p;
        out.peer = static_cast<std::uint32_t>(p);
        out.peer_size = static_cast<std::uint16_t>(std::min<std::size_t>(at - 1 - p, 0xffff));
        out.header.body = static_cast<std::uint32_t>(at);
        tokens.erase(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(k));
        hashes.erase(hashes.begin(), hashes.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
  }
  // A message that closes with a '.' right after a word (`Shutting down.`) and one that closes
  // with the word alone (`Shutting down`) come from two format strings: a program writes the
  // same closing punctuation after its constant words every time. The '.' is no token, so it
  // marks the last word's hash (its text, which protected words and shapes read, is kept).
  if (!tokens.empty()) {
    const Token& last = tokens.back();
    const std::size_t after = last.offset + last.length;
    if (after < message.size() && message[after] == '.' && last.cls == TokenClass::kWord &&
        message.find_first_not_of(" \t", after + 1) == std::string_view::npos) {
      hashes.back() ^= kClosingPeriodMark;
    }
  }
  CollapseQuotedText(matcher, message, out.header.body, out.header.quoted, tokens, hashes);
  // A JSON object closes the message, alone or after a header another logger wrote (`INFO ...
  // {"msg":...}`): most messages close with no '}', one byte read decides.
  if (!message.empty() && message.back() == '}') [[unlikely]] {
    if (const std::size_t open = message.find("{\"", out.header.body);
        open != std::string_view::npos) {
      SplitJsonKeyColons(message, tokens, hashes);
      CollapseInnermostObjects(matcher, message, open, tokens, hashes);
    }
  }
  // Most messages open with no bracket: one byte read decides (blanks before it are rare).
  if (const std::size_t body = out.header.body;
      body < message.size() &&
      (message[body] == '[' || message[body] == ' ' || message[body] == '\t')) {
    CollapseLeadingContext(matcher, message, body, tokens, hashes);
  }
  // Most messages close with no ']' right after their last token: one byte read decides.
  if (!tokens.empty()) {
    const std::size_t after = tokens.back().offset + tokens.back().length;
    if (after < message.size() && message[after] == ']') {
      CollapseClosingStateDump(message, out.header.body, tokens, hashes);
    }
  }
  // A key's ':' that closes the message, its value printed empty (`extension id: ` beside
  // `extension id: (none)`), is an empty value there, as after a key's '=' that nothing follows.
  if (!tokens.empty()) {
    const Token& last = tokens.back();
    const std::size_t after = last.offset + last.length;
    if (after < message.size() && message[after] == ':' && last.cls == TokenClass::kWord &&
        message.find_first_not_of(" \t", after + 1) == std::string_view::npos) {
      const Token empty{static_cast<std::uint32_t>(after + 1), 0, TokenClass::kEmpty};
      tokens.push_back(empty);
      hashes.push_back(Fingerprinter::TokenHash(message, empty));
    }
  }
  CollapseBracketedLists(matcher, message, out.header.body, tokens, hashes);
  // A settings dump's row: most lines' first token is followed by no blank and '='.
  if (tokens.size() >= 2) {
    const std::size_t after = tokens[0].offset + tokens[0].length;
    if (after + 2 < tokens[1].offset && message[after] == ' ') {
      MarkSettingRow(message, out.header.body, tokens, hashes);
    }
  }
  // A dump's row (MarkDumpRow): most lines' last token does not follow a '='.
  if (tokens.size() >= 4 && message[tokens.back().offset - 1] == '=') {
    MarkDumpRow(matcher, message, tokens.size() - 2, tokens, hashes);
  }
  out.dashes = MarkEmptyDashes(message, out.header.body, tokens, hashes);
  // A list of values of one kind ("1 2 3 ... 161", "node-1, node-2, node-3") is one slot
  // however long it is: consecutive variable tokens of the same masked shape that begin alike
  // (a digit or sign, a letter, or the same other byte), separated only by spaces or commas,
  // become one token (with the first one's hash), if there are three or more of them or a
  // comma separates them. Two values that begin differently are two fields, not a list
  // ("/api/v1/cart HTTP/1.1": a path and a protocol), and so are two values after one
  // another ("200 512": a status and a size). Most lines hold no list: find the first pair
  // that could start one before copying.
  auto list_pair = [&](std::size_t prev, std::size_t i) {
    if (hashes[i] != hashes[prev] || tokens[i].cls != tokens[prev].cls ||
        !BeginAlike(message, tokens[prev], tokens[i])) {
      return false;
    }
    const std::size_t gap = tokens[prev].offset + tokens[prev].length;
    return message.substr(gap, tokens[i].offset - gap).find_first_not_of(" ,") ==
           std::string_view::npos;
  };
  // The same pass finds call sites first (see CollapseCallSites): a call site's position and
  // a list's element are both variable tokens, so a plain word costs one test, and a position
  // is a host and port or a path to the tokenizer ("Foo.java:42", "/srv/app.js:10:5").
  // Token k > 0 starts past token 0, so the byte before it exists.
  // So does it the first value right after a '=' of a count's class, where lists of counters
  // (see CollapseCounterLists) may begin: they are collapsed before the lists of values.
  // Sizes with their units and native call sites (see CollapseSize, CollapseNativeCallSite)
  // are made one token each in the same pass, up to the first list: the byte right after a
  // value, a blank or a ')', says which may end there.
  bool call_sites = false, counters = false;
  if (!tokens.empty() && IsNumber(tokens[0].cls) && BeforeUnit(message, tokens, 0)) {
    CollapseSize(message, 0, tokens, hashes);
  }
  const Token* t = tokens.data();
  std::size_t n = tokens.size();
  std::size_t start = 1;
  for (; start < n; ++start) {
    if (!IsVariableClass(t[start].cls)) continue;
    if (const std::size_t end = t[start].offset + t[start].length; end < message.size()) {
      if (message[end] == ' ') {
        if (IsNumber(t[start].cls) && BeforeUnit(message, tokens, start) &&
            CollapseSize(message, start, tokens, hashes)) {
          t = tokens.data();
          n = tokens.size();
        }
      } else if (message[end] == ')') {
        if (const std::size_t at = CollapseNativeCallSite(message, start, tokens, hashes);
            at != SIZE_MAX) {
          t = tokens.data();
          n = tokens.size();
          start = at;  // the call site: look at the token after it next
          continue;
        }
      }
    }
    const TokenClass cls = t[start].cls;
    if ((cls == TokenClass::kHostPort || cls == TokenClass::kPath) &&
        message[t[start].offset - 1] == '(' && !call_sites &&
        CallSiteAt(message, tokens, start - 1)) {
      CollapseCallSites(message, start - 1, tokens, hashes);
      call_sites = true;
      t = tokens.data();
      n = tokens.size();
      --start;  // tokens[start] is the one after the call site now: look at it next
      continue;
    }
    if (!counters && ((kCountClasses >> static_cast<unsigned>(cls)) & 1u) != 0 &&
        message[t[start].offset - 1] == '=') {
      counters = true;
      const std::size_t run = CollapseCounterLists(message, start - 1, tokens, hashes);
      if (run != SIZE_MAX) {
        t = tokens.data();
        n = tokens.size();
        start = run > 0 ? run - 1 : 0;  // look at the first list of counters next
        continue;
      }
    }
    if (list_pair(start - 1, start)) break;
  }
  if (start >= tokens.size()) return;
  // Lists of counters past the first list of values (none before it: the pass saw them).
  if (!counters) CollapseCounterLists(message, start - 1, tokens, hashes);
  // A dump of bytes opens its list where its first byte is, whatever that byte's class.
  while (start >= 2 && tokens[start - 1].length == 2 &&
         ByteNeighbours(message, tokens[start - 2], tokens[start - 1])) {
    --start;
  }
  std::size_t kept = start - 1;
  for (std::size_t i = start - 1; i < tokens.size();) {
    std::size_t end = i + 1;  // the run [i, end) of list elements
    // A dump of bytes (see ByteNeighbours) is one value of an opaque code's class.
    // A run of decimal numbers alone is a list of numbers as below (`36 40 44 48 52 ...`).
    bool hex = false;
    while (tokens[end - 1].length == 2 && end < tokens.size() &&
           ByteNeighbours(message, tokens[end - 1], tokens[end])) {
      hex |= tokens[end - 1].cls != TokenClass::kInteger || tokens[end].cls != TokenClass::kInteger;
      ++end;
    }
    if (hex && end - i >= kMinDumpBytes) {
      const Token last = tokens[end - 1];
      tokens[kept] = tokens[i];
      tokens[kept].length = last.offset + last.length - tokens[i].offset;
      tokens[kept].cls = TokenClass::kHex;
      hashes[kept] = Fingerprinter::TokenHash(message, tokens[kept]);
      ++kept;
      i = end;
      continue;
    }
    end = i + 1;
    bool comma = false;
    while (end < tokens.size() && IsVariableClass(tokens[end].cls) && list_pair(end - 1, end)) {
      const std::size_t gap = tokens[end - 1].offset + tokens[end - 1].length;
      comma |= message.substr(gap, tokens[end].offset - gap).find(',') != std::string_view::npos;
      ++end;
    }
    if (end - i >= 3 || (end - i == 2 && comma)) {
      const Token last = tokens[end - 1];
      tokens[kept] = tokens[i];
      tokens[kept].length = last.offset + last.length - tokens[i].offset;
      hashes[kept] = hashes[i];
      ++kept;
    } else {
      for (std::size_t k = i; k < end; ++k, ++kept) {
        tokens[kept] = tokens[k];
        hashes[kept] = hashes[k];
      }
    }
    i = end;
  }
  tokens.resize(kept);
  hashes.resize(kept);
}

std::size_t ListItems(std::string_view message, const Token& t) {
  if (t.cls != TokenClass::kPath || t.offset == 0 || t.offset + t.length >= message.size())
    return 0;
  const char close = CloserOf(message[t.offset - 1]);
  if (close == 0 || close == '"' || close == '\'' || message[t.offset + t.length] != close)
    return 0;
  std::size_t items = 1, depth = 0;
  for (const char c : message.substr(t.offset, t.length)) {
    if (c == '=') return 0;  // a context's fields, not a list's items
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    items += c == ',' && depth == 0;
  }
  return items > 1 ? items : 0;
}

std::string_view MatchReasonText(MatchReason reason) {
  switch (reason) {
    case MatchReason::kFits:
      return "every differing token is a variable and enough words agree";
    case MatchReason::kFitsAligned:
      return "aligned across a variable written with a different number of tokens";
    case MatchReason::kProtectedWhereVaried:
      return "a protected word stands where the group varied";
    case MatchReason::kDigitWordLetters:
      return "a digit-bearing word changed its letters (en0 vs awdl0)";
    case MatchReason::kProtectedWordDiffers:
      return "a protected word differs";
    case MatchReason::kPlainWordOutOfContext:
      return "a plain word changed outside a value context";
    case MatchReason::kWordOutOfContextUnsupported:
      return "a word changed outside a value context without enough agreeing words";
    case MatchReason::kTooFewAgreeingWords:
      return "too few agreeing words for the words changed";
    case MatchReason::kTokenCountsTooFar:
      return "token counts differ by more than the alignment allows";
    case MatchReason::kExtraTokensAtEnd:
      return "extra tokens at one end of the line (another message's field)";
    case MatchReason::kStretchWithoutVariable:
      return "an unaligned stretch without a variable, or with several plain words";
    case MatchReason::kTooFewAligned:
      return "fewer than two words align";
    case MatchReason::kFieldNameDiffers:
      return "a field's name differs (a word before '='): another format's field";
    case MatchReason::kNegatedState:
      return "a word and the same word negated by a prefix (healthy / unhealthy): a state's two "
             "values";
    case MatchReason::kTermDiffers:
      return "a term written in parts differs (Get-Jobs / Send-Document): an operation or a kind";
    case MatchReason::kNothingKept:
      return "no token keeps the group's value: a line made of variables alone is no template";
  }
  return "unknown";
}

std::uint64_t WordSet::LowerHash(std::string_view word) {
  char buf[64];
  if (word.size() > sizeof buf) return 0;
  for (std::size_t i = 0; i < word.size(); ++i) {
    const char c = word[i];
    buf[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return XXH3_64bits(buf, word.size());
}

void WordSet::Assign(const std::vector<std::string>& words) {
  hashes_.Clear();
  lengths_ = initials_ = 0;
  for (const std::string& w : words) {
    hashes_.Set(LowerHash(w), 1);
    lengths_ |= LengthBit(w);
    initials_ |= InitialBit(w);
  }
}

void TemplateMatcher::SetWords(const std::vector<std::string>& protected_words,
                               const std::vector<std::string>& value_keys) {
  protected_words_.Assign(protected_words);
  value_keys_.Assign(value_keys);
}

namespace {
// A word of lower-case letters alone (`height`, `interlace`).
bool IsLowerWord(std::string_view w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}
}  // namespace

// Is line token i where a log message typically puts a value?
bool TemplateMatcher::InValueContext(const MatchLine& line, std::size_t i) const {
  const Token& t = line.tokens[i];
  const std::size_t prev_end =
      i == 0 ? line.body : line.tokens[i - 1].offset + line.tokens[i - 1].length;
  // A bracket glued to the word before it qualifies that word (query[A], query[MX]): a
  // different word there is a different kind of thing, not a value.
  const bool subscript = i > 0 && t.offset == prev_end + 1 && line.message[prev_end] == '[';
  // A plain word that opens a quoted text of several tokens heads it: an action ("GET" in
  // "GET /a HTTP/1.1", "compress" in "compress the old logs", a command 'reload example.test'),
  // not a value; unless the text is a key's value (name="alice smith") other than the line's
  // message (`msg="Scrape manager stopped"` / `msg="Notifier manager stopped"`: the message
  // field's text is the event's). A single quote opens a text only at the start or after a
  // blank or a bracket ("don't" holds an apostrophe).
  if (t.offset > prev_end && i + 1 < line.tokens.size() &&
      OpensQuotedText(line.message, t.offset - 1) &&
      (line.message.substr(prev_end, t.offset - prev_end).find('=') == std::string_view::npos ||
       (i > 0 &&
        IsMessageKey(line.message.substr(line.tokens[i - 1].offset, line.tokens[i - 1].length))))) {
    const std::size_t end = t.offset + t.length;
    if (line.message.substr(end, line.tokens[i + 1].offset - end)
            .find(line.message[t.offset - 1]) == std::string_view::npos) {
      return false;
    }
  }
  // So does a word of lower-case letters that opens a parenthesised phrase (the bracket opened
  // at the start or after a blank, blanks alone between the word and the next token): the
  // phrase says what happened or why (`(height too large for virtual size)` / `(width too
  // large ...)`), and its first word is its head, not a value. A bracket glued to a word holds
  // that word's argument (`pam_unix(cron:session)`), a word alone in brackets is a value as
  // before, and so is a name in capitals or of parts (`(STORE finished 0.01 secs ago)`, an
  // IMAP command's name; `(text/rodata gap)`).
  if (t.offset > prev_end && line.message[t.offset - 1] == '(' &&
      (t.offset == 1 || line.message[t.offset - 2] == ' ') && i + 1 < line.tokens.size() &&
      t.cls == TokenClass::kWord && IsLowerWord(line.message.substr(t.offset, t.length))) {
    const std::size_t end = t.offset + t.length;
    const std::size_t next = line.tokens[i + 1].offset;
    if (next > end &&
        line.message.substr(end, next - end).find_first_not_of(' ') == std::string_view::npos) {
      return false;
    }
  }
  for (std::size_t p = subscript ? t.offset : prev_end; p < t.offset; ++p) {
    const char c = line.message[p];
    if (c == '=' || c == '\'' || c == '"' || c == '[' || c == '(' || c == '{' || c == '<') {
      // A double-quoted text that opens with blanks (laid out) or with a reply's code is the
      // program's own text (NamesNoValue).
      return !NamesNoValue(line.message, t);
    }
  }
  if (InContextName(line.message, t.offset)) return true;
  if (i == 0) return false;
  const Token& prev = line.tokens[i - 1];
  return value_keys_.Contains(line.message.substr(prev.offset, prev.length)) &&
         !NamesNoValue(line.message, t) && !IsPastForm(line.message.substr(t.offset, t.length));
}

MatchResult TemplateMatcher::Match(const MatchLine& line, const MatchTemplate& tmpl) {
  marks_.clear();
  const std::size_t n = line.tokens.size();
  const GroupTokens& g = tmpl.tokens;
  if (g.size() != n) return MatchAligned(line, tmpl);
  const std::string_view message = line.message;
  const std::string_view gmsg = tmpl.message;
  int word_diffs = 0, keyed_diffs = 0, named_diffs = 0, anchors = 0, words_out_of_context = 0,
      kept = 0, repeated_diffs = 0;
  std::size_t out_of_context_at = 0;
  std::size_t first_diff = n;  // the first changed word's position
  for (std::size_t i = 0; i < n; ++i) {
    const Token& lt = line.tokens[i];
    const std::uint8_t flags = g.flags(i);
    const auto pos = static_cast<std::uint32_t>(i);
    if (flags & kWild) {
      // A protected word as a field's value (`cmd=get`) where the field's words already
      // differed (`cmd=ping`, `cmd=set`) is one more value of that field; where the field
      // always had one value (`status=ok`) a protected one is still another event.
      // So is a word saying the value is missing (`none`) where values varied.
      if (IsProtected(message, lt) && !FieldValue(message, lt) && !IsNothingWord(message, lt))
        return Reject(MatchReason::kProtectedWhereVaried, i);
      // A name of what happened (`job-completed`) is a kind, never one more value of a slot
      // that varied (`job-progress` there took a learned slot before it came).
      // So is an identifier a JSON value names (`"name":"cert_obtained"`, IsJsonIdentifier).
      if (lt.cls == TokenClass::kWord && (NamesWhatHappened(message.substr(lt.offset, lt.length)) ||
                                          IsJsonIdentifier(message, lt)))
        return Reject(MatchReason::kProtectedWhereVaried, i);
      // Nor is the program's own text in quotes, laid out or led by a reply's code, nor a code
      // in capitals alone in its quotes (`"     TYPE: "`, `"211-Features:"`, `"ASCII??"`).
      if (QuotedProgramText(message, lt)) return Reject(MatchReason::kProtectedWhereVaried, i);
      marks_.push_back({pos, kVaried});
      continue;
    }
    if (line.hashes[i] == g.hash(i)) {
      ++kept;
      if (lt.cls == TokenClass::kWord || (line.learned && IsLearnedName(lt.cls, line.hashes[i]))) {
        ++anchors;
      } else if (lt.cls == TokenClass::kEmpty) {
        // A '-' on both sides is the same empty column: it agrees as a word does (a syslog
        // line's "- -" still counts towards the words a changed name needs around it).
        anchors += lt.length != 0;
      } else if (!(flags & kVaried) && lt.cls != TokenClass::kEmpty) {  // no text to show
        // The group's token is unpacked only here and below, not for every agreeing word.
        const Token gt = g.token(i);
        if (message.substr(lt.offset, lt.length) != gmsg.substr(gt.offset, gt.length)) {
          // Another outcome's code (`err=49` where the group's lines said `err=0`).
          if (i > 0 && IsResultCode(message, lt, line.tokens[i - 1]) &&
              IsResultCode(gmsg, gt, g.token(i - 1)))
            return Reject(MatchReason::kProtectedWordDiffers, i);
          marks_.push_back({pos, kVaried});
        }
      }
      continue;
    }
    marks_.push_back({pos, static_cast<std::uint8_t>(kVaried | kWild)});
    const Token gt = g.token(i);
    if (SameVariable(message, lt, gmsg, gt)) continue;
    if (lt.cls == TokenClass::kInteger && gt.cls == TokenClass::kInteger)
      return Reject(MatchReason::kFieldNameDiffers, i);  // two forms of counter lists
    // A template's plain word that the scope has since learned as a value is one, and a host
    // or a learned name takes its place (`(to bob) alice on` / `(to bob) root on`).
    if (line.learned && IsLearnedName(lt.cls, line.hashes[i]) && gt.cls == TokenClass::kWord &&
        line.IsValueWord(g.hash(i)))
      continue;
    // A name with a number keeps its letters (en0 / awdl0: two kinds of interface), but as a
    // field's value on both sides the field says what it is (`box=Archive0` / `box=Old8`);
    // an outcome's field (`err=`, `status=`) still holds codes.
    // A JSON string's whole value is data its key names, whatever its letters: an id drawn
    // at random (`"err_id":"qetfvj5r9"` / `"err_id":"5y99xmwwv"`) is one more value.
    if (lt.cls == TokenClass::kDigitWord && gt.cls == TokenClass::kDigitWord &&
        !(i > 0 &&
          ((FieldValue(message, lt) && FieldValue(gmsg, gt) &&
            ((IsNameWithNumber(message.substr(lt.offset, lt.length)) &&
              IsNameWithNumber(gmsg.substr(gt.offset, gt.length))) ||
             NamesId(message.substr(line.tokens[i - 1].offset, line.tokens[i - 1].length)))) ||
           (JsonStringValue(message, lt) && JsonStringValue(gmsg, gt))) &&
          !NamesOutcome(message.substr(line.tokens[i - 1].offset, line.tokens[i - 1].length))))
      return Reject(MatchReason::kDigitWordLetters, i);
    // A word saying a value is missing where the other line has one is that value printed
    // empty, even a protected one (`none`: another word in its place is still another event).
    if ((IsProtected(message, lt) || IsProtected(gmsg, gt)) && !SaysNothing(message, lt, gt) &&
        !SaysNothing(gmsg, gt, lt) && !NameFieldValue(line, tmpl, i))
      return Reject(MatchReason::kProtectedWordDiffers, i);
    // A term written in parts is the program's word, not a value, wherever it stands (`for
    // Get-Jobs (...)` / `for Send-Document (...)`, after a value key too).
    if (IsTerm(message, lt) || IsTerm(gmsg, gt)) return Reject(MatchReason::kTermDiffers, i);
    // A field's value that is a word and the same word negated (`"name":"healthy"` /
    // `"name":"unhealthy"`, `link=up`...) are a state's two values: another event.
    if (lt.cls == TokenClass::kWord && gt.cls == TokenClass::kWord &&
        NegatedPair(message.substr(lt.offset, lt.length), gmsg.substr(gt.offset, gt.length)) &&
        WholeFieldValue(message, lt) && WholeFieldValue(gmsg, gt))
      return Reject(MatchReason::kNegatedState, i);
    // A word before '=' names a field, not a value: another name is another format's field
    // (`mean = 0.7` / `(flags = 0x1)`), even where values go.
    if ((lt.cls == TokenClass::kWord && NamesField(message, lt)) ||
        (gt.cls == TokenClass::kWord && NamesField(gmsg, gt)))
      return Reject(MatchReason::kFieldNameDiffers, i);
    // Any other change may be a variable only where logs put values: after a key and '=',
    // inside quotes or brackets, or after a word that introduces a value
    // ("user alice"). Elsewhere (HTTPS vs SOCKS5) it is more likely another message.
    // After from/to/host..., a plain word may take the place of a host name the other side
    // has there (from node-246 / from combo): that slot holds hosts. Two plain words there
    // are still an action or a state (to spawn / to destroy).
    const NamePlace place = PlaceOf(message, lt, line.hashes[i], gmsg, gt, g.hash(i));
    const bool host_slot =
        ((IsHostToken(message, lt, line.hashes[i]) != IsHostToken(gmsg, gt, g.hash(i)) ||
          (lt.cls == TokenClass::kWord && gt.cls == TokenClass::kWord)) &&
         i > 0 && IsHostKey(message.substr(line.tokens[i - 1].offset, line.tokens[i - 1].length)) &&
         (IsHostToken(message, lt, line.hashes[i]) != IsHostToken(gmsg, gt, g.hash(i)) ||
          (IsPeerName(message, lt) && IsPeerName(gmsg, gt)))) ||
        place.hosts;
    const bool name_slot = place.names;
    // A word where the other side has an empty value ('-', "") is that column's value: the
    // placeholder says the program writes a value there (`- HIER_NONE` / `alice HIER_NONE`).
    const bool empty_slot = lt.cls == TokenClass::kEmpty || gt.cls == TokenClass::kEmpty ||
                            SaysNothing(message, lt, gt) || SaysNothing(gmsg, gt, lt);
    // A code or a kind on either side (`(BADSIG)`, `for VCPU`) is no value: InValueContext
    // sees the line's side.
    if (!host_slot && !name_slot && !empty_slot &&
        (!InValueContext(line, i) || NamesNoValue(gmsg, gt))) {
      // Out of a value context only a compound name may change (com.apple.x, host-1.example):
      // a plain word, an identifier or a constant is an action or a state (spawn vs
      // destroy, ACTION_DOWN vs ACTION_UP, one function vs another), another message.
      // A word right after a number standing alone is its unit (B vs KB, sec vs secs), which
      // may change (NumberBeforeUnit: not after a field's number).
      const bool unit = i > 0 && NumberBeforeUnit(message, line.tokens[i - 1]) &&
                        NumberBeforeUnit(gmsg, g.token(i - 1));
      if (!unit && (!IsCompoundName(message, lt) || !IsCompoundName(gmsg, gt)))
        return Reject(MatchReason::kPlainWordOutOfContext, i);
      if (words_out_of_context == 0) out_of_context_at = i;
      ++words_out_of_context;
    }
    ++word_diffs;
    // The same change written again (a message that prints one value twice: `(www.a.test):
    // query: www.a.test`) is one value: it needs no more agreeing words than its first.
    if (first_diff < i && line.hashes[i] == line.hashes[first_diff] &&
        g.hash(i) == g.hash(first_diff)) {
      ++repeated_diffs;
      continue;
    }
    if (first_diff == n) first_diff = i;
    // A value by its kind is its own key: it needs the agreeing words a key's value needs.
    if (name_slot) ++named_diffs;
    // A value in an empty value's place needs what a value key's value needs: one agreeing
    // word more than the changes.
    if (empty_slot || KeyedByAgreeingWord(line, tmpl, i)) ++keyed_diffs;
  }
  // A word changed outside a value context is accepted only alone, in a long line whose
  // other words all agree.
  if (words_out_of_context > 0 && (words_out_of_context > 1 || anchors < kAnchorsForBareWord)) {
    return Reject(MatchReason::kWordOutOfContextUnsupported, out_of_context_at);
  }
  // A name in place of a value by its kind is keyed by that kind when it is the only word
  // that changed: two names changed in a short line (`mapred.task.id ... mapreduce.task.attempt.id`
  // / `mapred.job.id ... mapreduce.job.id`) are another message's.
  // (RuledOut counts every changed word: at most two, with one agreeing word more.)
  const int distinct_diffs = word_diffs - repeated_diffs;
  if (distinct_diffs == 1 && named_diffs == 1) keyed_diffs = 1;
  if (word_diffs > 2 || !Enough(anchors, distinct_diffs, keyed_diffs) ||
      (word_diffs > 0 && anchors < word_diffs + 1)) {
    return Reject(MatchReason::kTooFewAgreeingWords);
  }
  // A variable needs something fixed beside it: where every token would vary (a message that
  // is one name, `A::A` / `A::~A` / `B::~B`), nothing says the lines are one event.
  if (kept == 0 && n > 0) return Reject(MatchReason::kNothingKept);
  return {true, MatchReason::kFits, MatchResult::kNoPosition};
}

bool TemplateMatcher::KeysValue(const MatchLine& line, std::size_t i) const {
  if (i == 0 || line.tokens[i].cls != TokenClass::kWord) return false;
  const Token& key = line.tokens[i - 1];
  const std::size_t end = key.offset + key.length;
  return key.cls == TokenClass::kWord && line.tokens[i].offset == end + 1 &&
         line.message[end] == ' ' &&
         value_keys_.Contains(line.message.substr(key.offset, key.length));
}

// Is line token i (a changed word) the value of a value key that both sides have right before
// it, written the same way (`user bob` / `user alice`; not `address: 0x1` / `address space`)?
bool TemplateMatcher::KeyedByAgreeingWord(const MatchLine& line, const MatchTemplate& tmpl,
                                          std::size_t i) const {
  const GroupTokens& g = tmpl.tokens;
  if (i == 0 || (g.flags(i - 1) & kWild) || line.hashes[i - 1] != g.hash(i - 1)) return false;
  const Token& key = line.tokens[i - 1];
  if (key.cls != TokenClass::kWord ||
      !value_keys_.Contains(line.message.substr(key.offset, key.length))) {
    return false;
  }
  const auto gap = [](std::string_view message, Token before, Token after) {
    const std::size_t end = before.offset + before.length;
    return message.substr(end, after.offset - end);
  };
  return gap(line.message, key, line.tokens[i]) == gap(tmpl.message, g.token(i - 1), g.token(i));
}

// Is line token i, a word changed where one side is a protected word and the other a plain
// word, the value of a field both sides write the same way (`pool=closed` / `pool=files`,
// `subs=[closed]`), one whose values the stream has shown to be names? A field with one
// protected word among many names holds it as a name; two protected words (`method=GET` /
// `method=DELETE`) stay two events.
bool TemplateMatcher::NameFieldValue(const MatchLine& line, const MatchTemplate& tmpl,
                                     std::size_t i) const {
  const GroupTokens& g = tmpl.tokens;
  if (name_fields_ == nullptr || i == 0 || (g.flags(i - 1) & kWild) ||
      line.hashes[i - 1] != g.hash(i - 1)) {
    return false;
  }
  const Token& lt = line.tokens[i];
  const Token gt = g.token(i);
  if (lt.cls != TokenClass::kWord || gt.cls != TokenClass::kWord ||
      line.tokens[i - 1].cls != TokenClass::kWord) {
    return false;
  }
  const std::string_view gap = FieldValueGap(line.message, line.tokens[i - 1], lt);
  return !gap.empty() && gap == FieldValueGap(tmpl.message, g.token(i - 1), gt) &&
         !(IsProtected(line.message, lt) && IsProtected(tmpl.message, gt)) &&
         name_fields_->HoldsNames(line.hashes[i - 1]);
}

// RuledOut, its loops written once for lines without a learned name (nearly all: no test in
// them) and once for lines with one.
namespace {
template <bool kLearned>
bool RuledOutOf(const MatchLine& line, const GroupTokens& g) {
  const std::size_t n = line.tokens.size(), m = g.size();
  const std::span<const Token> tokens = line.tokens;
  const std::span<const std::uint64_t> hashes = line.hashes;
  if (m == n) {
    // Match: a non-wild position whose hashes differ with a plain word on either side is a
    // rejection or a changed word. It accepts at most 2 changed words, and then only with
    // changed + 1 agreeing ones (non-wild positions with the same word) at least: that many
    // when each change is a value key's value, 2 x changed + 1 otherwise.
    int changed = 0, agreeing = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (g.flags(i) & kWild) continue;
      if (hashes[i] == g.hash(i)) {
        // A learned name agrees as a word does (Match).
        agreeing += tokens[i].cls == TokenClass::kWord ||
                    (kLearned && IsLearnedName(tokens[i].cls, hashes[i]));
      } else if ((!IsVariableClass(tokens[i].cls) || !IsVariableClass(g.cls(i))) &&
                 !(kLearned && IsLearnedName(tokens[i].cls, hashes[i]) &&
                   line.IsValueWord(g.hash(i)))) {
        if (++changed > 2) return true;
      }
    }
    // A dash on both sides agrees as a word does: each of the line's may (more is safe).
    return changed > 0 && agreeing + static_cast<int>(line.dashes) < changed + 1;
  }
  if (m == 0 || n == 0 || (m > n ? m - n : n - m) > kMaxTokenCountChange) return false;
  // MatchAligned needs two aligned words: each a line word whose hash some non-wild template
  // position has.
  int words = 0;
  for (std::size_t j = 0; j < n; ++j) {
    // A learned name aligns as a word (MatchAligned).
    if ((tokens[j].cls != TokenClass::kWord &&
         !(kLearned && IsLearnedName(tokens[j].cls, hashes[j]))) ||
        !g.MayContain(hashes[j])) {
      continue;
    }
    for (std::size_t i = 0; i < m; ++i) {
      if (!(g.flags(i) & kWild) && g.hash(i) == hashes[j]) {
        if (++words == 2) return false;
        break;
      }
    }
  }
  return true;
}
}  // namespace

bool TemplateMatcher::RuledOut(const MatchLine& line, const GroupTokens& g) const {
  return line.learned ? RuledOutOf<true>(line, g) : RuledOutOf<false>(line, g);
}

bool TemplateMatcher::HoldsDnsWord(const MatchLine& line) {
  // Most first lines have no '.' after their header at all: one scan of the body says so.
  const std::string_view body = line.message.substr(std::min(line.body, line.message.size()));
  if (body.find('.') == std::string_view::npos) return false;
  for (const Token& t : line.tokens) {
    if (t.cls == TokenClass::kWord && t.length >= 5 && IsDnsWord(line.message, t)) return true;
  }
  return false;
}

bool TemplateMatcher::RejectsAnyChangeAt(const MatchLine& line, std::size_t i) const {
  if (i >= line.tokens.size()) return false;
  const Token& t = line.tokens[i];
  // Match's branch for a changed non-wild token, with every test that reads the template
  // decided by the line alone: a plain word is never the same variable as anything, a
  // host-port token after a host key could take its place, and a unit after two numbers may
  // change. (A template holding an empty value there is the exception, which the caller
  // checks: a word may take an empty value's place.)
  if (t.cls != TokenClass::kWord || IsCompoundName(line.message, t)) return false;
  if (i > 0) {
    const Token& prev = line.tokens[i - 1];
    if (NumberBeforeUnit(line.message, prev) ||
        IsHostKey(line.message.substr(prev.offset, prev.length))) {
      return false;
    }
  }
  return !InValueContext(line, i);
}

// Lines whose token counts differ a little: a variable that spans several tokens
// ("0 bytes" / "1190 bytes (1.16 KB)"). Aligns the line with the template on equal tokens
// (longest common subsequence, words weighing more than masked tokens); each unaligned
// stretch must hold a masked token or a position that already varied, and no protected
// word; the words inside stretches count as changed words.
MatchResult TemplateMatcher::MatchAligned(const MatchLine& line, const MatchTemplate& tmpl) {
  const GroupTokens& g = tmpl.tokens;
  const std::span<const Token> tokens = line.tokens;
  const std::span<const std::uint64_t> hashes = line.hashes;
  const std::size_t m = g.size(), n = tokens.size();
  if (m == 0 || n == 0 || (m > n ? m - n : n - m) > kMaxTokenCountChange)
    return Reject(MatchReason::kTokenCountsTooFar);
  const std::size_t w = n + 1;
  std::vector<std::uint16_t>& lcs = lcs_;
  lcs.assign((m + 1) * w, 0);
  auto match = [&](std::size_t i, std::size_t j) -> int {
    if ((g.flags(i) & kWild) || g.hash(i) != hashes[j]) return 0;
    // A learned name agrees as the word it was.
    return tokens[j].cls == TokenClass::kWord || IsLearnedName(tokens[j].cls, hashes[j]) ? 2 : 1;
  };
  for (std::size_t i = m; i-- > 0;) {
    for (std::size_t j = n; j-- > 0;) {
      const int mt = match(i, j);
      const std::uint16_t take = mt ? static_cast<std::uint16_t>(lcs[(i + 1) * w + j + 1] + mt) : 0;
      lcs[i * w + j] = std::max({take, lcs[(i + 1) * w + j], lcs[i * w + j + 1]});
    }
  }
  const std::string_view message = line.message;
  const std::string_view gmsg = tmpl.message;
  int anchors = 0;
  std::size_t i = 0, j = 0, seg_i = 0, seg_j = 0;
  MatchResult rejected;
  auto reject = [&](MatchReason reason) {
    rejected = Reject(reason, std::min(seg_j, n - 1));
    return false;
  };
  // Checks the stretch G[seg_i, i) / L[seg_j, j) and marks it. A stretch is one variable
  // written with a different number of tokens: it needs a masked token (or a position
  // that already varied), at most one plain word per side (a unit: "KB", "sec"), and no
  // protected word. Tokens present on one side only, at either end of the line, are
  // another message's extra field ("... user=alice"), not a variable.
  auto stretch = [&]() -> bool {
    if (seg_i == i && seg_j == j) return true;
    // A `name=value` field on one side only, among fields both sides have: an optional field
    // of one format string (`to=<a@b>, orig_to=<c@d>, relay=local`).
    if (seg_i == i && j - seg_j == 2 &&
        OptionalField(
            message, [&tokens](std::size_t k) { return tokens[k]; }, n, seg_j)) {
      marks_.push_back({static_cast<std::uint32_t>(seg_i - 1), kGapAfter});
      return true;
    }
    if (seg_j == j && i - seg_i == 2 &&
        OptionalField(
            gmsg, [&g](std::size_t k) { return g.token(k); }, m, seg_i)) {
      for (std::size_t k = seg_i; k < i; ++k) {
        marks_.push_back(
            {static_cast<std::uint32_t>(k), static_cast<std::uint8_t>(kVaried | kWild)});
      }
      return true;
    }
    if ((seg_i == i || seg_j == j) && (seg_j == 0 || j == n))
      return reject(MatchReason::kExtraTokensAtEnd);
    bool evidence = false, g_value = false, l_value = false, g_size = false, l_size = false;
    int g_words = 0, l_words = 0;
    for (std::size_t k = seg_i; k < i; ++k) {
      const Token gt = g.token(k);
      if ((g.flags(k) & kWild) || IsVariableClass(gt.cls)) {
        evidence = g_value = true;
        g_size |= !(g.flags(k) & kWild) && IsSizeWithUnit(gmsg, gt);
      } else {
        if (IsProtected(gmsg, gt) || QuotedProgramText(gmsg, gt))
          return reject(MatchReason::kProtectedWordDiffers);
        if (NamesField(gmsg, gt)) return reject(MatchReason::kFieldNameDiffers);
        ++g_words;
      }
      marks_.push_back({static_cast<std::uint32_t>(k), static_cast<std::uint8_t>(kVaried | kWild)});
    }
    for (std::size_t k = seg_j; k < j; ++k) {
      const Token& lt = tokens[k];
      if (IsVariableClass(lt.cls)) {
        evidence = l_value = true;
        l_size |= IsSizeWithUnit(message, lt);
      } else {
        if (IsProtected(message, lt) || QuotedProgramText(message, lt))
          return reject(MatchReason::kProtectedWordDiffers);
        // A field's name (a word before '=') is another format's field, never part of a
        // value written in more tokens (`samples, mean = 1280.0 (flags = 0x1)`).
        if (NamesField(message, lt)) return reject(MatchReason::kFieldNameDiffers);
        ++l_words;
      }
    }
    // An empty value and the words filling the same pair of brackets or quotes on the other
    // side are one value ("()" and "(a b)"), however many words.
    const bool bracketed =
        (g_words > 1 || l_words > 1) &&
        ((i - seg_i == 1 && g.cls(seg_i) == TokenClass::kEmpty) ||
         (j - seg_j == 1 && tokens[seg_j].cls == TokenClass::kEmpty)) &&
        Bracketed(
            gmsg, [&g](std::size_t k) { return g.token(k); }, m, seg_i, i) &&
        Bracketed(
            message, [&tokens](std::size_t k) { return tokens[k]; }, n, seg_j, j);
    // The text after a key's '=' up to the next white space is one value on both sides
    // (cmd=ping and cmd=client|kill), however many pieces it is written in.
    const bool keyed = seg_i < i && seg_j < j &&
                       KeyedValue(
                           gmsg, [&g](std::size_t k) { return g.token(k); }, m, seg_i, i) &&
                       KeyedValue(
                           message, [&tokens](std::size_t k) { return tokens[k]; }, n, seg_j, j);
    // A field printed empty leaves its separators side by side (`on  using` / `on shop using`):
    // nothing on one side, one word on the other, and the empty side's gap is exactly the
    // word's two gaps joined.
    const auto gap = [](std::string_view msg, Token before, Token after) {
      const std::size_t end = before.offset + before.length;
      return msg.substr(end, after.offset - end);
    };
    const auto joined = [](std::string_view whole, std::string_view a, std::string_view b) {
      return whole.size() == a.size() + b.size() && whole.substr(0, a.size()) == a &&
             whole.substr(a.size()) == b;
    };
    // Not inside a bracket glued to a word, which qualifies it (`SIGTERM[soft,]` /
    // `SIGTERM[soft,delayed-exit]`: another qualifier, as `query[A]` / `query[MX]`).
    const auto qualifier = [](std::string_view msg, Token t) {
      const std::size_t open = msg.find_last_of("[] ", t.offset);
      return open != std::string_view::npos && open > 0 && msg[open] == '[' &&
             std::isalnum(static_cast<unsigned char>(msg[open - 1]));
    };
    const bool empty_field = seg_i > 0 && seg_j > 0 && i < m && j < n &&
                             ((seg_i == i && j - seg_j == 1 && l_words == 1 &&
                               joined(gap(gmsg, g.token(seg_i - 1), g.token(i)),
                                      gap(message, tokens[seg_j - 1], tokens[seg_j]),
                                      gap(message, tokens[seg_j], tokens[j])) &&
                               !qualifier(message, tokens[seg_j])) ||
                              (seg_j == j && i - seg_i == 1 && g_words == 1 &&
                               joined(gap(message, tokens[seg_j - 1], tokens[j]),
                                      gap(gmsg, g.token(seg_i - 1), g.token(seg_i)),
                                      gap(gmsg, g.token(seg_i), g.token(i))) &&
                               !qualifier(gmsg, g.token(seg_i))));
    // A size with its unit facing a word on the other side: that word is the unit of another
    // quantity (`1.00 MiB` / `3 pages`), not a part of the size.
    if ((g_size && l_words > 0) || (l_size && g_words > 0))
      return reject(MatchReason::kPlainWordOutOfContext);
    if ((!evidence && !keyed && !empty_field) ||
        (!bracketed && !keyed && (g_words > 1 || l_words > 1)))
      return reject(MatchReason::kStretchWithoutVariable);
    // Words in place of words, one side without a value ("AVX512 instructions" / "io_uring"):
    // another clause, not one value written in more tokens.
    if (!bracketed && !keyed && g_words > 0 && l_words > 0 && !(g_value && l_value))
      return reject(MatchReason::kStretchWithoutVariable);
    // As many tokens on each side are tokens that changed in place, not a value written in
    // more tokens (the count differs elsewhere in the line): a plain word that changed there
    // is judged as on lines of equal token counts ("B HTTPS" / "B SOCKS5" after an extra
    // leading token is still another message).
    if (!bracketed && !keyed && i - seg_i == j - seg_j) {
      for (std::size_t k = 0; k < i - seg_i; ++k) {
        const std::size_t gi = seg_i + k, lj = seg_j + k;
        const Token gt = g.token(gi);
        const Token& lt = tokens[lj];
        if ((g.flags(gi) & kWild) || g.hash(gi) == hashes[lj] ||
            (gt.cls != TokenClass::kWord && lt.cls != TokenClass::kWord) ||
            gt.cls == TokenClass::kEmpty || lt.cls == TokenClass::kEmpty) {
          continue;
        }
        const NamePlace place = PlaceOf(message, lt, hashes[lj], gmsg, gt, g.hash(gi));
        const bool host_slot =
            ((IsHostToken(message, lt, hashes[lj]) != IsHostToken(gmsg, gt, g.hash(gi)) ||
              (lt.cls == TokenClass::kWord && gt.cls == TokenClass::kWord)) &&
             lj > 0 && IsHostKey(message.substr(tokens[lj - 1].offset, tokens[lj - 1].length)) &&
             (IsHostToken(message, lt, hashes[lj]) != IsHostToken(gmsg, gt, g.hash(gi)) ||
              (IsPeerName(message, lt) && IsPeerName(gmsg, gt)))) ||
            place.hosts;
        const bool unit = lj > 0 && gi > 0 && NumberBeforeUnit(message, tokens[lj - 1]) &&
                          NumberBeforeUnit(gmsg, g.token(gi - 1));
        if (!host_slot && !unit && !place.names && !InValueContext(line, lj) &&
            (!IsCompoundName(message, lt) || !IsCompoundName(gmsg, gt))) {
          rejected = Reject(MatchReason::kPlainWordOutOfContext, lj);
          return false;
        }
      }
    }
    if (seg_i == i) {  // the line has extra tokens where the template has none
      marks_.push_back({static_cast<std::uint32_t>(seg_i - 1), kGapAfter});
    }
    return true;
  };
  while (i < m && j < n) {
    const int mt = match(i, j);
    if (mt && lcs[i * w + j] == lcs[(i + 1) * w + j + 1] + mt) {
      if (!stretch()) return rejected;
      if (mt == 2) {
        ++anchors;
      } else if (const Token gt = g.token(i); message.substr(tokens[j].offset, tokens[j].length) !=
                                              gmsg.substr(gt.offset, gt.length)) {
        marks_.push_back({static_cast<std::uint32_t>(i), kVaried});
      }
      ++i, ++j;
      seg_i = i, seg_j = j;
    } else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  i = m, j = n;
  if (!stretch()) return rejected;
  if (anchors < 2) return Reject(MatchReason::kTooFewAligned);
  return {true, MatchReason::kFitsAligned, MatchResult::kNoPosition};
}

void TemplateMatcher::MarkDifferences(const MatchLine& line, const MatchTemplate& tmpl) {
  marks_.clear();
  const GroupTokens& g = tmpl.tokens;
  const std::size_t n = std::min(line.tokens.size(), g.size());
  for (std::size_t i = 0; i < n; ++i) {
    const Token& lt = line.tokens[i];
    const Token gt = g.token(i);
    if (line.message.substr(lt.offset, lt.length) != tmpl.message.substr(gt.offset, gt.length)) {
      marks_.push_back(
          {static_cast<std::uint32_t>(i),
           line.hashes[i] != g.hash(i) ? static_cast<std::uint8_t>(kVaried | kWild) : kVaried});
    }
  }
}

}  // namespace logfold
