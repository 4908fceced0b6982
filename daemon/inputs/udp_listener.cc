// UdpListener: socket setup, the readiness wait and the recvmmsg() drain loop.
#include "daemon/inputs/udp_listener.h"

#include <linux/sock_diag.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/runtime/wall_clock.h"

namespace logfold {

namespace {

namespace asio = boost::asio;
using asio::ip::udp;

// Datagrams per recvmmsg() and per TryDeliver: larger batches mean fewer syscalls, queue
// pushes and worker wakeups per datagram, which is what keeps the socket drained at
// several hundred thousand datagrams/s on a box with few cores. Each slot costs only the
// pages a datagram touches.
constexpr unsigned kBatch = 256;
// Batches read per wakeup before yielding to other handlers on the io_context.
constexpr int kBatchesPerWakeup = 8;
// No UDP payload exceeds this (65507 over IPv4, 65527 over IPv6 without jumbograms).
constexpr std::size_t kMaxDatagram = 65536;

udp ProtocolOfSocket(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw boost::system::system_error(errno, boost::system::system_category(),
                                      "getsockname on adopted udp socket");
  }
  int type = 0;
  socklen_t type_len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 || type != SOCK_DGRAM) {
    throw boost::system::system_error(EINVAL, boost::system::system_category(),
                                      "adopted socket is not a datagram socket");
  }
  if (addr.ss_family == AF_INET) return udp::v4();
  if (addr.ss_family == AF_INET6) return udp::v6();
  throw boost::system::system_error(EAFNOSUPPORT, boost::system::system_category(),
                                    "adopted udp socket is neither IPv4 nor IPv6");
}

// Appends the message of one datagram: a datagram is one message (RFC 5426), so a stack
// trace sent in one datagram stays one record, line breaks and all. Trailing LF, CR and NUL
// (Python's SysLogHandler ends with a NUL, others with a LF) are no part of it; an empty
// datagram is skipped.
void AppendDatagram(std::string_view datagram, std::vector<std::string_view>& messages) {
  while (!datagram.empty() &&
         (datagram.back() == '\n' || datagram.back() == '\r' || datagram.back() == '\0')) {
    datagram.remove_suffix(1);
  }
  if (!datagram.empty()) messages.push_back(datagram);
}

}  // namespace

struct UdpListener::State : std::enable_shared_from_this<State> {
  State(std::uint32_t input_id, std::string input_name, const Options& opts, asio::io_context& io,
        IngestTarget& ingest, Metrics& metrics)
      : input(input_id),
        name(std::move(input_name)),
        options(opts),
        allowed_senders(options.allowed_senders),
        target(ingest),
        strand(asio::make_strand(io)),
        socket(strand),
        retry_timer(strand),
        slot_size(std::clamp<std::size_t>(opts.max_message_size, 1, kMaxDatagram)),
        received(metrics.GetCounter("logfold_received_total", "Lines received.", Labels())),
        bytes(metrics.GetCounter("logfold_received_bytes_total",
                                 "Bytes received (datagram payloads, frames).", Labels())),
        truncated(metrics.GetCounter("logfold_truncated_total", "Messages cut to max_message_size.",
                                     Labels())),
        dropped(metrics.GetCounter("logfold_dropped_total", "Lines dropped on intake.",
                                   Labels() + ",reason=\"queue_full\"")),
        senders_refused(metrics.GetCounter("logfold_senders_refused_total",
                                           "Connections or datagrams refused by allowed_senders.",
                                           Labels())),
        kernel_drops(metrics.GetCounter(
            "logfold_udp_kernel_drops_total",
            "Datagrams the kernel dropped because the socket's receive buffer was full "
            "(read after each receive batch).",
            Labels())) {}

  std::string Labels() const {
    return "input=\"" + Metrics::EscapeLabelValue(name) + "\",proto=\"udp\"";
  }

  void Open();
  void SetReceiveBuffer();
  void Wait();
  void OnReadable(const boost::system::error_code& ec);
  void Drain();
  void Deliver();
  void CountKernelDrops();

  const std::uint32_t input;
  const std::string name;
  const Options options;
  const SenderAllowList allowed_senders;  // built from options.allowed_senders
  IngestTarget& target;
  asio::strand<asio::io_context::executor_type> strand;
  udp::socket socket;
  asio::steady_timer retry_timer;
  std::uint16_t port = 0;

