#include "rules/xid_action.h"

#include <algorithm>

#include "rules/xid_table.h"

namespace gpudoctor {
namespace {

std::string CatalogReason(int code, const XidInfo& info) {
  if (info.bucket.empty()) return "Xid " + std::to_string(code) + " is not in the catalog table";
  return "NVIDIA Xid catalog bucket " + std::string(info.bucket) + " for Xid " +
         std::to_string(code);
}

bool Contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

}  // namespace

Action XidDefaultAction(int code) { return LookupXid(code).resolution; }

std::optional<Action> RecoveryActionFromText(std::string_view t) {
  // Texts seen in driver lines (r570-r610) and NVML's nvmlDeviceGpuRecoveryAction_t names.
  if (t == "None") return Action::kNone;
  if (Contains(t, "Drain")) return Action::kDrainReset;  // "Drain P2P", "Drain and Reset"
  if (Contains(t, "Reboot")) return Action::kReboot;     // "Node Reboot Required", "OS Reboot"
  if (Contains(t, "Reset") || Contains(t, "FLR")) return Action::kResetGpu;
  return std::nullopt;
}

XidDecision DecideXidAction(const KernelEvent& e) {
  const XidInfo info = LookupXid(e.xid);
  XidDecision d{info.resolution, CatalogReason(e.xid, info)};
  const bool mig = !e.ids.empty() && !(e.xid >= 144 && e.xid <= 150);
  if (e.xid == 94 || e.xid == 95) {
    if (e.drain_reset_required) {
      d = {Action::kDrainReset, "the line says D-RST: Yes (drain and reset required)"};
    } else if (e.reset_required) {
      d = {e.xid == 95 && !mig ? Action::kDrainReset : Action::kResetGpu,
           "the line says RST: Yes (GPU reset required)"};
    } else if (e.xid == 94) {
      d = {Action::kRestartApp,
           "contained error (Xid 94) without RST/D-RST: Yes: restart the affected application"};
    } else {
      d = mig ? XidDecision{Action::kResetGpu,
                            "uncontained error (Xid 95) on a MIG instance: reset the GPU"}
              : XidDecision{Action::kDrainReset,
                            "uncontained error (Xid 95) without MIG: other work on the GPU is "
                            "affected"};
    }
  } else if (e.xid == 154) {
    std::optional<Action> worst;
    std::string text;
    for (const auto& r : e.recovery_actions) {
      auto a = RecoveryActionFromText(r);
      if (a && (!worst || *a > *worst)) {
        worst = a;
        text = r;
      }
    }
    if (worst) {
      d = {*worst, "Xid 154 recovery action: " + text};
    } else if (!e.recovery_actions.empty()) {
      d = {Action::kWatch, "Xid 154 recovery action not understood: " + e.recovery_actions[0] +
                               " (read `nvidia-smi -q` GPU Recovery Action)"};
    }
  } else if (e.xid >= 144 && e.xid <= 150 && !e.nvlink_unit.empty()) {
    std::string unit = e.nvlink_unit;
    if (e.xid == 150) {
      d = {Action::kResetGpu, "NVLink5 " + unit + " error: reset the GPU"};
    } else if (e.nvlink_fatal && Contains(unit, "BER")) {
      d = {Action::kWatch, "NVLink5 " + unit +
                               " bit-error event: check cables and signal "
                               "integrity"};
    } else if (e.nvlink_fatal) {
      d = {Action::kResetGpu, "NVLink5 " + unit + " Fatal: reset the GPU"};
    } else {
      d = {e.xid == 147 || e.xid == 148 ? Action::kNone : Action::kWatch,
           "NVLink5 " + unit + " Nonfatal"};
    }
  }
  return d;
}

}  // namespace gpudoctor
