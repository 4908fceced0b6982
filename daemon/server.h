// Server: the `logfold serve` process — builds sinks, workers, listeners and the metrics
// endpoint from a Config, handles SIGHUP (reload) and SIGTERM/SIGINT (drain and exit).
#ifndef LOGFOLD_DAEMON_SERVER_H_
#define LOGFOLD_DAEMON_SERVER_H_

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace logfold {

// `logfold serve [--config FILE]`: runs until SIGTERM/SIGINT, or until every input is a
// stream (stdin/file) that has been read to the end. Returns the process exit code.
int RunServe(const std::vector<std::string>& args);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_SERVER_H_
