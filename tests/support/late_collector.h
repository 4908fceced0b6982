// LateCollector: a TCP collector for output tests whose port is reserved from the start but
// refuses connections until Listen() (an output that is down, then comes back).
#ifndef LOGFOLD_TESTS_LATE_COLLECTOR_H_
#define LOGFOLD_TESTS_LATE_COLLECTOR_H_

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"

namespace logfold {
namespace daemon_test {

// A collector whose port is reserved (bound) but refuses connections until Listen(); then
// it accepts any number of connections and reads each until EOF.
class LateCollector {
 public:
  LateCollector() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = Loopback(0);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port_ = ntohs(a.sin_port);
    }
  }
  ~LateCollector() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }

  std::uint16_t port() const { return port_; }
  bool Listen() {
    if (::listen(fd_, 8) != 0) return false;
    thread_ = std::thread([this] { Run(); });
    return true;
  }
  int connections() const { return connections_.load(); }
  std::string data() {
    std::lock_guard lock(mu_);
    return data_;
  }

 private:
  void Run() {
    std::vector<pollfd> fds{{fd_, POLLIN, 0}};
    std::vector<char> buf(1 << 16);
    while (!stop_.load()) {
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      for (std::size_t i = fds.size(); i-- > 0;) {
        if (fds[i].revents == 0) continue;
        if (i == 0) {
          const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
          if (conn >= 0) fds.push_back({conn, POLLIN, 0});
          if (conn >= 0) ++connections_;
          continue;
        }
        const ssize_t n = ::recv(fds[i].fd, buf.data(), buf.size(), 0);
        if (n > 0) {
          std::lock_guard lock(mu_);
          data_.append(buf.data(), static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          ::close(fds[i].fd);
          fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
    }
    for (std::size_t i = 1; i < fds.size(); ++i) ::close(fds[i].fd);
  }

  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::string data_;
  std::thread thread_;
};

}  // namespace daemon_test
}  // namespace logfold

#endif  // LOGFOLD_TESTS_LATE_COLLECTOR_H_
