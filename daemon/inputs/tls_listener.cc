// TlsListener: the acceptor with its sender allow-list, the TLS handshake with its timeout and
// permitted-peer check, and the per-connection read, deliver and backpressure state machine.
#include "daemon/inputs/tls_listener.h"

#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cerrno>
#include <chrono>
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
using Stream = asio::ssl::stream<Socket>;
using SteadyClock = std::chrono::steady_clock;
using Timer = asio::basic_waitable_timer<SteadyClock, asio::wait_traits<SteadyClock>, Strand>;

constexpr std::size_t kReadSize = 64 * 1024;
constexpr auto kRetryInterval = std::chrono::seconds(1);
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);
// At shutdown a connection reads what had arrived; a TLS record cut mid-way by the sender
// would keep that read waiting, so the drain is bounded.
constexpr auto kDrainLimit = std::chrono::seconds(2);

}  // namespace

struct TlsListener::Impl : std::enable_shared_from_this<Impl> {
  Impl(std::uint32_t input_id, std::string input_name, const Options& opts,
       std::shared_ptr<const TlsServerContext> ctx, asio::io_context& io_context,
       IngestTarget& ingest, Metrics& m);

  std::string Labels() const {
    return "input=\"" + Metrics::EscapeLabelValue(name) + "\",proto=\"tls\"";
  }
  Metrics::Counter& Counter(std::string_view metric, std::string_view help,
                            std::string_view extra = "") const {
    return metrics.GetCounter(metric, help, Labels() + std::string(extra));
  }
  void HandshakeFailed(const std::string& peer, const std::string& reason,
                       const std::string& detail);
  std::shared_ptr<const TlsServerContext> CurrentContext() {
    std::lock_guard lock(context_mu);
    return context;
  }

  void Open();
  void DoAccept();
  void OnAccept(const boost::system::error_code& ec, Socket socket);
  void StopAccepting();
  std::vector<std::shared_ptr<Connection>> Snapshot();
  void Unregister(const Connection* connection);
  void FireDrainedIfDone(std::unique_lock<std::mutex>& lock);

  asio::io_context& io;
  const std::uint32_t input;
  const std::string name;
  const Options options;
  const SenderAllowList allowed_senders;  // built from options.allowed_senders
  IngestTarget& target;
  Metrics& metrics;
  Strand strand;
  tcp::acceptor acceptor;
  asio::steady_timer accept_retry;
  std::uint16_t port = 0;
  bool accepting_stopped = false;   // on strand
  std::uint64_t accept_errors = 0;  // on strand

  std::mutex context_mu;
  std::shared_ptr<const TlsServerContext> context;

  std::mutex mu;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections;
  bool draining = false;
  std::function<void()> on_drained;

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
  Metrics::Counter& senders_refused;
  Metrics::Counter& handshakes;
  Metrics::Counter& idle_timeouts;
  Metrics::Counter& dropped_shutdown;
};

class TlsListener::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<Impl> impl, Socket socket,
             std::shared_ptr<const TlsServerContext> context, std::string peer);

  void Start();
  void StopReading();
  void Close();

 private:
  void OnHandshake(const boost::system::error_code& ec);
  bool PeerPermitted(std::string& why);
  void DoRead();
  void OnRead(const boost::system::error_code& ec, std::size_t n);
  void FinishInput();
  bool Deliver(std::span<const std::string_view> messages, TimeUs arrival);
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
  std::size_t Buffered();
  void StopReadingNow(bool drain);
  void CloseNow();

  std::shared_ptr<Impl> impl_;
  // Kept for the connection's life: the session was negotiated with it, and a reload must
  // not pull it from under an open connection.
  std::shared_ptr<const TlsServerContext> context_;
  Stream stream_;
  Timer idle_timer_;
  Timer retry_timer_;
  Timer handshake_timer_;
  FrameDecoder decoder_;
  FrameDecoder::Counters accounted_;
  std::vector<char> buf_;
  std::string peer_;

  std::vector<std::string> pending_;
  std::vector<std::string_view> pending_views_;
  std::size_t pending_count_ = 0;
  TimeUs pending_arrival_ = 0;

  bool handshake_done_ = false;
  bool handshake_failed_ = false;  // counted once, whichever of timer and handshake is first
  bool reading_ = false;
  bool paused_ = false;
  bool read_stopped_ = false;
  bool draining_ = false;  // shutdown: read what had arrived, then finish
  bool input_done_ = false;
  bool closed_ = false;
  bool framing_error_logged_ = false;
  std::uint64_t resume_generation_ = 0;
  SteadyClock::time_point last_activity_;
};

