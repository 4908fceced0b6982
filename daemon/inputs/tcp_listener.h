// TcpListener: accepts syslog-over-TCP clients (RFC 6587 framing), or syslog over TLS (RFC
// 5425) with client certificates and permitted peers, decodes each connection's stream and
// delivers its messages with backpressure: nothing accepted is dropped.
#ifndef LOGFOLD_DAEMON_TCP_LISTENER_H_
#define LOGFOLD_DAEMON_TCP_LISTENER_H_

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/config/options/tcp_input_options.h"
#include "daemon/inputs/ingest_target.h"
#include "daemon/runtime/memory_budget.h"
#include "daemon/runtime/metrics.h"
#include "daemon/runtime/sender_allow_list.h"
#include "daemon/runtime/tls_context.h"
#include "pipeline/frame_decoder.h"
#include "pipeline/log_record.h"

namespace logfold {

class TcpListener {
 public:
  // Defaults and meaning of each option: daemon/config/options/tcp_input_options.h.
  using Options = TcpInputOptions;

  // Syslog over TLS: each connection runs its stream inside TLS. The handshake (bounded by
  // handshake_timeout_us, 0: no bound) and the check of the client against the context's
  // permitted peers come first; a failure is counted in
  // logfold_tls_handshake_failures_total{input,reason}, logged with the peer, and closes
  // that connection only. Everything after the handshake (framing, limits, shares, idle
  // timeout, memory budget, drain) is the same as for plain TCP.
  struct Tls {
    std::shared_ptr<const TlsServerContext> context;  // until SetContext replaces it
    TimeUs handshake_timeout_us;
  };

  // Opens, binds and listens (or adopts options.adopted_fd); throws
  // boost::system::system_error when that fails. Nothing is accepted before Start().
  // `target` and `metrics` must outlive every handler the listener runs on `io`, and the
  // listener must be destroyed before `io`. `io` may be run by several threads: each
  // connection runs on its own strand.
  //
  // Each read (up to 64 KiB) is decoded and its messages go to IngestTarget::TryDeliver in
  // one call. When the target refuses, the connection copies those messages aside, stops
  // reading (so TCP flow control slows the sender) and retries when OnWritable fires.
  // Fairness: each connection reads at most 64 KiB per turn of the io loop, and holds at most
  // its share of the target's queues (IngestTarget::NewShare) while other senders deliver:
  // past it, it stops reading until the workers took half of its lines, so one flooding
  // connection can neither fill a queue nor put more than a share of its lines ahead of
  // another sender's. A connection alone is held back only by the target's capacity.
  //
  // With a `budget` (which must outlive the listener), each connection's unfinished frame
  // and held-back lines are accounted in it, and connections stop reading while it refuses
  // intake, retrying every 100 ms.
  //
  // With `tls`, connections speak TLS (above); metrics carry proto="tls".
  TcpListener(std::uint32_t input, std::string name, const Options& options,
              boost::asio::io_context& io, IngestTarget& target, Metrics& metrics,
              MemoryBudget* budget = nullptr, std::optional<Tls> tls = std::nullopt);
  // Close().
  ~TcpListener();

  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  void Start();

  // Shutdown is two-phase so the daemon can drain on SIGTERM:
  //
  // StopReading(on_drained): stop accepting now. Every connection reads the bytes the kernel
  // had already received on it at that moment (TCP acknowledged them, so the sender will not
  // send them again) and nothing after them, then delivers what it read: messages held back
  // by backpressure, then the decoder's unfinished frame (as at EOF, see
  // FrameDecoder::Finish), still waiting for OnWritable as long as it takes, and closes.
  // `on_drained` runs once, on an io_context thread, when no connection is left (at once if there
  // is none).
  //
  // Close(): hard stop. Stops accepting and closes every connection now; messages still held
  // back are lost and counted in logfold_dropped_total{reason="shutdown"}. Call it when a
  // drain deadline passes, or instead of StopReading. on_drained, if given, still runs.
  //
  // Both are thread-safe and idempotent, and take effect asynchronously on the io_context,
  // which must therefore keep running until on_drained (or Close) has done its work.
  void StopReading(std::function<void()> on_drained = {});
  void Close();

  // TLS, certificate rotation: connections accepted from now on use `context` and its
  // permitted peers; open connections keep the session they negotiated. Thread-safe. Does
  // nothing on a plain TCP listener.
  void SetContext(std::shared_ptr<const TlsServerContext> context);

  std::uint16_t local_port() const;
  std::size_t open_connections() const;
  const std::string& name() const;

 private:
  struct Impl;
  class Connection;

  std::shared_ptr<Impl> impl_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_TCP_LISTENER_H_
