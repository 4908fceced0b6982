// UnixListener: one thread polls the socket, the accepted connections and a stop signal.
// Delivery blocks while the engine is full, so local senders are slowed (their socket buffer
// fills) rather than their messages dropped.
#include "daemon/inputs/unix_listener.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/inputs/blocking_delivery.h"
#include "daemon/runtime/wall_clock.h"
#include "pipeline/frame_decoder.h"

namespace logfold {

namespace {

constexpr std::size_t kMaxConnections = 256;
constexpr std::size_t kBatch = 64;  // datagrams delivered together
constexpr std::size_t kReadSize = 64 * 1024;

// A datagram is one message: only the terminators senders append are removed.
std::string_view TrimTerminators(std::string_view m) {
  while (!m.empty() && (m.back() == '\n' || m.back() == '\0' || m.back() == '\r'))
    m.remove_suffix(1);
  return m;
}

}  // namespace

class UnixListener::Impl {
 public:
  Impl(std::uint32_t input, const std::string& name, const Options& options, IngestTarget& target,
       Metrics& metrics)
      : name_(name),
        options_(options),
        delivery_(input, target),
        counters_(metrics, name, stream_ ? "unix_stream" : "unix_dgram"),
        received_(counters_.received),
        bytes_(counters_.bytes),
        truncated_(counters_.truncated),
        dropped_(counters_.Dropped("shutdown")),
        refused_(counters_.Error("connections")),
        read_errors_(counters_.Error("read")) {
    auto fail = [&](const std::string& what) {
      const std::string reason = std::strerror(errno);
      if (fd_ >= 0) close(fd_);
      if (bound_) unlink(options_.path.c_str());
      throw std::runtime_error("input " + name_ + ": " + what + " " + options_.path + ": " +
                               reason);
    };
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (options_.path.size() >= sizeof addr.sun_path) {
      errno = ENAMETOOLONG;
      fail("socket path");
    }
    std::memcpy(addr.sun_path, options_.path.c_str(), options_.path.size() + 1);
    // A socket left by a previous run that was killed; anything else there is not ours.
    struct stat st {};
    if (lstat(options_.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
      unlink(options_.path.c_str());
    }
    fd_ = socket(AF_UNIX, (stream_ ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) fail("socket");
    if (bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) fail("bind");
    bound_ = true;
    if (chmod(options_.path.c_str(), options_.mode) != 0) fail("chmod");
    if (stream_ && listen(fd_, SOMAXCONN) != 0) fail("listen");
    spdlog::info("input {}: listening on unix {} socket {}", name_, stream_ ? "stream" : "datagram",
                 options_.path);
  }

  ~Impl() {
    for (Connection& c : conns_) close(c.fd);
    if (fd_ >= 0) close(fd_);
    if (bound_) unlink(options_.path.c_str());
  }

  void Stop() {
    delivery_.Stop();
    wake_.Signal();
  }

  void Run() {
    std::vector<pollfd> fds;
    std::vector<char> buf(std::max(kReadSize, options_.max_message_size + 1));
    while (!delivery_.stopped()) {
      fds.clear();
      fds.push_back({wake_.fd(), POLLIN, 0});
      fds.push_back({fd_, POLLIN, 0});
      for (const Connection& c : conns_) fds.push_back({c.fd, POLLIN, 0});
      const int r = poll(fds.data(), fds.size(), -1);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 || fds[0].revents != 0) break;
      if (fds[1].revents != 0) {
        if (stream_) {
          Accept();
        } else if (!ReadDatagrams()) {
          break;
        }
      }
      for (std::size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        Connection& c = conns_[i - 2];
        if (!ReadConnection(c, buf)) c.closed = true;
      }
      std::erase_if(conns_, [](const Connection& c) {
        if (c.closed) close(c.fd);
        return c.closed;
      });
    }
  }

 private:
  struct Connection {
    int fd;
    std::unique_ptr<FrameDecoder> decoder;
    FrameDecoder::Counters accounted;
    bool closed = false;
  };

  void Accept() {
    while (true) {
      const int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (c < 0) return;
      if (conns_.size() >= kMaxConnections) {
        refused_.fetch_add(1, std::memory_order_relaxed);
        close(c);
        continue;
      }
      conns_.push_back({c,
                        std::make_unique<FrameDecoder>(
                            FrameDecoder::Options{.framing = Framing::kNewline,
                                                  .nul_terminator = true,
                                                  .max_message_size = options_.max_message_size}),
                        {}});
    }
  }

  // False when Stop() interrupted a delivery.
  bool ReadDatagrams() {
    const std::size_t slot = options_.max_message_size + 1;
    dgram_buf_.resize(kBatch * slot);
    lines_.clear();
    while (lines_.size() < kBatch) {
      char* at = dgram_buf_.data() + lines_.size() * slot;
      const ssize_t n = recv(fd_, at, slot, MSG_DONTWAIT | MSG_TRUNC);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
          read_errors_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      bytes_.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
      std::size_t len = static_cast<std::size_t>(n);
      std::string_view m = TrimTerminators({at, std::min(len, slot)});
      if (m.size() > options_.max_message_size) {
        m = m.substr(0, options_.max_message_size);
        truncated_.fetch_add(1, std::memory_order_relaxed);
      }
      lines_.push_back(m);
    }
    return Deliver(lines_);
  }

  bool Deliver(std::span<const std::string_view> lines) {
    if (lines.empty()) return true;
    if (!delivery_.Deliver(lines, WallClockNowUs())) {
      dropped_.fetch_add(lines.size(), std::memory_order_relaxed);
      return false;
    }
    received_.fetch_add(lines.size(), std::memory_order_relaxed);
    return true;
  }

  // False when the connection ended (EOF or error) or Stop() interrupted a delivery.
  bool ReadConnection(Connection& c, std::vector<char>& buf) {
    const ssize_t n = recv(c.fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    if (n < 0) read_errors_.fetch_add(1, std::memory_order_relaxed);
    std::span<const std::string_view> lines;
    if (n > 0) {
      bytes_.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
      lines = c.decoder->Feed({buf.data(), static_cast<std::size_t>(n)});
    } else {
      lines = c.decoder->Finish();
    }
    const FrameDecoder::Counters& now = c.decoder->counters();
    truncated_.fetch_add(now.truncated - c.accounted.truncated, std::memory_order_relaxed);
    c.accounted = now;
    if (!Deliver(lines)) return false;
    return n > 0;
  }

  const std::string name_;
  const Options options_;
  const bool stream_ = options_.socket_type == UnixSocketType::kStream;
  BlockingDelivery delivery_;
  int fd_ = -1;
  bool bound_ = false;
  WakeSignal wake_;
  std::vector<Connection> conns_;
  std::vector<char> dgram_buf_;
  std::vector<std::string_view> lines_;

  InputCounters counters_;
  Metrics::Counter& received_;
  Metrics::Counter& bytes_;
  Metrics::Counter& truncated_;
  Metrics::Counter& dropped_;
  Metrics::Counter& refused_;
  Metrics::Counter& read_errors_;
};

UnixListener::UnixListener(std::uint32_t input, std::string name, const Options& options,
                           IngestTarget& target, Metrics& metrics)
    : name_(std::move(name)),
      impl_(std::make_unique<Impl>(input, name_, options, target, metrics)) {}

UnixListener::~UnixListener() {
  Stop();
  Join();
}

void UnixListener::Start() {
  thread_.Start(name_, [this] { impl_->Run(); });
}

void UnixListener::Stop() { impl_->Stop(); }

void UnixListener::Join() { thread_.Join(); }

}  // namespace logfold
