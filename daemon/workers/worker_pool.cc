// WorkerPool implementation: parsing and sharding on the ingest thread, one merger per worker
// thread, recycled line batches (no per-line allocation), and blocking hand-off to sinks that
// turns a slow sink into backpressure instead of loss.
#include "daemon/workers/worker_pool.h"

#include <concurrentqueue/blockingconcurrentqueue.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <new>
#include <string>
#include <utility>

#include "daemon/outputs/buffered_sink.h"
#include "daemon/outputs/loss_counter.h"
#include "daemon/outputs/syslog_event_encoder.h"
#include "daemon/runtime/thread_name.h"
#include "daemon/runtime/wall_clock.h"
#include "pipeline/event_json.h"

namespace logfold {
namespace {

constexpr std::size_t kDequeueBulk = 64;
// Event kinds counted per worker (EventKind's values: first, summary, annotate, new_value).
constexpr int kEventKinds = static_cast<int>(EventKind::kNewValue) + 1;

// An idle worker sleeps after a short spin instead of moodycamel's 10,000 rounds: on a box
// with few cores the spinning worker holds a core the ingest thread, the other workers or the
// senders themselves need, and a batch arrives far less often than a futex wake costs.
struct WorkerQueueTraits : moodycamel::ConcurrentQueueDefaultTraits {
  static const int MAX_SEMA_SPINS = 100;
};

}  // namespace

// Batches a worker keeps for reuse, and the largest buffer a kept batch may have.
constexpr std::size_t kFreeBatchesKept = 32;
constexpr std::size_t kBatchBytesKept = 64 * 1024;
// Lines of per-delivery scratch an ingest thread keeps between TryDeliver calls.
constexpr std::size_t kDeliveryScratchKept = 1024;

// Lines of one TryDeliver call bound for one worker, stored back to back, with what the
// ingest thread's parse found in each, so the worker only copies the fields out.
struct WorkerPool::Batch {
  std::uint32_t input = 0;
  TimeUs arrival_us = 0;
  // false (JSON-lines input, whose fields are not slices of the line): views[i].raw is the
  // line as received and the worker parses it.
  bool parsed = true;
  std::string bytes;
  std::vector<LogRecordView> views;   // into `bytes`
  std::int64_t accounted = 0;         // bytes added to MemoryBudget::Part::kQueued
  std::shared_ptr<QueueShare> share;  // the sender's, released when the batch is folded
  // Non-null: not lines but a Checkpoint marker (views empty), shared by every worker's.
  std::shared_ptr<CheckpointState> checkpoint;
  bool close_all = false;
};

// One Checkpoint call: the workers that have not yet confirmed it, and whom to tell.
struct WorkerPool::CheckpointState {
  std::atomic<std::size_t> remaining{0};
  std::function<void(bool)> done;
  void Finish(bool ok) {
    if (!ok) {
      // Once false, never true: the first failure answers and the rest are ignored.
      if (remaining.exchange(0) != 0) done(false);
    } else if (remaining.fetch_sub(1) == 1) {
      done(true);
    }
  }
};

// A checkpoint a worker has seen: first it waits until its merger clock passes `due` (every
// group open at the marker is then summarised), then until every sink confirmed what it had
// accepted at that point (`marks`, taken against the sink list `marks_for`).
struct WorkerPool::PendingCheckpoint {
  std::shared_ptr<CheckpointState> state;
  TimeUs due = INT64_MIN;
  bool marked = false;
  const void* marks_for = nullptr;
  std::vector<std::uint64_t> marks;
};

// Settings replaced as a whole on reload. A reader keeps a reference to the version it read
// and compares one atomic version number per call (every TryDeliver, every worker round) to
// see whether it must fetch the new one under the lock, so the hot path takes no lock and
// bounces no reference count. A version is freed when its last reader has moved on: at most
// one per worker and ingest thread, plus the current one, stay alive however often the
// configuration is reloaded.
struct WorkerPool::Shared {
  struct Settings {
    std::vector<SyslogParser> parsers;
    SyslogParser fallback_parser;  // for an input id without its own
    MergerOptions merger;
    bool event_time = false;
    std::uint64_t version = 0;

    const SyslogParser& parser(std::uint32_t input) const {
      return input < parsers.size() ? parsers[input] : fallback_parser;
    }
  };
  using SettingsPtr = std::shared_ptr<const Settings>;