// ---------------------------------------------------------------------------- Impl

TlsListener::Impl::Impl(std::uint32_t input_id, std::string input_name, const Options& opts,
                        std::shared_ptr<const TlsServerContext> ctx, asio::io_context& io_context,
                        IngestTarget& ingest, Metrics& m)
    : io(io_context),
      input(input_id),
      name(std::move(input_name)),
      options(opts),
      allowed_senders(options.allowed_senders),
      target(ingest),
      metrics(m),
      strand(asio::make_strand(io_context)),
      acceptor(strand),
      accept_retry(strand),
      context(std::move(ctx)),
      open(std::make_shared<std::atomic<std::int64_t>>(0)),
      received(Counter("logfold_received_total", "Lines received.")),
      bytes(Counter("logfold_received_bytes_total", "Bytes received (datagram payloads, frames).")),
      truncated(Counter("logfold_truncated_total", "Messages cut to max_message_size.")),
      framing_errors(Counter("logfold_framing_errors_total",
                             "TCP frames with an invalid octet count (resynchronised).")),
      partial_at_close(Counter("logfold_partial_at_close_total",
                               "Octet-counted frames cut short by the connection closing.")),
      accepted(Counter("logfold_connections_accepted_total", "TCP connections accepted.")),
      closed(Counter("logfold_connections_closed_total", "TCP connections closed.")),
      rejected(Counter("logfold_connections_rejected_total",
                       "TCP connections refused because max_connections were open.")),
      senders_refused(Counter("logfold_senders_refused_total",
                              "Connections or datagrams refused by allowed_senders.")),
      handshakes(
          Counter("logfold_tls_handshakes_total", "TLS handshakes completed and permitted.")),
      idle_timeouts(Counter("logfold_idle_timeouts_total", "TCP connections closed for idleness.")),
      dropped_shutdown(
          Counter("logfold_dropped_total", "Lines dropped on intake.", ",reason=\"shutdown\"")) {
  metrics.AddGauge("logfold_connections_open", "TCP connections open.", Labels(),
                   [gauge = open] { return static_cast<double>(gauge->load()); });
}

void TlsListener::Impl::HandshakeFailed(const std::string& peer, const std::string& reason,
                                        const std::string& detail) {
  metrics
      .GetCounter("logfold_tls_handshake_failures_total",
                  "TLS connections refused during the handshake or the permitted-peer check.",
                  "input=\"" + Metrics::EscapeLabelValue(name) + "\",reason=\"" + reason + "\"")
      .fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("input {}: TLS handshake with {} failed ({}): {}", name, peer, reason, detail);
}

void TlsListener::Impl::Open() {
  if (options.adopted_fd >= 0) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (getsockname(options.adopted_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw boost::system::system_error(errno, boost::system::system_category(),
                                        "getsockname on adopted tls socket");
    }
    acceptor.assign(addr.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), options.adopted_fd);
  } else {
    const tcp::endpoint endpoint(asio::ip::make_address(options.address), options.port);
    acceptor.open(endpoint.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(endpoint);
  }
  acceptor.listen(asio::socket_base::max_listen_connections);
  port = acceptor.local_endpoint().port();
  spdlog::info("input {}: tls listening on port {} (max {} connections{})", name, port,
               options.max_connections, allowed_senders.empty() ? "" : ", allowed senders only");
}

void TlsListener::Impl::DoAccept() {
  if (accepting_stopped) return;
  acceptor.async_accept(
      asio::make_strand(io),
      [self = shared_from_this()](const boost::system::error_code& ec, Socket socket) {
        self->OnAccept(ec, std::move(socket));
      });
}

