// Server implementation. One io_context thread runs listeners, signals, timers and the metrics
// endpoint; worker threads run the engine; each sink has its own thread. Shutdown order:
// inputs stop and drain into the queues, workers drain and close every group, sinks flush.
#include "daemon/server.h"

#include <malloc.h>
#include <signal.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <random>
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
#include "daemon/inputs/tls_listener.h"
#include "daemon/inputs/udp_listener.h"
#include "daemon/inputs/unix_listener.h"
#include "daemon/outputs/loss_counter.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/memory_budget.h"
#include "daemon/runtime/metrics.h"
#include "daemon/runtime/metrics_server.h"
#include "daemon/runtime/systemd_notify.h"
#include "daemon/runtime/thread_name.h"
#include "daemon/runtime/tls_context.h"
#include "daemon/state/state_store.h"
#include "daemon/workers/worker_pool.h"

namespace logfold {
namespace {

namespace asio = boost::asio;

using SteadyClock = std::chrono::steady_clock;

// How long a sink a reload replaced may keep trying its old destination before what it
// still holds goes to its successor (at most a quarter of the shutdown bound).
constexpr auto kRetireDrain = std::chrono::seconds(5);
// Journal mode: TCP bytes read per receive (each delivery waits for one fdatasync).
constexpr std::size_t kJournalReadSize = 1 << 20;

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

// The runtime form of a tls input's "tls" block (every field; defaults are the config's).
TlsServerOptions TlsOptions(const TlsServerConfig& t) {
  TlsServerOptions o{};
  o.cert_file = t.cert_file;
  o.key_file = t.key_file;
  o.password_file = t.password_file;
  o.ca_file = t.ca_file;
  o.min_version = t.min_version == TlsMinVersion::kTls13 ? TlsVersion::kTls13 : TlsVersion::kTls12;
  o.ciphers = t.ciphers;
  o.client_auth = t.client_auth == TlsClientAuth::kRequired   ? ClientAuth::kRequired
                  : t.client_auth == TlsClientAuth::kOptional ? ClientAuth::kOptional
                                                              : ClientAuth::kNone;
  o.permitted_peers = t.permitted_peers;
  return o;
}

// Builds the TLS context of every tls input in `c`, reading each certificate, key and CA
// file now. Empty on success; else the first failure, naming the input and the file.
std::string BuildTlsContexts(const Config& c,
                             std::vector<std::shared_ptr<const TlsServerContext>>& out) {
  out.clear();
  for (const InputConfig& in : c.inputs) {
    if (in.type != InputType::kTls) continue;
    std::string error;
    auto context = MakeTlsServerContext(TlsOptions(in.tls.tls), error);
    if (!context) return "input " + in.name + ": " + error;
    out.push_back(std::move(context));
  }
  return "";
}

// The metrics endpoint's TLS context when it has a "tls" block (null otherwise), reading the
// files now. Empty on success; else why it failed, naming the file.
std::string BuildMetricsTls(const MetricsConfig& m, std::shared_ptr<const TlsServerContext>& out) {
  out.reset();
  if (!m.enabled || !m.tls) return "";
  std::string error;
  out = MakeTlsServerContext(TlsOptions(m.tls_options), error);
  return out ? "" : "metrics: " + error;
}

class Server {
 public:
  Server(Config config, std::string config_path)
      : config_(std::move(config)),
        config_path_(std::move(config_path)),
        signals_(io_, SIGINT, SIGTERM, SIGHUP),
        stats_timer_(io_),
        watchdog_timer_(io_),
        budget_timer_(io_) {}

