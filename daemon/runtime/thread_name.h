// NameThread: gives a thread a name that top -H, ps -L, perf and /proc show, so
// an operator can tell the ingest thread from a worker or a sink writer.
#ifndef LOGFOLD_DAEMON_THREAD_NAME_H_
#define LOGFOLD_DAEMON_THREAD_NAME_H_

#include <string_view>
#include <thread>

namespace logfold {

// Named by the thread that started it, so the name is in place before anyone looks. Linux
// keeps 15 bytes; a longer name is cut there rather than rejected.
void NameThread(std::thread& thread, std::string_view name);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_THREAD_NAME_H_