void TlsListener::Impl::OnAccept(const boost::system::error_code& ec, Socket socket) {
  if (accepting_stopped || ec == asio::error::operation_aborted) return;
  if (ec) {
    if (accept_errors++ % 100 == 0) spdlog::warn("input {}: accept: {}", name, ec.message());
    accept_retry.expires_after(kAcceptRetry);
    accept_retry.async_wait([self = shared_from_this()](const boost::system::error_code& tec) {
      if (!tec) self->DoAccept();
    });
    return;
  }
  boost::system::error_code rec;
  const tcp::endpoint remote = socket.remote_endpoint(rec);
  boost::system::error_code ignored;
  if (rec || !allowed_senders.Allows(remote.data())) {
    // Counted, not logged: a scanner must not be able to flood the log.
    senders_refused.fetch_add(1, std::memory_order_relaxed);
    socket.close(ignored);
    DoAccept();
    return;
  }
  if (options.max_connections > 0 &&
      open->load() >= static_cast<std::int64_t>(options.max_connections)) {
    const std::uint64_t n = rejected.fetch_add(1) + 1;
    if ((n & (n - 1)) == 0) {
      spdlog::warn("input {}: max_connections ({}) reached, refused {} connection(s) so far", name,
                   options.max_connections, n);
    }
    socket.close(ignored);
    DoAccept();
    return;
  }
  accepted.fetch_add(1, std::memory_order_relaxed);
  open->fetch_add(1);
  auto connection = std::make_shared<Connection>(
      shared_from_this(), std::move(socket), CurrentContext(),
      remote.address().to_string() + ":" + std::to_string(remote.port()));
  {
    std::lock_guard lock(mu);
    connections.emplace(connection.get(), connection);
  }
  connection->Start();
  DoAccept();
}

void TlsListener::Impl::StopAccepting() {
  accepting_stopped = true;
  boost::system::error_code ignored;
  accept_retry.cancel();
  acceptor.close(ignored);
}

std::vector<std::shared_ptr<TlsListener::Connection>> TlsListener::Impl::Snapshot() {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard lock(mu);
  out.reserve(connections.size());
  for (auto& [key, weak] : connections) {
    if (auto connection = weak.lock()) out.push_back(std::move(connection));
  }
  return out;
}

void TlsListener::Impl::Unregister(const Connection* connection) {
  std::unique_lock lock(mu);
  connections.erase(connection);
  FireDrainedIfDone(lock);
}

void TlsListener::Impl::FireDrainedIfDone(std::unique_lock<std::mutex>& lock) {
  if (!draining || !connections.empty() || !on_drained) return;
  std::function<void()> callback = std::move(on_drained);
  on_drained = nullptr;
  lock.unlock();
  callback();
}

// ---------------------------------------------------------------------------- Connection

TlsListener::Connection::Connection(std::shared_ptr<Impl> impl, Socket socket,
                                    std::shared_ptr<const TlsServerContext> context,
                                    std::string peer)
    : impl_(std::move(impl)),
      context_(std::move(context)),
      // ssl::stream wants a mutable context; it only reads it to create the session.
      stream_(std::move(socket), const_cast<asio::ssl::context&>(context_->ssl)),
      idle_timer_(stream_.get_executor()),
      retry_timer_(stream_.get_executor()),
      handshake_timer_(stream_.get_executor()),
      decoder_({.framing = impl_->options.framing,
                .nul_terminator = false,
                .max_message_size = impl_->options.max_message_size}),
      peer_(std::move(peer)),
      last_activity_(SteadyClock::now()) {}

void TlsListener::Connection::Start() {
  asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    if (self->impl_->stop_requested.load()) {
      self->CloseNow();  // nothing was accepted from it yet
      return;
    }
    if (self->impl_->options.handshake_timeout_us > 0) {
      self->handshake_timer_.expires_after(
          std::chrono::microseconds(self->impl_->options.handshake_timeout_us));
      self->handshake_timer_.async_wait([self](const boost::system::error_code& ec) {
        if (ec || self->handshake_done_ || self->closed_) return;
        self->handshake_failed_ = true;
        self->impl_->HandshakeFailed(self->peer_, "timeout", "no complete handshake in time");
        self->CloseNow();
      });
    }
    self->stream_.async_handshake(
        asio::ssl::stream_base::server,
        [self](const boost::system::error_code& ec) { self->OnHandshake(ec); });
  });
}

