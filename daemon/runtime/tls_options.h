// What the TLS context builders (tls_context.h) read: certificate files and verification.
// runtime may not include the config layer, so these carry no defaults: the defaults of the
// configuration keys live in daemon/config/options/tls_options.h only, and the inputs and
// outputs fill every field from there (server.cc, outputs/tls_destination.h).
#ifndef LOGFOLD_DAEMON_RUNTIME_TLS_OPTIONS_H_
#define LOGFOLD_DAEMON_RUNTIME_TLS_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace logfold {

enum class TlsVersion : std::uint8_t { kTls12, kTls13 };
enum class ClientAuth : std::uint8_t { kNone, kOptional, kRequired };

struct TlsServerOptions {
  std::string cert_file;      // PEM, the server certificate (and its chain)
  std::string key_file;       // PEM private key
  std::string password_file;  // the key's passphrase (first line); "": key is not encrypted
  std::string ca_file;        // PEM bundle that client certificates must chain to
  TlsVersion min_version;
  std::string ciphers;  // OpenSSL cipher list for TLS 1.2; "": OpenSSL's defaults
  ClientAuth client_auth;
  // Client certificate names (CN, DNS SAN; wildcards) or "sha256:" fingerprints. Empty: any
  // certificate the CA vouches for. A listed fingerprint admits a certificate even when it
  // does not chain to ca_file (self-signed senders, as rsyslog's x509/fingerprint mode).
  std::vector<std::string> permitted_peers;
  bool operator==(const TlsServerOptions&) const = default;
};

struct TlsClientOptions {
  std::string ca_file;  // PEM bundle that the server must chain to; "": the system store
  bool verify;          // verify the server's chain and that its name matches the host
  std::string cert_file, key_file, password_file;  // optional client certificate
  TlsVersion min_version;
  bool operator==(const TlsClientOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_RUNTIME_TLS_OPTIONS_H_
