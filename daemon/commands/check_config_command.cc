// `logfold check-config`: loads a config with the same validation as `serve` and reports it.
#include "daemon/commands/check_config_command.h"

#include "daemon/config/config.h"

namespace logfold {

int RunCheckConfig(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  std::string path;
  bool print = false;
  for (const std::string& a : args) {
    if (a == "--print") {
      print = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs("usage: logfold check-config [FILE] [--print]\n", out);
      return 0;
    } else if (path.empty()) {
      path = a;
    } else {
      std::fprintf(err, "logfold check-config: unexpected argument \"%s\"\n", a.c_str());
      return 2;
    }
  }
  Config config;
  std::vector<ConfigError> errors;
  const bool ok = path.empty() ? ParseConfig(DefaultConfigJson(), config, errors)
                               : LoadConfigFile(path, config, errors);
  if (!ok) {
    std::fprintf(err, "%s: invalid config\n%s", path.empty() ? "(embedded default)" : path.c_str(),
                 FormatConfigErrors(errors).c_str());
    return 1;
  }
  if (print) {
    std::fprintf(out, "%s\n", ConfigToJson(config).c_str());
  } else {
    std::fprintf(out, "%s: ok\n", path.empty() ? "(embedded default)" : path.c_str());
  }
  return 0;
}

}  // namespace logfold