  // Tells the ingest threads' cached settings of different pools apart (an address could be
  // reused by the next pool).
  static std::uint64_t NextPoolId() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }
  const std::uint64_t pool_id = NextPoolId();

  mutable std::mutex mu;
  SettingsPtr settings;                            // under mu
  std::atomic<std::uint64_t> settings_version{0};  // settings->version, readable without mu
  // Versions not yet freed; shared with their deleters, which may run after the pool is gone
  // (an ingest thread's cached copy).
  std::shared_ptr<std::atomic<std::size_t>> live_settings =
      std::make_shared<std::atomic<std::size_t>>(0);
  std::shared_ptr<const std::vector<Output>> sinks;

  // Refreshes `held` if a newer version was published since it was read.
  void UpdateSettings(SettingsPtr& held) const {
    if (held != nullptr && held->version == settings_version.load(std::memory_order_acquire)) {
      return;
    }
    std::lock_guard lock(mu);
    held = settings;
  }
  void Publish(std::unique_ptr<Settings> next) {
    std::lock_guard lock(mu);
    next->version = settings == nullptr ? 0 : settings->version + 1;
    live_settings->fetch_add(1, std::memory_order_relaxed);
    settings = SettingsPtr(next.release(), [live = live_settings](const Settings* s) {
      delete s;
      live->fetch_sub(1, std::memory_order_relaxed);
    });
    settings_version.store(settings->version, std::memory_order_release);
  }
  std::shared_ptr<const std::vector<Output>> GetSinks() const {
    std::lock_guard lock(mu);
    return sinks;
  }

  // Which sink list each worker is submitting to, so that a reload retires a sink only once
  // no worker can still be inside it — through this list or any older one that shares it.
  static constexpr std::uint64_t kNotHeld = UINT64_MAX;
  std::uint64_t sinks_version = 0;        // under mu
  std::vector<std::uint64_t> sinks_held;  // under mu, one per worker
  std::condition_variable sinks_released;

  std::shared_ptr<const std::vector<Output>> AcquireSinks(std::size_t worker) {
    std::lock_guard lock(mu);
    sinks_held[worker] = sinks_version;
    return sinks;
  }
  void ReleaseSinks(std::size_t worker) {
    {
      std::lock_guard lock(mu);
      sinks_held[worker] = kNotHeld;
    }
    sinks_released.notify_all();
  }
  // Blocks until no worker holds a sink list older than `version`.
  void WaitSinksReleased(std::uint64_t version) {
    std::unique_lock lock(mu);
    sinks_released.wait(lock, [&] {
      return std::all_of(sinks_held.begin(), sinks_held.end(),
                         [&](std::uint64_t v) { return v == kNotHeld || v >= version; });
    });
  }
};

struct WorkerPool::Worker {
  // The events of one output with a buffer of its own, encoded in its format: a selective
  // output (its `select`), or a syslog output whose app_name differs from the shared syslog
  // encoding's.
  struct Route {
    std::string output;  // the output's name: routes are matched to a new sink list by it
    SinkEncoding encoding = SinkEncoding::kNdjson;
    EventFilter filter;
    std::string buf;
    std::string app_name;  // syslog: encoded with this one when own_syslog
    bool own_syslog = false;
  };

  // Encodes events for every sink encoding in use, and for each selective output the events
  // it selects.
  class Encoder : public EventSink {
   public:
    explicit Encoder(Worker& w) : w_(w) {}
    void OnEvent(const Event& e) override {
      if (want_ndjson || !w_.routes.empty()) AppendEventJson(e, w_.ndjson);
      if (want_syslog || !w_.routes.empty()) {
        AppendEventSyslog(e, w_.syslog_app_name, w_.syslog);
        w_.syslog += '\n';  // records are newline-separated in batches; the sink frames them
      }
      ++w_.events_since[static_cast<int>(e.kind)];
      if (w_.routes.empty()) return;
      // This event's encodings are the buffers' tails: copy them to the routes that select it.
      const std::string_view ndjson = std::string_view(w_.ndjson).substr(ndjson_end_);
      const std::string_view syslog = std::string_view(w_.syslog).substr(syslog_end_);
      for (Route& r : w_.routes) {
        if (!r.filter.Matches(e)) continue;
        if (r.own_syslog) {
          AppendEventSyslog(e, r.app_name, r.buf);
          r.buf += '\n';
        } else {
          r.buf += r.encoding == SinkEncoding::kNdjson ? ndjson : syslog;
        }
      }
      // Encodings no shared output wants were only scratch for the routes.
      if (!want_ndjson) w_.ndjson.resize(ndjson_end_);
      if (!want_syslog) w_.syslog.resize(syslog_end_);
      ndjson_end_ = w_.ndjson.size();
      syslog_end_ = w_.syslog.size();
    }
    // The shared buffers were handed to the sinks and cleared.
    void Submitted() { ndjson_end_ = syslog_end_ = 0; }
    bool want_ndjson = true;
    bool want_syslog = false;

