// RelpDestination: a RELP client (RFC-less but documented protocol of librelp/rsyslog:
// "TXNR SP COMMAND SP DATALEN [SP DATA] LF" frames, "rsp" answers per transaction number).
// librelp's own client (relpClt) keeps unacknowledged frames private and reports no
// acknowledgement to its caller, so it cannot tell the sink which records are delivered;
// the client side is therefore written here, on the sink's thread, non-blocking.
#include "daemon/outputs/relp_sink.h"

#include <netdb.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "daemon/outputs/buffered_sink.h"
#include "daemon/outputs/sink_io.h"

namespace logfold {
namespace {

constexpr int kWaitSliceMs = 100;
constexpr auto kConnectTimeout = std::chrono::seconds(5);
// While messages await acknowledgement the sink polls this often: acks free buffer space.
constexpr auto kAckPollInterval = std::chrono::milliseconds(10);
constexpr std::uint32_t kMaxTxnr = 999'999'999;  // RELP: TXNR is 1..999999999, then wraps
constexpr std::string_view kOffers = "relp_version=0\nrelp_software=logfold\ncommands=syslog";
constexpr std::size_t kMaxResponse = 64 * 1024;       // an answer longer than this is malformed
constexpr auto kCloseWait = std::chrono::seconds(1);  // for the answer to "close"

class RelpDestination final : public Destination {
 public:
  RelpDestination(const std::string& sink_name, const RelpSinkOptions& options, Metrics& metrics)
      : sink_name_(sink_name),
        options_(options),
        peer_(options.target.address.find(':') != std::string::npos
                  ? "[" + options.target.address + "]:" + std::to_string(options.target.port)
                  : options.target.address + ":" + std::to_string(options.target.port)),
        connects_(Counter(metrics, "logfold_sink_connects_total",
                          "Connections a network sink established")),
        connect_failures_(Counter(metrics, "logfold_sink_connect_failures_total",
                                  "Connection attempts of a network sink that failed")),
        disconnects_(Counter(metrics, "logfold_sink_disconnects_total",
                             "Established connections of a network sink that were lost")),
        acknowledged_(Counter(metrics, "logfold_sink_acknowledged_events_total",
                              "Events a RELP collector acknowledged (delivered)")) {}

  ~RelpDestination() override {
    if (fd_ >= 0) ::close(fd_);
  }

  WriteResult Write(std::span<const iovec> data, const StopSignal& stop) override {
    WriteResult result;
    if (fd_ >= 0 && !Service(result)) return result;
    if (fd_ < 0 && !Connect(stop, result)) {
      result.failed = true;
      return result;
    }
    for (const iovec& piece : data) {
      std::string_view bytes(static_cast<const char*>(piece.iov_base), piece.iov_len);
      while (!bytes.empty() && unacked_.size() < options_.window) {
        const std::size_t nl = bytes.find('\n');
        if (nl == std::string_view::npos) {
          // The record continues in the next block: keep its start until it is whole.
          partial_.append(bytes);
          Take(bytes.size(), result);
          bytes = {};
          break;
        }
        if (partial_.empty()) {
          AddRecord(bytes.substr(0, nl), nl + 1, result);
        } else {
          partial_.append(bytes.substr(0, nl));
          AddRecord(partial_, nl + 1, result);
          partial_.clear();
        }
        bytes.remove_prefix(nl + 1);
      }
      if (!bytes.empty()) break;  // the window is full
    }
    if (!Send(result)) return result;
    if (result.written == 0) {
      // Window full or the socket's send buffer full: wait a slice for acks or room, so the
      // sink does not spin, then take what arrived.
      Wait(kWaitSliceMs);
      Service(result);
    }
    return result;
  }

  std::uint64_t Unconfirmed() override { return written_ - acked_; }

  WriteResult Poll() override {
    WriteResult result;
    if (fd_ >= 0) Service(result);
    return result;
  }

