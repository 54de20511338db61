#include "findings/finding.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "rules/catalogue.h"

namespace gpudoctor {

const char* LayerName(Layer layer) {
  switch (layer) {
    case Layer::kNetwork:
      return "network";
    case Layer::kHardware:
      return "hardware";
    case Layer::kSoftware:
      return "software";
    case Layer::kResources:
      return "resources";
  }
  return "unknown";
}

const char* SeverityName(Severity sev) {
  switch (sev) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarn:
      return "warn";
    case Severity::kCrit:
      return "crit";
  }
  return "unknown";
}

std::optional<Severity> ParseSeverity(std::string_view s) {
  if (s == "info") return Severity::kInfo;
  if (s == "warn") return Severity::kWarn;
  if (s == "crit") return Severity::kCrit;
  return std::nullopt;
}

Finding& Finding::Add(std::string name, int64_t v) {
  evidence.push_back({std::move(name), v});
  return *this;
}
Finding& Finding::Add(std::string name, uint64_t v) {
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Add(std::move(name), static_cast<double>(v));
  }
  return Add(std::move(name), static_cast<int64_t>(v));
}
Finding& Finding::Add(std::string name, double v) {
  evidence.push_back({std::move(name), v});
  return *this;
}
Finding& Finding::Add(std::string name, std::string v) {
  evidence.push_back({std::move(name), std::move(v)});
  return *this;
}
Finding& Finding::AddBool(std::string name, bool v) {
  evidence.push_back({std::move(name), v});
  return *this;
}

Finding MakeFinding(std::string_view id, Severity severity, std::string summary) {
  const CatalogueEntry* entry = FindCatalogueEntry(id);
  if (entry == nullptr) {
    std::fprintf(stderr, "gpudoctor: internal error: finding id '%.*s' not in catalogue\n",
                 static_cast<int>(id.size()), id.data());
    std::abort();
  }
  Finding f;
  f.id = std::string(id);
  f.layer = entry->layer;
  f.severity = severity;
  f.summary = std::move(summary);
  for (const auto& step : entry->next_steps) f.next_steps.emplace_back(step);
  return f;
}

std::optional<Severity> WorstSeverity(const std::vector<Finding>& findings) {
  std::optional<Severity> worst;
  for (const auto& f : findings) {
    if (!worst || f.severity > *worst) worst = f.severity;
  }
  return worst;
}

}  // namespace gpudoctor
