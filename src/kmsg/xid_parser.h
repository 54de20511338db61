// Parser of NVIDIA driver (NVRM) kernel messages: Xid lines in every known variant (xid.md §6:
// with/without "PCI:", MIG "GPU-I"/"GPU-CI", pid/name or none, '<unknown>' pid, RST/D-RST tail of
// 94/95, NVLink5 tail of 144-150, the new recovery action of 154) and the companion lines (GPU at
// PCI → uuid, board serial, fallen off the bus in its one- and three-line forms and the older
// "GPU at 0000:01:00.0 has fallen off the bus." form, RmInitAdapter failures, GSP timeouts, the
// first line of an "API mismatch" report).
// Input is the message text after the kernel prefix, starting at "NVRM: ". Pure functions.
#pragma once

#include <string_view>

#include "facts/kernel_facts.h"
#include "facts/pci_tuple.h"

namespace gpudoctor {

struct XidLine {
  PciTuple pci;
  std::optional<int> gpu_instance, compute_instance;  // MIG
  int xid = 0;
  std::optional<int64_t> pid;  // absent for '<unknown>' or no pid= field
  std::string_view process;    // "" when absent or <unknown>
  std::string_view text;       // free text after pid/name
  std::optional<bool> reset_required, drain_reset_required;  // RST: / D-RST:
  // NVLink5 tail (144-150)
  std::string_view nvlink_unit;
  bool nvlink_fatal = false;
  std::optional<int> nvlink_link;
  std::optional<uint32_t> nvlink_intrinfo, nvlink_errstatus;
  // Xid 154 "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)": the text
  // in the parentheses after "to".
  std::string_view recovery_action;
};

enum class NvrmLineType {
  kNotNvrm,        // message does not start with "NVRM: "
  kOther,          // an NVRM line of no interest (module banners, RPC history, ...)
  kGarbled,        // looked like an Xid / companion line but did not parse (bad numbers)
  kXid,            // xid filled
  kGpuAt,          // "GPU at PCI:...: GPU-uuid": pci, uuid
  kBoardSerial,    // "GPU Board Serial Number: sn": serial
  kFallenOffBus,   // "GPU 0000:2b:00.0: GPU has fallen off the bus.": pci
  kTheNvidiaGpu,   // "The NVIDIA GPU 0000:b3:00.0" (first of three lines): pci
  kInstalledHas,   // "(PCI ID: 10de:26b5) installed in this system has" (second line)
  kFallenOffTail,  // "fallen off the bus and is not responding to commands." (third line)
  kInitFailed,     // "RmInitAdapter failed! (code)": pci when given, code
  kGspTimeout,     // GSP RPC / heartbeat timeout outside an Xid line: subject, pci, code
  kApiMismatch,    // "API mismatch: the client ..." (first line; the versions may follow on the
                   // next NVRM lines): subject = the text after "API mismatch: "
  kGspCrashCat,    // "GPU0 kgspHealthCheck_TU102: **** GSP-CrashCat Report ****": subject, pci;
                   // the report's reason line follows without the NVRM prefix
  kStatusAssert,   // "[GPU0 ]nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus
                   // [NV_ERR_GPU_IS_LOST] ...": code = NV_ERR_GPU_IS_LOST or
                   // NV_ERR_RESET_REQUIRED (the two statuses that say the GPU is gone or needs
                   // a reset; others are ignored), subject "GPU0" when given
};

struct NvrmLine {
  NvrmLineType type = NvrmLineType::kNotNvrm;
  XidLine xid;
  std::optional<PciTuple> pci;
  std::string_view uuid, serial, subject, code;
};

NvrmLine ParseNvrmLine(std::string_view message);

}  // namespace gpudoctor
