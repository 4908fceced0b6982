// MakeSink: hands a validated output to the factory of its type, behind a disk buffer when the
// output has one.
#include "daemon/outputs/sink.h"

#include <algorithm>

#include "daemon/outputs/disk_buffered_sink.h"
#include "daemon/outputs/disk_queue.h"
#include "daemon/outputs/http/http_sink.h"
#include "daemon/outputs/kafka_sink.h"
#include "daemon/outputs/relp_sink.h"
#include "daemon/outputs/stream_sink.h"
#include "daemon/outputs/syslog_sink.h"
#include "daemon/outputs/tcp_sink.h"

namespace logfold {

Sink::~Sink() = default;

namespace {

std::unique_ptr<Sink> MakeMemorySink(const OutputConfig& output, Metrics& metrics,
                                     std::string& error) {
  switch (output.type) {
    case OutputType::kStdout:
      return MakeStdoutSink(output.sink, metrics);
    case OutputType::kFile:
      return MakeFileSink(output.sink, output.file, metrics, error);
    case OutputType::kTcp:
      return MakeTcpSink(output.sink, output.tcp, metrics, error);
    case OutputType::kSyslog:
      return MakeSyslogSink(output.sink, output.syslog, metrics, error);
    case OutputType::kHttp:
      return MakeHttpSink(output.sink, output.http, metrics, error);
    case OutputType::kRelp:
      return MakeRelpSink(output.sink, output.relp, metrics);
    case OutputType::kKafka:
      return MakeKafkaSink(output.sink, output.kafka, metrics, error);
  }
  error = "output " + output.sink.name + ": unknown type";
  return nullptr;
}

}  // namespace

std::unique_ptr<Sink> MakeSink(const OutputConfig& output, Metrics& metrics, std::string& error) {
  std::shared_ptr<DiskQueue> queue;
  const DiskBufferOptions& disk = output.sink.disk_buffer;
  if (!disk.directory.empty()) {
    DiskQueue::Options o;
    o.dir = disk.directory;
    o.max_bytes = disk.max_size;
    o.segment_bytes = std::clamp<std::uint64_t>(o.max_bytes / 8, 64 << 10, 8 << 20);
    o.sink_name = output.sink.name;
    queue = DiskQueue::Open(o, metrics, error);
    if (!queue) return nullptr;
  }
  auto sink = MakeMemorySink(output, metrics, error);
  if (!sink || !queue) return sink;
  return std::make_unique<DiskBufferedSink>(std::move(sink), std::move(queue), metrics);
}

}  // namespace logfold
