// Sinks that append a byte stream to a local descriptor: stdout, and a file that follows
// logrotate's move-then-HUP via Reopen.
#ifndef LOGFOLD_DAEMON_STREAM_SINK_H_
#define LOGFOLD_DAEMON_STREAM_SINK_H_

#include <unistd.h>

#include <memory>
#include <string>

#include "daemon/config/options/file_sink_options.h"
#include "daemon/config/options/sink_options.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

// NDJSON to `fd` (not owned; the daemon passes STDOUT_FILENO, tests a pipe). Once the reader
// is gone (EPIPE) the error is counted and logged, and later output is counted as
// discarded, so a closed stdout cannot wedge the workers.
std::unique_ptr<Sink> MakeStdoutSink(const SinkOptions& sink, Metrics& metrics,
                                     int fd = STDOUT_FILENO);

// NDJSON appended to file.path (O_APPEND|O_CREAT, mode 0640). The file is opened here so
// that a bad path fails the daemon's start: returns nullptr and sets `error`. Later write or
// open failures are counted and retried with backoff, keeping the buffer.
std::unique_ptr<Sink> MakeFileSink(const SinkOptions& sink, const FileSinkOptions& file,
                                   Metrics& metrics, std::string& error);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_STREAM_SINK_H_