   private:
    Worker& w_;
    std::size_t ndjson_end_ = 0, syslog_end_ = 0;
  };

  Worker(std::size_t i, const GroupTracker::Options& groups)
      : index(i), encoder(*this), tracker(groups) {}

  std::size_t index;
  moodycamel::BlockingConcurrentQueue<Batch*, WorkerQueueTraits> queue;
  moodycamel::ConcurrentQueue<Batch*> free_batches;
  std::atomic<std::size_t> pending{0};
  std::atomic<std::size_t> open_groups{0};
  std::unique_ptr<WindowMerger> merger;
  std::uint64_t settings_version = 0;
  std::thread thread;
  std::string ndjson, syslog;
  std::string syslog_app_name;  // of the shared syslog encoding (SharedSyslogAppName)
  std::vector<Route> routes;    // one per routed output of `routes_for` (Routed)
  const std::vector<Output>* routes_for = nullptr;
  bool RoutesPending() const {
    return std::any_of(routes.begin(), routes.end(), [](const Route& r) { return !r.buf.empty(); });
  }
  Encoder encoder;
  GroupTracker tracker;
  LogRecord record;
  MergerStats last_stats;
  // Event-time mode: the latest event time and the wall time it was seen at.
  TimeUs event_clock = INT64_MIN, event_clock_wall = 0;
  Metrics::Counter* events[kEventKinds] = {};
  Metrics::Counter* parse[static_cast<int>(ParseOutcome::kCount_)] = {};
  // Counted here per line and added to the shared counters once per round: an atomic add
  // per line on counters every worker shares would bounce their cache line between cores.
  std::uint64_t events_since[kEventKinds] = {};
  std::uint64_t parse_since[static_cast<int>(ParseOutcome::kCount_)] = {};
  Metrics::Counter* lines = nullptr;
  Metrics::Counter* merged = nullptr;
  Metrics::Counter* evicted = nullptr;
  Metrics::Counter* clock_backwards = nullptr;
  Metrics::Counter* stalls = nullptr;
  Metrics::Counter* discarded = nullptr;
  Metrics::Counter* dropped_output = nullptr;
  LogThrottle abandon_log{std::chrono::seconds(5)};
  Metrics::Counter* dropped_memory = nullptr;
  Metrics::Counter* closed_memory = nullptr;
  // Memory budget: the merger's usage as last measured (and accounted), and line bytes
  // folded since, which bound how far it can have grown.
  std::int64_t groups_bytes = 0;
  std::uint64_t folded_since_measure = 0;
  std::vector<PendingCheckpoint> checkpoints;  // in arrival order
};

