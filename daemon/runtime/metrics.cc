// Prometheus text rendering and lookup for the Metrics registry.
#include "daemon/runtime/metrics.h"

#include <cstdio>
#include <map>

namespace logfold {

Metrics::Counter& Metrics::GetCounter(std::string_view name, std::string_view help,
                                      std::string_view labels) {
  std::lock_guard lock(mu_);
  for (Entry& e : entries_) {
    if (!e.is_gauge && e.name == name && e.labels == labels) return e.counter;
  }
  Entry& e = entries_.emplace_back();
  e.name = name;
  e.help = help;
  e.labels = labels;
  return e.counter;
}

void Metrics::AddGauge(std::string_view name, std::string_view help, std::string_view labels,
                       std::function<double()> read) {
  std::lock_guard lock(mu_);
  // A component rebuilt under the same name (a sink replaced by a reload) takes over its
  // series: two samples with one name and label set would be an invalid exposition.
  for (Entry& e : entries_) {
    if (e.is_gauge && e.name == name && e.labels == labels) {
      e.read = std::move(read);
      return;
    }
  }
  Entry& e = entries_.emplace_back();
  e.name = name;
  e.help = help;
  e.labels = labels;
  e.is_gauge = true;
  e.read = std::move(read);
}

void Metrics::RemoveGauge(std::string_view name, std::string_view labels) {
  std::lock_guard lock(mu_);
  for (Entry& e : entries_) {
    if (e.is_gauge && e.name == name && e.labels == labels) e.read = nullptr;
  }
}

std::uint64_t Metrics::Value(std::string_view name, std::string_view labels) const {
  std::lock_guard lock(mu_);
  for (const Entry& e : entries_) {
    if (!e.is_gauge && e.name == name && e.labels == labels) return e.counter.load();
  }
  return 0;
}

std::uint64_t Metrics::Sum(std::string_view name) const {
  std::lock_guard lock(mu_);
  std::uint64_t sum = 0;
  for (const Entry& e : entries_) {
    if (!e.is_gauge && e.name == name) sum += e.counter.load();
  }
  return sum;
}

std::string Metrics::EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string Metrics::RenderPrometheus() const {
  std::lock_guard lock(mu_);
  // Group samples under one HELP/TYPE header per name, in first-registration order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Entry*>> by_name;
  for (const Entry& e : entries_) {
    if (e.is_gauge && !e.read) continue;  // removed
    auto [it, inserted] = by_name.try_emplace(e.name);
    if (inserted) order.push_back(e.name);
    it->second.push_back(&e);
  }
  std::string out;
  char num[64];
  for (const std::string& name : order) {
    const auto& list = by_name[name];
    out += "# HELP " + name + " " + list.front()->help + "\n";
    out += "# TYPE " + name + (list.front()->is_gauge ? " gauge\n" : " counter\n");
    for (const Entry* e : list) {
      out += name;
      if (!e->labels.empty()) out += "{" + e->labels + "}";
      if (e->is_gauge) {
        std::snprintf(num, sizeof num, " %.17g\n", e->read());
      } else {
        std::snprintf(num, sizeof num, " %llu\n",
                      static_cast<unsigned long long>(e->counter.load()));
      }
      out += num;
    }
  }
  return out;
}

}  // namespace logfold
