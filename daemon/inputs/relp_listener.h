// RelpListener: a RELP server (librelp, the protocol of rsyslog's omrelp/imrelp) whose
// acknowledgement of each message means logfold has accepted it into the worker queues.
#ifndef LOGFOLD_DAEMON_INPUTS_RELP_LISTENER_H_
#define LOGFOLD_DAEMON_INPUTS_RELP_LISTENER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/config/options/relp_input_options.h"
#include "daemon/inputs/ingest_target.h"
#include "daemon/inputs/input_thread.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

class RelpListener {
 public:
  // Defaults and meaning of each option: daemon/config/options/relp_input_options.h.
  using Options = RelpInputOptions;

  // Creates the librelp engine and binds the listener (throws std::runtime_error naming the
  // input and the address when it cannot); nothing is read before Start(). `target` and
  // `metrics` must outlive this object.
  //
  // librelp calls back once per received message, on the engine's thread, and sends the
  // RELP "200 OK" as soon as the callback returns. The callback therefore hands the message
  // to the target and returns only once it was taken, waiting while the queues are full: the
  // engine thread stops reading, TCP flow control and the sender's RELP window do the rest.
  // Nothing is acknowledged that logfold has not accepted.
  RelpListener(std::uint32_t input, std::string name, const Options& options, IngestTarget& target,
               Metrics& metrics);
  // Stop(), Join(), and the engine is destroyed.
  ~RelpListener();
  RelpListener(const RelpListener&) = delete;
  RelpListener& operator=(const RelpListener&) = delete;

  // Runs the engine on its own thread.
  void Start();
  // Thread-safe. The engine takes no further message (what the senders sent after it is not
  // acknowledged: they keep it and send it again, to the next logfold). A message being handed
  // over waits for room until `give_up`; if the queues are still full then, librelp
  // acknowledges it all the same (it acknowledges every message whose callback returns), and
  // it is counted in logfold_dropped_total{reason="shutdown"}: at most one per listener.
  void Stop(std::chrono::steady_clock::time_point give_up = std::chrono::steady_clock::now());
  // Waits for the engine thread (at most until about `give_up`).
  void Join();

  // The bound port (the ephemeral one when options.port is 0).
  std::uint16_t local_port() const;

 private:
  class Impl;
  const std::string name_;
  std::unique_ptr<Impl> impl_;
  InputThread thread_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_RELP_LISTENER_H_
