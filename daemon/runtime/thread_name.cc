// NameThread on Linux: prctl(PR_SET_NAME) through pthread_setname_np.
#include "daemon/runtime/thread_name.h"

#include <pthread.h>

#include <algorithm>
#include <array>

namespace logfold {

void NameThread(std::thread& thread, std::string_view name) {
  std::array<char, 16> buf{};  // the kernel's TASK_COMM_LEN, NUL included
  const std::size_t n = std::min(name.size(), buf.size() - 1);
  std::copy_n(name.data(), n, buf.data());
  pthread_setname_np(thread.native_handle(), buf.data());
}

}  // namespace logfold
