// StreamInput: the reader thread, its poll()-based stop signal and blocking delivery.
#include "daemon/inputs/stream_input.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

#include "daemon/runtime/thread_name.h"
#include "daemon/runtime/wall_clock.h"
#include "pipeline/frame_decoder.h"

namespace logfold {

namespace {

constexpr std::size_t kReadSize = 64 * 1024;
// A safety net under OnWritable: a blocked delivery is also retried this often, so a lost
// wakeup in the target costs latency rather than a stuck replay.
constexpr auto kRetryInterval = std::chrono::seconds(1);

bool IsStdin(const StreamInput::Options& options) {
  return options.fd < 0 && (options.path.empty() || options.path == "-");
}

std::string Labels(std::string_view name, const StreamInput::Options& options) {
  const char* proto = options.fd >= 0 ? "fd" : IsStdin(options) ? "stdin" : "file";
  return "input=\"" + Metrics::EscapeLabelValue(name) + "\",proto=\"" + proto + "\"";
}

}  // namespace

struct StreamInput::Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool signaled = false;  // OnWritable fired since the last registration
  bool stop = false;
};

StreamInput::StreamInput(std::uint32_t input, std::string name, const Options& options,
                         IngestTarget& target, Metrics& metrics, DoneCallback on_done)
    : input_(input),
      name_(std::move(name)),
      options_(options),
      target_(target),
      on_done_(std::move(on_done)),
      gate_(std::make_shared<Gate>()),
      received_(
          metrics.GetCounter("logfold_received_total", "Lines received.", Labels(name_, options))),
      bytes_(metrics.GetCounter("logfold_received_bytes_total",
                                "Bytes received (datagram payloads, frames).",
                                Labels(name_, options))),
      truncated_(metrics.GetCounter("logfold_truncated_total", "Messages cut to max_message_size.",
                                    Labels(name_, options))),
      dropped_(metrics.GetCounter("logfold_dropped_total", "Lines dropped on intake.",
                                  Labels(name_, options) + ",reason=\"shutdown\"")) {
  if (options_.fd >= 0) {
    fd_ = options_.fd;
  } else if (IsStdin(options_)) {
    fd_ = STDIN_FILENO;
  } else {
    fd_ = open(options_.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "open " + options_.path);
    owns_fd_ = true;
  }
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    const int err = errno;
    if (owns_fd_) close(fd_);
    throw std::system_error(err, std::generic_category(), "eventfd");
  }
}

StreamInput::~StreamInput() {
  Stop();
  Join();
  close(wake_fd_);
  if (owns_fd_) close(fd_);
}

void StreamInput::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
  NameThread(thread_, "lf-in-" + name_);
}

void StreamInput::Stop() {
  {
    std::lock_guard lock(gate_->mu);
    if (gate_->stop) return;
    gate_->stop = true;
  }
  gate_->cv.notify_all();
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t ignored = write(wake_fd_, &one, sizeof one);
}

void StreamInput::Join() {
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool StreamInput::WaitReadable() {
  // poll() rather than a bare read(): a read on an idle pipe or terminal could not be
  // interrupted by Stop().
  pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  while (true) {
    const int r = poll(fds, 2, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return true;  // let read() report the problem
    if (fds[1].revents != 0) return false;
    return true;
  }
}

bool StreamInput::DeliverBlocking(std::span<const std::string_view> lines, TimeUs arrival) {
  if (lines.empty()) return true;
  bool registered = false;
  while (true) {
    {
      std::lock_guard lock(gate_->mu);
      if (gate_->stop) break;
    }
    if (target_.TryDeliver(input_, lines, arrival)) return true;
    if (!registered) {
      {
        std::lock_guard lock(gate_->mu);
        gate_->signaled = false;
      }
      // Not under the lock: the target may call `resume` synchronously.
      target_.OnWritable([gate = gate_] {
        {
          std::lock_guard lock(gate->mu);
          gate->signaled = true;
        }
        gate->cv.notify_all();
      });
      registered = true;
    }
    std::unique_lock lock(gate_->mu);
    gate_->cv.wait_for(lock, kRetryInterval, [&] { return gate_->signaled || gate_->stop; });
    if (gate_->signaled) registered = false;
  }
  dropped_.fetch_add(lines.size(), std::memory_order_relaxed);
  return false;
}

void StreamInput::Run() {
  FrameDecoder decoder({.framing = Framing::kNewline,
                        .nul_terminator = options_.nul_terminator,
                        .max_message_size = options_.max_message_size});
  FrameDecoder::Counters accounted;
  auto account = [&] {
    const FrameDecoder::Counters& now = decoder.counters();
    received_.fetch_add(now.messages - accounted.messages, std::memory_order_relaxed);
    truncated_.fetch_add(now.truncated - accounted.truncated, std::memory_order_relaxed);
    accounted = now;
  };
  std::vector<char> buf(kReadSize);
  bool delivering = true;  // false once Stop() interrupted us
  bool read_error = false;
  while (true) {
    if (!WaitReadable()) {
      delivering = false;
      break;
    }
    const ssize_t n = read(fd_, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      spdlog::error("input {}: read: {}", name_, std::strerror(errno));
      read_error = true;
      break;
    }
    if (n == 0) break;
    bytes_.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
    const auto lines = decoder.Feed({buf.data(), static_cast<std::size_t>(n)});
    account();
    if (!DeliverBlocking(lines, WallClockNowUs())) {
      delivering = false;
      break;
    }
  }
  if (delivering) {
    // What was read before EOF or an error has been accepted: deliver its last line too.
    const auto tail = decoder.Finish();
    account();
    delivering = DeliverBlocking(tail, WallClockNowUs());
  }
  const bool reached_eof = delivering && !read_error;
  spdlog::info("input {}: {} after {} line(s)", name_,
               reached_eof ? "end of input" : (read_error ? "read error" : "stopped"),
               accounted.messages);
  // Before the callback, so that code it triggers (on any thread) already sees finished().
  finished_.store(true);
  if (on_done_) on_done_(reached_eof);
}

}  // namespace logfold
