// SyslogParser: hand-written RFC 5424 / RFC 3164 scanning plus raw and JSON-lines modes; the
// syslog and raw paths only find views into the line (copied into a record's reused strings
// afterwards), so they never allocate.
#include "pipeline/syslog_parser.h"

#include <cstddef>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "pipeline/syslog_time.h"

namespace logfold {

// How lines that are not clean map to outcomes, so each metrics counter means one thing:
//   no '<' first and no timestamp first -> kNoHeader, flavor kNone, message = line
//   no '<' but a timestamp first -> RFC 3164 with PRI 13 (user.notice), as rsyslog assumes
//   '<' but PRI invalid          -> kBadPri, flavor kNone, message = line
//   PRI then "D[D[D]] -" / "D[D[D]] YYYY-" / "D[D[D]]" alone -> RFC 5424; anything else -> 3164
//   RFC 5424 bad timestamp       -> kBadTimestamp, message = text after PRI
//   RFC 5424 bad or missing HOSTNAME/APP-NAME/PROCID/MSGID -> kBadHeader, message = after PRI
//   RFC 5424 bad or missing SD   -> kBadStructuredData, header kept, message = text from SD on
//   RFC 3164 BSD stamp on a date that exists in no candidate year (Feb 29) -> kBadTimestamp
//   RFC 3164 otherwise never fails: a missing timestamp, hostname or tag is simply absent
//   JSON not an object, invalid, or nested deeper than kMaxJsonDepth -> kBadJson, flavor kNone
//   JSON object without the message field -> kMissingMessageField, flavor kJson, message = line
// On the failures, PRI and any header field parsed before the failing one stay set.

namespace {

constexpr std::size_t kNpos = std::string_view::npos;

// RFC 5424 section 6 field limits.
constexpr std::size_t kMaxHostname = 255;
constexpr std::size_t kMaxAppName = 48;
constexpr std::size_t kMaxProcId = 128;
constexpr std::size_t kMaxMsgId = 32;
constexpr std::size_t kMaxSdName = 32;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsPrintUsAscii(char c) { return c >= 33 && c <= 126; }

std::size_t TokenEnd(std::string_view s, std::size_t pos) {
  const std::size_t sp = s.find(' ', pos);
  return sp == kNpos ? s.size() : sp;
}

bool AllPrintUsAscii(std::string_view s) {
  for (char c : s) {
    if (!IsPrintUsAscii(c)) return false;
  }
  return true;
}

// "<PRI>" with PRI 0..191 and no leading zero except "<0>". Returns the bytes consumed, or 0.
std::size_t ParsePri(std::string_view line, int& pri) {
  if (line.size() < 3 || line[0] != '<') return 0;
  std::size_t pos = 1;
  int value = 0;
  while (pos < line.size() && pos <= 4 && IsDigit(line[pos])) {
    value = value * 10 + (line[pos] - '0');
    ++pos;
  }
  const std::size_t digits = pos - 1;
  if (digits == 0 || digits > 3 || pos >= line.size() || line[pos] != '>') return 0;
  if (digits > 1 && line[1] == '0') return 0;
  if (value > 191) return 0;
  pri = value;
  return pos + 1;
}

// VERSION: a nonzero digit and up to two more (RFC 5424 allows 1..999). Returns its length.
std::size_t VersionLength(std::string_view rest) {
  if (rest.empty() || rest[0] < '1' || rest[0] > '9') return 0;
  std::size_t pos = 1;
  while (pos < rest.size() && pos < 3 && IsDigit(rest[pos])) ++pos;
  return pos;
}

// An RFC 5424 header starts with VERSION followed by the end of the line or a SP and
// something timestamp-shaped. Requiring the timestamp shape keeps RFC 3164 lines whose
// timestamp is missing and whose text starts with a number ("<13>12 disks found") out of the
// RFC 5424 path.
bool LooksLikeRfc5424(std::string_view rest) {
  const std::size_t pos = VersionLength(rest);
  if (pos == 0) return false;
  if (pos == rest.size()) return true;
  if (rest[pos] != ' ') return false;
  const std::string_view ts = rest.substr(pos + 1);
  if (!ts.empty() && ts[0] == '-') return ts.size() == 1 || ts[1] == ' ';
  return ts.size() >= 5 && IsDigit(ts[0]) && IsDigit(ts[1]) && IsDigit(ts[2]) && IsDigit(ts[3]) &&
         ts[4] == '-';
}

// SD-NAME: 1..32 PRINTUSASCII except '=', SP, ']' and '"'. Returns its length, 0 if absent.
std::size_t SdNameLength(std::string_view s, std::size_t pos) {
  std::size_t i = pos;
  while (i < s.size() && IsPrintUsAscii(s[i]) && s[i] != '=' && s[i] != ']' && s[i] != '"') {
    ++i;
    if (i - pos > kMaxSdName) return 0;
  }
  return i - pos;
}

// Scans one or more SD-ELEMENTs starting at the '[' at `pos`. Returns the position after the
// last ']', or kNpos if malformed. PARAM-VALUE ends at the first unescaped '"'; an unescaped
// ']' inside the quotes is tolerated because the quotes already make it unambiguous.
std::size_t ScanStructuredData(std::string_view s, std::size_t pos) {
  while (pos < s.size() && s[pos] == '[') {
    ++pos;
    std::size_t n = SdNameLength(s, pos);
    if (n == 0) return kNpos;
    pos += n;
    for (;;) {
      if (pos >= s.size()) return kNpos;
      if (s[pos] == ']') {
        ++pos;
        break;
      }
      if (s[pos] != ' ') return kNpos;
      ++pos;
      n = SdNameLength(s, pos);
      if (n == 0) return kNpos;
      pos += n;
      if (pos >= s.size() || s[pos] != '=') return kNpos;
      ++pos;
      // rsyslog accepts (and its testbench sends) a space between '=' and the value.
      while (pos < s.size() && s[pos] == ' ') ++pos;
      if (pos >= s.size() || s[pos] != '"') return kNpos;
      ++pos;
      for (;;) {
        pos = s.find_first_of("\"\\", pos);
        if (pos == kNpos) return kNpos;
        if (s[pos] == '"') {
          ++pos;
          break;
        }
        pos += 2;  // a backslash escapes whatever follows it
      }
    }
  }
  return pos;
}

bool IsHostnameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '.' || c == '_' ||
         c == '-';
}

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c); }

