// TallyEvents reads only the fixed prefix the encoders write (kind, then a summary's count),
// so it never parses a message and costs nothing on the delivery path (losses only).
#include "daemon/outputs/loss_counter.h"

#include <charconv>

#include "daemon/outputs/syslog_event_encoder.h"

namespace logfold {
namespace {

std::uint64_t ParseCount(std::string_view rest) {
  std::uint64_t n = 0;
  const auto r = std::from_chars(rest.data(), rest.data() + rest.size(), n);
  return r.ec == std::errc() ? n : 1;
}

// Lines one NDJSON record stands for: {"kind":"first"|"annotate",...} or a summary whose
// ,"count": comes before any free text (reason and closed are fixed words). A new_value
// notice stands for none: its line is counted in its group's summary.
std::uint64_t NdjsonLines(std::string_view record) {
  constexpr std::string_view kNotice = R"({"kind":"new_value")";
  if (record.substr(0, kNotice.size()) == kNotice) return 0;
  constexpr std::string_view kSummary = R"({"kind":"summary")";
  if (record.substr(0, kSummary.size()) != kSummary) return 1;
  constexpr std::string_view kCount = R"(,"count":)";
  const std::size_t at = record.find(kCount);
  return at == std::string_view::npos ? 1 : ParseCount(record.substr(at + kCount.size()));
}

// RFC 5424 as AppendEventSyslog writes it: "<PRI>1 TS HOST APP PROCID KIND [logfold@... count="N"".
std::uint64_t SyslogLines(std::string_view record) {
  std::size_t pos = 0;
  for (int field = 0; field < 5; ++field) {
    pos = record.find(' ', pos);
    if (pos == std::string_view::npos) return 1;
    ++pos;
  }
  if (record.substr(pos, 10) == "new_value ") return 0;
  if (record.substr(pos, 8) != "summary ") return 1;
  constexpr std::string_view key = " count=\"";
  const std::size_t at = record.find(key, pos);
  const std::size_t sd_end = record.find(']', pos);
  if (at == std::string_view::npos || at > sd_end) return 1;
  return ParseCount(record.substr(at + key.size()));
}

}  // namespace

EventTally TallyEvents(std::string_view batch, SinkEncoding encoding) {
  EventTally t;
  while (!batch.empty()) {
    const std::size_t nl = batch.find('\n');
    const std::string_view record = batch.substr(0, nl);
    batch.remove_prefix(nl == std::string_view::npos ? batch.size() : nl + 1);
    if (record.empty()) continue;
    ++t.events;
    t.lines += encoding == SinkEncoding::kNdjson ? NdjsonLines(record) : SyslogLines(record);
  }
  return t;
}

LossCounter::LossCounter(Metrics& metrics, const std::string& sink, std::string_view reason)
    : events_(metrics.GetCounter(
          "logfold_output_lost_events_total",
          "Events an output gave up on, by reason (shutdown deadline, reload without a "
          "successor, when_full drop, abandoned at the shutdown deadline)",
          "sink=\"" + sink + "\",reason=\"" + std::string(reason) + "\"")),
      lines_(metrics.GetCounter("logfold_output_lost_lines_total",
                                "Input lines the lost events stood for (first/annotate 1, "
                                "summary its count), by reason",
                                "sink=\"" + sink + "\",reason=\"" + std::string(reason) + "\"")) {}

EventTally LossCounter::Count(std::string_view batch, SinkEncoding encoding) {
  const EventTally t = TallyEvents(batch, encoding);
  events_.fetch_add(t.events, std::memory_order_relaxed);
  lines_.fetch_add(t.lines, std::memory_order_relaxed);
  return t;
}

}  // namespace logfold
