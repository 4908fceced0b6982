// Sink: where encoded events leave the daemon (stdout, a file, a TCP collector, a syslog
// relay, an HTTP log store), and the one factory that builds it from a validated output.
#ifndef LOGFOLD_DAEMON_SINK_H_
#define LOGFOLD_DAEMON_SINK_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "daemon/config/config.h"
#include "daemon/runtime/metrics.h"
#include "daemon/runtime/tls_options.h"

namespace logfold {

// What bytes a sink expects in Submit. In both encodings a batch is a sequence of complete
// records, each followed by '\n'.
enum class SinkEncoding {
  kNdjson,      // AppendEventJson output
  kSyslog5424,  // AppendEventSyslog output; the sink adds the transport framing
};

// One output. Every implementation owns a bounded byte buffer and one thread that drains it
// to the destination, so a slow or dead destination stalls only the workers that wait on
// its full buffer, never the other sinks.
class Sink {
 public:
  virtual ~Sink();

  virtual const std::string& name() const = 0;
  virtual SinkEncoding encoding() const = 0;

  // Thread-safe. Appends a batch of complete encoded records. Blocks while the buffer is
  // full; returns false if `deadline` passed first, or once Stop has begun (nothing taken
  // either way; the caller retries or gives up). A batch larger than the whole buffer is
  // accepted when the buffer is empty, so it cannot wait forever.
  virtual bool Submit(std::string_view batch, std::chrono::steady_clock::time_point deadline) = 0;

  // SIGHUP: reopen output files (logrotate's move-then-HUP); no-op for other sinks. Data
  // submitted after Reopen returns goes to the reopened file.
  virtual void Reopen() = 0;

  // Writes out everything buffered (waiting up to `deadline`), then closes. Returns true if
  // all of it was written. What is left at the deadline is appended to `*unsent` as whole
  // '\n'-separated records in the sink's encoding (the Submit form), for a successor or a
  // disk buffer to take over; without `unsent` it is counted as lost (bytes, events and
  // lines, reason "shutdown") and logged. A sink with a disk buffer keeps it there instead.
  // Idempotent: only the first call hands anything over.
  virtual bool Stop(std::chrono::steady_clock::time_point deadline, std::string* unsent) = 0;
  bool Stop(std::chrono::steady_clock::time_point deadline) { return Stop(deadline, nullptr); }

  // Bytes accepted and not yet known to be delivered (for a TCP sink this includes bytes
  // written but not yet acknowledged by the peer).
  virtual std::size_t buffered_bytes() const = 0;

  // A mark of everything Submit accepted so far; Confirmed(mark) is true once all of it was
  // delivered (written, or acknowledged by a record-tracking peer). Inputs that commit
  // positions (Kafka) wait on it. The default, for sinks without positions, is true only
  // when nothing at all is buffered.
  virtual std::uint64_t AcceptedMark() const { return 0; }
  virtual bool Confirmed(std::uint64_t /*mark*/) const { return buffered_bytes() == 0; }
};

// Builds and starts the sink a validated output describes (ParseConfig has checked every
// setting), behind a DiskBufferedSink when the output has a disk buffer. When a file or the
// disk buffer's directory cannot be opened, returns nullptr and sets `error` (the daemon
// refuses to start). Registers the sink's metrics in `metrics`, labelled sink="<name>".
std::unique_ptr<Sink> MakeSink(const OutputConfig& output, Metrics& metrics, std::string& error);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_SINK_H_
