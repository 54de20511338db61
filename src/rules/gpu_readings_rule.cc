#include "rules/gpu_readings_rule.h"

#include <string>

#include "facts/gpu_codes.h"
#include "rules/make_finding.h"

namespace gpudoctor {
namespace {

namespace n = gpu_codes;

// Codes that are findings of their own (gpu_rules.cc NvmlErrorRule, LostRule) or plain absence.
bool OwnedElsewhere(int code) {
  switch (code) {
    case n::kNoPermission:
    case n::kInsufficientPower:
    case n::kIrqIssue:
    case n::kCorruptedInforom:
    case n::kOperatingSystem:
    case n::kLibRmVersionMismatch:
    case n::kGpuIsLost:
    case n::kFunctionNotFound:
      return true;
    default:
      return false;
  }
}

// nvmlReturn_t values NVML defines (nvml.md §4.1): 1..30 and 999. Anything else is garbage.
bool KnownCode(int code) { return (code >= 1 && code <= 30) || code == n::kUnknownError; }

}  // namespace

bool IsReadingFailure(const NvmlCallError& e) {
  if (e.call.rfind("nvmlDeviceGetHandleBy", 0) == 0) return false;  // the whole GPU refused
  if (e.call.rfind("nvmlDevice", 0) != 0) return false;             // "worker" and the like
  return KnownCode(e.code) && !OwnedElsewhere(e.code);
}

void ReadingsFailedRule(const GpuFacts& g, std::vector<Finding>& out) {
  if (g.lost) return;
  std::vector<const NvmlCallError*> failed;
  for (const auto& e : g.errors) {
    if (!IsReadingFailure(e)) continue;
    bool seen = false;
    for (const auto* f : failed) seen = seen || f->call == e.call;
    if (!seen) failed.push_back(&e);
  }
  if (failed.empty()) return;
  bool all_reset = true;
  bool only_vanished = true;  // every failure is a call that stopped being supported
  std::string calls;
  for (const auto* e : failed) {
    all_reset = all_reset && e->code == n::kResetRequired;
    only_vanished = only_vanished && e->code == n::kNotSupported;
    if (!calls.empty()) calls += ", ";
    calls += e->call;
  }
  std::string what = all_reset ? "the GPU requires a reset" : failed[0]->text;
  Finding f =
      GpuFinding("gpu.readings_failed", only_vanished ? Severity::kWarn : Severity::kCrit, g,
                 std::to_string(failed.size()) + " NVML reading(s) fail (" + what + "): " + calls);
  f.action = all_reset ? Action::kResetGpu : Action::kDrainReset;
  f.subject = "nvml_readings";
  f.Add("failed_calls", static_cast<int64_t>(failed.size()));
  for (const auto* e : failed) f.Add(e->call, e->text);
  if (all_reset) {
    f.next_steps.insert(f.next_steps.begin(), "Reset the GPU once it is idle: `nvidia-smi -r -i " +
                                                  std::to_string(g.index) +
                                                  "` (or reboot the node).");
  }
  out.push_back(std::move(f));
}

}  // namespace gpudoctor
