// Tokenizer: splits a message into tokens and tags each with a class, so variable parts
// (numbers, ids, addresses, times, paths) can be masked and weighted low.
#ifndef LOGFOLD_PIPELINE_TOKENIZER_H_
#define LOGFOLD_PIPELINE_TOKENIZER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "pipeline/byte_blocks.h"

namespace logfold {

enum class TokenClass : std::uint8_t {
  kWord,       // constant-looking text: no digits, not a known variable shape
  kInteger,    // 42, -7
  kFloat,      // 3.14, 1e-3, 0.5s is kDigitWord
  kHex,        // 0x1f, deadbeef01 (long hex runs with a digit), and opaque base64 ids
               // (keys, hashes, tokens: 16+ base64 characters that switch often between
               // upper case, lower case and digits, e.g. SHA256:AbCd/e+Fg1H...), and flag
               // sets (+E(0)K, -S: see Tokenize)
  kIPv4,       // 10.0.0.1, 10.0.0.1:8080
  kIPv6,       // fe80::1, [::1]:514
  kMac,        // 00:1a:2b:3c:4d:5e
  kUuid,       // 8-4-4-4-12 hex
  kDateTime,   // 2024-03-01, 12:34:56.789, 2024-03-01T00:00:00Z
  kPath,       // /var/log/x.1, /health: a token beginning with '/', or holding a '/' and a digit
               // (not TCP_MISS/200, a word, nor an RPC method's full name, /pkg.Service/Method,
               // a word), and media types (text/css, image/png)
  kUrl,        // scheme://... (holding a digit)
  kEmail,      // user@example.org, and user@host with a one-label host (root@vm)
  kHostPort,   // name.example.org:5070, and host names holding a digit: a DNS name of three
               // or more labels ending in a lower-case letter label (host-1-2.example.net),
               // or a name of letters, digits and '-' after from/to/host/rhost/hostname/server
  kDigitWord,  // any other token with a digit: its shape (digits folded) is kept, e.g. en#
  kLiteral,    // true, false, null, nil, none as a value: right after '=' or ':' (enabled=null,
               // "flag: True") or after a key's ':' inside the token (overlap:true, hashed
               // with its key, so overlap:true ~ overlap:false but not visible:true)
  kEmpty,      // an empty value: zero length, inside (), [], {}, "", '' or after a key= that
               // nothing follows; so "set to ()" and "set to (a b)" align on it
  kCount_,     // number of classes; not a class
};

std::string_view TokenClassName(TokenClass cls);

inline bool IsVariableClass(TokenClass cls) { return cls != TokenClass::kWord; }

struct Token {
  std::uint32_t offset;  // into the message
  std::uint32_t length;
  TokenClass cls;

  bool operator==(const Token&) const = default;
};

// Byte shapes: each byte falls in one of these kinds. The union over a token's bytes (its
// shape) rules out class tests that cannot succeed, e.g. a token without digits is a word
// unless it could be a URL or an e-mail address.
enum ByteShape : std::uint32_t {
  kShapeDigit = 1u << 0,      // 0-9
  kShapeHexLetter = 1u << 1,  // a-f A-F
  kShapeLetterTZ = 1u << 2,   // T Z (date/time letters)
  kShapeLetterX = 1u << 3,    // x X (0x prefix)
  kShapeLetter = 1u << 4,     // any other ASCII letter
  kShapeDot = 1u << 5,
  kShapeColon = 1u << 6,
  kShapeDash = 1u << 7,
  kShapeSlash = 1u << 8,
  kShapeAt = 1u << 9,
  kShapePlus = 1u << 10,
  kShapeOther = 1u << 11,      // any other byte that is not a separator
  kShapeSeparator = 1u << 12,  // ends a token (see Tokenizer::Tokenize)
};

// The union of the byte shapes of `text`.
std::uint32_t ShapeOf(std::string_view text);

// Tokenizer::Classify given the token's shape (ShapeOf(token)).
TokenClass ClassifyWithShape(std::string_view token, std::uint32_t shape);
// The same running every class test, whatever the shape: the definition the shape's
// shortcuts must agree with (checked by tests).
TokenClass ClassifyUnguarded(std::string_view token);

// true, false, null, nil or none, in any case.
bool IsLiteralWord(std::string_view word);
// A month's name, full or its first three letters, in any case (Jun, june, JUNE).
bool IsMonthName(std::string_view word);
// A capitalised month or weekday name, full or its first three letters (Jun, Mon, Monday).
bool IsDateName(std::string_view word);

// from, to, host, rhost, hostname or server (any case): a word a host name follows.
bool IsHostKey(std::string_view word);

class Tokenizer {
 public:
  struct Options {
    // Tokens beyond this are ignored for fingerprinting (the template keeps them verbatim).
    std::uint32_t max_tokens = 128;
    // How token boundaries are found (every kernel gives the same tokens; tests pin one).
    ByteBlockKernel kernel = ByteBlockKernel::kAuto;
    bool operator==(const Options&) const = default;
  };

