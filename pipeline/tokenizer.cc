// Tokenizer implementation: one pass splits the message and collects each token's byte
// shapes, which rule out most class tests before they run. No regex, no allocation beyond
// the caller's reused vector.
#include "pipeline/tokenizer.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>

namespace logfold {
namespace {

constexpr std::array<std::uint32_t, 256> MakeByteShapeTable() {
  std::array<std::uint32_t, 256> t{};
  const auto set_range = [&t](char lo, char hi, std::uint32_t shape) {
    for (int c = lo; c <= hi; ++c) t[static_cast<std::size_t>(c)] = shape;
  };
  set_range('\0', '\x7f', kShapeOther);
  for (std::size_t c = 0x80; c < 256; ++c) t[c] = kShapeOther;
  set_range('a', 'z', kShapeLetter);
  set_range('A', 'Z', kShapeLetter);
  set_range('a', 'f', kShapeHexLetter);
  set_range('A', 'F', kShapeHexLetter);
  set_range('0', '9', kShapeDigit);
  struct Single {
    char c;
    std::uint32_t shape;
  };
  for (Single s : {Single{'T', kShapeLetterTZ}, Single{'Z', kShapeLetterTZ},
                   Single{'x', kShapeLetterX}, Single{'X', kShapeLetterX}, Single{'.', kShapeDot},
                   Single{':', kShapeColon}, Single{'-', kShapeDash}, Single{'/', kShapeSlash},
                   Single{'@', kShapeAt}, Single{'+', kShapePlus}}) {
    t[static_cast<unsigned char>(s.c)] = s.shape;
  }
  for (char c : kTokenSeparators) t[static_cast<unsigned char>(c)] = kShapeSeparator;
  return t;
}
constexpr std::array<std::uint32_t, 256> kByteShape = MakeByteShapeTable();

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// A table, not a chain of range tests: in ids and UUIDs digits and letters alternate at
// random, and each `||` was a mispredicted branch.
constexpr std::array<bool, 256> MakeHexDigitTable() {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = true;
  for (int c = 'a'; c <= 'f'; ++c) t[static_cast<std::size_t>(c)] = true;
  for (int c = 'A'; c <= 'F'; ++c) t[static_cast<std::size_t>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kHexDigit = MakeHexDigitTable();
inline bool IsHexDigit(char c) { return kHexDigit[static_cast<unsigned char>(c)]; }
inline bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Punctuation that ends a sentence or introduces a value; not part of the word before it.
inline bool IsTrailingPunct(char c) { return c == ':' || c == '.' || c == '!' || c == '?'; }

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

bool AllHex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsHexDigit(c)) return false;
  }
  return true;
}

bool IsInteger(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return AllDigits(s);
}

bool IsFloat(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  std::size_t i = 0, int_digits = 0, frac_digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (i == s.size() || !IsDigit(s[i])) return false;
    while (i < s.size() && IsDigit(s[i])) ++i;
    return i == s.size();
  }
  return i == s.size() && frac_digits > 0;
}

// a.b.c.d with each part 0..255 (1-3 digits), optionally :port (1-5 digits). One pass, no
// searching: IP addresses are among the commonest variables.
bool IsIPv4(std::string_view s) {
  const std::size_t n = s.size();
  std::size_t i = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (i == n || s[i] != '.') return false;
      ++i;
    }
    const std::size_t start = i;
    int v = 0;
    while (i < n && i - start < 3 && IsDigit(s[i])) v = v * 10 + (s[i++] - '0');
    if (i == start || v > 255) return false;
  }
  if (i == n) return true;
  if (s[i] != ':') return false;
  const std::string_view port = s.substr(i + 1);
  return port.size() <= 5 && AllDigits(port);
}

bool IsIPv6(std::string_view s) {
  if (!s.empty() && s.front() == '[') {
    std::size_t close = s.find(']');
    if (close == std::string_view::npos) return false;
    std::string_view rest = s.substr(close + 1);
    if (!rest.empty() && !(rest[0] == ':' && AllDigits(rest.substr(1)))) return false;
    s = s.substr(1, close - 1);
  }
  if (std::size_t pct = s.find('%'); pct != std::string_view::npos) s = s.substr(0, pct);
  int colons = 0;
  bool double_colon = s.find("::") != std::string_view::npos;
  for (char c : s) {
    if (c == ':') {
      ++colons;
    } else if (!IsHexDigit(c) && c != '.') {
      return false;
    }
  }
  return colons >= 2 && (double_colon || colons == 7);
}

bool IsMac(std::string_view s) {
  if (s.size() != 17) return false;
  char sep = s[2];
  if (sep != ':' && sep != '-') return false;
  for (std::size_t i = 0; i < 17; ++i) {
    if (i % 3 == 2) {
      if (s[i] != sep) return false;
    } else if (!IsHexDigit(s[i])) {
      return false;
    }
  }
  return true;
}

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!IsHexDigit(s[i])) {
      return false;
    }
  }
  return true;
}

// Dates and times: only digits and date/time punctuation, with the shape of a date (two
// dashes or slashes) or a time (a colon), e.g. 2024-03-01, 12:34:56.789, 2024-03-01T10:00:00Z.
bool IsDateTime(std::string_view s) {
  int digits = 0, colons = 0, dashes = 0, slashes = 0;
  for (char c : s) {
    if (IsDigit(c)) {
      ++digits;
    } else if (c == ':') {
      ++colons;
    } else if (c == '-') {
      ++dashes;
    } else if (c == '/') {
      ++slashes;
    } else if (c != '.' && c != 'T' && c != 'Z' && c != '+' && c != ',') {
      return false;
    }
  }
  if (digits < 3 || !IsDigit(s.front())) return false;
  return colons >= 1 || dashes == 2 || slashes == 2;
}

bool IsHostPort(std::string_view s) {
  std::size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view port = s.substr(colon + 1);
  if (port.empty() || port.size() > 5 || !AllDigits(port)) return false;
  bool letter = false;
  for (char c : s.substr(0, colon)) {
    if (IsAlpha(c)) {
      letter = true;
    } else if (!IsDigit(c) && c != '.' && c != '-' && c != '_') {
      return false;
    }
  }
  return letter;
}

// Does `w` equal `lower` (lower-case letters) ignoring case?
bool EqualsIgnoringCase(std::string_view w, std::string_view lower) {
  if (w.size() != lower.size()) return false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if ((w[i] | 0x20) != lower[i]) return false;
  }
  return true;
}

}  // namespace

bool IsLiteralWord(std::string_view w) {
  switch (w.size()) {
    case 3:
      return EqualsIgnoringCase(w, "nil");
    case 4:
      return EqualsIgnoringCase(w, "true") || EqualsIgnoringCase(w, "null") ||
             EqualsIgnoringCase(w, "none");
    case 5:
      return EqualsIgnoringCase(w, "false");
    default:
      return false;
  }
}

