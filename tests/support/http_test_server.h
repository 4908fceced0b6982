// A scripted HTTP/1.1 server on loopback for the HTTP sink tests: real sockets, one thread
// per connection, keep-alive, requests recorded (gzip bodies inflated), answers chosen per
// request by the test.
#ifndef LOGFOLD_TESTS_HTTP_TEST_SERVER_H_
#define LOGFOLD_TESTS_HTTP_TEST_SERVER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace logfold::test {

struct ReceivedRequest {
  std::string method, target;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string raw_body;                        // as sent
  std::string body;                            // inflated when Content-Encoding is gzip
  int connection = 0;                          // accept order, from 0
  std::chrono::steady_clock::time_point at;
};

struct ScriptedResponse {
  unsigned status = 200;
  std::string body = "{}";
  std::vector<std::pair<std::string, std::string>> headers;
  bool close = false;  // send "Connection: close" and close after answering
};

inline ScriptedResponse Reply(unsigned status, std::string body) {
  ScriptedResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// Inflates a gzip stream; returns "<inflate failed>" on any error.
inline std::string Gunzip(const std::string& in) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return "<inflate failed>";
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  char buf[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END && z.avail_in == 0 ? out : "<inflate failed>";
}

class TestHttpServer {
 public:
  using Script = std::function<ScriptedResponse(const ReceivedRequest&, std::size_t index)>;

  // port 0: ephemeral.
  explicit TestHttpServer(std::uint16_t port = 0) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int on = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, 16) != 0) {
      ::close(listen_fd_);
      listen_fd_ = -1;
      return;
    }
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~TestHttpServer() {
    stop_ = true;
    SetStalled(false);
    if (accept_thread_.joinable()) accept_thread_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mu_);
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
      threads.swap(threads_);
    }
    for (auto& t : threads) t.join();
    for (int fd : fds_) ::close(fd);
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }

  bool ok() const { return listen_fd_ >= 0; }
  std::uint16_t port() const { return port_; }
  std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  void SetScript(Script script) {
    std::lock_guard lock(mu_);
    script_ = std::move(script);
  }
  // While stalled, requests are read and recorded but not answered.
  void SetStalled(bool stalled) {
    {
      std::lock_guard lock(mu_);
      stalled_ = stalled;
    }
    cv_.notify_all();
  }

  std::vector<ReceivedRequest> Requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::size_t request_count() const {
    std::lock_guard lock(mu_);
    return requests_.size();
  }
  int connection_count() const { return connections_.load(); }

 private:
  void AcceptLoop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      const int id = connections_.fetch_add(1);
      std::lock_guard lock(mu_);
      fds_.push_back(fd);
      threads_.emplace_back([this, fd, id] { Serve(fd, id); });
    }
  }

  // Reads until `buffer` holds `n` bytes; false on EOF, error or shutdown.
  bool ReadAtLeast(int fd, std::string& buffer, std::size_t n) {
    char chunk[65536];
    while (buffer.size() < n) {
      const ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
      if (got <= 0) return false;
      buffer.append(chunk, static_cast<std::size_t>(got));
    }
    return true;
  }

  void Serve(int fd, int id) {
    std::string in;
    for (;;) {
      std::size_t header_end;
      while ((header_end = in.find("\r\n\r\n")) == std::string::npos) {
        if (!ReadAtLeast(fd, in, in.size() + 1)) return;
      }
      ReceivedRequest r;
      r.connection = id;
      r.at = std::chrono::steady_clock::now();
      const std::string head = in.substr(0, header_end);
      std::size_t line_end = head.find("\r\n");
      const std::string request_line = head.substr(0, line_end);
      const std::size_t sp1 = request_line.find(' '), sp2 = request_line.rfind(' ');
      r.method = request_line.substr(0, sp1);
      r.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
      std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
      while (pos < head.size()) {
        std::size_t e = head.find("\r\n", pos);
        if (e == std::string::npos) e = head.size();
        const std::string line = head.substr(pos, e - pos);
        const std::size_t colon = line.find(':');
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        r.headers[name] = value;
        pos = e + 2;
      }
      const auto content_length = r.headers.find("content-length");
      const std::size_t length =
          content_length != r.headers.end() ? std::stoul(content_length->second) : 0;
      if (!ReadAtLeast(fd, in, header_end + 4 + length)) return;
      r.raw_body = in.substr(header_end + 4, length);
      in.erase(0, header_end + 4 + length);
      const auto encoding = r.headers.find("content-encoding");
      const bool gzip = encoding != r.headers.end() && encoding->second == "gzip";
      r.body = gzip ? Gunzip(r.raw_body) : r.raw_body;

      ScriptedResponse response;
      {
        std::unique_lock lock(mu_);
        requests_.push_back(r);
        const std::size_t index = requests_.size() - 1;
        if (script_) response = script_(r, index);
        cv_.wait(lock, [&] { return !stalled_ || stop_; });
        if (stop_) return;
      }
      std::string out = "HTTP/1.1 " + std::to_string(response.status) + " Scripted\r\n";
      out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
      for (const auto& [name, value] : response.headers) out += name + ": " + value + "\r\n";
      if (response.close) out += "Connection: close\r\n";
      out += "\r\n" + response.body;
      if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) {
        return;
      }
      if (response.close) {
        ::shutdown(fd, SHUT_WR);
        return;
      }
    }
  }

  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Script script_;
  bool stalled_ = false;
  std::vector<ReceivedRequest> requests_;
  std::vector<int> fds_;
  std::vector<std::thread> threads_;
  std::thread accept_thread_;
};

}  // namespace logfold::test

#endif  // LOGFOLD_TESTS_HTTP_TEST_SERVER_H_
