// `logfold replay`: runs the engine over files or stdin, in order, and writes NDJSON events to
// stdout. The offline twin of `serve`, used for replays, scoring and benchmarks.
#ifndef LOGFOLD_DAEMON_REPLAY_COMMAND_H_
#define LOGFOLD_DAEMON_REPLAY_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

namespace logfold {

// args excludes "replay". Returns the process exit code (0 ok, 2 bad usage, 1 I/O error).
int RunReplay(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_REPLAY_COMMAND_H_
