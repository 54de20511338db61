#include "facts/kernel_facts.h"

namespace gpudoctor {

const char* KernelEventKindName(KernelEventKind kind) {
  switch (kind) {
    case KernelEventKind::kXid:
      return "xid";
    case KernelEventKind::kGpuLost:
      return "gpu_lost";
    case KernelEventKind::kPcieAer:
      return "pcie_aer";
    case KernelEventKind::kHungTask:
      return "hung_task";
    case KernelEventKind::kOom:
      return "oom";
    case KernelEventKind::kMce:
      return "mce";
    case KernelEventKind::kNetLink:
      return "net_link";
    case KernelEventKind::kCpuThermal:
      return "cpu_thermal";
    case KernelEventKind::kDriverInitFailed:
      return "driver_init_failed";
    case KernelEventKind::kGspTimeout:
      return "gsp_timeout";
    case KernelEventKind::kDriverMismatch:
      return "driver_mismatch";
    case KernelEventKind::kCpuStall:
      return "cpu_stall";
    case KernelEventKind::kNvswitchSxid:
      return "nvswitch_sxid";
    case KernelEventKind::kResetRequired:
      return "reset_required";
  }
  return "unknown";
}

const char* AerSeverityName(AerSeverity s) {
  switch (s) {
    case AerSeverity::kCorrected:
      return "corrected";
    case AerSeverity::kNonFatal:
      return "non_fatal";
    case AerSeverity::kFatal:
      return "fatal";
  }
  return "corrected";
}

}  // namespace gpudoctor
