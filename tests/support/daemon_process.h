// Test helpers for running `logfold serve` as a real child process: temp dirs and configs,
// spawning with captured output, ports from the daemon's log, /metrics, loopback clients.
#ifndef LOGFOLD_TESTS_DAEMON_PROCESS_H_
#define LOGFOLD_TESTS_DAEMON_PROCESS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace logfold {
namespace daemon_test {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;
using std::chrono::milliseconds;

// Polls `pred` every `step` until it holds (true) or `timeout` passes (false; `pred` is
// evaluated once more at the deadline so a late success still counts).
inline bool WaitUntil(const std::function<bool()>& pred, milliseconds timeout,
                      milliseconds step = milliseconds(10)) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(step);
  }
  return pred();
}

// The integer in environment variable `name`, or `fallback` when it is unset or empty (for
// the longer runs of a test that scripts ask for).
inline int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFile(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                          "/logfold-serve-test-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Splits NDJSON text into objects. Returns false (with the offending line in `error`) if a
// line is not a JSON object or the text does not end in a newline.
inline bool ParseNdjson(std::string_view text, std::vector<Json>& out, std::string& error) {
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const std::size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      error = "line " + std::to_string(line_no) + " has no terminating newline";
      return false;
    }
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      error = "line " + std::to_string(line_no) +
              " is not a JSON object: " + std::string(line.substr(0, 200));
      return false;
    }
    out.push_back(std::move(j));
  }
  return true;
}

// Lines that `events` stand for: one per `first` and `annotate` event plus each summary's
// count (the documented accounting rule), restricted to events `keep` accepts.
inline std::uint64_t LinesAccounted(const std::vector<Json>& events,
                                    const std::function<bool(const Json&)>& keep = nullptr) {
  std::uint64_t n = 0;
  for (const Json& e : events) {
    if (keep && !keep(e)) continue;
    const std::string kind = e.value("kind", "");
    if (kind == "first" || kind == "annotate") {
      ++n;
    } else if (kind == "summary") {
      n += e.value("count", std::uint64_t{0});
    }
  }
  return n;
}

// Sum of the samples of metric `name` (exact name) whose label text contains every string
// in `label_parts`, e.g. {"input=\"tcp-in\""}. Samples absent: 0.
inline double MetricSum(std::string_view text, std::string_view name,
                        std::initializer_list<std::string_view> label_parts = {}) {
  double sum = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty() || line[0] == '#') continue;
    const std::size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string_view::npos || line.substr(0, name_end) != name) continue;
    std::string_view labels;
    if (line[name_end] == '{') {
      const std::size_t close = line.rfind('}');
      if (close == std::string_view::npos) continue;
      labels = line.substr(name_end + 1, close - name_end - 1);
    }
    bool match = true;
    for (std::string_view part : label_parts) {
      if (labels.find(part) == std::string_view::npos) match = false;
    }
    if (!match) continue;
    const std::size_t space = line.rfind(' ');
    sum += std::strtod(std::string(line.substr(space + 1)).c_str(), nullptr);
  }
  return sum;
}

inline bool SetTimeouts(int fd, milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  return ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
         ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0;
}

inline sockaddr_in Loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

struct HttpResponse {
  int status = 0;  // 0: no valid response
  std::string body;
};

// Decodes a chunked HTTP/1.1 body (RFC 9112 7.1; extensions and trailers ignored). False if
// the body is cut short.
inline bool DecodeChunked(std::string_view in, std::string& out) {
  out.clear();
  for (;;) {
    const std::size_t eol = in.find("\r\n");
    if (eol == std::string_view::npos) return false;
    const unsigned long size = std::strtoul(std::string(in.substr(0, eol)).c_str(), nullptr, 16);
    in.remove_prefix(eol + 2);
    if (size == 0) return true;
    if (in.size() < size + 2) return false;
    out.append(in.substr(0, size));
    in.remove_prefix(size + 2);
  }
}