WorkerPool::WorkerPool(Options options, std::vector<Output> sinks, Metrics& metrics,
                       MemoryBudget* budget)
    : options_(std::move(options)),
      metrics_(metrics),
      budget_(budget),
      refused_memory_(metrics.GetCounter(
          "logfold_intake_refused_total",
          "Deliveries refused (TCP pauses, UDP drops and counts them as queue_full)",
          R"(reason="memory")")),
      shared_(std::make_unique<Shared>()) {
  if (options_.threads == 0) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    options_.threads = cores > 0 ? static_cast<std::uint32_t>(cores) : 1;
  }
  auto settings = std::make_unique<Shared::Settings>();
  for (const auto& in : options_.inputs) settings->parsers.emplace_back(in);
  settings->merger = options_.merger;
  settings->event_time = options_.event_time;
  shared_->Publish(std::move(settings));
  shared_->sinks = std::make_shared<const std::vector<Output>>(std::move(sinks));
  shared_->sinks_held.assign(options_.threads, Shared::kNotHeld);
  for (std::size_t i = 0; i < options_.threads; ++i) {
    auto w = std::make_unique<Worker>(i, options_.groups);
    MergerOptions mo = options_.merger;
    mo.id_seed = mo.id_seed * 1000003 + i + 1;  // group ids unique across shards
    w->merger = std::make_unique<WindowMerger>(mo);
    const std::string label = "worker=\"" + std::to_string(i) + "\"";
    w->events[0] =
        &metrics_.GetCounter("logfold_events_total", "Events emitted, by kind", R"(kind="first")");
    w->events[1] = &metrics_.GetCounter("logfold_events_total", "Events emitted, by kind",
                                        R"(kind="summary")");
    w->events[2] = &metrics_.GetCounter("logfold_events_total", "Events emitted, by kind",
                                        R"(kind="annotate")");
    w->events[3] = &metrics_.GetCounter("logfold_events_total", "Events emitted, by kind",
                                        R"(kind="new_value")");
    for (int o = 0; o < static_cast<int>(ParseOutcome::kCount_); ++o) {
      const std::string l =
          "outcome=\"" + std::string(ParseOutcomeName(static_cast<ParseOutcome>(o))) + "\"";
      w->parse[o] = &metrics_.GetCounter("logfold_parse_total", "Lines parsed, by outcome", l);
    }
    w->lines =
        &metrics_.GetCounter("logfold_lines_processed_total", "Lines processed by the engine");
    w->merged =
        &metrics_.GetCounter("logfold_lines_merged_total", "Lines folded into an existing group");
    w->evicted = &metrics_.GetCounter("logfold_groups_evicted_total",
                                      "Groups closed early because max_groups was reached");
    w->clock_backwards = &metrics_.GetCounter("logfold_clock_backwards_total",
                                              "Lines whose time was before the latest seen");
    w->stalls = &metrics_.GetCounter("logfold_output_stalls_total",
                                     "Times a worker waited on a full sink buffer");
    w->discarded = &metrics_.GetCounter(
        "logfold_output_discarded_bytes_total",
        "Encoded event bytes given up because a sink was full at the shutdown deadline or "
        "when a reload removed it");
    w->dropped_output = &metrics_.GetCounter(
        "logfold_output_dropped_bytes_total",
        "Encoded event bytes dropped for an output with when_full: drop that stayed full");
    w->closed_memory = &metrics_.GetCounter(
        "logfold_groups_closed_memory_total",
        "Groups summarised early because the memory budget neared (reason \"memory\")");
    w->dropped_memory = &metrics_.GetCounter("logfold_dropped_total", "Lines dropped on intake.",
                                             R"(reason="memory")");
    Worker* wp = w.get();
    metrics_.AddGauge("logfold_queue_depth", "Lines queued for a worker", label,
                      [wp] { return static_cast<double>(wp->pending.load()); });
    metrics_.AddGauge("logfold_groups_open", "Open groups", label,
                      [wp] { return static_cast<double>(wp->open_groups.load()); });
    workers_.push_back(std::move(w));
  }
}

WorkerPool::~WorkerPool() {
  Stop();
  for (auto& w : workers_) {
    Batch* b;
    while (w->queue.try_dequeue(b)) delete b;
    while (w->free_batches.try_dequeue(b)) delete b;
  }
}

void WorkerPool::Start() {
  for (auto& w : workers_) {
    w->dropped_output = &metrics_.GetCounter(
        "logfold_output_dropped_bytes_total",
        "Encoded event bytes dropped for an output with when_full: drop that stayed full");
    Worker* wp = w.get();
    w->thread = std::thread([this, wp] { Run(*wp); });
    NameThread(w->thread, "lf-worker-" + std::to_string(wp->index));
  }
}

bool WorkerPool::TryDeliver(std::uint32_t input, std::span<const std::string_view> lines,
                            TimeUs arrival_us) {
  return TryDeliverShared(input, lines, arrival_us, nullptr);
}

std::shared_ptr<QueueShare> WorkerPool::NewShare() {
  return std::make_shared<QueueShare>(std::max<std::size_t>(options_.queue_capacity / 16, 64));
}

