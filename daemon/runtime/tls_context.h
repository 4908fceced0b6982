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
#include "daemon/runtime/tls_options.h"

namespace logfold {

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

// After a completed server handshake: whether the client's certificate (if it sent one) is
// admitted by context.permitted. When not, `why` lists the names the certificate carries.
bool PeerPermitted(const TlsServerContext& context, SSL* ssl, std::string& why);

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
