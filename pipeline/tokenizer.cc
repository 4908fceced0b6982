// Tokenizer implementation: one pass to split, one pass per token to classify. No regex, no
// allocation beyond the caller's reused vector.
#include "pipeline/tokenizer.h"

#include <array>
#include <cstddef>

namespace logfold {
namespace {

// Characters that end a token. Kept out of tokens so that `key=value`, `(value)` and
// `"value"` expose their variable part as a token of its own.
constexpr std::array<bool, 256> MakeSeparatorTable() {
  std::array<bool, 256> t{};
  for (unsigned char c : std::string_view(" \t\r\n\v\f,;=()[]{}\"'<>|\0", 21)) t[c] = true;
  return t;
}
constexpr std::array<bool, 256> kSeparator = MakeSeparatorTable();

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
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

// a.b.c.d with each part 0..255, optionally :port.
bool IsIPv4(std::string_view s) {
  std::size_t colon = s.find(':');
  if (colon != std::string_view::npos) {
    if (!AllDigits(s.substr(colon + 1)) || s.size() - colon - 1 > 5) return false;
    s = s.substr(0, colon);
  }
  int parts = 0;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (part.empty() || part.size() > 3 || !AllDigits(part)) return false;
    int v = 0;
    for (char c : part) v = v * 10 + (c - '0');
    if (v > 255) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts == 4;
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
    case TokenClass::kCount_:
      break;
  }
  return "?";
}

TokenClass Tokenizer::Classify(std::string_view t) {
  if (t.empty()) return TokenClass::kWord;
  bool digit = false;
  std::size_t at = std::string_view::npos;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (IsDigit(t[i])) digit = true;
    if (t[i] == '@' && at == std::string_view::npos) at = i;
  }
  if (t.find("://") != std::string_view::npos) return TokenClass::kUrl;
  if (at != std::string_view::npos && at > 0 && t.find('.', at) != std::string_view::npos &&
      t.find('/') == std::string_view::npos) {
    return TokenClass::kEmail;
  }
  if (!digit) return TokenClass::kWord;
  if (IsInteger(t)) return TokenClass::kInteger;
  if (IsUuid(t)) return TokenClass::kUuid;
  if (IsMac(t)) return TokenClass::kMac;
  if (IsIPv4(t)) return TokenClass::kIPv4;
  if (IsFloat(t)) return TokenClass::kFloat;
  if (IsDateTime(t)) return TokenClass::kDateTime;
  if (IsIPv6(t)) return TokenClass::kIPv6;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && AllHex(t.substr(2))) {
    return TokenClass::kHex;
  }
  if (t.size() >= 8 && AllHex(t)) return TokenClass::kHex;
  if (t.front() == '/' || t.front() == '~' || t.find('/') != std::string_view::npos) {
    return TokenClass::kPath;
  }
  if (IsHostPort(t)) return TokenClass::kHostPort;
  return TokenClass::kDigitWord;
}

void Tokenizer::Tokenize(std::string_view message, std::vector<Token>& out) const {
  out.clear();
  const std::size_t n = message.size();
  std::size_t i = 0;
  while (i < n && out.size() < options_.max_tokens) {
    while (i < n && kSeparator[static_cast<unsigned char>(message[i])]) ++i;
    if (i == n) break;
    std::size_t start = i;
    while (i < n && !kSeparator[static_cast<unsigned char>(message[i])]) ++i;
    std::size_t end = i;
    while (end > start && IsTrailingPunct(message[end - 1])) --end;
    if (end == start) continue;
    std::string_view text = message.substr(start, end - start);
    out.push_back(Token{static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(end - start),
                        Classify(text)});
  }
}

}  // namespace logfold
