// TcpListener: the acceptor, the connection registry and the per-connection read, deliver
// and backpressure state machine.
#include "daemon/inputs/tcp_listener.h"

#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cerrno>
#include <chrono>
#include <climits>
#include <map>
#include <mutex>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/runtime/wall_clock.h"

namespace logfold {

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using Strand = asio::strand<asio::io_context::executor_type>;
using Socket = asio::basic_stream_socket<tcp, Strand>;
using SteadyClock = std::chrono::steady_clock;
using Timer = asio::basic_waitable_timer<SteadyClock, asio::wait_traits<SteadyClock>, Strand>;

// A safety net under OnWritable: a paused connection also retries this often on its own, so
// a lost wakeup in the target costs latency rather than a stuck connection.
constexpr auto kRetryInterval = std::chrono::seconds(1);
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);
constexpr auto kMemoryRetry = std::chrono::milliseconds(100);
// Descriptors a listener leaves free for the rest of the daemon: the metrics endpoint,
// outputs reconnecting, files reopened on SIGHUP.
constexpr int kDescriptorHeadroom = 32;

// The lowest descriptor number a connection may not have: the kernel hands out the lowest
// free number, so a number this high means fewer than kDescriptorHeadroom are left.
int DescriptorCeiling() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY ||
      r.rlim_cur > static_cast<rlim_t>(INT_MAX)) {
    return INT_MAX;
  }
  return std::max(0, static_cast<int>(r.rlim_cur) - kDescriptorHeadroom);
}

tcp ProtocolOfSocket(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw boost::system::system_error(errno, boost::system::system_category(),
                                      "getsockname on adopted tcp socket");
  }
  int type = 0;
  socklen_t type_len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 || type != SOCK_STREAM) {
    throw boost::system::system_error(EINVAL, boost::system::system_category(),
                                      "adopted socket is not a stream socket");
  }
  if (addr.ss_family == AF_INET) return tcp::v4();
  if (addr.ss_family == AF_INET6) return tcp::v6();
  throw boost::system::system_error(EAFNOSUPPORT, boost::system::system_category(),
                                    "adopted tcp socket is neither IPv4 nor IPv6");
}

}  // namespace

struct TcpListener::Impl : std::enable_shared_from_this<Impl> {
  Impl(std::uint32_t input_id, std::string input_name, const Options& opts, asio::io_context& ctx,
       IngestTarget& ingest, Metrics& metrics, MemoryBudget* memory);

  std::string Labels() const {
    return "input=\"" + Metrics::EscapeLabelValue(name) + "\",proto=\"tcp\"";
  }
  Metrics::Counter& Counter(Metrics& metrics, std::string_view metric, std::string_view help,
                            std::string_view extra = "") const {
    return metrics.GetCounter(metric, help, Labels() + std::string(extra));
  }

  void Open();
  void DoAccept();
  void OnAccept(const boost::system::error_code& ec, Socket socket);
  void StopAccepting();
  std::vector<std::shared_ptr<Connection>> Snapshot();
  void Unregister(const Connection* connection, const asio::ip::address& source);
  bool AdmitSource(const asio::ip::address& source);
  void OnAcceptError(const boost::system::error_code& ec);
  bool LeavesDescriptorHeadroom(Socket& socket);
  void FireDrainedIfDone(std::unique_lock<std::mutex>& lock);

  asio::io_context& io;
  const std::uint32_t input;
  const std::string name;
  const Options options;
  const SenderAllowList allowed_senders;  // built from options.allowed_senders
  IngestTarget& target;
  MemoryBudget* budget;
  Strand strand;
  tcp::acceptor acceptor;
  asio::steady_timer accept_retry;
  std::uint16_t port = 0;
  const int descriptor_ceiling = DescriptorCeiling();
  bool accepting_stopped = false;   // on strand
  std::uint64_t accept_errors = 0;  // on strand

  // Connections register from the acceptor strand and unregister from their own strands.
  std::mutex mu;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections;
  std::map<asio::ip::address, std::uint32_t> per_source;  // open connections by peer
  bool draining = false;
  std::function<void()> on_drained;

  // Shared with the gauge callback, which the Metrics registry keeps forever.
  std::shared_ptr<std::atomic<std::int64_t>> open;
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> close_requested{false};

