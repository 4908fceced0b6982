// TLS context construction on OpenSSL through Asio, peer certificate inspection and the
// classification of handshake failures.
#include "daemon/runtime/tls_context.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <fstream>

namespace logfold {

namespace {

namespace ssl = boost::asio::ssl;

std::string OpenSslError(const boost::system::error_code& ec) {
  std::string text = ec.message();
  if (ec.category() == boost::asio::error::get_ssl_category()) {
    // The reason alone ("certificate verify failed"), without OpenSSL's code prefix.
    const char* reason = ERR_reason_error_string(static_cast<unsigned long>(ec.value()));
    if (reason != nullptr) text = reason;
  }
  return text;
}

bool ReadFirstLine(const std::string& path, std::string& out, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read " + path;
    return false;
  }
  std::getline(in, out);
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return true;
}

int ProtoVersion(TlsVersion v) { return v == TlsVersion::kTls13 ? TLS1_3_VERSION : TLS1_2_VERSION; }

// Cert, key (with its passphrase) and minimum version, for either side.
bool LoadIdentity(ssl::context& ctx, const std::string& cert_file, const std::string& key_file,
                  const std::string& password_file, std::string& error) {
  boost::system::error_code ec;
  if (!password_file.empty()) {
    std::string password;
    if (!ReadFirstLine(password_file, password, error)) return false;
    ctx.set_password_callback(
        [password](std::size_t, ssl::context::password_purpose) { return password; });
  }
  ctx.use_certificate_chain_file(cert_file, ec);
  if (ec) {
    error = "certificate " + cert_file + ": " + OpenSslError(ec);
    return false;
  }
  ctx.use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) {
    error = "key " + key_file + ": " + OpenSslError(ec);
    return false;
  }
  if (SSL_CTX_check_private_key(ctx.native_handle()) != 1) {
    error = "key " + key_file + " does not belong to certificate " + cert_file;
    return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<TlsServerContext> MakeTlsServerContext(const TlsServerOptions& options,
                                                       std::string& error) {
  auto out = std::make_shared<TlsServerContext>();
  ssl::context& ctx = out->ssl;
  SSL_CTX* native = ctx.native_handle();
  SSL_CTX_set_min_proto_version(native, ProtoVersion(options.min_version));
  ctx.set_options(ssl::context::default_workarounds | ssl::context::single_dh_use);
  if (!options.ciphers.empty() && SSL_CTX_set_cipher_list(native, options.ciphers.c_str()) != 1) {
    error = "ciphers \"" + options.ciphers + "\": no cipher OpenSSL knows";
    return nullptr;
  }
  if (!LoadIdentity(ctx, options.cert_file, options.key_file, options.password_file, error)) {
    return nullptr;
  }
  boost::system::error_code ec;
  if (!options.ca_file.empty()) {
    ctx.load_verify_file(options.ca_file, ec);
    if (ec) {
      error = "CA bundle " + options.ca_file + ": " + OpenSslError(ec);
      return nullptr;
    }
    // Tell clients which CAs we accept, so that one with several certificates picks ours.
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.ca_file.c_str())) {
      SSL_CTX_set_client_CA_list(native, names);
    }
  }
  out->permitted = PermittedPeers(options.permitted_peers);
  out->client_auth = options.client_auth;
  if (options.client_auth != ClientAuth::kNone) {
    int mode = SSL_VERIFY_PEER;
    if (options.client_auth == ClientAuth::kRequired) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    // A fingerprint in permitted_peers admits its certificate whatever its issuer: the chain
    // check is overridden for the leaf when it is pinned. Everything else needs the CA.
    const TlsServerContext* raw = out.get();
    ctx.set_verify_mode(mode);
    ctx.set_verify_callback([raw](bool preverified, ssl::verify_context& vc) {
      if (preverified) return true;
      X509_STORE_CTX* store = vc.native_handle();
      const int err = X509_STORE_CTX_get_error(store);
      // An expired or not yet valid certificate is refused even when pinned.
      if (err == X509_V_ERR_CERT_HAS_EXPIRED || err == X509_V_ERR_CERT_NOT_YET_VALID) {
        return false;
      }
      X509* leaf = X509_STORE_CTX_get0_cert(store);
      if (leaf == nullptr || !raw->permitted.PermitsFingerprint(CertificateFingerprint(leaf))) {
        return false;
      }
      X509_STORE_CTX_set_error(store, X509_V_OK);
      return true;
    });
  }
  // Sessions cached per context: a rotated certificate starts a fresh cache.
  SSL_CTX_set_session_id_context(native, reinterpret_cast<const unsigned char*>("logfold"), 7);
  return out;
}

