// Timestamp parsing for syslog headers. Runs once per received line, so it is hand-written
// scanning with no allocation, no locale and no libc time functions (which consult TZ).
#include "pipeline/syslog_time.h"

#include <algorithm>
#include <limits>

namespace logfold {
namespace {

constexpr std::int64_t kMicrosPerSecond = 1'000'000;
constexpr std::int64_t kSecondsPerDay = 86'400;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads `count` digits at `pos`; false if any is not a digit.
bool ReadDigits(std::string_view s, std::size_t pos, std::size_t count, int& value) {
  if (pos + count > s.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (!IsDigit(s[i])) return false;
    v = v * 10 + (s[i] - '0');
  }
  value = v;
  return true;
}

// Reads a '.' fraction at `pos` if present, keeping microsecond precision and dropping the
// rest. Returns false only for a '.' with no digits after it.
bool ReadFraction(std::string_view s, std::size_t& pos, int& micros) {
  micros = 0;
  if (pos >= s.size() || s[pos] != '.') return true;
  ++pos;
  int digits = 0;
  while (pos < s.size() && IsDigit(s[pos])) {
    if (digits < 6) {
      micros = micros * 10 + (s[pos] - '0');
      ++digits;
    }
    ++pos;
  }
  if (digits == 0) return false;  // "12:00:00." is malformed, not a zero fraction
  for (int d = digits; d < 6; ++d) micros *= 10;
  return true;
}

bool TimeOfDayValid(int hour, int minute, int second) {
  // 60 is a leap second; it is kept as arithmetic rollover into the next minute.
  return hour <= 23 && minute <= 59 && second <= 60;
}

TimeUs ComposeUs(std::int64_t days, int hour, int minute, int second, int micros) {
  const std::int64_t secs = days * kSecondsPerDay + hour * 3600 + minute * 60 + second;
  return secs * kMicrosPerSecond + micros;
}

// Three-letter month names; matched case-insensitively because some devices shout.
constexpr std::string_view kMonths[12] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec"};

int MonthFromName(std::string_view s) {
  if (s.size() < 3) return 0;
  const char a = static_cast<char>(s[0] | 0x20);
  const char b = static_cast<char>(s[1] | 0x20);
  const char c = static_cast<char>(s[2] | 0x20);
  for (int i = 0; i < 12; ++i) {
    const std::string_view m = kMonths[i];
    if (m[0] == a && m[1] == b && m[2] == c) return i + 1;
  }
  return 0;
}

}  // namespace

bool IsLeapYear(std::int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(std::int64_t year, int month) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12) return 0;
  if (month == 2 && IsLeapYear(year)) return 29;
  return kDays[month - 1];
}

// Howard Hinnant's days_from_civil: exact for the whole proleptic Gregorian calendar.
std::int64_t DaysFromCivil(std::int64_t year, int month, int day) {
  const std::int64_t y = year - (month <= 2 ? 1 : 0);
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t mp = month > 2 ? month - 3 : month + 9;
  const std::int64_t doy = (153 * mp + 2) / 5 + day - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

std::int64_t YearOfTime(TimeUs us) {
  // Floor division so that times before 1970 land on the right day.
  std::int64_t days = us / (kMicrosPerSecond * kSecondsPerDay);
  if (us % (kMicrosPerSecond * kSecondsPerDay) < 0) --days;
  // Inverse of DaysFromCivil (Hinnant's civil_from_days), year part only.
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t month = mp < 10 ? mp + 3 : mp - 9;
  return yoe + era * 400 + (month <= 2 ? 1 : 0);
}

std::optional<TimeUs> ParseRfc3339(std::string_view s) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!ReadDigits(s, 0, 4, year) || s.size() < 19 || s[4] != '-' || !ReadDigits(s, 5, 2, month) ||
      s[7] != '-' || !ReadDigits(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      !ReadDigits(s, 11, 2, hour) || s[13] != ':' || !ReadDigits(s, 14, 2, minute) ||
      s[16] != ':' || !ReadDigits(s, 17, 2, second)) {
    return std::nullopt;
  }
  std::size_t pos = 19;
  int micros = 0;
  if (!ReadFraction(s, pos, micros)) return std::nullopt;

  int offset_seconds = 0;
  if (pos < s.size()) {
    const char z = s[pos];
    if (z == 'Z' || z == 'z') {
      ++pos;
    } else if (z == '+' || z == '-') {
      int oh = 0, om = 0;
      if (!ReadDigits(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
          !ReadDigits(s, pos + 4, 2, om) || oh > 23 || om > 59) {
        return std::nullopt;
      }
      offset_seconds = (oh * 3600 + om * 60) * (z == '-' ? -1 : 1);
      pos += 6;
    } else {
      return std::nullopt;
    }
  }
  if (pos != s.size()) return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) ||
      !TimeOfDayValid(hour, minute, second)) {
    return std::nullopt;
  }
  // Local time = UTC + offset, so UTC = local - offset.
  return ComposeUs(DaysFromCivil(year, month, day), hour, minute, second, micros) -
         static_cast<TimeUs>(offset_seconds) * kMicrosPerSecond;
}