  const std::size_t slot_size;
  std::vector<char> storage;
  std::array<mmsghdr, kBatch> headers{};
  std::array<iovec, kBatch> iovecs{};
  std::array<sockaddr_storage, kBatch> senders{};  // filled only with allowed_senders
  std::uint32_t kernel_drops_seen = 0;             // the socket's drop count when last read
  bool kernel_drops_readable = true;
  std::vector<std::string_view> lines;
  char peek_byte = 0;
  std::uint64_t errors_logged = 0;

  // Held across each TryDeliver so that Stop() can promise no delivery after it returns.
  std::mutex deliver_mu;
  bool stopped = false;  // guarded by deliver_mu
  std::atomic<bool> stop_requested{false};

  Metrics::Counter& received;
  Metrics::Counter& bytes;
  Metrics::Counter& truncated;
  Metrics::Counter& dropped;
  Metrics::Counter& senders_refused;
  Metrics::Counter& kernel_drops;
};

void UdpListener::State::Open() {
  if (options.adopted_fd >= 0) {
    socket.assign(ProtocolOfSocket(options.adopted_fd), options.adopted_fd);
  } else {
    const udp::endpoint endpoint(asio::ip::make_address(options.address), options.port);
    socket.open(endpoint.protocol());
    socket.bind(endpoint);
  }
  port = socket.local_endpoint().port();
  SetReceiveBuffer();

  storage.resize(slot_size * kBatch);
  for (unsigned i = 0; i < kBatch; ++i) {
    iovecs[i].iov_base = storage.data() + i * slot_size;
    iovecs[i].iov_len = slot_size;
    headers[i].msg_hdr.msg_iov = &iovecs[i];
    headers[i].msg_hdr.msg_iovlen = 1;
  }
  // Only an allow-list needs the sender's address; without one the kernel need not copy it.
  if (!allowed_senders.empty()) {
    for (unsigned i = 0; i < kBatch; ++i) {
      headers[i].msg_hdr.msg_name = &senders[i];
      headers[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
    }
  }
  lines.reserve(kBatch);
}

void UdpListener::State::SetReceiveBuffer() {
  boost::system::error_code ec;
  if (options.receive_buffer > 0) {
    const int want = static_cast<int>(std::min<std::size_t>(options.receive_buffer, INT_MAX / 2));
    socket.set_option(asio::socket_base::receive_buffer_size(want), ec);
    asio::socket_base::receive_buffer_size got;
    socket.get_option(got, ec);
    // Linux grants twice the request (bookkeeping overhead) and Asio halves what it reports
    // back; less than asked means net.core.rmem_max capped it, which SO_RCVBUFFORCE may
    // bypass if we hold CAP_NET_ADMIN.
    if (!ec && got.value() < want) {
      setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want);
    }
  }
  asio::socket_base::receive_buffer_size effective;
  socket.get_option(effective, ec);
  spdlog::info("input {}: udp listening on port {}, receive buffer {} bytes (requested {})", name,
               port, ec ? -1 : effective.value(), options.receive_buffer);
}

void UdpListener::State::Wait() {
  if (stop_requested.load()) return;
  // A 1-byte MSG_PEEK receive instead of async_wait(wait_read): Asio's reactor checks a
  // receive speculatively before parking it, but parks a wait unchecked, so a datagram that
  // arrived between our last EAGAIN and the wait would sit until the next one came in.
  socket.async_receive(asio::buffer(&peek_byte, 1), udp::socket::message_peek,
                       [self = shared_from_this()](const boost::system::error_code& ec,
                                                   std::size_t) { self->OnReadable(ec); });
}

void UdpListener::State::OnReadable(const boost::system::error_code& ec) {
  if (ec == asio::error::operation_aborted || stop_requested.load()) return;
  if (ec) {
    // Persistent socket errors must not spin the io_context, so back off briefly.
    if (errors_logged++ % 1000 == 0) spdlog::warn("input {}: udp receive: {}", name, ec.message());
    retry_timer.expires_after(std::chrono::milliseconds(50));
    retry_timer.async_wait([self = shared_from_this()](const boost::system::error_code& tec) {
      if (!tec) self->Wait();
    });
    return;
  }
  Drain();
}