  Metrics::Counter& received;
  Metrics::Counter& bytes;
  Metrics::Counter& truncated;
  Metrics::Counter& framing_errors;
  Metrics::Counter& partial_at_close;
  Metrics::Counter& accepted;
  Metrics::Counter& closed;
  Metrics::Counter& rejected;
  Metrics::Counter& rejected_per_source;
  Metrics::Counter& accept_failed_descriptors;
  Metrics::Counter& accept_failed_other;
  Metrics::Counter& senders_refused;
  Metrics::Counter& idle_timeouts;
  Metrics::Counter& dropped_shutdown;
  Metrics::Counter& memory_pauses;
};

class TcpListener::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<Impl> impl, Socket socket, const tcp::endpoint& remote);

  // Each posts onto the connection's strand.
  void Start();
  void StopReading();
  void Close();

 private:
  void DoRead();
  void OnRead(const boost::system::error_code& ec, std::size_t n);
  void FinishInput();
  bool Deliver(std::span<const std::string_view> messages, TimeUs arrival);
  // TryDeliverShared within the connection's queue share; sets waiting_on_share_.
  bool Offer(std::span<const std::string_view> messages, TimeUs arrival);
  void Pause();
  void RegisterWritable();
  void ArmRetry();
  void OnWritableSignal(std::uint64_t generation);
  void OnRetryTimer();
  bool DeliverPending();
  void Unpause();
  void Account();
  void ArmIdle(SteadyClock::duration after);
  void OnIdleTimer();
  // `drain`: first read the bytes already in the kernel's receive buffer (a shutdown; an
  // idle timeout has none to read).
  void StopReadingNow(bool drain);
  void CloseNow();
  // Memory budget: whether to wait before reading (and arms the wait), and the accounting of
  // the bytes this connection holds between reads.
  bool WaitForMemory();
  void AccountFrames();

  std::shared_ptr<Impl> impl_;
  Socket socket_;
  Timer idle_timer_;
  Timer retry_timer_;
  FrameDecoder decoder_;
  FrameDecoder::Counters accounted_;  // decoder counters already added to the metrics
  std::vector<char> buf_;
  // This connection's share of the worker queues (null: the target keeps none): a flooding
  // connection waits on it while the others are served.
  const std::shared_ptr<QueueShare> share_;
  bool waiting_on_share_ = false;  // paused for the share, not for the target
  asio::ip::address source_;
  std::string peer_;

  // Messages TryDeliver refused, copied out of buf_ so reading can stop holding them.
  std::vector<std::string> pending_;
  std::vector<std::string_view> pending_views_;
  std::size_t pending_count_ = 0;
  TimeUs pending_arrival_ = 0;

  bool reading_ = false;       // an async_read_some is outstanding
  bool paused_ = false;        // pending_ waits for the target
  bool read_stopped_ = false;  // StopReading or idle timeout: read no further
  // After a shutdown's StopReading: bytes the kernel had received on this connection by
  // then, still to be read. TCP acknowledged them to the sender, who will not send them
  // again, so they count as accepted and are read before the input finishes.
  std::size_t drain_left_ = 0;
  bool input_done_ = false;  // decoder finished; close once pending_ is delivered
  bool closed_ = false;
  bool framing_error_logged_ = false;
  std::uint64_t resume_generation_ = 0;  // tells a stale OnWritable callback from the current
  std::int64_t frames_accounted_ = 0;    // added to MemoryBudget::Part::kFrames
  SteadyClock::time_point last_activity_;
};

// ---------------------------------------------------------------------------- Impl

