// Benchmark input: a deterministic generator of realistic syslog lines (22 templates of
// /work/shared/corpus/gen_corpus.py with their variable fields), or LOGFOLD_BENCH_CORPUS=FILE.
#ifndef LOGFOLD_BENCH_CORPUS_LINES_H_
#define LOGFOLD_BENCH_CORPUS_LINES_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/log_record.h"
#include "pipeline/syslog_parser.h"

namespace logfold {
namespace corpus {

// One generated line: the header fields a syslog parser would produce, and the message.
struct Line {
  std::string host;
  std::string app;
  std::string message;
};

// Generates lines the way gen_corpus.py does: Zipf-like template popularity, small IP pools
// so values recur, per-host PIDs, a clock advancing 0..2 ms per line. Only std::mt19937_64
// output is used (no std distributions), so the lines are the same on every platform.
class Generator {
 public:
  explicit Generator(std::uint64_t seed = 20240301) : rng_(seed) {
    // Zipf-like weights 1/(rank+1)^0.9, ranks shuffled over the templates.
    std::vector<std::size_t> order(kTemplates.size());
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[Below(i)]);
    cumulative_.resize(kTemplates.size());
    std::vector<double> w(kTemplates.size());
    for (std::size_t rank = 0; rank < order.size(); ++rank) {
      w[order[rank]] = 1.0 / std::pow(static_cast<double>(rank + 1), 0.9);
    }
    std::partial_sum(w.begin(), w.end(), cumulative_.begin());
    for (int i = 0; i < 400; ++i) {
      ip_pool_.push_back(std::to_string(Range(1, 223)) + "." + std::to_string(Range(0, 255)) + "." +
                         std::to_string(Range(0, 255)) + "." + std::to_string(Range(1, 254)));
    }
    for (int i = 0; i < 60; ++i) {
      int_pool_.push_back("10." + std::to_string(Range(0, 3)) + "." +
                          std::to_string(Range(0, 255)) + "." + std::to_string(Range(1, 254)));
    }
    for (int i = 1; i <= 12; ++i) hosts_.push_back(Numbered("web", i));
    for (int i = 1; i <= 4; ++i) hosts_.push_back(Numbered("db", i));
    for (const char* h : {"cache01", "lb01", "lb02", "mail01"}) hosts_.emplace_back(h);
    host_pid_.resize(hosts_.size() * kTemplates.size());
    for (std::int64_t& pid : host_pid_) pid = Range(300, 65000);
  }

  Line Next() {
    clock_us_ += Range(0, 2000);
    const double pick = Uniform() * cumulative_.back();
    const std::size_t t = static_cast<std::size_t>(
        std::upper_bound(cumulative_.begin(), cumulative_.end(), pick) - cumulative_.begin());
    const Template& tpl = kTemplates[std::min(t, kTemplates.size() - 1)];
    const std::size_t host = Below(hosts_.size());
    const std::int64_t pid =
        Uniform() < 0.9 ? host_pid_[host * kTemplates.size() + t] : Range(300, 65000);
    Line line;
    line.host = hosts_[host];
    line.app = tpl.app;
    std::string_view text = tpl.text;
    while (!text.empty()) {
      const std::size_t open = text.find('{');
      if (open == std::string_view::npos) {
        line.message += text;
        break;
      }
      const std::size_t close = text.find('}', open);
      line.message += text.substr(0, open);
      AppendField(text.substr(open + 1, close - open - 1), pid, line.message);
      text.remove_prefix(close + 1);
    }
    return line;
  }

