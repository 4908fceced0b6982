// Test fixture: one private rsyslogd (`rsyslogd -n` in the foreground) with its own config,
// work directory, pid file and internal log in a test's TempDir, for the peer tests.
#ifndef LOGFOLD_TESTS_SUPPORT_RSYSLOGD_H_
#define LOGFOLD_TESTS_SUPPORT_RSYSLOGD_H_

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tests/support/daemon_process.h"

namespace logfold {
namespace rsyslog_test {

using std::chrono::milliseconds;

// rsyslogd from $PATH, else where Debian installs it (/usr/sbin is often not in a user's
// PATH); empty if it is not installed.
inline std::string RsyslogdPath() {
  if (std::string found = daemon_test::FindProgram("rsyslogd"); !found.empty()) return found;
  for (const char* candidate : {"/usr/sbin/rsyslogd", "/sbin/rsyslogd"}) {
    if (::access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

// True if rsyslog's loadable module `name` (e.g. "omkafka", "imrelp", "lmnsd_ossl") is
// installed: several come in their own Debian packages.
inline bool HaveRsyslogModule(std::string_view name) {
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu/rsyslog", "/usr/lib/aarch64-linux-gnu/rsyslog",
                          "/usr/lib/rsyslog"}) {
    if (std::filesystem::exists(std::filesystem::path(dir) / (std::string(name) + ".so"))) {
      return true;
    }
  }
  return false;
}

// One rsyslogd process. Its files are `dir`/`name`.conf, .pid, .stdout, .stderr,
// `name`-work/, `name`-internal.log (its own messages, never sent on) and `name`-imtcp.port.
// The config loads no system input (imuxsock, imjournal, imklog). Killed (SIGKILL) when
// destroyed; it can be started again after Stop() or Kill().
class Rsyslogd {
 public:
  Rsyslogd(const daemon_test::TempDir& dir, std::string name) : dir_(dir), name_(std::move(name)) {}
  ~Rsyslogd() { Kill(); }
  Rsyslogd(const Rsyslogd&) = delete;
  Rsyslogd& operator=(const Rsyslogd&) = delete;

  // Config statements for imtcp on an ephemeral loopback port (see imtcp_port()) whose lines
  // go to `ruleset`.
  std::string ImtcpInput(std::string_view ruleset) const {
    return "module(load=\"imtcp\")\ninput(type=\"imtcp\" address=\"127.0.0.1\" port=\"0\" "
           "listenPortFileName=\"" +
           PortFile() + "\" ruleset=\"" + std::string(ruleset) + "\")\n";
  }

  // Writes the config (global() with the work directory and `global_params`, more parameters
  // each after a space, then `body`, then the internal log's action), starts rsyslogd and waits
  // until `ready()` holds; without `ready`, until imtcp's port accepts a connection (its port file
  // can be read before the listener takes connections: CI saw ECONNREFUSED). False, with the config
  // and Diagnostics() in `error`, if it exits first or is not ready by `deadline`.
  bool Start(const std::string& body, std::string& error,
             const std::function<bool()>& ready = nullptr, std::string_view global_params = "",
             milliseconds deadline = milliseconds(15000)) {
    Kill();
    const std::filesystem::path work = dir_ / (name_ + "-work");
    std::filesystem::create_directories(work);
    conf_ = "global(workDirectory=\"" + work.string() + "\" processInternalMessages=\"on\"" +
            std::string(global_params) + ")\n" + body + "action(type=\"omfile\" file=\"" +
            InternalLog() + "\")\n";
    daemon_test::WriteFile(dir_ / (name_ + ".conf"), conf_);
    // A previous run's pid and port files must not be taken for this one's.
    std::filesystem::remove(dir_ / (name_ + ".pid"));
    std::filesystem::remove(PortFile());
    const std::string binary = RsyslogdPath();
    pid_ = daemon_test::Spawn(
        {binary, "-n", "-f", dir_ / (name_ + ".conf"), "-i", dir_ / (name_ + ".pid")},
        dir_ / (name_ + ".stdout"), dir_ / (name_ + ".stderr"));
    if (pid_ < 0) {
      error = "cannot spawn rsyslogd '" + binary + "'";
      return false;
    }
    bool exited = false;
    const bool up = daemon_test::WaitUntil(
        [&] {
          if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
            exited = true;
            pid_ = -1;
            return true;
          }
          if (ready) return ready();
          const std::uint16_t port = imtcp_port();
          return port != 0 && daemon_test::TcpClient(port, milliseconds(1000)).connected();
        },
        deadline);
    if (!up || exited) {
      error = "rsyslogd " + name_ +
              (exited ? " exited before it was ready"
                      : " not ready within " + std::to_string(deadline.count()) + " ms") +
              "; config:\n" + conf_ + "\n" + Diagnostics();
      return false;
    }
    return true;
  }

  // SIGTERM and wait: its exit code (0 for a clean exit), or nullopt if it was not running or
  // did not exit within `timeout` (then it is killed).
  std::optional<int> Stop(milliseconds timeout = milliseconds(15000)) {
    if (pid_ <= 0) return std::nullopt;
    ::kill(pid_, SIGTERM);
    const std::optional<int> code = daemon_test::WaitExit(pid_, timeout);
    pid_ = -1;
    return code;
  }

  // SIGKILL and reap, e.g. to cause an outage.
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    daemon_test::WaitExit(pid_, milliseconds(5000));
    pid_ = -1;
  }

  // The imtcp port rsyslogd wrote to PortFile(), or 0 before it did.
  std::uint16_t imtcp_port() const {
    const unsigned long p = std::strtoul(daemon_test::ReadFile(PortFile()).c_str(), nullptr, 10);
    return p > 0 && p <= 65535 ? static_cast<std::uint16_t>(p) : 0;
  }

  // Its stderr and its own messages, for failure messages.
  std::string Diagnostics() const {
    return "--- rsyslogd " + name_ + " stderr ---\n" +
           daemon_test::ReadFile(dir_ / (name_ + ".stderr")) + "--- rsyslogd " + name_ +
           " internal log ---\n" + daemon_test::ReadFile(InternalLog());
  }

  std::string PortFile() const { return dir_ / (name_ + "-imtcp.port"); }
  const std::string& name() const { return name_; }

 private:
  std::string InternalLog() const { return dir_ / (name_ + "-internal.log"); }

  const daemon_test::TempDir& dir_;
  const std::string name_;
  std::string conf_;
  pid_t pid_ = -1;
};

}  // namespace rsyslog_test
}  // namespace logfold

#endif  // LOGFOLD_TESTS_SUPPORT_RSYSLOGD_H_
