// The shared parts of the inputs with a thread of their own: counters, wakeup, named thread.
#include "daemon/inputs/input_thread.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "daemon/runtime/thread_name.h"

namespace logfold {

namespace {

std::string Labels(std::string_view name, std::string_view proto) {
  return "input=\"" + Metrics::EscapeLabelValue(name) + "\",proto=\"" + std::string(proto) + "\"";
}

}  // namespace

InputCounters::InputCounters(Metrics& m, std::string_view name, std::string_view proto)
    : metrics(m),
      labels(Labels(name, proto)),
      received(m.GetCounter("logfold_received_total", "Lines received.", labels)),
      bytes(m.GetCounter("logfold_received_bytes_total",
                         "Bytes received (datagram payloads, frames).", labels)),
      truncated(
          m.GetCounter("logfold_truncated_total", "Messages cut to max_message_size.", labels)) {}

Metrics::Counter& InputCounters::Error(std::string_view error) const {
  return Other("logfold_input_errors_total", "Input errors.",
               ",error=\"" + std::string(error) + "\"");
}

Metrics::Counter& InputCounters::Dropped(std::string_view reason) const {
  return Other("logfold_dropped_total", "Lines dropped on intake.",
               ",reason=\"" + std::string(reason) + "\"");
}

Metrics::Counter& InputCounters::Other(std::string_view metric, std::string_view help,
                                       std::string_view extra) const {
  return metrics.GetCounter(metric, help, labels + std::string(extra));
}

WakeSignal::WakeSignal() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) throw std::runtime_error("eventfd: " + std::string(std::strerror(errno)));
}

WakeSignal::~WakeSignal() { close(fd_); }

void WakeSignal::Signal() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t ignored = write(fd_, &one, sizeof one);
}

void InputThread::Start(std::string_view input_name, std::function<void()> run) {
  if (thread_.joinable()) return;
  thread_ = std::thread(std::move(run));
  NameThread(thread_, "lf-in-" + std::string(input_name));
}

void InputThread::Join() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace logfold