namespace {

// The full names of the months, then of the weekdays.
constexpr std::string_view kDateNames[] = {
    "january",   "february",  "march",   "april",    "may",      "june",   "july",
    "august",    "september", "october", "november", "december", "monday", "tuesday",
    "wednesday", "thursday",  "friday",  "saturday", "sunday"};
constexpr int kMonths = 12;

constexpr std::uint32_t Key3(char a, char b, char c) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(a | 0x20)) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b | 0x20)) << 8 |
         static_cast<unsigned char>(c | 0x20);
}

// The index in kDateNames of the month or weekday `w` names (its first three letters or its
// full name, in any case); -1 if none. One switch on the first three letters: date names are
// looked up for many words that are not.
int DateNameIndex(std::string_view w) {
  if (w.size() < 3 || w.size() > 9) return -1;
  int index;
  switch (Key3(w[0], w[1], w[2])) {
    case Key3('j', 'a', 'n'):
      index = 0;
      break;
    case Key3('f', 'e', 'b'):
      index = 1;
      break;
    case Key3('m', 'a', 'r'):
      index = 2;
      break;
    case Key3('a', 'p', 'r'):
      index = 3;
      break;
    case Key3('m', 'a', 'y'):
      index = 4;
      break;
    case Key3('j', 'u', 'n'):
      index = 5;
      break;
    case Key3('j', 'u', 'l'):
      index = 6;
      break;
    case Key3('a', 'u', 'g'):
      index = 7;
      break;
    case Key3('s', 'e', 'p'):
      index = 8;
      break;
    case Key3('o', 'c', 't'):
      index = 9;
      break;
    case Key3('n', 'o', 'v'):
      index = 10;
      break;
    case Key3('d', 'e', 'c'):
      index = 11;
      break;
    case Key3('m', 'o', 'n'):
      index = 12;
      break;
    case Key3('t', 'u', 'e'):
      index = 13;
      break;
    case Key3('w', 'e', 'd'):
      index = 14;
      break;
    case Key3('t', 'h', 'u'):
      index = 15;
      break;
    case Key3('f', 'r', 'i'):
      index = 16;
      break;
    case Key3('s', 'a', 't'):
      index = 17;
      break;
    case Key3('s', 'u', 'n'):
      index = 18;
      break;
    default:
      return -1;
  }
  return w.size() == 3 || EqualsIgnoringCase(w, kDateNames[index]) ? index : -1;
}

}  // namespace

bool IsMonthName(std::string_view w) {
  const int index = DateNameIndex(w);
  return index >= 0 && index < kMonths;
}

bool IsDateName(std::string_view w) {
  return !w.empty() && w[0] >= 'A' && w[0] <= 'Z' && DateNameIndex(w) >= 0;
}

namespace {

// name:literal in one token (overlap:true): a literal after the last ':' of a non-empty key.
bool IsKeyedLiteral(std::string_view s) {
  const std::size_t colon = s.rfind(':');
  return colon != std::string_view::npos && colon > 0 && IsLiteralWord(s.substr(colon + 1));
}

// A date written with its month's name: 12-Jun-2005, 12/Jun/2005:13:10:01. Digits and date
// punctuation around exactly one run of letters, a month name set off by '-' or '/'.
bool IsNamedDate(std::string_view s) {
  std::size_t first = 0;
  while (first < s.size() && !IsAlpha(s[first])) ++first;
  if (first == s.size()) return false;
  std::size_t last = first;
  while (last < s.size() && IsAlpha(s[last])) ++last;
  const auto date_punct = [](char c) { return c == '-' || c == '/'; };
  if ((first > 0 && !date_punct(s[first - 1])) || (last < s.size() && !date_punct(s[last]))) {
    return false;
  }
  if (!IsMonthName(s.substr(first, last - first))) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i >= first && i < last) continue;
    const char c = s[i];
    if (!IsDigit(c) && c != '-' && c != '/' && c != ':' && c != '.' && c != '+') return false;
  }
  return true;
}

// An opaque base64 id (a key fingerprint, a hash, a session token), after an optional
// "name:" prefix: 16 or more characters of the base64 alphabet holding an upper-case letter,
// a lower-case letter and a digit, and switching between those kinds (or '+' '/') at 40 % or
// more of its characters, as random text does and names (Http2ServerHandler) do not.
// One in twelve random ids of 16 characters holds no digit: '+' or '/' and two capitals in a
// row then take its place (qnFuwFZhXLl/AAAB), which names in parts written in capitalised
// words (HighMem/MovableOnly) do not have. (ClassifyImpl asks this of ids holding a '/'.)
bool IsBase64Id(std::string_view s) {
  if (const std::size_t colon = s.rfind(':'); colon != std::string_view::npos) {
    for (std::size_t i = 0; i < colon; ++i) {
      if (!IsAlpha(s[i]) && !IsDigit(s[i])) return false;  // a name: SHA256, key
    }
    s.remove_prefix(colon + 1);
  }
  if (s.size() < 16 || s[0] == '/') return false;
  int seen = 0, prev = -1;
  std::size_t switches = 0;
  bool capitals = false;  // two in a row
  for (char c : s) {
    int kind;
    if (c >= 'A' && c <= 'Z') {
      kind = 0;
    } else if (c >= 'a' && c <= 'z') {
      kind = 1;
    } else if (IsDigit(c)) {
      kind = 2;
    } else if (c == '+' || c == '/') {
      kind = 3;
    } else {
      return false;
    }
    seen |= 1 << kind;
    switches += prev >= 0 && kind != prev;
    capitals |= kind == 0 && prev == 0;
    prev = kind;
  }
  const bool digit_or_its_stand_in = (seen & 4) != 0 || ((seen & 8) != 0 && capitals);
  return (seen & 3) == 3 && digit_or_its_stand_in && 5 * switches >= 2 * s.size();
}

// A DNS name holding a digit: three or more dot-separated labels of letters, digits and '-'
// (not at a label's ends), the last 2-12 lower-case letters (host-82-1.example.net,
// dsl.static-81-22.kpn.nl). Java class names end in an upper-case name; versions in digits.
bool IsDnsName(std::string_view s) {
  // The last label is all lower-case letters: most dotted tokens (versions, numbers) end in
  // a digit and need no label walk.
  if (s.empty() || s.back() < 'a' || s.back() > 'z') return false;
  int labels = 0;
  std::size_t start = 0;
  for (;;) {
    std::size_t dot = s.find('.', start);
    const std::string_view label = s.substr(start, dot == s.npos ? s.npos : dot - start);
    if (label.empty() || label.front() == '-' || label.back() == '-') return false;
    ++labels;
    if (dot == s.npos) {
      if (labels < 3 || label.size() < 2 || label.size() > 12) return false;
      for (char c : label) {
        if (c < 'a' || c > 'z') return false;
      }
      return true;
    }
    for (char c : label) {
      if (!IsAlpha(c) && !IsDigit(c) && c != '-') return false;
    }
    start = dot + 1;
  }
}

