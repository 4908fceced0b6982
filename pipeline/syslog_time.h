// Calendar arithmetic and timestamp parsing for syslog headers: RFC 3339 and the BSD
// "Mmm dd hh:mm:ss" form, whose missing year is inferred from a reference time.
#ifndef LOGFOLD_PIPELINE_SYSLOG_TIME_H_
#define LOGFOLD_PIPELINE_SYSLOG_TIME_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "pipeline/log_record.h"

namespace logfold {

bool IsLeapYear(std::int64_t year);
// 0 for a month outside 1..12.
int DaysInMonth(std::int64_t year, int month);
// Days since 1970-01-01 of a proleptic Gregorian date; the date is not validated.
std::int64_t DaysFromCivil(std::int64_t year, int month, int day);
// Gregorian year containing `us` (UTC).
std::int64_t YearOfTime(TimeUs us);

// Parses all of `text` as an RFC 3339 date-time ("2003-10-11T22:14:15.003Z") and returns UTC
// microseconds. Fraction digits beyond the sixth are accepted and truncated. The date/time
// separator may be 'T', 't' or ' '. A missing offset is read as UTC, because senders that
// omit it are far more common than senders whose local time is not UTC.
std::optional<TimeUs> ParseRfc3339(std::string_view text);

// The fields of a BSD syslog timestamp, which carries no year and no zone.
struct BsdTimestamp {
  int month = 0;  // 1..12
  int day = 0;    // 1..31, checked against the month only once the year is known
  int hour = 0;
  int minute = 0;
  int second = 0;
  int micros = 0;  // optional ".fff" some senders append
  int year = 0;    // a year inside the stamp ("Oct 16 2009 23:47:31", Cisco); 0 when absent
};

// Parses a BSD timestamp at the start of `text`: "Mmm dd hh:mm:ss" with the day zero- or
// space-padded ("Mar  1") or unpadded ("Mar 1"), an optional year between the day and the time
// ("Mar 7 2008 19:06:53", as Cisco and rsyslog's parser accept), an optional fraction and an
// optional trailing ':'. Returns the number of bytes consumed, or 0 when `text` does not start
// with one.
std::size_t ParseBsdTimestamp(std::string_view text, BsdTimestamp& out);

// True when `text` starts the way a BSD timestamp does ("Mmm d" or "Mmm  d", any case), so a
// failed ParseBsdTimestamp there means a broken stamp rather than no stamp at all.
bool LooksLikeBsdTimestamp(std::string_view text);

// A stamp carrying its year is placed in it (nullopt when the date does not exist there).
// Otherwise places `ts` (read as UTC) in the year, among the reference year and its neighbours,
// that puts it closest to `reference_us`, so a "Dec 31" line that arrives on Jan 1 belongs to the
// previous year. Years where the date does not exist (Feb 29) are skipped; nullopt when none
// of the three has it.
std::optional<TimeUs> ResolveBsdTimestamp(const BsdTimestamp& ts, TimeUs reference_us);

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_SYSLOG_TIME_H_