// RFC 3164 TAG the way rsyslog reads it: everything up to the first ':' (which belongs to the
// tag) or SP, so "tag msg", "tag: msg", "tag[42]: msg" and "%ASA-6-302013: msg" all have one.
// APP-NAME is the tag before any '[', ':' or '/', PROCID what the brackets hold. A tag holding a
// byte that is not printable US-ASCII, or longer than kMaxTag, is not taken. Returns the end
// of the tag (== pos when there is none).
constexpr std::size_t kMaxTag = 255;

// "key=value" at `pos`: an identifier followed by '='. Firewalls that log key=value pairs
// (FortiGate, Sophos) send no tag, and rsyslog would make their first pair one.
bool StartsWithKeyValue(std::string_view s, std::size_t pos) {
  std::size_t i = pos;
  while (i < s.size() && (IsAlnum(s[i]) || s[i] == '_' || s[i] == '-' || s[i] == '.')) ++i;
  return i > pos && i < s.size() && s[i] == '=';
}

std::size_t ParseTag(std::string_view s, std::size_t pos, LogRecordView& out) {
  if (StartsWithKeyValue(s, pos)) return pos;
  std::size_t i = pos;
  while (i < s.size() && s[i] != ':' && s[i] != ' ') {
    if (!IsPrintUsAscii(s[i]) || i - pos >= kMaxTag) return pos;
    ++i;
  }
  const std::string_view tag = s.substr(pos, i - pos);
  if (i < s.size() && s[i] == ':') ++i;
  const std::size_t open = tag.find('[');
  const std::string_view name = tag.substr(0, open);
  // The program name ends at '/', as rsyslog's programname does (its default,
  // parser.permitSlashInProgramName off), which is what rsyslog sends as APP-NAME when it
  // relays the line as RFC 5424: a line has the same app direct or through rsyslog. The whole
  // name stays in `tag`, so "postfix/smtpd" and "postfix/qmgr" can still be told apart.
  const std::size_t slash = name.find('/');
  out.app_name = name.substr(0, slash);
  if (slash != kNpos) out.tag = name;
  if (open != kNpos) {
    const std::size_t close = tag.find(']', open + 1);
    if (close != kNpos) out.procid = tag.substr(open + 1, close - open - 1);
  }
  return i;
}

void Fail(std::string_view text, ParseOutcome outcome, LogRecordView& out) {
  out.message = text;
  out.outcome = outcome;
}

