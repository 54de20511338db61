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

const char* AlertSeverityName(Severity sev) {
  switch (sev) {
    case Severity::kCrit:
      return "critical";
    case Severity::kWarn:
      return "warning";
    case Severity::kInfo:
      break;
  }
  return "info";
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

std::optional<Layer> ParseLayer(std::string_view s) {
  for (Layer l : {Layer::kNetwork, Layer::kHardware, Layer::kSoftware, Layer::kResources}) {
    if (s == LayerName(l)) return l;
  }
  return std::nullopt;
}

std::optional<Severity> ParseSeverity(std::string_view s) {
  if (s == "info") return Severity::kInfo;
  if (s == "warn") return Severity::kWarn;
  if (s == "crit") return Severity::kCrit;
  return std::nullopt;
}

namespace {
struct ActionText {
  Action action;
  const char* name;
  const char* phrase;
};
constexpr ActionText kActionTexts[] = {
    {Action::kNone, "none", "nothing to do"},
    {Action::kWatch, "watch", "keep an eye on it"},
    {Action::kFixConfig, "fix_config", "fix the configuration"},
    {Action::kContactProvider, "contact_provider",
     "contact the provider (network, power or cooling outside the box)"},
    {Action::kRestartApp, "restart_app", "restart the application"},
    {Action::kResetGpu, "reset_gpu", "reset the GPU when it is idle"},
    {Action::kReboot, "reboot", "reboot the node"},
    {Action::kDrainReset, "drain_reset", "drain the node, then reset the GPU or reboot"},
    {Action::kInspectHardware, "inspect_hardware",
     "drain the node and inspect the hardware (reseat, swap test, RMA check)"},
};
}  // namespace

const char* ActionName(Action a) {
  for (const auto& t : kActionTexts) {
    if (t.action == a) return t.name;
  }
  return "unknown";
}

const char* ActionPhrase(Action a) {
  for (const auto& t : kActionTexts) {
    if (t.action == a) return t.phrase;
  }
  return "unknown";
}

std::optional<Action> ParseAction(std::string_view s) {
  for (const auto& t : kActionTexts) {
    if (s == t.name) return t.action;
  }
  return std::nullopt;
}

bool NeedsNodeOutOfService(Action a) {
  return a == Action::kResetGpu || a == Action::kReboot || a == Action::kDrainReset ||
         a == Action::kInspectHardware;
}

bool IsHardwareAction(Action a) {
  return a == Action::kResetGpu || a == Action::kDrainReset || a == Action::kInspectHardware;
}

bool TakesNodeOutOfService(const Finding& f) {
  return NeedsNodeOutOfService(f.action) && f.severity != Severity::kInfo;
}

Action WorstAction(const std::vector<Finding>& findings) {
  Action worst = Action::kNone;
  for (const auto& f : findings) {
    if (static_cast<int>(f.action) > static_cast<int>(worst)) worst = f.action;
  }
  return worst;
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
