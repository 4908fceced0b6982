// UnixListener: a local syslog socket (type unix), such as /dev/log, datagram or stream, so
// that local programs' syslog(3), logger(1) and Python's SysLogHandler reach logfold directly.
#ifndef LOGFOLD_DAEMON_INPUTS_UNIX_LISTENER_H_
#define LOGFOLD_DAEMON_INPUTS_UNIX_LISTENER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/config/options/unix_input_options.h"
#include "daemon/inputs/ingest_target.h"
#include "daemon/inputs/input_thread.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

class UnixListener {
 public:
  using Options = UnixInputOptions;  // path, socket_type, mode, max_message_size

  // Creates, binds and chmods the socket (throws std::runtime_error naming the input and the
  // path if it cannot); reading starts at Start(). `target` and `metrics` must outlive this.
  UnixListener(std::uint32_t input, std::string name, const Options& options, IngestTarget& target,
               Metrics& metrics);
  // Stop(), Join(), and the socket file is removed.
  ~UnixListener();
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  void Start();
  void Stop();  // thread-safe
  void Join();

 private:
  class Impl;
  const std::string name_;
  std::unique_ptr<Impl> impl_;
  InputThread thread_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_UNIX_LISTENER_H_
