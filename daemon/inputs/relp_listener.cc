// RelpListener: the librelp engine on its own thread, a receive callback that acknowledges
// only what the IngestTarget took, and a stop that never acknowledges what it did not.
#include "daemon/inputs/relp_listener.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "daemon/inputs/blocking_delivery.h"
#include "daemon/runtime/thread_name.h"
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

// The socket descriptors this process has open. librelp owns its sockets and exposes neither
// them nor the bound port, so the listener finds them here (see FindListenSocket and
// ForEachConnection).
std::set<int> OpenSockets() {
  std::set<int> fds;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  const int own = ::dirfd(dir);
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    struct stat st {};
    if (::fstat(static_cast<int>(fd), &st) == 0 && S_ISSOCK(st.st_mode)) {
      fds.insert(static_cast<int>(fd));
    }
  }
  ::closedir(dir);
  return fds;
}

bool IsListening(int fd) {
  int on = 0;
  socklen_t len = sizeof on;
  return ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on != 0;
}

// The local TCP port of `fd`, or 0 if it is not an IPv4/IPv6 stream socket.
std::uint16_t LocalPort(int fd) {
  int type = 0;
  socklen_t type_len = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 || type != SOCK_STREAM) return 0;
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

// Accepted connections of the listener on `port`: stream sockets whose local port is the
// listener's and that do not listen themselves.
template <typename F>
void ForEachConnection(std::uint16_t port, F&& f) {
  for (const int fd : OpenSockets()) {
    if (LocalPort(fd) == port && !IsListening(fd)) f(fd);
  }
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
        not_acknowledged_(metrics.GetCounter("logfold_input_errors_total", "Input errors.",
                                             Labels(name) + ",error=\"not_acknowledged\"")) {
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
    const std::set<int> before = OpenSockets();
    rc = relpEngineListnerConstructFinalize(engine_, server);
    if (rc != RELP_RET_OK) fail("cannot listen on " + options_.address + ":" + port, rc);
    for (const int fd : OpenSockets()) {
      if (before.contains(fd) || !IsListening(fd)) continue;
      port_ = LocalPort(fd);
      if (port_ != 0) break;
    }
    if (port_ == 0) fail("cannot find the RELP listening socket", RELP_RET_NOT_FOUND);
    // A gauge, not counters: librelp reports no accepts or closes. Read at scrape time.
    metrics.AddGauge("logfold_connections_open", "TCP connections open.", Labels(name),
                     [port = port_] {
                       double n = 0;
                       ForEachConnection(port, [&](int) { ++n; });
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

  void Stop() {
    if (stopping_.exchange(true)) return;
    relpEngineSetStop(engine_);
    delivery_.Stop();  // a callback waiting for room returns, unacknowledged
    Wake();
  }

  // Waits for the engine thread to leave relpEngineRun. It notices the stop flag only when
  // epoll_wait returns, so the wake-up connection is repeated until it has.
  void WaitFinished() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return finished_; })) {
      lock.unlock();
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

  // librelp sends "200 OK" for the frame once this returns, whatever it returns. So a message
  // that was not taken must not get there: the connections are shut down first, and the
  // response goes nowhere.
  relpRetVal Receive(std::string_view message) {
    bytes_.fetch_add(message.size(), std::memory_order_relaxed);
    const std::string_view line = TrimTerminators(message);
    if (!stopping_.load() && delivery_.Deliver({&line, 1}, WallClockNowUs())) {
      received_.fetch_add(1, std::memory_order_relaxed);
      return RELP_RET_OK;
    }
    ForEachConnection(port_, [](int fd) { ::shutdown(fd, SHUT_RDWR); });
    not_acknowledged_.fetch_add(1, std::memory_order_relaxed);
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
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool finished_ = false;

  Metrics::Counter& received_;
  Metrics::Counter& bytes_;
  Metrics::Counter& session_errors_;
  Metrics::Counter& not_acknowledged_;
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
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { impl_->Run(); });
  NameThread(thread_, "lf-in-" + name_);
}

void RelpListener::Stop() { impl_->Stop(); }

void RelpListener::Join() {
  if (!thread_.joinable()) return;
  impl_->WaitFinished();
  thread_.join();
}

std::uint16_t RelpListener::local_port() const { return impl_->port(); }

}  // namespace logfold