// A host name of one label after an address's '@' (root@vm, postfix@localhost): a letter,
// then letters, digits and '-'. Not all hex with a digit: `Object@1a2b3c` is an object's hash.
bool IsHostLabel(std::string_view s) {
  if (s.empty() || !IsAlpha(s.front()) || s.back() == '-') return false;
  bool digit = false;
  for (char c : s) {
    if (!IsAlpha(c) && !IsDigit(c) && c != '-') return false;
    digit |= IsDigit(c);
  }
  return !(digit && AllHex(s));
}

// A media type: one of the standard top-level types (RFC 6838 and its registry), '/', and a
// subtype of lower-case letters, digits and . + - (text/css, application/vnd.api+json).
bool IsMediaType(std::string_view s) {
  const std::size_t slash = s.find('/');
  if (slash == std::string_view::npos || slash + 1 == s.size()) return false;
  static constexpr std::string_view kTypes[] = {
      "application", "audio", "font", "image", "message", "model", "multipart", "text", "video"};
  const std::string_view type = s.substr(0, slash);
  if (std::find(std::begin(kTypes), std::end(kTypes), type) == std::end(kTypes)) return false;
  for (char c : s.substr(slash + 1)) {
    if (!((c >= 'a' && c <= 'z') || IsDigit(c) || c == '.' || c == '+' || c == '-')) return false;
  }
  return true;
}

// An RPC method's full name: '/', a service qualified in two or more dotted parts (letters,
// digits and '_', each beginning with a letter or '_'), its last part capitalised, '/' and a
// method name beginning with a capital (/etcdserverpb.KV/Range, /grpc.health.v1.Health/Check):
// gRPC's way of naming the operation a request called.
bool IsMethodPath(std::string_view s) {
  const std::size_t slash = s.find('/', 1);
  if (s.size() < 5 || s[0] != '/' || slash == std::string_view::npos || slash + 1 >= s.size()) {
    return false;
  }
  const auto ident = [](char c) { return IsAlpha(c) || IsDigit(c) || c == '_'; };
  const auto capital = [](char c) { return c >= 'A' && c <= 'Z'; };
  std::size_t parts = 0;
  bool last_capital = false;
  for (std::size_t i = 1, begin = 1; i <= slash; ++i) {
    if (i < slash && s[i] != '.') {
      if (!ident(s[i])) return false;
      continue;
    }
    if (i == begin || IsDigit(s[begin])) return false;  // an empty or numeric part
    last_capital = capital(s[begin]);
    ++parts;
    begin = i + 1;
  }
  if (parts < 2 || !last_capital || !capital(s[slash + 1])) return false;
  for (char c : s.substr(slash + 2)) {
    if (!ident(c)) return false;
  }
  return true;
}

// A name in capitals (a capital, then capitals, digits and '_'; two or more characters), a
// '/' and three digits: TCP_MISS/200, NONE_NONE/000.
bool IsNameWithCode(std::string_view s) {
  const std::size_t slash = s.size() - 4;
  if (s.size() < 6 || s[slash] != '/' || !AllDigits(s.substr(slash + 1))) return false;
  if (s[0] < 'A' || s[0] > 'Z') return false;
  for (std::size_t i = 1; i < slash; ++i) {
    const char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_')) return false;
  }
  return true;
}

// An object identifier: numbers joined by single '.', six parts or more, the first 0, 1 or
// 2 (1.3.6.1.4.1.4203.1.11.1, 2.5.4.3): a registered name of a kind of thing (an operation,
// an attribute, an algorithm), the ITU's way of naming one, never an address or a version.
bool IsObjectId(std::string_view s) {
  if (s.size() < 11 || s[0] < '0' || s[0] > '2' || s[1] != '.') return false;
  std::size_t parts = 1;
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '.') {
      if (s[i - 1] == '.' || i + 1 == s.size()) return false;
      ++parts;
    } else if (!IsDigit(s[i])) {
      return false;
    }
  }
  return parts >= 6;
}

}  // namespace

std::string_view TokenClassName(TokenClass cls) {
  switch (cls) {
    case TokenClass::kWord:
      return "word";
    case TokenClass::kInteger:
      return "int";
    case TokenClass::kFloat:
      return "float";
    case TokenClass::kHex:
      return "hex";
    case TokenClass::kIPv4:
      return "ipv4";
    case TokenClass::kIPv6:
      return "ipv6";
    case TokenClass::kMac:
      return "mac";
    case TokenClass::kUuid:
      return "uuid";
    case TokenClass::kDateTime:
      return "datetime";
    case TokenClass::kPath:
      return "path";
    case TokenClass::kUrl:
      return "url";
    case TokenClass::kEmail:
      return "email";
    case TokenClass::kHostPort:
      return "hostport";
    case TokenClass::kDigitWord:
      return "digitword";
    case TokenClass::kLiteral:
      return "literal";
    case TokenClass::kEmpty:
      return "empty";
    case TokenClass::kCount_:
      break;
  }
  return "?";
}

