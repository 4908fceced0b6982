// Private to tcp_listener*.cc: the listener's shared state (acceptor, registry, metrics) and
// the connection, whose stream is a plain socket or TLS over it (one type for both inputs).
#ifndef LOGFOLD_DAEMON_INPUTS_TCP_LISTENER_IMPL_H_
#define LOGFOLD_DAEMON_INPUTS_TCP_LISTENER_IMPL_H_

#include <atomic>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "daemon/inputs/tcp_listener.h"

namespace logfold {

namespace tcp_listener_internal {
namespace asio = boost::asio;
using asio::ip::tcp;
using Strand = asio::strand<asio::io_context::executor_type>;
using Socket = asio::basic_stream_socket<tcp, Strand>;
// TLS over the connection's own socket, which stays the lowest layer for both transports.
using TlsStream = asio::ssl::stream<Socket&>;
using SteadyClock = std::chrono::steady_clock;
using Timer = asio::basic_waitable_timer<SteadyClock, asio::wait_traits<SteadyClock>, Strand>;
}  // namespace tcp_listener_internal

struct TcpListener::Impl : std::enable_shared_from_this<Impl> {
  using Socket = tcp_listener_internal::Socket;
  using Strand = tcp_listener_internal::Strand;
  using tcp = tcp_listener_internal::tcp;

  Impl(std::uint32_t input_id, std::string input_name, const Options& opts,
       boost::asio::io_context& ctx, IngestTarget& ingest, Metrics& metrics, MemoryBudget* memory,
       std::optional<Tls> tls_transport);

  std::string Labels() const {
    return "input=\"" + Metrics::EscapeLabelValue(name) + "\",proto=\"" + proto + "\"";
  }
  Metrics::Counter& Counter(std::string_view metric, std::string_view help,
                            std::string_view extra = "") const {
    return metrics.GetCounter(metric, help, Labels() + std::string(extra));
  }

  void Open();
  void DoAccept();
  void OnAccept(const boost::system::error_code& ec, Socket socket);
  void StopAccepting();
  std::vector<std::shared_ptr<Connection>> Snapshot();
  void Unregister(const Connection* connection, const boost::asio::ip::address& source);
  bool AdmitSource(const boost::asio::ip::address& source);
  void OnAcceptError(const boost::system::error_code& ec);
  bool LeavesDescriptorHeadroom(Socket& socket);
  void FireDrainedIfDone(std::unique_lock<std::mutex>& lock);
  // TLS: counts and logs a refused handshake (timeout, bad certificate, peer not permitted).
  void HandshakeFailed(const std::string& peer, const std::string& reason,
                       const std::string& detail);
  std::shared_ptr<const TlsServerContext> CurrentContext() {
    std::lock_guard lock(context_mu);
    return context;
  }

  boost::asio::io_context& io;
  Metrics& metrics;
  const std::uint32_t input;
  const std::string name;
  const Options options;
  const bool tls;                         // connections run TLS over their socket
  const TimeUs handshake_timeout_us;      // TLS; 0: no limit
  const std::string proto;                // the metrics' proto label: "tcp" or "tls"
  const SenderAllowList allowed_senders;  // built from options.allowed_senders
  IngestTarget& target;
  MemoryBudget* budget;
  Strand strand;
  tcp::acceptor acceptor;
  boost::asio::steady_timer accept_retry;
  std::uint16_t port = 0;
  const int descriptor_ceiling;
  bool accepting_stopped = false;   // on strand
  std::uint64_t accept_errors = 0;  // on strand

  // TLS: the context new connections get (a SIGHUP replaces it; open ones keep theirs).
  std::mutex context_mu;
  std::shared_ptr<const TlsServerContext> context;

