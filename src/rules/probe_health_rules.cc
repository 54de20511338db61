// Rules about gpudoctor's own probes: a probe abandoned at its deadline is itself a symptom.
#include "rules/engine.h"

namespace gpudoctor {
namespace {

// The nvml probe fails exactly when the GPU rules already say why (driver.nvml_init_failed,
// driver.mismatch, driver.nvml_hang, ...): a second, generic finding would only blur it.
bool CoveredByGpuRules(const Snapshot& snap, const ProbeRecord& p) {
  if (p.name != "nvml") return false;
  for (const NvmlHang& h : snap.gpu.hangs) {
    if (!h.check_deadline) return true;
  }
  switch (snap.gpu.nvml.state) {
    case NvmlState::kInitFailed:
    case NvmlState::kInitHung:
    case NvmlState::kSymbolMissing:
      return true;
    default:
      return false;
  }
}

}  // namespace

void ProbeHealthRules(const Snapshot& snap, const Thresholds&, std::vector<Finding>& out) {
  for (const auto& p : snap.probes) {
    if (p.state != ProbeState::kTimeout) continue;
    Finding f = MakeFinding("gpudoctor.probe.timeout", Severity::kWarn,
                            "probe '" + p.name + "' did not finish and was abandoned");
    f.subject = p.name;
    f.Add("probe", p.name).Add("waited_ms", static_cast<int64_t>(p.ms));
    out.push_back(std::move(f));
  }
  for (const auto& p : snap.probes) {
    if (p.state != ProbeState::kFailed || CoveredByGpuRules(snap, p)) continue;
    Finding f = MakeFinding("gpudoctor.probe.failed", Severity::kWarn,
                            "probe '" + p.name + "' could not measure: " + p.reason);
    f.subject = p.name;
    f.Add("probe", p.name).Add("reason", p.reason);
    out.push_back(std::move(f));
  }
}

}  // namespace gpudoctor