namespace {

// The class tests in their defining order. With kGuarded, a test runs only when the token's
// shape allows it to succeed; unguarded every test runs (the reference the guards must match).
// `shape` must be exact for kShapeDigit in both cases.
template <bool kGuarded>
TokenClass ClassifyImpl(std::string_view t, std::uint32_t shape) {
  if (t.empty()) return TokenClass::kWord;
  const auto only = [shape](std::uint32_t allowed) { return !kGuarded || (shape & ~allowed) == 0; };
  const auto has = [shape](std::uint32_t bits) { return !kGuarded || (shape & bits) == bits; };
  constexpr std::uint32_t kLetters =
      kShapeHexLetter | kShapeLetterTZ | kShapeLetterX | kShapeLetter;
  if (has(kShapeColon | kShapeSlash) && t.find("://") != t.npos) {
    return TokenClass::kUrl;
  }
  if (has(kShapeAt)) {
    const std::size_t at = t.find('@');
    if (at != t.npos && at > 0 && t.find('/') == t.npos &&
        (t.find('.', at) != t.npos || IsHostLabel(t.substr(at + 1)))) {
      return TokenClass::kEmail;
    }
  }
  if (has(kShapeColon) && IsKeyedLiteral(t)) return TokenClass::kLiteral;
  // A word beginning with '/' is a path, digits or not (/health, /usr/sbin/cron, a request
  // target): it names a file or a resource, which varies.
  if (!(shape & kShapeDigit)) {
    // Not an RPC method's name (/etcdserverpb.KV/Put): the operation called, an enumeration's
    // value, so a word (protected: TemplateMatcher::IsProtectedWord).
    if (t.front() == '/')
      return has(kShapeDot) && IsMethodPath(t) ? TokenClass::kWord : TokenClass::kPath;
    // An opaque id may hold no digit (IsBase64Id), when a '/' stands in for it: a token with
    // no digit, '/', ':' or '@' never gets here (the tokenizer's plain-word fast path).
    if (has(kShapeSlash) && only(kLetters | kShapeSlash | kShapePlus) && t.size() >= 16 &&
        t.find('/') != t.npos && IsBase64Id(t)) {
      return TokenClass::kHex;
    }
    // A media type (text/css, application/json) names a resource's kind, a value as a path is.
    return has(kShapeSlash) && IsMediaType(t) ? TokenClass::kPath : TokenClass::kWord;
  }
  if (only(kShapeDigit | kShapeDash | kShapePlus) && IsInteger(t)) return TokenClass::kInteger;
  if (only(kShapeDigit | kShapeHexLetter | kShapeDash) && IsUuid(t)) return TokenClass::kUuid;
  if (only(kShapeDigit | kShapeHexLetter | kShapeColon | kShapeDash) && IsMac(t)) {
    return TokenClass::kMac;
  }
  if (only(kShapeDigit | kShapeDot | kShapeColon) && IsIPv4(t)) return TokenClass::kIPv4;
  if (only(kShapeDigit | kShapeDot | kShapeDash | kShapePlus | kShapeHexLetter) && IsFloat(t)) {
    return TokenClass::kFloat;
  }
  // ',' is a separator, so only a caller classifying arbitrary text can pass one here.
  if (only(kShapeDigit | kShapeColon | kShapeDash | kShapeSlash | kShapeDot | kShapeLetterTZ |
           kShapePlus | kShapeSeparator) &&
      IsDateTime(t)) {
    return TokenClass::kDateTime;
  }
  if (has(kShapeColon) && IsIPv6(t)) return TokenClass::kIPv6;
  if (has(kShapeLetterX) && t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') &&
      AllHex(t.substr(2))) {
    return TokenClass::kHex;
  }
  if (only(kShapeDigit | kShapeHexLetter) && t.size() >= 8 && AllHex(t)) return TokenClass::kHex;
  // A named date has a '-' or '/' next to its month (12-Jun-2005).
  if (only(kShapeDigit | kLetters | kShapeDash | kShapeSlash | kShapeColon | kShapeDot |
           kShapePlus) &&
      (!kGuarded || (shape & (kShapeDash | kShapeSlash)) != 0) && t.size() >= 5 && IsNamedDate(t)) {
    return TokenClass::kDateTime;
  }
  if (only(kShapeDigit | kLetters | kShapeSlash | kShapePlus | kShapeColon) && t.size() >= 16 &&
      IsBase64Id(t)) {
    return TokenClass::kHex;
  }
  if (only(kShapeDigit | kLetters | kShapeDash | kShapeDot) && has(kShapeDot) && IsDnsName(t)) {
    return TokenClass::kHostPort;
  }
  // A name in capitals glued to a three-digit code (TCP_MISS/200, TCP_DENIED/403) is a kind
  // of outcome with its status, both enumerations: a word, not a path.
  if (only(kShapeDigit | kLetters | kShapeSlash | kShapeOther) && has(kShapeSlash) &&
      IsNameWithCode(t)) {
    return TokenClass::kWord;
  }
  if (only(kShapeDigit | kLetters | kShapeSlash | kShapeDot | kShapeOther) && has(kShapeDot) &&
      t.front() == '/' && IsMethodPath(t)) {
    return TokenClass::kWord;
  }
  if (t.front() == '~' || (has(kShapeSlash) && t.find('/') != t.npos)) {
    return TokenClass::kPath;
  }
  if (has(kShapeColon) && IsHostPort(t)) return TokenClass::kHostPort;
  if (only(kShapeDigit | kShapeDot) && IsObjectId(t)) return TokenClass::kWord;
  return TokenClass::kDigitWord;
}

}  // namespace

TokenClass ClassifyWithShape(std::string_view t, std::uint32_t shape) {
  return ClassifyImpl<true>(t, shape);
}

TokenClass ClassifyUnguarded(std::string_view t) { return ClassifyImpl<false>(t, ShapeOf(t)); }

std::uint32_t ShapeOf(std::string_view t) {
  std::uint32_t shape = 0;
  for (char c : t) shape |= kByteShape[static_cast<unsigned char>(c)];
  return shape;
}

TokenClass Tokenizer::Classify(std::string_view t) { return ClassifyWithShape(t, ShapeOf(t)); }

