// ParseConfig and LoadConfigFile: the JSON document read with repeated keys kept, then the
// Validator (validator.h) maps it onto Config. The schema lives in config/README.md.
#include "daemon/config/config.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "daemon/config/validator.h"

namespace logfold {
namespace {

using config_internal::Json;
using config_internal::kHttpFormats;
using config_internal::kInputTypes;
using config_internal::kKafkaCompressions;
using config_internal::kKafkaKeys;
using config_internal::kLogLevels;
using config_internal::kOutputTypes;
using config_internal::NameOf;
using config_internal::Quote;

// Builds an ordered_json document like nlohmann's own DOM parser, except that a repeated
// object key is kept as a second entry instead of silently replacing the first, so that
// validation can report it where it occurs.
class DomBuilder : public nlohmann::json_sax<Json> {
 public:
  explicit DomBuilder(std::string_view text) : text_(text) {}

  bool null() override { return Add(Json(nullptr)); }
  bool boolean(bool val) override { return Add(Json(val)); }
  bool number_integer(number_integer_t val) override { return Add(Json(val)); }
  bool number_unsigned(number_unsigned_t val) override { return Add(Json(val)); }
  bool number_float(number_float_t val, const string_t&) override { return Add(Json(val)); }
  bool string(string_t& val) override { return Add(Json(std::move(val))); }
  bool binary(binary_t& val) override { return Add(Json::binary(std::move(val))); }
  bool start_object(std::size_t) override { return Open(Json::object()); }
  bool key(string_t& val) override {
    key_ = std::move(val);
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(Json::array()); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    // Located from the byte offset rather than taken from the message, because only syntax
    // errors carry a location in their text (a number overflow does not).
    const std::string_view consumed = text_.substr(0, std::min(position, text_.size()));
    const std::size_t newline = consumed.rfind('\n');
    const std::size_t line =
        static_cast<std::size_t>(std::count(consumed.begin(), consumed.end(), '\n')) + 1;
    // `position` counts an end of input as a character read, so it may exceed the text.
    const std::size_t column = position - (newline == std::string_view::npos ? 0 : newline + 1);
    // Drop "[json.exception.parse_error.101] " and "parse error at line L, column C: ".
    std::string detail = ex.what();
    if (const std::size_t close = detail.find("] "); close != std::string::npos) {
      detail.erase(0, close + 2);
    }
    if (detail.rfind("parse error", 0) == 0) {
      if (const std::size_t colon = detail.find(": "); colon != std::string::npos) {
        detail.erase(0, colon + 2);
      }
    }
    error_ = "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(column) +
             ": " + detail;
    // The most common cause by far: a comment, which JSON does not have.
    const std::size_t at = position > 0 ? position - 1 : 0;
    if (at < text_.size() &&
        (text_[at] == '#' || (text_[at] == '/' && at + 1 < text_.size() &&
                              (text_[at + 1] == '/' || text_[at + 1] == '*')))) {
      error_ += " (JSON has no comments: remove the comment; config/README.md documents every key)";
    }
    return false;
  }

  Json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  Json* Insert(Json&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      auto& array = parent.get_ref<Json::array_t&>();
      array.push_back(std::move(value));
      return &array.back();
    }
    // The underlying vector's emplace_back, which (unlike ordered_map::emplace) never merges
    // a repeated key into the existing entry.
    auto& object = parent.get_ref<Json::object_t&>();
    object.Container::emplace_back(std::move(key_), std::move(value));
    return &object.back().second;
  }
  bool Add(Json&& value) {
    Insert(std::move(value));
    return true;
  }
  // Pointers on the stack stay valid: a container only grows while it is the innermost one.
  bool Open(Json&& value) {
    stack_.push_back(Insert(std::move(value)));
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  std::string_view text_;
  Json root_;
  std::vector<Json*> stack_;
  std::string key_;
  std::string error_;
};

}  // namespace

bool ParseConfig(std::string_view json_text, Config& out, std::vector<ConfigError>& errors) {
  const std::size_t errors_before = errors.size();
  try {
    DomBuilder builder(json_text);
    if (!Json::sax_parse(json_text, &builder, Json::input_format_t::json, /*strict=*/true,
                         /*ignore_comments=*/false)) {
      errors.push_back(ConfigError{"", builder.error()});
      return false;
    }
    Config config;
    config_internal::Validator(errors).Document(builder.root(), config);
    if (errors.size() != errors_before) return false;
    out = std::move(config);
    return true;
  } catch (const std::exception& e) {
    // Only allocation failure can get here; the caller is promised no exceptions.
    errors.push_back(ConfigError{"", std::string("cannot parse the configuration: ") + e.what()});
    return false;
  }
}

bool LoadConfigFile(const std::string& path, Config& out, std::vector<ConfigError>& errors) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  std::string text;
  int error = file == nullptr ? errno : 0;
  if (file != nullptr) {
    char buffer[65536];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, n);
    // A directory opens fine and fails on read (EISDIR).
    if (std::ferror(file)) error = errno != 0 ? errno : EIO;
    std::fclose(file);
  }
  if (error != 0) {
    errors.push_back(ConfigError{"", "cannot read " + Quote(path) + ": " + std::strerror(error)});
    return false;
  }
  return ParseConfig(text, out, errors);
}
std::string FormatConfigErrors(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const ConfigError& error : errors) {
    if (!error.path.empty()) out.append(error.path).append(": ");
    out.append(error.reason).push_back('\n');
  }
  return out;
}

std::string_view LogLevelName(LogLevel level) { return NameOf(kLogLevels, level); }
std::string_view InputTypeName(InputType type) { return NameOf(kInputTypes, type); }
std::string_view OutputTypeName(OutputType type) { return NameOf(kOutputTypes, type); }
std::string_view HttpFormatName(HttpFormat format) { return NameOf(kHttpFormats, format); }
std::string_view KafkaCompressionName(KafkaCompression compression) {
  return NameOf(kKafkaCompressions, compression);
}
std::string_view KafkaKeyName(KafkaKey key) { return NameOf(kKafkaKeys, key); }

}  // namespace logfold
