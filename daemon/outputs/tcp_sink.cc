// TcpDestination: a lazily connected, non-blocking TCP stream for the tcp and syslog sinks.
#include "daemon/outputs/tcp_sink.h"

#include <linux/sockios.h>
#include <linux/tcp.h>  // struct tcp_info with tcpi_snd_wnd (glibc's lacks it)
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <utility>

#include "daemon/outputs/sink_io.h"
#include "daemon/outputs/tls_destination.h"

namespace logfold {
namespace {

constexpr int kWaitSliceMs = 100;
constexpr auto kConnectTimeout = std::chrono::seconds(5);
// While bytes await acknowledgement the sink polls this often: it is what frees buffer space.
constexpr auto kAckPollInterval = std::chrono::milliseconds(10);

// Delivery is at-least-once up to TCP acknowledgement. Bytes stay in the sink's buffer until
// the peer's TCP stack has acknowledged them (SIOCOUTQ), and only whole records are released.
// When the connection fails (a send error, or the peer closing or resetting it), everything
// the peer had not acknowledged is resent on the next connection, starting at the beginning
// of the first record that was not completely acknowledged: so a record written partly
// before the failure is sent again whole, and a few records before it may arrive twice.
// What plain TCP cannot tell us is whether the collector read what its kernel acknowledged;
// a collector that dies with unread data in its socket buffer loses that data. Its kernel
// then resets the connection: on a reset or error the events acknowledged within the largest
// receive window the peer advertised (the most it can have held unread) are counted in
// logfold_sink_unconfirmed_events_total, not hidden. A clean close (FIN) counts nothing.
class TcpDestination final : public Destination {
 public:
  TcpDestination(const std::string& sink_name, const TcpSinkOptions& target, Metrics& metrics)
      : sink_name_(sink_name),
        address_(target.address),
        port_(target.port),
        peer_(target.address.find(':') != std::string::npos
                  ? "[" + target.address + "]:" + std::to_string(target.port)
                  : target.address + ":" + std::to_string(target.port)),
        connects_(metrics.GetCounter("logfold_sink_connects_total",
                                     "Connections a network sink established",
                                     "sink=\"" + sink_name + "\"")),
        connect_failures_(metrics.GetCounter("logfold_sink_connect_failures_total",
                                             "Connection attempts of a network sink that failed",
                                             "sink=\"" + sink_name + "\"")),
        disconnects_(metrics.GetCounter("logfold_sink_disconnects_total",
                                        "Established connections of a network sink that were lost",
                                        "sink=\"" + sink_name + "\"")) {}

  ~TcpDestination() override {
    if (fd_ >= 0) ::close(fd_);
  }

  WriteResult Write(std::span<const iovec> data, const StopSignal& stop) override {
    WriteResult result;
    // Writing into a connection the peer has already closed would "succeed" and then be
    // reset, so check first: the common collector restart is then noticed without a loss.
    if (fd_ >= 0) {
      std::string why;
      if (PeerGone(why)) {
        Fail(result, why, reset_);
        return result;
      }
    }
    if (fd_ < 0 && !Connect(stop, result.error)) {
      result.failed = true;
      return result;
    }
    IovCursor cursor(data);
    while (!cursor.empty()) {
      msghdr msg{};
      msg.msg_iov = cursor.data();
      msg.msg_iovlen = static_cast<std::size_t>(cursor.count());
      const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        cursor.Advance(static_cast<std::size_t>(n));
        result.written += static_cast<std::size_t>(n);
        written_on_connection_ += static_cast<std::uint64_t>(n);
        continue;
      }
      const int err = n < 0 ? errno : EIO;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        // Hand back partial progress so the sink can release acknowledged bytes and take new
        // data; only wait when nothing moved.
        if (result.written > 0 || stop.Expired()) return result;
        WaitWritable(fd_, kWaitSliceMs);
        continue;
      }
      Fail(result, ErrnoText("send to " + peer_, err), true);
      return result;
    }
    return result;
  }

  std::uint64_t Unconfirmed() override {
    if (fd_ < 0) return last_unconfirmed_ = 0;
    int queued = 0;
    // SIOCOUTQ = bytes written but not acknowledged (write_seq - snd_una); it stays valid
    // after a reset, which is exactly when it matters. If it is unavailable, assume nothing
    // on this connection was acknowledged: duplicates rather than losses.
    SampleWindow();
    if (::ioctl(fd_, SIOCOUTQ, &queued) != 0 || queued < 0) {
      return last_unconfirmed_ = written_on_connection_;
    }
    return last_unconfirmed_ =
               std::min<std::uint64_t>(static_cast<std::uint64_t>(queued), written_on_connection_);
  }

  WriteResult Poll() override {
    WriteResult result;
    std::string why;
    if (fd_ >= 0 && PeerGone(why)) Fail(result, why, reset_);
    return result;
  }

  SinkClock::duration PollInterval() const override {
    if (fd_ >= 0 && last_unconfirmed_ > 0) return kAckPollInterval;
    return std::chrono::seconds(1);
  }

  void Close() override {
    if (fd_ < 0) return;
    ::close(fd_);
    fd_ = -1;
  }

