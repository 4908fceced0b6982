// WorkerPool's hand-off to the sinks: routing events to selective outputs, blocking hand-off
// that turns a slow sink into backpressure (or drops, when_full: drop), and sink list swaps.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/outputs/loss_counter.h"
#include "daemon/workers/worker_pool.h"
#include "daemon/workers/worker_pool_impl.h"

namespace logfold {

std::function<void()> WorkerPool::SetSinks(std::vector<Output> sinks) {
  std::uint64_t version = 0;
  {
    std::lock_guard lock(shared_->mu);
    shared_->sinks = std::make_shared<const std::vector<Output>>(std::move(sinks));
    version = ++shared_->sinks_version;
  }
  // The wait is the caller's, so that a worker blocked on a full sink cannot stall the thread
  // that reloads. Waiting for one list's reference count is not enough: a sink kept by one
  // reload and replaced by the next is also reachable through the list before both.
  return [shared = shared_, version] { shared->WaitSinksReleased(version); };
}

namespace {

// The APP-NAME the shared syslog encoding uses: that of the first syslog output taking every
// event (the default when there is none).
std::string_view SharedSyslogAppName(const std::vector<WorkerPool::Output>& outputs) {
  for (const WorkerPool::Output& o : outputs) {
    if (o.sink->encoding() == SinkEncoding::kSyslog5424 && o.options.select.all()) {
      return o.syslog_app_name;
    }
  }
  static const SyslogSinkOptions kDefaults;
  return kDefaults.app_name;
}

// Does the output get a buffer of its own instead of the shared encoding of its format? A
// selective one does, and so does a syslog output naming another app than the shared one.
bool Routed(const WorkerPool::Output& o, std::string_view shared_app) {
  return !o.options.select.all() ||
         (o.sink->encoding() == SinkEncoding::kSyslog5424 && o.syslog_app_name != shared_app);
}

}  // namespace

void WorkerPool::SubmitOutput(Worker& w) {
  const auto sinks = shared_->AcquireSinks(w.index);
  struct Release {
    Shared& shared;
    std::size_t worker;
    ~Release() { shared.ReleaseSinks(worker); }
  } release{*shared_, w.index};
  bool ndjson = false, syslog = false;
  const std::string_view shared_app = SharedSyslogAppName(*sinks);
  for (Output o : *sinks) {
    Sink* s = o.sink;
    std::string* selected = nullptr;
    if (Routed(o, shared_app)) {
      const auto route =
          std::find_if(w.routes.begin(), w.routes.end(),
                       [&](const Worker::Route& r) { return r.output == s->name(); });
      if (route == w.routes.end()) continue;  // selective since this list: nothing encoded yet
      selected = &route->buf;
    } else {
      (s->encoding() == SinkEncoding::kNdjson ? ndjson : syslog) = true;
    }
    std::string& buf = selected != nullptr                      ? *selected
                       : s->encoding() == SinkEncoding::kNdjson ? w.ndjson
                                                                : w.syslog;
    // A route's events are this output's alone: handed over (or counted lost) here, gone after.
    struct ClearRoute {
      std::string* buf;
      ~ClearRoute() {
        if (buf != nullptr) buf->clear();
      }
    } clear_route{selected};
    if (buf.empty()) continue;
    const auto started = std::chrono::steady_clock::now();
    auto give_up = started + std::chrono::microseconds(o.options.block_timeout_us);
    bool stalled = false;
    // Past the shutdown deadline a full sink gets one immediate try per batch, not 200 ms:
    // the queues may still hold many batches, and each must not wait again.
    auto slice = [&] {
      return abandon_output_.load()
                 ? std::chrono::steady_clock::now()
                 : std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    };
    while (!s->Submit(buf, slice())) {
      if (!stalled) ++*w.stalls;
      stalled = true;
      // A reload replaced this full sink: the batch goes to the output's new sink instead,
      // so that the old one can drain and retire (which waits for us to drop the old list).
      if (const auto current = shared_->GetSinks(); current != sinks) {
        const auto same = std::find_if(current->begin(), current->end(),
                                       [&](const Output& c) { return c.sink == s; });
        const auto successor = std::find_if(current->begin(), current->end(), [&](const Output& c) {
          return c.sink->name() == s->name() && c.sink->encoding() == s->encoding();
        });
        if (same == current->end() && successor != current->end()) {
          o = *successor;
          s = o.sink;
          give_up = std::chrono::steady_clock::now() +
                    std::chrono::microseconds(o.options.block_timeout_us);
          continue;
        }
        if (same == current->end()) {
          *w.discarded += buf.size();
          const EventTally t = LossCounter(metrics_, s->name(), "reload").Count(buf, s->encoding());
          spdlog::warn("sink {}: removed by a reload with {} events ({} lines) not accepted",
                       s->name(), t.events, t.lines);
          break;
        }
      }
      if (o.options.when_full == WhenFull::kDrop && std::chrono::steady_clock::now() >= give_up) {
        *w.dropped_output += buf.size();
        const EventTally t =
            LossCounter(metrics_, s->name(), "when_full").Count(buf, s->encoding());
        spdlog::warn("sink {}: full for {} ms, dropped {} events ({} lines; when_full: drop)",
                     s->name(), o.options.block_timeout_us / 1000, t.events, t.lines);
        break;
      }
      if (abandon_output_.load()) {
        *w.discarded += buf.size();
        const EventTally t =
            LossCounter(metrics_, s->name(), "abandoned").Count(buf, s->encoding());
        std::string note;
        if (w.abandon_log.Allow(note)) {
          spdlog::error(
              "sink {}: shutdown deadline passed with {} events ({} lines) not accepted{}",
              s->name(), t.events, t.lines, note);
        }
        break;
      }
    }
  }
  w.ndjson.clear();
  w.syslog.clear();
  w.encoder.Submitted();
  w.encoder.want_ndjson = ndjson;
  w.encoder.want_syslog = syslog;
  // Events selected for an output that this list no longer has went nowhere: count them.
  for (Worker::Route& r : w.routes) {
    if (!r.buf.empty()) {
      *w.discarded += r.buf.size();
      r.buf.clear();
    }
  }
  if (w.routes_for != sinks.get()) {
    w.routes.clear();
    w.syslog_app_name = shared_app;
    for (const Output& o : *sinks) {
      if (Routed(o, shared_app)) {
        const bool own_syslog = o.sink->encoding() == SinkEncoding::kSyslog5424 &&
                                o.syslog_app_name != w.syslog_app_name;
        w.routes.push_back({o.sink->name(),
                            o.sink->encoding(),
                            EventFilter(o.options.select),
                            {},
                            o.syslog_app_name,
                            own_syslog});
      }
    }
    w.routes_for = sinks.get();
  }
}

}  // namespace logfold
