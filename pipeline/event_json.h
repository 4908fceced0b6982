// NDJSON serialisation of events: one JSON object per line, the documented output schema
// (see config/README.md, "Output events").
#ifndef LOGFOLD_PIPELINE_EVENT_JSON_H_
#define LOGFOLD_PIPELINE_EVENT_JSON_H_

#include <string>
#include <string_view>

#include "pipeline/event.h"

namespace logfold {

// Appends `event` as one JSON object and a '\n' to `out`. No allocation beyond out's growth.
// An event with an origin (Event::origin) carries "event_id":"<stream hex>-<position>-<k>",
// k the kind's initial (f, s, a, n).
void AppendEventJson(const Event& event, std::string& out);

// Appends `s` as a JSON string literal (quotes included). Invalid UTF-8 bytes become U+FFFD,
// control characters are escaped, so output is always valid JSON. (An event's message that
// is not UTF-8 is written a second time, exactly, as "message_base64".)
void AppendJsonString(std::string_view s, std::string& out);

// Appends `us` as RFC 3339 UTC with microseconds, quoted: "2024-03-01T00:00:00.000123Z".
void AppendJsonTime(TimeUs us, std::string& out);

// 16 lowercase hex digits.
void AppendHex64(std::uint64_t v, std::string& out);

// The value of the string field `name` ("group_id", "host") of an event AppendEventJson
// wrote, escapes kept as they are (enough for a stable record key); empty when absent.
std::string_view EventJsonStringField(std::string_view event_json, std::string_view name);

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_EVENT_JSON_H_