void TlsListener::Connection::OnHandshake(const boost::system::error_code& ec) {
  if (closed_) return;
  if (ec) {
    if (!handshake_failed_) {
      handshake_failed_ = true;
      const TlsFailure f = ClassifyTlsFailure(ec, stream_.native_handle());
      impl_->HandshakeFailed(peer_, f.reason, f.detail);
    }
    CloseNow();
    return;
  }
  std::string why;
  if (!PeerPermitted(why)) {
    handshake_failed_ = true;
    impl_->HandshakeFailed(peer_, "peer_not_permitted", why);
    CloseNow();
    return;
  }
  handshake_done_ = true;
  handshake_timer_.cancel();
  impl_->handshakes.fetch_add(1, std::memory_order_relaxed);
  buf_.resize(kReadSize);
  last_activity_ = SteadyClock::now();
  if (impl_->options.idle_timeout_us > 0) {
    ArmIdle(std::chrono::microseconds(impl_->options.idle_timeout_us));
  }
  if (impl_->close_requested.load()) {
    CloseNow();
  } else if (impl_->stop_requested.load()) {
    StopReadingNow(/*drain=*/true);
  } else {
    DoRead();
  }
}

bool TlsListener::Connection::PeerPermitted(std::string& why) {
  return logfold::PeerPermitted(*context_, stream_.native_handle(), why);
}

void TlsListener::Connection::StopReading() {
  asio::post(stream_.get_executor(),
             [self = shared_from_this()] { self->StopReadingNow(/*drain=*/true); });
}

void TlsListener::Connection::Close() {
  asio::post(stream_.get_executor(), [self = shared_from_this()] { self->CloseNow(); });
}

std::size_t TlsListener::Connection::Buffered() {
  int queued = 0;
  if (::ioctl(stream_.lowest_layer().native_handle(), FIONREAD, &queued) != 0) queued = 0;
  return static_cast<std::size_t>(std::max(queued, 0)) +
         static_cast<std::size_t>(std::max(SSL_pending(stream_.native_handle()), 0));
}

void TlsListener::Connection::DoRead() {
  if (closed_) return;
  if (read_stopped_ && (!draining_ || Buffered() == 0)) {
    FinishInput();
    return;
  }
  reading_ = true;
  stream_.async_read_some(asio::buffer(buf_.data(), buf_.size()),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t n) { self->OnRead(ec, n); });
}

void TlsListener::Connection::OnRead(const boost::system::error_code& ec, std::size_t n) {
  reading_ = false;
  if (closed_) return;
  if (n > 0) {
    last_activity_ = SteadyClock::now();
    impl_->bytes.fetch_add(n, std::memory_order_relaxed);
    const std::span<const std::string_view> messages = decoder_.Feed({buf_.data(), n});
    Account();
    if (!Deliver(messages, WallClockNowUs())) return;
  }
  if (ec) {
    if (ec != asio::error::eof && ec != asio::error::operation_aborted &&
        ec != asio::ssl::error::stream_truncated) {
      spdlog::debug("input {}: read from {}: {}", impl_->name, peer_, ec.message());
    }
    FinishInput();
    return;
  }
  DoRead();
}

void TlsListener::Connection::FinishInput() {
  input_done_ = true;
  read_stopped_ = true;
  const std::span<const std::string_view> messages = decoder_.Finish();
  Account();
  if (!Deliver(messages, WallClockNowUs())) return;
  CloseNow();
}

bool TlsListener::Connection::Deliver(std::span<const std::string_view> messages, TimeUs arrival) {
  if (messages.empty() || impl_->target.TryDeliver(impl_->input, messages, arrival)) return true;
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

void TlsListener::Connection::Pause() {
  paused_ = true;
  RegisterWritable();
  ArmRetry();
}

void TlsListener::Connection::RegisterWritable() {
  const std::uint64_t generation = ++resume_generation_;
  impl_->target.OnWritable([weak = weak_from_this(), generation] {
    if (auto self = weak.lock()) {
      asio::post(self->stream_.get_executor(),
                 [self, generation] { self->OnWritableSignal(generation); });
    }
  });
}

void TlsListener::Connection::ArmRetry() {
  retry_timer_.expires_after(kRetryInterval);
  retry_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->OnRetryTimer();
  });
}

void TlsListener::Connection::OnWritableSignal(std::uint64_t generation) {
  if (closed_ || !paused_ || generation != resume_generation_) return;
  if (DeliverPending()) {
    Unpause();
  } else {
    RegisterWritable();
  }
}

void TlsListener::Connection::OnRetryTimer() {
  if (closed_ || !paused_) return;
  if (DeliverPending()) {
    Unpause();
  } else {
    ArmRetry();
  }
}

