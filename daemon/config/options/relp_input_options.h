// Options of a RELP input (daemon/inputs/relp_listener.h), with their defaults. Header-only and
// in config/ so that the config layer maps the file onto them once and the listener reads them.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_RELP_INPUT_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_RELP_INPUT_OPTIONS_H_

#include <cstdint>
#include <string>

#include "daemon/config/units.h"

namespace logfold {

struct RelpInputOptions {
  std::string address = "127.0.0.1";  // IP literal; "::" or "0.0.0.0" for all
  std::uint16_t port = 0;             // 2514 is conventional; 0: ephemeral (see local_port())
  // Longest message; librelp truncates longer ones (the frame is still acknowledged).
  std::uint64_t max_message_size = 64 * kKiB;
  bool operator==(const RelpInputOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_RELP_INPUT_OPTIONS_H_