void Fail(std::string_view text, ParseOutcome outcome, LogRecord& out) {
  out.message.assign(text);
  out.outcome = outcome;
}

// `rest` is everything after "<PRI>". On a header error the fields parsed so far are kept
// and the message is all of `rest`, so no text is lost.
void ParseRfc5424(std::string_view rest, LogRecordView& out) {
  // LooksLikeRfc5424 checked VERSION and that a SP or the end follows it.
  std::size_t pos = VersionLength(rest);
  if (pos >= rest.size()) return Fail(rest, ParseOutcome::kBadHeader, out);
  ++pos;
  std::size_t end = TokenEnd(rest, pos);
  const std::string_view ts = rest.substr(pos, end - pos);
  if (ts != "-") {
    const std::optional<TimeUs> t = ParseRfc3339(ts);
    if (!t) return Fail(rest, ParseOutcome::kBadTimestamp, out);
    out.has_timestamp = true;
    out.timestamp_us = *t;
  }
  pos = end;

  struct Field {
    std::string_view* dest;
    std::size_t max_length;
  };
  const Field fields[] = {{&out.hostname, kMaxHostname},
                          {&out.app_name, kMaxAppName},
                          {&out.procid, kMaxProcId},
                          {&out.msgid, kMaxMsgId}};
  for (const Field& field : fields) {
    if (pos >= rest.size()) return Fail(rest, ParseOutcome::kBadHeader, out);
    ++pos;  // the SP TokenEnd stopped at
    end = TokenEnd(rest, pos);
    const std::string_view value = rest.substr(pos, end - pos);
    if (value.empty() || value.size() > field.max_length || !AllPrintUsAscii(value)) {
      return Fail(rest, ParseOutcome::kBadHeader, out);
    }
    if (value != "-") *field.dest = value;
    pos = end;
  }

  // A header cut off before STRUCTURED-DATA still has every other field intact, so it counts
  // as an SD problem rather than discarding the header.
  if (pos >= rest.size()) return Fail({}, ParseOutcome::kBadStructuredData, out);
  ++pos;
  const std::size_t sd_begin = pos;
  std::size_t sd_end = kNpos;
  if (pos < rest.size() && rest[pos] == '-') {
    sd_end = pos + 1;
  } else if (pos < rest.size() && rest[pos] == '[') {
    sd_end = ScanStructuredData(rest, pos);
  }
  if (sd_end == kNpos || (sd_end < rest.size() && rest[sd_end] != ' ')) {
    return Fail(rest.substr(sd_begin), ParseOutcome::kBadStructuredData, out);
  }
  if (rest[sd_begin] == '[') out.structured_data = rest.substr(sd_begin, sd_end - sd_begin);

  // MSG exactly as sent: a BOM and a leading space (rsyslog's RSYSLOG_SyslogProtocol23Format
  // writes the space its RFC 3164 parser keeps after a tag's ':') stay in the message, as
  // rsyslog and go-syslog keep them; the tokenizer and templates skip both.
  out.message = sd_end < rest.size() ? rest.substr(sd_end + 1) : std::string_view();
  out.outcome = ParseOutcome::kOk;
}