// One HTTP/1.1 request on 127.0.0.1:port (a body, if any, is sent with Content-Length);
// reads until the server closes (it is sent Connection: close) and decodes a chunked body.
// Every socket operation times out after `timeout`.
inline HttpResponse HttpRequest(std::uint16_t port, std::string_view method,
                                std::string_view target, std::string_view body = {},
                                milliseconds timeout = milliseconds(5000)) {
  HttpResponse r;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return r;
  SetTimeouts(fd, timeout);
  const sockaddr_in a = Loopback(port);
  std::string raw;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) {
    std::string req = std::string(method) + " " + std::string(target) +
                      " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    if (method != "GET") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    req += "\r\n";
    req += body;
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[16384];
      for (;;) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        raw.append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  ::close(fd);
  const std::size_t header_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || header_end == std::string::npos) return r;
  std::string headers = raw.substr(0, header_end);
  for (char& c : headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string_view content(raw.data() + header_end + 4, raw.size() - header_end - 4);
  if (headers.find("\r\ntransfer-encoding: chunked") != std::string::npos) {
    if (!DecodeChunked(content, r.body)) return r;
  } else {
    r.body = content;
  }
  r.status = std::atoi(raw.c_str() + 9);
  return r;
}

inline HttpResponse HttpGet(std::uint16_t port, std::string_view target,
                            milliseconds timeout = milliseconds(5000)) {
  return HttpRequest(port, "GET", target, {}, timeout);
}

// A blocking loopback TCP client (socket timeouts bound every call).
class TcpClient {
 public:
  explicit TcpClient(std::uint16_t port, milliseconds timeout = milliseconds(10000)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    SetTimeouts(fd_, timeout);
    const sockaddr_in a = Loopback(port);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) Close();
  }
  ~TcpClient() { Close(); }
  TcpClient(const TcpClient&) = delete;
  TcpClient& operator=(const TcpClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  // All of `data`, or false on an error or timeout.
  bool Send(std::string_view data) {
    while (!data.empty()) {
      if (fd_ < 0) return false;
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  void ShutdownWrite() {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
  }
  // Waits (bounded by the socket timeout) for the peer to close its side.
  bool WaitPeerClose() {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0) return true;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno == ECONNRESET;
    }
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Sends one datagram to 127.0.0.1:port.
class UdpClient {
 public:
  explicit UdpClient(std::uint16_t port) : addr_(Loopback(port)) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  }
  ~UdpClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  UdpClient(const UdpClient&) = delete;
  UdpClient& operator=(const UdpClient&) = delete;

  bool Send(std::string_view datagram) {
    return ::sendto(fd_, datagram.data(), datagram.size(), 0,
                    reinterpret_cast<const sockaddr*>(&addr_),
                    sizeof addr_) == static_cast<ssize_t>(datagram.size());
  }

 private:
  sockaddr_in addr_;
  int fd_ = -1;
};

// What Spawn adds to the child beyond the scrubbed environment: variables, and open
// descriptors it gets under given numbers (as systemd passes sockets from 3 up).
struct SpawnOptions {
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::pair<int, int>> fds;  // (descriptor here, its number in the child)
};

// Starts `argv` (searched in $PATH) with stdin from /dev/null and stdout and stderr into
// files. The systemd variables (socket activation, notify, watchdog) are removed from the
// inherited environment so that a test run under systemd stays hermetic, then `extra.env`
// is added. The child is killed (SIGKILL) when the thread that started it exits: a crashed
// or killed test run leaves no daemon or server behind. Returns the pid, or -1.
inline pid_t Spawn(const std::vector<std::string>& argv, const std::string& stdout_path,
                   const std::string& stderr_path, const SpawnOptions& extra = {}) {
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view v(*e);
    if (v.starts_with("LISTEN_") || v.starts_with("NOTIFY_SOCKET=") || v.starts_with("WATCHDOG_")) {
      continue;
    }
    env_text.emplace_back(v);
  }
  for (const auto& [key, value] : extra.env) env_text.push_back(key + "=" + value);
  std::vector<char*> env;
  for (std::string& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);

  // The files are opened (and truncated) here, not in the child: when Spawn returns, a
  // reader of stderr_path sees none of what a previous process wrote there.
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t parent = ::getpid();
  const pid_t pid = in < 0 || out < 0 || err < 0 ? -1 : ::fork();
  if (pid != 0) {  // the parent, or nothing started
    for (const int fd : {in, out, err}) {
      if (fd >= 0) ::close(fd);
    }
    return pid;
  }
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
  // dup2 clears close-on-exec on the copy, so the passed descriptors survive exec.
  for (const auto& [from, to] : extra.fds) {
    if (::dup2(from, to) < 0) ::_exit(127);
  }
  ::execvpe(args[0], args.data(), env.data());
  ::_exit(127);
}

