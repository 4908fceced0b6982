// Byte block kernels: every kernel the CPU supports marks exactly the separators and the
// candidate bytes, for every byte value at every position and every block length.
#include "pipeline/byte_blocks.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace logfold
