// POSIX helpers shared by the sink destinations: resuming a partially written iovec list,
// waiting for a descriptor to become writable in short slices, connecting with a deadline,
// and errno text.
#ifndef LOGFOLD_DAEMON_SINK_IO_H_
#define LOGFOLD_DAEMON_SINK_IO_H_

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct addrinfo;

namespace logfold {

class StopSignal;

// A copy of an iovec list that can be advanced past bytes already written.
class IovCursor {
 public:
  explicit IovCursor(std::span<const iovec> data);

  bool empty() const { return index_ == iov_.size(); }
  iovec* data() { return iov_.data() + index_; }
  int count() const;  // capped at IOV_MAX
  std::size_t remaining() const;
  void Advance(std::size_t n);

 private:
  std::vector<iovec> iov_;
  std::size_t index_ = 0;
};

// Waits up to `timeout_ms` for `fd` to accept data, also reporting a peer that went away.
// Returns poll's revents (0 on timeout or EINTR). Destinations wait in short slices so they
// can notice Stop's deadline between them.
short WaitWritable(int fd, int timeout_ms);

// Connects the non-blocking socket `fd` to `ai`, waiting in short slices for at most `timeout`
// and no longer than `stop` allows. On failure `error` says why ("timed out" or the errno text).
bool ConnectWithin(int fd, const addrinfo& ai, const StopSignal& stop,
                   std::chrono::milliseconds timeout, std::string& error);

// "what: strerror(err)", thread-safe.
std::string ErrnoText(std::string_view what, int err);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_SINK_IO_H_