TcpListener::Impl::Impl(std::uint32_t input_id, std::string input_name, const Options& opts,
                        asio::io_context& ctx, IngestTarget& ingest, Metrics& metrics,
                        MemoryBudget* memory)
    : io(ctx),
      input(input_id),
      name(std::move(input_name)),
      options(opts),
      allowed_senders(options.allowed_senders),
      target(ingest),
      budget(memory),
      strand(asio::make_strand(ctx)),
      acceptor(strand),
      accept_retry(strand),
      open(std::make_shared<std::atomic<std::int64_t>>(0)),
      received(Counter(metrics, "logfold_received_total", "Lines received.")),
      bytes(Counter(metrics, "logfold_received_bytes_total",
                    "Bytes received (datagram payloads, frames).")),
      truncated(Counter(metrics, "logfold_truncated_total", "Messages cut to max_message_size.")),
      framing_errors(Counter(metrics, "logfold_framing_errors_total",
                             "TCP frames that looked octet-counted but were not (invalid length, "
                             "or content not starting as the input format does); read as lines.")),
      partial_at_close(Counter(metrics, "logfold_partial_at_close_total",
                               "Octet-counted frames cut short by the connection closing.")),
      accepted(Counter(metrics, "logfold_connections_accepted_total", "TCP connections accepted.")),
      closed(Counter(metrics, "logfold_connections_closed_total", "TCP connections closed.")),
      rejected(Counter(metrics, "logfold_connections_rejected_total",
                       "TCP connections refused because max_connections were open.")),
      rejected_per_source(Counter(metrics, "logfold_connections_rejected_per_source_total",
                                  "TCP connections refused because their source address held "
                                  "max_connections_per_source.")),
      accept_failed_descriptors(Counter(metrics, "logfold_accept_errors_total",
                                        "accept() failures (the listener backs off and retries).",
                                        ",reason=\"descriptors\"")),
      accept_failed_other(Counter(metrics, "logfold_accept_errors_total",
                                  "accept() failures (the listener backs off and retries).",
                                  ",reason=\"other\"")),
      senders_refused(Counter(metrics, "logfold_senders_refused_total",
                              "Connections or datagrams refused by allowed_senders.")),
      idle_timeouts(
          Counter(metrics, "logfold_idle_timeouts_total", "TCP connections closed for idleness.")),
      dropped_shutdown(Counter(metrics, "logfold_dropped_total", "Lines dropped on intake.",
                               ",reason=\"shutdown\"")),
      memory_pauses(Counter(metrics, "logfold_tcp_memory_pauses_total",
                            "Times a TCP connection stopped reading for the memory budget.")) {
  metrics.AddGauge("logfold_connections_open", "TCP connections open.", Labels(),
                   [gauge = open] { return static_cast<double>(gauge->load()); });
}

