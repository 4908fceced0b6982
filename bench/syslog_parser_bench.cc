// Throughput of SyslogParser on realistic RFC 3164, RFC 5424, raw and JSON lines, parsing into
// one recycled record as the daemon's workers do. Reports lines/s (items) and bytes/s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string_view>

#include "pipeline/log_record.h"
#include "pipeline/syslog_parser.h"

namespace logfold {
namespace {

// 2025-11-22T00:13:30Z, close to the RFC 3164 timestamps below so year inference is realistic.
constexpr TimeUs kArrival = 1763770410000000;

constexpr std::string_view kRfc3164Lines[] = {
    "<86>Nov 22 00:13:28 web-03 sshd[28119]: Accepted publickey for deploy from 10.20.30.40 "
    "port 51122 ssh2: RSA SHA256:Xb0kq3m9cJ2F1nZs8y4pLwV7tR6uE5oI0aH9gD2fK1",
    "<30>Nov 22 00:13:28 db-1 systemd[1]: Started Session 4211 of user postgres.",
    "<13>Nov 22 00:13:29 root: backup finished in 312s, 48213 files",
    "<22>Nov  2 00:13:29 mx1 postfix/smtpd[4410]: connect from unknown[203.0.113.7]",
    "<4>Nov 22 00:13:30 edge-fw kernel: [1234567.890123] IN=eth0 OUT= MAC=00:16:3e:aa:bb:cc "
    "SRC=198.51.100.23 DST=192.0.2.10 LEN=60 TOS=0x00 PROTO=TCP SPT=43211 DPT=22 SYN",
};

constexpr std::string_view kRfc5424Lines[] = {
    "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 "
    "iut=\"3\" eventSource=\"Application\" eventID=\"1011\"] \xEF\xBB\xBF"
    "An application event log entry...",
    "<13>1 2026-11-22T00:13:28.123456+00:00 myhost root 1234 - [timeQuality tzKnown=\"1\" "
    "isSynced=\"0\"] hello",
    "<134>1 2025-11-22T00:13:28.512+01:00 api-7 checkout 8812 REQ - GET /v1/cart/9f2c "
    "status=200 dur_ms=14 user=u_18a7",
    "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make "
    "the do-nuts.",
};

constexpr std::string_view kJsonLines[] = {
    R"({"@timestamp":"2025-11-22T00:13:28.512Z","host":"api-7","app":"checkout",)"
    R"("severity":"info","message":"GET /v1/cart/9f2c status=200","dur_ms":14})",
    R"({"time":"2025-11-22T00:13:29Z","hostname":"db-1","severity":3,)"
    R"("message":"connection reset by peer","peer":"10.0.0.4:5432"})",
};

template <std::size_t N>
void RunParser(benchmark::State& state, const SyslogParser& parser,
               const std::string_view (&lines)[N]) {
  LogRecord record;
  std::int64_t bytes = 0;
  std::size_t i = 0;
  for (auto _ : state) {
    const std::string_view line = lines[i];
    benchmark::DoNotOptimize(parser.Parse(line, kArrival, record));
    benchmark::DoNotOptimize(record.message.data());
    bytes += static_cast<std::int64_t>(line.size());
    i = i + 1 == N ? 0 : i + 1;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}

SyslogParser MakeParser(InputFormat format) {
  SyslogParser::Options options;
  options.format = format;
  return SyslogParser(options);
}

void BM_ParseRfc3164(benchmark::State& state) {
  RunParser(state, MakeParser(InputFormat::kSyslog), kRfc3164Lines);
}
BENCHMARK(BM_ParseRfc3164);

void BM_ParseRfc5424(benchmark::State& state) {
  RunParser(state, MakeParser(InputFormat::kSyslog), kRfc5424Lines);
}
BENCHMARK(BM_ParseRfc5424);

void BM_ParseRawMode(benchmark::State& state) {
  RunParser(state, MakeParser(InputFormat::kRaw), kRfc3164Lines);
}
BENCHMARK(BM_ParseRawMode);

// For scale only: JSON mode builds a DOM per line and is expected to be far slower.
void BM_ParseJson(benchmark::State& state) {
  RunParser(state, MakeParser(InputFormat::kJson), kJsonLines);
}
BENCHMARK(BM_ParseJson);

}  // namespace
}  // namespace logfold

BENCHMARK_MAIN();
