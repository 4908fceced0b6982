// POSIX helpers shared by the sink destinations.
#include "daemon/outputs/sink_io.h"

#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <system_error>

#include "daemon/outputs/buffered_sink.h"

namespace logfold {

IovCursor::IovCursor(std::span<const iovec> data) : iov_(data.begin(), data.end()) {
  while (index_ < iov_.size() && iov_[index_].iov_len == 0) ++index_;
}

int IovCursor::count() const {
  return static_cast<int>(std::min<std::size_t>(iov_.size() - index_, IOV_MAX));
}

std::size_t IovCursor::remaining() const {
  std::size_t total = 0;
  for (std::size_t i = index_; i < iov_.size(); ++i) total += iov_[i].iov_len;
  return total;
}

void IovCursor::Advance(std::size_t n) {
  while (n > 0 && index_ < iov_.size()) {
    iovec& v = iov_[index_];
    const std::size_t step = std::min(n, v.iov_len);
    v.iov_base = static_cast<char*>(v.iov_base) + step;
    v.iov_len -= step;
    n -= step;
    if (v.iov_len == 0) ++index_;
  }
  while (index_ < iov_.size() && iov_[index_].iov_len == 0) ++index_;
}

short WaitWritable(int fd, int timeout_ms) {
  pollfd p{fd, POLLOUT, 0};
  const int rc = ::poll(&p, 1, timeout_ms);
  return rc > 0 ? p.revents : 0;
}

std::string ErrnoText(std::string_view what, int err) {
  std::string text(what);
  text += ": ";
  text += std::error_code(err, std::generic_category()).message();
  return text;
}

bool ConnectWithin(int fd, const addrinfo& ai, const StopSignal& stop,
                   std::chrono::milliseconds timeout, std::string& error) {
  if (::connect(fd, ai.ai_addr, ai.ai_addrlen) == 0) return true;
  if (errno != EINPROGRESS) {
    error = std::error_code(errno, std::generic_category()).message();
    return false;
  }
  constexpr int kSliceMs = 100;  // short, so that Stop's deadline is noticed between slices
  const auto deadline = SinkClock::now() + timeout;
  for (;;) {
    if (WaitWritable(fd, kSliceMs) != 0) {
      int so_error = 0;
      socklen_t len = sizeof so_error;
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0) so_error = errno;
      if (so_error == 0) return true;
      error = std::error_code(so_error, std::generic_category()).message();
      return false;
    }
    if (stop.Expired() || SinkClock::now() >= deadline) {
      error = "timed out";
      return false;
    }
  }
}

}  // namespace logfold
