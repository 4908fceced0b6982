// GroupTokens: a group's per-position template data (the first line's tokens, their hashes
// and the template flags) in one heap allocation behind one pointer, instead of three
// vectors: one allocation and one cache miss fewer per confirmed candidate. A 64-bit filter of
// the hashes rules most lines out of a group without a scan of its positions.
#ifndef LOGFOLD_PIPELINE_GROUP_TOKENS_H_
#define LOGFOLD_PIPELINE_GROUP_TOKENS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>

#include "pipeline/tokenizer.h"

namespace logfold {

class GroupTokens {
 public:
  // Replaces the contents with `tokens` and their `hashes` (same size), all flags clear.
  void Assign(std::span<const Token> tokens, std::span<const std::uint64_t> hashes) {
    const auto n = static_cast<std::uint32_t>(tokens.size());
    // A block far larger than needed (a reused one) is not kept for a short line.
    if (block_ == nullptr || Capacity() < n || Capacity() > 4 * n + 32) {
      // Raw storage: operator new implicitly creates the header, hash and token objects.
      block_.reset(::operator new(Words(n) * sizeof(std::uint64_t)));
      Header() = {n, n};
    } else {
      Header().size = n;
    }
    std::uint64_t filter = 0;
    for (std::uint32_t i = 0; i < n; ++i) filter |= FilterBit(hashes[i]);
    Filter() = filter;
    if (n > 0)
      std::memcpy(Hashes(), hashes.data(), n * sizeof(std::uint64_t));  // data() may be null
    Packed* packed = Tokens();
    for (std::uint32_t i = 0; i < n; ++i) {
      const Token& t = tokens[i];
      // Lines are at most 16 MiB (max_message_size), so a length fits kLengthBits.
      packed[i] = {t.offset,
                   (t.length & kLengthMask) | (static_cast<std::uint32_t>(t.cls) << kLengthBits)};
    }
  }
  void Reset() { block_.reset(); }
  // Starts loading the block's first line (a hint; freeing the block reads it too).
  void Prefetch() const {
    if (block_ != nullptr) __builtin_prefetch(block_.get());
  }

  std::size_t size() const { return block_ == nullptr ? 0 : HeaderConst().size; }
  std::uint64_t hash(std::size_t i) const { return HashesConst()[i]; }
  Token token(std::size_t i) const {
    const Packed p = TokensConst()[i];
    return {p.offset, p.bits & kLengthMask,
            static_cast<TokenClass>((p.bits >> kLengthBits) & kClassMask)};
  }
  TokenClass cls(std::size_t i) const {
    return static_cast<TokenClass>((TokensConst()[i].bits >> kLengthBits) & kClassMask);
  }
  std::uint8_t flags(std::size_t i) const {
    return static_cast<std::uint8_t>(TokensConst()[i].bits >> kFlagShift);
  }
  // Whether any position has a template flag.
  bool AnyFlags() const {
    const std::size_t n = size();
    if (n == 0) return false;
    const Packed* packed = TokensConst();
    std::uint32_t bits = 0;
    for (std::size_t i = 0; i < n; ++i) bits |= packed[i].bits;
    return (bits >> kFlagShift) != 0;
  }
  void AddFlags(std::size_t i, std::uint8_t f) {
    Tokens()[i].bits |= static_cast<std::uint32_t>(f) << kFlagShift;
  }
  std::span<const std::uint64_t> hashes() const { return {HashesConst(), size()}; }

  // One bit per hash; a hash whose bit is clear in MayContain's filter is at no position
  // (flags never change the filter: a wild position still counts as present).
  static std::uint64_t FilterBit(std::uint64_t hash) { return std::uint64_t{1} << (hash >> 58); }
  bool MayContain(std::uint64_t hash) const {
    return block_ != nullptr && (FilterConst() & FilterBit(hash)) != 0;
  }

  std::size_t MemoryUsage() const {
    return block_ == nullptr ? 0 : Words(Capacity()) * sizeof(std::uint64_t);
  }

 private:
  static constexpr std::uint32_t kLengthBits = 25;
  static constexpr std::uint32_t kLengthMask = (1u << kLengthBits) - 1;
  static constexpr std::uint32_t kClassMask = 0xf;              // 4 bits: TokenClass has 16 values
  static constexpr std::uint32_t kFlagShift = kLengthBits + 4;  // 3 bits of template flags
  static_assert(static_cast<int>(TokenClass::kCount_) <= 16);

  struct SizeHeader {
    std::uint32_t size, capacity;
  };
  struct Packed {
    std::uint32_t offset;
    std::uint32_t bits;  // length | class << 25 | flags << 29
  };
  static_assert(sizeof(SizeHeader) == 8 && sizeof(Packed) == 8);

  struct FreeBlock {
    void operator()(void* p) const { ::operator delete(p); }
  };

  // Layout in 8-byte words: [size, capacity] [filter] [hash × capacity] [packed token ×
  // capacity].
  static constexpr std::size_t kHead = 16;
  static std::size_t Words(std::uint32_t capacity) { return 2 + 2 * std::size_t{capacity}; }
  char* Bytes() const { return static_cast<char*>(block_.get()); }
  SizeHeader& Header() { return *reinterpret_cast<SizeHeader*>(Bytes()); }
  const SizeHeader& HeaderConst() const { return *reinterpret_cast<const SizeHeader*>(Bytes()); }
  std::uint32_t Capacity() const { return HeaderConst().capacity; }
  std::uint64_t& Filter() { return *reinterpret_cast<std::uint64_t*>(Bytes() + 8); }
  std::uint64_t FilterConst() const { return *reinterpret_cast<const std::uint64_t*>(Bytes() + 8); }
  std::uint64_t* Hashes() { return reinterpret_cast<std::uint64_t*>(Bytes() + kHead); }
  const std::uint64_t* HashesConst() const {
    return reinterpret_cast<const std::uint64_t*>(Bytes() + kHead);
  }
  Packed* Tokens() {
    return reinterpret_cast<Packed*>(Bytes() + kHead + 8 * std::size_t{Capacity()});
  }
  const Packed* TokensConst() const {
    return reinterpret_cast<const Packed*>(Bytes() + kHead + 8 * std::size_t{Capacity()});
  }

  std::unique_ptr<void, FreeBlock> block_;
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_GROUP_TOKENS_H_
