// Permitted-peer matching for TLS client authentication: certificate names against patterns
// with wildcards (as rsyslog's PermittedPeer) and SHA-256 certificate fingerprints.
#ifndef LOGFOLD_DAEMON_RUNTIME_PEER_MATCH_H_
#define LOGFOLD_DAEMON_RUNTIME_PEER_MATCH_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace logfold {

using Sha256 = std::array<std::uint8_t, 32>;

// Whether `name` (a certificate CN or DNS SAN) matches `pattern`, case-insensitively and label
// by label: both must have the same number of dot-separated labels, and a '*' in a pattern
// label stands for any run of characters within that one label ("*.example.net",
// "web*.example.net"; never across a dot, so "*.example.net" does not match "a.b.example.net").
// Empty labels (a leading, trailing or doubled dot) match nothing.
bool PeerNameMatches(std::string_view pattern, std::string_view name);

// Parses "sha256:" followed by 64 hex digits, optionally in colon-separated pairs (the form
// `openssl x509 -fingerprint -sha256` prints after its "=", and rsyslog's "SHA256:AA:BB:..").
// nullopt when `text` is not such a fingerprint.
std::optional<Sha256> ParseSha256Fingerprint(std::string_view text);

// Why a permitted-peer entry is invalid ("" when valid): a fingerprint that starts with
// "sha256:" but does not parse, or a name with characters a host name cannot have.
std::string PeerPatternError(std::string_view entry);

// A parsed allow-list of permitted peers. Empty: every peer the CA vouches for is permitted.
class PermittedPeers {
 public:
  PermittedPeers() = default;
  // Entries are fingerprints ("sha256:...") or name patterns; invalid entries must have been
  // refused by PeerPatternError beforehand (they are ignored here).
  explicit PermittedPeers(const std::vector<std::string>& entries);

  bool empty() const { return names_.empty() && fingerprints_.empty(); }
  // Whether a peer whose certificate has these names (CN and DNS SANs) and this fingerprint
  // is permitted.
  bool Permits(const std::vector<std::string>& cert_names, const Sha256& fingerprint) const;
  bool PermitsFingerprint(const Sha256& fingerprint) const;

 private:
  std::vector<std::string> names_;
  std::vector<Sha256> fingerprints_;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_RUNTIME_PEER_MATCH_H_
