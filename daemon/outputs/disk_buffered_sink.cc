// DiskBufferedSink: the direct path, the spill to disk and the feeder thread that moves the
// disk buffer's records into the output's sink, each removed only once the sink took it.
#include "daemon/outputs/disk_buffered_sink.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "daemon/runtime/thread_name.h"

namespace logfold {
namespace {

constexpr auto kSlice = std::chrono::milliseconds(200);

}  // namespace

DiskBufferedSink::DiskBufferedSink(std::unique_ptr<Sink> inner, std::shared_ptr<DiskQueue> queue,
                                   Metrics& metrics)
    : inner_(std::move(inner)),
      queue_(std::move(queue)),
      shutdown_loss_(metrics, inner_->name(), "shutdown"),
      spilled_(metrics.GetCounter("logfold_disk_buffer_spilled_batches_total",
                                  "Batches an output sent to its disk buffer because its sink "
                                  "was full or the buffer already held older events",
                                  "sink=\"" + inner_->name() + "\"")) {
  feeder_ = std::thread([this] { Feed(); });
  NameThread(feeder_, "lf-disk-" + inner_->name());
}

DiskBufferedSink::~DiskBufferedSink() { Stop(std::chrono::steady_clock::now()); }

bool DiskBufferedSink::Submit(std::string_view batch,
                              std::chrono::steady_clock::time_point deadline) {
  if (batch.empty()) return true;
  std::lock_guard lock(submit_mu_);
  if (stopping_.load()) return false;
  // Older events on disk go first: only an empty buffer lets a batch pass it.
  if (queue_->empty() && inner_->Submit(batch, std::chrono::steady_clock::now())) return true;
  if (!queue_->Push(batch, deadline)) return false;
  spilled_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void DiskBufferedSink::Feed() {
  std::string record;
  while (!stopping_.load()) {
    if (!queue_->Peek(record, std::chrono::steady_clock::now() + kSlice, this)) continue;
    bool taken = false;
    while (!taken && !stopping_.load()) {
      taken = inner_->Submit(record, std::chrono::steady_clock::now() + kSlice);
    }
    if (taken) {
      queue_->Commit(this);
    } else {
      queue_->Release(this);
    }
  }
}

bool DiskBufferedSink::Stop(std::chrono::steady_clock::time_point deadline,
                            std::string* /*unsent*/) {
  std::lock_guard stop_lock(stop_mu_);
  if (stopped_) return drained_;
  {
    std::lock_guard lock(submit_mu_);
    stopping_.store(true);
  }
  feeder_.join();
  std::string rest;
  drained_ = inner_->Stop(deadline, &rest);
  if (!rest.empty() && !queue_->PushFront(rest)) {
    const EventTally t = shutdown_loss_.Count(rest, inner_->encoding());
    spdlog::error("sink {}: lost {} events ({} lines): the disk buffer refused them", name(),
                  t.events, t.lines);
  }
  queue_->Persist();
  const std::uint64_t kept = queue_->bytes();
  if (kept > 0) {
    spdlog::info("sink {}: {} bytes of events kept in the disk buffer for the next start", name(),
                 kept);
  }
  drained_ = drained_ && kept == 0;
  stopped_ = true;
  return drained_;
}

std::size_t DiskBufferedSink::buffered_bytes() const {
  return inner_->buffered_bytes() + static_cast<std::size_t>(queue_->bytes());
}

}  // namespace logfold
