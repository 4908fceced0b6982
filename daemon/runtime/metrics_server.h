// MetricsServer: a minimal HTTP/1.1 endpoint on the daemon's io_context that serves
// GET /metrics (Prometheus text) and GET /healthz. One request per connection.
#ifndef LOGFOLD_DAEMON_METRICS_SERVER_H_
#define LOGFOLD_DAEMON_METRICS_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
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

 private:
  void Accept();

  boost::asio::ip::tcp::acceptor acceptor_;
  const Metrics& metrics_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_METRICS_SERVER_H_