bool WorkerPool::TryDeliverShared(std::uint32_t input, std::span<const std::string_view> lines,
                                  TimeUs arrival_us, const std::shared_ptr<QueueShare>& share) {
  if (lines.empty()) return true;
  // Each ingest thread keeps the last settings it used, for the last pool it delivered to.
  thread_local std::uint64_t settings_pool = 0;
  thread_local Shared::SettingsPtr settings_held;
  if (settings_pool != shared_->pool_id) settings_held.reset();
  settings_pool = shared_->pool_id;
  shared_->UpdateSettings(settings_held);
  const Shared::Settings& settings = *settings_held;
  const SyslogParser& parser = settings.parser(input);
  const std::size_t n_workers = workers_.size();
  // Each line is parsed once, here: its scope picks the worker, and the worker copies the
  // fields the parse found instead of scanning the line again.
  thread_local std::vector<LogRecordView> views;
  thread_local std::vector<std::uint32_t> shard_of;
  thread_local std::vector<std::size_t> counts, bytes;
  thread_local LogRecord scratch;
  // A delivery of many lines (a TCP read after a pause holds thousands) grows the scratch to
  // ~150 B a line. Kept, that is memory each ingest thread holds for good and that creeps up
  // with every new largest delivery (most of the soak's residual RSS drift, by heaptrack), so
  // scratch past kDeliveryScratchKept lines is freed when the call ends.
  struct TrimScratch {
    ~TrimScratch() {
      if (views.capacity() > kDeliveryScratchKept) {
        std::vector<LogRecordView>().swap(views);
        std::vector<std::uint32_t>().swap(shard_of);
      }
    }
  } trim_scratch;
  views.resize(lines.size());
  shard_of.assign(lines.size(), 0);
  counts.assign(n_workers, 0);
  bytes.assign(n_workers, 0);
  bool parsed = true;
  for (std::size_t i = 0; i < lines.size() && parsed; ++i) {
    parsed = parser.ParseView(lines[i], arrival_us, views[i]);
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!parsed) {
      views[i] = LogRecordView{};
      views[i].raw = lines[i];
    }
    if (n_workers > 1) {
      std::uint64_t scope;
      if (parsed) {
        scope = ScopeHash(views[i], settings.merger.scope);
      } else {
        parser.Parse(lines[i], arrival_us, scratch);
        scope = ScopeHash(scratch, settings.merger.scope);
      }
      shard_of[i] = static_cast<std::uint32_t>(scope % n_workers);
    }
    ++counts[shard_of[i]];
    bytes[shard_of[i]] += views[i].raw.size();
  }
  if (budget_ != nullptr) {
    std::size_t total = 0;
    for (std::size_t s = 0; s < n_workers; ++s) total += bytes[s];
    if (!budget_->IntakeAllowed(total)) {
      refused_memory_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  }
  // Reserve room in every target queue, all or nothing.
  const bool waits = input < options_.waiting_inputs.size() && options_.waiting_inputs[input];
  const std::size_t limit = waits ? options_.queue_capacity / 4 * 3 : options_.queue_capacity;
  for (std::size_t s = 0; s < n_workers; ++s) {
    if (counts[s] == 0) continue;
    const std::size_t before = workers_[s]->pending.fetch_add(counts[s]);
    if (before + counts[s] > limit && before > 0) {
      for (std::size_t r = 0; r <= s; ++r) {
        if (counts[r] > 0) workers_[r]->pending.fetch_sub(counts[r]);
      }
      return false;
    }
  }
  // Counted before any worker can see (and release) them.
  if (share != nullptr) share->Add(lines.size());
  for (std::size_t s = 0; s < n_workers; ++s) {
    if (counts[s] == 0) continue;
    Worker& w = *workers_[s];
    Batch* b = nullptr;
    if (!w.free_batches.try_dequeue(b)) b = new Batch;
    b->input = input;
    b->arrival_us = arrival_us;
    b->parsed = parsed;
    b->share = share;
    b->bytes.clear();
    b->bytes.reserve(bytes[s]);  // so the views taken below never move
    b->views.clear();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (shard_of[i] != s) continue;
      const std::size_t at = b->bytes.size();
      b->bytes.append(views[i].raw);
      b->views.push_back(views[i].Rebased({b->bytes.data() + at, views[i].raw.size()}));
    }
    b->accounted = static_cast<std::int64_t>(b->bytes.capacity() +
                                             b->views.capacity() * sizeof(LogRecordView));
    if (budget_ != nullptr) budget_->Add(MemoryBudget::Part::kQueued, b->accounted);
    w.queue.enqueue(b);
  }
  return true;
}

bool WorkerPool::Settled(const QueueShare& share) {
  if (share.queued() != 0) return false;
  const auto sinks = shared_->GetSinks();
  return std::all_of(sinks->begin(), sinks->end(),
                     [](const Output& o) { return o.sink->buffered_bytes() == 0; });
}