void TcpListener::Impl::Open() {
  if (options.adopted_fd >= 0) {
    acceptor.assign(ProtocolOfSocket(options.adopted_fd), options.adopted_fd);
  } else {
    const tcp::endpoint endpoint(asio::ip::make_address(options.address), options.port);
    acceptor.open(endpoint.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(endpoint);
  }
  if (options.receive_buffer > 0) {
    // Before listen(): the window scale is negotiated from the buffer size at SYN time.
    boost::system::error_code ec;
    const int want = static_cast<int>(std::min<std::size_t>(options.receive_buffer, INT_MAX / 2));
    acceptor.set_option(asio::socket_base::receive_buffer_size(want), ec);
    if (ec) spdlog::warn("input {}: SO_RCVBUF {}: {}", name, want, ec.message());
  }
  // Harmless on an adopted socket that already listens: it only updates the backlog.
  acceptor.listen(asio::socket_base::max_listen_connections);
  port = acceptor.local_endpoint().port();
  spdlog::info("input {}: tcp listening on port {} (framing {}, max {} connections)", name, port,
               FramingName(options.framing), options.max_connections);
}

void TcpListener::Impl::DoAccept() {
  if (accepting_stopped) return;
  acceptor.async_accept(
      asio::make_strand(io),
      [self = shared_from_this()](const boost::system::error_code& ec, Socket socket) {
        self->OnAccept(ec, std::move(socket));
      });
}

void TcpListener::Impl::OnAccept(const boost::system::error_code& ec, Socket socket) {
  if (accepting_stopped || ec == asio::error::operation_aborted) return;
  if (ec) {
    OnAcceptError(ec);
    return;
  }
  if (!LeavesDescriptorHeadroom(socket)) return;
  if (!allowed_senders.empty()) {
    boost::system::error_code rec;
    const tcp::endpoint remote = socket.remote_endpoint(rec);
    if (rec || !allowed_senders.Allows(remote.data())) {
      senders_refused.fetch_add(1, std::memory_order_relaxed);  // counted, not logged
      boost::system::error_code ignored;
      socket.close(ignored);
      DoAccept();
      return;
    }
  }
  if (options.max_connections > 0 &&
      open->load() >= static_cast<std::int64_t>(options.max_connections)) {
    const std::uint64_t n = rejected.fetch_add(1) + 1;
    if ((n & (n - 1)) == 0) {  // 1, 2, 4, 8...: visible without flooding the log
      spdlog::warn("input {}: max_connections ({}) reached, refused {} connection(s) so far", name,
                   options.max_connections, n);
    }
    boost::system::error_code ignored;
    socket.close(ignored);
    DoAccept();
    return;
  }
  boost::system::error_code peer_ec;
  const tcp::endpoint remote = socket.remote_endpoint(peer_ec);
  if (peer_ec) {  // reset before we got to it
    boost::system::error_code ignored;
    socket.close(ignored);
    DoAccept();
    return;
  }
  if (!AdmitSource(remote.address())) {
    boost::system::error_code ignored;
    socket.close(ignored);
    DoAccept();
    return;
  }
  accepted.fetch_add(1, std::memory_order_relaxed);
  open->fetch_add(1);
  auto connection = std::make_shared<Connection>(shared_from_this(), std::move(socket), remote);
  {
    std::lock_guard lock(mu);
    connections.emplace(connection.get(), connection);
  }
  connection->Start();
  DoAccept();
}

// EMFILE, ENFILE, ENOBUFS, ENOMEM: the pending connection stays in the backlog, which stays
// readable, so retrying at once would spin a core. Back off, count, and leave the descriptors
// that are left to the connections already open and the metrics endpoint.
void TcpListener::Impl::OnAcceptError(const boost::system::error_code& ec) {
  const int e = ec.value();
  const bool descriptors = ec.category() == boost::system::system_category() &&
                           (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM);
  (descriptors ? accept_failed_descriptors : accept_failed_other)
      .fetch_add(1, std::memory_order_relaxed);
  if (accept_errors++ % 100 == 0) {
    spdlog::warn("input {}: accept: {}; retrying in {} ms", name, ec.message(),
                 std::chrono::duration_cast<std::chrono::milliseconds>(kAcceptRetry).count());
  }
  accept_retry.expires_after(kAcceptRetry);
  accept_retry.async_wait([self = shared_from_this()](const boost::system::error_code& tec) {
    if (!tec) self->DoAccept();
  });
}

// A connection that took one of the last kDescriptorHeadroom descriptors is closed at once
// and counted as a descriptor failure, and accepting backs off as for EMFILE.
bool TcpListener::Impl::LeavesDescriptorHeadroom(Socket& socket) {
  if (socket.native_handle() < descriptor_ceiling) return true;
  boost::system::error_code ignored;
  socket.close(ignored);
  OnAcceptError(asio::error::no_descriptors);
  return false;
}

// Takes a slot for `source`, or counts a refusal when it holds max_connections_per_source.
bool TcpListener::Impl::AdmitSource(const asio::ip::address& source) {
  std::lock_guard lock(mu);
  std::uint32_t& held = per_source[source];
  if (options.max_connections_per_source == 0 || held < options.max_connections_per_source) {
    ++held;
    return true;
  }
  const std::uint64_t n = rejected_per_source.fetch_add(1) + 1;
  if ((n & (n - 1)) == 0) {
    spdlog::warn("input {}: {} holds max_connections_per_source ({}); refused {} so far", name,
                 source.to_string(), options.max_connections_per_source, n);
  }
  return false;
}

void TcpListener::Impl::StopAccepting() {
  accepting_stopped = true;
  boost::system::error_code ignored;
  accept_retry.cancel();
  acceptor.close(ignored);
}

std::vector<std::shared_ptr<TcpListener::Connection>> TcpListener::Impl::Snapshot() {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard lock(mu);
  out.reserve(connections.size());
  for (auto& [key, weak] : connections) {
    if (auto connection = weak.lock()) out.push_back(std::move(connection));
  }
  return out;
}

void TcpListener::Impl::Unregister(const Connection* connection, const asio::ip::address& source) {
  std::unique_lock lock(mu);
  connections.erase(connection);
  if (auto it = per_source.find(source); it != per_source.end() && --it->second == 0) {
    per_source.erase(it);
  }
  FireDrainedIfDone(lock);
}

void TcpListener::Impl::FireDrainedIfDone(std::unique_lock<std::mutex>& lock) {
  if (!draining || !connections.empty() || !on_drained) return;
  std::function<void()> callback = std::move(on_drained);
  on_drained = nullptr;
  lock.unlock();
  callback();
}

// ---------------------------------------------------------------------------- Connection

TcpListener::Connection::Connection(std::shared_ptr<Impl> impl, Socket socket,
                                    const tcp::endpoint& remote)
    : impl_(std::move(impl)),
      socket_(std::move(socket)),
      idle_timer_(socket_.get_executor()),
      retry_timer_(socket_.get_executor()),
      decoder_({.framing = impl_->options.framing,
                .nul_terminator = impl_->options.nul_terminator,
                .octet_content_start = impl_->options.octet_content_start,
                .max_message_size = impl_->options.max_message_size}),
      buf_(std::max<std::size_t>(impl_->options.read_size, 4096)),
      share_(impl_->target.NewShare()),
      source_(remote.address()),
      peer_(remote.address().to_string() + ":" + std::to_string(remote.port())),
      last_activity_(SteadyClock::now()) {}

void TcpListener::Connection::Start() {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    spdlog::debug("input {}: connection from {}", self->impl_->name, self->peer_);
    if (self->impl_->options.idle_timeout_us > 0) {
      self->ArmIdle(std::chrono::microseconds(self->impl_->options.idle_timeout_us));
    }
    // A Stop that raced with this accept has already snapshotted the registry without us.
    if (self->impl_->close_requested.load()) {
      self->CloseNow();
    } else if (self->impl_->stop_requested.load()) {
      self->StopReadingNow(/*drain=*/true);
    } else {
      self->DoRead();
    }
  });
}

