// EventFilter implementation: cheapest tests first, the regular expression last.
#include "pipeline/event_filter.h"

#include <algorithm>

namespace logfold {

EventFilter::EventFilter(const EventSelection& selection)
    : selection_(selection), all_(selection.all()) {
  if (!selection_.template_regex.empty()) {
    regex_ = std::make_shared<const std::regex>(selection_.template_regex,
                                                std::regex::ECMAScript | std::regex::optimize);
  }
}

bool EventFilter::Matches(const Event& event) const {
  if (all_) return true;
  const EventSelection& s = selection_;
  if (!(event.kind == EventKind::kSummary ? s.summary : s.first)) return false;
  const LogRecord* r = event.record;
  if (s.min_severity >= 0 && (r == nullptr || r->severity < 0 || r->severity > s.min_severity)) {
    return false;
  }
  auto listed = [](const std::vector<std::string>& list, std::string_view value) {
    return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
  };
  if (!listed(s.hosts, r != nullptr ? std::string_view(r->hostname) : "")) return false;
  // An app is named by its program name or by its whole RFC 3164 tag ("postfix/smtpd").
  if (!s.apps.empty() && !(r != nullptr && !r->tag.empty() && listed(s.apps, r->tag)) &&
      !listed(s.apps, r != nullptr ? std::string_view(r->app_name) : "")) {
    return false;
  }
  if (!s.template_contains.empty() &&
      event.template_text.find(s.template_contains) == std::string_view::npos) {
    return false;
  }
  if (regex_ != nullptr &&
      !std::regex_search(event.template_text.begin(), event.template_text.end(), *regex_)) {
    return false;
  }
  return true;
}

}  // namespace logfold
