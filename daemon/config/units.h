// Durations and byte sizes as written in the configuration ("250ms", "64KiB"): exact parsing
// and formatting back in the largest unit that represents a value exactly.
#ifndef LOGFOLD_DAEMON_UNITS_H_
#define LOGFOLD_DAEMON_UNITS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline/log_record.h"

namespace logfold {

inline constexpr TimeUs kMicrosecond = 1;
inline constexpr TimeUs kMillisecond = 1'000;
inline constexpr TimeUs kSecond = 1'000'000;
inline constexpr TimeUs kMinute = 60 * kSecond;
inline constexpr TimeUs kHour = 60 * kMinute;
inline constexpr TimeUs kDay = 24 * kHour;

inline constexpr std::uint64_t kKiB = 1024;
inline constexpr std::uint64_t kMiB = 1024 * kKiB;
inline constexpr std::uint64_t kGiB = 1024 * kMiB;

// A non-negative decimal number (optionally with a fraction and an exponent: "1.5s", "2e3ms")
// followed by a unit: us, ms, s, m, h or d; spaces between number and unit are allowed. A
// bare number is accepted only when it is zero ("0"). The value must be a whole number of
// microseconds that fits in TimeUs: "1.5us" and "1e400s" are rejected, never rounded. On
// failure returns false, leaves `out_us` alone and sets `error` to a complete sentence
// fragment naming the text, e.g. `invalid duration "10": missing unit (us, ms, s, m, h or d)`.
bool ParseDuration(std::string_view text, TimeUs& out_us, std::string& error);

// A non-negative decimal number with an optional unit: B, KB, MB, GB, TB (powers of 1000) or
// KiB, MiB, GiB, TiB (powers of 1024), matched case-insensitively. No unit means bytes.
// The value must be a whole number of bytes that fits in 64 bits.
bool ParseSize(std::string_view text, std::uint64_t& out, std::string& error);

// The largest of d, h, m, s, ms, us that divides `us` exactly ("90s", "1500ms", "0s"), so
// ParseDuration(FormatDuration(x)) == x for every x >= 0. Negative values get a '-' prefix.
std::string FormatDuration(TimeUs us);

// The largest of TiB, TB, GiB, GB, MiB, MB, KiB, KB, B that divides `bytes` exactly ("64KiB",
// "1KB", "1000KiB", "0B"), so ParseSize(FormatSize(x)) == x.
std::string FormatSize(std::uint64_t bytes);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_UNITS_H_