namespace {

// The closer of each opening bracket or quote; 0 for other bytes.
constexpr std::array<char, 256> MakeEmptyPairCloser() {
  std::array<char, 256> t{};
  t['('] = ')';
  t['['] = ']';
  t['{'] = '}';
  t['"'] = '"';
  t['\''] = '\'';
  return t;
}
constexpr std::array<char, 256> kEmptyPairCloser = MakeEmptyPairCloser();

// Empty values in the separator run [from, to) of `message`: an empty bracket or quote pair,
// or a '=' right after a token (the run starts at a token's end) followed by white space,
// ',', ';' or the message's end. Each is a zero-length kEmpty token where its value would be.
void AddEmptyValues(std::string_view message, std::size_t from, std::size_t to,
                    std::size_t max_tokens, std::vector<Token>& out) {
  const auto add = [&out, max_tokens](std::size_t at) {
    if (out.size() < max_tokens) {
      out.push_back(Token{static_cast<std::uint32_t>(at), 0, TokenClass::kEmpty});
    }
  };
  if (message[from] == '=' && from > 0) {
    const char next = from + 1 < to ? message[from + 1] : '\0';
    if ((from + 1 == to && to == message.size()) || next == ' ' || next == '\t' || next == ',' ||
        next == ';') {
      add(from + 1);
    }
  }
  for (std::size_t p = from; p + 1 < to; ++p) {
    const char closer = kEmptyPairCloser[static_cast<unsigned char>(message[p])];
    if (closer != 0 && message[p + 1] == closer) {
      add(p + 1);
      ++p;
    }
  }
}

// Only spaces and commas in message[from, to)?
bool OnlySpacesAndCommas(std::string_view message, std::size_t from, std::size_t to) {
  for (std::size_t p = from; p < to; ++p) {
    if (message[p] != ' ' && message[p] != ',') return false;
  }
  return true;
}

// An HTTP status: three digits, 100 to 599.
bool IsHttpStatus(std::string_view s) {
  return s.size() == 3 && s[0] >= '1' && s[0] <= '5' && IsDigit(s[1]) && IsDigit(s[2]);
}

// A line holding an HTTP request whose status the request line does not precede (HAProxy
// writes `... 0/0/0/63/63 200 1602 ... "GET /a HTTP/1.1"`): the status is the first integer
// of a status's shape standing alone (white space on both sides) outside the quoted request
// (a pid or a size before it, of other lengths, does not hide it). `protocol` is the index in `out`
// of the request's protocol token (HTTP/...), which must close a double-quoted text. An
// enumeration, so a word; nothing changes when the request line is followed by its status (the
// context rule found it) or lacks its quotes.
[[gnu::noinline, gnu::cold]] void MarkStatusOutsideRequest(std::string_view message,
                                                           std::vector<Token>& out,
                                                           std::size_t protocol) {
  const Token& p = out[protocol];
  const std::size_t protocol_end = p.offset + p.length;
  const std::size_t open = message.rfind('"', p.offset);
  if (protocol_end >= message.size() || message[protocol_end] != '"' ||
      open == std::string_view::npos) {
    return;
  }
  for (Token& t : out) {
    if (t.offset >= open && t.offset < protocol_end) continue;
    const std::string_view text = message.substr(t.offset, t.length);
    if (t.cls == TokenClass::kWord && IsHttpStatus(text)) return;  // after the protocol
  }
  for (Token& t : out) {
    if (t.cls != TokenClass::kInteger || (t.offset >= open && t.offset < protocol_end)) continue;
    const std::size_t end = t.offset + t.length;
    if (t.offset == 0 || message[t.offset - 1] != ' ' ||
        (end < message.size() && message[end] != ' ') ||
        !IsHttpStatus(message.substr(t.offset, t.length))) {
      continue;
    }
    t.cls = TokenClass::kWord;
    return;
  }
}

bool IsHostKeyWord(std::string_view w) {
  switch (w.size()) {
    case 2:
      return EqualsIgnoringCase(w, "to");
    case 4:
      return EqualsIgnoringCase(w, "from") || EqualsIgnoringCase(w, "host");
    case 5:
      return EqualsIgnoringCase(w, "rhost");
    case 6:
      return EqualsIgnoringCase(w, "server");
    case 8:
      return EqualsIgnoringCase(w, "hostname");
    default:
      return false;
  }
}

// Is message[gap, start) the place of an HTTP status after `prev`: right after the protocol
// that ends a request line or a status line (`"GET / HTTP/1.1" 200`, `HTTP/1.0 503`), only
// quotes and spaces between?
bool IsStatusPlace(std::string_view message, const Token& prev, std::size_t gap,
                   std::size_t start) {
  const std::string_view p = message.substr(prev.offset, prev.length);
  return p.size() > 5 && p.substr(0, 5) == "HTTP/" &&
         message.substr(gap, start - gap).find_first_not_of("\" ") == std::string_view::npos;
}

// Is message[gap, start) the place of a status written as a key's value after `prev`: a key
// whose name ends in "status" or "code" (status, http_status, statusCode), then ':' with only
// spaces and quotes around (`status: 409`, `"code": 200`), or blanks after a key written as an
// identifier (`RespStatus 503`)? In running text ("status code 403") the number may be any
// code's value. A value after '=' (`status=200`) stays a variable here:
// the fingerprints of such lines are pinned (changing them is a versioned decision); the
// matcher tells such codes apart instead (template_match.cc, IsResultCode).
bool IsStatusKeyPlace(std::string_view message, const Token& prev, std::size_t gap,
                      std::size_t start) {
  if (prev.cls != TokenClass::kWord || prev.length < 4) return false;
  const std::string_view key = message.substr(prev.offset, prev.length);
  const auto ends_with = [&](std::string_view suffix) {
    return key.size() >= suffix.size() &&
           EqualsIgnoringCase(key.substr(key.size() - suffix.size()), suffix);
  };
  if (!ends_with("status") && !ends_with("code")) return false;
  const std::string_view between = message.substr(gap, start - gap);
  if (between.find_first_not_of(":\"' ") != std::string_view::npos) return false;
  if (between.find(':') != std::string_view::npos) return true;
  // Blanks alone: only a key written as an identifier of parts (`RespStatus 503`,
  // `http_status 404`, `statusCode 404`) is a field's name; in running text a plain word is not
  // (`status code 403`).
  if (between.find_first_not_of(' ') != std::string_view::npos) return false;
  for (std::size_t k = 1; k < key.size(); ++k) {
    if (key[k] == '_' || (key[k] >= 'A' && key[k] <= 'Z' && key[k - 1] >= 'a' && key[k - 1] <= 'z'))
      return true;
  }
  return false;
}

// Does the number at `start` (three digits) open a double-quoted reply: the quote opened (at
// the start or after a blank, `,`, `=`, `:` or a bracket) right before it, and a blank and a
// letter or digit right after it (`"331 Please specify the password."`, `"550 Permission
// denied."`, `"213 4096"`)?
// A protocol's reply text leads with its code; a user agent, a referer or a request line never
// leads with a number.
bool OpensQuotedReply(std::string_view message, std::size_t start) {
  if (start == 0 || message[start - 1] != '"' || start + 4 >= message.size() ||
      message[start + 3] != ' ' || !(IsAlpha(message[start + 4]) || IsDigit(message[start + 4]))) {
    return false;
  }
  if (start == 1) return true;
  const char c = message[start - 2];
  return c == ' ' || c == '\t' || c == ',' || c == '=' || c == ':' || c == '(' || c == '[' ||
         c == '{';
}

// A message catalogue code: two or more capitals, an optional '-' or '_', then four or more
// digits (AH10479, ORA-00942). Right before a ':' it names the event, as a word.
[[gnu::noinline, gnu::cold]] bool IsMessageCode(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] >= 'A' && s[i] <= 'Z') ++i;
  if (i < 2) return false;
  if (i < s.size() && (s[i] == '-' || s[i] == '_')) ++i;
  const std::size_t digits = s.size() - i;
  if (digits < 4) return false;
  for (; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return false;
  }
  return true;
}