std::shared_ptr<ssl::context> MakeTlsClientContext(const TlsClientOptions& options,
                                                   std::string& error) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), ProtoVersion(options.min_version));
  ctx->set_options(ssl::context::default_workarounds);
  boost::system::error_code ec;
  if (options.ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
  } else {
    ctx->load_verify_file(options.ca_file, ec);
  }
  if (ec) {
    error = "CA bundle " +
            (options.ca_file.empty() ? std::string("(system store)") : options.ca_file) + ": " +
            OpenSslError(ec);
    return nullptr;
  }
  ctx->set_verify_mode(options.verify ? ssl::verify_peer : ssl::verify_none);
  if (!options.cert_file.empty() &&
      !LoadIdentity(*ctx, options.cert_file, options.key_file, options.password_file, error)) {
    return nullptr;
  }
  return ctx;
}

bool PrepareTlsClient(SSL* ssl, const std::string& host, bool verify, std::string& error) {
  // SNI only for names: RFC 6066 forbids IP literals in server_name.
  const bool is_ip = host.find_first_not_of("0123456789.") == std::string::npos ||
                     host.find(':') != std::string::npos;
  if (!is_ip && SSL_set_tlsext_host_name(ssl, host.c_str()) != 1) {
    error = "cannot set SNI to " + host;
    return false;
  }
  if (!verify) return true;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  const int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str())
                       : X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
  if (ok != 1) {
    error = "cannot verify against host " + host;
    return false;
  }
  return true;
}

std::vector<std::string> CertificateNames(X509* cert) {
  std::vector<std::string> names;
  if (cert == nullptr) return names;
  X509_NAME* subject = X509_get_subject_name(cert);
  for (int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
    names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                       static_cast<std::size_t>(ASN1_STRING_length(data)));
  }
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (sans != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* gn = sk_GENERAL_NAME_value(sans, i);
      if (gn->type != GEN_DNS) continue;
      names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(gn->d.dNSName)),
                         static_cast<std::size_t>(ASN1_STRING_length(gn->d.dNSName)));
    }
    GENERAL_NAMES_free(sans);
  }
  return names;
}

Sha256 CertificateFingerprint(X509* cert) {
  Sha256 out{};
  unsigned int len = 0;
  X509_digest(cert, EVP_sha256(), out.data(), &len);
  return out;
}

TlsFailure ClassifyTlsFailure(const boost::system::error_code& ec, SSL* ssl) {
  TlsFailure f{"other", OpenSslError(ec)};
  if (ec == ssl::error::stream_truncated || ec == boost::asio::error::eof ||
      ec == boost::asio::error::connection_reset) {
    f.reason = "closed";
  }
  const long verify = ssl != nullptr ? SSL_get_verify_result(ssl) : X509_V_OK;
  if (verify != X509_V_OK) {
    f.reason = verify == X509_V_ERR_CERT_HAS_EXPIRED || verify == X509_V_ERR_CERT_NOT_YET_VALID
                   ? "certificate_expired"
                   : "certificate_invalid";
    f.detail += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
    return f;
  }
  if (ec.category() != boost::asio::error::get_ssl_category()) return f;
  switch (ERR_GET_REASON(static_cast<unsigned long>(ec.value()))) {
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_HTTP_REQUEST:
    case SSL_R_HTTPS_PROXY_REQUEST:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
      f.reason = "not_tls";
      break;
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_NO_PROTOCOLS_AVAILABLE:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
      f.reason = "protocol_version";
      break;
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
      f.reason = "no_certificate";
      break;
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
      f.reason = "certificate_invalid";
      break;
    default:
      break;
  }
  return f;
}

bool PeerPermitted(const TlsServerContext& context, SSL* ssl, std::string& why) {
  if (context.client_auth == ClientAuth::kNone) return true;
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (cert == nullptr) return true;  // optional, and none offered (required failed earlier)
  const std::vector<std::string> names = CertificateNames(cert);
  const bool ok = context.permitted.Permits(names, CertificateFingerprint(cert));
  X509_free(cert);
  if (!ok) {
    why = "certificate names [";
    for (std::size_t i = 0; i < names.size(); ++i) why += (i ? ", " : "") + names[i];
    why += "] match no permitted_peers entry";
  }
  return ok;
}

}  // namespace logfold
