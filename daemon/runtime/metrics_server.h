// MetricsServer: a minimal HTTP/1.1 endpoint on the daemon's io_context that serves
// GET /metrics (Prometheus text), GET /healthz and whatever else its handler (the live view's
// API and page) answers. One request per connection. It keeps a spare descriptor of its own,
// so that it still answers when the process has run out.
#ifndef LOGFOLD_DAEMON_METRICS_SERVER_H_
#define LOGFOLD_DAEMON_METRICS_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "daemon/runtime/metrics.h"
#include "daemon/runtime/sender_allow_list.h"
#include "daemon/runtime/tls_context.h"

namespace logfold {

// A response of the endpoint's handler.
struct HttpResponse {
  std::string status = "200 OK";
  std::string content_type = "application/json";
  std::string body;
};
// Answers a GET for `target` (path and query) other than /metrics and /healthz; false when
// it has nothing there (404). Runs on the io_context's thread: its work must be bounded.
using HttpHandler = std::function<bool(std::string_view target, HttpResponse& response)>;

class MetricsServer {
 public:
  // Binds address:port (port 0: ephemeral). Throws boost::system::system_error when the
  // address cannot be bound; the caller reports it and refuses to start. Connections from
  // outside `allowed` (empty: anyone) are closed at once and counted in `refused`.
  MetricsServer(boost::asio::io_context& io, const std::string& address, std::uint16_t port,
                const Metrics& metrics, SenderAllowList allowed = {},
                Metrics::Counter* refused = nullptr);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Serves other paths than /metrics and /healthz; set before Start.
  void SetHandler(HttpHandler handler) { handler_ = std::move(handler); }

  // Called with a reason (as logfold_tls_handshake_failures_total's) for each refused client.
  using TlsFailed = std::function<void(const std::string& reason)>;
  // HTTPS with `context` (null: plain HTTP). Set before Start, and again on a reload: open
  // connections keep their session, new ones use the new certificate. on_failure is kept
  // when empty.
  void SetTls(std::shared_ptr<const TlsServerContext> context, TlsFailed on_failure = {});
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
  const SenderAllowList allowed_;
  Metrics::Counter* refused_;
  HttpHandler handler_;
  std::mutex tls_mu_;  // SetTls (a reload) against the accept handler
  std::shared_ptr<const TlsServerContext> tls_;
  TlsFailed on_tls_failure_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_METRICS_SERVER_H_
