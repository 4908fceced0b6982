// QueueShare: how many of one sender's lines wait in the engine's queues, so that one sender
// (a TCP connection flooding garbage) cannot fill a worker queue while others send: past its
// limit it waits for the workers to take its lines while every other sender is served. A
// sender alone (no other delivered lately, see ShareContention) is not held to its share.
#ifndef LOGFOLD_DAEMON_INPUTS_QUEUE_SHARE_H_
#define LOGFOLD_DAEMON_INPUTS_QUEUE_SHARE_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>

namespace logfold {

// Whether the senders of one target contend: some other sender delivered (or tried to) within
// the last kWindow. A share binds only then. A lone fast sender held to a share of the queue
// pipelines less (its reads wait for the workers to take half its share, then for the io
// thread to wake): end to end on one connection that cost ~13 % of the wall-clock rate.
class ShareContention {
 public:
  static constexpr std::chrono::milliseconds kWindow{1000};

  // By the target, on every delivery attempt (refused ones too: a refused sender is one
  // waiting): `sender` is the share's address, or null for senders without one (UDP).
  // Writes only when the sender changes, so a lone sender's deliveries touch no shared line.
  // The first sender ever contends with nobody.
  void Note(const void* sender) {
    if (last_sender_.load(std::memory_order_relaxed) == sender) return;
    if (last_sender_.exchange(sender, std::memory_order_relaxed) == &kNobody) return;
    contended_until_ns_.store(NowNs() + std::chrono::nanoseconds(kWindow).count(),
                              std::memory_order_relaxed);
  }
  bool Contended() const { return NowNs() < contended_until_ns_.load(std::memory_order_relaxed); }

 private:
  static std::int64_t NowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  static constexpr char kNobody = 0;
  std::atomic<const void*> last_sender_{&kNobody};
  std::atomic<std::int64_t> contended_until_ns_{0};
};

class QueueShare {
 public:
  // Without `contention` the share always binds.
  explicit QueueShare(std::size_t limit, std::shared_ptr<const ShareContention> contention = {})
      : limit_(limit), contention_(std::move(contention)) {}
  QueueShare(const QueueShare&) = delete;
  QueueShare& operator=(const QueueShare&) = delete;

  std::size_t limit() const { return limit_; }
  std::size_t queued() const { return queued_.load(std::memory_order_acquire); }

  // Whether `n` more lines may be offered. Always when none are queued, so that one delivery
  // larger than the limit still goes (alone), and always while no other sender contends (the
  // target's own queue limit then holds the sender back). Only the sender adds, so a true
  // answer stays true until it offers: workers only take lines out.
  bool Fits(std::size_t n) const {
    const std::size_t q = queued();
    return q == 0 || q + n <= limit_ || (contention_ != nullptr && !contention_->Contended());
  }

  // By the target: `n` of the sender's lines entered its queues (before a worker can see
  // them), and `n` left them (a worker took them).
  void Add(std::size_t n) { queued_.fetch_add(n, std::memory_order_acq_rel); }
  void Release(std::size_t n) {
    const std::size_t after = queued_.fetch_sub(n, std::memory_order_acq_rel) - n;
    if (has_waiter_.load(std::memory_order_acquire) &&
        after <= wake_at_.load(std::memory_order_relaxed)) {
      Wake();
    }
  }

  // Calls `resume` once, from any thread, when `n` lines fit again and at most half the
  // limit is queued (at once, on this thread, if that is already so). Resuming at half rather
  // than as soon as `n` fit keeps the workers busy with the other half while the sender reads
  // on, and wakes it once per half a share instead of once per batch.
  void OnRoom(std::size_t n, std::function<void()> resume) {
    const std::size_t wake_at = n >= limit_ ? 0 : limit_ - std::max(n, limit_ / 2);
    {
      std::lock_guard lock(mu_);
      waiter_ = std::move(resume);
      wake_at_.store(wake_at, std::memory_order_relaxed);
      has_waiter_.store(true, std::memory_order_release);
    }
    if (queued() <= wake_at) Wake();
  }

 private:
  void Wake() {
    std::function<void()> resume;
    {
      std::lock_guard lock(mu_);
      if (!has_waiter_.load(std::memory_order_relaxed)) return;
      has_waiter_.store(false, std::memory_order_relaxed);
      resume = std::move(waiter_);
      waiter_ = nullptr;
    }
    if (resume) resume();
  }

  const std::size_t limit_;
  const std::shared_ptr<const ShareContention> contention_;
  std::atomic<std::size_t> queued_{0};
  std::atomic<bool> has_waiter_{false};
  std::atomic<std::size_t> wake_at_{0};  // the waiter's: queued lines at which it fits
  std::mutex mu_;
  std::function<void()> waiter_;  // under mu_
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_QUEUE_SHARE_H_
