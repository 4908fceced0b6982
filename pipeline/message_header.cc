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

#include "pipeline/template_match.h"

namespace logfold {
namespace {

// kLevelDate: a level letter fused with a date ("I0509", klog and glog); kLevelTag: a level
// letter and a tag ("D/WindowManager( 1702):", Android's brief format), a whole header end;
// kSource: a source location ("run.go:42", "{taskinstance.py:1138}"), the caller.
enum class Kind : std::uint8_t {
  kTime,
  kLevel,
  kLevelDate,
  kLevelTag,
  kSource,
  kBracket,
  kDash,
  kName,
  kOther
};

struct Field {
  std::size_t begin, end;  // the field as written ("[main]", "sshd[12]:")
  // Without a trailing ':' or ',' (and brackets). Raw, not a string_view: the field array is
  // left uninitialised, and a string_view member would be zeroed for every slot of every line.
  const char* core_data;
  std::size_t core_size;
  Kind kind;
  bool evidence;            // a time of day, a date, or a month or weekday name
  bool colon;               // ends with ':' (or is a name closed by ']': "file.go:12]")
  bool bracketed;           // written in brackets ("[  12.345678]", "[main]")
  std::uint8_t level_size;  // kLevelTag and kLevelDate: the level's bytes at `begin`
  // kLevel: the caller written after the level in one bracket ("[...:ERROR:bus.cc:405]").
  const char* caller_data;
  std::size_t caller_size;

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

bool IsDateSeparator(char c) { return c == '/' || c == '-' || c == '.'; }

bool IsTimeByte(char c) {
  return IsDigit(c) || c == ':' || c == '.' || c == '-' || c == '/' || c == ',' || c == '+' ||
         c == 'T' || c == 'Z';
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
// Levels only in brackets: "[Note]" (MySQL, MariaDB), "<Information>" (Poco, ClickHouse); bare,
// they begin messages ("Note: ...").
constexpr std::string_view kBracketLevels[] = {"note", "information"};

// A list of lower-case words indexed by their first letters: a word looked up is compared
// only with the list's words of its initial (a linear scan compared it with every one, and
// these lists are read for the first fields of every line).
class WordList {
 public:
  constexpr explicit WordList(std::span<const std::string_view> words) : words_(words) {
    for (std::size_t k = 0; k < words.size(); ++k) {
      by_initial_[static_cast<std::size_t>(words[k][0] - 'a')] |= std::uint32_t{1} << k;
    }
  }
  // `word` (not empty) in any case.
  bool Contains(std::string_view word) const {
    const auto initial = static_cast<unsigned>(Lower(word[0]) - 'a');
    if (initial >= 26) return false;
    for (std::uint32_t m = by_initial_[initial]; m != 0; m &= m - 1) {
      const std::string_view w = words_[static_cast<std::size_t>(std::countr_zero(m))];
      if (w.size() == word.size() && EqualsLower(word, w)) return true;
    }
    return false;
  }

 private:
  std::span<const std::string_view> words_;  // at most 32
  std::array<std::uint32_t, 26> by_initial_{};
};

constexpr WordList kShortCalendarList{kShortCalendar};
constexpr WordList kMonthList{std::span(kShortCalendar, 12)};
constexpr WordList kLongCalendarList{kLongCalendar};
constexpr WordList kLevelList{kLevels};
constexpr WordList kBracketLevelList{kBracketLevels};

// A date whose month is written as its short name between date separators, with time bytes
// around it and a digit: "28/Nov/2026:00:29:11" (the common log format's bracketed stamp).
bool IsDateWithMonth(std::string_view w) {
  std::size_t at = 0;
  while (at < w.size() && IsTimeByte(w[at])) ++at;
  if (at == 0 || at + 3 >= w.size() || !IsDateSeparator(w[at - 1]) || !IsDateSeparator(w[at + 3]) ||
      !kMonthList.Contains(w.substr(at, 3))) {
    return false;
  }
  const std::string_view after = w.substr(at + 3);
  return std::all_of(after.begin(), after.end(), IsTimeByte) &&
         std::any_of(w.begin(), w.end(), IsDigit);
}

bool IsCalendarName(std::string_view w) {
  if (w.size() < 3 || w.size() > 9 || !IsUpper(w[0])) return false;
  return (w.size() == 3 ? kShortCalendarList : kLongCalendarList).Contains(w);
}

// A time field that may follow names in a header ("dn228 Nov 9 12:01:01", BGL's
// "R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872"): a calendar name, a clock (two digits, ':', two
// digits) or a date opening with a four-digit year and a two-digit month; a package version
// after names ("2.11.2-2", "1:1.0.9-1", "2022.1-1") is message text, not a time.
bool IsStampAfterName(std::string_view w) {
  if (IsCalendarName(w)) return true;
  if (w.size() >= 7 && IsDigit(w[0]) && IsDigit(w[1]) && IsDigit(w[2]) && IsDigit(w[3]) &&
      !IsDigit(w[4]) && IsDigit(w[5]) && IsDigit(w[6])) {
    return true;
  }
  for (std::size_t i = 2; i + 2 < w.size(); ++i) {
    if (w[i] == ':' && IsDigit(w[i - 1]) && IsDigit(w[i - 2]) && IsDigit(w[i + 1]) &&
        IsDigit(w[i + 2])) {
      return true;
    }
  }
  return false;
}

bool IsLevelName(std::string_view w) {
  return w.size() >= 3 && w.size() <= 8 && kLevelList.Contains(w);
}

// A level in capitals with a verbosity digit ("VERBOSE1": Chromium's and glog's VLOG(1);
// "DEBUG2": PostgreSQL): the level word without the digit, else `w`.
std::string_view WithoutVerbosity(std::string_view w) {
  if (w.size() < 4 || !IsUpper(w[0]) || !IsDigit(w.back())) return w;  // most words
  for (std::size_t i = 1; i + 1 < w.size(); ++i) {
    if (!IsUpper(w[i])) return w;
  }
  return w.substr(0, w.size() - 1);
}

// A level word as a logging library writes it: upper case or capitalised bare ("INFO",
// "Info"), any case inside brackets ("[notice]"); in capitals, with a verbosity digit.
bool IsLevelWord(std::string_view w, bool bracketed) {
  if (bracketed && (w.size() == 4 || w.size() == 11) && kBracketLevelList.Contains(w)) return true;
  w = WithoutVerbosity(w);
  if (w.empty() || (!bracketed && !IsUpper(w[0])) || !IsLevelName(w)) return false;
  if (bracketed) return true;
  const bool rest_upper = std::all_of(w.begin() + 1, w.end(), IsUpper);
  const bool rest_lower = std::all_of(w.begin() + 1, w.end(), IsLower);
  return rest_upper || rest_lower;
}

bool IsLevelLetter(char c) { return std::string_view("VDIWEFA").find(c) != std::string_view::npos; }

bool IsLevelMark(char c) { return c == '*' || c == '#' || c == '.'; }

// "instance: 7d52e499-4284": a lower-case label, ": " and a value holding a digit.
bool IsLabelledValue(std::string_view w) {
  std::size_t i = 0;
  while (i < w.size() && (IsLower(w[i]) || w[i] == '_')) ++i;
  if (i == 0 || i + 2 >= w.size() || w[i] != ':' || w[i + 1] != ' ') return false;
  const std::string_view value = w.substr(i + 2);
  return std::any_of(value.begin(), value.end(), IsDigit);
}

bool AllDigits(std::string_view w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), IsDigit);
}

// "I0509": a level letter fused with the month and day (klog, glog).
bool IsLevelDate(std::string_view w) {
  return w.size() == 5 && (w[0] == 'I' || w[0] == 'W' || w[0] == 'E' || w[0] == 'F') &&
         AllDigits(w.substr(1));
}

// "run.go:42", "Foo.java:123", "{taskinstance.py:1138}": a file name with a short lower-case
// extension and a line number, where a logging library writes its caller.
bool IsSourceLocation(std::string_view w) {
  if (w.size() < 4 || !(IsDigit(w.back()) || w.back() == '}')) return false;  // most names
  if (w.size() > 2 && w.front() == '{' && w.back() == '}') w = w.substr(1, w.size() - 2);
  const std::size_t colon = w.rfind(':');
  if (colon == std::string_view::npos || !AllDigits(w.substr(colon + 1))) return false;
  const std::string_view file = w.substr(0, colon);
  const std::size_t dot = file.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  const std::string_view ext = file.substr(dot + 1);
  return !ext.empty() && ext.size() <= 5 && std::all_of(ext.begin(), ext.end(), IsLower);
}

// "app/4752", "sshd[12]": a program and its pid.
bool CarriesPid(std::string_view w) {
  const std::size_t sep = w.find_first_of("/[");
  if (sep == std::string_view::npos || sep == 0 || !(IsLower(w[0]) || IsUpper(w[0]))) return false;
  std::string_view pid = w.substr(sep + 1);
  if (w[sep] == '[') {
    if (pid.empty() || pid.back() != ']') return false;
    pid.remove_suffix(1);
  }
  return AllDigits(pid);
}

// A peer's endpoint: an IPv4 address or a host's name, ':' and a port, alone or after a name
// and '/' ("127.0.0.1:46810", "alice/127.0.0.1:46810", "mtalk.google.com:5228", "wpad:80").
bool IsPeerEndpoint(std::string_view w) {
  if (w.size() < 3 || !IsDigit(w.back())) return false;  // most words
  if (const std::size_t slash = w.find('/'); slash != std::string_view::npos) {
    if (slash == 0) return false;
    for (char c : w.substr(0, slash)) {
      if (!IsUpper(c) && !IsLower(c) && !IsDigit(c) && c != '-' && c != '_' && c != '.') {
        return false;
      }
    }
    w.remove_prefix(slash + 1);
  }
  const std::size_t colon = w.rfind(':');
  if (colon == std::string_view::npos || w.size() - colon - 1 == 0 || w.size() - colon - 1 > 5 ||
      !AllDigits(w.substr(colon + 1))) {
    return false;
  }
  // A host's name (labels of letters, digits, '-' and '_' joined by '.', holding a letter),
  // ':' and the port.
  if (std::any_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(colon),
                  [](char c) { return IsUpper(c) || IsLower(c); })) {
    std::size_t label = 0;
    for (char c : w.substr(0, colon)) {
      if (c == '.') {
        if (label == 0) return false;
        label = 0;
      } else if (IsUpper(c) || IsLower(c) || IsDigit(c) || c == '-' || c == '_') {
        ++label;
      } else {
        return false;
      }
    }
    return label > 0;
  }
  // Four dotted numbers of one to three digits, ':' and a port of one to five digits.
  std::size_t k = 0;
  for (int part = 0; part < 5; ++part) {
    const std::size_t start = k;
    while (k < w.size() && IsDigit(w[k])) ++k;
    const std::size_t digits = k - start;
    if (digits == 0 || digits > (part == 4 ? 5u : 3u)) return false;
    if (part == 4) break;
    if (k >= w.size() || w[k] != (part == 3 ? ':' : '.')) return false;
    ++k;
  }
  return k == w.size();
}

// "AH00124", "ORA01555": a message code (capitals then digits) names the message, not a logger.
bool IsMessageCode(std::string_view w) {
  std::size_t i = 0;
  while (i < w.size() && IsUpper(w[i])) ++i;
  return i >= 1 && i <= 4 && w.size() - i >= 3 && AllDigits(w.substr(i));
}

// "app.ERROR" (a channel and a level, Monolog): the level part, or empty.
std::string_view ChannelLevel(std::string_view w) {
  const std::size_t dot = w.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  const std::string_view level = w.substr(dot + 1);
  return IsLevelWord(level, false) && std::all_of(level.begin(), level.end(), IsUpper)
             ? level
             : std::string_view{};
}

// A bracket of fields joined by ':' without spaces, one of them (not the first) a level word:
// a module and its level ("[core:error]", Apache 2.4), or a pid, tid, time, level and caller
// ("[1234:5678:1127/220000.123456:WARNING:file.cc(123)]", Chromium). `caller` is what follows
// the level, if anything.
bool LevelInColonFields(std::string_view core, std::string_view& level, std::string_view& caller) {
  const std::size_t first = core.find(':');
  if (first == std::string_view::npos || first == 0 || core.find(' ') != std::string_view::npos) {
    return false;
  }
  for (std::size_t b = first + 1; b < core.size();) {
    std::size_t e = core.find(':', b);
    if (e == std::string_view::npos) e = core.size();
    if (IsLevelWord(core.substr(b, e - b), true)) {
      level = core.substr(b, e - b);
      caller = e < core.size() ? core.substr(e + 1) : std::string_view{};
      return true;
    }
    b = e + 1;
  }
  return false;
}

// The length of a level letter and tag ending the header, as Android's brief format writes
// it ("D/WindowManager( 1702): ", "I/Zygote  (  123): ", "W/System.err: "), or 0. The tag has
// no spaces before a ':' ("I/O error:" is a message) and is more than one byte ("I/O:").
std::size_t LevelTagEnd(std::string_view line, std::size_t p, std::string_view& tag) {
  if (p + 3 >= line.size() || line[p + 1] != '/' || !IsLevelLetter(line[p])) return 0;
  const std::size_t limit = std::min(line.size(), p + 96);
  std::size_t q = p + 2;
  while (q < limit && line[q] != '(' && line[q] != ':') ++q;
  if (q >= limit) return 0;
  std::size_t tag_end = q;
  while (tag_end > p + 2 && IsSpace(line[tag_end - 1])) --tag_end;
  tag = line.substr(p + 2, tag_end - p - 2);
  if (tag.size() < 2 || IsSpace(tag[0])) return 0;
  if (line[q] == ':') {
    if (tag_end != q || tag.find(' ') != std::string_view::npos) return 0;
  } else {
    ++q;  // a pid in parentheses, padded with spaces
    while (q < limit && (IsSpace(line[q]) || IsDigit(line[q]))) ++q;
    if (q + 1 >= limit || line[q] != ')' || line[q + 1] != ':') return 0;
    ++q;
  }
  return q + 1 < line.size() && !IsSpace(line[q + 1]) ? 0 : q + 1;
}

// "INFO:myapp.db:message" (Python logging's default format): the length of the level and the
// logger with their colons, or 0.
std::size_t LevelLoggerEnd(std::string_view w, std::size_t& level_size) {
  if (w.size() < 6 || !IsUpper(w[0])) return 0;
  const std::size_t colon = w.substr(0, 9).find(':');
  if (colon == std::string_view::npos || colon < 3 || colon > 8) return 0;
  const std::string_view level = w.substr(0, colon);
  if (!std::all_of(level.begin(), level.end(), IsUpper) || !IsLevelName(level)) return 0;
  const std::size_t second = w.find(':', colon + 1);
  if (second == std::string_view::npos || second == colon + 1) return 0;
  level_size = colon;
  return second + 1;
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

// Does a separator field (" - ", " | ", " -- ") follow the word ending at line[q]?
bool SeparatorFollows(std::string_view line, std::size_t q) {
  if (q >= line.size() || line[q] != ' ') return false;
  std::size_t r = q + 1;
  const char c = r < line.size() ? line[r] : '\0';
  if (c != '-' && c != '|') return false;
  while (r < line.size() && line[r] == c) ++r;
  return r - q - 1 <= 3 && (r == line.size() || line[r] == ' ');
}

// Does a bracket open after line[p] and its spaces? (Checked before reading it as a field:
// most messages do not start with one.)
bool BracketAt(std::string_view line, std::size_t p) {
  while (p < line.size() && IsSpace(line[p])) ++p;
  return p < line.size() && line[p] == '[';
}

// Is there anything but spaces after line[p]?
bool TextAfter(std::string_view line, std::size_t p) {
  while (p < line.size() && IsSpace(line[p])) ++p;
  return p < line.size();
}

// Is what follows line[p] (after spaces) a single word?
bool OneWordAfter(std::string_view line, std::size_t p) {
  while (p < line.size() && IsSpace(line[p])) ++p;
  return p < line.size() && WordEnd(line, p) == line.size();
}

// Reads the field starting at line[p] (not a space) into f; false if it cannot be one.
bool ReadField(std::string_view line, std::size_t p, Kind previous, Field& f) {
  f = Field{p, p, line.data() + p, 0, Kind::kOther, false, false, false, 0, nullptr, 0};
  if (line[p] == '[') {
    f.bracketed = true;
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
    // "[x]y" is not a field; "[x][y]" is two ("[2024-05-09T12:34:56,123][INFO ][o.e.Node]").
    if (f.end < line.size() && !IsSpace(line[f.end]) && line[f.end] != '[') return false;
    // A bracket of time words is a timestamp ("[10.30 16:49:06]", "[Sun Dec 04 ...]").
    bool all_time = !core.empty(), evidence = false;
    std::size_t i = 0, words = 0;
    std::string_view only;
    while (i < core.size() && all_time) {
      while (i < core.size() && IsSpace(core[i])) ++i;
      std::size_t j = i;
      while (j < core.size() && !IsSpace(core[j])) ++j;
      if (j > i) {
        const std::string_view w = core.substr(i, j - i);
        only = w, ++words;
        bool e = false;
        if (IsCalendarName(w)) {
          evidence = true;
        } else if (w.size() > 1 && w[0] == '#' && AllDigits(w.substr(1))) {
          // a pid beside the time ("[2024-05-09T12:34:56.123456 #1234]", Ruby's Logger)
        } else if (IsTimeWord(w, e)) {
          evidence |= e;
        } else if (IsDateWithMonth(w)) {
          evidence = true;
        } else {
          all_time = false;
        }
      }
      i = j;
    }
    // Seconds since boot with microseconds ("[  12.345678]", the kernel's own stamp).
    if (all_time && words == 1 && only.size() >= 8 && only[only.size() - 7] == '.' &&
        AllDigits(only.substr(only.size() - 6)) && AllDigits(only.substr(0, only.size() - 7))) {
      evidence = true;
    }
    if (all_time) {
      f.kind = Kind::kTime;
      f.evidence = evidence;
    } else if (std::string_view trimmed = core.substr(0, core.find_last_not_of(' ') + 1);
               IsLevelWord(trimmed, true)) {
      f.kind = Kind::kLevel;  // "[notice]", "[INFO ]" (padded to its column)
      f.SetCore(trimmed);
    } else if (std::string_view level, caller; LevelInColonFields(core, level, caller)) {
      f.kind = Kind::kLevel;
      f.SetCore(level);
      f.caller_data = caller.data(), f.caller_size = caller.size();
    } else {
      f.kind = Kind::kBracket;
    }
    return true;
  }
  if (std::string_view tag; const std::size_t end = LevelTagEnd(line, p, tag)) {
    f.end = end, f.kind = Kind::kLevelTag, f.level_size = 1;
    f.SetCore(tag);
    return true;
  }
  const std::size_t q = WordEnd(line, p);
  f.end = q;
  std::string_view w = line.substr(p, q - p);
  // Only a line's first field: "INFO:name:" starts the line.
  std::size_t level_size = 0;
  if (const std::size_t end = previous == Kind::kOther ? LevelLoggerEnd(w, level_size) : 0;
      end != 0) {
    f.end = p + end, f.kind = Kind::kLevelTag;
    f.level_size = static_cast<std::uint8_t>(level_size);
    f.SetCore(w.substr(level_size + 1, end - level_size - 2));
    return true;
  }
  if (w.size() > 1 && w.back() == ':') {
    f.colon = true;
    w.remove_suffix(1);
  } else if (w.size() > 1 && w.back() == ',') {
    w.remove_suffix(1);
  } else if (w.size() > 1 && w.back() == ']' && w.find('[') == std::string_view::npos) {
    f.colon = true;  // "file.go:123]" closes a klog header as ':' closes others
    w.remove_suffix(1);
  }
  f.SetCore(w);
  // Separators: " - ", " | ", Ruby's "-- :" and Spring Boot's " --- ".
  if (w == "-" || w == "|" || w == "--" || w == "---" || w == ":") {
    f.kind = Kind::kDash;
    return true;
  }
  // Tab-separated columns write the level in any case ("2024-05-09T12:34:56Z\tinfo\t...").
  const bool tabbed = (q < line.size() && line[q] == '\t') || (p > 0 && line[p - 1] == '\t');
  bool evidence = false;
  if (w.size() > 4 && w.front() == '<' && w.back() == '>' &&
      IsLevelWord(w.substr(1, w.size() - 2), true)) {
    f.kind = Kind::kLevel;  // "<Information>" (Poco, ClickHouse)
    f.SetCore(w.substr(1, w.size() - 2));
  } else if (IsLevelDate(w) && !f.colon) {
    f.kind = Kind::kLevelDate;
    f.evidence = true;
    f.level_size = 1;
  } else if (IsTimeWord(w, evidence) && !f.colon) {
    f.kind = Kind::kTime;
    f.evidence = evidence;
  } else if (IsCalendarName(w) && !f.colon) {
    f.kind = Kind::kTime;
    f.evidence = true;
  } else if (previous == Kind::kTime && (w == "AM" || w == "PM") && !f.colon) {
    f.kind = Kind::kTime;  // "Nov 27, 2026 11:50:17 PM" (java.util.logging's SimpleFormatter)
  } else if (IsLevelWord(w, tabbed) ||
             (w.size() == 1 && previous == Kind::kTime && IsLevelLetter(w[0]))) {
    f.kind = Kind::kLevel;
  } else if (!f.colon && IsSourceLocation(w) &&
             (w.front() == '{' || tabbed || SeparatorFollows(line, q))) {
    // A caller in braces, in a tab-separated column or before a separator: a bare one
    // between spaces is as likely a host and port opening the message ("example.com:443").
    f.kind = Kind::kSource;
  } else {
    // A name: a host, program or logger ("chrome.exe *64"). Quotes or '=' make it message
    // text, not a header field.
    const bool text = std::any_of(
        w.begin(), w.end(), [](char c) { return c == '"' || c == '\'' || c == '=' || c == ','; });
    // Nor is a peer's endpoint right after the time fields (an address or a host's name in
    // lower case, with its port: `127.0.0.1:46810 peer info: ...`): a program writes its own
    // host without a port, so the endpoint opens the message (the peer it is about). Not a
    // class and its line (`OrderService:11`), the caller.
    f.kind = text || (previous == Kind::kTime && !f.colon && IsPeerEndpoint(w) &&
                      std::none_of(w.begin(), w.end(), IsUpper))
                 ? Kind::kOther
                 : Kind::kName;
    // A tag padded to its column before the colon ("I chatty  : ...", Android threadtime).
    // ("o.s.b.StartupInfoLogger        : ...", Spring Boot, after a thread).
    if (!text && !f.colon && (previous == Kind::kLevel || previous == Kind::kBracket)) {
      std::size_t r = q;
      while (r < line.size() && r - q < 16 && line[r] == ' ') ++r;
      if (r > q && r < line.size() && line[r] == ':' &&
          (r + 1 == line.size() || IsSpace(line[r + 1]))) {
        f.colon = true;
        f.end = r + 1;
      }
      // A logger with its class in parentheses before the colon: an instance and its class
      // ("shop.events (SelectExecutor): ..."), a capitalised name of letters and digits.
      if (!f.colon && q + 2 < line.size() && line[q] == ' ' && line[q + 1] == '(' &&
          IsUpper(line[q + 2])) {
        std::size_t close = q + 3;
        while (close < line.size() && close - q < 48 &&
               (IsUpper(line[close]) || IsLower(line[close]) || IsDigit(line[close]))) {
          ++close;
        }
        if (close + 1 < line.size() && line[close] == ')' && line[close + 1] == ':' &&
            (close + 2 == line.size() || IsSpace(line[close + 2]))) {
          f.colon = true;
          f.end = close + 2;
        }
      }
    }
  }
  return true;
}

// Can `word` be a time or level field (or a dash, or a bracket)? ReadField's tests on the
// bare word, without building a field: a superset of what the walk below accepts first.
[[gnu::always_inline]] inline bool MayBeTimeOrLevel(std::string_view word) {
  const char c = word[0];
  if (c == '[' || c == '|' || word == "-") return true;
  if (word.size() >= 4 && word[1] == '/' && IsLevelLetter(c)) return true;  // "D/Tag(": Android
  if (word.size() > 1 && (word.back() == ':' || word.back() == ',')) word.remove_suffix(1);
  if (IsUpper(c)) {
    if (IsCalendarName(word) || IsLevelName(word) || IsLevelDate(word)) return true;
    std::size_t level_size = 0;
    if (LevelLoggerEnd(word, level_size) != 0) return true;
  }
  bool evidence = false;
  return (IsDigit(c) || !IsUpper(c) || c == 'T' || c == 'Z') && !IsLower(c) &&
         IsTimeWord(word, evidence);
}

// Most lines have no header: the walk below needs a time or level field among the first
// three (after a dash, or a name before the time), so a line whose first three words cannot
// be one is settled here, without reading fields.
bool MayHaveHeader(std::string_view line, std::size_t p) {
  for (int word = 0; word < 3; ++word) {
    while (p < line.size() && IsSpace(line[p])) ++p;
    if (p >= line.size()) return false;
    const std::size_t q = WordEnd(line, p);
    if (MayBeTimeOrLevel(line.substr(p, q - p))) return true;
    p = q;
  }
  return false;
}

// "<6>" (a kernel or syslog priority written into a file): its length, or 0.
std::size_t PriorityPrefix(std::string_view line) {
  if (line.size() < 4 || line[0] != '<') return 0;
  std::size_t q = 1;
  while (q < line.size() && q <= 4 && IsDigit(line[q])) ++q;
  return q > 1 && q < line.size() && line[q] == '>' ? q + 1 : 0;
}

// Fields separated by '|' without spaces, after time words ("20171223-22:15:29:606|Step_LSC|
// 30002312|msg"): the header runs to the first field holding a space, or to the last '|'.
bool ParsePipeHeader(std::string_view line, MessageHeader& h) {
  const std::size_t bar = line.substr(0, 64).find('|');
  if (bar == std::string_view::npos || bar == 0 || IsSpace(line[bar - 1])) return false;
  bool evidence = false;
  for (std::size_t i = 0; i < bar;) {  // the time words before the first '|'
    std::size_t j = i;
    while (j < bar && !IsSpace(line[j])) ++j;
    bool e = false;
    if (j > i && !IsTimeWord(line.substr(i, j - i), e)) return false;
    evidence |= e;
    i = j + 1;
  }
  if (!evidence) return false;
  std::size_t start = bar + 1;
  for (int field = 0; field < 6; ++field) {
    const std::size_t next = line.find('|', start);
    if (next == std::string_view::npos) break;
    const std::string_view f = line.substr(start, next - start);
    if (f.find_first_of(" \t") != std::string_view::npos) break;
    if (h.level.empty() && IsLevelWord(f, true)) {
      h.level = f;
    } else if (h.logger.empty() && std::any_of(f.begin(), f.end(), IsUpper)) {
      h.logger = f;
    } else if (h.logger.empty() && std::any_of(f.begin(), f.end(), IsLower)) {
      h.logger = f;
    }
    start = next + 1;
  }
  while (start < line.size() && IsSpace(line[start])) ++start;
  if (start >= line.size()) return false;
  h.body = static_cast<std::uint32_t>(start);
  return true;
}

}  // namespace

bool IsMessageKey(std::string_view key) { return key == "msg" || key == "message"; }

namespace {

// Leading key=value fields (logfmt: Go's log/slog TextHandler, logrus, go-kit): keys of
// lower-case letters, values bare or in double quotes. Fields whose value is a time, a level
// or a caller are the header, which needs a time of day, a date or a level; the value of the
// next field is the message ("time=... level=INFO msg=\"disk full\"": `disk full"`).
bool ParseKeyValueHeader(std::string_view line, MessageHeader& h) {
  bool evidence = false;
  std::size_t p = 0;
  for (int field = 0; field < 6; ++field) {
    std::size_t k = p;
    while (k < line.size() && (IsLower(line[k]) || line[k] == '_' || line[k] == '.')) ++k;
    if (k == p || k + 1 >= line.size() || line[k] != '=') return false;
    const std::size_t v = k + 1;
    const bool quoted = line[v] == '"';
    std::size_t end = v + (quoted ? 1 : 0);
    while (end < line.size() && (quoted ? line[end] != '"' : !IsSpace(line[end]))) {
      end += quoted && line[end] == '\\' ? 2 : 1;
    }
    if (end > line.size()) return false;
    const std::string_view value =
        line.substr(v + (quoted ? 1 : 0), std::min(end, line.size()) - v - (quoted ? 1 : 0));
    bool time = !value.empty(), e = false;
    for (std::size_t i = 0; time && i < value.size();) {  // "2024-05-09 12:34:56" in quotes
      const std::size_t j = std::min(value.find(' ', i), value.size());
      time = j > i && IsTimeWord(value.substr(i, j - i), e);
      evidence |= e;
      i = j + 1;
    }
    if (!time) {
      if (h.level.empty() && IsLevelWord(value, true)) {
        h.level = value;
      } else if (h.logger.empty() && IsSourceLocation(value)) {
        h.logger = value;
      } else {
        // The message: after at least one header field holding a time or a level.
        if (field == 0 || (!evidence && h.level.empty())) return false;
        // A field of context before the message field (go-kit's `component="tsdb" msg=...`)
        // opens the message with its name, as the message field's own name would not.
        if (!IsMessageKey(line.substr(p, k - p))) {
          h.body = static_cast<std::uint32_t>(p);
          return true;
        }
        // An empty value ("msg= ") is no message: a message starts at a word; inside quotes,
        // after the blanks it opens with (msg="  frame: 0x2044").
        std::size_t body = v + (quoted ? 1 : 0);
        while (quoted && body < end && IsSpace(line[body])) ++body;
        if (body >= line.size() || IsSpace(line[body]) || (quoted && body >= end)) return false;
        h.body = static_cast<std::uint32_t>(body);
        h.quoted = quoted;
        return true;
      }
    }
    p = end + (quoted ? 1 : 0);
    if (p >= line.size() || !IsSpace(line[p])) return false;
    while (p < line.size() && IsSpace(line[p])) ++p;
  }
  return false;
}

// "kafka.server.ReplicaManager": three or more dotted identifiers, a package-qualified class.
bool IsQualifiedName(std::string_view name) {
  int dots = 0;
  bool start = true;
  for (char c : name) {
    if (c == '.') {
      if (start) return false;
      ++dots, start = true;
    } else if (IsUpper(c) || IsLower(c) || c == '_' || c == '$' || (!start && IsDigit(c))) {
      start = false;
    } else {
      return false;
    }
  }
  return dots >= 2 && !start;
}

// "... (kafka.server.ReplicaManager)": a package-qualified class in parentheses ending the line
// is the logger log4j's "%m (%c)" writes after the message; three or more dotted identifiers,
// so that a file name ("(app.conf)") or an address is not taken for one.
std::string_view TrailingLogger(std::string_view line) {
  if (line.size() < 8 || line.back() != ')') return {};
  const std::size_t open = line.rfind('(');
  if (open == std::string_view::npos || open == 0 || line[open - 1] != ' ' ||
      line.size() - open > 160) {
    return {};
  }
  const std::string_view name = line.substr(open + 1, line.size() - open - 2);
  return IsQualifiedName(name) ? name : std::string_view{};
}

// A logger written after the message, where the header has a level and no logger, is the
// header's: the event's logger, and left out of the message (`tail`).
void TakeTrailingLogger(std::string_view line, MessageHeader& h) {
  if (!h.logger.empty() || h.level.empty()) return;
  h.logger = TrailingLogger(line);
  if (h.logger.empty()) return;
  const std::size_t open = static_cast<std::size_t>(h.logger.data() - line.data()) - 2;  // " ("
  if (open > h.body) h.tail = static_cast<std::uint8_t>(line.size() - open);
}

}  // namespace

namespace {

// A header's shape, as the grammar read it: each field's kind and whether it ends with ':'
// (5 bits each, at most kShapeFields fields), the field count, and which field (1-based, 0
// none) holds the level and which the logger. 0 is no shape.
constexpr int kShapeFields = 10;
constexpr int kCountShift = 50, kLevelShift = 54, kLoggerShift = 59;

std::uint64_t FieldCode(const Field& f) {
  return (static_cast<std::uint64_t>(f.kind) << 1 | (f.colon ? 1 : 0)) + 1;
}

// The shape of header `h`, whose fields are fields[0, n) of `line` (read from its first byte),
// or 0 when the body does not start right after a field (Python's "LEVEL:name:" and the like
// are one field and do) or there are too many fields.
std::uint64_t ShapeOf(std::string_view line, std::span<const Field> fields,
                      const MessageHeader& h) {
  std::uint64_t shape = 0;
  const auto at = [&](std::string_view s) {
    return static_cast<std::size_t>(s.data() - line.data());  // a header's level or logger
  };
  const std::size_t level = h.level.empty() ? line.size() : at(h.level);
  const std::size_t logger = h.logger.empty() ? line.size() : at(h.logger);
  for (std::size_t k = 0; k < fields.size() && k < kShapeFields; ++k) {
    const Field& f = fields[k];
    if (f.end > h.body) return 0;
    shape |= FieldCode(f) << (5 * k);
    if (level >= f.begin && level < f.end) {
      shape |= static_cast<std::uint64_t>(k + 1) << kLevelShift;
    }
    if (logger >= f.begin && logger < f.end) {
      shape |= static_cast<std::uint64_t>(k + 1) << kLoggerShift;
    }
    // The body starts at the next field, or after the spaces that end the last one read.
    const std::size_t next = k + 1 < fields.size() ? fields[k + 1].begin : line.size();
    if (next >= h.body) {
      const bool spaces = std::all_of(line.begin() + static_cast<std::ptrdiff_t>(f.end),
                                      line.begin() + static_cast<std::ptrdiff_t>(h.body), IsSpace);
      return spaces ? shape | static_cast<std::uint64_t>(k + 1) << kCountShift : 0;
    }
  }
  return 0;
}

// The header `shape` describes, if `line` begins with fields of its kinds and has a message
// after them. A name stands for a level (a level word the grammar does not know).
bool ApplyShape(std::string_view whole, std::uint64_t shape, MessageHeader& h) {
  const std::string_view line = whole.substr(0, std::min(whole.size(), kMaxHeaderBytes));
  const std::size_t count = (shape >> kCountShift) & 15;
  const std::size_t level = (shape >> kLevelShift) & 31;
  const std::size_t logger = (shape >> kLoggerShift) & 31;
  h = MessageHeader{};
  std::size_t p = 0;
  Kind previous = Kind::kOther;
  for (std::size_t k = 0; k < count; ++k) {
    while (p < line.size() && IsSpace(line[p])) ++p;
    Field f;
    if (p >= line.size() || !ReadField(line, p, previous, f)) return false;
    const std::uint64_t want = (shape >> (5 * k)) & 31;
    if (FieldCode(f) != want) {
      Field as_level = f;
      as_level.kind = Kind::kLevel;
      if (f.kind != Kind::kName || k + 1 != level || FieldCode(as_level) != want) return false;
    }
    if (k + 1 == level) {
      h.level = f.level_size != 0 ? line.substr(f.begin, f.level_size) : f.core();
    }
    if (k + 1 == logger) h.logger = f.core();
    previous = f.kind;
    p = f.end;
  }
  while (p < line.size() && IsSpace(line[p])) ++p;
  if (p >= line.size()) return false;
  h.body = static_cast<std::uint32_t>(p);
  TakeTrailingLogger(whole, h);
  return true;
}

// The grammar; `sure` is set when the header holds a level word or ends at a terminator (a
// name with ':', a separator, a bracket after a logger), and left false when the header is
// only time fields and names ending at the first plain word, which is a guess.
// `shape` (if not null) is set for a sure header when `always`, or when it has no level and
// `without_level`.
MessageHeader ParseHeader(std::string_view line, bool& sure, std::uint64_t* shape, bool always,
                          bool without_level) {
  MessageHeader none;
  sure = false;
  const std::string_view whole = line;
  line = line.substr(0, std::min(line.size(), kMaxHeaderBytes));
  if (line.empty()) return none;
  if (IsDigit(line[0])) {
    if (MessageHeader piped; ParsePipeHeader(line, piped)) {
      sure = true;
      return piped;
    }
  } else if (IsLower(line[0])) {
    if (MessageHeader kv; ParseKeyValueHeader(line, kv)) {
      sure = true;
      return kv;
    }
  }
  const std::size_t start = PriorityPrefix(line);
  if (!MayHaveHeader(line, start)) return none;
  // Fields are read only as far as the walk below looks: a line without a header costs one
  // or two fields.
  std::array<Field, kMaxFields> fields;
  std::size_t n = 0, p = start;
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
  // Up to three names or dashes may come before a bracketed date or time: a host, an identity
  // and a user ("127.0.0.1 - alice [28/Nov/2026:00:29:11 +0000] ...", the common log format).
  const auto name_or_dash = [&](std::size_t k) {
    return (fields[k].kind == Kind::kName && !fields[k].colon) || fields[k].kind == Kind::kDash;
  };
  if (have(i) && name_or_dash(i)) {
    std::size_t lead = i + 1;
    while (lead < i + 3 && have(lead) && name_or_dash(lead)) ++lead;
    if (have(lead) && fields[lead].kind == Kind::kTime && fields[lead].bracketed &&
        fields[lead].evidence) {
      i = lead;
    } else if (fields[i].kind == Kind::kName && have(i + 1) && fields[i + 1].kind == Kind::kTime) {
      ++i;  // a source name (a file) may come before the time
    }
  }
  if (!have(i)) return none;
  const Kind first = fields[i].kind;
  if (first != Kind::kTime && first != Kind::kLevel && first != Kind::kLevelDate &&
      first != Kind::kLevelTag) {
    return none;
  }

  MessageHeader h;
  // A line that opens with a tab left its first tab-separated column empty, and an empty
  // column of a header is still that column: a time field right after it is read as the
  // fields after a time (MySQL's general log writes its time only when the second changes:
  // "261128  2:15:11\t     7 Connect\t..." then "\t\t     8 Connect\t...": the connection
  // id is the header's in both).
  bool evidence = i == 0 && line[0] == '\t';
  bool level_field = false;        // a level word was read (a number after it is the message's)
  bool bracketed_time = false;     // the last time field was bracketed ("[  12.345678]")
  bool bracket_time = false;       // ... and holds a time or date
  std::size_t fixed_end = 0;       // end of the last time/level/bracket field
  std::size_t body = 0;            // set when a terminator is found
  Kind last_fixed = Kind::kOther;  // kind of that field
  std::string_view source;         // a caller ("run.go:42") before the message
  std::size_t names = 0, first_name = 0;
  std::size_t level_first = kMaxFields;  // 0 when the line starts with its level
  std::size_t time_after_level = 0;      // time fields read right after that level
  // Where the line's logger is written after the message (log4j's "[%d] %p %m (%c)"), the
  // message starts right after the level: a bracket or a name with ':' there is the
  // message's ("[MetadataLoader id=1] initializeNewPublishers: The loader ..."), as the
  // layout has no other field before %m. Unless a bracket is followed by a qualified logger
  // with ':' (a thread and a logger): a layout writes one logger, so then the name in
  // parentheses at the end is the message's ("[main] com.example.Jobs: (kafka.server.X)").
  const auto message_after_level = [&]() {
    return names == 0 && last_fixed == Kind::kLevel && !TrailingLogger(whole).empty();
  };
  const auto logger_after = [&](std::size_t at) {
    return have(at) && fields[at].kind == Kind::kName && fields[at].colon &&
           IsQualifiedName(fields[at].core());
  };
  for (; body == 0 && have(i); ++i) {
    const Field& f = fields[i];
    switch (f.kind) {
      case Kind::kLevelDate:
        if (i != 0) goto done;
        h.level = line.substr(f.begin, f.level_size);
        [[fallthrough]];
      case Kind::kTime:
        // Hosts may stand between time fields ("dn228 Nov 9 ..."); after a level, a thread
        // or a bracketed stamp ("[  12.345678] 70 tasks") a number is the message's.
        // A pid between the level and a separator is the header's ("INFO 1234 --- [main]").
        if (level_field && names == 0 && last_fixed == Kind::kLevel && have(i + 1) &&
            fields[i + 1].kind == Kind::kDash && fields[i + 1].core().size() == 3) {
          fixed_end = f.end;
          break;
        }
        // A date or time right after a level that starts the line is the header's ("WARNING
        // 2024-05-09 12:34:56,789 ...", Python's "%(levelname)s %(asctime)s").
        if (level_field && i == level_first + 1 + time_after_level && names == 0 &&
            (f.evidence || time_after_level > 0)) {
          ++time_after_level;
          evidence = true;
          fixed_end = f.end, last_fixed = Kind::kTime;
          break;
        }
        if (names > 2 || level_field || last_fixed == Kind::kBracket ||
            (bracketed_time && !f.bracketed) ||
            (names > 0 && !f.bracketed && !IsStampAfterName(f.core()))) {
          goto done;
        }
        names = 0;
        evidence |= f.evidence;
        bracketed_time = f.bracketed;
        bracket_time = f.bracketed && f.evidence;
        fixed_end = f.end, last_fixed = Kind::kTime;
        break;
      case Kind::kLevelTag:  // "D/Tag( 12):" or "INFO:name:": the header's end
        if (!h.level.empty() || names > 0) goto done;
        evidence = true;
        h.level = line.substr(f.begin, f.level_size);
        h.logger = f.core();
        body = f.end;
        break;
      case Kind::kLevel:
        if (!h.level.empty() || names > 3) goto done;  // source names before it ("RAS KERNEL")
        if (i == 0) level_first = 0;
        names = 0;
        evidence = true, level_field = true;
        h.level = f.core();
        if (f.caller_size != 0 && source.empty()) source = {f.caller_data, f.caller_size};
        fixed_end = f.end, last_fixed = f.kind;
        if (f.colon) {
          body = f.end;
          // A program with its pid after the level, up to the next name with ':', is the
          // header's ("INFO: app/4752 on vm: msg", bunyan's CLI).
          if (have(i + 1) && fields[i + 1].kind == Kind::kName &&
              CarriesPid(fields[i + 1].core())) {
            for (std::size_t k = i + 1; k <= i + 3 && have(k) && fields[k].kind == Kind::kName;
                 ++k) {
              if (fields[k].colon) {
                h.logger = fields[i + 1].core();
                body = fields[k].end;
                break;
              }
            }
          }
        }
        break;
      case Kind::kSource:  // the caller after the time or level: part of the header
        if (names > 0 || !source.empty()) goto done;
        source = f.core();
        if (source.front() == '{' && source.back() == '}')
          source = source.substr(1, source.size() - 2);
        fixed_end = f.end, last_fixed = Kind::kBracket;
        break;
      case Kind::kBracket:
        if (message_after_level() && !logger_after(i + 1)) goto done;
        if (names == 1) {  // "nova.compute.manager [req-...]": a logger and its context
          h.logger = fields[first_name].core();
          body = f.end;
          // More context may follow it: a labelled value ("[instance: 7d52...]"), not a
          // word or a component of the message ("[OK]", "[Log partition=t-0]"), when a
          // message follows it.
          for (std::size_t j = i + 1;
               BracketAt(line, body) && have(j) && fields[j].kind == Kind::kBracket &&
               IsLabelledValue(fields[j].core()) && TextAfter(line, fields[j].end);
               ++j) {
            body = fields[j].end;
          }
          break;
        }
        if (names > 1 || !evidence) goto done;
        fixed_end = f.end, last_fixed = f.kind;  // a thread
        if (f.colon) body = f.end;
        break;
      case Kind::kDash:
        if (names > 0 && names <= 2) {  // "chrome.exe - ...", "myapp.db - INFO - ..."
          h.logger = fields[i - 1].core();
          body = f.end;
          if (h.level.empty() && have(i + 2) && fields[i + 1].kind == Kind::kLevel &&
              fields[i + 2].kind == Kind::kDash) {
            h.level = fields[i + 1].core();
            body = fields[i + 2].end;
          }
        } else if (names == 0 && last_fixed == Kind::kBracket) {  // "[thread] - ..."
          body = f.end;
        } else if (names == 0) {
          fixed_end = f.end;  // a separator between time and level ...
          // ... or a logger and another separator; else the header's end (Redis's "-" level).
          if (last_fixed == Kind::kTime && have(i + 1) && fields[i + 1].kind != Kind::kLevel &&
              !(have(i + 2) && fields[i + 2].kind == Kind::kDash)) {
            body = f.end;
          }
        } else {
          goto done;
        }
        break;
      case Kind::kName:
        if (f.colon) {
          // A host and a program after the time ("host sshd[1]:", "host sandboxd[129]
          // ([31211]):"); after a level or a thread only the logger itself, and not a
          // message code ("AH00124:"). After a bracketed stamp of its own (the kernel's
          // "[  12.345678] usb 1-1:") only a channel with its level ("app.ERROR:").
          const std::string_view channel_level = ChannelLevel(f.core());
          const std::size_t allowed = last_fixed != Kind::kTime ? 1u
                                      : !bracket_time           ? 3u
                                      : channel_level.empty()   ? 0u
                                                                : 1u;
          if (names + 1 > allowed || (names == 0 && IsMessageCode(f.core()))) goto done;
          // Nor an operation's name, a term in capitalised parts ("[Job 2] Validate-Job:
          // successful-ok"): a protocol names its operations so, a logger is a name or a
          // qualified one.
          if (TemplateMatcher::IsTermInParts(f.core())) goto done;
          // After a caller ("[...:VERBOSE1:net/base/network_delegate.cc:38]", "{run.py:42}")
          // a name is the message's own ("NetworkDelegate::NotifyBeforeURLRequest: <url>"):
          // the caller already says where the line comes from.
          if (!source.empty()) goto done;
          if (message_after_level()) goto done;
          // A level word in any case with its own ':' right after the name is the header's
          // level, when a message follows, and the name is a category or logger whatever its
          // case: "security: error: client ...", "app: warning: disk full". Not after a
          // program with its pid: a syslog tag's message is the program's own text
          // ("postdrop[10896]: warning: queue file write error").
          const bool level_after =
              h.level.empty() && f.core().back() != ']' && have(i + 1) && fields[i + 1].colon &&
              (fields[i + 1].kind == Kind::kName || fields[i + 1].kind == Kind::kLevel) &&
              IsLevelName(WithoutVerbosity(fields[i + 1].core())) &&
              TextAfter(line, fields[i + 1].end);
          // Right after a bracketed level, a word of lower-case letters is the message's key
          // ("[notice] statement: DROP ..."): a logger there is capitalised, dotted or carries
          // a pid ("[Note] InnoDB:", "[error] 2108#2108:"). (After a thread, "[main] kernel:",
          // lower-case loggers are common: Python's "[%(threadName)s] %(name)s:".)
          if (names == 0 && i > 0 && fields[i - 1].bracketed &&
              fields[i - 1].kind == Kind::kLevel &&
              std::all_of(f.core().begin(), f.core().end(), IsLower)) {
            goto done;
          }
          // Right after time fields alone, a word of lower-case letters is the message's key
          // too (Go's "2026/11/28 17:38:55 statement: DROP ..."): nothing before it says a
          // logger or a program is written there.
          if (names == 0 && last_fixed == Kind::kTime && h.level.empty() && !bracket_time &&
              !level_after && std::all_of(f.core().begin(), f.core().end(), IsLower) &&
              LevelSeverity(f.core()) < 0) {
            goto done;
          }
          // A message of one word after it ("frame: 0x2044", "button report: 0x80"): the
          // name is the message's key, not a logger, else every such line folds into "<*>";
          // unless it stands right after the level, the tag's own column ("D Tag: word"), or
          // carries a pid ("sshd[12]:", a program).
          if (!(names == 0 && last_fixed == Kind::kLevel) && f.core().back() != ']' &&
              OneWordAfter(line, f.end)) {
            goto done;
          }
          if (h.level.empty()) h.level = channel_level;
          h.logger = f.core();
          body = f.end;
          if (level_after) {
            h.level = fields[i + 1].core();
            body = fields[i + 1].end;
            break;
          }
          // A stamp of the program's own right after it is the header's too ("kernel: [
          // 12.345678] usb 1-1: ..."), when a message follows it.
          if (BracketAt(line, body) && have(i + 1) && fields[i + 1].kind == Kind::kTime &&
              fields[i + 1].bracketed && fields[i + 1].evidence &&
              TextAfter(line, fields[i + 1].end)) {
            body = fields[i + 1].end;
          }
          break;
        }
        // A mark alone right after the time fields is the level as some programs write it
        // (Redis's "*", "#", "."; its "-" is read as a separator and ends the header too). It
        // ends the header but is no level: what a mark means is each program's own.
        if (names == 0 && last_fixed == Kind::kTime && f.end == f.begin + 1 &&
            IsLevelMark(line[f.begin])) {
          body = f.end;
          break;
        }
        // A component in its own column right after the level ("Info   CBS    msg").
        if (names == 0 && last_fixed == Kind::kLevel && f.end + 1 < line.size() &&
            line[f.end] == ' ' && line[f.end + 1] == ' ') {
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
  sure = body != 0 || !h.level.empty();
  if (body == 0) {
    body = fixed_end;
    h.logger = source;
  }
  while (body < line.size() && IsSpace(line[body])) ++body;
  if (body == 0 || body >= line.size()) return none;
  h.body = static_cast<std::uint32_t>(body);
  if (shape != nullptr && sure && start == 0 && (always || (without_level && h.level.empty()))) {
    *shape = ShapeOf(line, std::span<const Field>(fields.data(), n), h);
  }
  TakeTrailingLogger(whole, h);
  return h;
}

}  // namespace

MessageHeader ParseMessageHeader(std::string_view line) {
  bool sure = false;
  return ParseHeader(line, sure, nullptr, false, false);
}

MessageHeader HeaderLearner::Parse(std::uint64_t scope, std::string_view line) {
  // Every line votes while its scope's shape is not confirmed, one line in kVoteEvery after
  // that (the shape of a header costs as much again as a fifth of the grammar): a sure header
  // for its shape, any other line for "no header" (0). A shape is confirmed while it leads
  // the scope's recent votes by kConfirmed, so a few messages that happen to begin with a
  // level word ("ERROR ...") confirm nothing.
  Entry* e = entries_.empty() ? nullptr : &entries_[Slot(scope)];
  const bool vote = e == nullptr || e->scope != scope || e->confirm < kConfirmed ||
                    ++votes_skipped_ % kVoteEvery == 0;
  bool sure = false;
  std::uint64_t shape = 0;
  // The shape is needed for a vote, and to compare a level-less header with the scope's
  // confirmed shape where that has a level.
  const bool compare = e != nullptr && e->scope == scope && e->confirm >= kConfirmed &&
                       ((e->shape >> kLevelShift) & 31) != 0;
  const MessageHeader h = ParseHeader(line, sure, &shape, vote, compare);
  if (e == nullptr) {
    if (!sure) return h;  // no scope has shown a header yet: nothing to learn or apply
    entries_.resize(kEntries);
    e = &entries_[Slot(scope)];
  }
  // A sure header of a shape that cannot be written down (a pipe-separated header, too many
  // fields) does not vote, and a line without a header votes only in its own scope's slot:
  // scopes without headers, most of a syslog stream, take no slot from those with one.
  if (vote && (!sure || shape != 0) && (shape != 0 || e->scope == scope)) {
    if (e->scope == scope && e->shape == shape) {
      if (e->confirm < kMaxConfirm) ++e->confirm;
    } else if (e->confirm <= 1) {  // another shape (or scope) outvoted this one
      *e = Entry{scope, shape, 1};
    } else {
      --e->confirm;
    }
  }
  return Decide(*e, scope, line, h, sure, shape);
}

MessageHeader HeaderLearner::Peek(std::uint64_t scope, std::string_view line) const {
  bool sure = false;
  std::uint64_t shape = 0;
  const MessageHeader h = ParseHeader(line, sure, &shape, false, true);
  if (entries_.empty()) return h;
  return Decide(entries_[Slot(scope)], scope, line, h, sure, shape);
}

MessageHeader HeaderLearner::Decide(const Entry& e, std::uint64_t scope, std::string_view line,
                                    const MessageHeader& h, bool sure, std::uint64_t shape) {
  if (e.scope != scope || e.shape == 0 || e.confirm < kConfirmed) return h;
  // A logger of lower-case letters where the scope's confirmed header has none is the
  // message's key: "statement:" after "[INFO] [thread]", in a scope whose lines show no
  // logger there, stays in the message, as the bare message has it. (A scope without a
  // confirmed header, Go's bare time, is left alone: its votes flip with bursts of
  // "word: ..." lines, and the same message would lose and keep its key by turns.)
  if (sure && !h.logger.empty() && ((e.shape >> kLoggerShift) & 31) == 0 &&
      std::all_of(h.logger.begin(), h.logger.end(), IsLower) && h.logger.data() >= line.data() &&
      h.logger.data() < line.data() + h.body) {
    const auto at = static_cast<std::size_t>(h.logger.data() - line.data());
    const std::size_t end = at + h.logger.size();
    if (end < h.body && line[end] == ':' &&
        std::all_of(line.begin() + static_cast<std::ptrdiff_t>(end + 1),
                    line.begin() + static_cast<std::ptrdiff_t>(h.body), IsSpace)) {
      MessageHeader kept = h;
      kept.logger = {};
      kept.body = static_cast<std::uint32_t>(at);
      return kept;
    }
  }
  // A sure level-less header's shape is not taken when the scope's has no level either,
  // whether or not this line voted (a voting line's shape is known, another's is not: two
  // programs' headers of one scope, "sshd[1]:" and "kernel: [  1.5]", would each alternate).
  const bool shape_has_level = ((e.shape >> kLevelShift) & 31) != 0;
  if (sure && (!h.level.empty() || !shape_has_level || shape == e.shape || shape == 0)) return h;
  // The grammar found no header, guessed, or found one without a level: the scope's
  // confirmed shape where it fits (a level word the grammar does not know in the level's
  // place); else the grammar's answer. A guess stays a guess where the shape does not fit:
  // were it no header there, the same message would keep its stamp while the scope's shape
  // is confirmed and lose it while it is not (a burst of "word: ..." messages after a bare
  // time confirms a program's shape), and split.
  if (MessageHeader learned; ApplyShape(line, e.shape, learned)) return learned;
  return h;
}

std::size_t SkipPeerEndpoint(std::string_view line, std::size_t body) {
  std::size_t p = body;
  while (p < line.size() && IsSpace(line[p])) ++p;
  const std::size_t end = line.find(' ', p);
  if (end == std::string_view::npos || end + 1 >= line.size() || !IsLower(Lower(line[end + 1]))) {
    return body;
  }
  return IsPeerEndpoint(line.substr(p, end - p)) ? end + 1 : body;
}

int LevelSeverity(std::string_view level) {
  if (level.empty() || level.size() > 11) return -1;  // most lines: no header level
  level = WithoutVerbosity(level);
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
      {"emerg", 0},  {"alert", 1},  {"crit", 2},    {"critical", 2}, {"fatal", 2},
      {"severe", 2}, {"err", 3},    {"error", 3},   {"warn", 4},     {"warning", 4},
      {"notice", 5}, {"info", 6},   {"debug", 7},   {"trace", 7},    {"fine", 7},
      {"finer", 7},  {"finest", 7}, {"verbose", 7}, {"note", 5},     {"information", 6}};
  for (const auto& [word, severity] : kSeverities) {
    if (EqualsLower(level, word)) return severity;
  }
  return -1;
}

}  // namespace logfold
