// MetricsServer: a minimal HTTP/1.1 endpoint on the daemon's io_context that serves
// GET /metrics (Prometheus text) and GET /healthz. One request per connection. It keeps a
// spare descriptor of its own, so that it still answers when the process has run out.
#ifndef LOGFOLD_DAEMON_METRICS_SERVER_H_
#define LOGFOLD_DAEMON_METRICS_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/runtime/metrics.h"

namespace logfold {

class MetricsServer {
 public:
  // Binds address:port (port 0: ephemeral). Throws boost::system::system_error when the
  // address cannot be bound; the caller reports it and refuses to start.
  MetricsServer(boost::asio::io_context& io, const std::string& address, std::uint16_t port,
                const Metrics& metrics);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  void Start();
  void Stop();
  std::uint16_t local_port() const;

  struct Reserve;  // the spare descriptor; defined in the .cc, public for its connections

 private:
  void Accept();
  void OnAcceptError(const boost::system::error_code& ec);

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;
  const Metrics& metrics_;
  std::shared_ptr<Reserve> reserve_;  // shared with the connections, which refill it
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_METRICS_SERVER_H_
