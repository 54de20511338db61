#include "findings/finding.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

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

std::optional<Severity> WorstSeverity(const std::vector<Finding>& findings) {
  std::optional<Severity> worst;
  for (const auto& f : findings) {
    if (!worst || f.severity > *worst) worst = f.severity;
  }
  return worst;
}

}  // namespace gpudoctor
