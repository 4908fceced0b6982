// MakeSink: hands a validated output to the factory of its type.
#include "daemon/outputs/sink.h"

#include "daemon/outputs/http/http_sink.h"
#include "daemon/outputs/stream_sink.h"
#include "daemon/outputs/syslog_sink.h"
#include "daemon/outputs/tcp_sink.h"

namespace logfold {

Sink::~Sink() = default;

std::unique_ptr<Sink> MakeSink(const OutputConfig& output, Metrics& metrics, std::string& error) {
  switch (output.type) {
    case OutputType::kStdout:
      return MakeStdoutSink(output.sink, metrics);
    case OutputType::kFile:
      return MakeFileSink(output.sink, output.file, metrics, error);
    case OutputType::kTcp:
      return MakeTcpSink(output.sink, output.tcp, metrics);
    case OutputType::kSyslog:
      return MakeSyslogSink(output.sink, output.syslog, metrics);
    case OutputType::kHttp:
      return MakeHttpSink(output.sink, output.http, metrics);
  }
  error = "output " + output.sink.name + ": unknown type";
  return nullptr;
}

}  // namespace logfold
