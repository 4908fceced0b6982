// MetricsServer implementation: each connection owns itself through its pending handlers
// (as in the Asio HTTP server example) and is closed after one response or 5 s.
#include "daemon/runtime/metrics_server.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <memory>
#include <optional>

namespace logfold {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

constexpr auto kAcceptRetry = std::chrono::milliseconds(100);

}  // namespace

// One descriptor held open (on /dev/null) while nothing needs it. When accept fails for want
// of descriptors, it is given up so the pending scrape can be accepted; the connection
// takes it back when it closes, before a listener retrying its accept can.
struct MetricsServer::Reserve {
  int fd = -1;
  Reserve() { Refill(); }
  ~Reserve() { Release(); }
  Reserve(const Reserve&) = delete;
  Reserve& operator=(const Reserve&) = delete;
  void Refill() {
    if (fd < 0) fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  bool Release() {
    if (fd < 0) return false;
    ::close(fd);
    fd = -1;
    return true;
  }
};

namespace {

class MetricsConnection : public std::enable_shared_from_this<MetricsConnection> {
 public:
  // `tls` null: plain HTTP. Otherwise the connection is HTTPS with that context.
  MetricsConnection(tcp::socket socket, const Metrics& metrics, HttpHandler handler,
                    std::shared_ptr<MetricsServer::Reserve> reserve,
                    std::shared_ptr<const TlsServerContext> tls,
                    MetricsServer::TlsFailed on_tls_failure)
      : reserve_(std::move(reserve)),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        request_(kMaxRequest),
        metrics_(metrics),
        handler_(std::move(handler)),
        context_(std::move(tls)),
        on_tls_failure_(std::move(on_tls_failure)) {
    // ssl::stream wants a mutable context; it only reads it to create the session.
    if (context_) tls_.emplace(socket_, const_cast<asio::ssl::context&>(context_->ssl));
  }

  ~MetricsConnection() {
    boost::system::error_code ignored;
    socket_.close(ignored);
    reserve_->Refill();
  }

  void Start() {
    auto self = shared_from_this();
    timer_.expires_after(std::chrono::seconds(5));
    timer_.async_wait([self](boost::system::error_code ec) {
      if (!ec) self->socket_.close();
    });
    if (!tls_) {
      ReadRequest();
      return;
    }
    tls_->async_handshake(asio::ssl::stream_base::server, [self](boost::system::error_code ec) {
      std::string why;
      if (ec) {
        const TlsFailure f = ClassifyTlsFailure(ec, self->tls_->native_handle());
        self->Refuse(f.reason, f.detail);
      } else if (!PeerPermitted(*self->context_, self->tls_->native_handle(), why)) {
        self->Refuse("peer_not_permitted", why);
      } else {
        self->ReadRequest();
      }
    });
  }

 private:
  static constexpr std::size_t kMaxRequest = 8192;

  void ReadRequest() {
    auto self = shared_from_this();
    auto done = [self](boost::system::error_code ec, std::size_t) {
      if (!ec) {
        self->Respond();
      } else {
        self->timer_.cancel();
      }
    };
    if (tls_) {
      asio::async_read_until(*tls_, request_, "\r\n\r\n", done);
    } else {
      asio::async_read_until(socket_, request_, "\r\n\r\n", done);
    }
  }

  void Refuse(const std::string& reason, const std::string& detail) {
    boost::system::error_code ec;
    const tcp::endpoint remote = socket_.remote_endpoint(ec);
    if (on_tls_failure_) on_tls_failure_(reason);
    spdlog::warn("metrics: TLS handshake with {} failed ({}): {}",
                 ec ? std::string("?") : remote.address().to_string(), reason, detail);
    socket_.close(ec);
    timer_.cancel();
  }

  // After the response: TLS sends its close_notify first (bounded by the 5 s timer).
  void Finish() {
    auto self = shared_from_this();
    auto close = [self] {
      boost::system::error_code ignored;
      self->socket_.shutdown(tcp::socket::shutdown_both, ignored);
      self->socket_.close(ignored);
      self->timer_.cancel();
    };
    if (tls_) {
      tls_->async_shutdown([close](boost::system::error_code) { close(); });
    } else {
      close();
    }
  }

