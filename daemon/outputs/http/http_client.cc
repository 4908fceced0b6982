// HttpClient: Beast's asynchronous operations driven by a private io_context on the sink
// thread, so that one deadline and Stop's signal can cancel a connect, send or read.
#include "daemon/outputs/http/http_client.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <utility>

#include "daemon/runtime/tls_context.h"

namespace logfold {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kRunSlice = std::chrono::milliseconds(50);

// Errors by which a server that closed a kept-alive connection shows itself to the next
// request: nothing of the request was processed, so it may be sent again at once.
bool IsClosedConnection(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::ssl::error::stream_truncated || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == asio::error::connection_aborted;
}

}  // namespace

HttpClient::HttpClient(std::string host, std::uint16_t port, const std::string& sink,
                       Metrics& metrics, std::shared_ptr<asio::ssl::context> tls, bool verify)
    : host_(std::move(host)),
      port_(port),
      peer_(host_.find(':') != std::string::npos ? "[" + host_ + "]:" + std::to_string(port)
                                                 : host_ + ":" + std::to_string(port)),
      connects_(metrics.GetCounter("logfold_sink_connects_total",
                                   "Connections a network sink established",
                                   "sink=\"" + sink + "\"")),
      connect_failures_(metrics.GetCounter("logfold_sink_connect_failures_total",
                                           "Connection attempts of a network sink that failed",
                                           "sink=\"" + sink + "\"")),
      disconnects_(metrics.GetCounter("logfold_sink_disconnects_total",
                                      "Established connections of a network sink that were lost",
                                      "sink=\"" + sink + "\"")),
      resolver_(io_),
      stream_(io_),
      tls_ctx_(std::move(tls)),
      verify_(verify),
      verify_failures_(metrics.GetCounter(
          "logfold_sink_tls_verify_failures_total",
          "TLS handshakes of a sink that failed because the peer's certificate was refused",
          "sink=\"" + sink + "\"")) {}

HttpClient::~HttpClient() { Close(); }

void HttpClient::Close() {
  if (!connected_) return;
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
  tls_.reset();
  buffer_.clear();
  connected_ = false;
}

bool HttpClient::RunUntilDone(const bool& done, Clock::time_point deadline,
                              const StopSignal& stop) {
  io_.restart();
  bool cancelled = false;
  while (!done) {
    io_.run_one_for(kRunSlice);
    if (done) break;
    if (!cancelled && (Clock::now() >= deadline || stop.Expired())) {
      // The handlers then complete with operation_aborted.
      cancelled = true;
      resolver_.cancel();
      stream_.cancel();
    }
    if (io_.stopped() && !done) io_.restart();
  }
  return !cancelled;
}

bool HttpClient::Connect(Clock::time_point deadline, const StopSignal& stop, HttpExchange& out) {
  bool done = false;
  beast::error_code error;
  tcp::resolver::results_type endpoints;
  resolver_.async_resolve(host_, std::to_string(port_),
                          [&](const beast::error_code& ec, tcp::resolver::results_type r) {
                            error = ec;
                            endpoints = std::move(r);
                            done = true;
                          });
  bool in_time = RunUntilDone(done, deadline, stop);
  if (!error && in_time) {
    done = false;
    stream_.async_connect(endpoints, [&](const beast::error_code& ec, const tcp::endpoint&) {
      error = ec;
      done = true;
    });
    in_time = RunUntilDone(done, deadline, stop);
  }
  if (error || !in_time) {
    connect_failures_.fetch_add(1, std::memory_order_relaxed);
    out.timed_out = !in_time;
    out.error = "connect to " + peer_ + ": " + (in_time ? error.message() : "timed out");
    beast::error_code ignored;
    stream_.socket().close(ignored);
    return false;
  }
  beast::error_code ignored;
  stream_.socket().set_option(tcp::no_delay(true), ignored);
  stream_.socket().set_option(asio::socket_base::keep_alive(true), ignored);
  if (tls_ctx_ && !Handshake(deadline, stop, out)) {
    connect_failures_.fetch_add(1, std::memory_order_relaxed);
    tls_.reset();
    stream_.socket().close(ignored);
    return false;
  }
  connects_.fetch_add(1, std::memory_order_relaxed);
  connected_ = true;
  buffer_.clear();
  return true;
}

