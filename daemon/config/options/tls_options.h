// The "tls" blocks of inputs and outputs (certificate files, verification) and the options of
// a TLS input (daemon/inputs/tcp_listener.h, Tls), with their defaults. runtime/tls_context.h is
// given these fields (runtime/tls_options.h, no defaults there) by the inputs and outputs.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_TLS_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_TLS_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/config/options/tcp_input_options.h"
#include "daemon/config/units.h"
#include "pipeline/frame_decoder.h"

namespace logfold {

enum class TlsMinVersion : std::uint8_t { kTls12, kTls13 };
enum class TlsClientAuth : std::uint8_t { kNone, kOptional, kRequired };

// A tls input's "tls" block: its certificate and how clients are authenticated.
struct TlsServerConfig {
  std::string cert_file;      // PEM, the server certificate (and its chain)
  std::string key_file;       // PEM private key
  std::string password_file;  // the key's passphrase (first line); "": key is not encrypted
  std::string ca_file;        // PEM bundle that client certificates must chain to
  TlsMinVersion min_version = TlsMinVersion::kTls12;
  std::string ciphers;  // OpenSSL cipher list for TLS 1.2; "": OpenSSL's defaults
  TlsClientAuth client_auth = TlsClientAuth::kNone;
  // Client certificate names (CN, DNS SAN; wildcards) or "sha256:" fingerprints. Empty: any
  // certificate the CA vouches for. A listed fingerprint admits a certificate even when it
  // does not chain to ca_file (self-signed senders, as rsyslog's x509/fingerprint mode).
  std::vector<std::string> permitted_peers;
  bool operator==(const TlsServerConfig&) const = default;
};

// The "tls" block of a tcp or syslog (over tcp) output, or of an https:// http output.
struct TlsClientConfig {
  std::string ca_file;  // PEM bundle that the server must chain to; "": the system store
  bool verify = true;   // verify the server's chain and that its name matches the host
  std::string cert_file, key_file, password_file;  // optional client certificate
  TlsMinVersion min_version = TlsMinVersion::kTls12;
  bool operator==(const TlsClientConfig&) const = default;
};

// Options of a TLS input (RFC 5425).
struct TlsInputOptions {
  std::string address = "127.0.0.1";  // IP literal; "::" or "0.0.0.0" for all
  std::uint16_t port = 0;             // 0: ephemeral (see local_port())
  // An inherited systemd socket to adopt, by FileDescriptorName; address and port are then
  // unused.
  std::string socket_name{};
  // The descriptor of that socket (owned by the listener); -1: none. Set by the server.
  int adopted_fd = -1;
  std::uint64_t max_message_size = 64 * kKiB;
  // RFC 5425 mandates octet counting; auto also takes the newline framing some senders use.
  Framing framing = Framing::kAuto;
  std::uint32_t max_connections = 1024;  // further clients are closed at once; 0: no limit
  // As a tcp input's (TcpInputOptions), whose default it takes.
  std::uint32_t max_connections_per_source = TcpInputOptions{}.max_connections_per_source;
  // No complete message for this long: close; 0: never. Bytes (TLS records) that complete
  // no message do not keep a connection open.
  TimeUs idle_timeout_us = 5 * kMinute;
  TimeUs handshake_timeout_us = 10 * kSecond;
  // CIDR blocks; connections from other addresses are closed at once and counted in
  // logfold_senders_refused_total. Empty: any sender.
  std::vector<std::string> allowed_senders{};
  TlsServerConfig tls{};  // the certificate and client authentication
  bool operator==(const TlsInputOptions&) const = default;

  // The options of the TCP listener that carries this input's TLS stream (the fields it
  // has no key for keep TcpInputOptions' defaults; a NUL byte is data inside TLS).
  TcpInputOptions Stream() const {
    TcpInputOptions o;
    o.address = address;
    o.port = port;
    o.socket_name = socket_name;
    o.adopted_fd = adopted_fd;
    o.max_message_size = max_message_size;
    o.framing = framing;
    o.nul_terminator = false;
    o.max_connections = max_connections;
    o.max_connections_per_source = max_connections_per_source;
    o.idle_timeout_us = idle_timeout_us;
    o.allowed_senders = allowed_senders;
    return o;
  }
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_TLS_OPTIONS_H_
