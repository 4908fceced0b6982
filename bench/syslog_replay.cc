// syslog_replay: the benchmark's load client. Replays a corpus file (one syslog line per line)
// over TCP or UDP as fast as possible or at a fixed rate, or probes first-event latency.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

const char kUsage[] =
    "usage: syslog_replay MODE [options] CORPUS\n"
    "  tcp    send the corpus over TCP as fast as possible\n"
    "         --framing newline|octet (newline)  --connections N (1)  --chunk BYTES (262144)\n"
    "  relp   send the corpus as RELP syslog frames, each acknowledged by the server; the\n"
    "         time runs until the last acknowledgement. --window N (1024: frames in flight)\n"
    "  udp    one datagram per line (no newline), sendmmsg batches\n"
    "         --rate LINES_PER_S (0: unlimited)  --batch N (256, at most 1024)\n"
    "         --sockets N (1; each its own sender thread with 1/N of the lines and rate)\n"
    "  probe  latency: background lines at --rate (100000) over TCP plus unique markers at\n"
    "         --marker-rate (200) for --seconds (10); listens on --listen PORT (0: any, printed\n"
    "         as {\"listening\":PORT}) for the daemon's NDJSON TCP output and times each\n"
    "         marker's `first` event\n"
    "  common --host IPV4 (127.0.0.1)  --port PORT (required)  --lines N (default: the\n"
    "         corpus once; more cycles through it)  --offset N (0: first line sent)\n"
    "         --timeout SECONDS (60)\n"
    "Prints one JSON line: lines, bytes, seconds, start (CLOCK_MONOTONIC seconds when sending\n"
    "began) and mode-specific fields.\n";

double Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void SleepUntil(double when) {
  timespec t;
  t.tv_sec = static_cast<time_t>(when);
  t.tv_nsec = static_cast<long>((when - static_cast<double>(t.tv_sec)) * 1e9);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) == EINTR) {
  }
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "syslog_replay: %s\n", what.c_str());
  std::exit(2);
}

[[noreturn]] void DieErrno(const std::string& what) { Die(what + ": " + std::strerror(errno)); }

struct Options {
  std::string mode;
  std::string corpus;
  std::string host = "127.0.0.1";
  int port = -1;
  std::string framing = "newline";
  int connections = 1;
  std::size_t chunk = 256 * 1024;
  double rate = -1;  // -1: mode default
  int sockets = 1;
  int batch = 256;
  std::size_t window = 1024;  // relp: frames sent and not yet acknowledged at most
  std::uint64_t lines = 0;    // 0: the corpus once
  std::uint64_t offset = 0;   // first line sent (cycled corpus)
  double marker_rate = 200;
  double seconds = 10;
  int listen_port = -1;
  double timeout = 60;
};

Options ParseOptions(int argc, char** argv) {
  if (argc < 2) Die(std::string("missing mode\n") + kUsage);
  Options o;
  o.mode = argv[1];
  if (o.mode != "tcp" && o.mode != "udp" && o.mode != "probe" && o.mode != "relp") {
    Die("unknown mode " + o.mode);
  }
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      if (!o.corpus.empty()) Die("more than one corpus given");
      o.corpus = arg;
      continue;
    }
    if (i + 1 >= argc) Die(arg + " needs a value");
    const std::string value = argv[++i];
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    const bool numeric = end != value.c_str() && *end == '\0' && number >= 0;
    auto need_number = [&] {
      if (!numeric) Die(arg + ": not a non-negative number: " + value);
      return number;
    };
    if (arg == "--host") {
      o.host = value;
    } else if (arg == "--framing") {
      if (value != "newline" && value != "octet") Die("--framing must be newline or octet");
      o.framing = value;
    } else if (arg == "--port") {
      o.port = static_cast<int>(need_number());
    } else if (arg == "--connections") {
      o.connections = std::max(1, static_cast<int>(need_number()));
    } else if (arg == "--chunk") {
      o.chunk = std::max<std::size_t>(1, static_cast<std::size_t>(need_number()));
    } else if (arg == "--rate") {
      o.rate = need_number();
    } else if (arg == "--sockets") {
      o.sockets = std::max(1, static_cast<int>(need_number()));
    } else if (arg == "--window") {
      o.window = std::max<std::size_t>(1, static_cast<std::size_t>(need_number()));
    } else if (arg == "--batch") {
      o.batch = std::clamp(static_cast<int>(need_number()), 1, 1024);
    } else if (arg == "--lines") {
      o.lines = static_cast<std::uint64_t>(need_number());
    } else if (arg == "--offset") {
      o.offset = static_cast<std::uint64_t>(need_number());
    } else if (arg == "--marker-rate") {
      o.marker_rate = std::max(1.0, need_number());
    } else if (arg == "--seconds") {
      o.seconds = need_number();
    } else if (arg == "--listen") {
      o.listen_port = static_cast<int>(need_number());
    } else if (arg == "--timeout") {
      o.timeout = need_number();
    } else {
      Die("unknown option " + arg + "\n" + kUsage);
    }
  }
  if (o.corpus.empty()) Die(std::string("missing corpus file\n") + kUsage);
  if (o.port < 0 || o.port > 65535) Die("--port is required (1-65535)");
  if (o.rate < 0) o.rate = o.mode == "probe" ? 100000 : 0;
  if (o.mode == "probe" && o.rate <= 0) Die("probe needs --rate > 0");
  return o;
}

