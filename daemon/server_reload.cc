// The Server's SIGHUP path: a new config is validated and applied live (engine settings,
// outputs, TLS certificates); replaced sinks drain and hand what they hold to their successors.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/outputs/loss_counter.h"
#include "daemon/server_impl.h"

namespace logfold {
namespace {

// How long a sink a reload replaced may keep trying its old destination before what it
// still holds goes to its successor (at most a quarter of the shutdown bound).
constexpr auto kRetireDrain = std::chrono::seconds(5);

}  // namespace

// SIGHUP: a new config that fails validation changes nothing. Engine settings and outputs
// are applied live; open groups survive. Listener changes need a restart (logged).
void Server::Reload() {
  notify_.Reloading();
  spdlog::info("SIGHUP: reloading {}", config_path_.empty() ? "(embedded default)" : config_path_);
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
MetricsConfig Server::LiveMetrics(const MetricsConfig& next) const {
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
std::vector<InputConfig> Server::LiveInputs(const std::vector<InputConfig>& next) const {
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

// Reload with changed outputs. An output whose settings did not change keeps its sink
// (its buffer, connection and open file); changed and new ones get fresh sinks. The
// replaced sinks drain on a thread of their own (stopping them here would hold the event
// loop while a collector is down) and then hand what they could not deliver to the
// output's new sink (same name), waiting as long as it is full; an output that is gone
// keeps its events in its disk buffer, or they are counted as lost (reason "reload").
// False (reload refused, nothing changed) if a new sink fails to build.
bool Server::ReplaceSinks(const Config& next) {
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
    sinks.push_back(kept[i] >= 0 ? sinks_[static_cast<std::size_t>(kept[i])] : std::move(built[i]));
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
void Server::HandOver(const Sink& from, const std::string& unsent) {
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
  const EventTally t = LossCounter(metrics_, from.name(), "reload").Count(unsent, from.encoding());
  spdlog::error("sink {}: replaced by a reload; lost {} events ({} lines) it could not deliver",
                from.name(), t.events, t.lines);
}

}  // namespace logfold
