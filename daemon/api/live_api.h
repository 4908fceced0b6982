// LiveApi: the live view on the metrics listener. GET /api/groups (the open groups now, from
// the workers' snapshots), GET /api/stats (totals) and GET / (a self-contained page showing
// both). Each request does bounded work: it never walks the groups, the workers do.
#ifndef LOGFOLD_DAEMON_API_LIVE_API_H_
#define LOGFOLD_DAEMON_API_LIVE_API_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "daemon/runtime/metrics.h"
#include "daemon/runtime/metrics_server.h"
#include "daemon/workers/worker_pool.h"

namespace logfold {

// GET /api/groups parameters, parsed and checked.
struct GroupsQuery {
  enum class Sort { kRate, kCount, kRecent };
  Sort sort = Sort::kRate;
  std::size_t limit = 50;  // 1..kMaxLimit
  std::string host, app;   // exact match when set
  std::string q;           // substring of the template, case-insensitive, when set
  static constexpr std::size_t kMaxLimit = 1000;

  // Parses the query string (after '?'); false with `error` saying which parameter is wrong.
  static bool Parse(std::string_view query, GroupsQuery& out, std::string& error);
};

class LiveApi {
 public:
  LiveApi(WorkerPool& pool, Metrics& metrics);

  // An HttpHandler for the metrics listener.
  bool Handle(std::string_view target, HttpResponse& response);

  std::string GroupsJson(const GroupsQuery& query);
  std::string StatsJson() const;

 private:
  WorkerPool& pool_;
  const Metrics& metrics_;
  Metrics::Counter& groups_requests_;  // answered GET /api/groups, bad ones included
  Metrics::Counter& bad_requests_;
};

// The page served at "/" (daemon/api/web/index.html, embedded at build time).
std::string_view LivePageHtml();

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_API_LIVE_API_H_