  // Connections register from the acceptor strand and unregister from their own strands.
  std::mutex mu;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections;
  std::map<boost::asio::ip::address, std::uint32_t> per_source;  // open connections by peer
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
  Metrics::Counter* const handshakes;  // TLS only (null for plain TCP)
};

class TcpListener::Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Socket = tcp_listener_internal::Socket;
  using SteadyClock = tcp_listener_internal::SteadyClock;

  // `tls_context`: run TLS over the socket with it (null: plain TCP).
  Connection(std::shared_ptr<Impl> impl, Socket socket,
             const tcp_listener_internal::tcp::endpoint& remote,
             std::shared_ptr<const TlsServerContext> tls_context);

  // Each posts onto the connection's strand.
  void Start();
  void StopReading();
  void Close();

 private:
  // TLS: the handshake, bounded by handshake_timeout_us, then the permitted-peer check.
  void StartHandshake();
  void OnHandshake(const boost::system::error_code& ec);
  // After the handshake (at once for plain TCP): the idle timer, then the first read.
  void StartReading();
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
  // `drain`: first read the bytes already received (a shutdown; an idle timeout has none
  // to read).
  void StopReadingNow(bool drain);
  // Whether a stopped connection still has received bytes to read.
  bool DrainLeft();
  // TLS: ciphertext in the kernel plus plaintext OpenSSL decrypted and holds.
  std::size_t TlsBuffered();
  void CloseNow();
  // Memory budget: whether to wait before reading (and arms the wait), and the accounting of
  // the bytes this connection holds between reads.
  bool WaitForMemory();
  void AccountFrames();

  std::shared_ptr<Impl> impl_;
  Socket socket_;
  // Kept for the connection's life: its session was negotiated with it, and a reload must
  // not pull it from under an open connection.
  const std::shared_ptr<const TlsServerContext> tls_context_;
  std::optional<tcp_listener_internal::TlsStream> tls_;  // over socket_; empty: plain TCP
  tcp_listener_internal::Timer idle_timer_;
  tcp_listener_internal::Timer retry_timer_;
  tcp_listener_internal::Timer handshake_timer_;
  FrameDecoder decoder_;
  FrameDecoder::Counters accounted_;  // decoder counters already added to the metrics
  std::vector<char> buf_;             // allocated once reading starts (after a handshake)
  // This connection's share of the worker queues (null: the target keeps none): a flooding
  // connection waits on it while the others are served.
  const std::shared_ptr<QueueShare> share_;
  bool waiting_on_share_ = false;  // paused for the share, not for the target
  boost::asio::ip::address source_;
  std::string peer_;

  // Messages TryDeliver refused, copied out of buf_ so reading can stop holding them.
  std::vector<std::string> pending_;
  std::vector<std::string_view> pending_views_;
  std::size_t pending_count_ = 0;
  TimeUs pending_arrival_ = 0;

  bool handshake_done_ = false;    // TLS: handshake and peer check passed (plain: unused)
  bool handshake_failed_ = false;  // counted once, whichever of timer and handshake is first
  bool reading_ = false;           // an async_read_some is outstanding
  bool paused_ = false;            // pending_ waits for the target
  bool read_stopped_ = false;      // StopReading or idle timeout: read no further
  // After a shutdown's StopReading, plain TCP: bytes the kernel had received on this
  // connection by then, still to be read. TCP acknowledged them to the sender, who will not
  // send them again, so they count as accepted and are read before the input finishes.
  std::size_t drain_left_ = 0;
  // The same for TLS, where ciphertext and plaintext sizes differ: read on while bytes are
  // buffered, bounded in time (a record cut short by the sender would never complete).
  bool tls_draining_ = false;
  bool input_done_ = false;  // decoder finished; close once pending_ is delivered
  bool closed_ = false;
  bool framing_error_logged_ = false;
  std::uint64_t resume_generation_ = 0;  // tells a stale OnWritable callback from the current
  std::int64_t frames_accounted_ = 0;    // added to MemoryBudget::Part::kFrames
  SteadyClock::time_point last_activity_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_TCP_LISTENER_IMPL_H_