 private:
  struct Template {
    const char* app;
    const char* text;
  };
  static constexpr std::array<Template, 22> kTemplates = {{
      {"sshd", "Accepted publickey for {user} from {ip} port {port} ssh2: RSA SHA256:{b64}"},
      {"sshd", "Accepted password for {user} from {ip} port {port} ssh2"},
      {"sshd", "Failed password for invalid user {user} from {ip} port {port} ssh2"},
      {"sshd", "pam_unix(sshd:session): session opened for user {user}(uid={uid}) by (uid=0)"},
      {"sshd", "Connection closed by authenticating user {user} {ip} port {port} [preauth]"},
      {"sudo",
       "{user} : TTY=pts/{tty} ; PWD=/home/{user} ; USER=root ; COMMAND=/usr/bin/systemctl "
       "restart {svc}"},
      {"CRON", "({user}) CMD (/usr/local/bin/backup.sh --target s3://bkt-{hex6} >/dev/null 2>&1)"},
      {"kernel",
       "[UFW BLOCK] IN={iface} OUT= MAC={mac} SRC={ip} DST={ip2} LEN={len} TTL={ttl} PROTO=TCP "
       "SPT={port} DPT={dport}"},
      {"kernel", "Out of memory: Killed process {pid} (java) total-vm:{kb}kB, anon-rss:{kb2}kB"},
      {"systemd", "Started {svc}."},
      {"systemd", "{svc}: Main process exited, code=exited, status={rc}/FAILURE"},
      {"nginx",
       "{ip} - - \"{method} {path}?id={id} HTTP/1.1\" {status} {bytes} \"-\" \"Mozilla/5.0\" "
       "rt={sec}"},
      {"nginx",
       "upstream timed out (110: Connection timed out) while reading response header from "
       "upstream, client: {ip}, request: \"{method} {path} HTTP/1.1\""},
      {"app",
       "request completed method={method} path={path} status={status} duration_ms={ms} "
       "user={user} req_id={uuid}"},
      {"app", "cache miss key=user:{id}:profile ttl={ttl}s backend=redis://{ip2}:6379"},
      {"app", "retrying connection to db {ip2}:5432 attempt {rc}/5 after {ms}ms"},
      {"worker", "processed batch id={id} items={len} in {ms}ms (rate={rate}/s)"},
      {"postgres",
       "LOG:  duration: {ms}.{rc} ms  statement: SELECT * FROM {table} WHERE id = {id}"},
      {"postfix/smtp",
       "{hex10}: to=<{user}@example.org>, relay=mx.example.org[{ip2}]:25, delay={sec}, "
       "status=sent (250 OK)"},
      {"dockerd",
       "time=\"{iso}\" level=info msg=\"ignoring event\" container={hex10} "
       "module=libcontainerd namespace=moby"},
      {"dhclient", "DHCPACK of {ip2} from {ip} (xid=0x{hex6})"},
      {"redis-server", "{pid}:M {clock} * Background saving started by pid {pid2}"},
  }};

  static constexpr const char* kUsers[] = {
      "alice",    "bob",      "carol",   "dave",   "erin",     "frank",  "grace",  "heidi",
      "ivan",     "judy",     "mallory", "niaj",   "olivia",   "peggy",  "rupert", "sybil",
      "trent",    "victor",   "walter",  "root",   "admin",    "deploy", "backup", "nagios",
      "www-data", "postgres", "jenkins", "ubuntu", "ec2-user", "git"};
  static constexpr const char* kPaths[] = {
      "/api/v1/users",  "/api/v1/orders",    "/api/v2/search", "/healthz",     "/login",
      "/static/app.js", "/static/style.css", "/metrics",       "/api/v1/cart", "/favicon.ico"};
  static constexpr const char* kMethods[] = {"GET", "GET", "GET", "POST", "PUT", "DELETE"};
  static constexpr int kStatus[] = {200, 200, 200, 200, 201, 204, 301, 304,
                                    400, 401, 403, 404, 500, 502, 503};
  static constexpr const char* kTables[] = {"users",  "orders",   "sessions",
                                            "events", "invoices", "audit_log"};
  static constexpr const char* kIfaces[] = {"eth0", "eth1", "ens3", "bond0"};
  static constexpr const char* kServices[] = {
      "nginx.service",        "sshd.service",   "cron.service",        "postgresql.service",
      "redis-server.service", "docker.service", "app-worker@1.service"};
  static constexpr int kDports[] = {22, 80, 443, 3306, 5432, 6379, 8080};
  static constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  static constexpr char kHexDigits[] = "0123456789abcdef";
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

