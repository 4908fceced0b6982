// `logfold top` implementation: a plain HTTP/1.1 GET over a loopback or LAN socket, the JSON
// parsed with nlohmann/json, and the screen drawn with ncurses (Debian's libncurses: the
// terminal library every Debian system has; FTXUI is not packaged in Debian 12).
#include "daemon/commands/top_command.h"

#include <curses.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

namespace logfold {
namespace {

using Json = nlohmann::json;

struct TopOptions {
  std::string host = "127.0.0.1";
  std::string port = "9514";
  bool once = false;
  std::string sort = "rate";
  int limit = 0;  // 0: as many as fit (interactive) or 30 (--once)
  double interval_s = 2;
  std::string filter;
};

constexpr char kUsage[] =
    "usage: logfold top [--url http://HOST:PORT] [--once] [--sort rate|count|recent]\n"
    "                   [--limit N] [--interval SECONDS] [--filter TEXT]\n"
    "Shows a running daemon's open groups, biggest first (its metrics listener, default\n"
    "http://127.0.0.1:9514). Keys: r rate, c count, n newest, / filter, q quit.\n";

bool ParseUrl(const std::string& url, TopOptions& o, std::string& error) {
  std::string_view u = url;
  if (u.rfind("http://", 0) == 0) {
    u.remove_prefix(7);
  } else if (u.find("://") != std::string_view::npos) {
    error = "--url: only http:// is supported";
    return false;
  }
  u = u.substr(0, u.find('/'));
  const std::size_t colon = u.rfind(':');
  if (colon == std::string_view::npos || u.empty() || colon + 1 == u.size()) {
    error = "--url: expected http://HOST:PORT";
    return false;
  }
  o.host = std::string(u.substr(0, colon));
  o.port = std::string(u.substr(colon + 1));
  if (o.host.size() > 2 && o.host.front() == '[' && o.host.back() == ']') {
    o.host = o.host.substr(1, o.host.size() - 2);
  }
  return true;
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// GET `path`; the body on 2xx, else false with `error` (the server's message when it sent one).
bool HttpGet(const TopOptions& o, const std::string& path, std::string& body, std::string& error) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (const int rc = getaddrinfo(o.host.c_str(), o.port.c_str(), &hints, &res); rc != 0) {
    error = o.host + ": " + gai_strerror(rc);
    return false;
  }
  int fd = -1;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) {
    error = "cannot connect to " + o.host + ":" + o.port + " (is logfold serving metrics?)";
    return false;
  }
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: " + o.host + "\r\nConnection: close\r\n\r\n";
  std::string response;
  bool ok = send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size());
  char buf[16384];
  for (ssize_t n; ok && (n = recv(fd, buf, sizeof buf, 0)) > 0;) {
    response.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  const std::size_t header_end = response.find("\r\n\r\n");
  if (!ok || header_end == std::string::npos || response.rfind("HTTP/1.", 0) != 0) {
    error = "no HTTP response from " + o.host + ":" + o.port;
    return false;
  }
  body = response.substr(header_end + 4);
  if (response.compare(9, 1, "2") != 0) {
    const Json j = Json::parse(body, nullptr, false);
    error = j.is_object() && j.contains("error") ? j["error"].get<std::string>()
                                                 : response.substr(0, response.find('\r'));
    return false;
  }
  return true;
}

std::string Human(double v) {
  char buf[32];
  if (v >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1fM", v / 1e6);
  } else if (v >= 1e4) {
    std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  } else if (v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  }
  return buf;
}

std::string Age(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.0fs", std::max(0.0, s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%.0fm", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fh", s / 3600);
  }
  return buf;
}

// One screen's worth: the header lines and one line per group, each cut to `width`.
std::vector<std::string> Render(const Json& groups, const Json& stats, const TopOptions& o,
                                std::size_t width) {
  std::vector<std::string> lines;
  char buf[512];
  std::snprintf(
      buf, sizeof buf, "logfold top - lines in %s, events out %s, open groups %s, dropped %s",
      Human(stats.value("lines_received", 0.0)).c_str(),
      Human(stats.value("events_first", 0.0) + stats.value("events_summary", 0.0)).c_str(),
      Human(stats.value("open_groups", 0.0)).c_str(),
      Human(stats.value("lines_dropped", 0.0)).c_str());
  lines.emplace_back(buf);
  std::snprintf(buf, sizeof buf, "sort: %s%s%s   (r rate, c count, n newest, / filter, q quit)",
                o.sort.c_str(), o.filter.empty() ? "" : "   filter: ", o.filter.c_str());
  lines.emplace_back(buf);
  std::snprintf(buf, sizeof buf, "%9s %9s %9s  %-16s %-14s %6s  %s", "RATE/s", "COUNT", "~LASTMIN",
                "HOST", "APP", "AGE", "TEMPLATE");
  lines.emplace_back(buf);
  const double now = groups.value("now", 0.0);
  for (const Json& g : groups["groups"]) {
    std::snprintf(buf, sizeof buf, "%9s %9s %9s  %-16.16s %-14.14s %6s  ",
                  Human(g.value("rate", 0.0)).c_str(), Human(g.value("count", 0.0)).c_str(),
                  Human(g.value("count_recent", 0.0)).c_str(),
                  g.value("host", std::string()).c_str(), g.value("app", std::string()).c_str(),
                  Age(now - g.value("first_seen", now)).c_str());
    lines.push_back(buf + g.value("template", std::string()));
  }
  for (std::string& l : lines) {
    if (l.size() > width) l.resize(width);
  }
  return lines;
}

