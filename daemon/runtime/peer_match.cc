// Permitted-peer matching: label-wise wildcard names and SHA-256 fingerprints.
#include "daemon/runtime/peer_match.h"

#include <algorithm>

namespace logfold {

namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

// One label against one pattern label; '*' matches any run of characters (the label has no
// dots by construction). Iterative with one backtrack point per star: linear in practice and
// never recursive, so hostile certificate names cannot blow the stack.
bool LabelMatches(std::string_view pattern, std::string_view label) {
  std::size_t p = 0, l = 0;
  std::size_t star = std::string_view::npos, resume = 0;
  while (l < label.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = l;
    } else if (p < pattern.size() && Lower(pattern[p]) == Lower(label[l])) {
      ++p;
      ++l;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      l = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = Lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

constexpr std::string_view kSha256Prefix = "sha256:";

}  // namespace

bool PeerNameMatches(std::string_view pattern, std::string_view name) {
  if (pattern.empty() || name.empty()) return false;
  for (;;) {
    const std::size_t pd = pattern.find('.');
    const std::size_t nd = name.find('.');
    const std::string_view pl = pattern.substr(0, pd);
    const std::string_view nl = name.substr(0, nd);
    if (pl.empty() || nl.empty() || !LabelMatches(pl, nl)) return false;
    if (pd == std::string_view::npos || nd == std::string_view::npos) {
      return pd == std::string_view::npos && nd == std::string_view::npos;
    }
    pattern.remove_prefix(pd + 1);
    name.remove_prefix(nd + 1);
  }
}

std::optional<Sha256> ParseSha256Fingerprint(std::string_view text) {
  if (text.size() < kSha256Prefix.size() ||
      !EqualNoCase(text.substr(0, kSha256Prefix.size()), kSha256Prefix)) {
    return std::nullopt;
  }
  text.remove_prefix(kSha256Prefix.size());
  Sha256 out{};
  std::size_t digits = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ':') {
      // Separators only between complete bytes.
      if (digits == 0 || digits % 2 != 0 || i + 1 == text.size()) return std::nullopt;
      continue;
    }
    const int v = HexValue(text[i]);
    if (v < 0 || digits >= 64) return std::nullopt;
    out[digits / 2] = static_cast<std::uint8_t>(out[digits / 2] * 16 + v);
    ++digits;
  }
  if (digits != 64) return std::nullopt;
  return out;
}

std::string PeerPatternError(std::string_view entry) {
  if (entry.empty()) return "must not be empty";
  if (entry.size() >= kSha256Prefix.size() &&
      EqualNoCase(entry.substr(0, kSha256Prefix.size()), kSha256Prefix)) {
    return ParseSha256Fingerprint(entry)
               ? ""
               : "not a SHA-256 fingerprint (\"sha256:\" and 64 hex digits, colons allowed)";
  }
  for (const char c : entry) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.' || c == '*';
    if (!ok) return "a peer name may hold letters, digits, '-', '_', '.' and '*' only";
  }
  if (entry.front() == '.' || entry.back() == '.' || entry.find("..") != std::string_view::npos) {
    return "a peer name must not have an empty label";
  }
  return "";
}

PermittedPeers::PermittedPeers(const std::vector<std::string>& entries) {
  for (const std::string& e : entries) {
    if (!PeerPatternError(e).empty()) continue;
    if (auto fp = ParseSha256Fingerprint(e)) {
      fingerprints_.push_back(*fp);
    } else {
      names_.push_back(e);
    }
  }
}

bool PermittedPeers::PermitsFingerprint(const Sha256& fingerprint) const {
  return std::find(fingerprints_.begin(), fingerprints_.end(), fingerprint) != fingerprints_.end();
}

bool PermittedPeers::Permits(const std::vector<std::string>& cert_names,
                             const Sha256& fingerprint) const {
  if (empty() || PermitsFingerprint(fingerprint)) return true;
  for (const std::string& pattern : names_) {
    for (const std::string& name : cert_names) {
      if (PeerNameMatches(pattern, name)) return true;
    }
  }
  return false;
}

}  // namespace logfold
