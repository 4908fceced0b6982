// Fuzz target: ParseMessageHeader (the application's own header at the start of a message).
// Never reads outside the line; the body starts inside the line's first kMaxHeaderBytes at a
// non-space byte; the level and logger are bytes of the header; every level found maps to a
// syslog severity; the same bytes elsewhere in memory parse to the same offsets.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline/message_header.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool Within(std::string_view part, std::string_view line, std::size_t end) {
  return part.empty() ||
         (part.data() >= line.data() && part.data() + part.size() <= line.data() + end);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // An exact-size heap copy, so that ASan sees a read past the line's end.
  const std::string copy(reinterpret_cast<const char*>(data), size);
  const std::string_view line(copy);
  const logfold::MessageHeader h = logfold::ParseMessageHeader(line);
  FUZZ_CHECK(h.body <= logfold::kMaxHeaderBytes, "the header is a short prefix");
  if (h.body == 0) {
    FUZZ_CHECK(h.level.empty() && h.logger.empty(), "no header, no level or logger");
    return 0;
  }
  FUZZ_CHECK(h.body < line.size(), "a header leaves a message");
  FUZZ_CHECK(line[h.body] != ' ' && line[h.body] != '\t', "the message starts at a word");
  FUZZ_CHECK(Within(h.level, line, h.body), "the level is in the header");
  FUZZ_CHECK(Within(h.logger, line, h.body), "the logger is in the header");
  const int severity = logfold::LevelSeverity(h.level);
  FUZZ_CHECK(severity >= -1 && severity <= 7, "a syslog severity");
  FUZZ_CHECK(h.level.empty() || severity >= 0, "every level found has a severity");
  const std::string again(line);
  const logfold::MessageHeader h2 = logfold::ParseMessageHeader(again);
  FUZZ_CHECK(
      h2.body == h.body && h2.level.size() == h.level.size() &&
          h2.logger.size() == h.logger.size() &&
          (h.level.empty() || h2.level.data() - again.data() == h.level.data() - line.data()),
      "the same bytes parse the same");
  return 0;
}