  template <typename T, std::size_t N>
  const T& Pick(const T (&a)[N]) {
    return a[Below(N)];
  }
  std::size_t Below(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  std::int64_t Range(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  double Uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
  double LogNormal(double mu, double sigma) {
    const double u1 = 1.0 - Uniform(), u2 = Uniform();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return std::exp(mu + sigma * z);
  }
  static std::string Numbered(const char* prefix, int i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%02d", prefix, i);
    return buf;
  }
  void Hex(int n, bool upper, std::string& out) {
    for (int i = 0; i < n; ++i) {
      const char c = kHexDigits[Below(16)];
      out += upper && c >= 'a' ? static_cast<char>(c - 'a' + 'A') : c;
    }
  }
  void Seconds(double v, std::string& out) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    out += buf;
  }

  void AppendField(std::string_view f, std::int64_t pid, std::string& out) {
    if (f == "user") {
      out += Pick(kUsers);
    } else if (f == "ip") {
      out += ip_pool_[Below(ip_pool_.size())];
    } else if (f == "ip2") {
      out += int_pool_[Below(int_pool_.size())];
    } else if (f == "port") {
      out += std::to_string(Range(1024, 65535));
    } else if (f == "dport") {
      out += std::to_string(Pick(kDports));
    } else if (f == "b64") {
      for (int i = 0; i < 43; ++i) out += kB64[Below(64)];
    } else if (f == "uid") {
      out += std::to_string(Range(1000, 1030));
    } else if (f == "tty") {
      out += std::to_string(Range(0, 9));
    } else if (f == "svc") {
      out += Pick(kServices);
    } else if (f == "hex6") {
      Hex(6, false, out);
    } else if (f == "hex10") {
      Hex(10, true, out);
    } else if (f == "iface") {
      out += Pick(kIfaces);
    } else if (f == "mac") {
      for (int i = 0; i < 14; ++i) {
        if (i > 0) out += ':';
        Hex(2, false, out);
      }
    } else if (f == "len") {
      out += std::to_string(Range(40, 1500));
    } else if (f == "ttl") {
      out += std::to_string(Range(30, 3600));
    } else if (f == "pid") {
      out += std::to_string(pid);
    } else if (f == "pid2") {
      out += std::to_string(Range(300, 65000));
    } else if (f == "kb") {
      out += std::to_string(Range(1'000'000, 9'000'000));
    } else if (f == "kb2") {
      out += std::to_string(Range(500'000, 4'000'000));
    } else if (f == "rc") {
      out += std::to_string(Range(1, 5));
    } else if (f == "ms") {
      out += std::to_string(static_cast<std::int64_t>(LogNormal(3.5, 1.2)));
    } else if (f == "method") {
      out += Pick(kMethods);
    } else if (f == "path") {
      out += Pick(kPaths);
    } else if (f == "id") {
      out += std::to_string(Range(1, 999999));
    } else if (f == "status") {
      out += std::to_string(Pick(kStatus));
    } else if (f == "bytes") {
      out += std::to_string(Range(0, 250000));
    } else if (f == "sec") {
      Seconds(LogNormal(-2.0, 1.0), out);
    } else if (f == "uuid") {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%08llx-%04llx-4%03llx-%04llx-%012llx",
                    static_cast<unsigned long long>(Range(0, 0xffffffffLL)),
                    static_cast<unsigned long long>(Range(0, 0xffff)),
                    static_cast<unsigned long long>(Range(0, 0xfff)),
                    static_cast<unsigned long long>(Range(0x8000, 0xbfff)),
                    static_cast<unsigned long long>(Range(0, 0xffffffffffffLL)));
      out += buf;
    } else if (f == "table") {
      out += Pick(kTables);
    } else if (f == "rate") {
      out += std::to_string(Range(100, 20000));
    } else if (f == "iso" || f == "clock") {
      const std::time_t secs = static_cast<std::time_t>(kStartSeconds + clock_us_ / 1'000'000);
      const long long us = clock_us_ % 1'000'000;
      std::tm tm{};
      gmtime_r(&secs, &tm);
      char buf[64];
      if (f == "iso") {
        std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us * 1000);
      } else {
        std::snprintf(buf, sizeof buf, "%02d %s %04d %02d:%02d:%02d.%03lld", tm.tm_mday,
                      kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec,
                      us / 1000);
      }
      out += buf;
    } else {
      out += '{';
      out += f;
      out += '}';
    }
  }

  static constexpr std::int64_t kStartSeconds = 1'709'251'200;  // 2024-03-01T00:00:00Z
  std::mt19937_64 rng_;
  std::vector<double> cumulative_;
  std::vector<std::string> ip_pool_, int_pool_, hosts_;
  std::vector<std::int64_t> host_pid_;
  std::int64_t clock_us_ = 0;
};

// `n` lines: the first n lines of the file named by LOGFOLD_BENCH_CORPUS (parsed as syslog,
// raw when a line has no header; fewer if the file is shorter), else n generated lines.
inline std::vector<Line> Load(std::size_t n, std::uint64_t seed = 20240301) {
  std::vector<Line> lines;
  lines.reserve(n);
  const char* path = std::getenv("LOGFOLD_BENCH_CORPUS");
  if (path != nullptr && *path != '\0') {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "LOGFOLD_BENCH_CORPUS: cannot open %s\n", path);
      std::exit(1);
    }
    const SyslogParser parser;
    LogRecord record;
    std::string text;
    while (lines.size() < n && std::getline(in, text)) {
      parser.Parse(text, 0, record);
      lines.push_back(Line{record.hostname, record.app_name, record.message});
    }
    if (lines.empty()) {
      std::fprintf(stderr, "LOGFOLD_BENCH_CORPUS: %s has no lines\n", path);
      std::exit(1);
    }
    return lines;
  }
  Generator generator(seed);
  while (lines.size() < n) lines.push_back(generator.Next());
  return lines;
}

// The lines as records, as a parser would hand them to the merger (arrival 10 us apart).
inline std::vector<LogRecord> ToRecords(const std::vector<Line>& lines) {
  std::vector<LogRecord> records(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    records[i].hostname = lines[i].host;
    records[i].app_name = lines[i].app;
    records[i].message = lines[i].message;
    records[i].raw = lines[i].message;
    records[i].arrival_us = static_cast<TimeUs>(i) * 10;
  }
  return records;
}

}  // namespace corpus
}  // namespace logfold

#endif  // LOGFOLD_BENCH_CORPUS_LINES_H_