void TcpListener::Connection::StopReading() {
  asio::post(socket_.get_executor(),
             [self = shared_from_this()] { self->StopReadingNow(/*drain=*/true); });
}

void TcpListener::Connection::Close() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->CloseNow(); });
}

void TcpListener::Connection::DoRead() {
  if (closed_) return;
  if (read_stopped_ && drain_left_ == 0) {
    FinishInput();
    return;
  }
  if (!read_stopped_ && WaitForMemory()) return;
  reading_ = true;
  const std::size_t want = read_stopped_ ? std::min(buf_.size(), drain_left_) : buf_.size();
  socket_.async_read_some(asio::buffer(buf_.data(), want),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t n) { self->OnRead(ec, n); });
}

void TcpListener::Connection::OnRead(const boost::system::error_code& ec, std::size_t n) {
  reading_ = false;
  if (closed_) return;
  if (n > 0) {
    if (read_stopped_) drain_left_ -= std::min(n, drain_left_);
    impl_->bytes.fetch_add(n, std::memory_order_relaxed);
    const std::span<const std::string_view> messages = decoder_.Feed({buf_.data(), n});
    // Only complete messages count as activity (see Options::idle_timeout_us).
    if (!messages.empty()) last_activity_ = SteadyClock::now();
    Account();
    const bool delivered = Deliver(messages, WallClockNowUs());
    AccountFrames();
    if (!delivered) return;  // Unpause() continues
  }
  if (ec) {
    if (ec != asio::error::eof && ec != asio::error::operation_aborted) {
      spdlog::debug("input {}: read from {}: {}", impl_->name, peer_, ec.message());
    }
    FinishInput();  // EOF, error, or StopReading cancelled the read
    return;
  }
  DoRead();
}

void TcpListener::Connection::FinishInput() {
  input_done_ = true;
  read_stopped_ = true;
  const std::span<const std::string_view> messages = decoder_.Finish();
  Account();
  if (!Deliver(messages, WallClockNowUs())) return;
  CloseNow();
}

bool TcpListener::Connection::Deliver(std::span<const std::string_view> messages, TimeUs arrival) {
  if (messages.empty() || Offer(messages, arrival)) return true;
  // The views point into buf_ (or the decoder), which the next read reuses: copy them.
  if (pending_.size() < messages.size()) pending_.resize(messages.size());
  pending_views_.clear();
  for (std::size_t i = 0; i < messages.size(); ++i) {
    pending_[i].assign(messages[i]);
    pending_views_.push_back(pending_[i]);
  }
  pending_count_ = messages.size();
  pending_arrival_ = arrival;
  Pause();
  return false;
}