 private:
  bool Connect(const StopSignal& stop, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* addresses = nullptr;
    const std::string port = std::to_string(port_);
    const int rc = ::getaddrinfo(address_.c_str(), port.c_str(), &hints, &addresses);
    if (rc != 0) {
      connect_failures_.fetch_add(1, std::memory_order_relaxed);
      error = "resolve " + address_ + ": " + ::gai_strerror(rc);
      return false;
    }
    std::string last_error = "no address";
    for (addrinfo* ai = addresses; ai != nullptr; ai = ai->ai_next) {
      const int fd =
          ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd < 0) {
        last_error = ErrnoText("socket", errno);
        continue;
      }
      if (ConnectWithin(fd, *ai, stop, kConnectTimeout, last_error)) {
        const int on = 1;
        // Notices a collector host that vanished while the connection sat idle.
        ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
        // The sink already writes whatever is buffered in one writev, so Nagle would only hold
        // a small write (one `first` event) back until the peer acknowledges the previous
        // one, and a peer that delays its ACKs (up to 40 ms on Linux) delays the event too.
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        ::freeaddrinfo(addresses);
        fd_ = fd;
        written_on_connection_ = 0;
        last_unconfirmed_ = 0;
        max_window_ = 0;
        SampleWindow();  // the window of an empty receive buffer, before anything is sent
        connects_.fetch_add(1, std::memory_order_relaxed);
        std::string note;
        if (connect_log_.Allow(note))
          spdlog::info("sink {}: connected to {}{}", sink_name_, peer_, note);
        return true;
      }
      ::close(fd);
    }
    ::freeaddrinfo(addresses);
    connect_failures_.fetch_add(1, std::memory_order_relaxed);
    error = "connect to " + peer_ + ": " + last_error;
    return false;
  }

  // True if the peer closed or reset the connection; `why` says how. Anything the collector
  // sent us is read and ignored (the protocol is one-way).
  bool PeerGone(std::string& why) {
    reset_ = false;
    pollfd p{fd_, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & POLLERR) {
      int so_error = 0;
      socklen_t len = sizeof so_error;
      ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &so_error, &len);
      why = ErrnoText("connection to " + peer_, so_error != 0 ? so_error : ECONNRESET);
      reset_ = true;
      return true;
    }
    if (p.revents & (POLLHUP | POLLRDHUP)) {
      why = "connection closed by " + peer_;
      return true;
    }
    std::array<char, 4096> scratch;
    for (int i = 0; i < 16; ++i) {
      const ssize_t n = ::recv(fd_, scratch.data(), scratch.size(), MSG_DONTWAIT);
      if (n > 0) continue;
      if (n == 0) {
        why = "connection closed by " + peer_;
        return true;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      why = ErrnoText("connection to " + peer_, errno);
      reset_ = true;
      return true;
    }
    return false;
  }

  void SampleWindow() {
    tcp_info info{};
    socklen_t info_len = sizeof info;
    if (::getsockopt(fd_, IPPROTO_TCP, TCP_INFO, &info, &info_len) == 0) {
      max_window_ = std::max<std::uint64_t>(max_window_, info.tcpi_snd_wnd);
    }
  }

  // `reset`: broken by a reset or error rather than closed.
  void Fail(WriteResult& result, std::string why, bool reset) {
    result.failed = true;
    result.error = std::move(why);
    result.unconfirmed = Unconfirmed();
    if (reset) {
      result.unread_acknowledged =
          std::min(written_on_connection_ - result.unconfirmed, max_window_);
    }
    ::close(fd_);
    fd_ = -1;
    last_unconfirmed_ = 0;
    disconnects_.fetch_add(1, std::memory_order_relaxed);
  }

  const std::string sink_name_;
  const std::string address_;
  const std::uint16_t port_;
  const std::string peer_;  // for log lines
  Metrics::Counter& connects_;
  Metrics::Counter& connect_failures_;
  Metrics::Counter& disconnects_;
  LogThrottle connect_log_;
  int fd_ = -1;
  std::uint64_t written_on_connection_ = 0;
  std::uint64_t last_unconfirmed_ = 0;
  std::uint64_t max_window_ = 0;  // largest receive window the peer advertised (TCP_INFO)
  bool reset_ = false;            // the last PeerGone saw a reset or error
};

}  // namespace

std::unique_ptr<Destination> MakeTcpDestination(const std::string& sink_name,
                                                const TcpSinkOptions& target, Metrics& metrics,
                                                std::string& error) {
  if (target.tls) return MakeTlsDestination(sink_name, target, metrics, error);
  return std::make_unique<TcpDestination>(sink_name, target, metrics);
}

std::unique_ptr<Sink> MakeTcpSink(const SinkOptions& sink, const TcpSinkOptions& tcp,
                                  Metrics& metrics, std::string& error) {
  auto destination = MakeTcpDestination(sink.name, tcp, metrics, error);
  if (!destination) return nullptr;
  return std::make_unique<BufferedSink>(
      NetworkSinkOptions(sink, "tcp", SinkEncoding::kNdjson, SinkFraming::kNewline,
                         tcp.reconnect_min_us, tcp.reconnect_max_us),
      std::move(destination), metrics);
}

}  // namespace logfold