  SinkClock::duration PollInterval() const override {
    if (fd_ >= 0 && (written_ > acked_ || !out_.empty())) return kAckPollInterval;
    return std::chrono::seconds(1);
  }

  void Close() override {
    if (fd_ < 0) return;
    // End the session as RELP does ("close", answered by "rsp"), so the collector does not
    // log a broken session; bounded, as the collector may be gone.
    if (opened_) {
      close_txnr_ = NextTxnr();
      AppendFrame(close_txnr_, "close", "");
      const auto deadline = SinkClock::now() + kCloseWait;
      WriteResult ignored;
      while (fd_ >= 0 && !closed_ && SinkClock::now() < deadline) {
        if (!Service(ignored)) break;
        if (!closed_) Wait(20);
      }
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  struct Sent {
    std::uint32_t txnr;
    std::uint64_t end;  // written_ just past the record (its '\n' included)
    bool acked;
  };

  Metrics::Counter& Counter(Metrics& metrics, std::string_view name, std::string_view help) {
    return metrics.GetCounter(name, help, "sink=\"" + sink_name_ + "\"");
  }

  std::uint32_t NextTxnr() {
    const std::uint32_t t = txnr_;
    txnr_ = txnr_ == kMaxTxnr ? 1 : txnr_ + 1;
    return t;
  }

  void Take(std::size_t n, WriteResult& result) {
    result.written += n;
    written_ += n;
  }

  // Frames one record (its bytes before '\n'); `consumed` more bytes of the data are taken.
  void AddRecord(std::string_view record, std::size_t consumed, WriteResult& result) {
    Take(consumed, result);
    if (record.empty()) {
      // Nothing to send; it is settled as soon as everything before it is.
      unacked_.push_back({0, written_, true});
      Settle();
      return;
    }
    const std::uint32_t txnr = NextTxnr();
    AppendFrame(txnr, "syslog", record);
    if (unacked_.empty()) waiting_since_ = SinkClock::now();
    unacked_.push_back({txnr, written_, false});
  }

  void AppendFrame(std::uint32_t txnr, std::string_view command, std::string_view data) {
    out_ += std::to_string(txnr);
    out_ += ' ';
    out_ += command;
    out_ += ' ';
    out_ += std::to_string(data.size());
    if (!data.empty()) {
      out_ += ' ';
      out_ += data;
    }
    out_ += '\n';
  }

  // Releases acknowledged records from the front, in order.
  void Settle() {
    while (!unacked_.empty() && unacked_.front().acked) {
      acked_ = unacked_.front().end;
      if (unacked_.front().txnr != 0) acknowledged_.fetch_add(1, std::memory_order_relaxed);
      unacked_.pop_front();
    }
  }

  // Sends what is pending and reads what the collector answered; false (and `result` failed)
  // if the session broke.
  bool Service(WriteResult& result) {
    if (!Send(result) || !Receive(result)) return false;
    if (!unacked_.empty() &&
        SinkClock::now() - waiting_since_ > std::chrono::microseconds(options_.ack_timeout_us)) {
      Fail(result, "no acknowledgement from " + peer_ + " within " +
                       std::to_string(options_.ack_timeout_us / 1'000'000) + " s");
      return false;
    }
    return true;
  }

  bool Send(WriteResult& result) {
    while (out_sent_ < out_.size()) {
      const ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        out_sent_ += static_cast<std::size_t>(n);
        continue;
      }
      const int err = n < 0 ? errno : EIO;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) return true;
      Fail(result, ErrnoText("send to " + peer_, err));
      return false;
    }
    out_.clear();
    out_sent_ = 0;
    return true;
  }

  bool Receive(WriteResult& result) {
    char buf[16 * 1024];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        in_.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) {
        Fail(result, "connection closed by " + peer_);
        return false;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      Fail(result, ErrnoText("connection to " + peer_, errno));
      return false;
    }
    return Parse(result);
  }

