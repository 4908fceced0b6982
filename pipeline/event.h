// Event: what the engine emits (a group's first occurrence, a group summary, or an annotated
// line) and the EventSink interface that receives them. Events borrow the engine's storage:
// every pointer and view is valid only during the OnEvent call.
#ifndef LOGFOLD_PIPELINE_EVENT_H_
#define LOGFOLD_PIPELINE_EVENT_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "pipeline/log_record.h"

namespace logfold {

enum class EventKind : std::uint8_t {
  kFirst,     // the first line of a new group, emitted at once
  kSummary,   // lines a group absorbed since its previous event
  kAnnotate,  // annotate mode: every line, with its group
  // A line that brought a new value into an enumeration-like slot of its group (the first 500
  // among 200s), emitted at once. A notice: the line is still counted in the group's next
  // summary, so first events and summary counts keep adding up to the lines fed in.
  kNewValue,
};

// Why a summary was emitted.
enum class SummaryReason : std::uint8_t {
  kIdle,       // no line joined for `window`
  kMaxHold,    // periodic summary of a group that keeps receiving
  kEvicted,    // max_groups reached: the least recently active group was closed early
  kShutdown,   // FlushAll (shutdown, reload that changes scoping)
  kMemory,     // the daemon's memory budget neared: the least recently active group went first
  kRecovered,  // restored from a checkpoint under options that key groups differently
};

std::string_view EventKindName(EventKind kind);
std::string_view SummaryReasonName(SummaryReason reason);

// Summaries: what one variable slot of the group's template took, over the group's life.
struct SlotValueCount {
  std::string_view value;   // as written (at most SlotStats::kValueBytes bytes)
  std::uint64_t count = 0;  // lines with it (an upper bound once rarer values were evicted)
};
struct SlotSummary {
  std::uint32_t token = 0;              // token position in the message (after its header)
  std::uint64_t distinct = 0;           // distinct values (estimated beyond a few hundred)
  std::uint64_t lines = 0;              // lines counted here
  std::span<const SlotValueCount> top;  // most frequent first, at most SlotStats::kTop
};

struct Event {
  EventKind kind = EventKind::kFirst;
  SummaryReason reason = SummaryReason::kIdle;  // summaries only
  bool closed = false;                          // summaries: the group is closed after this event
  std::uint64_t group_id = 0;  // stable for the group's life, unique per engine instance
  std::uint64_t fingerprint = 0;
  // kFirst/kAnnotate: the line. kSummary: the group's first line (a sample).
  const LogRecord* record = nullptr;
  // kSummary: the latest line that joined (a sample); may equal `record` for one-line groups.
  const LogRecord* last_record = nullptr;
  std::string_view template_text;  // message with the positions that varied as <*>
  // kSummary: lines this summary stands for, i.e. absorbed since the group's previous event
  // and not emitted otherwise. Sum over `first` events (1 each) and summary counts equals the
  // number of lines fed in.
  std::uint64_t count = 0;
  std::uint64_t count_total = 0;  // lines in the group so far, including its first
  TimeUs first_seen_us = 0;       // event time of the group's first line
  TimeUs last_seen_us = 0;        // event time of its latest line
  int max_distance = 0;           // largest Hamming distance of a line that joined
  // The level and logger of the application's own header in the message (kSummary: of the
  // group's first line), when MergerOptions::infer_header found one; else empty.
  std::string_view level;
  std::string_view logger;
  // When the scope key leaves out the host: distinct hosts seen (bounded), and whether
  // more were seen than listed.
  std::span<const std::string> hosts;
  // kSummary: per variable slot, its distinct-value count and top values (bounded).
  // kNewValue: the slots that took a new value, the line's value counted in.
  std::span<const SlotSummary> slots;
  // kSummary: the peer endpoints that opened the group's lines (context kept out of the
  // template, so in no slot), over the lines that had one; null when none had. `token` is 0.
  const SlotSummary* peer = nullptr;
  bool hosts_truncated = false;
  // The origin of the first line this event covers (kFirst, kAnnotate, kNewValue: the line;
  // kSummary: the first line absorbed since the group's previous event); stream 0 when the
  // input gives none. A replay of the same lines yields the same origins.
  LineOrigin origin;
};

// Receives events synchronously on the engine's thread.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const Event& event) = 0;
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_EVENT_H_