  void Respond() {
    std::string line;
    std::istream in(&request_);
    std::getline(in, line);
    std::string status = "200 OK", body, type = "text/plain; version=0.0.4; charset=utf-8";
    if (line.rfind("GET /metrics ", 0) == 0 || line.rfind("GET /metrics?", 0) == 0) {
      body = metrics_.RenderPrometheus();
    } else if (line.rfind("GET /healthz ", 0) == 0) {
      body = "ok\n";
    } else if (line.rfind("GET ", 0) != 0) {
      status = "405 Method Not Allowed";
      body = "only GET\n";
    } else if (HttpResponse r; handler_ && handler_(RequestTarget(line), r)) {
      status = std::move(r.status);
      type = std::move(r.content_type);
      body = std::move(r.body);
    } else {
      status = "404 Not Found";
      body = "try /metrics\n";
    }
    response_ = "HTTP/1.1 " + status + "\r\nContent-Type: " + type +
                "\r\nContent-Length: " + std::to_string(body.size()) +
                "\r\nConnection: close\r\n\r\n" + body;
    auto self = shared_from_this();
    auto done = [self](boost::system::error_code, std::size_t) { self->Finish(); };
    if (tls_) {
      asio::async_write(*tls_, asio::buffer(response_), done);
    } else {
      asio::async_write(socket_, asio::buffer(response_), done);
    }
  }

  std::shared_ptr<MetricsServer::Reserve> reserve_;
  // "GET /api/groups?sort=rate HTTP/1.1" -> "/api/groups?sort=rate".
  static std::string_view RequestTarget(std::string_view line) {
    line.remove_prefix(4);
    return line.substr(0, line.find(' '));
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  asio::streambuf request_;
  std::string response_;
  const Metrics& metrics_;
  HttpHandler handler_;
  std::shared_ptr<const TlsServerContext> context_;  // null: plain HTTP
  MetricsServer::TlsFailed on_tls_failure_;
  std::optional<asio::ssl::stream<tcp::socket&>> tls_;  // over socket_, when context_ is set
};

}  // namespace

MetricsServer::MetricsServer(asio::io_context& io, const std::string& address, std::uint16_t port,
                             const Metrics& metrics, SenderAllowList allowed,
                             Metrics::Counter* refused)
    : acceptor_(io, tcp::endpoint(asio::ip::make_address(address), port)),
      retry_(io),
      metrics_(metrics),
      reserve_(std::make_shared<Reserve>()),
      allowed_(std::move(allowed)),
      refused_(refused) {}

MetricsServer::~MetricsServer() { Stop(); }

void MetricsServer::SetTls(std::shared_ptr<const TlsServerContext> context, TlsFailed on_failure) {
  std::lock_guard lock(tls_mu_);
  tls_ = std::move(context);
  if (on_failure) on_tls_failure_ = std::move(on_failure);
}

void MetricsServer::Start() { Accept(); }

void MetricsServer::Stop() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  retry_.cancel();
}

std::uint16_t MetricsServer::local_port() const {
  boost::system::error_code ec;
  return acceptor_.local_endpoint(ec).port();
}

void MetricsServer::Accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      OnAcceptError(ec);
      return;
    }
    if (!allowed_.empty()) {
      boost::system::error_code rec;
      const tcp::endpoint remote = socket.remote_endpoint(rec);
      if (rec || !allowed_.Allows(remote.data())) {
        if (refused_ != nullptr) refused_->fetch_add(1, std::memory_order_relaxed);
        socket.close(rec);
        Accept();
        return;
      }
    }
    std::shared_ptr<const TlsServerContext> tls;
    {
      std::lock_guard lock(tls_mu_);
      tls = tls_;
    }
    std::make_shared<MetricsConnection>(std::move(socket), metrics_, handler_, reserve_,
                                        std::move(tls), on_tls_failure_)
        ->Start();
    Accept();
  });
}

// Out of descriptors: spend the reserve on the waiting scrape. Otherwise (or with the reserve
// already in use) back off, since the backlog stays readable and an immediate retry spins.
void MetricsServer::OnAcceptError(const boost::system::error_code& ec) {
  const bool descriptors = ec == asio::error::no_descriptors || ec.value() == ENFILE;
  if (descriptors && reserve_->Release()) {
    Accept();
    return;
  }
  retry_.expires_after(kAcceptRetry);
  retry_.async_wait([this](boost::system::error_code tec) {
    if (!tec && acceptor_.is_open()) Accept();
  });
}

}  // namespace logfold
