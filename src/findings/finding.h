// Finding: one diagnosis with its evidence and the concrete next steps. Produced only by rules
// (src/rules), from facts. Every id is registered in the catalogue (src/rules/catalogue.h).
// Plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gpudoctor {

// Troubleshooting order: reports list layers in this order.
enum class Layer { kNetwork = 0, kHardware = 1, kSoftware = 2, kResources = 3 };
enum class Severity { kInfo = 0, kWarn = 1, kCrit = 2 };

// What the operator must do about a finding, in rising order of disruption (WorstAction picks
// the highest). Everything that acts (Slurm drain, NPD conditions, alert routing, fleet's card
// verdicts) reads the action, never the raw severity.
enum class Action {
  kNone = 0,         // nothing: informational
  kWatch,            // keep an eye on it; no change needed now
  kFixConfig,        // change a setting (config, persistence mode, power limit, ...)
  kContactProvider,  // outside the box: network path, power, cooling, the hosting provider
  kRestartApp,       // the application must be restarted; the node and GPU are fine
  kResetGpu,         // reset the GPU (nvidia-smi -r) when it is idle
  kReboot,           // reboot the node
  kDrainReset,       // take the node out of service, then reset the GPU or reboot
  kInspectHardware,  // node out: reseat, swap test, RMA check
};

const char* LayerName(Layer layer);      // "network", "hardware", "software", "resources"
const char* SeverityName(Severity sev);  // "info", "warn", "crit"
// The Prometheus/Alertmanager convention for the `severity` label: "info", "warning", "critical"
// (alerts from the built-in notifier and from deploy/prometheus use the same words).
const char* AlertSeverityName(Severity sev);
std::optional<Severity> ParseSeverity(std::string_view s);
std::optional<Layer> ParseLayer(std::string_view s);  // LayerName's words
const char* ActionName(Action a);  // "none", "watch", "fix_config", ..., "inspect_hardware"
std::optional<Action> ParseAction(std::string_view s);
// One line for an operator: "reset the GPU when it is idle".
const char* ActionPhrase(Action a);
// True for actions that need the node out of service (reset_gpu, reboot, drain_reset,
// inspect_hardware): the only ones that may drain a Slurm node or mark a Kubernetes node.
bool NeedsNodeOutOfService(Action a);

// One piece of evidence. The unit is part of the name (busy_pct, used_bytes, stuck_s).
struct EvidenceItem {
  std::string name;
  std::variant<int64_t, double, std::string, bool> value;
  bool operator==(const EvidenceItem&) const = default;  // a NaN value is unequal to itself
};

struct GpuRef {
  std::optional<int> index;
  std::string uuid;
  std::string pci_bus_id;  // "0000:3b:00.0"
  std::string serial;
  std::string name;  // product name
};

struct Finding {
  std::string id;
  Layer layer = Layer::kResources;
  Severity severity = Severity::kInfo;
  // Defaults to the catalogue entry's action (MakeFinding); a rule may set another where the
  // evidence decides it (an Xid's code, Xid 94/95 reset tails, Xid 154's recovery action).
  Action action = Action::kNone;
  std::string summary;
  std::vector<EvidenceItem> evidence;
  std::vector<std::string> next_steps;
  std::optional<GpuRef> gpu;
  // What the finding is about when several can exist for one id (a mount point, a NIC, a
  // target); with gpu it keys the finding over time. May be empty.
  std::string subject;

  Finding& Add(std::string name, int64_t v);
  Finding& Add(std::string name, int v) { return Add(std::move(name), int64_t{v}); }
  Finding& Add(std::string name, uint64_t v);
  Finding& Add(std::string name, double v);
  Finding& Add(std::string name, std::string v);
  Finding& Add(std::string name, const char* v) { return Add(std::move(name), std::string(v)); }
  Finding& AddBool(std::string name, bool v);
};

// Highest severity, or nullopt for no findings.
std::optional<Severity> WorstSeverity(const std::vector<Finding>& findings);
// The one predicate everything that takes a node out uses (Slurm drain, NPD condition): an action
// that needs the node out of service on a warn or crit finding (info never takes a node out).
bool TakesNodeOutOfService(const Finding& f);
// Actions that are evidence against the hardware itself (reset_gpu, drain_reset,
// inspect_hardware): fleet's card-vs-slot verdicts and lemon counts use only these, so an
// application Xid (restart_app) or a busy host (watch) never counts against a card.
bool IsHardwareAction(Action a);
// Most disruptive action among the findings; kNone for none.
Action WorstAction(const std::vector<Finding>& findings);

}  // namespace gpudoctor