void WorkerPool::OnWritable(std::function<void()> resume) {
  {
    std::lock_guard lock(writable_mu_);
    writable_waiters_.push_back(std::move(resume));
    has_waiters_.store(true);
  }
  // Space may have freed between the failed TryDeliver and this registration.
  bool has_room = true;
  for (const auto& w : workers_) {
    if (w->pending.load() >= options_.queue_capacity / 2) has_room = false;
  }
  if (has_room) NotifyWritable();
}

void WorkerPool::NotifyWritable() {
  std::vector<std::function<void()>> waiters;
  {
    std::lock_guard lock(writable_mu_);
    waiters.swap(writable_waiters_);
    has_waiters_.store(false);
  }
  for (auto& resume : waiters) resume();
}

void WorkerPool::Reconfigure(const MergerOptions& merger, std::vector<SyslogParser::Options> inputs,
                             bool event_time) {
  auto settings = std::make_unique<Shared::Settings>();
  for (const auto& in : inputs) settings->parsers.emplace_back(in);
  settings->merger = merger;
  settings->event_time = event_time;
  shared_->Publish(std::move(settings));
}

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

void WorkerPool::Run(Worker& w) {
  Batch* items[kDequeueBulk];
  Shared::SettingsPtr settings;
  shared_->UpdateSettings(settings);
  w.settings_version = settings->version;
  SubmitOutput(w);  // learns which encodings the sinks want
  TimeUs last_flush = WallClockNowUs();
  TimeUs last_flush_time = INT64_MIN;  // the merger clock of the latest Flush
  auto publish_stats = [&] {
    const MergerStats& s = w.merger->stats();
    *w.lines += s.lines - w.last_stats.lines;
    *w.merged += s.lines_merged - w.last_stats.lines_merged;
    *w.evicted += s.groups_evicted - w.last_stats.groups_evicted;
    *w.closed_memory += s.groups_closed_memory - w.last_stats.groups_closed_memory;
    *w.clock_backwards += s.clock_backwards - w.last_stats.clock_backwards;
    w.last_stats = s;
    for (int k = 0; k < kEventKinds; ++k) {
      if (w.events_since[k] != 0) *w.events[k] += std::exchange(w.events_since[k], 0);
    }
    for (int o = 0; o < static_cast<int>(ParseOutcome::kCount_); ++o) {
      if (w.parse_since[o] != 0) *w.parse[o] += std::exchange(w.parse_since[o], 0);
    }
    w.open_groups.store(w.merger->open_groups());
  };
  auto flush_time = [&](TimeUs wall) {
    if (!settings->event_time || w.event_clock == INT64_MIN) return wall;
    return w.event_clock + (wall - w.event_clock_wall);
  };
  while (true) {
    const std::size_t n = w.queue.wait_dequeue_bulk_timed(
        items, kDequeueBulk, std::chrono::microseconds(options_.flush_interval_us));
    shared_->UpdateSettings(settings);
    if (settings->version != w.settings_version) {
      w.settings_version = settings->version;
      MergerOptions mo = settings->merger;
      w.merger->Reconfigure(std::move(mo), w.encoder);
    }
    for (std::size_t i = 0; i < n; ++i) {
      Batch* b = items[i];
      if (b->checkpoint != nullptr) {
        StartCheckpoint(w, *b, flush_time(WallClockNowUs()));
        delete b;
        continue;
      }
      const SyslogParser& parser = settings->parser(b->input);
      for (const LogRecordView& line : b->views) {
        if (b->parsed) {
          line.CopyTo(w.record);
        } else {
          parser.Parse(line.raw, b->arrival_us, w.record);
        }
        ++w.parse_since[static_cast<int>(w.record.outcome)];
        TimeUs t = b->arrival_us;
        if (settings->event_time) {
          t = w.record.EventTime();
          if (t > w.event_clock) w.event_clock = t, w.event_clock_wall = b->arrival_us;
        }
        Fold(w, w.record, t);
      }
      w.pending.fetch_sub(b->views.size());
      // Released once the batch's events are in the sinks (below), for Settled.
      const std::shared_ptr<QueueShare> share = std::exchange(b->share, nullptr);
      const std::size_t batch_lines = b->views.size();
      if (budget_ != nullptr) {
        budget_->Add(MemoryBudget::Part::kQueued, -b->accounted);
        w.folded_since_measure += b->bytes.size();
        KeepGroupsInBudget(w, false);
      }
      // A recycled batch keeps its buffers' capacity, so an unbounded or large free list is
      // memory that only grows: every burst that outran the list left new batches behind,
      // each as large as the biggest delivery it ever held (the soak saw the live heap climb
      // ~4 MB/min this way). A few small ones cover the steady state; the rest are freed.
      if (w.free_batches.size_approx() < kFreeBatchesKept &&
          b->bytes.capacity() <= kBatchBytesKept &&
          b->views.capacity() * sizeof(LogRecordView) <= kBatchBytesKept * 2) {
        w.free_batches.enqueue(b);
      } else {
        delete b;
      }
      // Each batch's events leave at once rather than after the whole round: a new
      // message's `first` event must not wait behind up to kDequeueBulk batches.
      if (!w.ndjson.empty() || !w.syslog.empty() || w.RoutesPending()) SubmitOutput(w);
      if (share != nullptr) share->Release(batch_lines);
    }
    const TimeUs now = WallClockNowUs();
    if (n == 0 || now - last_flush >= options_.flush_interval_us) {
      last_flush_time = flush_time(now);
      w.merger->Flush(last_flush_time, w.encoder);
      last_flush = now;
      if (budget_ != nullptr) KeepGroupsInBudget(w, true);
    }
    w.tracker.MaybePublish(*w.merger, now);
    SubmitOutput(w);
    if (!w.checkpoints.empty()) AdvanceCheckpoints(w, last_flush_time);
    publish_stats();
    if (has_waiters_.load() && w.pending.load() < options_.queue_capacity / 2 &&
        (budget_ == nullptr || budget_->IntakeAllowed(0))) {
      NotifyWritable();
    }
    if (stopping_.load() && n == 0 && w.pending.load() == 0) break;
  }
  w.merger->FlushAll(w.encoder);
  if (budget_ != nullptr)
    budget_->Add(MemoryBudget::Part::kGroups, -std::exchange(w.groups_bytes, 0));
  SubmitOutput(w);
  publish_stats();
  // The sinks drain after the pool stopped, so no pending checkpoint can be confirmed here.
  for (PendingCheckpoint& c : w.checkpoints) c.state->Finish(false);
  w.checkpoints.clear();
}

