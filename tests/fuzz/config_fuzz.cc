// Fuzz target: the configuration loader. Never crashes or throws; a refused document has at
// least one error; an accepted one's effective print (check-config --print) parses back to the
// same Config and prints identically.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  logfold::Config config;
  std::vector<logfold::ConfigError> errors;
  if (!logfold::ParseConfig(text, config, errors)) {
    FUZZ_CHECK(!errors.empty(), "a refused config says why");
    FUZZ_CHECK(!logfold::FormatConfigErrors(errors).empty(), "errors format");
    FUZZ_CHECK(config == logfold::Config(), "a refused config leaves the output untouched");
    return 0;
  }
  FUZZ_CHECK(errors.empty(), "an accepted config has no errors");
  const std::string printed = logfold::ConfigToJson(config);
  logfold::Config reparsed;
  std::vector<logfold::ConfigError> reparse_errors;
  const bool accepted = logfold::ParseConfig(printed, reparsed, reparse_errors);
  if (!accepted) {
    std::fprintf(stderr, "%s\n%s", printed.c_str(),
                 logfold::FormatConfigErrors(reparse_errors).c_str());
  }
  FUZZ_CHECK(accepted, "the effective print is a valid config");
  FUZZ_CHECK(reparsed == config, "the effective print parses back to the same config");
  FUZZ_CHECK(logfold::ConfigToJson(reparsed) == printed, "the effective print is a fixed point");
  return 0;
}
