// POSIX helpers shared by the sink destinations: resuming a partially written iovec list,
// waiting for a descriptor to become writable in short slices, and errno text.
#ifndef LOGFOLD_DAEMON_SINK_IO_H_
#define LOGFOLD_DAEMON_SINK_IO_H_

#include <sys/uio.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace logfold {

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

// "what: strerror(err)", thread-safe.
std::string ErrnoText(std::string_view what, int err);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_SINK_IO_H_
