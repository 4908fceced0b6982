// logfold command line: dispatches to `replay` (offline folding), `serve` (the daemon),
// `check-config` and `explain`.
#include <cstdio>
#include <string>
#include <vector>

#include "daemon/commands/check_config_command.h"
#include "daemon/commands/explain_command.h"
#include "daemon/commands/replay_command.h"
#include "daemon/commands/top_command.h"
#include "daemon/server.h"

namespace {

constexpr char kUsage[] =
    "usage: logfold COMMAND [options]\n"
    "commands:\n"
    "  serve [--config FILE]   run the daemon (embedded default config without --config)\n"
    "  check-config [FILE]     validate a config file (--print shows the effective config)\n"
    "  replay [FILE...]        fold files or stdin, NDJSON events to stdout\n"
    "  explain LINE_A LINE_B   show why two lines merge or not\n"
    "  --version               print the version\n"
    "  top [--url URL]         show what a running daemon is folding now, like top(1)\n"
    "run 'logfold COMMAND --help' for a command's options\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "replay") return logfold::RunReplay(args, stdout, stderr);
  if (command == "explain") return logfold::RunExplain(args, stdout, stderr);
  if (command == "serve") return logfold::RunServe(args);
  if (command == "top") return logfold::RunTop(args, stdout, stderr);
  if (command == "check-config") return logfold::RunCheckConfig(args, stdout, stderr);
  if (command == "--version" || command == "version") {
    std::printf("logfold %s\n", LOGFOLD_VERSION);
    return 0;
  }
  if (command == "-h" || command == "--help" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "logfold: unknown command \"%s\"\n%s", command.c_str(), kUsage);
  return 2;
}