// A timestamp at the start of `rest`, the way rsyslog's RFC 3164 parser looks for one: an
// RFC 3339 stamp, a BSD stamp (maybe with a year and a trailing ':'), or a BSD stamp after one
// stray space. Cisco IOS's "123: " sequence number and '*' / '.' clock-sync markers
// ("<189>52: *Mar  1 18:46:11.123: %SYS-5-CONFIG_I: ...") are skipped too. The stamp must end
// the text or be followed by a SP, which is consumed. Returns the position after it, or 0
// when there is none. `ok` is false for a BSD date that exists in no candidate year.
std::size_t ParseRfc3164Timestamp(std::string_view rest, TimeUs arrival_us, LogRecordView& out,
                                  bool& ok) {
  ok = true;
  const auto finish = [&](std::size_t end) -> std::size_t {
    if (end < rest.size()) {
      if (rest[end] != ' ') return 0;
      ++end;
    }
    return end;
  };
  if (!rest.empty() && IsDigit(rest[0])) {
    const std::size_t token_end = TokenEnd(rest, 0);
    if (const std::optional<TimeUs> t = ParseRfc3339(rest.substr(0, token_end))) {
      out.has_timestamp = true;
      out.timestamp_us = *t;
      return finish(token_end);
    }
  }
  std::size_t skip = 0;
  if (!rest.empty() && rest[0] == ' ') {
    skip = 1;
  } else {
    std::size_t d = 0;
    while (d < rest.size() && d < 10 && IsDigit(rest[d])) ++d;
    if (d > 0 && d + 1 < rest.size() && rest[d] == ':' && rest[d + 1] == ' ') skip = d + 2;
    if (skip < rest.size() && (rest[skip] == '*' || rest[skip] == '.')) ++skip;
  }
  BsdTimestamp bsd;
  std::size_t n = ParseBsdTimestamp(rest.substr(skip), bsd);
  if (n == 0 && skip != 0) {
    skip = 0;
    n = ParseBsdTimestamp(rest, bsd);
  }
  const std::size_t end = n == 0 ? 0 : finish(skip + n);
  if (end == 0) {
    // A month name and a day that go on into no valid stamp ("Jan 32 12:00:00", "Feb 30")
    // are a broken timestamp, not a hostname and a tag.
    ok = !LooksLikeBsdTimestamp(rest.substr(skip)) && !LooksLikeBsdTimestamp(rest);
    return 0;
  }
  const std::optional<TimeUs> t = ResolveBsdTimestamp(bsd, arrival_us);
  if (!t) {
    ok = false;
    return 0;
  }
  out.has_timestamp = true;
  out.timestamp_us = *t;
  return end;
}

// `rest` is everything after "<PRI>", read as rsyslog's default parser reads RFC 3164: an
// optional timestamp, then a HOSTNAME only if the next word is made of hostname characters,
// ends in a letter or digit and is followed by a SP (or ends the line), then a TAG, then the
// message after the one SP that separates it from the tag. Whatever the sender left out is
// absent, never an error.
void ParseRfc3164(std::string_view rest, TimeUs arrival_us, LogRecordView& out) {
  bool ok = true;
  std::size_t pos = ParseRfc3164Timestamp(rest, arrival_us, out, ok);
  if (!ok) return Fail(rest, ParseOutcome::kBadTimestamp, out);

  std::size_t i = pos;
  while (i < rest.size() && i - pos < kMaxHostname && IsHostnameChar(rest[i])) ++i;
  if (i > pos && (i == rest.size() || (rest[i] == ' ' && IsAlnum(rest[i - 1])))) {
    out.hostname = rest.substr(pos, i - pos);
    pos = i < rest.size() ? i + 1 : i;
  }

  pos = ParseTag(rest, pos, out);
  if (pos < rest.size() && rest[pos] == ' ') ++pos;
  out.message = rest.substr(pos);
  out.outcome = ParseOutcome::kOk;
}

// Does `line` start with a timestamp rsyslog would take for an RFC 3164 header's?
bool StartsWithTimestamp(std::string_view line) {
  BsdTimestamp bsd;
  if (ParseBsdTimestamp(line, bsd) != 0) return true;
  return !line.empty() && IsDigit(line[0]) && ParseRfc3339(line.substr(0, TokenEnd(line, 0)));
}

// PRI 13 (user.notice): what rsyslog assumes for a header without a PRI.
constexpr int kDefaultPri = 13;

void ParseSyslog(std::string_view line, TimeUs arrival_us, LogRecordView& out) {
  if (line[0] != '<') {
    // rsyslog assumes <13> and parses any line as RFC 3164; here only a line that starts with
    // a timestamp is taken for a header, so a plain line ("42 items processed") keeps its
    // first words out of host and app.
    if (!StartsWithTimestamp(line)) return Fail(line, ParseOutcome::kNoHeader, out);
    out.facility = kDefaultPri / 8;
    out.severity = kDefaultPri % 8;
    out.flavor = SyslogFlavor::kRfc3164;
    return ParseRfc3164(line, arrival_us, out);
  }
  int pri = 0;
  const std::size_t pri_length = ParsePri(line, pri);
  if (pri_length == 0) return Fail(line, ParseOutcome::kBadPri, out);
  out.facility = pri / 8;
  out.severity = pri % 8;
  const std::string_view rest = line.substr(pri_length);
  if (LooksLikeRfc5424(rest)) {
    out.flavor = SyslogFlavor::kRfc5424;
    ParseRfc5424(rest, out);
  } else {
    out.flavor = SyslogFlavor::kRfc3164;
    ParseRfc3164(rest, arrival_us, out);
  }
}