void WorkerPool::Checkpoint(bool close_all, std::function<void(bool)> done) {
  if (stopping_.load()) {
    done(false);
    return;
  }
  auto state = std::make_shared<CheckpointState>();
  state->remaining.store(workers_.size());
  state->done = std::move(done);
  // Queued from the caller's thread, each marker follows every batch that thread queued
  // before (the queues keep one producer's items in order).
  for (auto& w : workers_) {
    auto* marker = new Batch;
    marker->checkpoint = state;
    marker->close_all = close_all;
    w->queue.enqueue(marker);
  }
}

// Every line before the marker is folded. close_all summarises every open group now;
// otherwise each is summarised by max(window, max_hold) later on the merger's clock (idle
// for a window, or its periodic max_hold summary), whichever comes first.
void WorkerPool::StartCheckpoint(Worker& w, Batch& marker, TimeUs merger_now) {
  PendingCheckpoint c;
  c.state = marker.checkpoint;
  if (marker.close_all) {
    w.merger->FlushAll(w.encoder);
    if (budget_ != nullptr) KeepGroupsInBudget(w, true);
    // Every group is summarised now: the checkpoints still waiting for their windows are
    // covered too and need only the sinks' confirmation.
    for (PendingCheckpoint& earlier : w.checkpoints) earlier.due = INT64_MIN;
  } else {
    const MergerOptions& m = w.merger->options();
    c.due = merger_now + std::max(m.window_us, m.max_hold_us);
  }
  w.checkpoints.push_back(std::move(c));
  SubmitOutput(w);
  AdvanceCheckpoints(w, INT64_MIN);
}

