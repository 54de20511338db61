#include "rules/xid_table.h"

#include <vector>

namespace gpudoctor {
namespace {

using C = XidClass;
using S = XidSeverity;
using A = Action;

// `bucket` is the immediate-resolution bucket of NVIDIA's Xid Catalog ("Analyzing Xid Catalog",
// https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html, the r590 edition as
// transcribed on 2025-10-29; codes the catalog lists as unused on Ampere+ carry the legacy
// listing's CONTACT_SUPPORT). `resolution` is our Action for it:
//   RESTART_APP → restart_app; IGNORE → none (informational) or watch (trend it);
//   RESET_GPU → reset_gpu (node out until the reset); RESTART_BM / RESTART_VM → reboot, or
//   drain_reset where the GPU is gone or memory is corrupt (48, 79, 95, 167, 171/172);
//   CHECK_MECHANICALS → inspect_hardware; UPDATE_SWFW → fix_config.
// Deliberate deviations, each an application fault that must never drain a node: 109 (catalog
// RESET_GPU) is restart_app, as NVIDIA's k8s-device-plugin and the legacy listing treat it; 45
// (WORKFLOW_XID_45: follow the Xid it follows) is restart_app. Conditional codes (94/95 RST tails,
// 154 recovery action, 144-150 NVLink5 decode) are decided per line in xid_action.cc.
struct Row {
  int first, last;  // inclusive code range sharing one entry
  std::string_view bucket;
  Action resolution;
  std::string_view mnemonic, meaning;
  C cls;
  S sev;
  std::string_view action;
};

constexpr std::string_view kDrainInspect =
    "drain the node, run DCGM diagnostics (dcgmi diag -r 3) or field diagnostics, reseat; "
    "repeats → RMA";

// Main table (xid.md §2) followed by the other codes (§3). Ranges share one text.
constexpr Row kRows[] = {
    {8, 8, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT",
     "GPU stopped processing (channel idle timeout)", C::kApplication, S::kWarn,
     "restart the application; repeats on one GPU → drain and inspect"},
    {11, 11, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_PUSHBUFFER_INVALID",
     "invalid push-buffer stream", C::kApplication, S::kWarn,
     "restart the application; check the CUDA/driver combination"},
    {13, 13, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_GR_EXCEPTION",
     "graphics/SM engine exception (e.g. SM warp exception)", C::kApplication, S::kWarn,
     "restart the application; the same GPU with different applications → drain and inspect"},
    {25, 25, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_PUSHBUFFER_INVALID",
     "invalid push-buffer stream", C::kApplication, S::kWarn,
     "restart the application; check the CUDA/driver combination"},
    {31, 31, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT",
     "GPU memory page fault (bad address)", C::kApplication, S::kWarn,
     "restart/debug the application; suspect hardware only if it follows the GPU, not the app"},
    {32, 32, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_PBDMA_ERROR",
     "corrupted push-buffer stream reported by the PCIe DMA engine", C::kHardwareBus, S::kWarn,
     "restart the application; check PCIe replays and AER; repeats → drain and inspect"},
    {38, 38, "IGNORE", A::kWatch, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT",
     "driver firmware (FECS) watchdog timeout", C::kFirmware, S::kWarn,
     "log it; repeats → reset the GPU and review the driver version"},
    {39, 41, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_CE_ERROR", "copy-engine exception",
     C::kApplication, S::kWarn, "restart the application"},
    {43, 43, "IGNORE", A::kNone, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR",
     "GPU stopped processing (channel reset)", C::kApplication, S::kInfo,
     "the application was already stopped; nothing else to do"},
    {44, 44, "IGNORE", A::kWatch, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW",
     "graphics engine fault during context switch", C::kDriver, S::kWarn,
     "persists → reset the GPU"},
    {45, 45, "WORKFLOW_XID_45", A::kRestartApp, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
     "channel torn down because of an earlier error (often after a DBE)", C::kApplication, S::kInfo,
     "find the primary Xid in the same window; alone on NVSwitch systems → restart Fabric "
     "Manager"},
    {46, 46, "RESET_GPU", A::kResetGpu, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR",
     "GPU stopped processing (GPU timeout)", C::kDriver, S::kCritical,
     "drain the node, then reset the GPU"},
    {48, 48, "WORKFLOW_XID_48", A::kDrainReset, "ROBUST_CHANNEL_GPU_ECC_DBE",
     "double-bit (uncorrectable) ECC error", C::kHardwareMemory, S::kCritical,
     "drain, then reset the GPU or reboot; check Xid 63/64 and the retired-page / row-remap state; "
     "field diagnostics; counts toward RMA"},
    {54, 54, "CHECK_MECHANICALS", A::kInspectHardware, "AUX_POWER_NOT_CONNECTED",
     "auxiliary power not connected to the board", C::kThermalPower, S::kCritical,
     "drain and inspect the power cabling"},
    {56, 58, "CONTACT_SUPPORT", A::kInspectHardware, "LEGACY_DISPLAY_OR_FB_INTERFACE_ERROR",
     "display engine / video-memory interface error (unused on Ampere and later)",
     C::kHardwareMemory, S::kCritical, kDrainInspect},
    {60, 60, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_ENGINE_ERROR",
     "SEC2/NVJPG/NVDEC/OFA engine error", C::kApplication, S::kWarn, "restart the application"},
    {61, 61, "CONTACT_SUPPORT", A::kResetGpu, "PMU_BREAKPOINT",
     "internal micro-controller breakpoint/warning", C::kFirmware, S::kCritical,
     "reset the GPU; report to NVIDIA"},
    {62, 62, "RESET_GPU", A::kResetGpu, "PMU_HALT_ERROR", "internal micro-controller halt",
     C::kFirmware, S::kCritical, "reset the GPU; check temperatures; repeats → drain and inspect"},
    {63, 63, "IGNORE", A::kWatch, "INFOROM_DRAM_RETIREMENT_EVENT",
     "page retirement or row remap written to the InfoROM", C::kHardwareMemory, S::kInfo,
     "pending remap → reset the GPU when idle; pre-Ampere retirement → reload the driver or "
     "reboot; together with Xid 48 → drain and reset"},
    {64, 64, "RESET_GPU", A::kResetGpu, "INFOROM_DRAM_RETIREMENT_FAILURE",
     "page retirement/row remap could not be recorded", C::kHardwareMemory, S::kCritical,
     "drain, then reset the GPU (catalog RESET_GPU); reboot if the reset fails (older A100 "
     "advice: reboot); field diagnostics; repeats → RMA"},
    {65, 65, "CONTACT_SUPPORT", A::kRestartApp, "LEGACY_VIDEO_PROCESSOR_EXCEPTION",
     "video processor exception (legacy)", C::kHardwareMemory, S::kWarn,
     "restart the application; repeats → drain and inspect"},
    {66, 67, "IGNORE", A::kNone, "ILLEGAL_ACCESS_BY_DRIVER", "illegal access by the driver",
     C::kDriver, S::kInfo, "log it; repeats → review the driver version"},
    {68, 68, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_NVDEC0_ERROR",
     "video decoder (NVDEC0) exception", C::kApplication, S::kWarn, "restart the application"},
    {69, 69, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_GR_CLASS_ERROR",
     "graphics engine class error", C::kApplication, S::kWarn, "restart the application"},
    {70, 72, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_CE_ERROR", "copy-engine exception",
     C::kApplication, S::kWarn, "restart the application"},
    {73, 73, "CONTACT_SUPPORT", A::kRestartApp, "LEGACY_NVENC2_ERROR", "NVENC2 error (legacy)",
     C::kHardwareMemory, S::kWarn, "restart the application; repeats → drain and inspect"},
    {74, 74, "WORKFLOW_NVLINK_ERR", A::kResetGpu, "NVLINK_ERROR", "NVLink error", C::kNvlink,
     S::kCritical,
     "decode the first DWORD; a GPU reset or reboot clears it; may be the peer's fault; more than "
     "2 on one link → drain and inspect"},
    {75, 77, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_CE_ERROR", "copy-engine exception",
     C::kApplication, S::kWarn, "restart the application"},
    {78, 78, "UPDATE_SWFW", A::kFixConfig, "VGPU_START_ERROR", "vGPU start error", C::kDriver,
     S::kWarn, "update the vGPU software/firmware"},
    {79, 79, "RESTART_BM", A::kDrainReset, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
     "GPU no longer reachable over PCIe", C::kHardwareBus, S::kFatal,
     "drain, then reboot/power-cycle the node (a GPU reset is generally impossible); check AER, "
     "power and thermals; repeats → RMA"},
    {80, 80, "RESTART_APP", A::kRestartApp, "CORRUPTED_DATA_SENT_TO_GPU",
     "corrupted data sent to the GPU (push-buffer CRC)", C::kHardwareBus, S::kWarn,
     "restart the application; check PCIe AER; repeats → drain"},
    {81, 81, "CONTACT_SUPPORT", A::kInspectHardware, "LEGACY_VGA_SUBSYSTEM_ERROR",
     "VGA subsystem error (legacy)", C::kHardwareMemory, S::kWarn, kDrainInspect},
    {82, 84, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_ENGINE_ERROR",
     "NVJPG/NVDEC/OFA engine error", C::kApplication, S::kWarn, "restart the application"},
    {85, 85, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_CE_ERROR", "copy-engine exception",
     C::kApplication, S::kWarn, "restart the application"},
    {86, 86, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_ENGINE_ERROR", "OFA engine error",
     C::kApplication, S::kWarn, "restart the application"},
    {88, 89, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_ENGINE_ERROR", "NVDEC/engine error",
     C::kApplication, S::kWarn, "restart the application"},
    {92, 92, "IGNORE", A::kWatch, "EXCESSIVE_SBE_INTERRUPTS", "high single-bit ECC error rate",
     C::kHardwareMemory, S::kWarn, "trend it; field diagnostics; sustained → RMA triage"},
    {93, 93, "IGNORE", A::kWatch, "INFOROM_ERASE_LIMIT_EXCEEDED",
     "InfoROM erase/wear limit exceeded (non-fatal)", C::kHardwareMemory, S::kWarn,
     "plan a board replacement"},
    {94, 94, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_CONTAINED_ERROR",
     "uncorrectable memory error contained to one application", C::kHardwareMemory, S::kCritical,
     "restart the affected application; reset the GPU when convenient (read the RST: tail)"},
    {95, 95, "RESET_GPU", A::kDrainReset, "ROBUST_CHANNEL_UNCONTAINED_ERROR",
     "uncorrectable memory error that can affect other applications", C::kHardwareMemory, S::kFatal,
     "MIG on: drain the other instances and reset the GPU; MIG off: reboot the node"},
    {96, 105, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_ENGINE_ERROR",
     "SEC2/NVJPG/NVDEC/OFA engine error", C::kApplication, S::kWarn, "restart the application"},
    {109, 109, "RESET_GPU", A::kRestartApp, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR",
     "context-switch timeout", C::kApplication, S::kWarn,
     "restart the application; persists → reset the GPU"},
    {110, 110, "RESET_GPU", A::kResetGpu, "SECURITY_FAULT_ERROR", "security fault error",
     C::kFirmware, S::kWarn, "reset the GPU; investigate the driver/firmware"},
    {119, 119, "RESET_GPU", A::kResetGpu, "GSP_RPC_TIMEOUT", "GSP firmware did not answer an RPC",
     C::kFirmware, S::kCritical,
     "drain; reset the GPU (often only a reboot works; nvidia-smi tends to hang in D state); "
     "check the driver version"},
    {120, 120, "RESET_GPU", A::kResetGpu, "GSP_ERROR", "GSP firmware error", C::kFirmware,
     S::kCritical, "drain; reset the GPU (often only a reboot works); check the driver version"},
    {121, 121, "IGNORE", A::kWatch, "C2C_ERROR", "chip-to-chip (CPU-GPU, Grace) link error",
     C::kHardwareBus, S::kWarn, "log it; repeats → drain and inspect"},
    {126, 135, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_CE_ERROR", "copy-engine exception",
     C::kApplication, S::kWarn, "restart the application"},
    {136, 136, "RESET_GPU", A::kResetGpu, "ALI_TRAINING_FAIL", "NVLink link training failed",
     C::kNvlink, S::kCritical, "reset the GPU; investigate link signal integrity"},
    {137, 137, "IGNORE", A::kWatch, "NVLINK_FLA_PRIV_ERR", "NVLink (FLA) privilege error",
     C::kApplication, S::kWarn, "check the application"},
    {139, 139, "RESTART_APP", A::kRestartApp, "ROBUST_CHANNEL_ENGINE_ERROR", "OFA engine error",
     C::kApplication, S::kWarn, "restart the application"},
    {140, 140, "RESET_GPU", A::kResetGpu, "UNRECOVERABLE_ECC_ERROR_ESCAPE",
     "ECC error the driver could not offline or remap", C::kHardwareMemory, S::kCritical,
     "reset the GPU; persists → RMA"},
    {143, 143, "RESET_GPU", A::kResetGpu, "GPU_INIT_ERROR", "GPU initialisation failed",
     C::kFirmware, S::kCritical, "reset the GPU; persists → drain and inspect / RMA"},
    {144, 144, "WORKFLOW_NVLINK5_ERR", A::kWatch, "NVLINK_SAW_ERROR", "NVLink5 SAW unit error",
     C::kNvlink, S::kWarn, "decode the unit/status tail; Fatal → reset the GPU"},
    {145, 145, "WORKFLOW_NVLINK5_ERR", A::kWatch, "NVLINK_RLW_ERROR", "NVLink5 RLW unit error",
     C::kNvlink, S::kWarn, "decode the unit/status tail; Fatal → reset the GPU"},
    {146, 146, "WORKFLOW_NVLINK5_ERR", A::kWatch, "NVLINK_TLW_ERROR", "NVLink5 TLW unit error",
     C::kNvlink, S::kWarn, "decode the unit/status tail; Fatal → reset the GPU"},
    {147, 147, "WORKFLOW_NVLINK5_ERR", A::kNone, "NVLINK_TREX_ERROR",
     "NVLink5 TREX unit (test path, not production)", C::kNvlink, S::kInfo, "none (non-fatal)"},
    {148, 148, "WORKFLOW_NVLINK5_ERR", A::kNone, "NVLINK_NVLPW_CTRL_ERROR",
     "NVLink5 NVLPW_CTRL unit error", C::kNvlink, S::kWarn,
     "decode the unit/status tail; Fatal → reset the GPU"},
    {149, 149, "WORKFLOW_NVLINK5_ERR", A::kWatch, "NVLINK_NETIR_ERROR",
     "NVLink5 NETIR: link events (link down), BER events", C::kNvlink, S::kWarn,
     "link down (Fatal) → reset the GPU and investigate signal integrity / the peer; BER events → "
     "check cables"},
    {150, 150, "WORKFLOW_NVLINK5_ERR", A::kResetGpu, "NVLINK_MSE_ERROR",
     "NVLink5 MSE error (e.g. MSE watchdog)", C::kNvlink, S::kCritical, "reset the GPU"},
    {151, 151, "RESTART_VM", A::kReboot, "KEY_ROTATION_ERROR",
     "key-rotation error (confidential computing)", C::kDriver, S::kWarn, "restart the VM"},
    {154, 154, "XID_154", A::kWatch, "GPU_RECOVERY_ACTION_CHANGED",
     "the GPU's required recovery action changed (refers to another Xid)", C::kFirmware, S::kInfo,
     "read the GPU recovery action (nvidia-smi -q, NVML field 230) and act on it"},
    {155, 155, "RESET_GPU", A::kResetGpu, "NVLINK_SW_DEFINED_ERROR",
     "NVLink software-defined error", C::kNvlink, S::kCritical, "reset the GPU"},
    {156, 156, "RESET_GPU", A::kResetGpu, "RESOURCE_RETIREMENT_EVENT", "a GPU resource was retired",
     C::kHardwareMemory, S::kWarn, "reset the GPU when convenient"},
    {157, 157, "IGNORE", A::kInspectHardware, "RESOURCE_RETIREMENT_FAILURE",
     "resource retirement failed", C::kHardwareMemory, S::kCritical, "drain and inspect"},
    {158, 158, "RESET_GPU", A::kResetGpu, "GPU_FATAL_TIMEOUT", "GPU fatal timeout", C::kDriver,
     S::kCritical, "reset the GPU"},
    {159, 159, "CHECK_UVM", A::kWatch, "CHI_NON_DATA_ERROR", "CHI non-data error", C::kDriver,
     S::kWarn, "check UVM; follow any other Xid in the same window"},
    {160, 161, "IGNORE", A::kNone, "CHANNEL_RETIREMENT", "channel retirement event / failure",
     C::kDriver, S::kInfo, "investigate the driver if repeated"},
    {162, 163, "none yet", A::kNone, "POWER_SMOOTHING_STATE",
     "power-smoothing circuitry re-engaged / disengaged", C::kThermalPower, S::kInfo, "none"},
    {164, 165, "none yet", A::kWatch, "POWER_SMOOTHING_LIFETIME",
     "power-smoothing circuitry low / exhausted lifetime", C::kThermalPower, S::kWarn,
     "plan service of the board"},
    {166, 166, "none yet", A::kWatch, "NVLINK_CC_ERROR",
     "NVLink confidential-compute traffic/interrupt error", C::kNvlink, S::kWarn,
     "reset the GPU if repeated"},
    {167, 167, "none yet", A::kDrainReset, "PCIE_FATAL_TIMEOUT", "PCIe fatal timeout",
     C::kHardwareBus, S::kFatal, "treat like Xid 79: drain, then reboot/power-cycle the node"},
    {168, 168, "none yet", A::kInspectHardware, "REDUCED_GPU_MEMORY_CAPACITY",
     "errors in a write-protected memory region", C::kHardwareMemory, S::kCritical, kDrainInspect},
    {169, 169, "none yet", A::kResetGpu, "SEC2_HALT_ERROR", "micro-controller (SEC2) halt",
     C::kFirmware, S::kCritical, "reset the GPU; repeats → drain and inspect"},
    {170, 170, "none yet", A::kWatch, "NVLINK_CC_ERROR",
     "NVLink confidential-compute traffic/interrupt error", C::kNvlink, S::kWarn,
     "reset the GPU if repeated"},
    {171, 172, "none yet", A::kDrainReset, "UNCORRECTABLE_DRAM_OR_SRAM_ERROR",
     "detail of an uncorrectable memory error (see Xid 48)", C::kHardwareMemory, S::kCritical,
     "as for the Xid 48 it details: drain, then reset the GPU or reboot"},
};

}  // namespace

const char* XidClassName(XidClass c) {
  switch (c) {
    case C::kApplication:
      return "application";
    case C::kDriver:
      return "driver";
    case C::kHardwareMemory:
      return "hardware-memory";
    case C::kHardwareBus:
      return "hardware-bus/PCIe";
    case C::kNvlink:
      return "NVLink";
    case C::kThermalPower:
      return "thermal/power";
    case C::kFirmware:
      return "GSP/firmware";
    case C::kUnknown:
      return "unknown";
  }
  return "unknown";
}

const char* XidSeverityName(XidSeverity s) {
  switch (s) {
    case S::kInfo:
      return "info";
    case S::kWarn:
      return "warn";
    case S::kCritical:
      return "critical";
    case S::kFatal:
      return "fatal";
  }
  return "warn";
}

XidInfo LookupXid(int code) {
  for (const Row& r : kRows) {
    if (code >= r.first && code <= r.last) {
      return {code, r.mnemonic, r.meaning, r.cls, r.sev, r.action, true, r.bucket, r.resolution};
    }
  }
  return {code,
          "",
          "not in gpudoctor's table (new or retired code)",
          C::kUnknown,
          S::kWarn,
          "look up the code in the NVIDIA Xid catalog "
          "(https://docs.nvidia.com/deploy/xid-errors/) and check the lines around it",
          false,
          "",
          Action::kWatch};
}

std::string ExplainXid(int code) {
  XidInfo x = LookupXid(code);
  std::string s = "Xid " + std::to_string(code);
  if (!x.mnemonic.empty()) s += " (" + std::string(x.mnemonic) + ")";
  s += "\n  meaning:  " + std::string(x.meaning) + "\n";
  s += "  class:    " + std::string(XidClassName(x.xid_class)) + "\n";
  s += "  severity: " + std::string(XidSeverityName(x.severity)) + "\n";
  s += "  action:   " + std::string(ActionName(x.resolution)) + " (" + ActionPhrase(x.resolution) +
       ")";
  if (!x.bucket.empty()) s += ", NVIDIA catalog bucket " + std::string(x.bucket);
  s += "\n";
  s += "  advice:   " + std::string(x.action) + "\n";
  if (code == 94 || code == 95) {
    s += "  note:     the line's tail decides: `RST: Yes` → reset_gpu, `D-RST: Yes` → drain_reset";
    s += code == 94 ? "; neither → restart_app\n"
                    : "; without a tail: MIG (GPU-I) → reset_gpu, no MIG → drain_reset\n";
  }
  if (code >= 144 && code <= 150) {
    s += "  note:     the tail `<UNIT> <Nonfatal|Fatal> XC<n> i<n> Link <n> (0x<intrinfo> "
         "0x<status>)` decides: Fatal → reset_gpu, Nonfatal → watch (147/148: none)\n";
  }
  if (code == 154) {
    s += "  note:     the line names the new recovery action: None → none, GPU Reset Required / PF "
         "FLR → reset_gpu, Node Reboot Required / OS Reboot → reboot, Drain P2P / Drain and "
         "Reset → drain_reset\n";
  }
  if (!x.known) s += "  note:     unknown codes are reported with severity warn, never dropped\n";
  return s;
}

}  // namespace gpudoctor
