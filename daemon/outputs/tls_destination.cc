// TlsDestination: a blocking-in-slices OpenSSL client over a non-blocking socket. What the
// peer acknowledged is tracked through the ciphertext: each SSL_write's plaintext end is
// recorded against the socket's ciphertext offset, and SIOCOUTQ says how much ciphertext
// is still unacknowledged.
#include "daemon/outputs/tls_destination.h"

#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <deque>
#include <utility>
#include <vector>

#include "daemon/outputs/sink_io.h"
#include "daemon/runtime/tls_context.h"

namespace logfold {
namespace {

constexpr int kWaitSliceMs = 100;
constexpr auto kConnectTimeout = std::chrono::seconds(10);
constexpr auto kAckPollInterval = std::chrono::milliseconds(10);
// Plaintext handed to one SSL_write: a full TLS record, so small events share records.
constexpr std::size_t kChunk = 16 * 1024;

std::string SslErrorText() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "unknown TLS error";
  const char* reason = ERR_reason_error_string(e);
  ERR_clear_error();
  return reason != nullptr ? reason : "TLS error " + std::to_string(e);
}

class TlsDestination final : public Destination {
 public:
  TlsDestination(const std::string& sink_name, const TcpSinkOptions& config,
                 std::shared_ptr<boost::asio::ssl::context> ctx, Metrics& metrics)
      : sink_name_(sink_name),
        address_(config.address),
        port_(config.port),
        verify_(config.tls_options.verify),
        options_(ClientTlsOptions(config.tls_options)),
        peer_(config.address + ":" + std::to_string(config.port)),
        ctx_(std::move(ctx)),
        connects_(metrics.GetCounter("logfold_sink_connects_total",
                                     "Connections a network sink established",
                                     "sink=\"" + sink_name + "\"")),
        connect_failures_(metrics.GetCounter("logfold_sink_connect_failures_total",
                                             "Connection attempts of a network sink that failed",
                                             "sink=\"" + sink_name + "\"")),
        disconnects_(metrics.GetCounter("logfold_sink_disconnects_total",
                                        "Established connections of a network sink that were lost",
                                        "sink=\"" + sink_name + "\"")),
        verify_failures_(metrics.GetCounter(
            "logfold_sink_tls_verify_failures_total",
            "TLS handshakes of a sink that failed because the peer's certificate was refused",
            "sink=\"" + sink_name + "\"")) {
    chunk_.reserve(kChunk);
  }

  ~TlsDestination() override { Close(); }

  WriteResult Write(std::span<const iovec> data, const StopSignal& stop) override {
    WriteResult result;
    if (ssl_ != nullptr) {
      std::string why;
      if (PeerGone(why)) {
        Fail(result, why);
        return result;
      }
    }
    if (ssl_ == nullptr && !Connect(stop, result.error)) {
      result.failed = true;
      return result;
    }
    IovCursor cursor(data);
    while (!cursor.empty()) {
      if (chunk_.empty()) {
        // Coalesce the front of the data into one record's worth (a reused buffer).
        std::size_t i = 0;
        while (chunk_.size() < kChunk && i < static_cast<std::size_t>(cursor.count())) {
          const iovec& v = cursor.data()[i++];
          const std::size_t take = std::min(v.iov_len, kChunk - chunk_.size());
          chunk_.insert(chunk_.end(), static_cast<const char*>(v.iov_base),
                        static_cast<const char*>(v.iov_base) + take);
        }
      }
      const int n = SSL_write(ssl_, chunk_.data(), static_cast<int>(chunk_.size()));
      if (n > 0) {
        const auto written = static_cast<std::size_t>(n);
        cursor.Advance(written);
        result.written += written;
        plain_written_ += written;
        records_.push_back({BIO_number_written(SSL_get_wbio(ssl_)), plain_written_});
        // The chunk's unwritten rest is still at the cursor: rebuild from there.
        chunk_.clear();
        continue;
      }
      const int err = SSL_get_error(ssl_, n);
      if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
        // The same bytes must be offered again (SSL_write's retry rule): keep chunk_.
        if (result.written > 0 || stop.Expired()) return result;
        WaitFor(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT);
        continue;
      }
      Fail(result, "TLS send to " + peer_ + ": " + SslErrorText());
      return result;
    }
    return result;
  }

