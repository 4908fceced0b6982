// Byte blocks: 64-bit bitmaps of which bytes of a 64-byte block end a token (separators) and
// which can make a token a variable (digits, ':', '/', '@'), so the tokenizer finds token
// boundaries with a bit scan instead of a branch per byte. AVX2 when the CPU has it.
#ifndef LOGFOLD_PIPELINE_BYTE_BLOCKS_H_
#define LOGFOLD_PIPELINE_BYTE_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace logfold {

// Characters that end a token. Kept out of tokens so that `key=value`, `(value)` and
// `"value"` expose their variable part as a token of its own.
inline constexpr std::string_view kTokenSeparators(" \t\r\n\v\f,;=()[]{}\"'<>|\0", 21);

// Bit j describes byte j of the block.
struct ByteBlock {
  std::uint64_t separators;  // one of kTokenSeparators; every bit at and past the block's end
  std::uint64_t candidates;  // a digit, ':', '/' or '@': a token without any is a plain word
};

// The implementations; each gives identical bitmaps. kAuto is the best one the CPU supports.
enum class ByteBlockKernel : std::uint8_t { kAuto, kScalar, kAvx2 };

bool ByteBlockKernelSupported(ByteBlockKernel kernel);

// Scans data[0, len), len <= 64. An unsupported kernel falls back to kScalar.
ByteBlock ScanByteBlock(const char* data, std::size_t len,
                        ByteBlockKernel kernel = ByteBlockKernel::kAuto);

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_BYTE_BLOCKS_H_
