// Helpers shared by the listener and stream-input tests: an io_context run by a few threads
// for the length of a test, and waiting on a condition with a deadline.
#ifndef LOGFOLD_TESTS_LISTENER_TEST_UTIL_H_
#define LOGFOLD_TESTS_LISTENER_TEST_UTIL_H_

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <thread>
#include <vector>

namespace logfold::test {

class IoThreads {
 public:
  explicit IoThreads(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { io.run(); });
  }
  ~IoThreads() {
    guard_.reset();
    io.stop();
    for (auto& t : threads_) t.join();
  }
  boost::asio::io_context io;

 private:
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_ =
      boost::asio::make_work_guard(io);
  std::vector<std::thread> threads_;
};

// Polls `pred` every millisecond until it holds (true) or `timeout` passes (false).
template <typename Pred>
bool WaitUntil(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace logfold::test

#endif  // LOGFOLD_TESTS_LISTENER_TEST_UTIL_H_