void TcpListener::Connection::Pause() {
  paused_ = true;
  RegisterWritable();
  ArmRetry();
}

void TcpListener::Connection::RegisterWritable() {
  const std::uint64_t generation = ++resume_generation_;
  // The callback may run on any thread, possibly inside OnWritable itself: hop to the strand.
  // It holds the connection weakly because the target may keep it past the io_context's
  // life; while paused, the pending retry timer is what keeps the connection alive.
  auto resume = [weak = weak_from_this(), generation] {
    if (auto self = weak.lock()) {
      asio::post(self->socket_.get_executor(),
                 [self, generation] { self->OnWritableSignal(generation); });
    }
  };
  if (waiting_on_share_) {
    share_->OnRoom(pending_count_, std::move(resume));
  } else {
    impl_->target.OnWritable(std::move(resume));
  }
}

void TcpListener::Connection::ArmRetry() {
  retry_timer_.expires_after(kRetryInterval);
  retry_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->OnRetryTimer();
  });
}

void TcpListener::Connection::OnWritableSignal(std::uint64_t generation) {
  if (closed_ || !paused_ || generation != resume_generation_) return;
  if (DeliverPending()) {
    Unpause();
  } else {
    RegisterWritable();
  }
}

void TcpListener::Connection::OnRetryTimer() {
  if (closed_ || !paused_) return;
  if (DeliverPending()) {
    Unpause();
  } else {
    ArmRetry();  // the OnWritable registration is still outstanding
  }
}

bool TcpListener::Connection::Offer(std::span<const std::string_view> messages, TimeUs arrival) {
  waiting_on_share_ = share_ != nullptr && !share_->Fits(messages.size());
  return !waiting_on_share_ &&
         impl_->target.TryDeliverShared(impl_->input, messages, arrival, share_);
}

bool TcpListener::Connection::DeliverPending() {
  if (!Offer({pending_views_.data(), pending_count_}, pending_arrival_)) return false;
  pending_count_ = 0;
  pending_views_.clear();
  AccountFrames();
  return true;
}

void TcpListener::Connection::Unpause() {
  paused_ = false;
  retry_timer_.cancel();
  last_activity_ = SteadyClock::now();
  if (input_done_) {
    CloseNow();
  } else {
    DoRead();  // or FinishInput, if StopReading came while paused
  }
}

void TcpListener::Connection::Account() {
  const FrameDecoder::Counters& now = decoder_.counters();
  impl_->received.fetch_add(now.messages - accounted_.messages, std::memory_order_relaxed);
  impl_->truncated.fetch_add(now.truncated - accounted_.truncated, std::memory_order_relaxed);
  impl_->partial_at_close.fetch_add(now.partial_at_close - accounted_.partial_at_close,
                                    std::memory_order_relaxed);
  if (now.framing_errors != accounted_.framing_errors) {
    impl_->framing_errors.fetch_add(now.framing_errors - accounted_.framing_errors,
                                    std::memory_order_relaxed);
    if (!framing_error_logged_) {
      framing_error_logged_ = true;
      spdlog::warn(
          "input {}: a frame from {} looked octet-counted but was not; reading it and the rest of "
          "the connection as lines",
          impl_->name, peer_);
    }
  }
  accounted_ = now;
}

void TcpListener::Connection::ArmIdle(SteadyClock::duration after) {
  idle_timer_.expires_after(after);
  idle_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->OnIdleTimer();
  });
}

void TcpListener::Connection::OnIdleTimer() {
  if (closed_ || read_stopped_) return;
  const auto timeout = std::chrono::microseconds(impl_->options.idle_timeout_us);
  // Waiting on the target is our doing, not the client's: that is not idleness.
  if (paused_) last_activity_ = SteadyClock::now();
  const auto idle = SteadyClock::now() - last_activity_;
  if (idle < timeout) {
    ArmIdle(timeout - idle);
    return;
  }
  impl_->idle_timeouts.fetch_add(1, std::memory_order_relaxed);
  spdlog::info("input {}: closing idle connection from {}", impl_->name, peer_);
  StopReadingNow(/*drain=*/false);
}

