// TLS contexts shared by the TLS input and the TLS-capable outputs: building an OpenSSL
// context from certificate, key, password and CA files (re-read on every build, so SIGHUP
// rotates them), inspecting a peer's certificate, and naming handshake failures for metrics.
#ifndef LOGFOLD_DAEMON_RUNTIME_TLS_CONTEXT_H_
#define LOGFOLD_DAEMON_RUNTIME_TLS_CONTEXT_H_

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/runtime/peer_match.h"

namespace logfold {

enum class TlsVersion : std::uint8_t { kTls12, kTls13 };
enum class ClientAuth : std::uint8_t { kNone, kOptional, kRequired };

struct TlsServerOptions {
  std::string cert_file;      // PEM, the server certificate (and its chain)
  std::string key_file;       // PEM private key
  std::string password_file;  // the key's passphrase (first line); "": key is not encrypted
  std::string ca_file;        // PEM bundle that client certificates must chain to
  TlsVersion min_version = TlsVersion::kTls12;
  std::string ciphers;  // OpenSSL cipher list for TLS 1.2; "": OpenSSL's defaults
  ClientAuth client_auth = ClientAuth::kNone;
  // Client certificate names (CN, DNS SAN; wildcards) or "sha256:" fingerprints. Empty: any
  // certificate the CA vouches for. A listed fingerprint admits a certificate even when it
  // does not chain to ca_file (self-signed senders, as rsyslog's x509/fingerprint mode).
  std::vector<std::string> permitted_peers;
  bool operator==(const TlsServerOptions&) const = default;
};

struct TlsClientOptions {
  std::string ca_file;  // PEM bundle that the server must chain to; "": the system store
  bool verify = true;   // verify the server's chain and that its name matches the host
  std::string cert_file, key_file, password_file;  // optional client certificate
  TlsVersion min_version = TlsVersion::kTls12;
  bool operator==(const TlsClientOptions&) const = default;
};

// A built server context and the allow-list its connections are checked against.
struct TlsServerContext {
  boost::asio::ssl::context ssl{boost::asio::ssl::context::tls_server};
  PermittedPeers permitted;
  ClientAuth client_auth = ClientAuth::kNone;
};

// Read every file now; on failure return nullptr and say which file and why in `error`.
std::shared_ptr<TlsServerContext> MakeTlsServerContext(const TlsServerOptions& options,
                                                       std::string& error);
std::shared_ptr<boost::asio::ssl::context> MakeTlsClientContext(const TlsClientOptions& options,
                                                                std::string& error);

// Sets SNI and (when options.verify) host name verification on a client connection.
bool PrepareTlsClient(SSL* ssl, const std::string& host, bool verify, std::string& error);

// The peer certificate's CN and DNS subject alternative names.
std::vector<std::string> CertificateNames(X509* cert);
Sha256 CertificateFingerprint(X509* cert);

// A bounded label for logfold_tls_handshake_failures_total{reason} and a readable detail for
// the log line, from a failed handshake's error and the connection's verify result.
struct TlsFailure {
  std::string reason;  // not_tls, protocol_version, no_certificate, certificate_expired,
                       // certificate_invalid, closed, other
  std::string detail;
};
TlsFailure ClassifyTlsFailure(const boost::system::error_code& ec, SSL* ssl);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_RUNTIME_TLS_CONTEXT_H_
