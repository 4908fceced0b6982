// `logfold top`: a terminal view of what is repeating now, polling a running daemon's live
// view (GET /api/groups and /api/stats on its metrics listener), like top(1).
#ifndef LOGFOLD_DAEMON_COMMANDS_TOP_COMMAND_H_
#define LOGFOLD_DAEMON_COMMANDS_TOP_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

namespace logfold {

// `logfold top [--url URL] [--once] [--sort rate|count|recent] [--limit N] [--interval S]
// [--filter TEXT]`. Interactive by default (keys: r, c, n sort; / filter; q quits); --once
// prints one table to `out` and exits (for scripts). Returns the exit code.
int RunTop(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_COMMANDS_TOP_COMMAND_H_