void TcpListener::Connection::StopReadingNow(bool drain) {
  if (closed_ || read_stopped_) return;
  read_stopped_ = true;
  int queued = 0;
  if (drain && !input_done_ && ::ioctl(socket_.native_handle(), FIONREAD, &queued) == 0 &&
      queued > 0) {
    drain_left_ = static_cast<std::size_t>(queued);
    // An outstanding read completes with these bytes; when paused, Unpause reads on.
    if (!reading_ && !paused_) DoRead();
    return;
  }
  if (reading_) {
    boost::system::error_code ignored;
    socket_.cancel(ignored);  // OnRead sees operation_aborted and finishes the input
  } else if (!paused_) {
    FinishInput();
  }
}

void TcpListener::Connection::CloseNow() {
  if (closed_) return;
  closed_ = true;
  if (pending_count_ > 0) {
    impl_->dropped_shutdown.fetch_add(pending_count_, std::memory_order_relaxed);
    spdlog::warn("input {}: dropped {} undelivered line(s) from {} at shutdown", impl_->name,
                 pending_count_, peer_);
    pending_count_ = 0;
  }
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  idle_timer_.cancel();
  retry_timer_.cancel();
  if (impl_->budget != nullptr) {
    impl_->budget->Add(MemoryBudget::Part::kFrames, -std::exchange(frames_accounted_, 0));
  }
  impl_->closed.fetch_add(1, std::memory_order_relaxed);
  impl_->open->fetch_sub(1);
  spdlog::debug("input {}: connection from {} closed", impl_->name, peer_);
  impl_->Unregister(this, source_);
}

bool TcpListener::Connection::WaitForMemory() {
  if (impl_->budget == nullptr || impl_->budget->IntakeAllowed(buf_.size())) return false;
  impl_->memory_pauses.fetch_add(1, std::memory_order_relaxed);
  // Not paused_ (nothing is pending), and not idle: the wait is ours, so it refreshes the
  // activity time as a backpressure pause does.
  last_activity_ = SteadyClock::now();
  retry_timer_.expires_after(kMemoryRetry);
  retry_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec && !self->reading_ && !self->paused_) self->DoRead();
  });
  return true;
}

void TcpListener::Connection::AccountFrames() {
  if (impl_->budget == nullptr) return;
  std::int64_t held = static_cast<std::int64_t>(decoder_.buffered_bytes());
  for (std::size_t i = 0; i < pending_count_; ++i) {
    held += static_cast<std::int64_t>(pending_[i].capacity());
  }
  impl_->budget->Add(MemoryBudget::Part::kFrames, held - frames_accounted_);
  frames_accounted_ = held;
}

// ---------------------------------------------------------------------------- TcpListener

TcpListener::TcpListener(std::uint32_t input, std::string name, const Options& options,
                         asio::io_context& io, IngestTarget& target, Metrics& metrics,
                         MemoryBudget* budget)
    : impl_(std::make_shared<Impl>(input, std::move(name), options, io, target, metrics, budget)) {
  impl_->Open();
}

TcpListener::~TcpListener() { Close(); }

void TcpListener::Start() {
  asio::post(impl_->strand, [self = impl_] { self->DoAccept(); });
}

void TcpListener::StopReading(std::function<void()> on_drained) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->draining = true;
    if (on_drained && !impl_->on_drained) impl_->on_drained = std::move(on_drained);
  }
  impl_->stop_requested.store(true);
  asio::post(impl_->strand, [self = impl_] {
    self->StopAccepting();
    for (const auto& connection : self->Snapshot()) connection->StopReading();
    std::unique_lock lock(self->mu);
    self->FireDrainedIfDone(lock);
  });
}

void TcpListener::Close() {
  if (impl_->close_requested.exchange(true)) return;
  impl_->stop_requested.store(true);
  asio::post(impl_->strand, [self = impl_] {
    self->StopAccepting();
    for (const auto& connection : self->Snapshot()) connection->Close();
  });
}

std::uint16_t TcpListener::local_port() const { return impl_->port; }

std::size_t TcpListener::open_connections() const {
  return static_cast<std::size_t>(std::max<std::int64_t>(impl_->open->load(), 0));
}

const std::string& TcpListener::name() const { return impl_->name; }

}  // namespace logfold