  int Run() {
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
  std::uint64_t DiskBuffered() const {
    std::uint64_t n = 0;
    for (const auto& s : sinks_) n += s->buffered_bytes();
    return n;
  }

  void BeginShutdownClock() {
    shutdown_start_ = SteadyClock::now();
    shutdown_timeout_ = std::chrono::microseconds(config_.workers.shutdown_timeout_us);
  }

 private:
  static std::vector<WorkerPool::Output> Outputs(const Config& c,
                                                 const std::vector<std::shared_ptr<Sink>>& sinks) {
    std::vector<WorkerPool::Output> v;
    for (std::size_t i = 0; i < sinks.size(); ++i) {
      v.push_back(
          WorkerPool::Output{sinks[i].get(), c.outputs[i].sink, c.outputs[i].syslog.app_name});
    }
    return v;
  }

  bool BuildSinks(const Config& c, std::vector<std::shared_ptr<Sink>>& out, std::string& error) {
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
  static bool StopSinks(std::vector<std::shared_ptr<Sink>>& sinks,
                        const std::vector<OutputConfig>& outputs,
                        SteadyClock::time_point deadline) {
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

  // Reload with changed outputs. An output whose settings did not change keeps its sink
  // (its buffer, connection and open file); changed and new ones get fresh sinks. The
  // replaced sinks drain on a thread of their own (stopping them here would hold the event
  // loop while a collector is down) and then hand what they could not deliver to the
  // output's new sink (same name), waiting as long as it is full; an output that is gone
  // keeps its events in its disk buffer, or they are counted as lost (reason "reload").
  // False (reload refused, nothing changed) if a new sink fails to build.
  bool ReplaceSinks(const Config& next) {
    std::vector<std::shared_ptr<Sink>> built(next.outputs.size());
    std::vector<int> kept(next.outputs.size(), -1);
    std::vector<bool> taken(config_.outputs.size(), false);
    for (std::size_t i = 0; i < next.outputs.size(); ++i) {
      for (std::size_t j = 0; j < config_.outputs.size(); ++j) {
        if (!taken[j] && next.outputs[i] == config_.outputs[j]) {
          taken[j] = true;
          kept[i] = static_cast<int>(j);
          break;
        }
      }
      if (kept[i] >= 0) continue;
      std::string error;
      built[i] = MakeSink(next.outputs[i], metrics_, error);
      if (!built[i]) {
        ++*reload_failures_;
        spdlog::error("reload refused, keeping the running config: outputs.{}: {}",
                      next.outputs[i].sink.name, error);
        for (auto& b : built) {
          if (b) b->Stop(std::chrono::steady_clock::now());  // empty: returns at once
        }
        return false;
      }
    }
    std::vector<std::shared_ptr<Sink>> sinks;
    for (std::size_t i = 0; i < next.outputs.size(); ++i) {
      sinks.push_back(kept[i] >= 0 ? sinks_[static_cast<std::size_t>(kept[i])]
                                   : std::move(built[i]));
    }
    std::function<void()> wait_old_sinks_unused = pool_->SetSinks(Outputs(next, sinks));
    std::vector<std::shared_ptr<Sink>> retired;
    std::vector<OutputConfig> retired_outputs;
    for (std::size_t j = 0; j < sinks_.size(); ++j) {
      if (taken[j]) continue;
      retired.push_back(sinks_[j]);
      retired_outputs.push_back(config_.outputs[j]);
    }
    {
      std::lock_guard lock(sinks_mu_);
      sinks_ = std::move(sinks);
    }
    // Reap the drains earlier reloads started, so frequent reloads cannot pile up threads.
    std::erase_if(retiring_, [](RetiringSinks& r) {
      if (!r.done->load()) return false;
      r.thread.join();
      return true;
    });
    if (!retired.empty()) {
      auto done = std::make_shared<std::atomic<bool>>(false);
      const auto drain = std::min<SteadyClock::duration>(
          kRetireDrain, std::chrono::microseconds(config_.workers.shutdown_timeout_us) / 4);
      retiring_.push_back(
          {std::thread([this, retired = std::move(retired), wait = std::move(wait_old_sinks_unused),
                        done, drain]() mutable {
             wait();
             std::vector<std::string> unsent(retired.size());
             std::vector<std::thread> stoppers;
             const auto deadline = SteadyClock::now() + drain;
             for (std::size_t i = 0; i < retired.size(); ++i) {
               stoppers.emplace_back([&, i] { retired[i]->Stop(deadline, &unsent[i]); });
             }
             for (std::thread& t : stoppers) t.join();
             for (std::size_t i = 0; i < retired.size(); ++i) HandOver(*retired[i], unsent[i]);
             retired.clear();
             done->store(true);
           }),
           done});
    }
    return true;
  }

  // Gives `unsent` (a replaced sink's undelivered records) to the current sink of the same
  // output, looking it up again whenever the one it tried stopped (another reload replaced
  // it), until the shutdown's sink phase; what is left then is counted as lost.
  void HandOver(const Sink& from, const std::string& unsent) {
    if (unsent.empty()) return;
    while (!retire_stop_->load()) {
      std::shared_ptr<Sink> to;
      {
        std::lock_guard lock(sinks_mu_);
        for (const auto& s : sinks_) {
          if (s->name() == from.name() && s->encoding() == from.encoding()) to = s;
        }
      }
      if (!to) break;
      if (to->Submit(unsent, SteadyClock::now() + std::chrono::milliseconds(200))) {
        spdlog::info(
            "sink {}: {} bytes of events a reload left undelivered handed to its "
            "successor",
            from.name(), unsent.size());
        return;
      }
    }
    const EventTally t =
        LossCounter(metrics_, from.name(), "reload").Count(unsent, from.encoding());
    spdlog::error("sink {}: replaced by a reload; lost {} events ({} lines) it could not deliver",
                  from.name(), t.events, t.lines);
  }

  void StartInputs() {
    for (std::size_t i = 0; i < config_.inputs.size(); ++i) {
      try {
        StartInput(i);
      } catch (const std::exception& e) {
        throw std::runtime_error(InputLabel(config_.inputs[i]) + ": " + e.what());
      }
    }
  }

  // "input \"syslog-tcp\" (tcp 127.0.0.1:514)", "input \"local\" (unix datagram /dev/log)":
  // which input failed, and where it listens.
  static std::string InputLabel(const InputConfig& in) {
    std::string label = "input \"" + in.name + "\"";
    if (in.type == InputType::kUnix) {
      const bool stream = in.unix_socket.socket_type == UnixSocketType::kStream;
      return label + (stream ? " (unix stream " : " (unix datagram ") + in.unix_socket.path + ")";
    }
    if (in.type == InputType::kRelp) {
      const bool v6 = in.relp.address.find(':') != std::string::npos;
      return label + " (relp " + (v6 ? "[" + in.relp.address + "]" : in.relp.address) + ":" +
             std::to_string(in.relp.port) + ")";
    }
    if (in.type != InputType::kUdp && in.type != InputType::kTcp) return label;
    const bool udp = in.type == InputType::kUdp;
    const std::string& socket_name = udp ? in.udp.socket_name : in.tcp.socket_name;
    const std::string& address = udp ? in.udp.address : in.tcp.address;
    const std::uint16_t port = udp ? in.udp.port : in.tcp.port;
    label += udp ? " (udp " : " (tcp ";
    if (!socket_name.empty()) return label + "inherited socket " + socket_name + ")";
    const bool v6 = address.find(':') != std::string::npos;
    return label + (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port) + ")";
  }

  void StartInput(std::size_t i) {
    const InputConfig& in = config_.inputs[i];
    const auto id = static_cast<std::uint32_t>(i);
    // An inherited systemd socket, by name: the listener adopts its descriptor.
    auto adopt = [&](const std::string& socket_name, int type) {
      if (socket_name.empty()) return -1;
      const int fd = inherited_.Take(socket_name, type);
      if (fd < 0) {
        throw std::runtime_error("input " + in.name + ": no inherited socket named \"" +
                                 socket_name + "\"");
      }
      return fd;
    };
    switch (in.type) {
      case InputType::kUdp: {
        UdpListener::Options o = in.udp;
        o.adopted_fd = adopt(o.socket_name, SOCK_DGRAM);
        auto l = std::make_unique<UdpListener>(id, in.name, o, io_, *pool_, metrics_);
        l->Start();
        udp_.push_back(std::move(l));
        break;
      }
      case InputType::kTcp: {
        TcpListener::Options o = in.tcp;
        o.adopted_fd = adopt(o.socket_name, SOCK_STREAM);
        if (config_.state.journal) o.read_size = kJournalReadSize;
        o.octet_content_start = in.parser.format == InputFormat::kSyslog ? '<'
                                : in.parser.format == InputFormat::kJson ? '{'
                                                                         : '\0';
        auto l =
            std::make_unique<TcpListener>(id, in.name, o, io_, *pool_, metrics_, budget_.get());
        l->Start();
        tcp_.push_back(std::move(l));
        break;
      }
      case InputType::kTls: {
        TlsListener::Options o = in.tls;
        o.adopted_fd = adopt(o.socket_name, SOCK_STREAM);
        auto l = std::make_unique<TlsListener>(id, in.name, o, tls_contexts_.at(tls_.size()), io_,
                                               *pool_, metrics_);
        l->Start();
        tls_.push_back(std::move(l));
        break;
      }
      case InputType::kFile: {
        files_.push_back(std::make_unique<FileInput>(id, in.name, in.file, *pool_, metrics_));
        break;
      }
      case InputType::kUnix: {
        unix_.push_back(
            std::make_unique<UnixListener>(id, in.name, in.unix_socket, *pool_, metrics_));
        break;
      }
      case InputType::kRelp: {
        relp_.push_back(std::make_unique<RelpListener>(id, in.name, in.relp, *pool_, metrics_));
        break;
      }
      case InputType::kKafka: {
        kafkas_.push_back(std::make_unique<KafkaInput>(id, in.name, in.kafka, *pool_, metrics_));
        break;
      }
      case InputType::kJournald: {
        journals_.push_back(
            std::make_unique<JournaldInput>(id, in.name, in.journald, *pool_, metrics_));
        break;
      }
      case InputType::kStdin: {
        streams_.push_back(std::make_unique<StreamInput>(
            id, in.name, in.stream, *pool_, metrics_,
            [this](bool) { asio::post(io_, [this] { OnStreamDone(); }); }));
        break;
      }
    }
  }

  void StartMetricsServer() {
    if (!config_.metrics.enabled) return;
    // The allocator's view beside the RSS: bytes in live allocations, and what the heaps hold
    // from the system. In use flat while held grows is the allocator keeping freed memory,
    // not a growing container (tests/soak/README.md).
    metrics_.AddGauge("logfold_heap_in_use_bytes", "Bytes in live heap allocations (mallinfo2)", "",
                      [] {
                        const struct mallinfo2 m = mallinfo2();  // hblkhd: mmapped chunks
                        return static_cast<double>(m.uordblks + m.hblkhd);
                      });
    metrics_.AddGauge("logfold_heap_held_bytes",
                      "Bytes the heap holds from the system, freed or not (mallinfo2)", "", [] {
                        const struct mallinfo2 m = mallinfo2();
                        return static_cast<double>(m.arena + m.hblkhd);
                      });
    metrics_server_ = std::make_unique<MetricsServer>(
        io_, config_.metrics.address, config_.metrics.port, metrics_,
        SenderAllowList(config_.metrics.allowed_senders),
        &metrics_.GetCounter("logfold_senders_refused_total",
                             "Connections or datagrams refused by allowed_senders.",
                             "input=\"metrics\",proto=\"http\""));
    if (metrics_tls_) {
      metrics_server_->SetTls(metrics_tls_, [this](const std::string& reason) {
        metrics_
            .GetCounter("logfold_tls_handshake_failures_total",
                        "TLS connections refused during the handshake or the permitted-peer check.",
                        "input=\"metrics\",reason=\"" + reason + "\"")
            .fetch_add(1, std::memory_order_relaxed);
      });
    }
    live_api_ = std::make_unique<LiveApi>(*pool_, metrics_);
    metrics_server_->SetHandler(
        [api = live_api_.get()](std::string_view target, HttpResponse& response) {
          return api->Handle(target, response);
        });
    metrics_server_->Start();
    spdlog::info("metrics on {}://{}:{}/metrics", metrics_tls_ ? "https" : "http",
                 config_.metrics.address, metrics_server_->local_port());
  }

  // Stream inputs (stdin, files) end by themselves; when they were the only inputs, the
  // daemon has nothing more to do once they are all read.
  void OnStreamDone() {
    for (const auto& s : streams_) {
      if (!s->finished()) return;
    }
    if (udp_.empty() && tcp_.empty() && tls_.empty() && files_.empty() && unix_.empty() &&
        journals_.empty() && relp_.empty() && kafkas_.empty()) {
      BeginShutdown();
    }
  }

  void WaitSignal() {
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

  void BeginShutdown() {
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
  void StopOwnThreadInputs() {
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
    for (auto& f : files_) f->Join();
    for (auto& u : unix_) u->Join();
    for (auto& j : journals_) j->Join();
    for (auto& r : relp_) r->Join();
    for (auto& k : kafkas_) k->Join();
  }

  void StopInputsNow() {
    StopOwnThreadInputs();
    for (auto& u : udp_) u->Stop();
    for (auto& t : tcp_) t->Close();
    for (auto& t : tls_) t->Close();
    streams_.clear();
  }

  // SIGHUP: a new config that fails validation changes nothing. Engine settings and outputs
  // are applied live; open groups survive. Listener changes need a restart (logged).
  void Reload() {
    notify_.Reloading();
    spdlog::info("SIGHUP: reloading {}",
                 config_path_.empty() ? "(embedded default)" : config_path_);
    for (auto& s : sinks_) s->Reopen();
    Config next;
    std::vector<ConfigError> errors;
    const bool ok = config_path_.empty() ? ParseConfig(DefaultConfigJson(), next, errors)
                                         : LoadConfigFile(config_path_, next, errors);
    if (!ok) {
      ++*reload_failures_;
      spdlog::error("reload refused, keeping the running config:\n{}", FormatConfigErrors(errors));
      notify_.Ready(StatusLine());
      return;
    }
    next.inputs = LiveInputs(next.inputs);
    next.metrics = LiveMetrics(next.metrics);
    // Certificates, keys and CA bundles are re-read on every reload (rotation keeps the file
    // names); one that does not load refuses the whole reload, so nothing changes.
    std::vector<std::shared_ptr<const TlsServerContext>> contexts;
    std::shared_ptr<const TlsServerContext> metrics_tls;
    std::string tls_error = BuildTlsContexts(next, contexts);
    if (tls_error.empty()) tls_error = BuildMetricsTls(next.metrics, metrics_tls);
    if (!tls_error.empty()) {
      ++*reload_failures_;
      spdlog::error("reload refused, keeping the running config and certificates: {}", tls_error);
      notify_.Ready(StatusLine());
      return;
    }
    if (next.workers != config_.workers) {
      spdlog::warn("reload: worker changes take effect at the next restart");
      next.workers = config_.workers;
    }
    if (next.state != config_.state) {
      spdlog::warn("reload: state changes take effect at the next restart");
      next.state = config_.state;
    }
    if (next.outputs != config_.outputs && !ReplaceSinks(next)) {
      notify_.Ready(StatusLine());
      return;
    }
    pool_->Reconfigure(next.engine.merger, ParserOptions(next),
                       next.engine.time == TimeSource::kEvent);
    // Open connections keep their session; new ones get the new certificate.
    for (std::size_t i = 0; i < tls_.size() && i < contexts.size(); ++i) {
      tls_[i]->SetContext(contexts[i]);
    }
    tls_contexts_ = std::move(contexts);
    if (metrics_server_ && metrics_tls) metrics_server_->SetTls(metrics_tls);
    metrics_tls_ = std::move(metrics_tls);
    spdlog::set_level(SpdLevel(next.log.level));
    config_ = std::move(next);
    ++*reloads_;
    spdlog::info("reload applied");
    notify_.Ready(StatusLine());
  }

  // What a reload may change in the metrics endpoint: its tls block (certificate rotation,
  // client authentication) while it is HTTPS; anything else waits for a restart (logged).
  MetricsConfig LiveMetrics(const MetricsConfig& next) const {
    MetricsConfig live = config_.metrics;
    MetricsConfig other = next;
    if (live.tls && other.tls) {
      live.tls_options = other.tls_options;
      other.tls_options = config_.metrics.tls_options;
    }
    if (other != config_.metrics) {
      spdlog::warn("reload: metrics endpoint changes take effect at the next restart");
    }
    return live;
  }

  // What a reload may change in the inputs: the tls block of a tls input (certificates,
  // client authentication) applies live; anything else waits for a restart (logged).
  std::vector<InputConfig> LiveInputs(const std::vector<InputConfig>& next) const {
    std::vector<InputConfig> live = config_.inputs;
    std::vector<InputConfig> others = next;
    for (std::size_t i = 0; i < live.size() && i < others.size(); ++i) {
      if (live[i].type == InputType::kTls && others[i].type == InputType::kTls) {
        live[i].tls.tls = others[i].tls.tls;
        others[i].tls.tls = config_.inputs[i].tls.tls;
      }
    }
    if (others != config_.inputs) {
      spdlog::warn("reload: input changes other than tls blocks take effect at the next restart");
    }
    return live;
  }

  void ScheduleStats() {
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
  void ScheduleOutputAccounting() {
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
  void ScheduleWatchdog() {
    if (notify_.watchdog_interval_us() <= 0) return;
    watchdog_timer_.expires_after(std::chrono::microseconds(notify_.watchdog_interval_us()));
    watchdog_timer_.async_wait([this](boost::system::error_code ec) {
      if (ec || shutting_down_) return;
      notify_.Watchdog();
      ScheduleWatchdog();
    });
  }

  std::string StatusLine() const {
    return "received " + std::to_string(metrics_.Sum("logfold_received_total")) + ", processed " +
           std::to_string(metrics_.Sum("logfold_lines_processed_total")) + ", merged " +
           std::to_string(metrics_.Sum("logfold_lines_merged_total")) + ", open groups " +
           std::to_string(pool_ ? pool_->open_groups() : 0);
  }

  void LogStats() const {
    spdlog::info("stats: {}, events {}, dropped {}, queued {}", StatusLine(),
                 metrics_.Sum("logfold_events_total"), metrics_.Sum("logfold_dropped_total"),
                 pool_ ? pool_->queued_lines() : 0);
  }

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
  std::vector<std::unique_ptr<TlsListener>> tls_;
  // One per tls input, in input order: the context its listener hands new connections.
  std::vector<std::shared_ptr<const TlsServerContext>> tls_contexts_;
  std::shared_ptr<const TlsServerContext> metrics_tls_;  // null: the endpoint is plain HTTP
  std::vector<std::unique_ptr<StreamInput>> streams_;
  std::vector<std::unique_ptr<FileInput>> files_;
  std::vector<std::unique_ptr<UnixListener>> unix_;
  std::vector<std::unique_ptr<JournaldInput>> journals_;
  std::vector<std::unique_ptr<RelpListener>> relp_;
  std::vector<std::unique_ptr<KafkaInput>> kafkas_;
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

}  // namespace

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
