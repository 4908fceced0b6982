// The three store formats. Bodies are written by hand around the events' NDJSON, which is
// passed through byte for byte (each store parses it as it stands).
#include "daemon/outputs/http/http_body_format.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "pipeline/event_json.h"
#include "pipeline/syslog_time.h"

namespace logfold {
namespace {

using Json = nlohmann::json;

// POST <url>?query=INSERT INTO <table> FORMAT JSONEachRow&<settings>: the body is the
// events' NDJSON unchanged. Unknown fields (the event has more than a table needs) are
// skipped, and RFC 3339 times with microseconds parse into DateTime columns.
class ClickHouseFormat final : public HttpBodyFormat {
 public:
  ClickHouseFormat(const HttpUrl& url, const std::string& table)
      : HttpBodyFormat(url.path + "?" + (url.query.empty() ? "" : url.query + "&") +
                       "query=" + UrlEncode("INSERT INTO " + table + " FORMAT JSONEachRow") +
                       "&input_format_skip_unknown_fields=1&date_time_input_format=best_effort") {}

  std::string_view content_type() const override { return "application/x-ndjson"; }

  void AppendBody(std::span<const std::string_view> events, TimeUs,
                  std::string& body) const override {
    for (std::string_view e : events) {
      body += e;
      body += '\n';
    }
  }

  // ClickHouse names its error in the body ("Code: N, e.displayText() = ...") whatever the
  // status, and the code is what tells the rows' fault from the setup's: 18.16 answers a bad
  // row with 500, but a missing table or database with 404 and bad credentials with 401.
  HttpVerdict Classify(unsigned status, std::string_view body) const override {
    if (status >= 400 && body.starts_with("Code: ")) {
      int code = 0;
      const auto r = std::from_chars(body.data() + 6, body.data() + body.size(), code);
      if (r.ec == std::errc()) return ClassifyClickHouseError(code);
    }
    return ClassifyHttpStatus(status);
  }
};

// POST <url>/_bulk: an index action line before each event (Elasticsearch and OpenSearch
// bulk API, NDJSON ending in '\n').
class ElasticsearchFormat final : public HttpBodyFormat {
 public:
  ElasticsearchFormat(const HttpUrl& url, const std::string& index)
      : HttpBodyFormat(url.PathWith("_bulk") + (url.query.empty() ? "" : "?" + url.query)) {
    action_ = "{\"index\":{\"_index\":";
    AppendJsonString(index, action_);
    action_ += "}}\n";
  }

  std::string_view content_type() const override { return "application/x-ndjson"; }

  void AppendBody(std::span<const std::string_view> events, TimeUs,
                  std::string& body) const override {
    for (std::string_view e : events) {
      body += action_;
      body += e;
      body += '\n';
    }
  }

  bool ItemVerdicts(std::string_view body, std::size_t events, std::vector<HttpVerdict>& verdicts,
                    std::vector<std::string>& reasons) const override {
    const Json doc = Json::parse(body, nullptr, false);
    if (!doc.is_object()) return false;
    const auto errors = doc.find("errors");
    const auto items = doc.find("items");
    if (errors == doc.end() || !errors->is_boolean() || items == doc.end() || !items->is_array() ||
        items->size() != events) {
      return false;
    }
    verdicts.assign(events, HttpVerdict::kDelivered);
    reasons.assign(events, "");
    if (!errors->get<bool>()) return true;
    for (std::size_t i = 0; i < events; ++i) {
      const Json& item = (*items)[i];
      if (!item.is_object() || item.empty()) return false;
      const Json& result = item.begin().value();  // {"index": {...}}
      if (!result.is_object()) return false;
      const auto status = result.find("status");
      if (status == result.end() || !status->is_number_unsigned()) return false;
      const auto code = status->get<unsigned>();
      const HttpVerdict v = ClassifyHttpStatus(code);
      // A failed item is retried only when the cluster was busy; any other failure is
      // about the document itself, so retrying cannot help.
      verdicts[i] = v == HttpVerdict::kDelivered              ? HttpVerdict::kDelivered
                    : v == HttpVerdict::kRetry || code >= 500 ? HttpVerdict::kRetry
                                                              : HttpVerdict::kRejected;
      if (verdicts[i] != HttpVerdict::kDelivered) {
        const auto error = result.find("error");
        reasons[i] = "status " + std::to_string(code);
        if (error != result.end())
          reasons[i] += ": " + error->dump(-1, ' ', false, Json::error_handler_t::replace);
      }
    }
    return true;
  }

 private:
  std::string action_;
};

// POST <url>/loki/api/v1/push: events grouped into streams by their labels (the static
// ones, then kind, host and app of each event), each value [<unix ns>, <event line>].
class LokiFormat final : public HttpBodyFormat {
 public:
  LokiFormat(const HttpUrl& url, std::vector<std::pair<std::string, std::string>> labels)
      : HttpBodyFormat(url.PathWith("loki/api/v1/push") +
                       (url.query.empty() ? "" : "?" + url.query)),
        labels_(std::move(labels)) {}

