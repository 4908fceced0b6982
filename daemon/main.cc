// logfold command line: `replay` (offline), `serve` (daemon), `check-config`, `explain`.
#include <cstdio>

int main() {
  std::fputs("logfold: no command yet\n", stderr);
  return 2;
}