void WorkerPool::AdvanceCheckpoints(Worker& w, TimeUs last_flush_time) {
  const auto sinks = shared_->AcquireSinks(w.index);
  struct Release {
    Shared& shared;
    std::size_t worker;
    ~Release() { shared.ReleaseSinks(worker); }
  } release{*shared_, w.index};
  std::size_t finished = 0;
  for (PendingCheckpoint& c : w.checkpoints) {
    if (!c.marked || c.marks_for != sinks.get()) {
      // Marks are taken after the events of every group the checkpoint covers were handed
      // to the sinks (SubmitOutput ran since the flush); a reload's new sink list needs new
      // marks, which only delays the answer.
      if (c.due != INT64_MIN && last_flush_time < c.due) break;
      if (stopping_.load() && c.due != INT64_MIN) break;
      c.marks.clear();
      for (const Output& o : *sinks) c.marks.push_back(o.sink->AcceptedMark());
      c.marks_for = sinks.get();
      c.marked = true;
    }
    bool confirmed = true;
    for (std::size_t i = 0; i < sinks->size() && confirmed; ++i) {
      confirmed = (*sinks)[i].sink->Confirmed(c.marks[i]);
    }
    if (!confirmed) break;
    c.state->Finish(true);
    ++finished;
  }
  w.checkpoints.erase(w.checkpoints.begin(),
                      w.checkpoints.begin() + static_cast<std::ptrdiff_t>(finished));
}

// Folds one line. An allocation failure drops that line (counted) rather than the process,
// and takes back the bytes the line's events had begun to add to the output buffers, so no
// output ever gets a truncated event; the oldest group is closed to make room.
void WorkerPool::Fold(Worker& w, const LogRecord& record, TimeUs t) {
  const std::size_t ndjson_before = w.ndjson.size(), syslog_before = w.syslog.size();
  try {
    w.merger->Add(record, t, w.encoder);
  } catch (const std::bad_alloc&) {
    w.ndjson.resize(ndjson_before);
    w.syslog.resize(syslog_before);
    ++*w.dropped_memory;
    try {
      w.merger->CloseOldest(w.encoder);
    } catch (const std::bad_alloc&) {
      w.ndjson.resize(ndjson_before);
      w.syslog.resize(syslog_before);
    }
  }
}

// Measures the merger when it may have grown by 1/64 of the budget since it was last
// measured (or when asked, once a flush interval, if the budget is past 40 %), then closes
// least recently active groups while the budget is past its groups threshold. Each worker
// keeps at least 1/8 of the budget, shared between the workers, so that a full output
// buffer or queue does not wipe every window.
//
// A measure walks every open group: at 100 k groups (a flood of unique lines) that stalled
// the worker for tens of milliseconds every flush interval, the lines queued behind it with
// it (the adversarial bench's first-event p99). Far below the threshold, where the answer
// changes nothing, the folded-bytes step alone bounds how far the accounting can lag.
void WorkerPool::KeepGroupsInBudget(Worker& w, bool measure_now) {
  const std::uint64_t limit = budget_->limit();
  const std::uint64_t step = std::max<std::uint64_t>(limit / 64, 64 * 1024);
  const bool worth_it = measure_now && budget_->used() >= limit / 10 * 4;
  if (!worth_it && w.folded_since_measure < step) return;
  const auto usage = static_cast<std::int64_t>(w.merger->MemoryUsage());
  budget_->Add(MemoryBudget::Part::kGroups, usage - w.groups_bytes);
  w.groups_bytes = usage;
  w.folded_since_measure = 0;
  const auto floor = static_cast<std::int64_t>(limit / 8 / workers_.size());
  while (budget_->GroupsOverLimit() && w.groups_bytes > floor && w.merger->open_groups() > 0) {
    const auto freed = static_cast<std::int64_t>(w.merger->CloseOldest(w.encoder));
    budget_->Add(MemoryBudget::Part::kGroups, -freed);
    w.groups_bytes -= freed;
    if (w.ndjson.size() + w.syslog.size() >= 256 * 1024) SubmitOutput(w);
  }
}

void WorkerPool::Stop() {
  if (stopping_.exchange(true)) {
    for (auto& w : workers_) {
      if (w->thread.joinable()) w->thread.join();
    }
    return;
  }
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  NotifyWritable();
}

std::vector<std::shared_ptr<const GroupSnapshot>> WorkerPool::WatchGroups(TimeUs now_us) {
  std::vector<std::shared_ptr<const GroupSnapshot>> out;
  for (auto& w : workers_) {
    w->tracker.Watch(now_us);
    out.push_back(w->tracker.Latest());
  }
  return out;
}

std::size_t WorkerPool::queued_lines() const {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w->pending.load();
  return n;
}

std::size_t WorkerPool::retained_settings() const {
  return shared_->live_settings->load(std::memory_order_relaxed);
}

std::size_t WorkerPool::retained_batches() const {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w->free_batches.size_approx();
  return n;
}

std::size_t WorkerPool::open_groups() const {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w->open_groups.load();
  return n;
}

}  // namespace logfold
