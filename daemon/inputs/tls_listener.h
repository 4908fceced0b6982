// TlsListener: syslog over TLS (RFC 5425, octet-counted frames inside TLS, port 6514 by
// convention) with optional client certificates, permitted peers and sender allow-lists.
// Delivers with the same backpressure as the TCP listener: nothing accepted is dropped.
#ifndef LOGFOLD_DAEMON_TLS_LISTENER_H_
#define LOGFOLD_DAEMON_TLS_LISTENER_H_

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "daemon/config/options/tls_options.h"
#include "daemon/inputs/ingest_target.h"
#include "daemon/runtime/metrics.h"
#include "daemon/runtime/sender_allow_list.h"
#include "daemon/runtime/tls_context.h"
#include "pipeline/frame_decoder.h"
#include "pipeline/log_record.h"

namespace logfold {

class TlsListener {
 public:
  // Defaults and meaning of each option: daemon/config/options/tls_options.h.
  using Options = TlsInputOptions;

  // Binds and listens; throws boost::system::system_error when that fails. `context` is the
  // TLS context new connections use until SetContext replaces it. Lifetimes as TcpListener's.
  TlsListener(std::uint32_t input, std::string name, const Options& options,
              std::shared_ptr<const TlsServerContext> context, boost::asio::io_context& io,
              IngestTarget& target, Metrics& metrics);
  ~TlsListener();  // Close()

  TlsListener(const TlsListener&) = delete;
  TlsListener& operator=(const TlsListener&) = delete;

  void Start();

  // Certificate rotation: connections accepted from now on use `context` and its permitted
  // peers; open connections keep the session they negotiated. Thread-safe.
  void SetContext(std::shared_ptr<const TlsServerContext> context);

  // As TcpListener's: StopReading drains what already arrived and calls on_drained when no
  // connection is left; Close stops at once (held-back lines counted as dropped).
  void StopReading(std::function<void()> on_drained = {});
  void Close();

  std::uint16_t local_port() const;
  std::size_t open_connections() const;
  const std::string& name() const;

 private:
  struct Impl;
  class Connection;

  std::shared_ptr<Impl> impl_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_TLS_LISTENER_H_