  std::string_view content_type() const override { return "application/json"; }

  void AppendBody(std::span<const std::string_view> events, TimeUs now_us,
                  std::string& body) const override {
    struct Stream {
      std::string labels;  // the "stream" object
      std::string values;  // the "values" array's elements, comma-separated
    };
    std::vector<Stream> streams;
    std::unordered_map<std::string, std::size_t> by_labels;
    std::string key;
    for (std::string_view line : events) {
      const Json event = Json::parse(line, nullptr, false);
      key = "{";
      bool first = true;
      auto add_label = [&](std::string_view name, std::string_view value) {
        if (!first) key += ',';
        first = false;
        AppendJsonString(name, key);
        key += ':';
        AppendJsonString(value, key);
      };
      for (const auto& [name, value] : labels_) add_label(name, value);
      TimeUs time_us = now_us;
      if (event.is_object()) {
        for (const char* field : {"kind", "host", "app"}) {
          const auto it = event.find(field);
          if (it != event.end() && it->is_string())
            add_label(field, it->get_ref<const std::string&>());
        }
        const auto kind = event.find("kind");
        const bool summary = kind != event.end() && *kind == "summary";
        const auto time = event.find(summary ? "last_seen" : "time");
        if (time != event.end() && time->is_string()) {
          if (auto t = ParseRfc3339(time->get_ref<const std::string&>())) time_us = *t;
        }
      }
      key += '}';
      auto [it, inserted] = by_labels.emplace(key, streams.size());
      if (inserted) streams.push_back(Stream{key, ""});
      std::string& values = streams[it->second].values;
      if (!values.empty()) values += ',';
      values += "[\"";
      // Microseconds to nanoseconds in text; Loki has no use for times before 1970.
      if (time_us > 0) {
        values += std::to_string(time_us);
        values += "000";
      } else {
        values += '0';
      }
      values += "\",";
      AppendJsonString(line, values);
      values += ']';
    }
    body += "{\"streams\":[";
    for (std::size_t i = 0; i < streams.size(); ++i) {
      if (i > 0) body += ',';
      body += "{\"stream\":";
      body += streams[i].labels;
      body += ",\"values\":[";
      body += streams[i].values;
      body += "]}";
    }
    body += "]}";
  }

 private:
  std::vector<std::pair<std::string, std::string>> labels_;
};

}  // namespace

HttpVerdict HttpBodyFormat::Classify(unsigned status, std::string_view) const {
  return ClassifyHttpStatus(status);
}

bool HttpBodyFormat::ItemVerdicts(std::string_view, std::size_t, std::vector<HttpVerdict>&,
                                  std::vector<std::string>&) const {
  return false;
}

HttpVerdict ClassifyHttpStatus(unsigned status) {
  if (status >= 200 && status < 300) return HttpVerdict::kDelivered;
  if (status == 408 || status == 429 || status == 502 || status == 503 || status == 504) {
    return HttpVerdict::kRetry;
  }
  if (status >= 400 && status < 500) return HttpVerdict::kRejected;
  return HttpVerdict::kRetryLimited;
}

HttpVerdict ClassifyClickHouseError(int code) {
  switch (code) {
    case 60:   // UNKNOWN_TABLE: the schema is not (yet) in place; not the rows' fault
    case 81:   // UNKNOWN_DATABASE
    case 192:  // UNKNOWN_USER: credentials or network rules to fix; not the rows' fault
    case 193:  // WRONG_PASSWORD
    case 194:  // REQUIRED_PASSWORD
    case 195:  // IP_ADDRESS_NOT_ALLOWED
    case 159:  // TIMEOUT_EXCEEDED
    case 202:  // TOO_MANY_SIMULTANEOUS_QUERIES
    case 209:  // SOCKET_TIMEOUT
    case 210:  // NETWORK_ERROR
    case 225:  // NO_ZOOKEEPER
    case 236:  // ABORTED
    case 241:  // MEMORY_LIMIT_EXCEEDED
    case 242:  // TABLE_IS_READ_ONLY
    case 252:  // TOO_MANY_PARTS
    case 319:  // UNKNOWN_STATUS_OF_INSERT
    case 999:  // KEEPER_EXCEPTION
      return HttpVerdict::kRetry;
    default:
      return HttpVerdict::kRejected;
  }
}

std::unique_ptr<HttpBodyFormat> MakeHttpBodyFormat(const HttpSinkOptions& options) {
  switch (options.format) {
    case HttpFormat::kClickHouse:
      return std::make_unique<ClickHouseFormat>(options.url, options.table);
    case HttpFormat::kElasticsearch:
      return std::make_unique<ElasticsearchFormat>(options.url, options.index);
    case HttpFormat::kLoki:
      break;
  }
  return std::make_unique<LokiFormat>(options.url, options.labels);
}

}  // namespace logfold
