// BlockingDelivery: hands lines to an IngestTarget from an input's own thread, waiting while
// the target is full, so that inputs which can wait (followed files, the journal, a local
// socket) never drop. Stop() interrupts a wait from any thread.
#ifndef LOGFOLD_DAEMON_INPUTS_BLOCKING_DELIVERY_H_
#define LOGFOLD_DAEMON_INPUTS_BLOCKING_DELIVERY_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>

#include "daemon/inputs/ingest_target.h"
#include "pipeline/log_record.h"

namespace logfold {

class BlockingDelivery {
 public:
  // `target` must outlive this object. With a `share` (IngestTarget::NewShare), lines are
  // delivered within it, waiting on it when it is full, and counted in it.
  BlockingDelivery(std::uint32_t input, IngestTarget& target,
                   std::shared_ptr<QueueShare> share = nullptr);

  // True once `lines` were taken (at once or after waiting); false if Stop() came first,
  // and then none of them were taken. A nonzero `scope_salt` goes with the lines, and
  // `origins`, when given, names each line's origin (both: IngestTarget::TryDeliverSalted).
  bool Deliver(std::span<const std::string_view> lines, TimeUs arrival_us,
               std::uint32_t scope_salt = 0, std::span<const LineOrigin> origins = {});
  void Stop();
  bool stopped() const;

 private:
  // Shared with OnWritable callbacks, which may outlive this object inside the target.
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool signaled = false;
    bool stop = false;
  };
  const std::uint32_t input_;
  IngestTarget& target_;
  const std::shared_ptr<QueueShare> share_;
  std::shared_ptr<Gate> gate_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INPUTS_BLOCKING_DELIVERY_H_
