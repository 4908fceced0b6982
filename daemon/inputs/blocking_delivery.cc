// BlockingDelivery: retry on OnWritable, with a periodic retry as a safety net.
#include "daemon/inputs/blocking_delivery.h"

#include <chrono>
#include <utility>

namespace logfold {

namespace {
// A lost wakeup in the target then costs latency rather than a stuck input.
constexpr auto kRetryInterval = std::chrono::seconds(1);
}  // namespace

BlockingDelivery::BlockingDelivery(std::uint32_t input, IngestTarget& target,
                                   std::shared_ptr<QueueShare> share)
    : input_(input), target_(target), share_(std::move(share)), gate_(std::make_shared<Gate>()) {}

bool BlockingDelivery::Deliver(std::span<const std::string_view> lines, TimeUs arrival_us,
                               std::uint32_t scope_salt, std::span<const LineOrigin> origins) {
  if (lines.empty()) return !stopped();
  bool registered = false;
  while (true) {
    if (stopped()) return false;
    const bool fits = share_ == nullptr || share_->Fits(lines.size());
    const bool plain = scope_salt == 0 && origins.empty();
    if (fits && (plain ? target_.TryDeliverShared(input_, lines, arrival_us, share_)
                       : target_.TryDeliverSalted(input_, lines, arrival_us, share_, scope_salt,
                                                  origins))) {
      return true;
    }
    if (!registered) {
      {
        std::lock_guard lock(gate_->mu);
        gate_->signaled = false;
      }
      auto resume = [gate = gate_] {
        {
          std::lock_guard lock(gate->mu);
          gate->signaled = true;
        }
        gate->cv.notify_all();
      };
      // Not under the lock: the target or the share may call `resume` synchronously.
      if (fits) {
        target_.OnWritable(std::move(resume));
      } else {
        share_->OnRoom(lines.size(), std::move(resume));
      }
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
