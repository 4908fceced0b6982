// A slow, plainly written reference of the fingerprint algorithm documented in README.md and
// pipeline/fingerprinter.h, independent of Fingerprinter's code: the differential fuzz target
// and fingerprint_reference_test compare the fast implementation against it bit for bit.
#ifndef LOGFOLD_TESTS_FUZZ_REFERENCE_FINGERPRINT_H_
#define LOGFOLD_TESTS_FUZZ_REFERENCE_FINGERPRINT_H_

#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/tokenizer.h"

namespace logfold::reference {

// The context rules of Tokenizer::Tokenize, written out plainly: the class of token `t`
// given the tokens before it, which it may change (a month or weekday name before a number).
inline TokenClass InContext(std::string_view message, std::vector<Token>& before, Token t) {
  const auto text = [&](const Token& x) { return message.substr(x.offset, x.length); };
  const auto gap = [&](const Token& a, std::size_t to) {
    return message.substr(a.offset + a.length, to - a.offset - a.length);
  };
  const auto spaces_and_commas = [](std::string_view g) {
    return g.find_first_not_of(" ,") == std::string_view::npos;
  };
  if (before.empty()) return t.cls;
  const Token& prev = before.back();
  if (t.cls == TokenClass::kWord) {
    if (IsLiteralWord(text(t)) && gap(prev, t.offset).find_first_of("=:") != std::string_view::npos)
      return TokenClass::kLiteral;
    if ((prev.cls == TokenClass::kInteger || prev.cls == TokenClass::kDateTime) &&
        IsDateName(text(t)) && spaces_and_commas(gap(prev, t.offset)))
      return TokenClass::kDateTime;
  } else if (t.cls == TokenClass::kInteger || t.cls == TokenClass::kDateTime) {
    // An HTTP status (three digits, 100-599) right after the protocol ending a request or
    // status line ("HTTP/1.1" 200), with only quotes and spaces between, is a word.
    const std::string_view s = text(t);
    if (t.cls == TokenClass::kInteger && s.size() == 3 && s[0] >= '1' && s[0] <= '5' &&
        std::isdigit(static_cast<unsigned char>(s[1])) &&
        std::isdigit(static_cast<unsigned char>(s[2])) && text(prev).size() > 5 &&
        text(prev).substr(0, 5) == "HTTP/" &&
        gap(prev, t.offset).find_first_not_of("\" ") == std::string_view::npos)
      return TokenClass::kWord;
    // So is one after a key whose name ends in "status" or "code" (any case, four or more
    // letters) and a ':', with only ':', quotes and spaces between (status: 409).
    std::string key(text(prev));
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string_view between = gap(prev, t.offset);
    if (t.cls == TokenClass::kInteger && s.size() == 3 && s[0] >= '1' && s[0] <= '5' &&
        std::isdigit(static_cast<unsigned char>(s[1])) &&
        std::isdigit(static_cast<unsigned char>(s[2])) && prev.cls == TokenClass::kWord &&
        key.size() >= 4 && (key.ends_with("status") || key.ends_with("code")) &&
        between.find(':') != std::string_view::npos &&
        between.find_first_not_of(":\"' ") == std::string_view::npos)
      return TokenClass::kWord;
    // Or blanks alone, the key an identifier of parts: a '_' after its first byte, or a
    // capital right after a lower-case letter (RespStatus 503).
    bool parts = false;
    for (std::size_t k = 1; k < text(prev).size(); ++k) {
      const char c = text(prev)[k], b = text(prev)[k - 1];
      parts = parts || c == '_' ||
              (std::isupper(static_cast<unsigned char>(c)) &&
               std::islower(static_cast<unsigned char>(b)));
    }
    if (t.cls == TokenClass::kInteger && s.size() == 3 && s[0] >= '1' && s[0] <= '5' &&
        std::isdigit(static_cast<unsigned char>(s[1])) &&
        std::isdigit(static_cast<unsigned char>(s[2])) && prev.cls == TokenClass::kWord &&
        key.size() >= 4 && (key.ends_with("status") || key.ends_with("code")) && parts &&
        !between.empty() && between.find_first_not_of(' ') == std::string_view::npos)
      return TokenClass::kWord;
    // Or one right after a double quote that opens a text (at the start or after a blank,
    // ',', '=', ':' or an opening bracket) and before a blank and a letter or digit: a quoted
    // reply.
    const std::size_t at = t.offset;
    if (t.cls == TokenClass::kInteger && s.size() == 3 && s[0] >= '1' && s[0] <= '5' &&
        std::isdigit(static_cast<unsigned char>(s[1])) &&
        std::isdigit(static_cast<unsigned char>(s[2])) && at >= 1 && message[at - 1] == '"' &&
        (at == 1 ||
         std::string_view(" \t,=:([{").find(message[at - 2]) != std::string_view::npos) &&
        at + 4 < message.size() && message[at + 3] == ' ' &&
        std::isalnum(static_cast<unsigned char>(message[at + 4])))
      return TokenClass::kWord;
    std::size_t next = t.offset;
    for (std::size_t k = before.size(); k > 0; --k) {
      Token& b = before[k - 1];
      if (b.cls != TokenClass::kWord || !IsDateName(text(b)) || !spaces_and_commas(gap(b, next)))
        break;
      b.cls = TokenClass::kDateTime;
      next = b.offset;
    }
  } else if (t.cls == TokenClass::kDigitWord && prev.cls == TokenClass::kWord) {
    std::string key(text(prev));
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string_view name = text(t);
    bool host_like = std::isalpha(static_cast<unsigned char>(name.front())) && name.back() != '.' &&
                     name.back() != '-';
    for (char c : name)
      host_like &= std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    if (host_like && (key == "from" || key == "to" || key == "host" || key == "rhost" ||
                      key == "server" || key == "hostname"))
      return TokenClass::kHostPort;
  } else if (t.cls == TokenClass::kIPv4 || t.cls == TokenClass::kIPv6) {
    // A name (a letter, then letters, digits, '-' and '.', not ending in '-' or '.') glued to
    // the '[' of a bracketed address is the address's host name.
    const std::string_view name = text(prev);
    bool host_like = (prev.cls == TokenClass::kWord || prev.cls == TokenClass::kDigitWord) &&
                     std::isalpha(static_cast<unsigned char>(name.front())) && name.back() != '.' &&
                     name.back() != '-';
    for (char c : name)
      host_like &= std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    const std::size_t end = t.offset + t.length;
    if (host_like && gap(prev, t.offset) == "[" && end < message.size() && message[end] == ']')
      before.back().cls = TokenClass::kHostPort;
    // So is a name of parts (holding a '-' or '.') before a blank and that address in
    // parentheses: bridge-dead (127.0.0.1:51886).
    if (host_like && prev.cls == TokenClass::kWord &&
        name.find_first_of("-.") != std::string_view::npos && gap(prev, t.offset) == " (" &&
        end < message.size() && message[end] == ')')
      before.back().cls = TokenClass::kHostPort;
  }
  return t.cls;
}

// The tokenizer's definition, a byte at a time: tokens are maximal runs of bytes that are not
// separators, less trailing ':' '.' '!' '?' (a token left empty is dropped), classed by
// Tokenizer::Classify and the context rules, at most max_tokens of them. In a run of
// separators, an empty pair (), [], {}, "", '' and a '=' that ends the token before it and is
// followed by white space, ',', ';' or the message's end are zero-length kEmpty tokens.
// The position of the ':' of name:digits (a letter, then letters and '_'), or 0.
inline std::size_t FieldColon(std::string_view text) {
  const std::size_t colon = text.find(':');
  bool field = colon != std::string_view::npos && colon > 0 && colon + 1 < text.size() &&
               std::isalpha(static_cast<unsigned char>(text[0]));
  for (std::size_t k = 0; field && k < text.size(); ++k) {
    const char c = text[k];
    field = k < colon   ? std::isalpha(static_cast<unsigned char>(c)) || c == '_'
            : k > colon ? std::isdigit(static_cast<unsigned char>(c)) != 0
                        : true;
  }
  return field ? colon : 0;
}

inline std::vector<Token> TokenizeInOrder(std::string_view message, std::uint32_t max_tokens);

// A markup tag's name: it begins with a letter or '_' and holds no '/' (</TASK>, not the id
// in </2cx11Zh3ut/AAAB>).
inline bool IsTagName(std::string_view name) {
  return !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
         name.find('/') == std::string_view::npos;
}

// Tokenize with the rules the first token takes after the others: a closing tag is a word and
// a field's name glued to its number two tokens (if the first fits).
inline std::vector<Token> Tokenize(std::string_view message, std::uint32_t max_tokens) {
  std::vector<Token> out = TokenizeInOrder(message, max_tokens);
  if (out.empty()) return out;
  Token& t = out[0];
  if (t.cls == TokenClass::kPath && message[t.offset] == '/' && t.offset > 0 &&
      message[t.offset - 1] == '<' && t.offset + t.length < message.size() &&
      message[t.offset + t.length] == '>' &&
      IsTagName(message.substr(t.offset + 1, t.length - 1))) {
    t.cls = TokenClass::kWord;
  } else if (t.cls == TokenClass::kHostPort && out.size() < max_tokens) {
    if (const std::size_t colon = FieldColon(message.substr(t.offset, t.length)); colon != 0) {
      const Token value{static_cast<std::uint32_t>(t.offset + colon + 1),
                        static_cast<std::uint32_t>(t.length - colon - 1), TokenClass::kInteger};
      t = Token{t.offset, static_cast<std::uint32_t>(colon), TokenClass::kWord};
      out.insert(out.begin() + 1, value);
    }
  }
  return out;
}

inline std::vector<Token> TokenizeInOrder(std::string_view message, std::uint32_t max_tokens) {
  constexpr std::string_view kSeparators(" \t\r\n\v\f,;=()[]{}\"'<>|\0", 21);
  const auto trailing = [](char c) { return c == ':' || c == '.' || c == '!' || c == '?'; };
  const auto separator = [&](char c) { return kSeparators.find(c) != std::string_view::npos; };
  std::vector<Token> out;
  const auto add = [&](std::size_t offset, std::size_t length, TokenClass cls) {
    if (out.size() < max_tokens)
      out.push_back(
          Token{static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(length), cls});
  };
  std::size_t i = 0;
  while (i < message.size() && out.size() < max_tokens) {
    const std::size_t run = i;
    while (i < message.size() && separator(message[i])) ++i;
    if (i > run) {
      if (message[run] == '=' && run > 0 &&
          (run + 1 == message.size() ||
           (run + 1 < i &&
            std::string_view(" \t,;").find(message[run + 1]) != std::string_view::npos)))
        add(run + 1, 0, TokenClass::kEmpty);
      for (std::size_t p = run; p + 1 < i; ++p) {
        const std::string_view pair = message.substr(p, 2);
        if (pair == "()" || pair == "[]" || pair == "{}" || pair == "\"\"" || pair == "''") {
          add(p + 1, 0, TokenClass::kEmpty);
          ++p;
        }
      }
      continue;
    }
    const std::size_t start = i;
    while (i < message.size() && !separator(message[i])) ++i;
    std::size_t end = i;
    while (end > start && trailing(message[end - 1])) --end;
    if (end == start || out.size() >= max_tokens) continue;
    // A flag set: a sign, capitals, then "(digits)" and capitals any number of times, at most
    // 16 bytes, after a blank, an opening bracket or quote, '=', ',' or the start and before a
    // blank, a closer, ',', ';' or the end: one kHex token across its parentheses.
    if (end - start >= 2 && (message[start] == '+' || message[start] == '-')) {
      const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
      const auto digit = [](char c) { return c >= '0' && c <= '9'; };
      std::size_t p = start + 1;
      while (p < end && upper(message[p])) ++p;
      bool set = p == end && p > start + 1 &&
                 (start == 0 || std::string_view(" \t([{\"'=,").find(message[start - 1]) !=
                                    std::string_view::npos);
      while (set && p < message.size() && message[p] == '(') {
        std::size_t q = p + 1;
        while (q < message.size() && digit(message[q])) ++q;
        if (q == p + 1 || q >= message.size() || message[q] != ')') break;
        p = q + 1;
        while (p < message.size() && upper(message[p])) ++p;
      }
      set = set && p - start <= 16 &&
            (p == message.size() ||
             std::string_view(" \t)]}\"',;").find(message[p]) != std::string_view::npos);
      if (set) {
        add(start, p - start, TokenClass::kHex);
        i = std::max(i, p);
        continue;
      }
    }
    Token t{static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(end - start),
            Tokenizer::Classify(message.substr(start, end - start))};
    // A message code right before a ':' (two or more capitals, an optional '-' or '_', four
    // or more digits: AH10479:, ORA-00942:) names the event: a word.
    if (t.cls == TokenClass::kDigitWord && end < message.size() && message[end] == ':') {
      const std::string_view text = message.substr(start, end - start);
      std::size_t k = 0;
      while (k < text.size() && text[k] >= 'A' && text[k] <= 'Z') ++k;
      if (k >= 2 && k < text.size() && (text[k] == '-' || text[k] == '_')) ++k;
      const std::string_view digits = k >= 2 ? text.substr(k) : std::string_view();
      if (digits.size() >= 4 && digits.find_first_not_of("0123456789") == std::string_view::npos) {
        t.cls = TokenClass::kWord;
      }
    }
    // A return or reason code glued to its name: letters, then one to three digits, the
    // letters `rc` or ending in "code" or "status" (any case): rc135, exitcode1. A word
    // after the first token.
    if (t.cls == TokenClass::kDigitWord && !out.empty()) {
      std::string text(message.substr(start, end - start));
      for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const std::size_t digits_at = text.find_first_of("0123456789");
      const std::string name = text.substr(0, digits_at);
      const std::string digits = text.substr(digits_at);
      if (digits.size() <= 3 && digits.find_first_not_of("0123456789") == std::string::npos &&
          std::all_of(name.begin(), name.end(), [](char c) { return c >= 'a' && c <= 'z'; }) &&
          (name == "rc" || name.ends_with("code") || name.ends_with("status"))) {
        t.cls = TokenClass::kWord;
      }
    }
    // A member of a tuple of one-digit numbers: '(' after a blank or at the start, two to
    // eight one-digit numbers apart by ',' or ", ", then ')': (0, 5). A word after the first
    // token.
    if (t.cls == TokenClass::kInteger && end - start == 1 && !out.empty()) {
      for (std::size_t open = message.rfind('(', start);
           open != std::string_view::npos &&
           (open == 0 || message[open - 1] == ' ' || message[open - 1] == '\t');) {
        std::size_t p = open + 1, members = 0;
        bool holds = false;
        while (p < message.size() && std::isdigit(static_cast<unsigned char>(message[p]))) {
          holds |= p == start;
          ++members;
          ++p;
          if (p < message.size() && message[p] == ',') {
            ++p;
            if (p < message.size() && message[p] == ' ') ++p;
            continue;
          }
          if (p < message.size() && message[p] == ')' && holds && members >= 2 && members <= 8)
            t.cls = TokenClass::kWord;
          break;
        }
        break;
      }
    }
    // A field's name glued to its number by ':' (a letter, then letters and '_'; then at most
    // five digits: free:47417, a host and port's shape) after the first token is two tokens,
    // the name a word and the number an integer, if both fit.
    if (t.cls == TokenClass::kHostPort && !out.empty() && out.size() + 2 <= max_tokens) {
      if (const std::size_t colon = FieldColon(message.substr(start, end - start)); colon != 0) {
        add(start, colon, TokenClass::kWord);
        add(start + colon + 1, end - start - colon - 1, TokenClass::kInteger);
        continue;
      }
    }
    // A name (a letter, then letters, digits and '_') holding a digit, right before ':', one
    // space and a number, is that number's field: a word
    // (before the context rules, which may then read it as a word).
    if ((t.cls == TokenClass::kInteger || t.cls == TokenClass::kHex) && !out.empty() &&
        out.back().cls == TokenClass::kDigitWord) {
      const std::string_view name = message.substr(out.back().offset, out.back().length);
      const std::string_view between = message.substr(
          out.back().offset + out.back().length, start - out.back().offset - out.back().length);
      bool field = std::isalpha(static_cast<unsigned char>(name[0])) && between == ": ";
      for (char c : name) field &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      if (field) out.back().cls = TokenClass::kWord;
    }
    t.cls = InContext(message, out, t);
    // A closing tag (</TASK>) is a word.
    if (t.cls == TokenClass::kPath && !out.empty() && message[start] == '/' && start > 0 &&
        message[start - 1] == '<' && end < message.size() && message[end] == '>' &&
        IsTagName(message.substr(start + 1, end - start - 1)))
      t.cls = TokenClass::kWord;
    out.push_back(t);
  }
  // A quoted request whose protocol (the last token starting "HTTP/") no status follows: the
  // first integer of three digits 100-599 with a space or the message's end on each side,
  // outside the quotes, is the status, a word.
  std::size_t protocol = out.size();
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::string_view s = message.substr(out[k].offset, out[k].length);
    if (out[k].cls == TokenClass::kPath && s.size() > 5 && s.substr(0, 5) == "HTTP/") protocol = k;
  }
  if (protocol == out.size()) return out;
  const std::size_t protocol_end = out[protocol].offset + out[protocol].length;
  const std::size_t open = message.rfind('"', out[protocol].offset);
  if (protocol_end >= message.size() || message[protocol_end] != '"' ||
      open == std::string_view::npos) {
    return out;
  }
  const auto status = [](std::string_view s) {
    return s.size() == 3 && s[0] >= '1' && s[0] <= '5' &&
           std::isdigit(static_cast<unsigned char>(s[1])) &&
           std::isdigit(static_cast<unsigned char>(s[2]));
  };
  const auto inside = [&](const Token& t) { return t.offset >= open && t.offset < protocol_end; };
  for (const Token& t : out) {
    if (!inside(t) && t.cls == TokenClass::kWord && status(message.substr(t.offset, t.length)))
      return out;
  }
  for (Token& t : out) {
    if (inside(t) || t.cls != TokenClass::kInteger) continue;
    const std::size_t end = t.offset + t.length;
    if (t.offset == 0 || message[t.offset - 1] != ' ' ||
        (end < message.size() && message[end] != ' ') ||
        !status(message.substr(t.offset, t.length)))
      continue;
    t.cls = TokenClass::kWord;
    break;
  }
  return out;
}

