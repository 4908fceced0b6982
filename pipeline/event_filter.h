// EventFilter: which events one output receives (its `select` in the config): by kind, minimum
// severity, host and app name, and a substring or regular expression of the template.
#ifndef LOGFOLD_PIPELINE_EVENT_FILTER_H_
#define LOGFOLD_PIPELINE_EVENT_FILTER_H_

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "pipeline/event.h"

namespace logfold {

struct EventSelection {
  // Kinds selected. Annotate events (replay --annotate) count as firsts.
  bool first = true;
  bool summary = true;
  // -1: any severity. 0 (emerg) .. 7 (debug): only events whose line is at least this severe
  // (a numerically lower or equal syslog severity); a line without a severity never matches.
  int min_severity = -1;
  std::vector<std::string> hosts;  // the line's host is one of these (empty: any)
  std::vector<std::string> apps;   // the line's app name or tag is one of these (empty: any)
  std::string template_contains;   // substring of the template, case-sensitive (empty: any)
  std::string template_regex;      // ECMAScript regex searched in the template (empty: any)

  // True when every event is selected (the default: outputs get everything).
  bool all() const { return *this == EventSelection{}; }
  bool operator==(const EventSelection&) const = default;
};

class EventFilter {
 public:
  // Throws std::regex_error for an invalid template_regex (the config validates it first).
  explicit EventFilter(const EventSelection& selection);
  bool Matches(const Event& event) const;
  bool all() const { return all_; }

 private:
  EventSelection selection_;
  bool all_;
  std::shared_ptr<const std::regex> regex_;  // shared: filters are copied with sink lists
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_EVENT_FILTER_H_
