// sd_notify and LISTEN_FDS implemented from systemd's documented protocol (sd_notify(3),
// sd_listen_fds(3)).
#include "daemon/runtime/systemd_notify.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace logfold {
namespace {

constexpr int kListenFdsStart = 3;

bool ParseInt64(const char* s, std::int64_t& out) {
  if (s == nullptr || *s == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

}  // namespace

SystemdNotifier::SystemdNotifier() {
  const char* socket_path = std::getenv("NOTIFY_SOCKET");
  if (socket_path != nullptr && (socket_path[0] == '/' || socket_path[0] == '@') &&
      std::strlen(socket_path) < sizeof(sockaddr_un::sun_path)) {
    path_ = socket_path;
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  }
  std::int64_t usec = 0, pid = 0;
  if (ParseInt64(std::getenv("WATCHDOG_USEC"), usec) && usec > 0) {
    if (!ParseInt64(std::getenv("WATCHDOG_PID"), pid) || pid == getpid()) watchdog_us_ = usec;
  }
}

SystemdNotifier::~SystemdNotifier() {
  if (fd_ >= 0) close(fd_);
}

bool SystemdNotifier::Send(std::string_view message) {
  if (fd_ < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path_.size());
  return sendto(fd_, message.data(), message.size(), MSG_NOSIGNAL,
                reinterpret_cast<const sockaddr*>(&addr),
                len) == static_cast<ssize_t>(message.size());
}

void SystemdNotifier::Ready(std::string_view status) {
  Send("READY=1\nSTATUS=" + std::string(status));
}

void SystemdNotifier::Reloading() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const long long usec = static_cast<long long>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
  Send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void SystemdNotifier::Stopping() { Send("STOPPING=1"); }

void SystemdNotifier::Status(std::string_view status) { Send("STATUS=" + std::string(status)); }

void SystemdNotifier::Watchdog() { Send("WATCHDOG=1"); }

InheritedSockets::InheritedSockets() {
  std::int64_t pid = 0, n = 0;
  const bool mine = ParseInt64(std::getenv("LISTEN_PID"), pid) && pid == getpid();
  if (mine && ParseInt64(std::getenv("LISTEN_FDS"), n) && n > 0 && n < 4096) {
    std::string names = std::getenv("LISTEN_FDNAMES") ? std::getenv("LISTEN_FDNAMES") : "";
    for (int i = 0; i < n; ++i) {
      std::string name;
      const std::size_t colon = names.find(':');
      name = names.substr(0, colon);
      names = colon == std::string::npos ? "" : names.substr(colon + 1);
      const int fd = kListenFdsStart + i;
      fcntl(fd, F_SETFD, FD_CLOEXEC);
      fds_.push_back(Fd{fd, name.empty() ? "unknown" : name, false});
    }
  }
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
}

InheritedSockets::~InheritedSockets() {
  for (const Fd& f : fds_) {
    if (!f.taken) close(f.fd);
  }
}

int InheritedSockets::Take(const std::string& name, int socket_type) {
  for (Fd& f : fds_) {
    if (f.taken || f.name != name) continue;
    int so_type = 0;
    socklen_t len = sizeof so_type;
    if (getsockopt(f.fd, SOL_SOCKET, SO_TYPE, &so_type, &len) != 0 || so_type != socket_type)
      continue;
    f.taken = true;
    return f.fd;
  }
  return -1;
}

}  // namespace logfold
