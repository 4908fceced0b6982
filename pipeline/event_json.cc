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

// "00" to "99": a number's two decimal digits at 2 x number.
constexpr std::array<char, 200> kDecimalPairs = [] {
  std::array<char, 200> pairs{};
  for (int i = 0; i < 100; ++i) {
    pairs[2 * i] = static_cast<char>('0' + i / 10);
    pairs[2 * i + 1] = static_cast<char>('0' + i % 10);
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

// Writes bytes [i, end) of s escaped for a JSON string from p, a UTF-8 sequence that starts
// before `end` whole; returns the output's end and leaves i past the last byte written. p has
// room for the worst case: 6 * (end - i) + 24 bytes (every byte as \u00XX). Sets `replaced`
// when a byte was not UTF-8 (and became U+FFFD).
char* WriteJsonText(std::string_view s, std::size_t& i, std::size_t end, char* p, bool& replaced) {
  const char* const in = s.data();
  while (i < end) {
    // Eight bytes at a time while none needs a look (most text is plain ASCII), then straight
    // to the first that does (eight bytes always fit in the worst case's room).
    while (i + 8 <= end) {
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
    if (i >= end) break;
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
      replaced = true;
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
  return p;
}

// RFC 3339 UTC with microseconds, quoted (29 bytes) at p.
void WriteJsonTime(TimeUs us, char* p) {
  std::int64_t secs = us / 1'000'000;
  std::int64_t frac = us % 1'000'000;
  if (frac < 0) frac += 1'000'000, secs -= 1;
  // Events come in bursts within one second (and an event's time is often its received
  // time): the date and the time of day are formatted once per second and thread.
  // The time itself is often written twice in a row (an event's time and received time).
  thread_local std::int64_t buf_secs = INT64_MIN;
  thread_local TimeUs buf_us = INT64_MIN;
  thread_local char buf[30] = "\"0000-00-00T00:00:00.000000Z\"";
  if (us == buf_us) {
    std::memcpy(p, buf, 29);
    return;
  }
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
  const auto f = static_cast<std::uint32_t>(frac);  // six digits, two at a time
  std::memcpy(buf + 21, &kDecimalPairs[2 * (f / 10000)], 2);
  std::memcpy(buf + 23, &kDecimalPairs[2 * (f / 100 % 100)], 2);
  std::memcpy(buf + 25, &kDecimalPairs[2 * (f % 100)], 2);
  buf_us = us;
  std::memcpy(p, buf, 29);
}

// 16 lowercase hex digits at p.
void WriteHex64(std::uint64_t v, char* p) {
  for (int i = 7; i >= 0; --i, v >>= 8) std::memcpy(p + 2 * i, &kHexPairs[2 * (v & 0xff)], 2);
}

// An event's text, written into a buffer on the stack and appended to the output in a few
// large appends (one for most events): a checked std::string append for every key, quote and
// number was a third of what a first event cost.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
  ~JsonWriter() { Flush(); }

  void Raw(std::string_view s) {
    if (s.size() > kLongText) {
      Flush();
      out_.append(s);
      return;
    }
    std::memcpy(Room(s.size()), s.data(), s.size());
    p_ += s.size();
  }
  void Raw(char c) { *Room(1) = c, ++p_; }
  // "key": (a key is a short literal).
  void Key(std::string_view key) {
    char* p = Room(key.size() + 3);
    *p = '"';
    std::memcpy(p + 1, key.data(), key.size());
    p[key.size() + 1] = '"';
    p[key.size() + 2] = ':';
    p_ += key.size() + 3;
  }
  // A JSON string literal, quotes included. False when bytes of `s` were not UTF-8 (each
  // became U+FFFD).
  bool String(std::string_view s) {
    Raw('"');
    bool replaced = false;
    for (std::size_t i = 0; i < s.size();) {
      const std::size_t n = std::min(kChunk, s.size() - i);
      p_ = WriteJsonText(s, i, i + n, Room(6 * n + 24), replaced);
    }
    Raw('"');
    return !replaced;
  }
  // ,"key":"value"
  void StringField(std::string_view key, std::string_view value) {
    Raw(',');
    Key(key);
    String(value);
  }
  void Time(TimeUs us) {
    WriteJsonTime(us, Room(29));
    p_ += 29;
  }
  void Hex64(std::uint64_t v) {
    WriteHex64(v, Room(16));
    p_ += 16;
  }
  template <typename Integer>
  void Number(Integer v) {
    char* p = Room(24);
    p_ = std::to_chars(p, p + 24, v).ptr;
  }
  // Standard base64 with padding, appended after what is written so far.
  void Base64(std::string_view s) {
    Flush();
    AppendBase64(s, out_);
  }
  void Flush() {
    out_.append(buf_, static_cast<std::size_t>(p_ - buf_));
    p_ = buf_;
  }

 private:
  static constexpr std::size_t kChunk = 512;      // text escaped per step (6 bytes out per byte in)
  static constexpr std::size_t kLongText = 1024;  // raw text appended directly
  static constexpr std::size_t kSize = 8 * kChunk;
  // Room for n <= 6 * kChunk + 24 more bytes.
  char* Room(std::size_t n) {
    if (static_cast<std::size_t>(buf_ + kSize - p_) < n) Flush();
    return p_;
  }

  std::string& out_;
  char buf_[kSize];
  char* p_ = buf_;
};

// The original line's fields. Empty header fields are left out rather than written as "".
void WriteRecordFields(const LogRecord& r, JsonWriter& w) {
  w.Key("time");
  w.Time(r.EventTime());
  w.Raw(',');
  w.Key("received");
  w.Time(r.arrival_us);
  if (!r.hostname.empty()) w.StringField("host", r.hostname);
  if (!r.app_name.empty()) w.StringField("app", r.app_name);
  if (!r.tag.empty()) w.StringField("tag", r.tag);
  if (!r.procid.empty()) w.StringField("procid", r.procid);
  if (!r.msgid.empty()) w.StringField("msgid", r.msgid);
  if (r.facility >= 0) {
    w.Raw(',');
    w.Key("facility");
    w.Number(static_cast<std::int64_t>(r.facility));
  }
  if (r.severity >= 0) {
    w.Raw(',');
    w.Key("severity");
    w.Number(static_cast<std::int64_t>(r.severity));
  }
  if (!r.structured_data.empty()) w.StringField("structured_data", r.structured_data);
  if (!r.json_fields.empty()) {
    w.Raw(',');
    w.Key("fields");
    w.Raw(r.json_fields);  // produced by the JSON parser: already valid JSON
  }
  w.StringField("format", SyslogFlavorName(r.flavor));
  if (r.outcome != ParseOutcome::kOk) w.StringField("parse_error", ParseOutcomeName(r.outcome));
  w.Raw(',');
  w.Key("message");
  // JSON strings hold only Unicode, so a message that is not UTF-8 shows U+FFFD in "message"
  // and travels exactly, byte for byte, in "message_base64".
  if (!w.String(r.message)) {
    w.Raw(',');
    w.Key("message_base64");
    w.Raw('"');
    w.Base64(r.message);
    w.Raw('"');
  }
}

// What the merger read from the message's own header; left out when not found.
void WriteHeaderFields(const Event& e, JsonWriter& w) {
  if (!e.level.empty()) w.StringField("level", e.level);
  if (!e.logger.empty()) w.StringField("logger", e.logger);
}

void WriteRecordObject(const LogRecord& r, JsonWriter& w) {
  w.Raw('{');
  WriteRecordFields(r, w);
  w.Raw('}');
}

}  // namespace

void AppendJsonString(std::string_view s, std::string& out) {
  JsonWriter w(out);
  w.String(s);
}

void AppendJsonTime(TimeUs us, std::string& out) {
  char buf[29];
  WriteJsonTime(us, buf);
  out.append(buf, sizeof buf);
}

void AppendHex64(std::uint64_t v, std::string& out) {
  char buf[16];
  WriteHex64(v, buf);
  out.append(buf, sizeof buf);
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

// One slot's statistics after its opening '{' and what the caller wrote there: distinct,
// lines, top; closes the object.
void WriteSlotCounts(const SlotSummary& slot, JsonWriter& w) {
  w.Raw("\"distinct\":");
  w.Number(slot.distinct);
  w.Raw(",\"lines\":");
  w.Number(slot.lines);
  w.Raw(",\"top\":[");
  for (std::size_t k = 0; k < slot.top.size(); ++k) {
    if (k > 0) w.Raw(',');
    w.Raw("{\"value\":");
    w.String(slot.top[k].value);
    w.Raw(",\"count\":");
    w.Number(slot.top[k].count);
    w.Raw('}');
  }
  w.Raw("]}");
}

// The slot statistics of a summary or a new_value event.
void WriteSlots(std::span<const SlotSummary> slots, JsonWriter& w) {
  if (slots.empty()) return;
  w.Raw(",\"slots\":[");
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const SlotSummary& slot = slots[i];
    if (i > 0) w.Raw(',');
    w.Raw("{\"token\":");
    w.Number(slot.token);
    w.Raw(',');
    WriteSlotCounts(slot, w);
  }
  w.Raw(']');
}

}  // namespace

void AppendEventJson(const Event& e, std::string& out) {
  JsonWriter w(out);
  w.Raw("{\"kind\":\"");
  w.Raw(EventKindName(e.kind));
  if (e.origin.stream != 0) {
    // Deterministic: the same lines replayed (Kafka after a crash) give the same id, so a
    // store keeping one row per id drops the replays. The kind tells apart a line's first or
    // new_value event from a summary whose first covered line it is.
    w.Raw("\",\"event_id\":\"");
    w.Hex64(e.origin.stream);
    w.Raw('-');
    w.Number(e.origin.position);
    w.Raw('-');
    w.Raw(EventKindName(e.kind)[0]);
  }
  w.Raw("\",\"group_id\":\"");
  w.Hex64(e.group_id);
  if (e.kind == EventKind::kAnnotate) {
    w.Raw("\",\"cluster_id\":\"");
    w.Hex64(e.group_id);
  }
  w.Raw("\",\"fingerprint\":\"");
  w.Hex64(e.fingerprint);
  w.Raw('"');
  if (e.kind == EventKind::kSummary) {
    w.StringField("reason", SummaryReasonName(e.reason));
    w.Raw(",\"closed\":");
    w.Raw(e.closed ? "true" : "false");
    w.Raw(",\"count\":");
    w.Number(e.count);
    w.Raw(",\"count_total\":");
    w.Number(e.count_total);
    w.Raw(",\"first_seen\":");
    w.Time(e.first_seen_us);
    w.Raw(",\"last_seen\":");
    w.Time(e.last_seen_us);
    w.Raw(",\"max_distance\":");
    w.Number(e.max_distance);
    w.StringField("template", e.template_text);
    WriteHeaderFields(e, w);
    if (e.record != nullptr) {
      if (!e.record->hostname.empty() && e.hosts.empty()) {
        w.StringField("host", e.record->hostname);
      }
      if (!e.record->app_name.empty()) w.StringField("app", e.record->app_name);
    }
    if (!e.hosts.empty()) {
      w.Raw(",\"hosts\":[");
      for (std::size_t i = 0; i < e.hosts.size(); ++i) {
        if (i > 0) w.Raw(',');
        w.String(e.hosts[i]);
      }
      w.Raw("],\"hosts_truncated\":");
      w.Raw(e.hosts_truncated ? "true" : "false");
    }
    WriteSlots(e.slots, w);
    if (e.peer != nullptr) {
      w.Raw(",\"peer\":{");
      WriteSlotCounts(*e.peer, w);
    }
    w.Raw(",\"samples\":[");
    if (e.record != nullptr) WriteRecordObject(*e.record, w);
    if (e.last_record != nullptr && e.last_record != e.record) {
      w.Raw(',');
      WriteRecordObject(*e.last_record, w);
    }
    w.Raw("]}\n");
    return;
  }
  WriteHeaderFields(e, w);
  if (e.kind == EventKind::kAnnotate || e.kind == EventKind::kNewValue) {
    w.StringField("template", e.template_text);
    w.Raw(",\"count_total\":");
    w.Number(e.count_total);
  }
  if (e.kind == EventKind::kNewValue) WriteSlots(e.slots, w);
  if (e.record != nullptr) {
    w.Raw(',');
    WriteRecordFields(*e.record, w);
  }
  w.Raw("}\n");
}

}  // namespace logfold
