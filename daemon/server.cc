// `logfold serve`: the Server's startup, signals, shutdown, sinks and timers (inputs, TLS and
// the metrics endpoint: server_inputs.cc; SIGHUP: server_reload.cc). One io_context thread runs
// listeners, signals, timers and the metrics endpoint; worker threads run the engine; each sink
// has its own thread. Shutdown order: inputs stop and drain into the queues, workers drain and
// close every group, sinks flush.
#include "daemon/server.h"

#include <malloc.h>
#include <signal.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "daemon/runtime/thread_name.h"
#include "daemon/server_impl.h"

namespace logfold {

spdlog::level::level_enum SpdLevel(LogLevel l) {
  switch (l) {
    case LogLevel::kTrace:
      return spdlog::level::trace;
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kCritical:
      return spdlog::level::critical;
    case LogLevel::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

std::vector<SyslogParser::Options> ParserOptions(const Config& c) {
  std::vector<SyslogParser::Options> v;
  for (const InputConfig& in : c.inputs) v.push_back(in.parser);
  return v;
}

Server::Server(Config config, std::string config_path)
    : config_(std::move(config)),
      config_path_(std::move(config_path)),
      signals_(io_, SIGINT, SIGTERM, SIGHUP),
      stats_timer_(io_),
      watchdog_timer_(io_),
      budget_timer_(io_) {}

int Server::Run() {
  std::string error;
  if (!BuildSinks(config_, sinks_, error)) {
    spdlog::critical("{}", error);
    return 1;
  }
  budget_ = std::make_unique<MemoryBudget>(ResolveMemoryBudget(config_.limits.memory));
  budget_->ExportTo(metrics_);
  spdlog::info("memory budget (limits.memory): {} bytes{}", budget_->limit(),
               config_.limits.memory ? "" : " (auto)");
  for (const ConfigError& w : ConfigWarnings(config_, budget_->limit())) {
    spdlog::warn("config warning: {}: {}", w.path, w.reason);
  }
  WorkerPool::Options po;
  static_cast<WorkerOptions&>(po) = config_.workers;
  po.event_time = config_.engine.time == TimeSource::kEvent;
  po.merger = config_.engine.merger;
  // Random per run, so group ids from two runs of the daemon (rows in one log store) do not
  // collide; `logfold replay` keeps seed 0 and stays reproducible.
  std::random_device entropy;
  po.merger.id_seed = (std::uint64_t{entropy()} << 32) | entropy();
  po.inputs = ParserOptions(config_);
  for (const InputConfig& in : config_.inputs)
    po.waiting_inputs.push_back(in.type != InputType::kUdp);
  RecoveredState recovered;
  if (!config_.state.directory.empty()) {
    state_ = std::make_unique<StateStore>(config_.state, WorkerPool::ResolvedThreads(po.threads),
                                          metrics_);
    if (!state_->Open(recovered, error)) {
      spdlog::critical("cannot start: {}", error);
      StopSinks(sinks_, config_.outputs, SteadyClock::now() + std::chrono::seconds(1));
      return 1;
    }
  }
  pool_ = std::make_unique<WorkerPool>(po, Outputs(config_, sinks_), metrics_, budget_.get(),
                                       state_.get());
  try {
    std::string tls_error = BuildTlsContexts(config_, tls_contexts_);
    if (tls_error.empty()) tls_error = BuildMetricsTls(config_.metrics, metrics_tls_);
    if (!tls_error.empty()) throw std::runtime_error(tls_error);
    StartInputs();
    StartMetricsServer();
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    StopInputsNow();
    pool_->Stop();
    StopSinks(sinks_, config_.outputs, SteadyClock::now() + std::chrono::seconds(1));
    return 1;
  }
  if (!pool_->Start(&recovered, &error)) {
    spdlog::critical("cannot start: state directory: {}", error);
    StopInputsNow();
    pool_->Stop();
    StopSinks(sinks_, config_.outputs, SteadyClock::now() + std::chrono::seconds(1));
    return 1;
  }
  recovered = RecoveredState{};  // the restored state is in the engine now
  for (auto& s : streams_) s->Start();
  for (auto& f : files_) f->Start();
  for (auto& u : unix_) u->Start();
  for (auto& j : journals_) j->Start();
  for (auto& r : relp_) r->Start();
  for (auto& k : kafkas_) k->Start();
  for (auto& k : kafka_eos_) k->Start();
  WaitSignal();
  ScheduleStats();
  ScheduleWatchdog();
  ScheduleOutputAccounting();
  spdlog::info("logfold serving: {} inputs, {} outputs, {} workers", config_.inputs.size(),
               config_.outputs.size(), pool_->threads());
  notify_.Ready(StatusLine());
  io_thread_ = std::thread([this] { io_.run(); });
  NameThread(io_thread_, "lf-io");
  io_thread_.join();
  if (!shutting_down_) BeginShutdownClock();
  // Inputs are stopped and drained into the queues: now the engine, then the sinks. The
  // workers get until half the bound; the sinks deliver or spill until just before it.
  std::atomic<bool> pool_done{false};
  std::thread deadline([&] {
    std::unique_lock lock(done_mu_);
    if (!done_cv_.wait_until(lock, shutdown_start_ + shutdown_timeout_ / 2,
                             [&] { return pool_done.load(); })) {
      spdlog::error(
          "shutdown: workers still blocked on full sinks after {} ms; giving up "
          "their pending output",
          std::chrono::duration_cast<std::chrono::milliseconds>(shutdown_timeout_ / 2).count());
      pool_->AbandonBlockedOutput();
    }
  });
  pool_->Stop();
  {
    std::lock_guard lock(done_mu_);
    pool_done.store(true);
  }
  done_cv_.notify_all();
  deadline.join();
  streams_.clear();
  unix_.clear();
  journals_.clear();
  relp_.clear();
  kafkas_.clear();
  kafka_eos_.clear();
  // Sinks a reload replaced hand what they hold to their successors while those still
  // accept; each is bounded by its own drain deadline and this flag.
  retire_stop_->store(true);
  for (RetiringSinks& r : retiring_) r.thread.join();
  const auto margin =
      std::min<SteadyClock::duration>(shutdown_timeout_ / 10, std::chrono::seconds(1));
  const bool flushed =
      StopSinks(sinks_, config_.outputs, shutdown_start_ + shutdown_timeout_ - margin);
  // Every group was summarised and delivered: nothing is left to restore. When an output
  // could not take everything, the last checkpoints stay, so the next start re-emits
  // rather than loses what they hold.
  if (flushed && state_ != nullptr && !pool_->CommitFinalState(error)) {
    spdlog::error("shutdown: could not clear the state directory: {}", error);
  }
  // The outputs wrote what the followed files delivered: their last positions are safe.
  for (auto& f : files_) f->CheckpointSettled();
  files_.clear();
  // The final counters, in the periodic stats line's format, then how long the stop took.
  spdlog::info(
      "stats: {}, events {}, dropped {}, queued {}, lost events {}, lost lines {}, "
      "disk-buffered bytes {}",
      StatusLine(), metrics_.Sum("logfold_events_total"), metrics_.Sum("logfold_dropped_total"),
      pool_->queued_lines(), metrics_.Sum("logfold_output_lost_events_total"),
      metrics_.Sum("logfold_output_lost_lines_total"), DiskBuffered());
  spdlog::info(
      "logfold stopped after {} ms{}",
      std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - shutdown_start_)
          .count(),
      flushed ? "" : " (some output could not be delivered)");
  return 0;
}

// After the sinks stopped, what they hold is what their disk buffers kept.
std::uint64_t Server::DiskBuffered() const {
  std::uint64_t n = 0;
  for (const auto& s : sinks_) n += s->buffered_bytes();
  return n;
}

void Server::BeginShutdownClock() {
  shutdown_start_ = SteadyClock::now();
  shutdown_timeout_ = std::chrono::microseconds(config_.workers.shutdown_timeout_us);
}

std::vector<WorkerPool::Output> Server::Outputs(const Config& c,
                                                const std::vector<std::shared_ptr<Sink>>& sinks) {
  std::vector<WorkerPool::Output> v;
  for (std::size_t i = 0; i < sinks.size(); ++i) {
    v.push_back(
        WorkerPool::Output{sinks[i].get(), c.outputs[i].sink, c.outputs[i].syslog.app_name});
  }
  return v;
}

bool Server::BuildSinks(const Config& c, std::vector<std::shared_ptr<Sink>>& out,
                        std::string& error) {
  for (const OutputConfig& o : c.outputs) {
    std::string e;
    auto sink = MakeSink(o, metrics_, e);
    if (!sink) {
      error = "outputs." + o.sink.name + ": " + e;
      StopSinks(out, c.outputs, SteadyClock::now());
      out.clear();
      return false;
    }
    out.push_back(std::move(sink));
  }
  return true;
}

// Flushes and closes `sinks` (built from `outputs`, in order) by `deadline`; what they
// cannot deliver by then goes to their disk buffers or is counted as lost. An output that
// may drop when full gets only its block_timeout to drain: it was allowed to lose events
// anyway, and must not hold the shutdown for the lossless ones. The sinks stop in
// parallel, so the bound holds however many outputs are dead.
bool Server::StopSinks(std::vector<std::shared_ptr<Sink>>& sinks,
                       const std::vector<OutputConfig>& outputs, SteadyClock::time_point deadline) {
  const auto now = SteadyClock::now();
  std::vector<std::thread> stoppers;
  std::vector<char> ok(sinks.size(), 0);
  for (std::size_t i = 0; i < sinks.size(); ++i) {
    auto d = deadline;
    if (i < outputs.size() && outputs[i].sink.when_full == WhenFull::kDrop) {
      d = std::min(d, now + std::chrono::microseconds(outputs[i].sink.block_timeout_us));
    }
    stoppers.emplace_back([&, i, d] { ok[i] = sinks[i]->Stop(d) ? 1 : 0; });
  }
  for (std::thread& t : stoppers) t.join();
  return std::all_of(ok.begin(), ok.end(), [](char c) { return c != 0; });
}

// Stream inputs (stdin, files) end by themselves; when they were the only inputs, the
// daemon has nothing more to do once they are all read.
void Server::OnStreamDone() {
  for (const auto& s : streams_) {
    if (!s->finished()) return;
  }
  if (udp_.empty() && tcp_.empty() && tls_.empty() && files_.empty() && unix_.empty() &&
      journals_.empty() && relp_.empty() && kafkas_.empty() && kafka_eos_.empty()) {
    BeginShutdown();
  }
}

void Server::WaitSignal() {
  signals_.async_wait([this](boost::system::error_code ec, int signo) {
    if (ec) return;
    if (signo == SIGHUP) {
      Reload();
      WaitSignal();
    } else {
      spdlog::info("signal {}: draining and shutting down", signo);
      BeginShutdown();
    }
  });
}

void Server::BeginShutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  BeginShutdownClock();
  notify_.Stopping();
  boost::system::error_code ignored;
  signals_.cancel(ignored);
  stats_timer_.cancel();
  watchdog_timer_.cancel();
  budget_timer_.cancel();
  if (metrics_server_) metrics_server_->Stop();
  StopOwnThreadInputs();
  for (auto& u : udp_) u->Stop();
  pending_drains_ = tcp_.size() + tls_.size();
  if (pending_drains_ == 0) {
    io_.stop();
    return;
  }
  // A quarter of the bound for the senders' last bytes, so the workers still have time.
  auto timer = std::make_shared<asio::steady_timer>(io_, shutdown_timeout_ / 4);
  timer->async_wait([this, timer](boost::system::error_code ec) {
    if (ec) return;
    spdlog::error(
        "shutdown: TCP connections not drained after {} ms; closing them",
        std::chrono::duration_cast<std::chrono::milliseconds>(shutdown_timeout_ / 4).count());
    for (auto& t : tcp_) t->Close();
    for (auto& t : tls_) t->Close();
  });
  auto on_drained = [this, timer] {
    if (--pending_drains_ == 0) {
      timer->cancel();
      io_.stop();
    }
  };
  for (auto& t : tcp_) t->StopReading(on_drained);
  for (auto& t : tls_) t->StopReading(on_drained);
}

// Inputs with their own threads: each stops at its next read or wait and is joined, so
// that nothing more reaches the queues once the io thread ends. What they read and did not
// deliver is not lost: files and the journal did not save its position, a local socket
// that is closed rejects further writes, and a RELP sender keeps what was not acknowledged.
void Server::StopOwnThreadInputs() {
  for (auto& s : streams_) s->Stop();
  for (auto& f : files_) f->Stop();
  for (auto& u : unix_) u->Stop();
  for (auto& j : journals_) j->Stop();
  // A RELP message being handed over may wait for room a quarter of the bound, like the
  // TCP connections' last bytes (none on a failed start).
  for (auto& r : relp_)
    r->Stop(shutting_down_ ? shutdown_start_ + shutdown_timeout_ / 4 : SteadyClock::now());
  // A Kafka input summarises its open groups and commits before it leaves its group, with
  // a quarter of the bound (the workers and sinks need the rest).
  for (auto& k : kafkas_)
    k->Stop(shutting_down_ ? shutdown_start_ + shutdown_timeout_ / 4 : SteadyClock::now());
  // An exactly-once input delivers its own events (no workers, no sinks): its last
  // transaction has until half of the bound, as the workers have.
  for (auto& k : kafka_eos_)
    k->Stop(shutting_down_ ? shutdown_start_ + shutdown_timeout_ / 2 : SteadyClock::now());
  for (auto& f : files_) f->Join();
  for (auto& u : unix_) u->Join();
  for (auto& j : journals_) j->Join();
  for (auto& r : relp_) r->Join();
  for (auto& k : kafkas_) k->Join();
  for (auto& k : kafka_eos_) k->Join();
}

void Server::StopInputsNow() {
  StopOwnThreadInputs();
  for (auto& u : udp_) u->Stop();
  for (auto& t : tcp_) t->Close();
  for (auto& t : tls_) t->Close();
  streams_.clear();
}

void Server::ScheduleStats() {
  if (config_.log.stats_interval_us <= 0) return;
  stats_timer_.expires_after(std::chrono::microseconds(config_.log.stats_interval_us));
  stats_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    LogStats();
    notify_.Status(StatusLine());
    ScheduleStats();
  });
}

