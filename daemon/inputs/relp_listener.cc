// RelpListener: the librelp engine on its own thread, a receive callback that acknowledges
// only what the IngestTarget took, and a stop that never acknowledges what it did not.
#include "daemon/inputs/relp_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/inputs/blocking_delivery.h"
#include "daemon/runtime/wall_clock.h"

// librelp.h declares its C functions without extern "C".
extern "C" {
#include <librelp.h>
}

namespace logfold {

namespace {

std::string Labels(std::string_view name) {
  return "input=\"" + Metrics::EscapeLabelValue(name) + "\",proto=\"relp\"";
}

// A RELP frame carries one message; senders may still end it in a terminator.
std::string_view TrimTerminators(std::string_view m) {
  while (!m.empty() && (m.back() == '\n' || m.back() == '\0' || m.back() == '\r')) {
    m.remove_suffix(1);
  }
  return m;
}

// librelp exposes neither its sockets nor the port it bound, so both are read from /proc: the
// kernel's socket tables and this process's descriptor links. Nothing here touches a
// descriptor librelp owns (another thread's descriptors may close at any moment).
struct TcpSocketEntry {
  std::uint16_t port;   // local port
  std::string state;    // "0A": listening, "01": established
  std::uint64_t inode;  // the socket's inode, as in /proc/self/fd links
};

std::vector<TcpSocketEntry> TcpSockets() {
  std::vector<TcpSocketEntry> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout;
      std::uint64_t inode = 0;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      const std::size_t colon = local.rfind(':');
      if (!fields || colon == std::string::npos) continue;
      out.push_back(
          {static_cast<std::uint16_t>(std::strtoul(local.c_str() + colon + 1, nullptr, 16)), state,
           inode});
    }
  }
  return out;
}

// Inodes of the sockets this process holds ("socket:[N]" links in /proc/self/fd).
std::set<std::uint64_t> OwnSocketInodes() {
  std::set<std::uint64_t> inodes;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
    if (ec || target.rfind("socket:[", 0) != 0) continue;
    inodes.insert(std::strtoull(target.c_str() + 8, nullptr, 10));
  }
  return inodes;
}

// Listening sockets by inode, with their ports.
std::map<std::uint64_t, std::uint16_t> ListeningSockets() {
  std::map<std::uint64_t, std::uint16_t> out;
  for (const TcpSocketEntry& e : TcpSockets()) {
    if (e.state == "0A") out[e.inode] = e.port;
  }
  return out;
}

}  // namespace

class RelpListener::Impl {
 public:
  Impl(std::uint32_t input, const std::string& name, const Options& options, IngestTarget& target,
       Metrics& metrics)
      : name_(name),
        options_(options),
        delivery_(input, target),
        received_(metrics.GetCounter("logfold_received_total", "Lines received.", Labels(name))),
        bytes_(metrics.GetCounter("logfold_received_bytes_total",
                                  "Bytes received (datagram payloads, frames).", Labels(name))),
        session_errors_(metrics.GetCounter("logfold_input_errors_total", "Input errors.",
                                           Labels(name) + ",error=\"session\"")),
        dropped_(metrics.GetCounter("logfold_dropped_total", "Lines dropped on intake.",
                                    Labels(name) + ",reason=\"shutdown\"")) {
    auto fail = [&](const std::string& what, relpRetVal rc) {
      if (engine_ != nullptr) relpEngineDestruct(&engine_);
      throw std::runtime_error("input " + name_ + ": " + what + " (librelp error " +
                               std::to_string(rc) + ")");
    };
    relpRetVal rc = relpEngineConstruct(&engine_);
    if (rc != RELP_RET_OK) fail("cannot create the RELP engine", rc);
    // The engine calls its debug hook unconditionally and starts with none: NULL installs
    // librelp's no-op one.
    relpEngineSetDbgprint(engine_, nullptr);
    // Reverse DNS for every connection would stall the engine thread; nothing uses names.
    relpEngineSetDnsLookupMode(engine_, 0);
    relpEngineSetEnableCmd(engine_, reinterpret_cast<unsigned char*>(const_cast<char*>("syslog")),
                           eRelpCmdState_Required);
    relpEngineSetSyslogRcv2(engine_, &Impl::OnSyslog);
    relpEngineSetOnErr(engine_, &Impl::OnError);
    relpEngineSetOnGenericErr(engine_, &Impl::OnGenericError);
    relpSrv_t* server = nullptr;
    rc = relpEngineListnerConstruct(engine_, &server);
    if (rc != RELP_RET_OK) fail("cannot create the RELP listener", rc);
    std::string port = std::to_string(options_.port);
    relpSrvSetLstnPort(server, reinterpret_cast<unsigned char*>(port.data()));
    std::string address = options_.address;
    relpSrvSetLstnAddr(server, reinterpret_cast<unsigned char*>(address.data()));
    relpSrvSetUsrPtr(server, this);
    relpSrvSetMaxDataSize(server, options_.max_message_size);
    relpSrvSetOversizeMode(server, RELP_OVERSIZE_TRUNCATE);
    const std::map<std::uint64_t, std::uint16_t> before = ListeningSockets();
    rc = relpEngineListnerConstructFinalize(engine_, server);
    if (rc != RELP_RET_OK) fail("cannot listen on " + options_.address + ":" + port, rc);
    // The listening socket that appeared, and is this process's: its port.
    port_ = options_.port;
    if (port_ == 0) {
      const std::set<std::uint64_t> own = OwnSocketInodes();
      for (const auto& [inode, bound] : ListeningSockets()) {
        if (!before.contains(inode) && own.contains(inode)) port_ = bound;
      }
    }
    if (port_ == 0) fail("cannot find the RELP listening socket", RELP_RET_NOT_FOUND);
    // A gauge, not counters: librelp reports no accepts or closes. Read at scrape time from
    // the kernel's table: established connections to the listener's port.
    metrics.AddGauge("logfold_connections_open", "TCP connections open.", Labels(name),
                     [port = port_] {
                       double n = 0;
                       for (const TcpSocketEntry& e : TcpSockets()) {
                         if (e.port == port && e.state == "01") ++n;
                       }
                       return n;
                     });
    spdlog::info("input {}: relp listening on port {}", name_, port_);
  }

