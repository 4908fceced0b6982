// Options of a TCP input (daemon/inputs/tcp_listener.h), with their defaults. Header-only and
// in config/ so that the config layer maps the file onto them once and the listener reads them.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_TCP_INPUT_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_TCP_INPUT_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/config/units.h"
#include "pipeline/frame_decoder.h"

namespace logfold {

struct TcpInputOptions {
  std::string address = "127.0.0.1";  // IP literal; "::" or "0.0.0.0" for all
  std::uint16_t port = 0;             // 0: ephemeral (see local_port())
  // An inherited systemd socket to adopt, by FileDescriptorName; address and port are then
  // unused (the socket is already listening).
  std::string socket_name{};  // {}: designated initializers may skip it (-Wextra)
  // The descriptor of that socket, or any already listening stream socket to use instead of
  // address/port. The listener takes ownership of it. -1: none. Set by the server, never by
  // the file.
  int adopted_fd = -1;
  std::uint64_t max_message_size = 64 * kKiB;  // longest frame; longer ones are truncated
  // SO_RCVBUF for accepted connections (set on the listening socket, which they inherit).
  // 0 keeps the kernel's receive buffer autotuning, which a fixed size would disable. Not a
  // config key: tests and benchmarks set it.
  std::uint64_t receive_buffer = 0;
  Framing framing = Framing::kAuto;
  bool nul_terminator = true;  // NUL also ends a newline frame (Python's SysLogHandler ends TCP
                               // records with one)
  // Auto framing believes an octet count only when the content starts with this byte
  // (FrameDecoder::Options::octet_content_start); 0: any. Set by the server from the input's
  // format ('<' for syslog, '{' for JSON), never by the file.
  char octet_content_start = '<';
  std::uint32_t max_connections = 1024;  // further clients are closed at once; 0: no limit
  // Connections one source address may hold at once, so that one host cannot take every
  // slot of max_connections; further ones are closed at once. 0: no limit.
  std::uint32_t max_connections_per_source = 64;
  // No complete message for this long: close; 0: never. Bytes that complete no message
  // (a sender trickling one byte a second) do not keep a connection open.
  TimeUs idle_timeout_us = 5 * kMinute;
  // Bytes read per receive. Not a config key: the server sets it larger in journal mode,
  // where every delivery waits for an fdatasync while the kernel buffers what arrives, so
  // larger reads share one fdatasync among more lines.
  std::uint64_t read_size = 64 * kKiB;
  // CIDR blocks; connections from other addresses are refused and counted in
  // logfold_senders_refused_total. Empty: any sender.
  std::vector<std::string> allowed_senders{};
  bool operator==(const TcpInputOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_TCP_INPUT_OPTIONS_H_