bool HttpClient::Handshake(Clock::time_point deadline, const StopSignal& stop, HttpExchange& out) {
  tls_.emplace(stream_, *tls_ctx_);
  std::string error_text;
  if (!PrepareTlsClient(tls_->native_handle(), host_, verify_, error_text)) {
    out.error = "TLS setup for " + peer_ + ": " + error_text;
    return false;
  }
  bool done = false;
  beast::error_code error;
  tls_->async_handshake(asio::ssl::stream_base::client, [&](const beast::error_code& ec) {
    error = ec;
    done = true;
  });
  const bool in_time = RunUntilDone(done, deadline, stop);
  if (!error && in_time) return true;
  out.timed_out = !in_time;
  const TlsFailure failure = ClassifyTlsFailure(error, tls_->native_handle());
  if (failure.reason == "certificate_invalid" || failure.reason == "certificate_expired") {
    verify_failures_.fetch_add(1, std::memory_order_relaxed);
    out.error = "TLS handshake with " + peer_ + ": server certificate refused: " + failure.detail;
  } else {
    out.error = "TLS handshake with " + peer_ + ": " + (in_time ? failure.detail : "timed out");
  }
  return false;
}

bool HttpClient::PeerClosed() {
  // An idle kept-alive connection has nothing to read; anything readable is the server's
  // FIN or RST (or stray bytes, which would corrupt the next response anyway).
  pollfd p{stream_.socket().native_handle(), POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && p.revents != 0;
}

HttpExchange HttpClient::SendOnce(HttpRequest& request, Clock::time_point deadline,
                                  const StopSignal& stop, bool& reused, bool& nothing_received) {
  HttpExchange out;
  nothing_received = false;
  reused = connected_;
  if (connected_ && PeerClosed()) {
    Close();
    disconnects_.fetch_add(1, std::memory_order_relaxed);
    reused = false;
  }
  if (!connected_ && !Connect(deadline, stop, out)) return out;

  bool done = false;
  beast::error_code error;
  auto on_written = [&](const beast::error_code& ec, std::size_t) {
    error = ec;
    done = true;
  };
  if (tls_) {
    http::async_write(*tls_, request, on_written);
  } else {
    http::async_write(stream_, request, on_written);
  }
  bool in_time = RunUntilDone(done, deadline, stop);
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxResponseBody);
  if (!error && in_time) {
    done = false;
    auto on_read = [&](const beast::error_code& ec, std::size_t) {
      error = ec;
      done = true;
    };
    if (tls_) {
      http::async_read(*tls_, buffer_, parser, on_read);
    } else {
      http::async_read(stream_, buffer_, parser, on_read);
    }
    in_time = RunUntilDone(done, deadline, stop);
  }
  if (error || !in_time) {
    nothing_received = !parser.got_some() && IsClosedConnection(error);
    out.timed_out = !in_time;
    out.error = "request to " + peer_ + ": " + (in_time ? error.message() : "timed out");
    Close();
    disconnects_.fetch_add(1, std::memory_order_relaxed);
    return out;
  }
  auto response = parser.release();
  out.responded = true;
  out.status = response.result_int();
  out.body = std::move(response.body());
  if (auto it = response.find(http::field::retry_after); it != response.end()) {
    out.retry_after = std::string(it->value());
  }
  if (!response.keep_alive()) Close();
  return out;
}

HttpExchange HttpClient::Send(HttpRequest& request, Clock::duration timeout,
                              const StopSignal& stop) {
  const auto deadline = Clock::now() + timeout;
  bool reused = false, nothing_received = false;
  HttpExchange out = SendOnce(request, deadline, stop, reused, nothing_received);
  if (!out.responded && reused && nothing_received && !stop.Expired()) {
    out = SendOnce(request, deadline, stop, reused, nothing_received);
  }
  return out;
}

}  // namespace logfold
