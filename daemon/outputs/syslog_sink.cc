// Syslog sink: TCP forwarding reuses the TCP destination with syslog framing; UDP
// forwarding sends each '\n'-separated record of the buffer as one datagram.
#include "daemon/outputs/syslog_sink.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <utility>

#include "daemon/outputs/buffered_sink.h"
#include "daemon/outputs/sink_io.h"
#include "daemon/outputs/tcp_sink.h"

namespace logfold {
namespace {

constexpr int kWaitSliceMs = 100;
// ENOBUFS/EAGAIN on a datagram socket clears quickly or not at all; past this many waits
// the datagram is dropped rather than stalling every other record behind it.
constexpr int kMaxSendWaits = 10;

class UdpDestination final : public Destination {
 public:
  UdpDestination(const std::string& sink_name, const TcpSinkOptions& target, Metrics& metrics)
      : address_(target.address),
        port_(target.port),
        peer_(target.address.find(':') != std::string::npos
                  ? "[" + target.address + "]:" + std::to_string(target.port)
                  : target.address + ":" + std::to_string(target.port)),
        dropped_records_(metrics.GetCounter("logfold_sink_dropped_records_total",
                                            "Records a UDP syslog sink failed to send (dropped)",
                                            "sink=\"" + sink_name + "\"")) {}

  ~UdpDestination() override {
    if (fd_ >= 0) ::close(fd_);
  }

  WriteResult Write(std::span<const iovec> data, const StopSignal& stop) override {
    WriteResult result;
    if (fd_ < 0 && !Open(result.error)) {
      result.failed = true;
      return result;
    }
    for (const iovec& piece : data) {
      std::string_view bytes(static_cast<const char*>(piece.iov_base), piece.iov_len);
      while (!bytes.empty()) {
        const std::size_t nl = bytes.find('\n');
        if (nl == std::string_view::npos) {
          // A record continues in the next block; carry it over.
          partial_.append(bytes);
          result.written += bytes.size();
          break;
        }
        if (partial_.empty()) {
          Send(bytes.substr(0, nl), result, stop);
        } else {
          partial_.append(bytes.substr(0, nl));
          Send(partial_, result, stop);
          partial_.clear();
        }
        result.written += nl + 1;
        bytes.remove_prefix(nl + 1);
      }
    }
    return result;
  }

  void Close() override {
    if (fd_ >= 0 && !partial_.empty()) {
      WriteResult ignored;
      Send(partial_, ignored, StopSignal());
    }
    partial_.clear();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  bool Open(std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* addresses = nullptr;
    const std::string port = std::to_string(port_);
    const int rc = ::getaddrinfo(address_.c_str(), port.c_str(), &hints, &addresses);
    if (rc != 0) {
      error = "resolve " + address_ + ": " + ::gai_strerror(rc);
      return false;
    }
    std::string last_error = "no address for " + peer_;
    for (addrinfo* ai = addresses; ai != nullptr; ai = ai->ai_next) {
      const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd < 0) {
        last_error = ErrnoText("socket", errno);
        continue;
      }
      // A connected datagram socket needs no address per send and reports ICMP errors.
      if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        last_error = ErrnoText("connect to " + peer_, errno);
        ::close(fd);
        continue;
      }
      fd_ = fd;
      break;
    }
    ::freeaddrinfo(addresses);
    if (fd_ < 0) error = std::move(last_error);
    return fd_ >= 0;
  }

  void Send(std::string_view record, WriteResult& result, const StopSignal& stop) {
    if (record.empty()) return;
    bool retried_refusal = false;
    for (int waits = 0;;) {
      if (::send(fd_, record.data(), record.size(), MSG_NOSIGNAL | MSG_DONTWAIT) >= 0) return;
      const int err = errno;
      if (err == EINTR) continue;
      // ECONNREFUSED reports an earlier datagram's ICMP error; this one was not sent yet.
      if (err == ECONNREFUSED && !retried_refusal) {
        retried_refusal = true;
        continue;
      }
      if ((err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) && waits < kMaxSendWaits &&
          !stop.Expired()) {
        ++waits;
        WaitWritable(fd_, kWaitSliceMs);
        continue;
      }
      dropped_records_.fetch_add(1, std::memory_order_relaxed);
      result.discarded += record.size() + 1;  // with its '\n' separator
      if (result.error.empty()) result.error = ErrnoText("send to " + peer_ + " (dropped)", err);
      return;
    }
  }

  const std::string address_;
  const std::uint16_t port_;
  const std::string peer_;
  Metrics::Counter& dropped_records_;
  int fd_ = -1;
  std::string partial_;  // start of a record split across blocks
};

}  // namespace

std::unique_ptr<Sink> MakeSyslogSink(const SinkOptions& sink, const SyslogSinkOptions& syslog,
                                     Metrics& metrics, std::string& error) {
  const TcpSinkOptions& target = syslog.target;
  BufferedSinkOptions options =
      NetworkSinkOptions(sink, "syslog", SinkEncoding::kSyslog5424, SinkFraming::kStream,
                         target.reconnect_min_us, target.reconnect_max_us);
  if (syslog.protocol == SyslogProtocol::kUdp) {
    return std::make_unique<BufferedSink>(
        std::move(options), std::make_unique<UdpDestination>(sink.name, target, metrics), metrics);
  }
  options.framing = syslog.framing == SyslogFraming::kOctetCounted ? SinkFraming::kOctetCounted
                                                                   : SinkFraming::kNewline;
  auto destination = MakeTcpDestination(sink.name, target, metrics, error);
  if (!destination) return nullptr;
  return std::make_unique<BufferedSink>(std::move(options), std::move(destination), metrics);
}

}  // namespace logfold
