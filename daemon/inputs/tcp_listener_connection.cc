// TcpListener's connection: the TLS handshake when the input is TLS, then the one read,
// deliver and backpressure state machine both transports share (limits, shares, idle
// timeout, memory budget, drain at shutdown).
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <utility>

#include "daemon/inputs/tcp_listener_impl.h"
#include "daemon/runtime/wall_clock.h"

namespace logfold {

namespace {

namespace asio = boost::asio;
using tcp_listener_internal::tcp;
using SteadyClock = std::chrono::steady_clock;

// A safety net under OnWritable: a paused connection also retries this often on its own, so
// a lost wakeup in the target costs latency rather than a stuck connection.
constexpr auto kRetryInterval = std::chrono::seconds(1);
constexpr auto kMemoryRetry = std::chrono::milliseconds(100);
// At shutdown a TLS connection reads what had arrived; a TLS record cut mid-way by the
// sender would keep that read waiting, so its drain is bounded.
constexpr auto kTlsDrainLimit = std::chrono::seconds(2);

}  // namespace

TcpListener::Connection::Connection(std::shared_ptr<Impl> impl, Socket socket,
                                    const tcp::endpoint& remote,
                                    std::shared_ptr<const TlsServerContext> tls_context)
    : impl_(std::move(impl)),
      socket_(std::move(socket)),
      tls_context_(std::move(tls_context)),
      idle_timer_(socket_.get_executor()),
      retry_timer_(socket_.get_executor()),
      handshake_timer_(socket_.get_executor()),
      decoder_({.framing = impl_->options.framing,
                .nul_terminator = impl_->options.nul_terminator,
                .octet_content_start = impl_->options.octet_content_start,
                .max_message_size = impl_->options.max_message_size}),
      share_(impl_->target.NewShare()),
      source_(remote.address()),
      peer_(remote.address().to_string() + ":" + std::to_string(remote.port())),
      last_activity_(SteadyClock::now()) {
  // ssl::stream wants a mutable context; it only reads it to create the session.
  if (tls_context_ != nullptr) {
    tls_.emplace(socket_, const_cast<asio::ssl::context&>(tls_context_->ssl));
  }
}

void TcpListener::Connection::Start() {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    spdlog::debug("input {}: connection from {}", self->impl_->name, self->peer_);
    if (self->tls_ && !self->impl_->stop_requested.load()) {
      self->StartHandshake();
    } else if (self->tls_) {
      self->CloseNow();  // nothing was accepted from it yet
    } else {
      self->StartReading();
    }
  });
}

void TcpListener::Connection::StartHandshake() {
  if (impl_->handshake_timeout_us > 0) {
    handshake_timer_.expires_after(std::chrono::microseconds(impl_->handshake_timeout_us));
    handshake_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->handshake_done_ || self->closed_) return;
      self->handshake_failed_ = true;
      self->impl_->HandshakeFailed(self->peer_, "timeout", "no complete handshake in time");
      self->CloseNow();
    });
  }
  tls_->async_handshake(
      asio::ssl::stream_base::server,
      [self = shared_from_this()](const boost::system::error_code& ec) { self->OnHandshake(ec); });
}

void TcpListener::Connection::OnHandshake(const boost::system::error_code& ec) {
  if (closed_) return;
  if (ec) {
    if (!handshake_failed_) {
      handshake_failed_ = true;
      const TlsFailure f = ClassifyTlsFailure(ec, tls_->native_handle());
      impl_->HandshakeFailed(peer_, f.reason, f.detail);
    }
    CloseNow();
    return;
  }
  std::string why;
  if (!PeerPermitted(*tls_context_, tls_->native_handle(), why)) {
    handshake_failed_ = true;
    impl_->HandshakeFailed(peer_, "peer_not_permitted", why);
    CloseNow();
    return;
  }
  handshake_done_ = true;
  handshake_timer_.cancel();
  impl_->handshakes->fetch_add(1, std::memory_order_relaxed);
  StartReading();
}

void TcpListener::Connection::StartReading() {
  buf_.resize(std::max<std::size_t>(impl_->options.read_size, 4096));
  last_activity_ = SteadyClock::now();
  if (impl_->options.idle_timeout_us > 0) {
    ArmIdle(std::chrono::microseconds(impl_->options.idle_timeout_us));
  }
  // A Stop that raced with this accept has already snapshotted the registry without us.
  if (impl_->close_requested.load()) {
    CloseNow();
  } else if (impl_->stop_requested.load()) {
    StopReadingNow(/*drain=*/true);
  } else {
    DoRead();
  }
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
  if (read_stopped_ && !DrainLeft()) {
    FinishInput();
    return;
  }
  if (!read_stopped_ && WaitForMemory()) return;
  reading_ = true;
  std::size_t want = buf_.size();
  if (read_stopped_ && !tls_) want = std::min(want, drain_left_);
  auto on_read = [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
    self->OnRead(ec, n);
  };
  if (tls_) {
    tls_->async_read_some(asio::buffer(buf_.data(), want), std::move(on_read));
  } else {
    socket_.async_read_some(asio::buffer(buf_.data(), want), std::move(on_read));
  }
}

void TcpListener::Connection::OnRead(const boost::system::error_code& ec, std::size_t n) {
  reading_ = false;
  if (closed_) return;
  if (n > 0) {
    if (read_stopped_ && !tls_) drain_left_ -= std::min(n, drain_left_);
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
    if (ec != asio::error::eof && ec != asio::error::operation_aborted &&
        ec != asio::ssl::error::stream_truncated) {
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

std::size_t TcpListener::Connection::TlsBuffered() {
  int queued = 0;
  if (::ioctl(socket_.native_handle(), FIONREAD, &queued) != 0) queued = 0;
  return static_cast<std::size_t>(std::max(queued, 0)) +
         static_cast<std::size_t>(std::max(SSL_pending(tls_->native_handle()), 0));
}

bool TcpListener::Connection::DrainLeft() {
  return tls_ ? tls_draining_ && TlsBuffered() > 0 : drain_left_ > 0;
}

void TcpListener::Connection::StopReadingNow(bool drain) {
  if (closed_ || read_stopped_) return;
  if (tls_ && !handshake_done_) {
    CloseNow();  // nothing was received from it yet
    return;
  }
  read_stopped_ = true;
  if (drain && !input_done_) {
    if (tls_) {
      tls_draining_ = TlsBuffered() > 0;
      if (tls_draining_) {
        // The idle timer, no longer needed for idleness, bounds the drain.
        idle_timer_.expires_after(kTlsDrainLimit);
        idle_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
          if (ec || self->closed_ || !self->reading_) return;
          boost::system::error_code ignored;
          self->socket_.cancel(ignored);
        });
      }
    } else {
      int queued = 0;
      if (::ioctl(socket_.native_handle(), FIONREAD, &queued) == 0 && queued > 0) {
        drain_left_ = static_cast<std::size_t>(queued);
      }
    }
    if (DrainLeft()) {
      // An outstanding read completes with these bytes; when paused, Unpause reads on.
      if (!reading_ && !paused_) DoRead();
      return;
    }
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
  handshake_timer_.cancel();
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

}  // namespace logfold
