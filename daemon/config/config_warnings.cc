// ConfigWarnings: settings that are valid but risky, reported without refusing the file.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/config/units.h"

namespace logfold {
namespace {

// An IP literal's bytes (4 or 16), or 0 when it is not one.
int AddressBytes(const std::string& text, unsigned char out[16]) {
  if (inet_pton(AF_INET, text.c_str(), out) == 1) return 4;
  if (inet_pton(AF_INET6, text.c_str(), out) == 1) return 16;
  return 0;
}

bool IsWildcard(const std::string& address) {
  unsigned char b[16] = {};
  const int n = AddressBytes(address, b);
  return n > 0 && std::all_of(b, b + n, [](unsigned char c) { return c == 0; });
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  unsigned char b[16] = {};
  const int n = AddressBytes(host, b);
  if (n == 4) return b[0] == 127;
  if (n != 16) return false;
  static constexpr unsigned char kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(b, b + 12, kV4Mapped)) return b[12] == 127;
  return std::all_of(b, b + 15, [](unsigned char c) { return c == 0; }) && b[15] == 1;
}

}  // namespace

std::vector<ConfigError> ConfigWarnings(const Config& config, std::uint64_t memory_budget) {
  std::vector<ConfigError> out;
  for (std::size_t i = 0; i < config.inputs.size(); ++i) {
    const InputConfig& in = config.inputs[i];
    const std::string path = "inputs[" + std::to_string(i) + "]";
    const bool udp = in.type == InputType::kUdp, tcp = in.type == InputType::kTcp;
    const bool relp = in.type == InputType::kRelp;
    const std::string& socket_name = udp ? in.udp.socket_name : in.tcp.socket_name;
    const std::string& address = relp ? in.relp.address : udp ? in.udp.address : in.tcp.address;
    if ((udp || tcp || relp) && socket_name.empty() && IsWildcard(address)) {
      out.push_back({path + ".address", "listens on every interface (" + address +
                                            "): any host that can reach it can send lines"});
    }
    if (tcp && memory_budget > 0) {
      const std::uint64_t worst = std::uint64_t{in.tcp.max_connections} * in.tcp.max_message_size;
      if (worst > memory_budget) {
        out.push_back({path + ".max_connections",
                       std::to_string(in.tcp.max_connections) + " connections x max_message_size " +
                           FormatSize(in.tcp.max_message_size) + " = " + FormatSize(worst) +
                           " of unfinished frames exceeds limits.memory (" +
                           FormatSize(memory_budget) + "); reading pauses when it fills"});
      }
    }
  }
  for (std::size_t i = 0; i < config.outputs.size(); ++i) {
    const OutputConfig& o = config.outputs[i];
    if (o.type != OutputType::kHttp) continue;
    const std::string path = "outputs[" + std::to_string(i) + "]";
    for (const auto& [name, value] : o.http.headers) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == "authorization" && !IsLoopbackHost(o.http.url.host)) {
        out.push_back({path + ".headers." + name,
                       "sent over plain http to " + o.http.url.host +
                           ", which is not a loopback address: anyone on the path can read it"});
      }
    }
    if (o.sink.buffer < 2 * o.http.batch_max_bytes) {
      out.push_back({path + ".buffer",
                     FormatSize(o.sink.buffer) +
                         " holds less than two batches of batch_max_bytes (" +
                         FormatSize(o.http.batch_max_bytes) +
                         "): a batch stays in the buffer while it is sent, so the next cannot "
                         "fill and throughput falls towards one request per batch_max_delay"});
    }
  }
  if (config.metrics.enabled && IsWildcard(config.metrics.address)) {
    out.push_back({"metrics.address", "serves metrics on every interface (" +
                                          config.metrics.address +
                                          "): they reveal traffic volumes and host names"});
  }
  return out;
}

}  // namespace logfold
