// HttpClient: one kept-alive HTTP/1.1 connection (Boost.Beast over TCP, or TLS for https)
// that sends a request and reads its response within a deadline, reconnecting when the
// server closed it.
#ifndef LOGFOLD_DAEMON_HTTP_CLIENT_H_
#define LOGFOLD_DAEMON_HTTP_CLIENT_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "daemon/outputs/buffered_sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;

struct HttpExchange {
  // false: no complete response (connect, send or receive failed, or timed out): `error`.
  bool responded = false;
  bool timed_out = false;  // with !responded: the request timeout or Stop's deadline passed
  unsigned status = 0;
  std::string body;         // the response body, up to HttpClient::kMaxResponseBody
  std::string retry_after;  // the Retry-After header, if any
  std::string error;
};

// Not thread-safe: used by one sink thread.
class HttpClient {
 public:
  static constexpr std::size_t kMaxResponseBody = 64 << 20;

  // Counts logfold_sink_{connects,connect_failures,disconnects}_total{sink="<sink>"}. With a
  // `tls` context every connection is TLS: SNI set to `host`, and, when `verify`, the
  // server's certificate must match `host` (failures count in
  // logfold_sink_tls_verify_failures_total).
  HttpClient(std::string host, std::uint16_t port, const std::string& sink, Metrics& metrics,
             std::shared_ptr<boost::asio::ssl::context> tls = nullptr, bool verify = true);
  ~HttpClient();

  // Sends `request` and reads the response, connecting first when there is no open
  // connection. Gives up at `timeout` after the start, or as soon as `stop` expires. A reused
  // connection that turns out to be closed by the server before it answered is replaced
  // once at no cost (the usual keep-alive race). On any failure the connection is closed.
  HttpExchange Send(HttpRequest& request, std::chrono::steady_clock::duration timeout,
                    const StopSignal& stop);

  void Close();

  // Certificate rotation: the next connection uses `tls`; an open one is kept.
  void SetTlsContext(std::shared_ptr<boost::asio::ssl::context> tls) { tls_ctx_ = std::move(tls); }

 private:
  bool Handshake(std::chrono::steady_clock::time_point deadline, const StopSignal& stop,
                 HttpExchange& out);
  HttpExchange SendOnce(HttpRequest& request, std::chrono::steady_clock::time_point deadline,
                        const StopSignal& stop, bool& reused, bool& nothing_received);
  bool Connect(std::chrono::steady_clock::time_point deadline, const StopSignal& stop,
               HttpExchange& out);
  // Runs the io_context until `done`, cancelling the pending operation at the deadline or
  // when `stop` expires. Returns false if it had to cancel.
  bool RunUntilDone(const bool& done, std::chrono::steady_clock::time_point deadline,
                    const StopSignal& stop);
  bool PeerClosed();

  const std::string host_;
  const std::uint16_t port_;
  const std::string peer_;  // for messages
  Metrics::Counter& connects_;
  Metrics::Counter& connect_failures_;
  Metrics::Counter& disconnects_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::beast::tcp_stream stream_;
  std::shared_ptr<boost::asio::ssl::context> tls_ctx_;
  const bool verify_;
  Metrics::Counter& verify_failures_;
  std::optional<boost::asio::ssl::stream<boost::beast::tcp_stream&>> tls_;  // https only
  boost::beast::flat_buffer buffer_;
  bool connected_ = false;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_HTTP_CLIENT_H_
