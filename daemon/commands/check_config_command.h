// `logfold check-config`: validates a config file (or the embedded default) without starting
// anything, or prints the effective config with every default filled in.
#ifndef LOGFOLD_DAEMON_COMMANDS_CHECK_CONFIG_COMMAND_H_
#define LOGFOLD_DAEMON_COMMANDS_CHECK_CONFIG_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

namespace logfold {

// `logfold check-config [FILE] [--print]`: validates FILE (or the embedded default), prints
// every error as "path: reason", or with --print the effective config. Exit 0 when valid.
int RunCheckConfig(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_COMMANDS_CHECK_CONFIG_COMMAND_H_
