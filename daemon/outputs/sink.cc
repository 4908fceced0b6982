// MakeSink: validates the settings every sink shares and hands off to the type's factory.
#include "daemon/outputs/sink.h"

#include "daemon/outputs/http/http_sink.h"
#include "daemon/outputs/stream_sink.h"
#include "daemon/outputs/syslog_sink.h"
#include "daemon/outputs/tcp_sink.h"

namespace logfold {

Sink::~Sink() = default;

std::unique_ptr<Sink> MakeSink(const SinkConfig& config, Metrics& metrics, std::string& error) {
  if (config.name.empty()) {
    error = "sink: name is required";
    return nullptr;
  }
  // The name goes into Prometheus label values and log lines unescaped.
  for (char c : config.name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) {
      error = "sink \"" + config.name + "\": name may only contain letters, digits, _ - .";
      return nullptr;
    }
  }
  if (config.buffer_bytes == 0) {
    error = "sink " + config.name + ": buffer_bytes must be positive";
    return nullptr;
  }
  if (config.type == "stdout") return MakeStdoutSink(config, metrics);
  if (config.type == "file") return MakeFileSink(config, metrics, error);
  if (config.type == "tcp") return MakeTcpSink(config, metrics, error);
  if (config.type == "syslog") return MakeSyslogSink(config, metrics, error);
  if (config.type == "http") return MakeHttpSink(config, metrics, error);
  error = "sink " + config.name + ": type must be stdout, file, tcp, syslog or http, not \"" +
          config.type + "\"";
  return nullptr;
}

}  // namespace logfold
