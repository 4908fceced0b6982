// Private to the composition root: the Server class that `logfold serve` runs, shared by
// server.cc (startup, shutdown, timers), server_inputs.cc (inputs, TLS, metrics endpoint) and
// server_reload.cc (SIGHUP). Nothing outside daemon/ includes it.
#ifndef LOGFOLD_DAEMON_SERVER_IMPL_H_
#define LOGFOLD_DAEMON_SERVER_IMPL_H_

#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/api/live_api.h"
#include "daemon/config/config.h"
#include "daemon/inputs/file_input.h"
#include "daemon/inputs/journald_input.h"
#include "daemon/inputs/kafka_input.h"
#include "daemon/inputs/relp_listener.h"
#include "daemon/inputs/stream_input.h"
#include "daemon/inputs/tcp_listener.h"
#include "daemon/inputs/udp_listener.h"
#include "daemon/inputs/unix_listener.h"
#include "daemon/kafka_eos/kafka_exactly_once.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/memory_budget.h"
#include "daemon/runtime/metrics.h"
#include "daemon/runtime/metrics_server.h"
#include "daemon/runtime/systemd_notify.h"
#include "daemon/runtime/tls_context.h"
#include "daemon/state/state_store.h"
#include "daemon/workers/worker_pool.h"

namespace logfold {

namespace asio = boost::asio;

using SteadyClock = std::chrono::steady_clock;

// server.cc
spdlog::level::level_enum SpdLevel(LogLevel l);
std::vector<SyslogParser::Options> ParserOptions(const Config& c);

// server_inputs.cc
std::string BuildTlsContexts(const Config& c,
                             std::vector<std::shared_ptr<const TlsServerContext>>& out);
std::string BuildMetricsTls(const MetricsConfig& m, std::shared_ptr<const TlsServerContext>& out);

class Server {
 public:
  Server(Config config, std::string config_path);

  int Run();
  std::uint64_t DiskBuffered() const;
  void BeginShutdownClock();

 private:
  // Sinks (server.cc).
  static std::vector<WorkerPool::Output> Outputs(const Config& c,
                                                 const std::vector<std::shared_ptr<Sink>>& sinks);
  bool BuildSinks(const Config& c, std::vector<std::shared_ptr<Sink>>& out, std::string& error);
  static bool StopSinks(std::vector<std::shared_ptr<Sink>>& sinks,
                        const std::vector<OutputConfig>& outputs, SteadyClock::time_point deadline);

  // Inputs and the metrics endpoint (server_inputs.cc).
  void StartInputs();
  static std::string InputLabel(const InputConfig& in);
  void StartInput(std::size_t i);
  void StartMetricsServer();

  // Signals and shutdown (server.cc).
  void OnStreamDone();
  void WaitSignal();
  void BeginShutdown();
  void StopOwnThreadInputs();
  void StopInputsNow();

  // SIGHUP (server_reload.cc).
  void Reload();
  MetricsConfig LiveMetrics(const MetricsConfig& next) const;
  std::vector<InputConfig> LiveInputs(const std::vector<InputConfig>& next) const;
  bool ReplaceSinks(const Config& next);
  void HandOver(const Sink& from, const std::string& unsent);

  // Timers and the status line (server.cc).
  void ScheduleStats();
  void ScheduleOutputAccounting();
  void ScheduleWatchdog();
  std::string StatusLine() const;
  void LogStats() const;

  Config config_;
  std::string config_path_;
  Metrics metrics_;
  std::unique_ptr<MemoryBudget> budget_;  // its gauges are in metrics_: destroyed first
  asio::io_context io_;
  asio::signal_set signals_;
  asio::steady_timer stats_timer_;
  asio::steady_timer watchdog_timer_;
  asio::steady_timer budget_timer_;
  SystemdNotifier notify_;
  InheritedSockets inherited_;
  // Written on the event loop only; sinks_mu_ guards it for the hand-off threads' reads.
  std::mutex sinks_mu_;
  std::vector<std::shared_ptr<Sink>> sinks_;
  std::unique_ptr<StateStore> state_;  // before pool_: the pool uses it until destroyed
  std::unique_ptr<WorkerPool> pool_;
  std::vector<std::unique_ptr<UdpListener>> udp_;
  std::vector<std::unique_ptr<TcpListener>> tcp_;
  std::vector<std::unique_ptr<TcpListener>> tls_;  // tcp listeners over TLS
  // One per tls input, in input order: the context its listener hands new connections.
  std::vector<std::shared_ptr<const TlsServerContext>> tls_contexts_;
  std::shared_ptr<const TlsServerContext> metrics_tls_;  // null: the endpoint is plain HTTP
  std::vector<std::unique_ptr<StreamInput>> streams_;
  std::vector<std::unique_ptr<FileInput>> files_;
  std::vector<std::unique_ptr<UnixListener>> unix_;
  std::vector<std::unique_ptr<JournaldInput>> journals_;
  std::vector<std::unique_ptr<RelpListener>> relp_;
  std::vector<std::unique_ptr<KafkaInput>> kafkas_;
  std::vector<std::unique_ptr<KafkaExactlyOnce>> kafka_eos_;  // kafka inputs with exactly_once
  std::unique_ptr<MetricsServer> metrics_server_;
  std::unique_ptr<LiveApi> live_api_;  // serves the metrics listener's live view
  std::thread io_thread_;
  // Sinks a reload replaced, draining to their old destinations on their own threads.
  struct RetiringSinks {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<RetiringSinks> retiring_;
  bool shutting_down_ = false;
  SteadyClock::time_point shutdown_start_{};
  SteadyClock::duration shutdown_timeout_{};
  std::shared_ptr<std::atomic<bool>> retire_stop_ = std::make_shared<std::atomic<bool>>(false);
  std::size_t pending_drains_ = 0;
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  Metrics::Counter* reloads_ = &metrics_.GetCounter("logfold_reloads_total", "Reloads applied");
  Metrics::Counter* reload_failures_ =
      &metrics_.GetCounter("logfold_reload_failures_total", "Reloads refused (invalid config)");
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_SERVER_IMPL_H_
