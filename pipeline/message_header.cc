// MessageHeader implementation: one left-to-right pass over at most a few fields of the line,
// classifying each by its bytes (no regex, no allocation).
#include "pipeline/message_header.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <span>
#include <utility>

namespace logfold {
namespace {

enum class Kind : std::uint8_t { kTime, kLevel, kBracket, kDash, kName, kOther };

struct Field {
  std::size_t begin, end;  // the field as written ("[main]", "sshd[12]:")
  // Without a trailing ':' or ',' (and brackets). Raw, not a string_view: the field array is
  // left uninitialised, and a string_view member would be zeroed for every slot of every line.
  const char* core_data;
  std::size_t core_size;
  Kind kind;
  bool evidence;  // a time of day, a date, or a month or weekday name
  bool colon;     // ends with ':'

  std::string_view core() const { return {core_data, core_size}; }
  void SetCore(std::string_view c) { core_data = c.data(), core_size = c.size(); }
};

constexpr std::size_t kMaxFields = 24;

bool IsSpace(char c) { return c == ' ' || c == '\t'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }

char Lower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsLower(std::string_view word, std::string_view lower) {
  if (word.size() != lower.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (Lower(word[i]) != lower[i]) return false;
  }
  return true;
}

// Word lists are matched by length and first letter before any comparison: most words of
// a line are neither, and this runs for the first fields of every line.
// Digits and date/time punctuation only, with a digit; a dotted quad is an address, not a
// time. Sets `evidence` for a time of day (a colon) or a date (two separators).
bool IsTimeWord(std::string_view w, bool& evidence) {
  int digits = 0, colons = 0, dots = 0, dashes = 0, slashes = 0;
  for (char c : w) {
    if (IsDigit(c)) {
      ++digits;
    } else if (c == ':') {
      ++colons;
    } else if (c == '.') {
      ++dots;
    } else if (c == '-') {
      ++dashes;
    } else if (c == '/') {
      ++slashes;
    } else if (c != ',' && c != '+' && c != 'T' && c != 'Z') {
      return false;
    }
  }
  if (digits == 0) return false;
  if (dots == 3 && dashes == 0 && slashes == 0) return false;  // 10.0.0.1 or 10.0.0.1:80
  evidence = colons > 0 || dots + dashes + slashes >= 2;
  return true;
}

constexpr std::string_view kShortCalendar[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                               "aug", "sep", "oct", "nov", "dec", "mon", "tue",
                                               "wed", "thu", "fri", "sat", "sun"};
constexpr std::string_view kLongCalendar[] = {
    "january", "february",  "march",    "april",    "june",     "july",
    "august",  "september", "october",  "november", "december", "monday",
    "tuesday", "wednesday", "thursday", "friday",   "saturday", "sunday"};
constexpr std::string_view kLevels[] = {
    "trace", "debug",    "info", "notice", "warn",  "warning", "error", "err",    "severe",
    "fatal", "critical", "crit", "alert",  "emerg", "fine",    "finer", "finest", "verbose"};

bool InList(std::string_view word, std::span<const std::string_view> list) {
  const char first = Lower(word[0]);
  for (std::string_view w : list) {
    if (w.size() == word.size() && w[0] == first && EqualsLower(word, w)) return true;
  }
  return false;
}

bool IsCalendarName(std::string_view w) {
  if (w.size() < 3 || w.size() > 9 || !IsUpper(w[0])) return false;
  return InList(w, w.size() == 3 ? std::span<const std::string_view>(kShortCalendar)
                                 : std::span<const std::string_view>(kLongCalendar));
}

bool IsLevelName(std::string_view w) {
  return w.size() >= 3 && w.size() <= 8 && InList(w, kLevels);
}

// A level word as a logging library writes it: upper case or capitalised bare ("INFO",
// "Info"), any case inside brackets ("[notice]").
bool IsLevelWord(std::string_view w, bool bracketed) {
  if (w.empty() || (!bracketed && !IsUpper(w[0])) || !IsLevelName(w)) return false;
  if (bracketed) return true;
  const bool rest_upper = std::all_of(w.begin() + 1, w.end(), IsUpper);
  const bool rest_lower = std::all_of(w.begin() + 1, w.end(), IsLower);
  return rest_upper || rest_lower;
}

// Reads the field starting at line[p] (not a space) into f; false if it cannot be one.
bool ReadField(std::string_view line, std::size_t p, Kind previous, Field& f) {
  f = Field{p, p, line.data() + p, 0, Kind::kOther, false, false};
  if (line[p] == '[') {
    int depth = 0;
    std::size_t q = p;
    for (; q < line.size() && q - p < 200; ++q) {
      if (line[q] == '[') ++depth;
      if (line[q] == ']' && --depth == 0) break;
    }
    if (q >= line.size() || line[q] != ']') return false;
    f.end = q + 1;
    if (f.end < line.size() && line[f.end] == ':') {
      f.colon = true;
      ++f.end;
    }
    f.SetCore(line.substr(p + 1, q - p - 1));
    const std::string_view core = f.core();
    if (f.end < line.size() && !IsSpace(line[f.end])) return false;  // "[x]y": not a field
    // A bracket of time words is a timestamp ("[10.30 16:49:06]", "[Sun Dec 04 ...]").
    bool all_time = !core.empty(), evidence = false;
    std::size_t i = 0;
    while (i < core.size() && all_time) {
      while (i < core.size() && IsSpace(core[i])) ++i;
      std::size_t j = i;
      while (j < core.size() && !IsSpace(core[j])) ++j;
      if (j > i) {
        const std::string_view w = core.substr(i, j - i);
        bool e = false;
        if (IsCalendarName(w)) {
          evidence = true;
        } else if (IsTimeWord(w, e)) {
          evidence |= e;
        } else {
          all_time = false;
        }
      }
      i = j;
    }
    if (all_time) {
      f.kind = Kind::kTime;
      f.evidence = evidence;
    } else {
      f.kind = IsLevelWord(core, true) ? Kind::kLevel : Kind::kBracket;
    }
    return true;
  }
  std::size_t q = p;
  while (q < line.size() && !IsSpace(line[q])) ++q;
  f.end = q;
  std::string_view w = line.substr(p, q - p);
  if (w.size() > 1 && w.back() == ':') {
    f.colon = true;
    w.remove_suffix(1);
  } else if (w.size() > 1 && w.back() == ',') {
    w.remove_suffix(1);
  }
  f.SetCore(w);
  if (w == "-" || w == "|") {
    f.kind = Kind::kDash;
    return true;
  }
  bool evidence = false;
  if (IsTimeWord(w, evidence) && !f.colon) {
    f.kind = Kind::kTime;
    f.evidence = evidence;
  } else if (IsCalendarName(w) && !f.colon) {
    f.kind = Kind::kTime;
    f.evidence = true;
  } else if (IsLevelWord(w, false) ||
             (w.size() == 1 && previous == Kind::kTime &&
              std::string_view("VDIWEFA").find(w[0]) != std::string_view::npos)) {
    f.kind = Kind::kLevel;
  } else {
    // A name: a host, program or logger ("chrome.exe *64"). Quotes or '=' make it message
    // text, not a header field.
    const bool text = std::any_of(
        w.begin(), w.end(), [](char c) { return c == '"' || c == '\'' || c == '=' || c == ','; });
    f.kind = text ? Kind::kOther : Kind::kName;
  }
  return true;
}

// Can `word` be a time or level field (or a dash, or a bracket)? ReadField's tests on the
// bare word, without building a field: a superset of what the walk below accepts first.
bool MayBeTimeOrLevel(std::string_view word) {
  const char c = word[0];
  if (c == '[' || c == '|' || word == "-") return true;
  if (word.size() > 1 && (word.back() == ':' || word.back() == ',')) word.remove_suffix(1);
  if (IsUpper(c) && (IsCalendarName(word) || IsLevelName(word))) return true;
  bool evidence = false;
  return (IsDigit(c) || !IsUpper(c) || c == 'T' || c == 'Z') && !IsLower(c) &&
         IsTimeWord(word, evidence);
}

// The end of the word starting at line[p]: the next space or tab, eight bytes at a time.
std::size_t WordEnd(std::string_view line, std::size_t p) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  auto has_zero = [](std::uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  while (p + 8 <= line.size()) {
    std::uint64_t v;
    std::memcpy(&v, line.data() + p, sizeof v);
    // The lowest flagged byte is exact (a false flag can only follow a true one).
    const std::uint64_t hit = has_zero(v ^ (' ' * kOnes)) | has_zero(v ^ ('\t' * kOnes));
    if (hit != 0) return p + static_cast<std::size_t>(std::countr_zero(hit)) / 8;
    p += 8;
  }
  while (p < line.size() && !IsSpace(line[p])) ++p;
  return p;
}

// Most lines have no header: the walk below needs a time or level field among the first
// three (after a dash, or a name before the time), so a line whose first three words cannot
// be one is settled here, without reading fields.
bool MayHaveHeader(std::string_view line) {
  std::size_t p = 0;
  for (int word = 0; word < 3; ++word) {
    while (p < line.size() && IsSpace(line[p])) ++p;
    if (p >= line.size()) return false;
    const std::size_t q = WordEnd(line, p);
    if (MayBeTimeOrLevel(line.substr(p, q - p))) return true;
    p = q;
  }
  return false;
}

}  // namespace

MessageHeader ParseMessageHeader(std::string_view line) {
  MessageHeader none;
  line = line.substr(0, std::min(line.size(), kMaxHeaderBytes));
  if (!MayHaveHeader(line)) return none;
  // Fields are read only as far as the walk below looks: a line without a header costs one
  // or two fields.
  std::array<Field, kMaxFields> fields;
  std::size_t n = 0, p = 0;
  bool at_end = false;
  const auto have = [&](std::size_t i) {
    while (n <= i && !at_end && n < kMaxFields) {
      while (p < line.size() && IsSpace(line[p])) ++p;
      const Kind previous = n == 0 ? Kind::kOther : fields[n - 1].kind;
      if (p >= line.size() || !ReadField(line, p, previous, fields[n])) {
        at_end = true;
        break;
      }
      p = fields[n++].end;
    }
    return i < n;
  };
  std::size_t i = 0;
  if (have(i) && fields[i].kind == Kind::kDash) ++i;  // "- 1117838570 ..." (a missing field)
  // A source name (a file) may come before the time.
  if (have(i) && fields[i].kind == Kind::kName && !fields[i].colon && have(i + 1) &&
      fields[i + 1].kind == Kind::kTime) {
    ++i;
  }
  if (!have(i) || (fields[i].kind != Kind::kTime && fields[i].kind != Kind::kLevel)) return none;

  MessageHeader h;
  bool evidence = false;
  std::size_t fixed_end = 0;       // end of the last time/level/bracket field
  std::size_t body = 0;            // set when a terminator is found
  Kind last_fixed = Kind::kOther;  // kind of that field
  std::size_t names = 0, first_name = 0;
  for (; body == 0 && have(i); ++i) {
    const Field& f = fields[i];
    switch (f.kind) {
      case Kind::kTime:
        // Hosts may stand between time fields ("dn228 Nov 9 ..."); after a level or a thread
        // a number is the message's.
        if (names > 2 || !h.level.empty() || last_fixed == Kind::kBracket) goto done;
        names = 0;
        evidence |= f.evidence;
        fixed_end = f.end, last_fixed = f.kind;
        break;
      case Kind::kLevel:
        if (!h.level.empty() || names > 3) goto done;  // source names before it ("RAS KERNEL")
        names = 0;
        evidence = true;
        h.level = f.core();
        fixed_end = f.end, last_fixed = f.kind;
        if (f.colon) body = f.end;
        break;
      case Kind::kBracket:
        if (names == 1) {  // "nova.compute.manager [req-...]": a logger and its context
          h.logger = fields[first_name].core();
          body = f.end;
          break;
        }
        if (names > 1 || !evidence) goto done;
        fixed_end = f.end, last_fixed = f.kind;  // a thread
        if (f.colon) body = f.end;
        break;
      case Kind::kDash:
        if (names > 0 && names <= 2) {  // "chrome.exe - ..."
          h.logger = fields[i - 1].core();
          body = f.end;
        } else if (names == 0 && last_fixed == Kind::kBracket) {  // "[thread] - ..."
          body = f.end;
        } else if (names == 0) {
          fixed_end = f.end;  // a separator between time and level
        } else {
          goto done;
        }
        break;
      case Kind::kName:
        if (f.colon) {
          // A host and a program after the time ("host sshd[1]:", "host sandboxd[129]
          // ([31211]):"); after a level or a thread only the logger itself.
          if (names + 1 > (last_fixed == Kind::kTime ? 3u : 1u)) goto done;
          h.logger = f.core();
          body = f.end;
          break;
        }
        if (names++ == 0) first_name = i;
        if (names > 3) goto done;
        break;
      case Kind::kOther:
        goto done;
    }
  }
done:
  if (!evidence) return none;
  if (body == 0) {
    body = fixed_end;
    h.logger = {};
  }
  while (body < line.size() && IsSpace(line[body])) ++body;
  if (body == 0 || body >= line.size()) return none;
  h.body = static_cast<std::uint32_t>(body);
  return h;
}

int LevelSeverity(std::string_view level) {
  if (level.empty() || level.size() > 8) return -1;  // most lines: no header level
  if (level.size() == 1) {
    switch (level[0]) {
      case 'A':
      case 'F':
        return 2;  // Android's assert, fatal
      case 'E':
        return 3;
      case 'W':
        return 4;
      case 'I':
        return 6;
      case 'D':
      case 'V':
        return 7;
      default:
        return -1;
    }
  }
  static constexpr std::pair<std::string_view, int> kSeverities[] = {
      {"emerg", 0}, {"alert", 1}, {"crit", 2}, {"critical", 2}, {"fatal", 2},  {"severe", 2},
      {"err", 3},   {"error", 3}, {"warn", 4}, {"warning", 4},  {"notice", 5}, {"info", 6},
      {"debug", 7}, {"trace", 7}, {"fine", 7}, {"finer", 7},    {"finest", 7}, {"verbose", 7}};
  for (const auto& [word, severity] : kSeverities) {
    if (EqualsLower(level, word)) return severity;
  }
  return -1;
}

}  // namespace logfold
