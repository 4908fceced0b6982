// UdpListener: receives syslog datagrams (IPv4/IPv6, or an adopted systemd socket) in
// recvmmsg() batches and hands their lines to the IngestTarget, dropping when it is full.
#ifndef LOGFOLD_DAEMON_UDP_LISTENER_H_
#define LOGFOLD_DAEMON_UDP_LISTENER_H_

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/config/options/udp_input_options.h"
#include "daemon/inputs/ingest_target.h"
#include "daemon/runtime/metrics.h"
#include "daemon/runtime/sender_allow_list.h"

namespace logfold {

class UdpListener {
 public:
  // Defaults and meaning of each option: daemon/config/options/udp_input_options.h.
  using Options = UdpInputOptions;

  // Opens and binds the socket (or adopts options.adopted_fd); throws
  // boost::system::system_error when that fails. Nothing is received before Start().
  // `target` and `metrics` must outlive every handler the listener runs on `io`, and the
  // listener must be destroyed before `io`.
  //
  // Every datagram is one message (RFC 5426), line breaks inside it included; trailing LF,
  // CR and NUL are stripped and empty datagrams skipped. All messages of a
  // receive batch (up to 256 datagrams) go to one IngestTarget::TryDeliver call; if it refuses,
  // they are counted in logfold_dropped_total{reason="queue_full"}: UDP has no backpressure.
  // Datagrams the kernel dropped because the receive buffer was full are counted in
  // logfold_udp_kernel_drops_total (the socket's SK_MEMINFO_DROPS, read after each batch).
  UdpListener(std::uint32_t input, std::string name, const Options& options,
              boost::asio::io_context& io, IngestTarget& target, Metrics& metrics);
  ~UdpListener();  // Stop()

  UdpListener(const UdpListener&) = delete;
  UdpListener& operator=(const UdpListener&) = delete;

  void Start();
  // Thread-safe and idempotent: nothing is delivered once Stop has returned, and the socket
  // is closed on the io_context soon after.
  void Stop();

  std::uint16_t local_port() const;
  const std::string& name() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_UDP_LISTENER_H_