void UdpListener::State::Drain() {
  const int fd = socket.native_handle();
  for (int round = 0; round < kBatchesPerWakeup; ++round) {
    if (stop_requested.load()) return;
    // MSG_TRUNC makes msg_len the datagram's real length, so truncation can be counted.
    const int got = recvmmsg(fd, headers.data(), kBatch, MSG_DONTWAIT | MSG_TRUNC, nullptr);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errors_logged++ % 1000 == 0) {
        spdlog::warn("input {}: recvmmsg: {}", name, std::strerror(errno));
      }
      Wait();
      return;
    }
    lines.clear();
    for (int i = 0; i < got; ++i) {
      if (!allowed_senders.empty()) {
        const bool allowed = allowed_senders.Allows(reinterpret_cast<sockaddr*>(&senders[i]));
        // recvmmsg shrinks msg_namelen to each sender's size: restore it for the next batch.
        headers[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
        if (!allowed) {
          senders_refused.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
      }
      const std::size_t real = headers[i].msg_len;
      bytes.fetch_add(real, std::memory_order_relaxed);
      if (real > slot_size || (headers[i].msg_hdr.msg_flags & MSG_TRUNC) != 0) {
        truncated.fetch_add(1, std::memory_order_relaxed);
      }
      AppendDatagram({storage.data() + i * slot_size, std::min(real, slot_size)}, lines);
    }
    CountKernelDrops();
    Deliver();
    if (got < static_cast<int>(kBatch)) {
      Wait();
      return;
    }
  }
  // Still more queued: continue later so one busy socket cannot starve other handlers.
  asio::post(strand, [self = shared_from_this()] { self->Drain(); });
}

// Datagrams the kernel drops for want of buffer space are otherwise invisible to us. Its
// per-socket drop count (SK_MEMINFO_DROPS) costs one getsockopt per batch; SO_RXQ_OVFL
// would put it on every datagram instead, a control message the profile showed at about 10 %
// of the receive thread once the count is non-zero.
void UdpListener::State::CountKernelDrops() {
  if (!kernel_drops_readable) return;
  std::array<std::uint32_t, SK_MEMINFO_VARS> meminfo{};
  socklen_t len = sizeof meminfo;
  if (getsockopt(socket.native_handle(), SOL_SOCKET, SO_MEMINFO, meminfo.data(), &len) != 0 ||
      len <= SK_MEMINFO_DROPS * sizeof(std::uint32_t)) {
    kernel_drops_readable = false;
    spdlog::warn("input {}: SO_MEMINFO unavailable ({}): kernel drops will not be counted", name,
                 std::strerror(errno));
    return;
  }
  const std::uint32_t count = meminfo[SK_MEMINFO_DROPS];
  // Unsigned difference: the kernel's counter wraps at 2^32.
  kernel_drops.fetch_add(static_cast<std::uint32_t>(count - kernel_drops_seen),
                         std::memory_order_relaxed);
  kernel_drops_seen = count;
}

void UdpListener::State::Deliver() {
  if (lines.empty()) return;
  received.fetch_add(lines.size(), std::memory_order_relaxed);
  const TimeUs arrival = WallClockNowUs();
  std::lock_guard lock(deliver_mu);
  if (stopped || !target.TryDeliver(input, lines, arrival)) {
    dropped.fetch_add(lines.size(), std::memory_order_relaxed);
  }
}

UdpListener::UdpListener(std::uint32_t input, std::string name, const Options& options,
                         asio::io_context& io, IngestTarget& target, Metrics& metrics)
    : state_(std::make_shared<State>(input, std::move(name), options, io, target, metrics)) {
  state_->Open();
}

UdpListener::~UdpListener() { Stop(); }

void UdpListener::Start() {
  asio::post(state_->strand, [self = state_] { self->Wait(); });
}

void UdpListener::Stop() {
  if (state_->stop_requested.exchange(true)) return;
  {
    std::lock_guard lock(state_->deliver_mu);
    state_->stopped = true;
  }
  asio::post(state_->strand, [self = state_] {
    boost::system::error_code ignored;
    self->retry_timer.cancel();
    self->socket.close(ignored);
    spdlog::info("input {}: udp listener stopped", self->name);
  });
}

std::uint16_t UdpListener::local_port() const { return state_->port; }

const std::string& UdpListener::name() const { return state_->name; }

}  // namespace logfold
