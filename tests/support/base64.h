// RFC 4648 base64 decoding for tests that read an event's `message_base64` (the exact bytes of
// a message that is not UTF-8) back; stops at the first byte outside the alphabet ('=').
#ifndef LOGFOLD_TESTS_SUPPORT_BASE64_H_
#define LOGFOLD_TESTS_SUPPORT_BASE64_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace logfold::test {

inline std::string FromBase64(std::string_view b64) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : b64) {
    const std::size_t v = kAlphabet.find(c);
    if (v == std::string_view::npos) break;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace logfold::test

#endif  // LOGFOLD_TESTS_SUPPORT_BASE64_H_