// The seeds are part of the fingerprint's definition ("logfold" + 1 and + 2), so stored
// fingerprints stay valid: they are spelled out here rather than taken from the library.
constexpr std::uint64_t kClassSeed = 0x6c6f67666f6c6401ULL;
constexpr std::uint64_t kPairSeed = 0x6c6f67666f6c6402ULL;

// Weights as the number of 1/1024 steps, indexed by TokenClass (kWord first).
struct Weights {
  std::int64_t by_class[static_cast<int>(TokenClass::kCount_)] = {
      1024, 102, 102, 102, 102, 102, 102, 102, 102, 102, 102, 102, 102, 205, 102, 102};
  bool pairs = true;
};

// A weight in [0, 1] as steps of 1/1024, rounded half up (clamped first).
inline std::int64_t WeightSteps(double w) {
  if (w < 0) w = 0;
  if (w > 1) w = 1;
  return static_cast<std::int64_t>(w * 1024 + 0.5);
}

// A variable of any class but kDigitWord stands for its class: the hash of the class's
// number as one byte.
inline std::uint64_t ClassHash(TokenClass cls) {
  const unsigned char byte = static_cast<unsigned char>(cls);
  return XXH3_64bits_withSeed(&byte, 1, kClassSeed);
}

// A word stands for its text; a digit-bearing word for its shape (each run of digits
// replaced by one '#'), unless it has three or more digit runs or is longer than 64 bytes,
// when it is an opaque identifier and stands for its class.
inline std::uint64_t TokenHash(std::string_view text, TokenClass cls) {
  if (cls == TokenClass::kWord) return XXH3_64bits(text.data(), text.size());
  // A literal (true, false, null...) stands for its key: the text up to and including its
  // last ':', hashed with the seed "logfold" + 3 (none: the empty key).
  if (cls == TokenClass::kLiteral) {
    const std::size_t colon = text.rfind(':');
    return XXH3_64bits_withSeed(text.data(), colon == std::string_view::npos ? 0 : colon + 1,
                                0x6c6f67666f6c6403ULL);
  }
  if (cls != TokenClass::kDigitWord) return ClassHash(cls);
  std::string shape;
  int digit_runs = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool digit = text[i] >= '0' && text[i] <= '9';
    const bool previous_digit = i > 0 && text[i - 1] >= '0' && text[i - 1] <= '9';
    if (!digit) {
      shape += text[i];
    } else if (!previous_digit) {
      shape += '#';
      ++digit_runs;
    }
  }
  if (digit_runs >= 3 || text.size() > 64) return ClassHash(TokenClass::kDigitWord);
  return XXH3_64bits_withSeed(shape.data(), shape.size(), kClassSeed);
}