bool LooksLikeBsdTimestamp(std::string_view s) {
  if (s.size() < 5 || s[3] != ' ' || MonthFromName(s) == 0) return false;
  return IsDigit(s[4]) || (s[4] == ' ' && s.size() > 5 && IsDigit(s[5]));
}

std::size_t ParseBsdTimestamp(std::string_view s, BsdTimestamp& out) {
  // Shortest form is "Mar 1 00:00:00" (14 bytes).
  if (s.size() < 14 || s[3] != ' ') return 0;
  const int month = MonthFromName(s);
  if (month == 0) return 0;

  int day = 0;
  std::size_t pos = 4;
  if (s[4] == ' ' && IsDigit(s[5])) {
    day = s[5] - '0';
    pos = 6;
  } else if (IsDigit(s[4]) && IsDigit(s[5])) {
    day = (s[4] - '0') * 10 + (s[5] - '0');
    pos = 6;
  } else if (IsDigit(s[4]) && s[5] == ' ') {
    day = s[4] - '0';
    pos = 5;
  } else {
    return 0;
  }
  if (pos >= s.size() || s[pos] != ' ') return 0;
  ++pos;

  // rsyslog's rule: a four-digit number in the hour's place that is a plausible year is one.
  int year = 0;
  if (ReadDigits(s, pos, 4, year) && pos + 4 < s.size() && s[pos + 4] == ' ' && year > 1970 &&
      year < 2100) {
    pos += 5;
  } else {
    year = 0;
  }

  int hour = 0, minute = 0, second = 0;
  if (!ReadDigits(s, pos, 2, hour) || pos + 8 > s.size() || s[pos + 2] != ':' ||
      !ReadDigits(s, pos + 3, 2, minute) || s[pos + 5] != ':' ||
      !ReadDigits(s, pos + 6, 2, second)) {
    return 0;
  }
  pos += 8;
  int micros = 0;
  if (!ReadFraction(s, pos, micros)) return 0;
  if (day < 1 || day > 31 || !TimeOfDayValid(hour, minute, second)) return 0;
  if (pos < s.size() && s[pos] == ':') ++pos;  // Cisco IOS ends its stamp with ':'

  out.month = month;
  out.day = day;
  out.hour = hour;
  out.minute = minute;
  out.second = second;
  out.micros = micros;
  out.year = year;
  return pos;
}

std::optional<TimeUs> ResolveBsdTimestamp(const BsdTimestamp& ts, TimeUs reference_us) {
  if (ts.year != 0) {
    if (ts.day > DaysInMonth(ts.year, ts.month)) return std::nullopt;
    return ComposeUs(DaysFromCivil(ts.year, ts.month, ts.day), ts.hour, ts.minute, ts.second,
                     ts.micros);
  }
  // Clamp the reference to years 1..9999 so the candidate arithmetic and the distance below
  // cannot overflow whatever arrival time a caller passes.
  constexpr TimeUs kMinRef = -62135596800LL * kMicrosPerSecond;  // 0001-01-01
  constexpr TimeUs kMaxRef = 253370764800LL * kMicrosPerSecond;  // 9999-01-01
  const TimeUs ref = std::clamp(reference_us, kMinRef, kMaxRef);
  const std::int64_t ref_year = YearOfTime(ref);

  // The year that makes the timestamp the latest one not more than a month ahead of the
  // reference: a log line is from the recent past (a "Mar 1" line read in November is this
  // year's, not next year's), give or take a sender clock running somewhat fast or a line
  // stamped just before New Year and received just after.
  // Candidates grow with the year, so the first that fits going down is the latest. Next
  // year's can fit only for a January timestamp: the reference is before next January 1, so
  // a month ahead of it is before February 1. Runs per RFC 3164 line, hence the shortcut.
  constexpr TimeUs kMaxAhead = 31LL * 86400 * kMicrosPerSecond;
  for (std::int64_t year = ref_year + (ts.month == 1 ? 1 : 0); year >= ref_year - 1; --year) {
    if (ts.day > DaysInMonth(year, ts.month)) continue;
    const TimeUs t =
        ComposeUs(DaysFromCivil(year, ts.month, ts.day), ts.hour, ts.minute, ts.second, ts.micros);
    if (t - ref <= kMaxAhead) return t;
  }
  // Feb 29 with no leap year among the earlier candidates: take any that exists.
  for (std::int64_t year = ref_year + 1; year >= ref_year - 1; --year) {
    if (ts.day <= DaysInMonth(year, ts.month)) {
      return ComposeUs(DaysFromCivil(year, ts.month, ts.day), ts.hour, ts.minute, ts.second,
                       ts.micros);
    }
  }
  return std::nullopt;
}

}  // namespace logfold