// --- JSON lines -------------------------------------------------------------------------

using Json = nlohmann::json;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Severity from a number 0..7, a numeric string, or a syslog / common logger level name.
int SeverityFromJson(const Json& v) {
  if (v.is_number_integer()) {
    const auto n = v.get<std::int64_t>();
    return n >= 0 && n <= 7 ? static_cast<int>(n) : -1;
  }
  if (!v.is_string()) return -1;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.size() == 1 && s[0] >= '0' && s[0] <= '7') return s[0] - '0';
  struct Name {
    std::string_view name;
    int severity;
  };
  static constexpr Name kNames[] = {
      {"emerg", 0},    {"emergency", 0}, {"panic", 0},  {"alert", 1}, {"crit", 2},
      {"critical", 2}, {"fatal", 2},     {"dpanic", 2}, {"err", 3},   {"error", 3},
      {"warning", 4},  {"warn", 4},      {"notice", 5}, {"info", 6},  {"informational", 6},
      {"debug", 7},    {"trace", 7},
  };
  for (const Name& name : kNames) {
    if (EqualsIgnoreCase(s, name.name)) return name.severity;
  }
  return -1;
}

// First of `keys` present in `obj` as a string, or nullptr.
const std::string* FirstString(const Json& obj, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    const auto it = obj.find(key);
    if (it != obj.end() && it->is_string()) return &it->get_ref<const std::string&>();
  }
  return nullptr;
}

// pino and bunyan log levels are numbers: 10 trace, 20 debug, 30 info, 40 warn, 50 error,
// 60 fatal.
int SeverityFromLevelNumber(std::int64_t n) {
  if (n >= 60) return 2;
  if (n >= 50) return 3;
  if (n >= 40) return 4;
  if (n >= 30) return 6;
  return 7;
}

// A time as loggers write it: an RFC 3339 string, or a number of seconds (zap's "ts":
// 1732234408.123), milliseconds (pino's "time": 1732234408123) or microseconds since the
// epoch, told apart by magnitude.
std::optional<TimeUs> TimeFromJson(const Json& v) {
  if (v.is_string()) return ParseRfc3339(v.get_ref<const std::string&>());
  if (!v.is_number()) return std::nullopt;
  const double x = v.get<double>();
  if (!(x > 0) || x >= 1e17) return std::nullopt;
  const double us = x >= 1e14 ? x : x >= 1e11 ? x * 1e3 : x * 1e6;
  return static_cast<TimeUs>(us);
}

void MapWellKnownFields(const Json& obj, LogRecord& out) {
  if (const std::string* s = FirstString(obj, {"host", "hostname"})) out.hostname.assign(*s);
  if (const std::string* s = FirstString(obj, {"app", "app_name", "program", "name"})) {
    out.app_name.assign(*s);
  }
  if (const auto it = obj.find("pid"); it != obj.end() && it->is_number_integer()) {
    out.procid = std::to_string(it->get<std::int64_t>());
  }
  if (const auto it = obj.find("severity"); it != obj.end()) {
    out.severity = SeverityFromJson(*it);
  } else if (const auto level = obj.find("level"); level != obj.end()) {
    out.severity = level->is_number_integer() && level->get<std::int64_t>() >= 10
                       ? SeverityFromLevelNumber(level->get<std::int64_t>())
                       : SeverityFromJson(*level);
  }
  for (const char* key : {"timestamp", "time", "@timestamp", "ts"}) {
    const auto it = obj.find(key);
    if (it == obj.end()) continue;
    if (const std::optional<TimeUs> t = TimeFromJson(*it)) {
      out.has_timestamp = true;
      out.timestamp_us = *t;
      break;
    }
  }
}

// With the default json_message_field, the message fields of common loggers are tried too:
// pino, bunyan, zap and logrus write "msg", structlog "event", Docker's json-file "log".
constexpr const char* kDefaultMessageField = "message";
constexpr const char* kFallbackMessageFields[] = {"msg", "log", "event"};