// Reaps `pid` within `timeout`: its exit code (128 + signal number if it was killed), or
// nullopt after killing it with SIGKILL because the deadline passed.
inline std::optional<int> WaitExit(pid_t pid, milliseconds timeout) {
  int status = 0;
  pid_t got = 0;
  const bool exited = WaitUntil(
      [&] {
        got = ::waitpid(pid, &status, WNOHANG);
        return got == pid || (got < 0 && errno != EINTR);
      },
      timeout, milliseconds(5));
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return std::nullopt;
  }
  if (got != pid) return std::nullopt;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return std::nullopt;
}

struct CommandResult {
  int exit_code = -1;  // -1: could not run or timed out
  std::string out, err;
};

// Runs a command to completion (killed after `timeout`), capturing its output in `dir`.
inline CommandResult RunCommand(const std::vector<std::string>& argv, const TempDir& dir,
                                milliseconds timeout = milliseconds(10000)) {
  static int counter = 0;
  const std::string tag = std::to_string(++counter);
  const std::string out_path = dir / ("cmd" + tag + ".out");
  const std::string err_path = dir / ("cmd" + tag + ".err");
  CommandResult r;
  const pid_t pid = Spawn(argv, out_path, err_path);
  if (pid < 0) return r;
  const std::optional<int> code = WaitExit(pid, timeout);
  r.exit_code = code.value_or(-1);
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  return r;
}

// The path of `name` if it is an executable in $PATH, else empty.
inline std::string FindProgram(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::filesystem::path candidate =
        std::filesystem::path(dirs.substr(0, colon)) / std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return {};
}

inline bool HaveProgram(std::string_view name) { return !FindProgram(name).empty(); }