// A return or reason code glued to its name (`rc0`, `rc135`, `exitcode1`): the name `rc`, the
// customary abbreviation of a return or reason code, or one ending in "code" or "status" (as
// IsStatusKeyPlace reads a key), then one to three digits. A code is an enumeration (`rc0`
// accepts what `rc135` refuses): a word, kept for its value.
// The last letter of such a name ('c' of rc, 'e' of code, 's' of status) right before one to
// three digits, for the bytes before the token's last (a digit); a cheap necessary condition.
inline bool NamedCodeLetter(std::string_view t) {
  const auto letter = [](char c) {
    c = static_cast<char>(c | 0x20);
    return c == 'c' || c == 'e' || c == 's';
  };
  const std::size_t n = t.size();
  return n >= 3 && (letter(t[n - 2]) ||
                    (IsDigit(t[n - 2]) &&
                     (letter(t[n - 3]) || (n >= 4 && IsDigit(t[n - 3]) && letter(t[n - 4])))));
}
[[gnu::noinline, gnu::cold]] bool IsNamedCode(std::string_view s) {
  std::size_t digits = 0;
  while (digits < s.size() && IsDigit(s[s.size() - 1 - digits])) ++digits;
  if (digits == 0 || digits > 3) return false;
  const std::string_view name = s.substr(0, s.size() - digits);
  const auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           EqualsIgnoringCase(name.substr(name.size() - suffix.size()), suffix);
  };
  for (char c : name) {
    if (!IsAlpha(c)) return false;
  }
  return EqualsIgnoringCase(name, "rc") || ends_with("code") || ends_with("status");
}

// Is the one-digit integer at `start` a member of a tuple of one-digit numbers: '(' after a
// blank or at the start, two to eight such numbers apart by ',' or ", ", then ')' (`(0, 5)`,
// `(1,0,2)`)? Each member can take ten values at most: flags and codes, an enumeration's
// constants (`(0, 5)` refuses what `(0, 0)` accepts), never an id or a coordinate, which take
// more digits.
[[gnu::noinline, gnu::cold]] bool InDigitTuple(std::string_view m, std::size_t start) {
  constexpr std::size_t kMaxMembers = 8;
  std::size_t open = start;  // at most 3 bytes a member before it
  while (open > 0 && start - open < 3 * kMaxMembers &&
         (IsDigit(m[open - 1]) || m[open - 1] == ',' || m[open - 1] == ' ')) {
    --open;
  }
  if (open == 0 || m[open - 1] != '(') return false;
  --open;
  if (open > 0 && m[open - 1] != ' ' && m[open - 1] != '\t') return false;
  std::size_t p = open + 1, members = 0;
  while (members < kMaxMembers && p < m.size() && IsDigit(m[p])) {
    ++members;
    ++p;
    if (p < m.size() && m[p] == ')') return members >= 2;
    if (p >= m.size() || m[p] != ',') return false;
    ++p;
    if (p < m.size() && m[p] == ' ') ++p;
  }
  return false;
}

// A field's name glued to its number by ':' (active_anon:418, free:47417): the name, a
// letter then letters and '_' (no digit, '.' or '-', which host names with a port hold:
// db1:5432, example.org:443), then ':' and digits only. The position of the ':', or 0.
[[gnu::noinline]] std::size_t FieldValueColon(std::string_view s) {
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size() ||
      !IsAlpha(s.front())) {
    return 0;
  }
  for (std::size_t i = 1; i < colon; ++i) {
    if (!IsAlpha(s[i]) && s[i] != '_') return 0;
  }
  for (std::size_t i = colon + 1; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return 0;
  }
  return colon;
}

// A field's name: a letter, then letters, digits and '_' (R10, eax2, rx_bytes0).
bool IsFieldName(std::string_view s) {
  if (!IsAlpha(s.front())) return false;
  for (char c : s) {
    if (!IsAlpha(c) && !IsDigit(c) && c != '_') return false;
  }
  return true;
}

// A field's name glued to its number by ':' (name:42, a kHostPort token `t`) is tokenized as
// "name: 42": the name a word, the number an integer. False, and nothing set, for any other
// token.
bool SplitGluedField(std::string_view message, const Token& t, Token& name, Token& number) {
  const std::size_t colon = FieldValueColon(message.substr(t.offset, t.length));
  if (colon == 0) return false;
  name = Token{t.offset, static_cast<std::uint32_t>(colon), TokenClass::kWord};
  number = Token{static_cast<std::uint32_t>(t.offset + colon + 1),
                 static_cast<std::uint32_t>(t.length - colon - 1), TokenClass::kInteger};
  return true;
}

// Is the token at `t` a closing tag's name (</TASK>, </body>): markup's word, not a path?
// A tag's name begins with a letter or '_' and holds no '/': an id in angle brackets that
// begins with '/' (a base64 session id, </2cx11Zh3ut/AAAB>) is a value.
bool IsClosingTag(std::string_view message, const Token& t) {
  if (message[t.offset] != '/' || t.offset == 0 || message[t.offset - 1] != '<' ||
      t.offset + t.length >= message.size() || message[t.offset + t.length] != '>' ||
      t.length < 2) {
    return false;
  }
  const std::string_view name = message.substr(t.offset + 1, t.length - 1);
  return (IsAlpha(name.front()) || name.front() == '_') && name.find('/') == name.npos;
}

// A name holding a digit (`prev`, a digit-bearing word) right before ": " and a number (at
// `start`) is that number's field (R10: 0000000000000246, as registers are dumped): a word.
// Before a word it stays a variable (eth1: link up).
void NameOfNumber(std::string_view message, Token& prev, std::size_t gap, std::size_t start) {
  if (gap + 2 == start && message[gap] == ':' && message[gap + 1] == ' ' &&
      IsFieldName(message.substr(prev.offset, prev.length))) {
    prev.cls = TokenClass::kWord;
  }
}

// The first token gets no context rule; of those on fields' names and markup it may take
// two (a later token takes them in the loop): a field's name glued to its number, a closing tag.
[[gnu::noinline]] void FirstTokenRules(std::string_view message, std::vector<Token>& out,
                                       std::size_t max_tokens) {
  Token t = out[0];
  if (t.cls == TokenClass::kPath && IsClosingTag(message, t)) {
    out[0].cls = TokenClass::kWord;
  } else if (t.cls == TokenClass::kHostPort && out.size() < max_tokens) {
    Token name{}, number{};
    if (SplitGluedField(message, t, name, number)) {
      out[0] = name;
      out.insert(out.begin() + 1, number);
    }
  }
}

// A short host name: a letter, then letters, digits, '-' and '.' (node-246, dn228).
bool IsShortHostName(std::string_view s) {
  if (!IsAlpha(s.front()) || s.back() == '.' || s.back() == '-') return false;
  for (char c : s) {
    if (!IsAlpha(c) && !IsDigit(c) && c != '-' && c != '.') return false;
  }
  return true;
}

