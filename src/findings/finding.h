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

const char* LayerName(Layer layer);      // "network", "hardware", "software", "resources"
const char* SeverityName(Severity sev);  // "info", "warn", "crit"
std::optional<Severity> ParseSeverity(std::string_view s);

// One piece of evidence. The unit is part of the name (busy_pct, used_bytes, stuck_s).
struct EvidenceItem {
  std::string name;
  std::variant<int64_t, double, std::string, bool> value;
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

}  // namespace gpudoctor