std::string DumpCompact(const Json& v) {
  // The replace handler makes dump() total: it cannot throw on odd UTF-8.
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Removes the message field at `path` (a key, or a dotted path into nested objects) from
// `doc`, moving its value into `value`. A key literally containing dots wins over the path
// reading. Parent objects left empty are removed too, so json_fields has no "log":{} husks.
bool TakeField(Json& doc, const std::string& path, Json& value) {
  if (const auto it = doc.find(path); it != doc.end()) {
    value = std::move(*it);
    doc.erase(it);
    return true;
  }
  std::vector<std::pair<Json*, std::string>> chain;
  Json* node = &doc;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t dot = path.find('.', begin);
    std::string key =
        path.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
    if (!node->is_object()) return false;
    const auto it = node->find(key);
    if (it == node->end()) return false;
    chain.emplace_back(node, std::move(key));
    if (dot == std::string::npos) {
      value = std::move(*it);
      break;
    }
    node = &*it;
    begin = dot + 1;
  }
  for (auto link = chain.rbegin(); link != chain.rend(); ++link) {
    Json& parent = *link->first;
    const auto it = parent.find(link->second);
    const bool is_leaf = link == chain.rbegin();
    if (!is_leaf && !(it->is_object() && it->empty())) break;
    parent.erase(it);
  }
  return true;
}

// nlohmann parses iteratively but serialises recursively, so a line of 100k '[' would parse
// fine and then overflow the stack in dump(). Deeper documents are refused up front; real log
// objects are a handful of levels deep.
constexpr int kMaxJsonDepth = 128;

bool JsonDepthWithinLimit(std::string_view line) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}

void ParseJsonLine(std::string_view line, const std::string& message_field, LogRecord& out) {
  if (!JsonDepthWithinLimit(line)) return Fail(line, ParseOutcome::kBadJson, out);
  // Exceptions are this library's only failure channel (bad_alloc, internal type errors);
  // the parser promises never to throw, so any of them degrades to a raw message.
  try {
    Json doc = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) {
      return Fail(line, ParseOutcome::kBadJson, out);
    }
    out.flavor = SyslogFlavor::kJson;
    MapWellKnownFields(doc, out);
    Json value;
    bool found = TakeField(doc, message_field, value);
    if (!found && message_field == kDefaultMessageField) {
      for (const char* key : kFallbackMessageFields) {
        if (const auto it = doc.find(key); it != doc.end() && it->is_string()) {
          found = TakeField(doc, key, value);
          break;
        }
      }
    }
    if (!found) {
      out.json_fields = DumpCompact(doc);
      return Fail(line, ParseOutcome::kMissingMessageField, out);
    }
    if (value.is_string()) {
      std::string_view text = value.get_ref<const std::string&>();
      // Docker's json-file "log" keeps the line's own LF.
      if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      out.message.assign(text);
    } else {
      out.message = DumpCompact(value);
    }
    out.json_fields = DumpCompact(doc);
    out.outcome = ParseOutcome::kOk;
  } catch (const std::exception&) {
    const TimeUs arrival_us = out.arrival_us;
    out.Clear();
    out.raw.assign(line);
    out.arrival_us = arrival_us;
    Fail(line, ParseOutcome::kBadJson, out);
  }
}

std::string_view StripTerminator(std::string_view line) {
  // CRLF senders leave the '\r' behind when the framer splits on '\n'; octet-counted frames
  // often carry the sender's line end inside the count (rsyslog's RFC 5424 template ends in
  // '\n'). A terminator is never part of the message, so one trailing LF, CR or CRLF goes.
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

bool SyslogParser::ParseView(std::string_view line, TimeUs arrival_us, LogRecordView& out) const {
  if (options_.format == InputFormat::kJson) return false;
  line = StripTerminator(line);
  out = LogRecordView{};
  out.raw = line;
  out.arrival_us = arrival_us;
  if (line.empty()) {
    out.outcome = ParseOutcome::kEmpty;
  } else if (options_.format == InputFormat::kRaw) {
    out.message = line;
    out.outcome = ParseOutcome::kOk;
  } else {
    ParseSyslog(line, arrival_us, out);
  }
  return true;
}

ParseOutcome SyslogParser::Parse(std::string_view line, TimeUs arrival_us, LogRecord& out) const {
  LogRecordView view;
  if (ParseView(line, arrival_us, view)) {
    view.CopyTo(out);
    return out.outcome;
  }
  line = StripTerminator(line);
  out.Clear();
  out.raw.assign(line);
  out.arrival_us = arrival_us;
  if (line.empty()) {
    out.outcome = ParseOutcome::kEmpty;
    return out.outcome;
  }
  ParseJsonLine(line, options_.json_message_field, out);
  return out.outcome;
}

}  // namespace logfold
