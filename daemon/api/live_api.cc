// LiveApi implementation: query parsing, merging the workers' snapshots, JSON rendering.
#include "daemon/api/live_api.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <vector>

#include "daemon/runtime/wall_clock.h"

namespace logfold {
namespace {

using Json = nlohmann::json;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded value: '+' is a space, %XX a byte.
bool UrlDecode(std::string_view in, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += in[i];
    }
  }
  return true;
}

bool ContainsIgnoreCase(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return true;
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

std::string Hex64(std::uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = kDigits[v & 15];
  return s;
}

double Seconds(TimeUs us) { return static_cast<double>(us) / 1e6; }

HttpResponse Error(std::string status, std::string message) {
  HttpResponse r;
  r.status = std::move(status);
  r.body = Json{{"error", std::move(message)}}.dump() + "\n";
  return r;
}

}  // namespace

LiveApi::LiveApi(WorkerPool& pool, Metrics& metrics)
    : pool_(pool),
      metrics_(metrics),
      groups_requests_(metrics.GetCounter("logfold_api_requests_total",
                                          "Requests the live view answered, by path",
                                          R"(path="/api/groups")")),
      bad_requests_(metrics.GetCounter("logfold_api_bad_requests_total",
                                       "Live view requests refused for bad parameters")) {}

bool GroupsQuery::Parse(std::string_view query, GroupsQuery& out, std::string& error) {
  out = GroupsQuery{};
  std::string key, value;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    if (!UrlDecode(pair.substr(0, eq), key) ||
        !UrlDecode(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1),
                   value)) {
      error = "bad percent-encoding in \"" + std::string(pair) + "\"";
      return false;
    }
    if (key == "sort") {
      if (value == "rate") {
        out.sort = Sort::kRate;
      } else if (value == "count") {
        out.sort = Sort::kCount;
      } else if (value == "recent") {
        out.sort = Sort::kRecent;
      } else {
        error = "sort: \"" + value + "\" is not one of rate, count, recent";
        return false;
      }
    } else if (key == "limit") {
      std::size_t n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > kMaxLimit) {
        error =
            "limit: \"" + value + "\" is not a whole number from 1 to " + std::to_string(kMaxLimit);
        return false;
      }
      out.limit = n;
    } else if (key == "host") {
      out.host = value;
    } else if (key == "app") {
      out.app = value;
    } else if (key == "q") {
      out.q = value;
    } else {
      error = "unknown parameter \"" + key + "\" (sort, limit, host, app, q)";
      return false;
    }
  }
  return true;
}

std::string LiveApi::GroupsJson(const GroupsQuery& query) {
  const TimeUs now = WallClockNowUs();
  const auto snapshots = pool_.WatchGroups(now);
  std::vector<const GroupRow*> rows;
  std::size_t open = 0, workers_ready = 0;
  double window_s = 0;
  TimeUs oldest_taken = 0;
  for (const auto& s : snapshots) {
    if (s == nullptr) continue;
    ++workers_ready;
    open += s->open_groups;
    window_s = std::max(window_s, s->recent_window_s);
    if (oldest_taken == 0 || s->taken_us < oldest_taken) oldest_taken = s->taken_us;
    for (const GroupRow& r : s->rows) {
      if (!query.host.empty() && r.host != query.host) continue;
      if (!query.app.empty() && r.app != query.app) continue;
      if (!ContainsIgnoreCase(r.template_text, query.q)) continue;
      rows.push_back(&r);
    }
  }
  auto key = [&](const GroupRow* r) -> double {
    switch (query.sort) {
      case GroupsQuery::Sort::kCount:
        return static_cast<double>(r->count);
      case GroupsQuery::Sort::kRecent:
        return static_cast<double>(r->last_seen_us);
      case GroupsQuery::Sort::kRate:
        break;
    }
    return r->rate;
  };
  const std::size_t n = std::min(query.limit, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n), rows.end(),
                    [&](const GroupRow* a, const GroupRow* b) {
                      const double ka = key(a), kb = key(b);
                      if (ka != kb) return ka > kb;
                      return a->count != b->count ? a->count > b->count : a->id < b->id;
                    });
  Json groups = Json::array();
  for (std::size_t i = 0; i < n; ++i) {
    const GroupRow& r = *rows[i];
    groups.push_back({{"id", Hex64(r.id)},
                      {"template", r.template_text},
                      {"host", r.host},
                      {"app", r.app},
                      {"count", r.count},
                      {"count_recent", r.count_recent},
                      {"rate", r.rate},
                      {"first_seen", Seconds(r.first_seen_us)},
                      {"last_seen", Seconds(r.last_seen_us)}});
  }
  Json out = {{"now", Seconds(now)},
              {"snapshot_age_s", oldest_taken != 0 ? Seconds(now - oldest_taken) : 0.0},
              {"workers", snapshots.size()},
              {"workers_ready", workers_ready},
              {"open_groups", open},
              {"recent_window_s", window_s},
              {"matched", rows.size()},
              {"groups", std::move(groups)}};
  return out.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string LiveApi::StatsJson() const {
  const Json out = {{"now", Seconds(WallClockNowUs())},
                    {"lines_received", metrics_.Sum("logfold_received_total")},
                    {"lines_processed", metrics_.Sum("logfold_lines_processed_total")},
                    {"lines_merged", metrics_.Sum("logfold_lines_merged_total")},
                    {"events_first", metrics_.Value("logfold_events_total", R"(kind="first")")},
                    {"events_summary", metrics_.Value("logfold_events_total", R"(kind="summary")")},
                    {"lines_dropped", metrics_.Sum("logfold_dropped_total")},
                    {"open_groups", pool_.open_groups()},
                    {"queued_lines", pool_.queued_lines()}};
  return out.dump() + "\n";
}

bool LiveApi::Handle(std::string_view target, HttpResponse& response) {
  const std::size_t qmark = target.find('?');
  const std::string_view path = target.substr(0, qmark);
  const std::string_view query =
      qmark == std::string_view::npos ? std::string_view{} : target.substr(qmark + 1);
  if (path == "/api/groups") {
    ++groups_requests_;
    GroupsQuery q;
    std::string error;
    if (!GroupsQuery::Parse(query, q, error)) {
      ++bad_requests_;
      response = Error("400 Bad Request", error);
      return true;
    }
    response.body = GroupsJson(q);
    return true;
  }
  if (path == "/api/stats") {
    if (!query.empty()) {
      ++bad_requests_;
      response = Error("400 Bad Request", "/api/stats takes no parameters");
      return true;
    }
    response.body = StatsJson();
    return true;
  }
  if (path == "/" || path == "/index.html") {
    response.content_type = "text/html; charset=utf-8";
    response.body = std::string(LivePageHtml());
    return true;
  }
  return false;
}

}  // namespace logfold
