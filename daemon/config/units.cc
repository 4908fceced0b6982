// Parsing and formatting of configuration durations and sizes. Numbers are handled as exact
// decimals in 128-bit integers, so "0.1s" is exactly 100000us and nothing is rounded.
#include "daemon/config/units.h"

#include <cstddef>
#include <iterator>
#include <limits>
#include <utility>

namespace logfold {
namespace {

__extension__ typedef unsigned __int128 Uint128;

struct Unit {
  std::string_view name;
  std::uint64_t factor;
};

constexpr Unit kDurationUnits[] = {
    {"us", 1},         {"ms", 1'000},           {"s", 1'000'000},
    {"m", 60'000'000}, {"h", 3'600'000'000ULL}, {"d", 86'400'000'000ULL},
};
constexpr std::string_view kDurationUnitList = "us, ms, s, m, h or d";

constexpr Unit kSizeUnits[] = {
    {"B", 1},
    {"KB", 1'000},
    {"KiB", 1ULL << 10},
    {"MB", 1'000'000},
    {"MiB", 1ULL << 20},
    {"GB", 1'000'000'000},
    {"GiB", 1ULL << 30},
    {"TB", 1'000'000'000'000ULL},
    {"TiB", 1ULL << 40},
};
constexpr std::string_view kSizeUnitList = "B, KB, KiB, MB, MiB, GB, GiB, TB or TiB";

// Beyond this many significant digits the 128-bit product digits * factor could overflow;
// no sane configuration value comes close.
constexpr std::size_t kMaxSignificantDigits = 25;

enum class ScaleResult { kOk, kTooLarge, kInexact, kTooManyDigits };

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// A parsed decimal: value = digits * 10^exponent, `digits` without leading or trailing zeros
// (empty for zero).
struct Decimal {
  std::string digits;
  std::int64_t exponent = 0;
};

// Splits "<number><spaces><unit>" and parses the number. Returns false when the number part
// is malformed; `unit` is then unspecified.
bool SplitNumber(std::string_view text, Decimal& number, std::string_view& unit) {
  std::size_t i = 0;
  const std::size_t int_begin = i;
  while (i < text.size() && IsDigit(text[i])) ++i;
  const std::string_view int_part = text.substr(int_begin, i - int_begin);
  std::string_view frac_part;
  if (i < text.size() && text[i] == '.') {
    const std::size_t frac_begin = ++i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    frac_part = text.substr(frac_begin, i - frac_begin);
    if (frac_part.empty()) return false;  // "1." or "1.s"
  }
  if (int_part.empty()) return false;  // ".5s", "s", "+1s"
  // A second '.' right after the number is a malformed number, not the start of a unit.
  if (i < text.size() && (text[i] == '.' || IsDigit(text[i]))) return false;

  std::int64_t exponent = 0;
  if (i + 1 < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    bool negative = false;
    if (text[j] == '+' || text[j] == '-') negative = text[j++] == '-';
    if (j < text.size() && IsDigit(text[j])) {
      while (j < text.size() && IsDigit(text[j])) {
        // Saturate: any exponent this large is out of range or inexact either way.
        if (exponent < 1'000'000) exponent = exponent * 10 + (text[j] - '0');
        ++j;
      }
      if (negative) exponent = -exponent;
      i = j;
    }
  }
  while (i < text.size() && text[i] == ' ') ++i;
  unit = text.substr(i);

  std::string digits;
  digits.reserve(int_part.size() + frac_part.size());
  for (char c : int_part) {
    if (!digits.empty() || c != '0') digits.push_back(c);
  }
  for (char c : frac_part) {
    if (!digits.empty() || c != '0') digits.push_back(c);
  }
  exponent -= static_cast<std::int64_t>(frac_part.size());
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++exponent;
  }
  number.digits = std::move(digits);
  number.exponent = number.digits.empty() ? 0 : exponent;
  return true;
}

// out = number * factor, exactly, if it is a whole number no greater than `max`.
ScaleResult Scale(const Decimal& number, std::uint64_t factor, std::uint64_t max,
                  std::uint64_t& out) {
  if (number.digits.empty()) {
    out = 0;
    return ScaleResult::kOk;
  }
  // Integer digits of the value before scaling; 10^20 units exceed any 64-bit result.
  const std::int64_t magnitude = static_cast<std::int64_t>(number.digits.size()) + number.exponent;
  if (magnitude > 20) return ScaleResult::kTooLarge;
  if (number.digits.size() > kMaxSignificantDigits) return ScaleResult::kTooManyDigits;
  Uint128 value = 0;
  for (char c : number.digits) value = value * 10 + static_cast<unsigned>(c - '0');
  value *= factor;
  if (number.exponent >= 0) {
    for (std::int64_t e = 0; e < number.exponent; ++e) {
      value *= 10;
      if (value > max) return ScaleResult::kTooLarge;
    }
  } else {
    // value is non-zero and below 10^38 (at most 25 digits times a factor below 2^41), so
    // no higher power of ten divides it; stopping here also keeps the divisor in 128 bits.
    if (number.exponent < -38) return ScaleResult::kInexact;
    Uint128 divisor = 1;
    for (std::int64_t e = 0; e < -number.exponent; ++e) divisor *= 10;
    if (value % divisor != 0) return ScaleResult::kInexact;
    value /= divisor;
  }
  if (value > max) return ScaleResult::kTooLarge;
  out = static_cast<std::uint64_t>(value);
  return ScaleResult::kOk;
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  out.append(s);
  out.push_back('"');
  return out;
}

// Shared by durations and sizes; `what` is "duration" or "size".
bool ParseScaled(std::string_view text, std::string_view what, const Unit* units,
                 std::size_t unit_count, std::string_view unit_list, bool case_insensitive,
                 bool bare_number_is_base_unit, std::uint64_t max, std::uint64_t& out,
                 std::string& error) {
  auto fail = [&](std::string_view why) {
    error = "invalid ";
    error.append(what).append(" ").append(Quote(text)).append(": ").append(why);
    return false;
  };
  if (text.empty()) return fail("empty");
  if (text.front() == '-') return fail("negative");
  Decimal number;
  std::string_view unit_text;
  if (!SplitNumber(text, number, unit_text)) return fail("malformed number");

  std::uint64_t factor = 0;
  if (unit_text.empty()) {
    // A bare zero is unambiguous whatever the unit; any other bare duration is a likely
    // mistake (seconds? milliseconds?), so it is refused rather than guessed.
    if (!bare_number_is_base_unit && !number.digits.empty()) {
      return fail("missing unit (" + std::string(unit_list) + ")");
    }
    factor = 1;
  } else {
    for (std::size_t i = 0; i < unit_count; ++i) {
      const bool match = case_insensitive ? EqualsIgnoreCase(unit_text, units[i].name)
                                          : unit_text == units[i].name;
      if (match) factor = units[i].factor;
    }
    if (factor == 0) {
      return fail("unknown unit " + Quote(unit_text) + " (" + std::string(unit_list) + ")");
    }
  }
  switch (Scale(number, factor, max, out)) {
    case ScaleResult::kOk:
      return true;
    case ScaleResult::kTooLarge:
      return fail("too large");
    case ScaleResult::kInexact:
      return fail(what == "duration" ? "finer than 1us" : "not a whole number of bytes");
    case ScaleResult::kTooManyDigits:
      return fail("too many significant digits");
  }
  return fail("malformed number");
}

std::string FormatScaled(std::uint64_t value, const Unit* units, std::size_t unit_count) {
  // Units are listed smallest first; take the largest that divides exactly.
  for (std::size_t i = unit_count; i-- > 0;) {
    if (value % units[i].factor == 0) {
      return std::to_string(value / units[i].factor).append(units[i].name);
    }
  }
  return std::to_string(value);
}

}  // namespace

bool ParseDuration(std::string_view text, TimeUs& out_us, std::string& error) {
  std::uint64_t value = 0;
  if (!ParseScaled(text, "duration", kDurationUnits, std::size(kDurationUnits), kDurationUnitList,
                   /*case_insensitive=*/false,
                   /*bare_number_is_base_unit=*/false,
                   static_cast<std::uint64_t>(std::numeric_limits<TimeUs>::max()), value, error)) {
    return false;
  }
  out_us = static_cast<TimeUs>(value);
  return true;
}

bool ParseSize(std::string_view text, std::uint64_t& out, std::string& error) {
  std::uint64_t value = 0;
  if (!ParseScaled(text, "size", kSizeUnits, std::size(kSizeUnits), kSizeUnitList,
                   /*case_insensitive=*/true, /*bare_number_is_base_unit=*/true,
                   std::numeric_limits<std::uint64_t>::max(), value, error)) {
    return false;
  }
  out = value;
  return true;
}

std::string FormatDuration(TimeUs us) {
  if (us == 0) return "0s";
  if (us < 0) {
    // Through unsigned arithmetic so that the minimum value does not overflow on negation.
    // insert() rather than "-" + string: GCC 12 at -O3 warns (-Wrestrict, a false positive)
    // on the operator+ overload that prepends a literal.
    std::string text =
        FormatScaled(0 - static_cast<std::uint64_t>(us), kDurationUnits, std::size(kDurationUnits));
    text.insert(text.begin(), '-');
    return text;
  }
  return FormatScaled(static_cast<std::uint64_t>(us), kDurationUnits, std::size(kDurationUnits));
}

std::string FormatSize(std::uint64_t bytes) {
  if (bytes == 0) return "0B";
  return FormatScaled(bytes, kSizeUnits, std::size(kSizeUnits));
}

}  // namespace logfold
