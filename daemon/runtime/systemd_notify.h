// systemd integration without a libsystemd dependency: the sd_notify datagram protocol
// (READY/RELOADING/STOPPING/STATUS/WATCHDOG) and socket activation (LISTEN_FDS), both
// documented stable interfaces of systemd. Outside systemd every call is a no-op.
#ifndef LOGFOLD_DAEMON_SYSTEMD_NOTIFY_H_
#define LOGFOLD_DAEMON_SYSTEMD_NOTIFY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace logfold {

class SystemdNotifier {
 public:
  // Reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID from the environment.
  SystemdNotifier();
  ~SystemdNotifier();
  SystemdNotifier(const SystemdNotifier&) = delete;
  SystemdNotifier& operator=(const SystemdNotifier&) = delete;

  bool enabled() const { return fd_ >= 0; }
  void Ready(std::string_view status);
  void Reloading();  // with MONOTONIC_USEC, as systemd 253+ expects for Type=notify-reload
  void Stopping();
  void Status(std::string_view status);
  void Watchdog();
  // Interval at which Watchdog() should be called (half of WATCHDOG_USEC); 0 when systemd
  // does not watch this process.
  std::int64_t watchdog_interval_us() const { return watchdog_us_ / 2; }

  // Sends one notification datagram; returns false when not under systemd or on error.
  bool Send(std::string_view message);

 private:
  int fd_ = -1;
  std::string path_;  // sun_path; a leading '@' means the abstract namespace
  std::int64_t watchdog_us_ = 0;
};

// Sockets passed by systemd socket activation (LISTEN_PID/LISTEN_FDS/LISTEN_FDNAMES).
class InheritedSockets {
 public:
  // Reads and unsets the environment variables, so children do not inherit them.
  InheritedSockets();
  ~InheritedSockets();  // closes sockets nobody took
  InheritedSockets(const InheritedSockets&) = delete;
  InheritedSockets& operator=(const InheritedSockets&) = delete;

  // The socket named `name` (FileDescriptorName=) whose type is `socket_type` (SOCK_DGRAM or
  // SOCK_STREAM); ownership passes to the caller. -1 when there is none.
  int Take(const std::string& name, int socket_type);
  std::size_t count() const { return fds_.size(); }

 private:
  struct Fd {
    int fd;
    std::string name;
    bool taken;
  };
  std::vector<Fd> fds_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_SYSTEMD_NOTIFY_H_
