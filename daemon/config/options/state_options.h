// Options of crash durability (daemon/state/state_store.h), with their defaults. Header-only
// and in config/ so that the config layer maps the file onto them once and the store reads them.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_STATE_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_STATE_OPTIONS_H_

#include <cstdint>
#include <string>

#include "pipeline/log_record.h"

namespace logfold {

struct StateOptions {
  // Where checkpoints (and the journal) live; "" keeps no state: a crash loses open groups.
  std::string directory;
  TimeUs checkpoint_interval_us = 1'000'000;  // how often each worker checkpoints its groups
  bool journal = false;  // accepted lines are fsynced to a journal before they count
  std::uint64_t journal_segment_bytes = 64 << 20;  // a new journal file after this many bytes
  bool operator==(const StateOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_STATE_OPTIONS_H_