struct WeightedHash {
  std::uint64_t hash;
  std::int64_t weight;
};

// Every token is a feature; with pairs on, so is every adjacent pair of tokens, hashed as the
// two token hashes' 16 bytes (native byte order) and weighing as the lighter of the two.
// Skipped positions (skip[i] != 0; an empty vector skips none) give no feature and no pair.
inline std::vector<WeightedHash> Features(std::string_view message,
                                          const std::vector<Token>& tokens, const Weights& weights,
                                          const std::vector<std::uint8_t>& skip = {}) {
  std::vector<WeightedHash> features;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!skip.empty() && skip[i] != 0) continue;
    const Token& t = tokens[i];
    const std::uint64_t hash = TokenHash(message.substr(t.offset, t.length), t.cls);
    const std::int64_t weight = weights.by_class[static_cast<int>(t.cls)];
    features.push_back({hash, weight});
    const bool previous_kept = i > 0 && (skip.empty() || skip[i - 1] == 0);
    if (weights.pairs && previous_kept) {
      const Token& p = tokens[i - 1];
      const std::uint64_t previous_hash = TokenHash(message.substr(p.offset, p.length), p.cls);
      unsigned char bytes[16];
      std::memcpy(bytes, &previous_hash, 8);
      std::memcpy(bytes + 8, &hash, 8);
      const std::int64_t previous_weight = weights.by_class[static_cast<int>(p.cls)];
      features.push_back({XXH3_64bits_withSeed(bytes, sizeof bytes, kPairSeed),
                          previous_weight < weight ? previous_weight : weight});
    }
  }
  return features;
}

// Charikar's SimHash: each feature votes +weight on the bits set in its hash and -weight on
// the others; a bit of the fingerprint is 1 when its total is positive.
inline std::uint64_t SimHash(const std::vector<WeightedHash>& features) {
  std::int64_t votes[64] = {};
  for (const WeightedHash& f : features) {
    for (int bit = 0; bit < 64; ++bit) {
      if ((f.hash >> bit) & 1) {
        votes[bit] += f.weight;
      } else {
        votes[bit] -= f.weight;
      }
    }
  }
  std::uint64_t fingerprint = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (votes[bit] > 0) fingerprint |= std::uint64_t{1} << bit;
  }
  return fingerprint;
}

inline std::uint64_t Fingerprint(std::string_view message, const std::vector<Token>& tokens,
                                 const Weights& weights = Weights()) {
  return SimHash(Features(message, tokens, weights));
}

}  // namespace logfold::reference

#endif  // LOGFOLD_TESTS_FUZZ_REFERENCE_FINGERPRINT_H_
