// IngestTarget: where listeners hand received lines. Implemented by the worker pool, which
// parses them and routes each record to the worker that owns its scope.
#ifndef LOGFOLD_DAEMON_INGEST_TARGET_H_
#define LOGFOLD_DAEMON_INGEST_TARGET_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "daemon/inputs/queue_share.h"
#include "pipeline/log_record.h"

namespace logfold {

class IngestTarget {
 public:
  virtual ~IngestTarget() = default;

  // Delivers `lines` (frame terminators already removed; views valid only during the call)
  // that arrived on input number `input` at `arrival_us`. All or nothing: returns false
  // when the queues are too full to take all of them, and then takes none. A TCP caller then
  // stops reading and waits for OnWritable; a UDP caller counts the lines as dropped.
  virtual bool TryDeliver(std::uint32_t input, std::span<const std::string_view> lines,
                          TimeUs arrival_us) = 0;

  // Calls `resume` once (from any thread) when a TryDeliver is likely to succeed again.
  virtual void OnWritable(std::function<void()> resume) = 0;

  // Fairness between the senders of a waiting input (one per TCP connection): a share of the
  // target's queues, or null when the target keeps none. A sender offers lines only while
  // its share Fits() them and delivers them with TryDeliverShared, which counts them in the
  // share until a worker took them; when it does not fit, the sender waits for
  // QueueShare::OnRoom instead of OnWritable.
  virtual std::shared_ptr<QueueShare> NewShare() { return nullptr; }
  virtual bool TryDeliverShared(std::uint32_t input, std::span<const std::string_view> lines,
                                TimeUs arrival_us, const std::shared_ptr<QueueShare>& /*share*/) {
    return TryDeliver(input, lines, arrival_us);
  }

  // For inputs that save a read position (followed files): true once every line delivered
  // with `share` was folded and every event the engine had handed to the outputs by then was
  // written out. A position saved after that survives a kill -9 with no line lost; one saved
  // sooner could be ahead of lines still queued or in an output's buffer. Targets that keep
  // no shares: always true.
  virtual bool Settled(const QueueShare& /*share*/) { return true; }
  // For inputs that commit a position (Kafka offsets): calls `done` once, from any thread,
  // when every line the calling thread delivered before this call is in an event that every
  // output confirmed; done(false) when the target stopped first. `close_all` summarises
  // every open group now (a revoke, a stop); otherwise the groups close when their windows
  // say so (within max(window, max_hold)). The default suits a target that keeps nothing
  // once it took a line.
  virtual void Checkpoint(bool /*close_all*/, std::function<void(bool)> done) { done(true); }

  // Like TryDeliverShared, for inputs that know more about their lines (Kafka):
  // - `scope_salt` (nonzero) marks lines that must never share a group with lines of another
  //   source (a Kafka partition): it is set on each record and keeps its groups apart
  //   (LogRecord::scope_salt). Routed to the worker of the unsalted scope. 0: none.
  // - `origins` (empty, or `origins[i]` for `lines[i]`) says where each line came from, for
  //   inputs that can name a line again after a restart: the events carry the origin of the
  //   first line they cover, hence ids that a replay reproduces (LogRecord::origin).
  // The default drops both.
  virtual bool TryDeliverSalted(std::uint32_t input, std::span<const std::string_view> lines,
                                TimeUs arrival_us, const std::shared_ptr<QueueShare>& share,
                                std::uint32_t /*scope_salt*/,
                                std::span<const LineOrigin> /*origins*/ = {}) {
    return TryDeliverShared(input, lines, arrival_us, share);
  }
  // Like Checkpoint, but instead of waiting for windows it summarises now the open groups of
  // the sources `salts` only (a revoked Kafka partition): `done(true)` means every line the
  // calling thread delivered with those salts before this call is in an event every output
  // confirmed. Other groups stay open.
  virtual void CloseSalted(std::vector<std::uint32_t> /*salts*/, std::function<void(bool)> done) {
    done(true);
  }
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_INGEST_TARGET_H_