  std::uint64_t Unconfirmed() override {
    if (ssl_ == nullptr) return last_unconfirmed_ = 0;
    int queued = 0;
    if (::ioctl(fd_, SIOCOUTQ, &queued) != 0 || queued < 0) {
      return last_unconfirmed_ = plain_written_;
    }
    const std::uint64_t cipher_sent = BIO_number_written(SSL_get_wbio(ssl_));
    const std::uint64_t cipher_acked =
        cipher_sent - std::min<std::uint64_t>(static_cast<std::uint64_t>(queued), cipher_sent);
    // Records whose ciphertext is wholly acknowledged confirm their plaintext.
    while (!records_.empty() && records_.front().cipher_end <= cipher_acked) {
      plain_confirmed_ = records_.front().plain_end;
      records_.pop_front();
    }
    return last_unconfirmed_ = plain_written_ - plain_confirmed_;
  }

  WriteResult Poll() override {
    WriteResult result;
    std::string why;
    if (ssl_ != nullptr && PeerGone(why)) Fail(result, why);
    return result;
  }

  SinkClock::duration PollInterval() const override {
    if (ssl_ != nullptr && last_unconfirmed_ > 0) return kAckPollInterval;
    return std::chrono::seconds(1);
  }

  // SIGHUP: re-read the CA bundle and client certificate (rotation keeps the file names).
  // The open connection stays; the next one uses the new files. Files that do not load
  // leave the old context in use.
  std::string Reopen() override {
    std::string error;
    auto ctx = MakeTlsClientContext(options_, error);
    if (!ctx) return "TLS files not reloaded, keeping the previous ones: " + error;
    ctx_ = std::move(ctx);
    return "";
  }

  void Close() override {
    if (ssl_ != nullptr) {
      SSL_free(ssl_);
      ssl_ = nullptr;
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    chunk_.clear();
  }

 private:
  struct Record {
    std::uint64_t cipher_end;  // ciphertext bytes on the connection after this write
    std::uint64_t plain_end;   // plaintext bytes on the connection after this write
  };

  void WaitFor(short events) {
    pollfd p{fd_, events, 0};
    ::poll(&p, 1, kWaitSliceMs);
  }

  bool Connect(const StopSignal& stop, std::string& error) {
    if (!ConnectTcp(stop, error)) {
      connect_failures_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    ssl_ = SSL_new(ctx_->native_handle());
    std::string prep_error;
    if (ssl_ == nullptr || !PrepareTlsClient(ssl_, address_, verify_, prep_error) ||
        SSL_set_fd(ssl_, fd_) != 1) {
      error = "TLS setup for " + peer_ + ": " + (prep_error.empty() ? SslErrorText() : prep_error);
      connect_failures_.fetch_add(1, std::memory_order_relaxed);
      Close();
      return false;
    }
    SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    const auto deadline = SinkClock::now() + kConnectTimeout;
    for (;;) {
      const int rc = SSL_connect(ssl_);
      if (rc == 1) break;
      const int err = SSL_get_error(ssl_, rc);
      if ((err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) && !stop.Expired() &&
          SinkClock::now() < deadline) {
        WaitFor(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT);
        continue;
      }
      const long verify = SSL_get_verify_result(ssl_);
      if (verify != X509_V_OK) {
        verify_failures_.fetch_add(1, std::memory_order_relaxed);
        error = "TLS handshake with " + peer_ +
                ": server certificate refused: " + X509_verify_cert_error_string(verify);
      } else {
        error = "TLS handshake with " + peer_ + ": " +
                (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ? "timed out"
                                                                           : SslErrorText());
      }
      ERR_clear_error();
      connect_failures_.fetch_add(1, std::memory_order_relaxed);
      Close();
      return false;
    }
    plain_written_ = plain_confirmed_ = 0;
    last_unconfirmed_ = 0;
    records_.clear();
    connects_.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("sink {}: TLS connection to {} ({})", sink_name_, peer_, SSL_get_version(ssl_));
    return true;
  }

  bool ConnectTcp(const StopSignal& stop, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* addresses = nullptr;
    const std::string port = std::to_string(port_);
    const int rc = ::getaddrinfo(address_.c_str(), port.c_str(), &hints, &addresses);
    if (rc != 0) {
      error = "resolve " + address_ + ": " + ::gai_strerror(rc);
      return false;
    }
    error = "connect to " + peer_ + ": no address";
    for (addrinfo* ai = addresses; ai != nullptr && fd_ < 0; ai = ai->ai_next) {
      const int fd =
          ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd < 0) continue;
      std::string why;
      const bool ok = ConnectWithin(fd, *ai, stop, kConnectTimeout, why);
      if (!ok) error = "connect to " + peer_ + ": " + why;
      if (!ok) {
        ::close(fd);
        continue;
      }
      const int on = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      fd_ = fd;
    }
    ::freeaddrinfo(addresses);
    return fd_ >= 0;
  }

  // As the TCP destination's: the peer closed or reset, or sent close_notify. Anything else
  // it sent (session tickets) is read and ignored.
  bool PeerGone(std::string& why) {
    pollfd p{fd_, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLERR | POLLHUP | POLLRDHUP)) {
      why = "connection closed by " + peer_;
      return true;
    }
    std::array<char, 4096> scratch;
    for (int i = 0; i < 16; ++i) {
      const int n = SSL_read(ssl_, scratch.data(), static_cast<int>(scratch.size()));
      if (n > 0) continue;
      const int err = SSL_get_error(ssl_, n);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return false;
      why = err == SSL_ERROR_ZERO_RETURN ? "connection closed by " + peer_
                                         : "TLS connection to " + peer_ + ": " + SslErrorText();
      return true;
    }
    return false;
  }