// The corpus, mapped read-only, and where each line starts and ends (newline excluded).
class Corpus {
 public:
  explicit Corpus(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) DieErrno("open " + path);
    struct stat st;
    if (fstat(fd, &st) != 0) DieErrno("stat " + path);
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) Die(path + " is empty");
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) DieErrno("mmap " + path);
    close(fd);
    data_ = static_cast<const char*>(p);
    std::size_t pos = 0;
    while (pos < size_) {
      const void* nl = std::memchr(data_ + pos, '\n', size_ - pos);
      const std::size_t end =
          nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data_) : size_;
      lines_.push_back({pos, end - pos});
      pos = end + 1;
    }
    // A last line without its newline is sent with one (TCP) like every other line.
    newline_terminated_ = data_[size_ - 1] == '\n';
  }

  std::size_t line_count() const { return lines_.size(); }
  std::string_view line(std::size_t i) const {
    return {data_ + lines_[i].offset, lines_[i].length};
  }
  // The bytes of lines [first, last) as the file holds them, newlines included.
  std::string_view span(std::size_t first, std::size_t last) const {
    if (first == last) return {};
    const std::size_t begin = lines_[first].offset;
    const std::size_t end = lines_[last - 1].offset + lines_[last - 1].length;
    const bool has_newline = last < lines_.size() || newline_terminated_;
    return {data_ + begin, end - begin + (has_newline ? 1 : 0)};
  }
  bool spans_are_newline_framed(std::size_t last) const {
    return last < lines_.size() || newline_terminated_;
  }

 private:
  struct Extent {
    std::size_t offset;
    std::size_t length;
  };
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  bool newline_terminated_ = true;
  std::vector<Extent> lines_;
};

sockaddr_in Address(const std::string& host, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) Die("not an IPv4 address: " + host);
  return a;
}

// Connects, retrying while the server is not listening yet (until `deadline`).
int ConnectTcp(const sockaddr_in& to, double deadline) {
  for (;;) {
    const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) DieErrno("socket");
    if (connect(s, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0) return s;
    const int err = errno;
    close(s);
    if (err != ECONNREFUSED || Now() > deadline) {
      errno = err;
      DieErrno("connect");
    }
    SleepUntil(Now() + 0.02);
  }
}

