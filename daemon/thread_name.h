// NameThread: gives a thread a name that top -H, ps -L, perf and /proc show, so
// an operator can tell the ingest thread from a worker or a sink writer.
#pragma once

#include <string_view>
#include <thread>

namespace logfold {

// Named by the thread that started it, so the name is in place before anyone looks. Linux
// keeps 15 bytes; a longer name is cut there rather than rejected.
void NameThread(std::thread& thread, std::string_view name);

}  // namespace logfold