// The outputs' buffers count against the memory budget; they are sampled, as only each
// sink knows what it holds.
void Server::ScheduleOutputAccounting() {
  std::int64_t held = 0;
  for (const auto& sink : sinks_) held += static_cast<std::int64_t>(sink->buffered_bytes());
  budget_->Set(MemoryBudget::Part::kOutputs, held);
  budget_timer_.expires_after(std::chrono::milliseconds(100));
  budget_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || shutting_down_) return;
    ScheduleOutputAccounting();
  });
}

// WATCHDOG=1 from the event loop itself, so that a stalled loop stops the pings.
void Server::ScheduleWatchdog() {
  if (notify_.watchdog_interval_us() <= 0) return;
  watchdog_timer_.expires_after(std::chrono::microseconds(notify_.watchdog_interval_us()));
  watchdog_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || shutting_down_) return;
    notify_.Watchdog();
    ScheduleWatchdog();
  });
}

std::string Server::StatusLine() const {
  return "received " + std::to_string(metrics_.Sum("logfold_received_total")) + ", processed " +
         std::to_string(metrics_.Sum("logfold_lines_processed_total")) + ", merged " +
         std::to_string(metrics_.Sum("logfold_lines_merged_total")) + ", open groups " +
         std::to_string(pool_ ? pool_->open_groups() : 0);
}