  ~Impl() {
    if (engine_ != nullptr) relpEngineDestruct(&engine_);
  }

  std::uint16_t port() const { return port_; }

  void Run() {
    relpEngineRun(engine_);
    {
      std::lock_guard lock(mu_);
      finished_ = true;
    }
    cv_.notify_all();
  }

  void Stop(std::chrono::steady_clock::time_point give_up) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) {
        give_up_ = std::min(give_up_, give_up);
        return;
      }
      stopping_ = true;
      give_up_ = give_up;
    }
    // The engine takes no further frame (it checks the flag between bytes); one being handed
    // over goes on waiting for room until give_up.
    relpEngineSetStop(engine_);
    Wake();
  }

  // Waits for the engine thread to leave relpEngineRun. It notices the stop flag only when
  // epoll_wait returns, so the wake-up connection is repeated until it has; past give_up a
  // delivery still waiting is given up.
  void WaitFinished() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return finished_; })) {
      const bool give_up = std::chrono::steady_clock::now() >= give_up_;
      lock.unlock();
      if (give_up) delivery_.Stop();
      Wake();
      lock.lock();
    }
  }

 private:
  static relpRetVal OnSyslog(void* user, unsigned char* /*hostname*/, unsigned char* /*ip*/,
                             unsigned char* message, size_t length) {
    return static_cast<Impl*>(user)->Receive(
        std::string_view(reinterpret_cast<const char*>(message), length));
  }

  static void OnError(void* user, char* object, char* message, relpRetVal code) {
    auto* self = static_cast<Impl*>(user);
    if (self == nullptr) return;
    self->session_errors_.fetch_add(1, std::memory_order_relaxed);
    spdlog::debug("input {}: relp {}: {} ({})", self->name_, object, message, code);
  }

  static void OnGenericError(char* object, char* message, relpRetVal code) {
    spdlog::warn("relp {}: {} ({})", object, message, code);
  }

  // librelp sends "200 OK" for the frame once this returns, whatever it returns: so this
  // returns only once the line was taken, however long the queues stay full. The one
  // exception is a shutdown whose give_up passed first (the outputs are stuck as well): the
  // line is then acknowledged without being taken, and counted as dropped.
  relpRetVal Receive(std::string_view message) {
    bytes_.fetch_add(message.size(), std::memory_order_relaxed);
    const std::string_view line = TrimTerminators(message);
    if (delivery_.Deliver({&line, 1}, WallClockNowUs())) {
      received_.fetch_add(1, std::memory_order_relaxed);
      return RELP_RET_OK;
    }
    dropped_.fetch_add(1, std::memory_order_relaxed);
    spdlog::error(
        "input {}: shutdown: a RELP message acknowledged without being taken (the "
        "queues stayed full)",
        name_);
    return RELP_RET_SESSION_BROKEN;
  }

  // Makes the listening socket readable, which ends the engine's epoll_wait.
  void Wake() const {
    sockaddr_storage addr{};
    socklen_t len = 0;
    const bool v6 = options_.address.find(':') != std::string::npos;
    if (v6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(port_);
      if (inet_pton(AF_INET6, options_.address.c_str(), &a->sin6_addr) != 1 ||
          IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr)) {
        a->sin6_addr = in6addr_loopback;
      }
      len = sizeof *a;
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      a->sin_family = AF_INET;
      a->sin_port = htons(port_);
      if (inet_pton(AF_INET, options_.address.c_str(), &a->sin_addr) != 1 ||
          a->sin_addr.s_addr == htonl(INADDR_ANY)) {
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      }
      len = sizeof *a;
    }
    const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return;
    [[maybe_unused]] const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), len);
    ::close(fd);
  }

  const std::string name_;
  const Options options_;
  BlockingDelivery delivery_;
  relpEngine_t* engine_ = nullptr;
  std::uint16_t port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                            // under mu_
  std::chrono::steady_clock::time_point give_up_{};  // under mu_
  bool finished_ = false;                            // under mu_

  Metrics::Counter& received_;
  Metrics::Counter& bytes_;
  Metrics::Counter& session_errors_;
  Metrics::Counter& dropped_;
};

RelpListener::RelpListener(std::uint32_t input, std::string name, const Options& options,
                           IngestTarget& target, Metrics& metrics)
    : name_(std::move(name)),
      impl_(std::make_unique<Impl>(input, name_, options, target, metrics)) {}

RelpListener::~RelpListener() {
  Stop();
  Join();
}

void RelpListener::Start() {
  thread_.Start(name_, [this] { impl_->Run(); });
}

void RelpListener::Stop(std::chrono::steady_clock::time_point give_up) { impl_->Stop(give_up); }

void RelpListener::Join() {
  if (!thread_.started()) return;
  impl_->WaitFinished();
  thread_.Join();
}

std::uint16_t RelpListener::local_port() const { return impl_->port(); }

}  // namespace logfold
