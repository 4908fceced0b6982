// The stream id of a Kafka partition's lines (LineOrigin::stream), shared by the kafka input's
// at-least-once and exactly-once modes so that both give a line's events the same event_id.
#ifndef LOGFOLD_DAEMON_RUNTIME_KAFKA_STREAM_H_
#define LOGFOLD_DAEMON_RUNTIME_KAFKA_STREAM_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace logfold {

// FNV-1a (64 bits) over the topic, a 0 byte and the partition number in decimal; never 0.
// The same in every run and on every member of the group, so the member that replays a
// partition after a crash reproduces the ids.
inline std::uint64_t KafkaStream(std::string_view topic, std::int32_t partition) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto add = [&h](unsigned char c) {
    h ^= c;
    h *= 0x100000001b3ULL;
  };
  for (const char c : topic) add(static_cast<unsigned char>(c));
  add(0);
  for (const char c : std::to_string(partition)) add(static_cast<unsigned char>(c));
  return h == 0 ? 1 : h;
}

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_RUNTIME_KAFKA_STREAM_H_