void Server::LogStats() const {
  spdlog::info("stats: {}, events {}, dropped {}, queued {}", StatusLine(),
               metrics_.Sum("logfold_events_total"), metrics_.Sum("logfold_dropped_total"),
               pool_ ? pool_->queued_lines() : 0);
}

int RunServe(const std::vector<std::string>& args) {
  std::string path;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "--config" || args[i] == "-c") && i + 1 < args.size()) {
      path = args[++i];
    } else if (args[i] == "-h" || args[i] == "--help") {
      std::puts(
          "usage: logfold serve [--config FILE]\n"
          "Runs the daemon; without --config it uses the embedded default "
          "(see 'logfold check-config --print').");
      return 0;
    } else {
      std::fprintf(stderr, "logfold serve: unknown argument \"%s\"\n", args[i].c_str());
      return 2;
    }
  }
  auto logger = spdlog::stderr_logger_mt("logfold");
  spdlog::set_default_logger(logger);
  Config config;
  std::vector<ConfigError> errors;
  const bool ok = path.empty() ? ParseConfig(DefaultConfigJson(), config, errors)
                               : LoadConfigFile(path, config, errors);
  if (!ok) {
    std::fprintf(stderr, "logfold: invalid config %s:\n%s",
                 path.empty() ? "(embedded)" : path.c_str(), FormatConfigErrors(errors).c_str());
    return 1;
  }
  spdlog::set_level(SpdLevel(config.log.level));
  // A sink whose peer went away must surface as an error counter, not kill the process.
  signal(SIGPIPE, SIG_IGN);
  Server server(std::move(config), path);
  return server.Run();
}

}  // namespace logfold
