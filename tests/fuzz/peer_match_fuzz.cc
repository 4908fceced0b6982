// libFuzzer target for the permitted-peer matcher (daemon/runtime/peer_match.h): the label-wise
// wildcard match equals a plain dynamic-programming glob per label, never crashes or recurses
// on hostile certificate names, and fingerprint parsing accepts exactly "sha256:" + 32 bytes.
// Input: pattern and name separated by the first '\n'.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/runtime/peer_match.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Glob with '*' over one label, O(|p| * |s|) table: the reference.
bool GlobReference(std::string_view p, std::string_view s) {
  std::vector<std::vector<bool>> m(p.size() + 1, std::vector<bool>(s.size() + 1, false));
  m[0][0] = true;
  for (std::size_t i = 1; i <= p.size(); ++i) {
    m[i][0] = m[i - 1][0] && p[i - 1] == '*';
    for (std::size_t j = 1; j <= s.size(); ++j) {
      m[i][j] = p[i - 1] == '*' ? (m[i - 1][j] || m[i][j - 1])
                                : (m[i - 1][j - 1] && Lower(p[i - 1]) == Lower(s[j - 1]));
    }
  }
  return m[p.size()][s.size()];
}

std::vector<std::string_view> Labels(std::string_view s) {
  std::vector<std::string_view> out;
  for (;;) {
    const std::size_t dot = s.find('.');
    out.push_back(s.substr(0, dot));
    if (dot == std::string_view::npos) return out;
    s.remove_prefix(dot + 1);
  }
}

bool Reference(std::string_view pattern, std::string_view name) {
  if (pattern.empty() || name.empty()) return false;
  const auto p = Labels(pattern);
  const auto n = Labels(name);
  if (p.size() != n.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].empty() || n[i].empty() || !GlobReference(p[i], n[i])) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 512) return 0;  // the reference is quadratic; certificate names are short
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = input.find('\n');
  const std::string_view pattern = input.substr(0, nl);
  const std::string_view name = nl == std::string_view::npos ? "" : input.substr(nl + 1);

  const bool got = logfold::PeerNameMatches(pattern, name);
  FUZZ_CHECK(got == Reference(pattern, name), "matcher differs from the per-label glob");
  if (pattern.find('*') == std::string_view::npos && !pattern.empty()) {
    FUZZ_CHECK(logfold::PeerNameMatches(pattern, pattern) == Reference(pattern, pattern),
               "a literal pattern matches itself exactly when it has no empty label");
  }

  const auto fp = logfold::ParseSha256Fingerprint(input);
  if (fp) {
    std::size_t hex = 0;
    for (char c : input.substr(7)) hex += c != ':';
    FUZZ_CHECK(hex == 64, "a parsed fingerprint has 64 hex digits");
    FUZZ_CHECK(logfold::PeerPatternError(input).empty(), "a parsed fingerprint is a valid entry");
    const logfold::PermittedPeers peers({std::string(input)});
    FUZZ_CHECK(peers.PermitsFingerprint(*fp), "a listed fingerprint is permitted");
  }
  return 0;
}
