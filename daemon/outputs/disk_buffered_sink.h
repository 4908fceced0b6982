// DiskBufferedSink: an output with a disk buffer. Events go straight to the output's own
// (memory) sink while it keeps up; when it is down or slow they spill to a DiskQueue, which
// survives restarts and is fed back in order once the output takes data again.
#ifndef LOGFOLD_DAEMON_DISK_BUFFERED_SINK_H_
#define LOGFOLD_DAEMON_DISK_BUFFERED_SINK_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "daemon/outputs/disk_queue.h"
#include "daemon/outputs/loss_counter.h"
#include "daemon/outputs/sink.h"
#include "daemon/runtime/metrics.h"

namespace logfold {

class DiskBufferedSink final : public Sink {
 public:
  DiskBufferedSink(std::unique_ptr<Sink> inner, std::shared_ptr<DiskQueue> queue, Metrics& metrics);
  ~DiskBufferedSink() override;
  DiskBufferedSink(const DiskBufferedSink&) = delete;
  DiskBufferedSink& operator=(const DiskBufferedSink&) = delete;

  const std::string& name() const override { return inner_->name(); }
  SinkEncoding encoding() const override { return inner_->encoding(); }
  // Waits only while the disk buffer is at its size limit (then `when_full` applies).
  bool Submit(std::string_view batch, std::chrono::steady_clock::time_point deadline) override;
  void Reopen() override { inner_->Reopen(); }
  // Stops feeding, stops the inner sink by `deadline` and puts what it could not deliver
  // back at the front of the disk buffer, for the next start (or the output's next sink
  // after a reload): nothing goes to `unsent`.
  using Sink::Stop;
  bool Stop(std::chrono::steady_clock::time_point deadline, std::string* unsent) override;
  std::size_t buffered_bytes() const override;
  // A batch is safe once the inner sink confirmed it or it is in the disk buffer (written to
  // its file, which outlives a crash of the daemon: the next start sends it). So the inner
  // sink's mark covers everything submitted so far, and a busy output still confirms.
  std::uint64_t AcceptedMark() const override { return inner_->AcceptedMark(); }
  bool Confirmed(std::uint64_t mark) const override { return inner_->Confirmed(mark); }

 private:
  void Feed();

  const std::unique_ptr<Sink> inner_;
  const std::shared_ptr<DiskQueue> queue_;
  LossCounter shutdown_loss_;
  Metrics::Counter& spilled_;
  std::mutex submit_mu_;  // keeps submitters in order between the direct path and the disk
  std::atomic<bool> stopping_{false};
  std::mutex stop_mu_;
  bool stopped_ = false;
  bool drained_ = false;
  std::thread feeder_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_DISK_BUFFERED_SINK_H_
