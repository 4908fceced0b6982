// TcpListener: the acceptor (sender allow-list, connection limits overall and per source,
// descriptor headroom and accept back-off) and the connection registry, for plain TCP and
// for TLS, whose connections differ only in their stream (tcp_listener_connection.cc).
#include "daemon/inputs/tcp_listener.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <climits>
#include <utility>

#include "daemon/inputs/tcp_listener_impl.h"

namespace logfold {

namespace {

namespace asio = boost::asio;
using tcp_listener_internal::tcp;

constexpr auto kAcceptRetry = std::chrono::milliseconds(100);
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

// ---------------------------------------------------------------------------- Impl

TcpListener::Impl::Impl(std::uint32_t input_id, std::string input_name, const Options& opts,
                        asio::io_context& ctx, IngestTarget& ingest, Metrics& m,
                        MemoryBudget* memory, std::optional<Tls> tls_transport)
    : io(ctx),
      metrics(m),
      input(input_id),
      name(std::move(input_name)),
      options(opts),
      tls(tls_transport.has_value()),
      handshake_timeout_us(tls ? tls_transport->handshake_timeout_us : 0),
      proto(tls ? "tls" : "tcp"),
      allowed_senders(options.allowed_senders),
      target(ingest),
      budget(memory),
      strand(asio::make_strand(ctx)),
      acceptor(strand),
      accept_retry(strand),
      descriptor_ceiling(DescriptorCeiling()),
      context(tls ? std::move(tls_transport->context) : nullptr),
      open(std::make_shared<std::atomic<std::int64_t>>(0)),
      received(Counter("logfold_received_total", "Lines received.")),
      bytes(Counter("logfold_received_bytes_total", "Bytes received (datagram payloads, frames).")),
      truncated(Counter("logfold_truncated_total", "Messages cut to max_message_size.")),
      framing_errors(Counter("logfold_framing_errors_total",
                             "TCP frames that looked octet-counted but were not (invalid length, "
                             "or content not starting as the input format does); read as lines.")),
      partial_at_close(Counter("logfold_partial_at_close_total",
                               "Octet-counted frames cut short by the connection closing.")),
      accepted(Counter("logfold_connections_accepted_total", "TCP connections accepted.")),
      closed(Counter("logfold_connections_closed_total", "TCP connections closed.")),
      rejected(Counter("logfold_connections_rejected_total",
                       "TCP connections refused because max_connections were open.")),
      rejected_per_source(Counter("logfold_connections_rejected_per_source_total",
                                  "TCP connections refused because their source address held "
                                  "max_connections_per_source.")),
      accept_failed_descriptors(Counter("logfold_accept_errors_total",
                                        "accept() failures (the listener backs off and retries).",
                                        ",reason=\"descriptors\"")),
      accept_failed_other(Counter("logfold_accept_errors_total",
                                  "accept() failures (the listener backs off and retries).",
                                  ",reason=\"other\"")),
      senders_refused(Counter("logfold_senders_refused_total",
                              "Connections or datagrams refused by allowed_senders.")),
      idle_timeouts(Counter("logfold_idle_timeouts_total", "TCP connections closed for idleness.")),
      dropped_shutdown(
          Counter("logfold_dropped_total", "Lines dropped on intake.", ",reason=\"shutdown\"")),
      memory_pauses(Counter("logfold_tcp_memory_pauses_total",
                            "Times a TCP connection stopped reading for the memory budget.")),
      handshakes(
          tls ? &Counter("logfold_tls_handshakes_total", "TLS handshakes completed and permitted.")
              : nullptr) {
  metrics.AddGauge("logfold_connections_open", "TCP connections open.", Labels(),
                   [gauge = open] { return static_cast<double>(gauge->load()); });
}

void TcpListener::Impl::HandshakeFailed(const std::string& peer, const std::string& reason,
                                        const std::string& detail) {
  metrics
      .GetCounter("logfold_tls_handshake_failures_total",
                  "TLS connections refused during the handshake or the permitted-peer check.",
                  "input=\"" + Metrics::EscapeLabelValue(name) + "\",reason=\"" + reason + "\"")
      .fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("input {}: TLS handshake with {} failed ({}): {}", name, peer, reason, detail);
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
  spdlog::info("input {}: {} listening on port {} (framing {}, max {} connections{})", name, proto,
               port, FramingName(options.framing), options.max_connections,
               allowed_senders.empty() ? "" : ", allowed senders only");
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
  auto connection = std::make_shared<Connection>(shared_from_this(), std::move(socket), remote,
                                                 tls ? CurrentContext() : nullptr);
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

// ---------------------------------------------------------------------------- TcpListener

TcpListener::TcpListener(std::uint32_t input, std::string name, const Options& options,
                         asio::io_context& io, IngestTarget& target, Metrics& metrics,
                         MemoryBudget* budget, std::optional<Tls> tls)
    : impl_(std::make_shared<Impl>(input, std::move(name), options, io, target, metrics, budget,
                                   std::move(tls))) {
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

void TcpListener::SetContext(std::shared_ptr<const TlsServerContext> context) {
  std::lock_guard lock(impl_->context_mu);
  if (impl_->tls) impl_->context = std::move(context);
}

std::uint16_t TcpListener::local_port() const { return impl_->port; }

std::size_t TcpListener::open_connections() const {
  return static_cast<std::size_t>(std::max<std::int64_t>(impl_->open->load(), 0));
}

const std::string& TcpListener::name() const { return impl_->name; }

}  // namespace logfold