  Tokenizer() = default;
  explicit Tokenizer(Options options) : options_(options) {}

  // Splits `message` into `out` (cleared first; capacity reused, so no allocation once warm).
  // Tokens are maximal runs between separators (white space and , ; = ( ) [ ] { } " ' < >);
  // a trailing ':' or '.' is not part of a token. Separator text is kept implicitly: it is
  // what lies between tokens, so a template can be rebuilt from the original message.
  // A set of one-letter flags written as one field is one token across its parentheses, of
  // class kHex: a sign, capitals, then digits in parentheses each followed by capitals
  // (`+E(0)K`, `-E(0)DK`, `-S`: a DNS server's query flags), at most 16 bytes, after a blank,
  // an opening bracket or quote, '=', ',' or the start and before a blank, a closer, ',', ';'
  // or the end (`-v` and `+E(0)Kx` stay as they were).
  // Classes follow Classify, then the token's neighbours (the context rules):
  // - a literal word (true, false, null, nil, none) after a gap holding '=' or ':' is kLiteral;
  // - a month or weekday name (Jun, June, Mon, Monday; capitalised) next to a number or a time
  //   (only spaces and commas between) is kDateTime, as are such names before it in a row;
  // - a digit-bearing name of letters, digits and '-' (starting with a letter) right after
  //   from, to, host, rhost, hostname or server is kHostPort;
  // - a name (a letter, then letters, digits, '-' and '.') glued to the '[' of a bracketed
  //   IPv4 or IPv6 address is kHostPort: the address's host name (localhost[127.0.0.1]), and
  //   so is such a name holding '-' or '.' before " (" and the address and ')'
  //   (bridge-dead (127.0.0.1:51886));
  // - a message catalogue code right before a ':' (two or more capitals, an optional '-' or
  //   '_', four or more digits: "AH10479:", "ORA-00942:") is kWord: it names the event
  //   (CPU0:, eth1: stay digit-bearing words);
  // - a return or reason code glued to its name (letters, `rc` or ending in "code" or
  //   "status", any case, then one to three digits: rc0, rc135, exitcode1) is kWord, and so
  //   is each member of a tuple of one-digit numbers ('(' after a blank or at the start, two
  //   to eight such numbers apart by ',' or ", ", then ')': (0, 5)): an enumeration's values;
  // - an HTTP status (three digits, 100 to 599) right after a token starting "HTTP/", with
  //   only quotes and spaces between ("GET / HTTP/1.1" 500), is kWord: an enumeration value,
  //   hashed by its text, which the matcher protects (a 500 must not fold among 200s); so is
  //   one after a key whose name ends in "status" or "code" and a ':' (`status: 409`,
  //   `"statusCode": 503`), only quotes and spaces besides, or blanks alone after a key that
  //   is an identifier of parts (`RespStatus 503`, `http_status 404`); not after '=' (pinned
  //   prints); and one that opens a double-quoted text before a blank and a letter or digit
  //   (a reply: `"550 Permission denied."`, `"213 4096"`);
  // - an empty bracket or quote pair, or a '=' right after a token and followed by white space,
  //   ',' ';' or the end, yields a zero-length kEmpty token (at the closer, after the '=').
  void Tokenize(std::string_view message, std::vector<Token>& out) const;

  // Classifies one token (no separators inside).
  static TokenClass Classify(std::string_view token);

  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_TOKENIZER_H_
