// Little-endian integers, tagged fields and CRC-32 for the state files (checkpoints and the
// journal): appending to a reused string, and a bounds-checked cursor for reading untrusted bytes.
#ifndef LOGFOLD_DAEMON_STATE_BINARY_CODEC_H_
#define LOGFOLD_DAEMON_STATE_BINARY_CODEC_H_

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace logfold::state_codec {

inline void PutU32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void PutU64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void PutU16(std::string& out, std::uint16_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>(v >> 8);
}
// Overwrites 4 or 8 bytes at `at` (lengths and checksums known only at the end).
inline void SetU32(std::string& out, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void SetU64(std::string& out, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A field: tag, then length, then the value.
inline void PutField(std::string& out, std::uint16_t tag, std::string_view value) {
  PutU16(out, tag);
  PutU32(out, static_cast<std::uint32_t>(value.size()));
  out.append(value);
}
inline void PutIntField(std::string& out, std::uint16_t tag, std::uint64_t v) {
  PutU16(out, tag);
  PutU32(out, 8);
  PutU64(out, v);
}
// Opens a field whose value is written next; returns what CloseField needs.
inline std::size_t OpenField(std::string& out, std::uint16_t tag) {
  PutU16(out, tag);
  PutU32(out, 0);
  return out.size();
}
inline void CloseField(std::string& out, std::size_t value_start) {
  SetU32(out, value_start - 4, static_cast<std::uint32_t>(out.size() - value_start));
}

inline std::uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large inputs in pieces.
  while (!bytes.empty()) {
    const std::size_t n = bytes.size() < (1u << 30) ? bytes.size() : (1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n));
    bytes.remove_prefix(n);
  }
  return static_cast<std::uint32_t>(crc);
}

// Reads from untrusted bytes: every Get fails (returns false) rather than read past the end.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  bool empty() const { return rest_.empty(); }
  std::size_t size() const { return rest_.size(); }
  bool GetU16(std::uint16_t& v) {
    std::uint64_t x;
    if (!Get(2, x)) return false;
    v = static_cast<std::uint16_t>(x);
    return true;
  }
  bool GetU32(std::uint32_t& v) {
    std::uint64_t x;
    if (!Get(4, x)) return false;
    v = static_cast<std::uint32_t>(x);
    return true;
  }
  bool GetU64(std::uint64_t& v) { return Get(8, v); }
  bool GetBytes(std::size_t n, std::string_view& v) {
    if (rest_.size() < n) return false;
    v = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return true;
  }
  // One field: tag and value.
  bool GetField(std::uint16_t& tag, std::string_view& value) {
    std::uint32_t len;
    return GetU16(tag) && GetU32(len) && GetBytes(len, value);
  }

 private:
  bool Get(int n, std::uint64_t& v) {
    if (rest_.size() < static_cast<std::size_t>(n)) return false;
    v = 0;
    for (int i = 0; i < n; ++i) {
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(rest_[i])) << (8 * i);
    }
    rest_.remove_prefix(n);
    return true;
  }
  std::string_view rest_;
};

// An integer field's value (exactly 8 bytes).
inline bool IntValue(std::string_view value, std::uint64_t& v) {
  Reader r(value);
  return value.size() == 8 && r.GetU64(v);
}

}  // namespace logfold::state_codec

#endif  // LOGFOLD_DAEMON_STATE_BINARY_CODEC_H_