bool Fetch(const TopOptions& o, int limit, Json& groups, Json& stats, std::string& error) {
  std::string path = "/api/groups?sort=" + o.sort + "&limit=" + std::to_string(limit);
  if (!o.filter.empty()) path += "&q=" + UrlEncode(o.filter);
  std::string body;
  if (!HttpGet(o, path, body, error)) return false;
  groups = Json::parse(body, nullptr, false);
  if (!HttpGet(o, "/api/stats", body, error)) return false;
  stats = Json::parse(body, nullptr, false);
  if (!groups.is_object() || !groups.contains("groups") || !stats.is_object()) {
    error = "unexpected answer (not logfold's live view?)";
    return false;
  }
  return true;
}

int RunOnce(const TopOptions& o, std::FILE* out, std::FILE* err) {
  Json groups, stats;
  std::string error;
  // Workers take their first snapshot once somebody asks: give them a few seconds to.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (true) {
    if (!Fetch(o, o.limit > 0 ? o.limit : 30, groups, stats, error)) {
      std::fprintf(err, "logfold top: %s\n", error.c_str());
      return 1;
    }
    if (groups.value("workers_ready", 0) >= groups.value("workers", 0) ||
        std::chrono::steady_clock::now() >= deadline) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (const std::string& l : Render(groups, stats, o, 4096)) std::fprintf(out, "%s\n", l.c_str());
  return 0;
}

int RunInteractive(TopOptions o, std::FILE* err) {
  if (initscr() == nullptr) {
    std::fputs("logfold top: cannot open the terminal (try --once)\n", err);
    return 1;
  }
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  std::string error;
  bool quit = false;
  while (!quit) {
    const int rows = std::max(LINES, 4), cols = std::max(COLS, 20);
    Json groups, stats;
    erase();
    if (Fetch(o, o.limit > 0 ? o.limit : std::min(rows - 3, 1000), groups, stats, error)) {
      const auto lines = Render(groups, stats, o, static_cast<std::size_t>(cols));
      for (std::size_t i = 0; i < lines.size() && static_cast<int>(i) < rows; ++i) {
        if (i == 2) attron(A_REVERSE);
        mvaddstr(static_cast<int>(i), 0, lines[i].c_str());
        if (i == 2) attroff(A_REVERSE);
      }
    } else {
      mvaddstr(0, 0, ("logfold top: " + error).substr(0, static_cast<std::size_t>(cols)).c_str());
    }
    refresh();
    timeout(static_cast<int>(o.interval_s * 1000));
    const int key = getch();
    switch (key) {
      case 'q':
      case 'Q':
        quit = true;
        break;
      case 'r':
        o.sort = "rate";
        break;
      case 'c':
        o.sort = "count";
        break;
      case 'n':
        o.sort = "recent";
        break;
      case '/': {
        char text[256] = {};
        mvaddstr(rows - 1, 0, "filter (empty clears): ");
        clrtoeol();
        echo();
        curs_set(1);
        timeout(-1);
        getnstr(text, sizeof text - 1);
        noecho();
        curs_set(0);
        o.filter = text;
        break;
      }
      default:
        break;
    }
  }
  endwin();
  return 0;
}

}  // namespace

int RunTop(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  TopOptions o;
  std::string error;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, out);
      return 0;
    } else if (a == "--once") {
      o.once = true;
    } else if (a == "--url" && has_value) {
      if (!ParseUrl(args[++i], o, error)) {
        std::fprintf(err, "logfold top: %s\n", error.c_str());
        return 2;
      }
    } else if (a == "--sort" && has_value) {
      o.sort = args[++i];
      if (o.sort != "rate" && o.sort != "count" && o.sort != "recent") {
        std::fprintf(err, "logfold top: --sort: \"%s\" is not one of rate, count, recent\n",
                     o.sort.c_str());
        return 2;
      }
    } else if (a == "--limit" && has_value) {
      const std::string& v = args[++i];
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), o.limit);
      if (ec != std::errc() || end != v.data() + v.size() || o.limit < 1 || o.limit > 1000) {
        std::fprintf(err, "logfold top: --limit: \"%s\" is not a number from 1 to 1000\n",
                     v.c_str());
        return 2;
      }
    } else if (a == "--interval" && has_value) {
      const std::string& v = args[++i];
      char* end = nullptr;
      o.interval_s = std::strtod(v.c_str(), &end);
      if (end != v.c_str() + v.size() || !(o.interval_s >= 0.1 && o.interval_s <= 3600)) {
        std::fprintf(err, "logfold top: --interval: \"%s\" is not seconds from 0.1 to 3600\n",
                     v.c_str());
        return 2;
      }
    } else if (a == "--filter" && has_value) {
      o.filter = args[++i];
    } else {
      std::fprintf(err, "logfold top: unexpected argument \"%s\"\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  return o.once ? RunOnce(o, out, err) : RunInteractive(o, err);
}

}  // namespace logfold