  // Handles every complete frame in in_.
  bool Parse(WriteResult& result) {
    std::size_t pos = 0;
    for (;;) {
      const std::string_view rest = std::string_view(in_).substr(pos);
      const std::size_t sp1 = rest.find(' ');
      const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : rest.find(' ', sp1 + 1);
      if (sp2 == std::string_view::npos) {
        if (rest.size() > 32) return Malformed(result);
        break;
      }
      std::size_t len_end = sp2 + 1;
      while (len_end < rest.size() && rest[len_end] >= '0' && rest[len_end] <= '9') ++len_end;
      if (len_end == rest.size()) break;  // DATALEN not complete yet
      const std::string_view txnr_text = rest.substr(0, sp1);
      const std::string_view command = rest.substr(sp1 + 1, sp2 - sp1 - 1);
      std::uint64_t length = 0, txnr = 0;
      if (!Number(rest.substr(sp2 + 1, len_end - sp2 - 1), length) || !Number(txnr_text, txnr) ||
          length > kMaxResponse) {
        return Malformed(result);
      }
      std::string_view payload;
      std::size_t frame_end = 0;
      if (length == 0) {
        frame_end = len_end + 1;  // the trailer
      } else {
        if (rest[len_end] != ' ') return Malformed(result);
        frame_end = len_end + 1 + length + 1;
        payload = rest.substr(len_end + 1, std::min<std::size_t>(length, rest.size()));
      }
      if (rest.size() < frame_end) break;
      if (rest[frame_end - 1] != '\n') return Malformed(result);
      if (!Handle(static_cast<std::uint32_t>(txnr), command, payload, result)) return false;
      pos += frame_end;
    }
    in_.erase(0, pos);
    return true;
  }

  static bool Number(std::string_view s, std::uint64_t& out) {
    if (s.empty() || s.size() > 10) return false;
    out = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      out = out * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return true;
  }

  bool Malformed(WriteResult& result) {
    Fail(result, "malformed RELP frame from " + peer_);
    return false;
  }

  bool Handle(std::uint32_t txnr, std::string_view command, std::string_view payload,
              WriteResult& result) {
    if (command == "serverclose") {
      Fail(result, "collector " + peer_ + " closed the RELP session");
      return false;
    }
    if (command != "rsp") return true;  // hints this client does not use
    const bool ok = payload.substr(0, 3) == "200";
    if (txnr == close_txnr_ && close_txnr_ != 0) {
      closed_ = true;
      return true;
    }
    if (txnr == open_txnr_) {
      if (!ok) {
        Fail(result, "collector " + peer_ + " refused the RELP session: " +
                         std::string(payload.substr(0, payload.find('\n'))));
        return false;
      }
      opened_ = true;
      return true;
    }
    for (Sent& s : unacked_) {
      if (s.txnr != txnr || s.acked) continue;
      if (!ok) {
        Fail(result, "collector " + peer_ + " did not take a message: " +
                         std::string(payload.substr(0, payload.find('\n'))));
        return false;
      }
      s.acked = true;
      waiting_since_ = SinkClock::now();
      Settle();
      return true;
    }
    return true;  // an answer to nothing outstanding (a close): ignored
  }

  // Waits up to `ms` for an answer, or for room when bytes are pending.
  void Wait(int ms) {
    if (fd_ < 0) return;
    pollfd p{fd_, static_cast<short>(POLLIN | (out_.empty() ? 0 : POLLOUT)), 0};
    ::poll(&p, 1, ms);
  }

