// StreamInput: reads newline-framed lines from standard input or a file on its own thread and
// delivers them, waiting for the IngestTarget whenever it is full, so a replay never drops.
#ifndef LOGFOLD_DAEMON_STREAM_INPUT_H_
#define LOGFOLD_DAEMON_STREAM_INPUT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>

#include "daemon/config/options/stream_input_options.h"
#include "daemon/inputs/ingest_target.h"
#include "daemon/runtime/metrics.h"
#include "pipeline/log_record.h"

namespace logfold {

class StreamInput {
 public:
  // Defaults and meaning of each option: daemon/config/options/stream_input_options.h.
  using Options = StreamInputOptions;

  // Called once, on the reader thread, when reading ends: `reached_eof` is true when the
  // whole input was read and every line delivered, false after a read error or Stop().
  using DoneCallback = std::function<void(bool reached_eof)>;

  // Opens `options.path` (throws std::system_error if it cannot); reading starts at Start().
  // `target` and `metrics` must outlive this object.
  StreamInput(std::uint32_t input, std::string name, const Options& options, IngestTarget& target,
              Metrics& metrics, DoneCallback on_done = {});
  // Stop() and Join().
  ~StreamInput();

  StreamInput(const StreamInput&) = delete;
  StreamInput& operator=(const StreamInput&) = delete;

  void Start();
  // Thread-safe: the reader stops at its next read or while waiting for the target; lines
  // it holds undelivered are counted in logfold_dropped_total{reason="shutdown"}.
  void Stop();
  // Waits for the reader thread to end (after EOF, an error or Stop()).
  void Join();
  // True once reading has ended; set just before the done callback is called.
  bool finished() const { return finished_.load(); }

  const std::string& name() const { return name_; }

 private:
  struct Gate;

  void Run();
  bool WaitReadable();
  bool DeliverBlocking(std::span<const std::string_view> lines, TimeUs arrival);

  const std::uint32_t input_;
  const std::string name_;
  const Options options_;
  IngestTarget& target_;
  DoneCallback on_done_;
  int fd_ = -1;
  bool owns_fd_ = false;
  int wake_fd_ = -1;  // eventfd that interrupts a blocking poll() on Stop()

  // Shared with OnWritable callbacks, which may outlive this object inside the target.
  std::shared_ptr<Gate> gate_;
  std::atomic<bool> finished_{false};
  std::thread thread_;

  Metrics::Counter& received_;
  Metrics::Counter& bytes_;
  Metrics::Counter& truncated_;
  Metrics::Counter& dropped_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_STREAM_INPUT_H_
