// Options of a Kafka input (daemon/inputs/kafka_input.h), with their defaults. Header-only and
// in config/ so that the config layer maps the file onto them once and the input reads them.
#ifndef LOGFOLD_DAEMON_CONFIG_OPTIONS_KAFKA_INPUT_OPTIONS_H_
#define LOGFOLD_DAEMON_CONFIG_OPTIONS_KAFKA_INPUT_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/config/units.h"

namespace logfold {

struct KafkaInputOptions {
  std::string brokers;              // bootstrap.servers, "host:port,host:port"
  std::vector<std::string> topics;  // subscribed topics (at least one)
  std::string group_id = "logfold";
  // A record's value longer than this is cut to it and counted (logfold_truncated_total).
  std::uint64_t max_message_size = 64 * kKiB;
  // How often the offsets of lines already covered by delivered events are committed. A
  // partition's offset is committed only once every group that line could be in has been
  // summarised and the outputs confirmed the events, so it trails the consumer by about
  // max(engine.window, engine.max_hold).
  TimeUs commit_interval_us = 5 * kSecond;
  // librdkafka configuration properties passed through as they are (security.protocol,
  // sasl.*, ssl.*, fetch.max.bytes...); check-config rejects a name or value librdkafka does
  // not accept. The ones logfold sets itself (group.id, bootstrap.servers,
  // enable.auto.commit, partition.assignment.strategy...) are refused.
  std::map<std::string, std::string> properties;

  // Exactly-once mode (daemon/kafka_eos/): the input folds on its own thread, one merger per
  // assigned partition, and produces to the config's one kafka output in transactions that
  // also hold the changed open groups (to `changelog_topic`, compacted) and the consumed
  // offsets. Needs exactly one output, of type kafka.
  bool exactly_once = false;
  // The compacted topic of open groups, keyed "<topic>/<partition>/<group id>"; a partition's
  // records go to its number modulo the changelog's partition count. Required with
  // exactly_once; logfold does not create it.
  std::string changelog_topic;
  // The producer's transactional.id: stable across restarts of one instance (a restart then
  // aborts what the crashed run left open at once) and different for every instance of the
  // group. "": "logfold-<group_id>-<input name>", which suits one instance per host only.
  std::string transactional_id;
  // What a partition does when its changelog does not match its committed offset (the
  // changelog topic was deleted, truncated or corrupted): stop (the partition is not consumed
  // and the error logged until an operator acts) or empty (it is consumed from its committed
  // offset with no open groups: the counts of the groups open at the last commit are lost,
  // counted in logfold_kafka_changelog_resets_total).
  enum class ChangelogRecovery : std::uint8_t { kStop, kEmpty };
  ChangelogRecovery changelog_recovery = ChangelogRecovery::kStop;
  bool operator==(const KafkaInputOptions&) const = default;
};

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_CONFIG_OPTIONS_KAFKA_INPUT_OPTIONS_H_
