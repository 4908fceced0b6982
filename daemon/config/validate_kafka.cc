// The Validator's reader of librdkafka property maps (inputs[].properties of a kafka input):
// every property is set on a real librdkafka configuration object, so that check-config
// refuses exactly what the client would refuse, at the property's own key path.
#include <librdkafka/rdkafka.h>

#include <memory>

#include "daemon/config/validator.h"

namespace logfold {
namespace config_internal {

void Validator::KafkaProperties(const Json& v, const std::string& path,
                                std::map<std::string, std::string>& out,
                                std::initializer_list<std::string_view> reserved) {
  if (!v.is_object()) {
    TypeError(path, "an object", v);
    return;
  }
  const std::unique_ptr<rd_kafka_conf_t, decltype(&rd_kafka_conf_destroy)> conf(
      rd_kafka_conf_new(), &rd_kafka_conf_destroy);
  out.clear();
  for (const auto& [name, value] : v.items()) {
    const std::string p = Join(path, name);
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_boolean() || value.is_number()) {
      text = value.dump();  // librdkafka takes every value as text
    } else {
      TypeError(p, "a string, number or boolean", value);
      continue;
    }
    bool is_reserved = false;
    for (std::string_view r : reserved) is_reserved = is_reserved || r == name;
    if (is_reserved) {
      Error(p, "set by logfold itself; use the input's or output's own keys");
      continue;
    }
    char err[512];
    if (rd_kafka_conf_set(conf.get(), name.c_str(), text.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      std::string reason = err;
      while (!reason.empty() && reason.back() == '\n') reason.pop_back();
      Error(p, "librdkafka: " + reason);
      continue;
    }
    out[name] = std::move(text);
  }
}

}  // namespace config_internal
}  // namespace logfold