  void Fail(WriteResult& result, std::string why) {
    result.failed = true;
    result.error = std::move(why);
    result.unconfirmed = Unconfirmed();
    Close();
    last_unconfirmed_ = 0;
    disconnects_.fetch_add(1, std::memory_order_relaxed);
  }

  const std::string sink_name_;
  const std::string address_;
  const std::uint16_t port_;
  const bool verify_;
  const TlsClientOptions options_;
  const std::string peer_;
  std::shared_ptr<boost::asio::ssl::context> ctx_;
  Metrics::Counter& connects_;
  Metrics::Counter& connect_failures_;
  Metrics::Counter& disconnects_;
  Metrics::Counter& verify_failures_;
  int fd_ = -1;
  SSL* ssl_ = nullptr;
  std::vector<char> chunk_;
  std::deque<Record> records_;
  std::uint64_t plain_written_ = 0;
  std::uint64_t plain_confirmed_ = 0;
  std::uint64_t last_unconfirmed_ = 0;
};

}  // namespace

TlsClientOptions ClientTlsOptions(const TlsClientConfig& t) {
  TlsClientOptions o{};
  o.ca_file = t.ca_file;
  o.verify = t.verify;
  o.cert_file = t.cert_file;
  o.key_file = t.key_file;
  o.password_file = t.password_file;
  o.min_version = t.min_version == TlsMinVersion::kTls13 ? TlsVersion::kTls13 : TlsVersion::kTls12;
  return o;
}

std::unique_ptr<Destination> MakeTlsDestination(const std::string& sink_name,
                                                const TcpSinkOptions& config, Metrics& metrics,
                                                std::string& error) {
  std::string tls_error;
  auto ctx = MakeTlsClientContext(ClientTlsOptions(config.tls_options), tls_error);
  if (!ctx) {
    error = "sink " + sink_name + ": " + tls_error;
    return nullptr;
  }
  return std::make_unique<TlsDestination>(sink_name, config, std::move(ctx), metrics);
}

}  // namespace logfold