bool TlsListener::Connection::DeliverPending() {
  if (!impl_->target.TryDeliver(impl_->input, {pending_views_.data(), pending_count_},
                                pending_arrival_)) {
    return false;
  }
  pending_count_ = 0;
  pending_views_.clear();
  return true;
}

void TlsListener::Connection::Unpause() {
  paused_ = false;
  retry_timer_.cancel();
  last_activity_ = SteadyClock::now();
  if (input_done_) {
    CloseNow();
  } else {
    DoRead();
  }
}

void TlsListener::Connection::Account() {
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
      spdlog::warn("input {}: invalid octet count from {}; resynchronising at newlines",
                   impl_->name, peer_);
    }
  }
  accounted_ = now;
}

void TlsListener::Connection::ArmIdle(SteadyClock::duration after) {
  idle_timer_.expires_after(after);
  idle_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->OnIdleTimer();
  });
}

void TlsListener::Connection::OnIdleTimer() {
  if (closed_ || read_stopped_) return;
  const auto timeout = std::chrono::microseconds(impl_->options.idle_timeout_us);
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

void TlsListener::Connection::StopReadingNow(bool drain) {
  if (closed_ || read_stopped_) return;
  if (!handshake_done_) {
    CloseNow();  // nothing was received from it yet
    return;
  }
  read_stopped_ = true;
  draining_ = drain && !input_done_ && Buffered() > 0;
  if (draining_) {
    // An outstanding read completes with the buffered bytes; when paused, Unpause reads on.
    // The idle timer, no longer needed for idleness, bounds the drain.
    idle_timer_.expires_after(kDrainLimit);
    idle_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->closed_ || !self->reading_) return;
      boost::system::error_code ignored;
      self->stream_.lowest_layer().cancel(ignored);
    });
    if (!reading_ && !paused_) DoRead();
    return;
  }
  if (reading_) {
    boost::system::error_code ignored;
    stream_.lowest_layer().cancel(ignored);
  } else if (!paused_) {
    FinishInput();
  }
}

void TlsListener::Connection::CloseNow() {
  if (closed_) return;
  closed_ = true;
  if (pending_count_ > 0) {
    impl_->dropped_shutdown.fetch_add(pending_count_, std::memory_order_relaxed);
    spdlog::warn("input {}: dropped {} undelivered line(s) from {} at shutdown", impl_->name,
                 pending_count_, peer_);
    pending_count_ = 0;
  }
  boost::system::error_code ignored;
  stream_.lowest_layer().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.lowest_layer().close(ignored);
  idle_timer_.cancel();
  retry_timer_.cancel();
  handshake_timer_.cancel();
  impl_->closed.fetch_add(1, std::memory_order_relaxed);
  impl_->open->fetch_sub(1);
  impl_->Unregister(this);
}

// ---------------------------------------------------------------------------- TlsListener

TlsListener::TlsListener(std::uint32_t input, std::string name, const Options& options,
                         std::shared_ptr<const TlsServerContext> context, asio::io_context& io,
                         IngestTarget& target, Metrics& metrics)
    : impl_(std::make_shared<Impl>(input, std::move(name), options, std::move(context), io, target,
                                   metrics)) {
  impl_->Open();
}

TlsListener::~TlsListener() { Close(); }

void TlsListener::Start() {
  asio::post(impl_->strand, [self = impl_] { self->DoAccept(); });
}

void TlsListener::SetContext(std::shared_ptr<const TlsServerContext> context) {
  std::lock_guard lock(impl_->context_mu);
  impl_->context = std::move(context);
}

void TlsListener::StopReading(std::function<void()> on_drained) {
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

void TlsListener::Close() {
  if (impl_->close_requested.exchange(true)) return;
  impl_->stop_requested.store(true);
  asio::post(impl_->strand, [self = impl_] {
    self->StopAccepting();
    for (const auto& connection : self->Snapshot()) connection->Close();
  });
}

std::uint16_t TlsListener::local_port() const { return impl_->port; }

std::size_t TlsListener::open_connections() const {
  return static_cast<std::size_t>(std::max<std::int64_t>(impl_->open->load(), 0));
}

const std::string& TlsListener::name() const { return impl_->name; }

}  // namespace logfold
