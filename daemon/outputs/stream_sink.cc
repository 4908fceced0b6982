// Stdout and file sinks: Destinations that write the buffered stream to a descriptor.
#include "daemon/outputs/stream_sink.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>

#include "daemon/outputs/buffered_sink.h"
#include "daemon/outputs/sink_io.h"

namespace logfold {
namespace {

constexpr int kWaitSliceMs = 100;

class StdoutDestination final : public Destination {
 public:
  explicit StdoutDestination(int fd) : fd_(fd) {
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
      is_socket_ = S_ISSOCK(st.st_mode);
      is_fifo_ = S_ISFIFO(st.st_mode);
    }
  }

  WriteResult Write(std::span<const iovec> data, const StopSignal& stop) override {
    WriteResult result;
    IovCursor cursor(data);
    while (!cursor.empty()) {
      if (reader_gone_) {
        const std::size_t rest = cursor.remaining();
        result.written += rest;
        result.discarded += rest;
        break;
      }
      ssize_t n;
      if (is_socket_) {
        // journald's stdout stream is a socket: never block in the kernel, so Stop is prompt.
        msghdr msg{};
        msg.msg_iov = cursor.data();
        msg.msg_iovlen = static_cast<std::size_t>(cursor.count());
        n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      } else if (is_fifo_) {
        // A pipe write of at most PIPE_BUF bytes cannot block once poll reported room, so a
        // stalled reader cannot hold the sink thread past Stop's deadline.
        if (WaitWritable(fd_, kWaitSliceMs) == 0) {
          if (result.written > 0 || stop.Expired()) return result;
          continue;
        }
        const iovec& first = *cursor.data();
        n = ::write(fd_, first.iov_base, std::min<std::size_t>(first.iov_len, PIPE_BUF));
      } else {
        n = ::writev(fd_, cursor.data(), cursor.count());
      }
      if (n > 0) {
        cursor.Advance(static_cast<std::size_t>(n));
        result.written += static_cast<std::size_t>(n);
        continue;
      }
      const int err = n < 0 ? errno : EIO;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        if (result.written > 0 || stop.Expired()) return result;
        WaitWritable(fd_, kWaitSliceMs);
        continue;
      }
      if (err == EPIPE || err == ECONNRESET) {
        reader_gone_ = true;
        result.error = "stdout reader went away (EPIPE); further output is discarded";
        continue;
      }
      result.failed = true;
      result.error = ErrnoText("write to stdout", err);
      return result;
    }
    return result;
  }

 private:
  int fd_;
  bool is_socket_ = false;
  bool is_fifo_ = false;
  bool reader_gone_ = false;
};

class FileDestination final : public Destination {
 public:
  FileDestination(std::string path, FsyncPolicy policy, SinkClock::duration interval)
      : path_(std::move(path)), policy_(policy), interval_(interval) {}

  ~FileDestination() override {
    if (fd_ >= 0) ::close(fd_);
  }

  // Returns "" on success.
  std::string Open() {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd_ < 0) return ErrnoText("open " + path_, errno);
    return "";
  }

  WriteResult Write(std::span<const iovec> data, const StopSignal& /*stop*/) override {
    WriteResult result;
    if (fd_ < 0) {
      result.error = Open();
      if (!result.error.empty()) {
        result.failed = true;
        return result;
      }
    }
    IovCursor cursor(data);
    while (!cursor.empty()) {
      const ssize_t n = ::writev(fd_, cursor.data(), cursor.count());
      if (n > 0) {
        cursor.Advance(static_cast<std::size_t>(n));
        result.written += static_cast<std::size_t>(n);
        continue;
      }
      const int err = n < 0 ? errno : EIO;
      if (err == EINTR) continue;
      // ENOSPC, EIO, EDQUOT...: what was written stays written (O_APPEND continues after
      // it); the rest waits in the buffer for the retry.
      result.failed = true;
      result.error = ErrnoText("write " + path_, err);
      break;
    }
    if (result.written > 0) {
      dirty_ = true;
      if (policy_ == FsyncPolicy::kAlways ||
          (policy_ == FsyncPolicy::kInterval && SinkClock::now() >= last_sync_ + interval_)) {
        std::string error = Sync();
        if (result.error.empty()) result.error = std::move(error);
      }
    }
    return result;
  }

  WriteResult Poll() override {
    WriteResult result;
    if (policy_ == FsyncPolicy::kInterval && dirty_ && SinkClock::now() >= last_sync_ + interval_) {
      result.error = Sync();
    }
    return result;
  }

  SinkClock::duration PollInterval() const override {
    if (policy_ != FsyncPolicy::kInterval || !dirty_) return std::chrono::seconds(1);
    return std::max(SinkClock::duration::zero(), last_sync_ + interval_ - SinkClock::now());
  }

  std::string Reopen() override {
    std::string error = CloseFile();
    std::string open_error = Open();
    return open_error.empty() ? error : open_error;
  }

  void Close() override { CloseFile(); }

 private:
  // fdatasync: the data and the file size, which is what a reader needs after a crash.
  std::string Sync() {
    last_sync_ = SinkClock::now();
    dirty_ = false;
    if (fd_ >= 0 && ::fdatasync(fd_) != 0) return ErrnoText("fdatasync " + path_, errno);
    return "";
  }

  std::string CloseFile() {
    std::string error;
    if (fd_ < 0) return error;
    if (policy_ != FsyncPolicy::kNever && dirty_) error = Sync();
    if (::close(fd_) != 0 && error.empty()) error = ErrnoText("close " + path_, errno);
    fd_ = -1;
    return error;
  }

  const std::string path_;
  const FsyncPolicy policy_;
  const SinkClock::duration interval_;
  int fd_ = -1;
  bool dirty_ = false;
  SinkClock::time_point last_sync_ = SinkClock::now();
};

BufferedSinkOptions StreamOptions(const SinkOptions& sink, std::string type) {
  BufferedSinkOptions options;
  options.name = sink.name;
  options.type = std::move(type);
  options.encoding = SinkEncoding::kNdjson;
  options.capacity = sink.buffer;
  options.framing = SinkFraming::kStream;
  return options;
}

}  // namespace

std::unique_ptr<Sink> MakeStdoutSink(const SinkOptions& sink, Metrics& metrics, int fd) {
  return std::make_unique<BufferedSink>(StreamOptions(sink, "stdout"),
                                        std::make_unique<StdoutDestination>(fd), metrics);
}

std::unique_ptr<Sink> MakeFileSink(const SinkOptions& sink, const FileSinkOptions& file,
                                   Metrics& metrics, std::string& error) {
  auto destination = std::make_unique<FileDestination>(
      file.path, file.fsync, std::chrono::microseconds(file.fsync_interval_us));
  std::string open_error = destination->Open();
  if (!open_error.empty()) {
    error = "sink " + sink.name + ": " + open_error;
    return nullptr;
  }
  return std::make_unique<BufferedSink>(StreamOptions(sink, "file"), std::move(destination),
                                        metrics);
}

}  // namespace logfold
