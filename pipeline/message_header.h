// MessageHeader: finds the application's own header at the start of a message (timestamp,
// level, thread, logger) so it stays out of the fingerprint and template. No format list.
#ifndef LOGFOLD_PIPELINE_MESSAGE_HEADER_H_
#define LOGFOLD_PIPELINE_MESSAGE_HEADER_H_

#include <cstdint>
#include <string_view>

namespace logfold {

struct MessageHeader {
  // Where the message proper starts; 0 when the line has no header.
  std::uint32_t body = 0;
  std::string_view level;   // the level word as written ("INFO", "notice", "W"), or empty
  std::string_view logger;  // the logger, tag or program as written, or empty
};

// Headers longer than this are not looked for: a header is a short prefix.
inline constexpr std::size_t kMaxHeaderBytes = 384;

// The rule, for any log: a line's header is its leading run of fields that logging libraries
// write before the message (time fields: numbers, dates, times, month and weekday names, the
// kernel's "[  12.345678]"; one level: a level word, or a level letter alone, fused with a
// date ("I0509") or with a tag ("D/Tag( 12):"); bracketed fields such as a thread; a caller
// such as "run.go:42"; at most two or three names such as a host and a program), holding a
// time of day, a date or a level, and ending at a name followed by ':' (or ']', or a lone
// " : "), a separator (" - ", " | ", " -- ", " --- "), a bracketed field after a logger, a
// component in its own column after the level, or else at the first plain word that follows the
// time and level fields. Time fields followed by fields joined by '|' without spaces end at the
// first field holding a space. Anything that does not fit leaves the line without a header.
MessageHeader ParseMessageHeader(std::string_view line);

// The syslog severity (0 emerg .. 7 debug) a header's level word stands for, case-insensitive:
// "FATAL", "crit" and "SEVERE" are 2, "E"/"ERROR" 3, "W"/"warn" 4, "notice" 5, "I"/"info" 6,
// "D"/"debug"/"trace"/"fine"/"verbose" 7; -1 for anything else (and the empty level).
int LevelSeverity(std::string_view level);

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_MESSAGE_HEADER_H_
