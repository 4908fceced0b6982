// BlockingDelivery: retry on OnWritable, with a periodic retry as a safety net.
#include "daemon/inputs/blocking_delivery.h"

#include <chrono>

namespace logfold {

namespace {
// A lost wakeup in the target then costs latency rather than a stuck input.
constexpr auto kRetryInterval = std::chrono::seconds(1);
}  // namespace

BlockingDelivery::BlockingDelivery(std::uint32_t input, IngestTarget& target)
    : input_(input), target_(target), gate_(std::make_shared<Gate>()) {}

bool BlockingDelivery::Deliver(std::span<const std::string_view> lines, TimeUs arrival_us) {
  if (lines.empty()) return !stopped();
  bool registered = false;
  while (true) {
    if (stopped()) return false;
    if (target_.TryDeliver(input_, lines, arrival_us)) return true;
    if (!registered) {
      {
        std::lock_guard lock(gate_->mu);
        gate_->signaled = false;
      }
      // Not under the lock: the target may call `resume` synchronously.
      target_.OnWritable([gate = gate_] {
        {
          std::lock_guard lock(gate->mu);
          gate->signaled = true;
        }
        gate->cv.notify_all();
      });
      registered = true;
    }
    std::unique_lock lock(gate_->mu);
    gate_->cv.wait_for(lock, kRetryInterval, [&] { return gate_->signaled || gate_->stop; });
    if (gate_->signaled) registered = false;
  }
}

void BlockingDelivery::Stop() {
  {
    std::lock_guard lock(gate_->mu);
    gate_->stop = true;
  }
  gate_->cv.notify_all();
}

bool BlockingDelivery::stopped() const {
  std::lock_guard lock(gate_->mu);
  return gate_->stop;
}

}  // namespace logfold