// A set of one-letter flags written as one field: a sign, capitals, then any number of digits
// in parentheses each followed by capitals (`+E(0)K`, `-E(0)DK`, `-S`: a DNS server's query
// flags), at most 16 bytes, with a blank, an opening bracket or quote, '=', ',' or the start
// before it and a blank, a closer, ',', ';' or the end after it. Its end if the token at
// `start` (its first piece ending at `end`, where a '(' may continue it) opens one, else 0.
[[gnu::noinline, gnu::cold]] std::size_t FlagSetEnd(std::string_view m, std::size_t start,
                                                    std::size_t end) {
  const auto capital = [](char c) { return c >= 'A' && c <= 'Z'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t p = start + 1;
  while (p < end && capital(m[p])) ++p;
  if (p == start + 1 || p != end) return 0;
  if (start > 0) {
    switch (m[start - 1]) {
      case ' ':
      case '\t':
      case '(':
      case '[':
      case '{':
      case '"':
      case '\'':
      case '=':
      case ',':
        break;
      default:
        return 0;
    }
  }
  while (p < m.size() && m[p] == '(') {
    std::size_t q = p + 1;
    while (q < m.size() && digit(m[q])) ++q;
    if (q == p + 1 || q >= m.size() || m[q] != ')') break;
    p = q + 1;
    while (p < m.size() && capital(m[p])) ++p;
  }
  if (p - start > 16) return 0;
  if (p < m.size()) {
    switch (m[p]) {
      case ' ':
      case '\t':
      case ')':
      case ']':
      case '}':
      case '"':
      case '\'':
      case ',':
      case ';':
        break;
      default:
        return 0;
    }
  }
  return p;
}

// Could a context rule change the class of `text` after `prev`? A cheap necessary condition
// (lengths and first letters), so that most tokens skip InContext.
inline bool MayHaveContext(std::string_view message, const Token& prev, std::string_view text,
                           TokenClass cls) {
  switch (cls) {
    case TokenClass::kWord: {
      const char c = text[0];
      return (text.size() >= 3 && text.size() <= 9 &&
              ((c >= 'A' && c <= 'Z') ||
               (text.size() <= 5 &&
                ((c | 0x20) == 't' || (c | 0x20) == 'f' || (c | 0x20) == 'n')))) ||
             (text.data()[-1] == '=' && prev.length == 2 && message[prev.offset] == 'C' &&
              message[prev.offset + 1] == 'N');  // a common name, `CN=alice`
    }
    case TokenClass::kInteger:
      if (IsHttpStatus(text) || prev.cls == TokenClass::kDigitWord) return true;
      // A tuple's member (InDigitTuple): one digit before ',' or ')'.
      if (text.size() == 1 && text.data() + 1 < message.data() + message.size() &&
          (text.data()[1] == ',' || text.data()[1] == ')')) {
        return true;
      }
      [[fallthrough]];
    case TokenClass::kDateTime:
      return prev.cls == TokenClass::kWord && message[prev.offset] >= 'A' &&
             message[prev.offset] <= 'Z';
    case TokenClass::kHex:
      return prev.cls == TokenClass::kDigitWord;
    case TokenClass::kHostPort:
      return true;
    case TokenClass::kPath:
      return text.data()[-1] == '<';
    case TokenClass::kDigitWord:
      return (prev.cls == TokenClass::kWord && prev.length >= 2 && prev.length <= 8) ||
             (IsDigit(text.back()) && IsAlpha(text.front()) && NamedCodeLetter(text));
    case TokenClass::kIPv4:
    case TokenClass::kIPv6:
      return message[prev.offset + prev.length] == '[' ||
             (message[prev.offset + prev.length] == ' ' &&
              message[prev.offset + prev.length + 1] == '(');
    default:
      return false;
  }
}

// The context rules (see Tokenizer::Tokenize): the class of the token `text` at `start`,
// given the tokens before it (`out`, not empty), whose classes it may change too.
TokenClass InContext(std::string_view message, std::vector<Token>& out, std::string_view text,
                     std::size_t start, TokenClass cls) {
  const Token& prev = out.back();
  const std::size_t gap = prev.offset + prev.length;
  switch (cls) {
    case TokenClass::kWord:
      if (text.size() >= 3 && text.size() <= 5 && IsLiteralWord(text) &&
          message.substr(gap, start - gap).find_first_of("=:") != std::string_view::npos) {
        return TokenClass::kLiteral;
      }
      // An X.509 subject's common name, as OpenSSL and the programs on it print a certificate
      // (`CN=alice`, `/O=Lab/CN=LabCA`): a name of whoever holds it, a value.
      if (start == gap + 1 && message[gap] == '=' && prev.length == 2 &&
          message[prev.offset] == 'C' && message[prev.offset + 1] == 'N') {
        return TokenClass::kHostPort;
      }
      if ((prev.cls == TokenClass::kInteger || prev.cls == TokenClass::kDateTime) &&
          IsDateName(text) && OnlySpacesAndCommas(message, gap, start)) {
        return TokenClass::kDateTime;
      }
      return cls;
    case TokenClass::kInteger:
      // A member of a tuple of one-digit numbers is a flag or a code: a word.
      if (text.size() == 1 && InDigitTuple(message, start)) return TokenClass::kWord;
      if (prev.cls == TokenClass::kDigitWord) NameOfNumber(message, out.back(), gap, start);
      // An HTTP status is an enumeration (a burst of 500s must not hide among 200s): a word.
      if (IsHttpStatus(text) &&
          (IsStatusPlace(message, prev, gap, start) ||
           IsStatusKeyPlace(message, prev, gap, start) || OpensQuotedReply(message, start)))
        return TokenClass::kWord;
      [[fallthrough]];
    case TokenClass::kDateTime:
      // Names just before a number or a time are its date: "Mon Jun 12", "Sun, 06 Nov".
      for (std::size_t k = out.size(), next = start; k-- > 0;) {
        Token& t = out[k];
        if (t.cls != TokenClass::kWord || !IsDateName(message.substr(t.offset, t.length)) ||
            !OnlySpacesAndCommas(message, t.offset + t.length, next)) {
          break;
        }
        t.cls = TokenClass::kDateTime;
        next = t.offset;
      }
      return cls;
    case TokenClass::kDigitWord:
      // A return or reason code glued to its name is an enumeration's value: a word.
      if (IsDigit(text.back()) && IsAlpha(text.front()) && NamedCodeLetter(text) &&
          IsNamedCode(text)) {
        return TokenClass::kWord;
      }
      if (prev.cls == TokenClass::kWord &&
          IsHostKeyWord(message.substr(prev.offset, prev.length)) && IsShortHostName(text)) {
        return TokenClass::kHostPort;
      }
      return cls;
    case TokenClass::kHex:
      NameOfNumber(message, out.back(), gap, start);
      return cls;
    case TokenClass::kPath:
      return IsClosingTag(message, Token{static_cast<std::uint32_t>(start),
                                         static_cast<std::uint32_t>(text.size()), cls})
                 ? TokenClass::kWord
                 : cls;
    case TokenClass::kIPv4:
    case TokenClass::kIPv6:
      // A name glued to a bracketed address (localhost[127.0.0.1], unknown[::1], as syslog
      // daemons write a peer) is that address's host name: a value, whatever its letters.
      if (gap + 1 == start && start + text.size() < message.size() &&
          message[start + text.size()] == ']' &&
          (prev.cls == TokenClass::kWord || prev.cls == TokenClass::kDigitWord) &&
          IsShortHostName(message.substr(prev.offset, prev.length))) {
        out.back().cls = TokenClass::kHostPort;
      }
      // So is a name of parts (holding a '-' or '.') before a blank and that address in
      // parentheses, as a program names a peer with its address: `bridge-dead
      // (127.0.0.1:51886)`. A plain word there (`from (10.0.0.1)`) stays a word.
      if (gap + 2 == start && message[gap] == ' ' && message[gap + 1] == '(' &&
          start + text.size() < message.size() && message[start + text.size()] == ')' &&
          prev.cls == TokenClass::kWord &&
          message.substr(prev.offset, prev.length).find_first_of("-.") != std::string_view::npos &&
          IsShortHostName(message.substr(prev.offset, prev.length))) {
        out.back().cls = TokenClass::kHostPort;
      }
      return cls;
    default:
      return cls;
  }
}

}  // namespace