  bool Connect(const StopSignal& stop, WriteResult& result) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* addresses = nullptr;
    const std::string port = std::to_string(options_.target.port);
    const int rc = ::getaddrinfo(options_.target.address.c_str(), port.c_str(), &hints, &addresses);
    if (rc != 0) {
      connect_failures_.fetch_add(1, std::memory_order_relaxed);
      result.error = "resolve " + options_.target.address + ": " + ::gai_strerror(rc);
      return false;
    }
    std::string last_error = "no address";
    for (addrinfo* ai = addresses; ai != nullptr && fd_ < 0; ai = ai->ai_next) {
      const int fd =
          ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd < 0) {
        last_error = ErrnoText("socket", errno);
        continue;
      }
      if (ConnectWithin(fd, *ai, stop, kConnectTimeout, last_error)) {
        fd_ = fd;
      } else {
        ::close(fd);
      }
    }
    ::freeaddrinfo(addresses);
    if (fd_ < 0) {
      connect_failures_.fetch_add(1, std::memory_order_relaxed);
      result.error = "connect to " + peer_ + ": " + last_error;
      return false;
    }
    // The session: "open" with our offers, answered by "rsp 200" and the collector's.
    written_ = acked_ = 0;
    txnr_ = 1;
    opened_ = false;
    open_txnr_ = NextTxnr();
    AppendFrame(open_txnr_, "open", kOffers);
    const auto deadline = SinkClock::now() + std::chrono::microseconds(options_.ack_timeout_us);
    WriteResult session;
    while (!opened_) {
      if (!Service(session)) break;
      if (opened_) break;
      if (stop.Expired() || SinkClock::now() >= deadline) {
        Fail(session, "no answer to RELP open from " + peer_);
        break;
      }
      Wait(kWaitSliceMs);
    }
    if (!opened_) {
      connect_failures_.fetch_add(1, std::memory_order_relaxed);
      result.error = session.error;
      return false;
    }
    connects_.fetch_add(1, std::memory_order_relaxed);
    std::string note;
    if (connect_log_.Allow(note)) {
      spdlog::info("sink {}: RELP session open with {}{}", sink_name_, peer_, note);
    }
    return true;
  }

  // The session is lost: everything not acknowledged on it is resent on the next one.
  void Fail(WriteResult& result, std::string why) {
    result.failed = true;
    result.error = std::move(why);
    result.unconfirmed = written_ - acked_;
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
      if (opened_) disconnects_.fetch_add(1, std::memory_order_relaxed);
    }
    written_ = acked_ = 0;
    unacked_.clear();
    partial_.clear();
    out_.clear();
    out_sent_ = 0;
    in_.clear();
    opened_ = false;
  }

  const std::string sink_name_;
  const RelpSinkOptions options_;
  const std::string peer_;  // for log lines
  Metrics::Counter& connects_;
  Metrics::Counter& connect_failures_;
  Metrics::Counter& disconnects_;
  Metrics::Counter& acknowledged_;
  LogThrottle connect_log_;

  int fd_ = -1;
  bool opened_ = false;
  std::uint32_t txnr_ = 1;
  std::uint32_t open_txnr_ = 0;
  std::uint32_t close_txnr_ = 0;  // set by Close()
  bool closed_ = false;           // the collector answered Close()'s "close"
  // Bytes of the sink's data taken on this connection, and the prefix of them acknowledged
  // (always a record boundary).
  std::uint64_t written_ = 0;
  std::uint64_t acked_ = 0;
  std::deque<Sent> unacked_;               // in the order sent
  SinkClock::time_point waiting_since_{};  // last ack, or the send that started the wait
  std::string partial_;                    // start of a record split across blocks
  std::string out_;                        // frames not yet fully handed to the socket
  std::size_t out_sent_ = 0;
  std::string in_;  // answers not yet complete
};

}  // namespace

std::unique_ptr<Sink> MakeRelpSink(const SinkOptions& sink, const RelpSinkOptions& relp,
                                   Metrics& metrics) {
  return std::make_unique<BufferedSink>(
      NetworkSinkOptions(sink, "relp", SinkEncoding::kSyslog5424, SinkFraming::kNewline,
                         relp.target.reconnect_min_us, relp.target.reconnect_max_us),
      std::make_unique<RelpDestination>(sink.name, relp, metrics), metrics);
}

}  // namespace logfold