// SIGKILL and wait: for a child a test leaves running (pid <= 0: nothing to do).
inline void KillAndReap(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

// A daemon config for tests: syslog inputs "udp-in" and "tcp-in" on ephemeral loopback
// ports, 2 workers, events to the file `events_path`, metrics on an ephemeral port, and a
// 60 s window so that only shutdown (or a test's reload) closes groups.
inline Json LoopbackConfig(const std::string& events_path) {
  return Json{
      {"log", {{"level", "info"}, {"stats_interval", "0"}}},
      {"inputs", Json::array({{{"name", "udp-in"}, {"type", "udp"}, {"port", 0}},
                              {{"name", "tcp-in"}, {"type", "tcp"}, {"port", 0}}})},
      {"engine", {{"window", "60s"}, {"max_hold", "10m"}}},
      {"workers", {{"threads", 2}}},
      {"outputs", Json::array({{{"name", "events"}, {"type", "file"}, {"path", events_path}}})},
      {"metrics", {{"port", 0}}}};
}

// `logfold serve --config FILE` as a child process. Its stderr (the daemon's log) and
// stdout go to files in the given directory; the destructor kills a daemon still running.
class DaemonProcess {
 public:
  explicit DaemonProcess(const TempDir& dir)
      : stdout_path_(dir / "daemon.stdout"), stderr_path_(dir / "daemon.stderr") {}
  ~DaemonProcess() { KillAndReap(pid_); }
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  // Spawns the daemon and waits until it logged "logfold serving" (listeners bound, signals
  // handled). False if it exited or did not get there within `timeout`; Stderr() tells why.
  // `prefix`: a command the daemon runs under, e.g. {"prlimit", "--nofile=64"}.
  bool Start(const std::string& config_path, milliseconds timeout = milliseconds(10000),
             std::vector<std::string> prefix = {}) {
    for (const char* a : {LOGFOLD_BINARY, "serve", "--config"}) prefix.emplace_back(a);
    prefix.push_back(config_path);
    pid_ = Spawn(prefix, stdout_path_, stderr_path_);
    if (pid_ < 0) return false;
    bool exited = false;
    const bool up = WaitUntil(
        [&] {
          int status = 0;
          if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            exited = true;
            exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            pid_ = -1;
            return true;
          }
          return Stderr().find("logfold serving") != std::string::npos;
        },
        timeout);
    return up && !exited;
  }

  pid_t pid() const { return pid_; }
  std::string Stderr() const { return ReadFile(stderr_path_); }
  std::string Stdout() const { return ReadFile(stdout_path_); }
  std::optional<int> early_exit_code() const { return exit_code_; }

  bool WaitForStderr(std::string_view text, milliseconds timeout = milliseconds(10000)) const {
    return WaitUntil([&] { return Stderr().find(text) != std::string::npos; }, timeout);
  }

  // The port an input logged ("input NAME: udp listening on port N"), or 0.
  std::uint16_t InputPort(std::string_view name, std::string_view proto) const {
    return PortAfter("input " + std::string(name) + ": " + std::string(proto) +
                     " listening on port ");
  }
  // The metrics port ("metrics on http://127.0.0.1:PORT/metrics"), or 0.
  std::uint16_t MetricsPort() const { return PortAfter("metrics on http://127.0.0.1:"); }

  std::string Metrics() const { return HttpGet(MetricsPort(), "/metrics").body; }
  double Metric(std::string_view name,
                std::initializer_list<std::string_view> label_parts = {}) const {
    return MetricSum(Metrics(), name, label_parts);
  }
  // Waits until Metric(name, labels) >= value.
  bool WaitMetricAtLeast(std::string_view name, std::initializer_list<std::string_view> labels,
                         double value, milliseconds timeout = milliseconds(15000)) const {
    return WaitUntil([&] { return MetricSum(Metrics(), name, labels) >= value; }, timeout,
                     milliseconds(20));
  }

  bool Signal(int signo) const { return pid_ > 0 && ::kill(pid_, signo) == 0; }

  // Waits for the daemon to exit; kills it (and returns nullopt) when `timeout` passes.
  std::optional<int> WaitExit(milliseconds timeout = milliseconds(20000)) {
    if (pid_ <= 0) return exit_code_;
    exit_code_ = daemon_test::WaitExit(pid_, timeout);
    pid_ = -1;
    return exit_code_;
  }

  // VmRSS from /proc/PID/status, in bytes (0 if unreadable).
  std::uint64_t RssBytes() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
    }
    return 0;
  }

 private:
  std::uint16_t PortAfter(const std::string& prefix) const {
    const std::string log = Stderr();
    const std::size_t at = log.find(prefix);
    if (at == std::string::npos) return 0;
    const unsigned long port = std::strtoul(log.c_str() + at + prefix.size(), nullptr, 10);
    return port > 0 && port <= 65535 ? static_cast<std::uint16_t>(port) : 0;
  }

  std::string stdout_path_, stderr_path_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

}  // namespace daemon_test
}  // namespace logfold

#endif  // LOGFOLD_TESTS_DAEMON_PROCESS_H_