// Token boundaries come from 64-byte bitmaps (pipeline/byte_blocks): a bit scan finds where
// a token starts and ends, with no branch per byte to mispredict at its unpredictable end, and
// a token holding no digit, ':', '/' or '@' is a word without looking at its bytes again.
void Tokenizer::Tokenize(std::string_view message, std::vector<Token>& out) const {
  out.clear();
  const char* const data = message.data();
  const std::size_t n = message.size();
  if (n == 0) return;
  std::size_t base = 0;  // start of the current block
  ByteBlock block = ScanByteBlock(data, std::min<std::size_t>(64, n), options_.kernel);
  // Moves to the next block; false at the end of the message.
  const auto next_block = [&]() {
    if (n - base <= 64) return false;
    base += 64;
    block = ScanByteBlock(data + base, std::min<std::size_t>(64, n - base), options_.kernel);
    return true;
  };
  // A leading UTF-8 BOM (kept in RFC 5424 messages) is not text: "\xEF\xBB\xBFhello" and
  // "hello" must fold together.
  const bool bom = n >= 3 && data[0] == '\xEF' && data[1] == '\xBB' && data[2] == '\xBF';
  std::size_t i = bom ? 3 : 0;  // invariant while i < n: base <= i < base + 64
  // out.size() in a register: vector::size() divides by sizeof(Token), and push_back makes
  // the compiler reload both ends; asked twice a token it was ~10 % of a short word's cost.
  const std::size_t max_tokens = options_.max_tokens;
  std::size_t count = 0;
  std::size_t protocol = SIZE_MAX;  // the index of a token starting "HTTP/", if any
  while (i < n && count < max_tokens) {
    const std::size_t run_start = i;  // a run of separators (or a token) starts here
    bool at_end = false;
    for (;;) {  // skip separators
      const std::uint64_t tokens_ahead = ~block.separators >> (i - base);
      if (tokens_ahead != 0) {
        i += static_cast<std::size_t>(__builtin_ctzll(tokens_ahead));
        break;
      }
      if (!next_block()) {
        at_end = true;
        break;
      }
      i = base;
    }
    const std::size_t run_end = at_end ? n : i;
    // An empty value needs two separators ("()", "= "), or a '=' ending the message.
    if (run_end - run_start >= 2 || (at_end && run_end > run_start)) {
      AddEmptyValues(message, run_start, run_end, max_tokens, out);
      count = out.size();
    }
    if (at_end) break;
    // data[i] starts a token (bits past the message's end are separators, so i < n).
    const std::size_t start = i;
    std::uint64_t candidates = 0;
    for (;;) {  // find its end, collecting its candidate bits
      const std::uint64_t offset = i - base;
      const std::uint64_t separators_ahead = block.separators >> offset;
      if (separators_ahead != 0) {
        const auto len = static_cast<unsigned>(__builtin_ctzll(separators_ahead));
        candidates |= (block.candidates >> offset) & ((std::uint64_t{1} << len) - 1);
        i += len;
        break;
      }
      candidates |= block.candidates >> offset;
      if (!next_block()) {
        i = n;
        break;
      }
      i = base;
    }
    std::size_t end = i;
    while (end > start && IsTrailingPunct(data[end - 1])) --end;
    if (end == start || count >= max_tokens) continue;
    // A flag set is one token across its parentheses (see FlagSetEnd), of an opaque code's
    // class: what its letters are varies as an id does.
    if ((data[start] == '+' || data[start] == '-') && end - start >= 2) [[unlikely]] {
      if (const std::size_t set_end = FlagSetEnd(message, start, end); set_end != 0) {
        out.push_back(Token{static_cast<std::uint32_t>(start),
                            static_cast<std::uint32_t>(set_end - start), TokenClass::kHex});
        ++count;
        while (set_end - base >= 64 && next_block()) {
        }
        i = std::max(i, set_end);
        continue;
      }
    }
    // start < end <= n: no bounds check (substr's was a compare and a min per token).
    const std::string_view text(data + start, end - start);
    // No candidate byte: no digit, '@' or "://" (see ClassifyImpl), so a word.
    TokenClass cls = candidates == 0 ? TokenClass::kWord : ClassifyWithShape(text, ShapeOf(text));
    // A message code before a ':' (AH10479: ...) is the event's name, not a variable; names
    // with a short number (CPU0:, eth1:) stay digit-bearing words.
    if (cls == TokenClass::kDigitWord && end < n && data[end] == ':') [[unlikely]] {
      if (IsMessageCode(text)) cls = TokenClass::kWord;
    }
    if (count != 0 && MayHaveContext(message, out.back(), text, cls)) {
      if (cls == TokenClass::kHostPort) [[unlikely]] {
        const Token t{static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(end - start),
                      cls};
        Token name{}, number{};
        if (out.size() + 2 <= max_tokens && SplitGluedField(message, t, name, number)) {
          out.push_back(name);
          out.push_back(number);
          count = out.size();
          continue;
        }
      } else {
        cls = InContext(message, out, text, start, cls);
      }
    }
    if (cls == TokenClass::kPath && text[0] == 'H' && text.size() > 5 &&
        text.substr(0, 5) == "HTTP/") [[unlikely]] {
      protocol = count;
    }
    out.push_back(
        Token{static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(end - start), cls});
    ++count;
  }
  if (protocol != SIZE_MAX) [[unlikely]] {
    MarkStatusOutsideRequest(message, out, protocol);
  }
  if (count != 0 && (out[0].cls == TokenClass::kHostPort || out[0].cls == TokenClass::kPath))
      [[unlikely]] {
    FirstTokenRules(message, out, max_tokens);
  }
}

bool IsHostKey(std::string_view word) { return IsHostKeyWord(word); }

}  // namespace logfold
