// Fuzz target: ParseMessageHeader (the application's own header at the start of a message)
// and HeaderLearner (a scope's learned header, over the input's lines). Never reads outside
// the line; the body starts inside the line's first kMaxHeaderBytes at a non-space byte; the
// level and logger are bytes of the header (a logger may also end the line, log4j's
// "(package.Class)"); every level the grammar finds maps to a syslog severity; the same bytes
// elsewhere in memory parse to the same offsets.
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

// The input's lines, each an exact-size copy, through one scope's learner (its learned
// header must hold to the same bounds as the grammar's).
void LearnLines(std::string_view input) {
  logfold::HeaderLearner learner;
  for (std::size_t start = 0; start <= input.size();) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string copy(input.substr(start, end - start));
    const std::string_view line(copy);
    const logfold::MessageHeader h = learner.Parse(1, line);
    FUZZ_CHECK(h.body <= logfold::kMaxHeaderBytes && (h.body == 0 || h.body < line.size()),
               "a learned header is a short prefix that leaves a message");
    FUZZ_CHECK(h.body == 0 || (line[h.body] != ' ' && line[h.body] != '\t'),
               "a learned header's message starts at a word");
    FUZZ_CHECK(Within(h.level, line, line.size()) && Within(h.logger, line, line.size()),
               "a learned level and logger are bytes of the line");
    FUZZ_CHECK(h.tail == 0 || h.body + h.tail < line.size(),
               "a learned trailing logger leaves a message after the header");
    start = end + 1;
  }
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
    LearnLines(line);
    return 0;
  }
  FUZZ_CHECK(h.body < line.size(), "a header leaves a message");
  FUZZ_CHECK(h.tail == 0 || h.body + h.tail < line.size(),
             "a trailing logger leaves a message after the header");
  FUZZ_CHECK(line[h.body] != ' ' && line[h.body] != '\t', "the message starts at a word");
  FUZZ_CHECK(Within(h.level, line, h.body), "the level is in the header");
  FUZZ_CHECK(Within(h.logger, line, h.body) ||
                 (Within(h.logger, line, line.size()) &&
                  h.logger.data() + h.logger.size() + 1 == line.data() + line.size()),
             "the logger is in the header or ends the line");
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
  LearnLines(line);
  return 0;
}
