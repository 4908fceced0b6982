// Byte block kernels: every kernel the CPU supports marks exactly the separators and the
// candidate bytes, for every byte value at every position and every block length, also for a
// short block that ends where readable memory does.
#include "pipeline/byte_blocks.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace logfold {
namespace {

bool IsSeparator(char c) { return kTokenSeparators.find(c) != std::string_view::npos; }
bool IsCandidate(char c) { return (c >= '0' && c <= '9') || c == ':' || c == '/' || c == '@'; }

TEST(ByteBlocksTest, EveryKernelMarksExactlyTheSeparatorsAndCandidates) {
  for (ByteBlockKernel kernel :
       {ByteBlockKernel::kAuto, ByteBlockKernel::kScalar, ByteBlockKernel::kAvx2}) {
    if (!ByteBlockKernelSupported(kernel)) {
      std::printf("kernel %d not supported by this CPU: not checked\n", static_cast<int>(kernel));
      continue;
    }
    // Each byte value at each of the 64 positions (the other bytes vary with it), and each
    // block length: bits past the end are separators, never candidates.
    for (int value = 0; value < 256; ++value) {
      std::string block(64, '\0');
      for (std::size_t j = 0; j < 64; ++j) block[j] = static_cast<char>((value + 37 * j) & 0xff);
      for (std::size_t len : {std::size_t{64}, std::size_t{63}, std::size_t{33}, std::size_t{32},
                              std::size_t{1}, std::size_t{0}}) {
        const ByteBlock b = ScanByteBlock(block.data(), len, kernel);
        for (std::size_t j = 0; j < 64; ++j) {
          const bool in = j < len;
          ASSERT_EQ((b.separators >> j) & 1, !in || IsSeparator(block[j]) ? 1u : 0u)
              << "kernel " << static_cast<int>(kernel) << " byte " << int{block[j]} << " at " << j
              << " len " << len;
          ASSERT_EQ((b.candidates >> j) & 1, in && IsCandidate(block[j]) ? 1u : 0u)
              << "kernel " << static_cast<int>(kernel) << " byte " << int{block[j]} << " at " << j
              << " len " << len;
        }
      }
    }
  }
}

// A short block is read in place when its 64 bytes lie in one page; one that ends right
// before an unreadable page must be copied instead: no fault, and the same bitmaps.
TEST(ByteBlocksTest, ShortBlockAtTheEndOfAPageBeforeAnUnmappedOne) {
  const long page = sysconf(_SC_PAGESIZE);
  ASSERT_GT(page, 0);
  const auto size = static_cast<std::size_t>(page);
  void* mem = mmap(nullptr, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  char* const first = static_cast<char*>(mem);
  ASSERT_EQ(mprotect(first + size, size, PROT_NONE), 0);
  for (std::size_t i = 0; i < size; ++i) first[i] = "ab 1:x,/"[i % 8];
  for (ByteBlockKernel kernel : {ByteBlockKernel::kScalar, ByteBlockKernel::kAvx2}) {
    if (!ByteBlockKernelSupported(kernel)) continue;
    for (std::size_t len : {std::size_t{1}, std::size_t{5}, std::size_t{33}, std::size_t{63}}) {
      const char* data = first + size - len;  // its last byte is the page's last
      const ByteBlock b = ScanByteBlock(data, len, kernel);
      for (std::size_t j = 0; j < 64; ++j) {
        const bool in = j < len;
        ASSERT_EQ((b.separators >> j) & 1, !in || IsSeparator(data[j]) ? 1u : 0u) << len;
        ASSERT_EQ((b.candidates >> j) & 1, in && IsCandidate(data[j]) ? 1u : 0u) << len;
      }
    }
  }
  munmap(mem, 2 * size);
}

}  // namespace
}  // namespace logfold
