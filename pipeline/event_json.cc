// Hand-written NDJSON writer for events: appends into one reused buffer, always emits valid
// JSON (invalid UTF-8 is replaced), and never allocates per field.
#include "pipeline/event_json.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>

namespace logfold {
namespace {

constexpr char kHex[] = "0123456789abcdef";
// "00" to "ff": a byte's two hex digits at 2 x byte.
constexpr std::array<char, 512> kHexPairs = [] {
  std::array<char, 512> pairs{};
  for (int i = 0; i < 256; ++i) {
    pairs[2 * i] = kHex[i >> 4];
    pairs[2 * i + 1] = kHex[i & 15];
  }
  return pairs;
}();

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
std::size_t Utf8SequenceLength(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t len;
  std::uint32_t min;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  std::uint32_t cp = c & (0x3F >> (len - 1));
  for (std::size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

void AppendKey(std::string_view key, std::string& out) {
  // One append: the keys are short literals.
  char buf[40];
  if (key.size() + 3 > sizeof buf) {
    out += '"';
    out += key;
    out += "\":";
    return;
  }
  buf[0] = '"';
  std::memcpy(buf + 1, key.data(), key.size());
  buf[key.size() + 1] = '"';
  buf[key.size() + 2] = ':';
  out.append(buf, key.size() + 3);
}

std::uint64_t Load8(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Which of the eight bytes of v need a look: a control byte (< 0x20), a byte >= 0x80
// (UTF-8 to validate), '"' or '\\'? The high bit of each such byte (the classic has-zero-byte
// test: exact for "any" and for the lowest such byte, which is all that is used; borrows may
// flag bytes above it).
std::uint64_t LookMask(std::uint64_t v) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  auto has_zero = [](std::uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  return (v & kHigh) | ((v - 0x20 * kOnes) & ~v & kHigh) | has_zero(v ^ ('"' * kOnes)) |
         has_zero(v ^ ('\\' * kOnes));
}

void AppendUint(std::uint64_t v, std::string& out) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void AppendInt(std::int64_t v, std::string& out) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void PutDigits(char* p, std::int64_t v, int width) {
  for (int i = width - 1; i >= 0; --i, v /= 10) p[i] = static_cast<char>('0' + v % 10);
}

// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's civil_from_days), so
// formatting needs neither gmtime nor printf on the hot path.
void CivilFromDays(std::int64_t z, std::int64_t& y, int& m, int& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = yoe + era * 400;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  if (m <= 2) ++y;
}

bool IsValidUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (i + 8 <= s.size() && (Load8(s.data() + i) & 0x8080808080808080ULL) == 0) {
      i += 8;  // eight ASCII bytes
      continue;
    }
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t len = Utf8SequenceLength(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

// Standard base64 with padding (RFC 4648 section 4), appended.
void AppendBase64(std::string_view s, std::string& out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 3 <= s.size(); i += 3) {
    const std::uint32_t v =
        (static_cast<std::uint32_t>(static_cast<unsigned char>(s[i])) << 16) |
        (static_cast<std::uint32_t>(static_cast<unsigned char>(s[i + 1])) << 8) |
        static_cast<unsigned char>(s[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < s.size()) {
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(s[i])) << 16;
    const bool two = i + 1 < s.size();
    if (two) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(s[i + 1])) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += two ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
}

void AppendStringField(std::string_view key, std::string_view value, std::string& out) {
  out += ',';
  AppendKey(key, out);
  AppendJsonString(value, out);
}

// The original line's fields. Empty header fields are left out rather than written as "".
void AppendRecordFields(const LogRecord& r, std::string& out) {
  AppendKey("time", out);
  AppendJsonTime(r.EventTime(), out);
  out += ',';
  AppendKey("received", out);
  AppendJsonTime(r.arrival_us, out);
  if (!r.hostname.empty()) AppendStringField("host", r.hostname, out);
  if (!r.app_name.empty()) AppendStringField("app", r.app_name, out);
  if (!r.tag.empty()) AppendStringField("tag", r.tag, out);
  if (!r.procid.empty()) AppendStringField("procid", r.procid, out);
  if (!r.msgid.empty()) AppendStringField("msgid", r.msgid, out);
  if (r.facility >= 0) {
    out += ',';
    AppendKey("facility", out);
    AppendInt(r.facility, out);
  }
  if (r.severity >= 0) {
    out += ',';
    AppendKey("severity", out);
    AppendInt(r.severity, out);
  }
  if (!r.structured_data.empty()) AppendStringField("structured_data", r.structured_data, out);
  if (!r.json_fields.empty()) {
    out += ',';
    AppendKey("fields", out);
    out += r.json_fields;  // produced by the JSON parser: already valid JSON
  }
  AppendStringField("format", SyslogFlavorName(r.flavor), out);
  if (r.outcome != ParseOutcome::kOk)
    AppendStringField("parse_error", ParseOutcomeName(r.outcome), out);
  AppendStringField("message", r.message, out);
  // JSON strings hold only Unicode, so a message that is not UTF-8 shows U+FFFD in "message"
  // and travels exactly, byte for byte, in "message_base64".
  if (!IsValidUtf8(r.message)) {
    out += ',';
    AppendKey("message_base64", out);
    out += '"';
    AppendBase64(r.message, out);
    out += '"';
  }
}

// What the merger read from the message's own header; left out when not found.
void AppendHeaderFields(const Event& e, std::string& out) {
  if (!e.level.empty()) AppendStringField("level", e.level, out);
  if (!e.logger.empty()) AppendStringField("logger", e.logger, out);
}

void AppendRecordObject(const LogRecord& r, std::string& out) {
  out += '{';
  AppendRecordFields(r, out);
  out += '}';
}

}  // namespace

std::string_view EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kFirst:
      return "first";
    case EventKind::kSummary:
      return "summary";
    case EventKind::kAnnotate:
      return "annotate";
    case EventKind::kNewValue:
      return "new_value";
  }
  return "?";
}

std::string_view SummaryReasonName(SummaryReason reason) {
  switch (reason) {
    case SummaryReason::kIdle:
      return "idle";
    case SummaryReason::kMaxHold:
      return "max_hold";
    case SummaryReason::kEvicted:
      return "evicted";
    case SummaryReason::kShutdown:
      return "shutdown";
    case SummaryReason::kMemory:
      return "memory";
    case SummaryReason::kRecovered:
      return "recovered";
  }
  return "?";
}

namespace {

// Writes s as a JSON string (quotes included) from p, which has room for the worst case,
// 2 + 6 * s.size() bytes (every byte as \u00XX); returns the end.
char* WriteJsonString(std::string_view s, char* p) {
  *p++ = '"';
  const char* const in = s.data();
  for (std::size_t i = 0; i < s.size();) {
    // Eight bytes at a time while none needs a look (most text is plain ASCII), then straight
    // to the first that does. Eight bytes always fit: at most 6 * i + 1 were written so far.
    while (i + 8 <= s.size()) {
      const std::uint64_t look = LookMask(Load8(in + i));
      std::memcpy(p, in + i, 8);
      if (look == 0) {
        i += 8;
        p += 8;
      } else {
        if constexpr (std::endian::native == std::endian::little) {
          const std::size_t plain = static_cast<std::size_t>(std::countr_zero(look)) / 8;
          i += plain;
          p += plain;
        }
        break;
      }
    }
    if (i >= s.size()) break;
    const auto c = static_cast<unsigned char>(in[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      *p++ = static_cast<char>(c);
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const std::size_t len = Utf8SequenceLength(s, i);
      if (len > 0) {
        std::memcpy(p, in + i, len);
        p += len;
        i += len;
        continue;
      }
      std::memcpy(p, "\xEF\xBF\xBD", 3);  // U+FFFD for each invalid byte
      p += 3;
      ++i;
      continue;
    }
    *p++ = '\\';
    switch (c) {
      case '"':
        *p++ = '"';
        break;
      case '\\':
        *p++ = '\\';
        break;
      case '\n':
        *p++ = 'n';
        break;
      case '\r':
        *p++ = 'r';
        break;
      case '\t':
        *p++ = 't';
        break;
      default:
        *p++ = 'u';
        *p++ = '0';
        *p++ = '0';
        *p++ = kHex[c >> 4];
        *p++ = kHex[c & 15];
    }
    ++i;
  }
  *p++ = '"';
  return p;
}

}  // namespace

void AppendJsonString(std::string_view s, std::string& out) {
  // Written in place, then appended or trimmed: one append instead of one per run and per
  // escape (a flood of random text has a '"' or '\\' every ~40 bytes). Short strings (field
  // names, most messages) go through a buffer on the stack.
  constexpr std::size_t kShort = 80;
  if (s.size() <= kShort) {
    char buf[2 + 6 * kShort];
    out.append(buf, static_cast<std::size_t>(WriteJsonString(s, buf) - buf));
    return;
  }
  const std::size_t old = out.size();
  out.resize(old + 2 + 6 * s.size());
  char* const start = out.data() + old;
  out.resize(old + static_cast<std::size_t>(WriteJsonString(s, start) - start));
}

void AppendJsonTime(TimeUs us, std::string& out) {
  std::int64_t secs = us / 1'000'000;
  std::int64_t frac = us % 1'000'000;
  if (frac < 0) frac += 1'000'000, secs -= 1;
  // Events come in bursts within one second (and an event's time is often its received
  // time): the date and the time of day are formatted once per second and thread.
  thread_local std::int64_t buf_secs = INT64_MIN;
  thread_local char buf[30] = "\"0000-00-00T00:00:00.000000Z\"";
  if (secs != buf_secs) {
    std::int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) rem += 86400, days -= 1;
    std::int64_t year;
    int month, day;
    CivilFromDays(days, year, month, day);
    if (year < 0 || year > 9999) year = year < 0 ? 0 : 9999;  // RFC 3339 has 4-digit years
    PutDigits(buf + 1, year, 4);
    PutDigits(buf + 6, month, 2);
    PutDigits(buf + 9, day, 2);
    PutDigits(buf + 12, rem / 3600, 2);
    PutDigits(buf + 15, rem / 60 % 60, 2);
    PutDigits(buf + 18, rem % 60, 2);
    buf_secs = secs;
  }
  PutDigits(buf + 21, frac, 6);
  out.append(buf, 29);
}

void AppendHex64(std::uint64_t v, std::string& out) {
  char buf[16];
  for (int i = 7; i >= 0; --i, v >>= 8) std::memcpy(buf + 2 * i, &kHexPairs[2 * (v & 0xff)], 2);
  out.append(buf, 16);
}

std::string_view EventJsonStringField(std::string_view event_json, std::string_view name) {
  // Inside a JSON string every '"' is escaped, so an unescaped "<name>":" is a field.
  for (std::size_t at = event_json.find(name); at != std::string_view::npos;
       at = event_json.find(name, at + 1)) {
    const std::size_t start = at + name.size() + 3;
    if (at == 0 || event_json[at - 1] != '"' || start > event_json.size() ||
        event_json.substr(at + name.size(), 3) != "\":\"") {
      continue;
    }
    std::size_t end = start;
    while (end < event_json.size() && event_json[end] != '"') {
      end += event_json[end] == '\\' ? 2 : 1;
    }
    return event_json.substr(start, std::min(end, event_json.size()) - start);
  }
  return {};
}

namespace {

// The slot statistics of a summary or a new_value event.
void AppendSlots(std::span<const SlotSummary> slots, std::string& out) {
  if (slots.empty()) return;
  out += ",\"slots\":[";
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const SlotSummary& slot = slots[i];
    if (i > 0) out += ',';
    out += "{\"token\":";
    AppendUint(slot.token, out);
    out += ",\"distinct\":";
    AppendUint(slot.distinct, out);
    out += ",\"lines\":";
    AppendUint(slot.lines, out);
    out += ",\"top\":[";
    for (std::size_t k = 0; k < slot.top.size(); ++k) {
      if (k > 0) out += ',';
      out += "{\"value\":";
      AppendJsonString(slot.top[k].value, out);
      out += ",\"count\":";
      AppendUint(slot.top[k].count, out);
      out += '}';
    }
    out += "]}";
  }
  out += ']';
}

}  // namespace

void AppendEventJson(const Event& e, std::string& out) {
  out += "{\"kind\":\"";
  out += EventKindName(e.kind);
  if (e.origin.stream != 0) {
    // Deterministic: the same lines replayed (Kafka after a crash) give the same id, so a
    // store keeping one row per id drops the replays. The kind tells apart a line's first or
    // new_value event from a summary whose first covered line it is.
    out += "\",\"event_id\":\"";
    AppendHex64(e.origin.stream, out);
    out += '-';
    AppendInt(e.origin.position, out);
    out += '-';
    out += EventKindName(e.kind)[0];
  }
  out += "\",\"group_id\":\"";
  AppendHex64(e.group_id, out);
  if (e.kind == EventKind::kAnnotate) {
    out += "\",\"cluster_id\":\"";
    AppendHex64(e.group_id, out);
  }
  out += "\",\"fingerprint\":\"";
  AppendHex64(e.fingerprint, out);
  out += '"';
  if (e.kind == EventKind::kSummary) {
    AppendStringField("reason", SummaryReasonName(e.reason), out);
    out += ",\"closed\":";
    out += e.closed ? "true" : "false";
    out += ",\"count\":";
    AppendUint(e.count, out);
    out += ",\"count_total\":";
    AppendUint(e.count_total, out);
    out += ",\"first_seen\":";
    AppendJsonTime(e.first_seen_us, out);
    out += ",\"last_seen\":";
    AppendJsonTime(e.last_seen_us, out);
    out += ",\"max_distance\":";
    AppendInt(e.max_distance, out);
    AppendStringField("template", e.template_text, out);
    AppendHeaderFields(e, out);
    if (e.record != nullptr) {
      if (!e.record->hostname.empty() && e.hosts.empty()) {
        AppendStringField("host", e.record->hostname, out);
      }
      if (!e.record->app_name.empty()) AppendStringField("app", e.record->app_name, out);
    }
    if (!e.hosts.empty()) {
      out += ",\"hosts\":[";
      for (std::size_t i = 0; i < e.hosts.size(); ++i) {
        if (i > 0) out += ',';
        AppendJsonString(e.hosts[i], out);
      }
      out += "],\"hosts_truncated\":";
      out += e.hosts_truncated ? "true" : "false";
    }
    AppendSlots(e.slots, out);
    out += ",\"samples\":[";
    if (e.record != nullptr) AppendRecordObject(*e.record, out);
    if (e.last_record != nullptr && e.last_record != e.record) {
      out += ',';
      AppendRecordObject(*e.last_record, out);
    }
    out += "]}\n";
    return;
  }
  AppendHeaderFields(e, out);
  if (e.kind == EventKind::kAnnotate || e.kind == EventKind::kNewValue) {
    AppendStringField("template", e.template_text, out);
    out += ",\"count_total\":";
    AppendUint(e.count_total, out);
  }
  if (e.kind == EventKind::kNewValue) AppendSlots(e.slots, out);
  if (e.record != nullptr) {
    out += ',';
    AppendRecordFields(*e.record, out);
  }
  out += "}\n";
}

}  // namespace logfold