void WriteAll(int s, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(s, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      DieErrno("write");
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void AppendOctetFrame(std::string_view line, std::string& out) {
  out += std::to_string(line.size());
  out += ' ';
  out += line;
}

// Lines [first, last) of the cycled corpus as one TCP stream in the chosen framing. Newline
// framing of whole corpus passes is served from the mapping; everything else is built here.
struct Stream {
  std::vector<std::string_view> pieces;
  std::string owned;
};

void BuildStream(const Corpus& c, const Options& o, std::uint64_t first, std::uint64_t last,
                 Stream& out) {
  const std::size_t n = c.line_count();
  if (o.framing == "newline") {
    // Pass-sized spans of the mapping, plus owned copies where a span lacks its final newline.
    std::uint64_t i = first;
    while (i < last) {
      const std::size_t begin = static_cast<std::size_t>(i % n);
      const std::size_t end =
          static_cast<std::size_t>(std::min<std::uint64_t>(n, begin + (last - i)));
      out.pieces.push_back(c.span(begin, end));
      if (!c.spans_are_newline_framed(end)) out.pieces.push_back("\n");
      i += end - begin;
    }
    return;
  }
  out.owned.reserve(static_cast<std::size_t>(last - first) * (c.line(0).size() + 8));
  for (std::uint64_t i = first; i < last; ++i) AppendOctetFrame(c.line(i % n), out.owned);
  out.pieces.push_back(out.owned);
}

void PrintResult(const char* mode, std::uint64_t lines, std::uint64_t bytes, double start,
                 double seconds, const std::string& extra) {
  std::printf("{\"mode\":\"%s\",\"lines\":%" PRIu64 ",\"bytes\":%" PRIu64
              ",\"start\":%.6f,\"seconds\":%.6f,\"lines_per_s\":%.0f,\"mb_per_s\":%.2f%s}\n",
              mode, lines, bytes, start, seconds,
              seconds > 0 ? static_cast<double>(lines) / seconds : 0.0,
              seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0.0, extra.c_str());
  std::fflush(stdout);
}

// Reads from `s` until at least `want` more RELP response frames ("TXNR rsp LEN DATA LF") are
// complete, and returns how many were (every complete one buffered counts), carrying partial
// frames over in `in`. Only the frame structure is checked: the server acknowledges each
// syslog frame with "200 OK".
std::size_t ReadResponses(int s, std::string& in, std::size_t want) {
  std::size_t got = 0;
  char buf[64 * 1024];
  while (got < want) {
    // Complete frames already buffered.
    std::size_t pos = 0;
    for (;;) {
      const std::size_t sp1 = in.find(' ', pos);
      const std::size_t sp2 = sp1 == std::string::npos ? sp1 : in.find(' ', sp1 + 1);
      if (sp2 == std::string::npos) break;
      char* end = nullptr;
      const unsigned long len = std::strtoul(in.c_str() + sp2 + 1, &end, 10);
      const std::size_t header = static_cast<std::size_t>(end - in.c_str());
      if (header >= in.size()) break;
      const std::size_t frame_end = header + (len > 0 ? 1 + len : 0) + 1;
      if (in.size() < frame_end) break;
      if (in.compare(sp1 + 1, sp2 - sp1 - 1, "rsp") == 0) {
        if (in.compare(header + 1, 3, "200") != 0) Die("relp: server refused a frame");
        ++got;
      }
      pos = frame_end;
    }
    in.erase(0, pos);
    if (got >= want) break;
    const ssize_t n = recv(s, buf, sizeof buf, 0);
    if (n == 0) Die("relp: server closed the session");
    if (n < 0) {
      if (errno == EINTR) continue;
      DieErrno("relp: recv");
    }
    in.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

int RunRelp(const Options& o, const Corpus& c) {
  const std::uint64_t total = o.lines ? o.lines : c.line_count();
  // Every frame built before the clock starts: "TXNR syslog LEN MSG\n", txnr 2.. (1: open).
  std::string wire;
  std::vector<std::size_t> ends;
  ends.reserve(static_cast<std::size_t>(total));
  std::uint64_t bytes = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    const std::string_view line = c.line(static_cast<std::size_t>((o.offset + i) % c.line_count()));
    wire += std::to_string(i % 999'999'998 + 2);
    wire += " syslog ";
    wire += std::to_string(line.size());
    wire += ' ';
    wire += line;
    wire += '\n';
    bytes += line.size();
    ends.push_back(wire.size());
  }
  const int s = ConnectTcp(Address(o.host, o.port), Now() + o.timeout);
  const std::string offers = "relp_version=0\nrelp_software=syslog_replay\ncommands=syslog";
  WriteAll(s, "1 open " + std::to_string(offers.size()) + " " + offers + "\n");
  std::string in;
  ReadResponses(s, in, 1);
  const double start = Now();
  std::size_t sent = 0, acked = 0, at = 0;
  while (acked < total) {
    // Fill the window, then wait for acknowledgements: each one makes room for another frame.
    const std::size_t upto =
        std::min<std::size_t>(static_cast<std::size_t>(total), acked + o.window);
    if (sent < upto) {
      WriteAll(s, std::string_view(wire).substr(at, ends[upto - 1] - at));
      at = ends[upto - 1];
      sent = upto;
    }
    acked += ReadResponses(s, in, 1);
  }
  const double seconds = Now() - start;
  WriteAll(s, std::to_string(total % 999'999'998 + 2) + " close 0\n");
  close(s);
  PrintResult("relp", total, bytes, start, seconds, ",\"window\":" + std::to_string(o.window));
  return 0;
}

int RunTcp(const Options& o, const Corpus& c) {
  const std::uint64_t total = o.lines ? o.lines : c.line_count();
  const auto to = Address(o.host, o.port);
  const int k = o.connections;
  std::vector<Stream> streams(static_cast<std::size_t>(k));
  std::uint64_t bytes = 0;
  for (int j = 0; j < k; ++j) {
    BuildStream(
        c, o, o.offset + total * static_cast<std::uint64_t>(j) / static_cast<std::uint64_t>(k),
        o.offset + total * static_cast<std::uint64_t>(j + 1) / static_cast<std::uint64_t>(k),
        streams[static_cast<std::size_t>(j)]);
    for (auto p : streams[static_cast<std::size_t>(j)].pieces) bytes += p.size();
  }
  const double deadline = Now() + o.timeout;
  std::vector<int> sockets;
  for (int j = 0; j < k; ++j) sockets.push_back(ConnectTcp(to, deadline));
  const double start = Now();
  std::vector<std::thread> threads;
  for (int j = 0; j < k; ++j) {
    threads.emplace_back([&, j] {
      const int s = sockets[static_cast<std::size_t>(j)];
      for (std::string_view piece : streams[static_cast<std::size_t>(j)].pieces) {
        while (!piece.empty()) {
          const std::size_t n = std::min(o.chunk, piece.size());
          WriteAll(s, piece.substr(0, n));
          piece.remove_prefix(n);
        }
      }
      // Half-close: the server reads to the end, then sees EOF.
      shutdown(s, SHUT_WR);
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = Now() - start;
  for (int s : sockets) close(s);
  PrintResult("tcp", total, bytes, start, seconds,
              ",\"connections\":" + std::to_string(k) + ",\"framing\":\"" + o.framing + "\"");
  return 0;
}

// One UDP sender: lines [first, first + count) of the cycled corpus on its own connected
// socket at `rate` (0: unlimited). The mmsghdr/iovec arrays are built once, before the clock
// starts, for at most one pass of the corpus; the send loop then only hands slices of them to
// sendmmsg, and paces by batch (a token bucket with a one-batch burst), never by datagram.
struct UdpSender {
  std::uint64_t sent = 0, bytes = 0, retries = 0;

  void Run(const Options& o, const Corpus& c, const sockaddr_in& to, std::uint64_t first,
           std::uint64_t count, double rate, double start) {
    const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) DieErrno("socket");
    const int sndbuf = 8 << 20;
    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (connect(s, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) DieErrno("connect");
    const std::size_t n = c.line_count();
    const std::size_t span = static_cast<std::size_t>(std::min<std::uint64_t>(count, n));
    std::vector<iovec> iov(span);
    std::vector<mmsghdr> msgs(span);
    for (std::size_t i = 0; i < span; ++i) {
      const std::string_view line = c.line((first + i) % n);
      iov[i] = {const_cast<char*>(line.data()), line.size()};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const std::size_t batch = static_cast<std::size_t>(o.batch);
    const double deadline = start + o.timeout;
    if (Now() < start) SleepUntil(start);
    while (sent < count) {
      // Slot of the next line in the prebuilt arrays, and how many follow it without wrapping.
      const std::size_t at = static_cast<std::size_t>(sent % span);
      const std::size_t chunk =
          std::min({batch, span - at, static_cast<std::size_t>(count - sent)});
      std::size_t done = 0;
      while (done < chunk) {
        const int k = sendmmsg(s, msgs.data() + at + done, static_cast<unsigned>(chunk - done), 0);
        if (k < 0) {
          // ECONNREFUSED reports an earlier datagram that found no listener; the local queue
          // full (ENOBUFS/EAGAIN) is retried: the client, not the server, is then the limit.
          if (errno == EINTR || errno == ENOBUFS || errno == EAGAIN || errno == ECONNREFUSED) {
            ++retries;
            if (Now() > deadline) Die("udp: timed out retrying sendmmsg");
            continue;
          }
          DieErrno("sendmmsg");
        }
        for (std::size_t i = 0; i < static_cast<std::size_t>(k); ++i) {
          bytes += iov[at + done + i].iov_len;
        }
        done += static_cast<std::size_t>(k);
      }
      sent += chunk;
      if (rate > 0) {
        const double due = start + static_cast<double>(sent) / rate;
        if (due > Now()) SleepUntil(due);
      }
      if (Now() > deadline) break;
    }
    close(s);
  }
};

int RunUdp(const Options& o, const Corpus& c) {
  const std::uint64_t total = o.lines ? o.lines : c.line_count();
  const auto to = Address(o.host, o.port);
  const auto k = static_cast<std::uint64_t>(o.sockets);
  std::vector<UdpSender> senders(static_cast<std::size_t>(k));
  // Every sender starts on the same instant, after all of them built their arrays.
  const double start = Now() + 0.05 + 0.02 * static_cast<double>(k);
  std::vector<std::thread> threads;
  for (std::uint64_t j = 0; j < k; ++j) {
    threads.emplace_back([&, j] {
      const std::uint64_t first = o.offset + total * j / k;
      const std::uint64_t count = total * (j + 1) / k - total * j / k;
      senders[j].Run(o, c, to, first, count, o.rate / static_cast<double>(k), start);
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = Now() - start;
  std::uint64_t sent = 0, bytes = 0, retries = 0;
  for (const auto& s : senders) sent += s.sent, bytes += s.bytes, retries += s.retries;
  char extra[160];
  std::snprintf(extra, sizeof extra,
                ",\"offered_rate\":%.0f,\"sockets\":%d,\"batch\":%d,\"send_retries\":%" PRIu64,
                o.rate, o.sockets, o.batch, retries);
  PrintResult("udp", sent, bytes, start, seconds, extra);
  return sent == total ? 0 : 1;
}

// Latency probe. Markers carry host "lfprobe-SEQ", so each one opens a new group under the
// default scope (host, app) and leaves as a `first` event; the daemon's TCP output sends its
// NDJSON here, where the marker's sequence number finds its send time (same monotonic clock).
class Probe {
 public:
  Probe(const Options& o, const Corpus& c) : o_(o), c_(c) {}

  int Run() {
    const int listener = Listen();
    const double deadline = Now() + o_.timeout;
    // The daemon starts after it knows our port, and its output connects on its first event:
    // send one line of a group of its own, then wait for the output's connection.
    const int out = ConnectTcp(Address(o_.host, o_.port), deadline);
    WriteAll(out, "<13>Nov 22 00:00:00 lfwarmup latency: probe warm-up\n");
    const int sink = Accept(listener, deadline);
    const std::size_t markers = static_cast<std::size_t>(o_.seconds * o_.marker_rate + 0.5);
    sent_at_.assign(markers, 0.0);
    latency_.assign(markers, -1.0);
    std::thread receiver([&] { Receive(sink, markers); });
    start_ = Now();
    const std::uint64_t background = Send(out, markers);
    // Let the last markers arrive, then stop the receiver.
    const double wait_until = Now() + 5.0;
    while (received_.load() < markers_sent_ && Now() < wait_until) SleepUntil(Now() + 0.01);
    stop_.store(true);
    receiver.join();
    close(out);
    Report(background);
    // Keep reading until the daemon closes its output (at its shutdown), so that its drain
    // never waits on a peer that went away.
    DrainUntilClosed(sink, Now() + o_.timeout);
    close(sink);
    close(listener);
    return received_.load() == markers_sent_ ? 0 : 1;
  }

 private:
  int Listen() {
    const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) DieErrno("socket");
    const int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    auto a = Address(o_.host, std::max(0, o_.listen_port));
    if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) DieErrno("bind");
    if (listen(s, 4) != 0) DieErrno("listen");
    socklen_t len = sizeof a;
    getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    std::printf("{\"listening\":%d}\n", ntohs(a.sin_port));
    std::fflush(stdout);
    return s;
  }

  static int Accept(int listener, double deadline) {
    pollfd p{listener, POLLIN, 0};
    while (poll(&p, 1, 50) == 0) {
      if (Now() > deadline) Die("probe: the daemon's output never connected");
    }
    const int s = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (s < 0) DieErrno("accept");
    return s;
  }

  std::uint64_t Send(int s, std::size_t markers) {
    const int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const std::size_t n = c_.line_count();
    std::uint64_t background = 0;
    std::size_t next_marker = 0;
    std::string buf;
    const double start = start_;
    const double end = start + o_.seconds;
    const double tick = 0.001;
    for (double t = start + tick;; t += tick) {
      SleepUntil(t);
      const double now = Now();
      if (now >= end) break;
      // The offered rate, but never more than 10 ms of lines at once: when the daemon pushes
      // back (TCP), the achieved rate drops and is reported, rather than a growing burst.
      const auto due = std::min(static_cast<std::uint64_t>((now - start) * o_.rate),
                                background + static_cast<std::uint64_t>(o_.rate * 0.01));
      buf.clear();
      for (; background < due; ++background) {
        buf += c_.line(background % n);
        buf += '\n';
      }
      if (!buf.empty()) WriteAll(s, buf);
      while (next_marker < markers &&
             start + static_cast<double>(next_marker) / o_.marker_rate <= Now()) {
        char line[160];
        const int len =
            std::snprintf(line, sizeof line,
                          "<13>Nov 22 00:00:00 lfprobe-%zu latency: probe marker\n", next_marker);
        {
          std::lock_guard<std::mutex> lock(mu_);
          sent_at_[next_marker] = Now();
        }
        WriteAll(s, std::string_view(line, static_cast<std::size_t>(len)));
        ++next_marker;
      }
      if (t < Now() - tick) t = Now();  // fell behind: skip the missed ticks
    }
    markers_sent_ = next_marker;
    background_rate_ = static_cast<double>(background) / (Now() - start);
    return background;
  }

  void Receive(int s, std::size_t markers) {
    std::string pending;
    std::vector<char> buf(1 << 20);
    static constexpr std::string_view kHost = "\"host\":\"lfprobe-";
    while (!stop_.load()) {
      pollfd p{s, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const ssize_t k = read(s, buf.data(), buf.size());
      if (k <= 0) break;
      const double now = Now();
      pending.append(buf.data(), static_cast<std::size_t>(k));
      std::size_t pos = 0;
      for (;;) {
        const std::size_t nl = pending.find('\n', pos);
        if (nl == std::string::npos) break;
        const std::string_view event(pending.data() + pos, nl - pos);
        pos = nl + 1;
        if (event.find("\"kind\":\"first\"") == std::string_view::npos) continue;
        const std::size_t h = event.find(kHost);
        if (h == std::string_view::npos) continue;
        const std::size_t seq = std::strtoull(event.data() + h + kHost.size(), nullptr, 10);
        std::lock_guard<std::mutex> lock(mu_);
        if (seq < markers && latency_[seq] < 0 && sent_at_[seq] > 0) {
          latency_[seq] = now - sent_at_[seq];
          received_.fetch_add(1);
        }
      }
      pending.erase(0, pos);
    }
  }

  static void DrainUntilClosed(int s, double deadline) {
    std::vector<char> buf(1 << 16);
    while (Now() < deadline) {
      pollfd p{s, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      if (read(s, buf.data(), buf.size()) <= 0) return;
    }
  }

  void Report(std::uint64_t background) {
    std::vector<double> got;
    for (double l : latency_) {
      if (l >= 0) got.push_back(l * 1e3);
    }
    std::sort(got.begin(), got.end());
    auto pct = [&](double q) {
      if (got.empty()) return -1.0;
      const auto i = static_cast<std::size_t>(q * static_cast<double>(got.size() - 1) + 0.5);
      return got[std::min(i, got.size() - 1)];
    };
    char extra[320];
    std::snprintf(extra, sizeof extra,
                  ",\"offered_rate\":%.0f,\"background_rate\":%.0f,\"markers_sent\":%zu,"
                  "\"markers_received\":%zu,"
                  "\"latency_ms_p50\":%.3f,\"latency_ms_p99\":%.3f,\"latency_ms_max\":%.3f",
                  o_.rate, background_rate_, markers_sent_, got.size(), pct(0.5), pct(0.99),
                  got.empty() ? -1.0 : got.back());
    PrintResult("probe", background + markers_sent_, 0, start_, o_.seconds, extra);
  }

  const Options& o_;
  const Corpus& c_;
  std::mutex mu_;
  double start_ = 0;
  std::size_t markers_sent_ = 0;
  double background_rate_ = 0;
  std::vector<double> sent_at_;
  std::vector<double> latency_;
  std::atomic<std::size_t> received_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseOptions(argc, argv);
  const Corpus corpus(o.corpus);
  if (o.mode == "tcp") return RunTcp(o, corpus);
  if (o.mode == "udp") return RunUdp(o, corpus);
  if (o.mode == "relp") return RunRelp(o, corpus);
  return Probe(o, corpus).Run();
}
